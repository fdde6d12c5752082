//! `std::ops` operators on `&Tensor` (`&a + &b`, `&a * 2.0`, `-&a`). Like ndarray's,
//! they panic with the op's error message; use the methods to get a `Result`.

use crate::operand::Operand;
use crate::tensor::Tensor;
use lazyfuse_ir::BinaryOp;
use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Rem, Sub};

macro_rules! operator {
    ($trait:ident, $method:ident, $call:ident) => {
        impl<'a, R: Into<Operand<'a>>> $trait<R> for &Tensor {
            type Output = Tensor;

            fn $method(self, rhs: R) -> Tensor {
                match self.$call(rhs) {
                    Ok(t) => t,
                    Err(e) => panic!("{e}"),
                }
            }
        }
    };
}

operator!(Add, add, add);
operator!(Sub, sub, sub);
operator!(Mul, mul, mul);
operator!(Div, div, div);
operator!(Rem, rem, remainder);
operator!(BitAnd, bitand, bitwise_and);
operator!(BitOr, bitor, bitwise_or);
operator!(BitXor, bitxor, bitwise_xor);

/// Host scalar on the left (`2.0 - &t`), as Python's reflected operators.
macro_rules! reflected {
    ($($scalar:ty),*) => {$(
        reflected!(@one $scalar, Add, add, Add);
        reflected!(@one $scalar, Sub, sub, Sub);
        reflected!(@one $scalar, Mul, mul, Mul);
        reflected!(@one $scalar, Div, div, Div);
        reflected!(@one $scalar, Rem, rem, Remainder);
    )*};
    (@one $scalar:ty, $trait:ident, $method:ident, $op:ident) => {
        impl $trait<&Tensor> for $scalar {
            type Output = Tensor;

            fn $method(self, rhs: &Tensor) -> Tensor {
                Tensor::binary(BinaryOp::$op, self, rhs).unwrap_or_else(|e| panic!("{e}"))
            }
        }
    };
}
reflected!(i32, i64, f32, f64);

impl Neg for &Tensor {
    type Output = Tensor;

    fn neg(self) -> Tensor {
        self.neg().unwrap_or_else(|e| panic!("{e}"))
    }
}

impl Not for &Tensor {
    type Output = Tensor;

    /// `~t`: bitwise not (logical not for bool), as Python's `~`.
    fn not(self) -> Tensor {
        self.bitwise_not().unwrap_or_else(|e| panic!("{e}"))
    }
}

#[cfg(test)]
mod tests {
    use crate::{DType, Tensor};

    #[test]
    fn operators_compute_like_methods() {
        let a = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
        let b = &(&a + &a) * 3;
        assert_eq!(b.to_vec::<i32>().unwrap(), vec![6, 12]);
        assert_eq!((-&a).to_vec::<i32>().unwrap(), vec![-1, -2]);
        assert_eq!((&a / 2).dtype(), DType::F32);
        assert_eq!((10i32 - &a).to_vec::<i32>().unwrap(), vec![9, 8]);
        assert_eq!((1.0f64 / &a).to_vec::<f32>().unwrap(), vec![1.0, 0.5]);
    }

    #[test]
    #[should_panic(expected = "must match the size of tensor b (3)")]
    fn operators_panic_with_the_message() {
        let _ = &Tensor::zeros(&[2], DType::F32) + &Tensor::zeros(&[3], DType::F32);
    }
}
