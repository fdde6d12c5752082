//! The unary pointwise ops beyond the arithmetic ones: math functions (`exp2`, `log1p`, `erf`, …),
//! predicates (`isinf`, `isfinite`, `signbit`, …), `sgn`, `square`, `positive`,
//! `nan_to_num`, `logit` and `round_decimals`, with their in-place forms (`op_`)
//! where PyTorch has them.
//!
//! Each op asks `lazyfuse_ir::typing` for its signature and records one `Unary` or
//! `UnaryParam` node. In-place forms compute the same node from the storage's
//! current version and write it back through the machinery of `inplace.rs`, under
//! PyTorch's rule that the result must be castable to the tensor's dtype
//! (`int_tensor.exp2_()` fails with "result type Float can't be cast to the desired
//! output type Long").

use crate::default_dtype;
use crate::error::Result;
use crate::operand::Operand;
use crate::ops::elementwise::{result_strides, unary_common, unary_op};
use crate::store::with_store;
use crate::tensor::Tensor;
use lazyfuse_ir::typing::{self, Signature};
use lazyfuse_ir::{Op, UnaryOp, UnaryParamOp};

/// Records a [`UnaryParamOp`] node on `t`.
pub(crate) fn param_op(t: &Tensor, op: UnaryParamOp) -> Result<Tensor> {
    let sig = typing::unary_param(op, t.dtype(), default_dtype())?;
    let shape = t.shape();
    let strides = result_strides(
        &shape,
        &[(&Operand::Tensor(t), unary_common(t, sig.output))],
    );
    with_store(|s| {
        let input = t.node_as(s, sig.compute, &shape)?;
        let node = s.add(Op::UnaryParam(op), sig.output, shape, &[input]);
        Ok(Tensor::from_node_strided(s, node, strides))
    })
}

impl Tensor {
    /// Writes `op` (a one-input node of signature `sig`) of this tensor's current
    /// values back into it, after PyTorch's in-place checks: the cast of the result
    /// to this dtype, then overlapping destinations.
    pub(crate) fn unary_inplace(&self, sig: Signature, op: Op) -> Result<()> {
        typing::inplace(sig.output, self.dtype())?;
        self.check_destination(None)?;
        let shape = self.shape();
        with_store(|s| {
            let input = self.node_as(s, sig.compute, &shape)?;
            let value = s.add(op, sig.output, shape.clone(), &[input]);
            let value = s.cast_node(value, self.dtype());
            self.write(s, value);
            Ok(())
        })
    }

    /// [`Tensor::unary_inplace`] of a [`UnaryOp`].
    pub(crate) fn unary_op_inplace(&self, op: UnaryOp) -> Result<()> {
        if self.dtype().is_float8() {
            if let Some(r) = crate::ops::float8::unary(self, op) {
                let r = r?;
                typing::inplace(r.dtype(), self.dtype())?;
                self.check_destination(None)?;
                return self.copy_(&r);
            }
        }
        let sig = typing::unary(op, self.dtype(), default_dtype())?;
        self.unary_inplace(sig, Op::Unary(op))
    }

    /// [`Tensor::unary_inplace`] of a [`UnaryParamOp`].
    pub(crate) fn param_op_inplace(&self, op: UnaryParamOp) -> Result<()> {
        let sig = typing::unary_param(op, self.dtype(), default_dtype())?;
        self.unary_inplace(sig, Op::UnaryParam(op))
    }
}

macro_rules! unary_fns {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> Result<Tensor> {
                    unary_op(self, UnaryOp::$op)
                }
            )*
        }
    };
}

macro_rules! unary_fns_inplace {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> Result<()> {
                    self.unary_op_inplace(UnaryOp::$op)
                }
            )*
        }
    };
}

unary_fns! {
    /// `x / |x|` (0 for 0) for complex inputs, [`Tensor::sign`] for real ones (NaN
    /// gives 0, as PyTorch's `(0 < x) - (x < 0)`).
    ///
    /// ```
    /// use lazyfuse::{Complex, Tensor};
    /// let z = Tensor::from_vec(vec![Complex::new(0.0f64, -2.0), Complex::new(0.0, 0.0)], &[2]).unwrap();
    /// assert_eq!(z.sgn().unwrap().to_vec::<Complex<f64>>().unwrap(),
    ///            vec![Complex::new(0.0, -1.0), Complex::new(0.0, 0.0)]);
    /// let x = Tensor::from_vec(vec![f32::NAN, -2.0], &[2]).unwrap();
    /// assert_eq!(x.sgn().unwrap().to_vec::<f32>().unwrap(), vec![0.0, -1.0]);
    /// ```
    sgn => Sgn;
    /// `x * x`, PyTorch's `pow(x, 2)`: integers wrap, bool gives `int64`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let b = Tensor::from_vec(vec![true, false], &[2]).unwrap().square().unwrap();
    /// assert_eq!((b.dtype(), b.to_vec::<i64>().unwrap()), (DType::I64, vec![1, 0]));
    /// let u = Tensor::from_vec(vec![200u8], &[1]).unwrap().square().unwrap();
    /// assert_eq!(u.to_vec::<u8>().unwrap(), vec![64]);
    /// ```
    square => Square;
    /// `2^x`; integers give the default float dtype.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![3i32, -1], &[2]).unwrap().exp2().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![8.0, 0.5]);
    /// ```
    exp2 => Exp2;
    /// `e^x - 1`, accurate for small `x`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1e-10f64], &[1]).unwrap().expm1().unwrap();
    /// // e^x - 1 would lose six digits here; expm1 keeps them all.
    /// assert!((t.to_vec::<f64>().unwrap()[0] - 1.00000000005e-10).abs() < 1e-24);
    /// ```
    expm1 => Expm1;
    /// Base-2 logarithm.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![8.0f32, 0.0], &[2]).unwrap().log2().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![3.0, f32::NEG_INFINITY]);
    /// ```
    log2 => Log2;
    /// Base-10 logarithm.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1000.0f64], &[1]).unwrap().log10().unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![3.0]);
    /// ```
    log10 => Log10;
    /// `ln(1 + x)`, accurate for small `x`; `-1` gives `-inf`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-1.0f32, 0.0], &[2]).unwrap().log1p().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![f32::NEG_INFINITY, 0.0]);
    /// ```
    log1p => Log1p;
    /// Tangent.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap().tan().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    tan => Tan;
    /// Arc sine (NaN outside `[-1, 1]` for real inputs).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap().asin().unwrap().to_vec::<f64>().unwrap();
    /// assert_eq!(t[0], std::f64::consts::FRAC_PI_2);
    /// assert!(t[1].is_nan());
    /// ```
    asin => Asin;
    /// Arc cosine.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32], &[1]).unwrap().acos().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    acos => Acos;
    /// Arc tangent.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![f64::INFINITY], &[1]).unwrap().atan().unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![std::f64::consts::FRAC_PI_2]);
    /// ```
    atan => Atan;
    /// Hyperbolic sine.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0i64], &[1]).unwrap().sinh().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    sinh => Sinh;
    /// Hyperbolic cosine.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap().cosh().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0]);
    /// ```
    cosh => Cosh;
    /// Inverse hyperbolic sine.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap().asinh().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    asinh => Asinh;
    /// Inverse hyperbolic cosine (NaN below 1 for real inputs).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32, 0.5], &[2]).unwrap().acosh().unwrap().to_vec::<f32>().unwrap();
    /// assert!(t[0] == 0.0 && t[1].is_nan());
    /// ```
    acosh => Acosh;
    /// Inverse hyperbolic tangent (`±1` gives `±inf`).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32], &[1]).unwrap().atanh().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![f32::INFINITY]);
    /// ```
    atanh => Atanh;
    /// The error function; refused for complex inputs (`"erf_vml_cpu"`).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f64, f64::INFINITY], &[2]).unwrap().erf().unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![0.0, 1.0]);
    /// ```
    erf => Erf;
    /// The complementary error function `1 - erf(x)`, accurate in the tails.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f64, -f64::INFINITY], &[2]).unwrap().erfc().unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![1.0, 2.0]);
    /// ```
    erfc => Erfc;
    /// The inverse error function (`±1` gives `±inf`, NaN outside `[-1, 1]`).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.5f64], &[1]).unwrap().erfinv().unwrap();
    /// assert!((t.to_vec::<f64>().unwrap()[0] - 0.4769362762044699).abs() < 1e-15);
    /// ```
    erfinv => Erfinv;
    /// `x - trunc(x)`: floating inputs only (`"frac_cpu"` refuses the others).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::from_vec(vec![-2.5f32, 1.25], &[2]).unwrap().frac().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![-0.5, 0.25]);
    /// assert!(Tensor::zeros(&[1], DType::I32).frac().is_err());
    /// ```
    frac => Frac;
    /// `x == ±inf` (bool); complex: either part infinite.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![f32::NEG_INFINITY, f32::NAN], &[2]).unwrap().isinf().unwrap();
    /// assert_eq!(t.to_vec::<bool>().unwrap(), vec![true, false]);
    /// ```
    isinf => IsInf;
    /// `x == +inf` (bool); refused for complex.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![f32::INFINITY, f32::NEG_INFINITY], &[2]).unwrap();
    /// assert_eq!(t.isposinf().unwrap().to_vec::<bool>().unwrap(), vec![true, false]);
    /// ```
    isposinf => IsPosInf;
    /// `x == -inf` (bool); refused for complex.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![f32::INFINITY, f32::NEG_INFINITY], &[2]).unwrap();
    /// assert_eq!(t.isneginf().unwrap().to_vec::<bool>().unwrap(), vec![false, true]);
    /// ```
    isneginf => IsNegInf;
    /// Neither NaN nor infinite (bool; always true for bool and integers).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f64, f64::NAN, f64::INFINITY], &[3]).unwrap();
    /// assert_eq!(t.isfinite().unwrap().to_vec::<bool>().unwrap(), vec![true, false, false]);
    /// ```
    isfinite => IsFinite;
    /// The imaginary part is 0 (bool; always true for real dtypes).
    ///
    /// ```
    /// use lazyfuse::{Complex, Tensor};
    /// let z = Tensor::from_vec(vec![Complex::new(1.0f32, 0.0), Complex::new(1.0, 1.0)], &[2]).unwrap();
    /// assert_eq!(z.isreal().unwrap().to_vec::<bool>().unwrap(), vec![true, false]);
    /// ```
    isreal => IsReal;
    /// The sign bit is set (bool): true for `-0.0`; `x < 0` for integers; refused for
    /// complex.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-0.0f32, 0.0, -1.0], &[3]).unwrap();
    /// assert_eq!(t.signbit().unwrap().to_vec::<bool>().unwrap(), vec![true, false, true]);
    /// ```
    signbit => Signbit;
}

unary_fns_inplace! {
    /// In-place [`Tensor::neg`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.5f32, -2.0], &[2]).unwrap();
    /// t.neg_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![-1.5, 2.0]);
    /// ```
    neg_ => Neg;
    /// In-place [`Tensor::abs`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-1.5f32, 2.0], &[2]).unwrap();
    /// t.abs_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.5, 2.0]);
    /// ```
    abs_ => Abs;
    /// In-place [`Tensor::exp`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f64], &[1]).unwrap();
    /// t.exp_().unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![1.0]);
    /// ```
    exp_ => Exp;
    /// In-place [`Tensor::log`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f64, std::f64::consts::E], &[2]).unwrap();
    /// t.log_().unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![0.0, 1.0]);
    /// ```
    log_ => Log;
    /// In-place [`Tensor::sqrt`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![4.0f32, 9.0], &[2]).unwrap();
    /// t.sqrt_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![2.0, 3.0]);
    /// ```
    sqrt_ => Sqrt;
    /// In-place [`Tensor::rsqrt`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![4.0f32, 0.25], &[2]).unwrap();
    /// t.rsqrt_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.5, 2.0]);
    /// ```
    rsqrt_ => Rsqrt;
    /// In-place [`Tensor::sin`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f64], &[1]).unwrap();
    /// t.sin_().unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![0.0]);
    /// ```
    sin_ => Sin;
    /// In-place [`Tensor::cos`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f64], &[1]).unwrap();
    /// t.cos_().unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![1.0]);
    /// ```
    cos_ => Cos;
    /// In-place [`Tensor::tanh`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.tanh_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    tanh_ => Tanh;
    /// In-place [`Tensor::sigmoid`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.sigmoid_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.5]);
    /// ```
    sigmoid_ => Sigmoid;
    /// In-place [`Tensor::relu`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-1i32, 3], &[2]).unwrap();
    /// t.relu_().unwrap();
    /// assert_eq!(t.to_vec::<i32>().unwrap(), vec![0, 3]);
    /// ```
    relu_ => Relu;
    /// In-place [`Tensor::floor`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-1.5f32, 2.5], &[2]).unwrap();
    /// t.floor_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![-2.0, 2.0]);
    /// ```
    floor_ => Floor;
    /// In-place [`Tensor::ceil`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-1.5f32, 2.5], &[2]).unwrap();
    /// t.ceil_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![-1.0, 3.0]);
    /// ```
    ceil_ => Ceil;
    /// In-place [`Tensor::round`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.5f32, 1.5], &[2]).unwrap();
    /// t.round_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0, 2.0]);
    /// ```
    round_ => Round;
    /// In-place [`Tensor::trunc`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-1.5f32, 2.5], &[2]).unwrap();
    /// t.trunc_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![-1.0, 2.0]);
    /// ```
    trunc_ => Trunc;
    /// In-place [`Tensor::reciprocal`] (the result must cast back to this dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![2.0f32, -4.0], &[2]).unwrap();
    /// t.reciprocal_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.5, -0.25]);
    /// ```
    reciprocal_ => Reciprocal;
    /// In-place [`Tensor::sgn`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-3i32, 0, 9], &[3]).unwrap();
    /// t.sgn_().unwrap();
    /// assert_eq!(t.to_vec::<i32>().unwrap(), vec![-1, 0, 1]);
    /// ```
    sgn_ => Sgn;
    /// In-place [`Tensor::sign`] (NaN becomes 0; refused for complex).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![f32::NAN, -4.0], &[2]).unwrap();
    /// t.sign_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0, -1.0]);
    /// ```
    sign_ => Sign;
    /// In-place [`Tensor::square`] (bool is refused: its `int64` result can't be cast
    /// back).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::from_vec(vec![-3i32], &[1]).unwrap();
    /// t.square_().unwrap();
    /// assert_eq!(t.to_vec::<i32>().unwrap(), vec![9]);
    /// assert!(Tensor::zeros(&[1], DType::Bool).square_().is_err());
    /// ```
    square_ => Square;
    /// In-place [`Tensor::exp2`]; integer tensors are refused ("result type Float
    /// can't be cast to the desired output type Long").
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::from_vec(vec![2.0f32], &[1]).unwrap();
    /// t.exp2_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![4.0]);
    /// let err = Tensor::zeros(&[1], DType::I64).exp2_().unwrap_err();
    /// assert_eq!(err.to_string(), "result type Float can't be cast to the desired output type Long");
    /// ```
    exp2_ => Exp2;
    /// In-place [`Tensor::expm1`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.expm1_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    expm1_ => Expm1;
    /// In-place [`Tensor::log2`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![4.0f32], &[1]).unwrap();
    /// t.log2_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![2.0]);
    /// ```
    log2_ => Log2;
    /// In-place [`Tensor::log10`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![100.0f64], &[1]).unwrap();
    /// t.log10_().unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![2.0]);
    /// ```
    log10_ => Log10;
    /// In-place [`Tensor::log1p`]; the write reaches every view of the storage.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let base = Tensor::from_vec(vec![0.0f32, 0.0], &[2]).unwrap();
    /// base.select(0, 1).unwrap().log1p_().unwrap();
    /// assert_eq!(base.to_vec::<f32>().unwrap(), vec![0.0, 0.0]);
    /// ```
    log1p_ => Log1p;
    /// In-place [`Tensor::tan`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.tan_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    tan_ => Tan;
    /// In-place [`Tensor::asin`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.asin_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    asin_ => Asin;
    /// In-place [`Tensor::acos`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
    /// t.acos_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    acos_ => Acos;
    /// In-place [`Tensor::atan`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.atan_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    atan_ => Atan;
    /// In-place [`Tensor::sinh`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.sinh_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    sinh_ => Sinh;
    /// In-place [`Tensor::cosh`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.cosh_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0]);
    /// ```
    cosh_ => Cosh;
    /// In-place [`Tensor::asinh`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.asinh_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    asinh_ => Asinh;
    /// In-place [`Tensor::acosh`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
    /// t.acosh_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    acosh_ => Acosh;
    /// In-place [`Tensor::atanh`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.atanh_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    atanh_ => Atanh;
    /// In-place [`Tensor::erf`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.erf_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    erf_ => Erf;
    /// In-place [`Tensor::erfc`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.erfc_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0]);
    /// ```
    erfc_ => Erfc;
    /// In-place [`Tensor::erfinv`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.erfinv_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    erfinv_ => Erfinv;
    /// In-place [`Tensor::frac`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.5f32], &[1]).unwrap();
    /// t.frac_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.5]);
    /// ```
    frac_ => Frac;
}

impl Tensor {
    /// PyTorch's `positive` (unary `+`): this tensor itself (an alias, as PyTorch
    /// returns its input); refused for bool.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::ones(&[2], DType::I8);
    /// assert!(t.positive().unwrap().shares_storage(&t));
    /// assert!(Tensor::ones(&[1], DType::Bool).positive().is_err());
    /// ```
    pub fn positive(&self) -> Result<Tensor> {
        typing::positive(self.dtype())?;
        Ok(self.clone())
    }

    /// The [`UnaryParamOp::NanToNum`] of these arguments, PyTorch's defaults filled
    /// in for this dtype.
    fn nan_to_num_op(
        &self,
        nan: Option<f64>,
        posinf: Option<f64>,
        neginf: Option<f64>,
    ) -> UnaryParamOp {
        let (dn, dp, dm) = lazyfuse_runtime::interp::nan_to_num_defaults(self.dtype());
        UnaryParamOp::NanToNum {
            nan: nan.unwrap_or(dn),
            posinf: posinf.unwrap_or(dp),
            neginf: neginf.unwrap_or(dm),
        }
    }

    /// Replaces NaN, +inf and -inf by `nan` (default 0), `posinf` and `neginf`
    /// (defaults: the dtype's largest and lowest finite values). Replacement values
    /// are converted to the dtype (so they may overflow to ±inf). Complex: each part
    /// on its own. The identity (a copy) on bool and integers.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::from_vec(vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY], &[3]).unwrap();
    /// let r = t.to_dtype(DType::F16).unwrap().nan_to_num(None, None, Some(-1.0)).unwrap();
    /// let r = r.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap();
    /// assert_eq!(r, vec![0.0, 65504.0, -1.0]);
    /// ```
    pub fn nan_to_num(
        &self,
        nan: Option<f64>,
        posinf: Option<f64>,
        neginf: Option<f64>,
    ) -> Result<Tensor> {
        param_op(self, self.nan_to_num_op(nan, posinf, neginf))
    }

    /// In-place [`Tensor::nan_to_num`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![f64::NAN, 2.0], &[2]).unwrap();
    /// t.nan_to_num_(Some(7.0), None, None).unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![7.0, 2.0]);
    /// ```
    pub fn nan_to_num_(
        &self,
        nan: Option<f64>,
        posinf: Option<f64>,
        neginf: Option<f64>,
    ) -> Result<()> {
        self.param_op_inplace(self.nan_to_num_op(nan, posinf, neginf))
    }

    /// `ln(x / (1 - x))`. With `eps` (and `eps >= 0`, as PyTorch), the input is
    /// first clamped to `[eps, 1 - eps]`. Integers give the default float dtype;
    /// complex is refused (`"logit_cpu"`).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.5f64, 1.0, 0.0], &[3]).unwrap();
    /// assert_eq!(t.logit(None).unwrap().to_vec::<f64>().unwrap(), vec![0.0, f64::INFINITY, f64::NEG_INFINITY]);
    /// let c = t.logit(Some(0.25)).unwrap().to_vec::<f64>().unwrap();
    /// assert!((c[1] - 3f64.ln()).abs() < 1e-15);
    /// ```
    pub fn logit(&self, eps: Option<f64>) -> Result<Tensor> {
        param_op(self, UnaryParamOp::Logit { eps })
    }

    /// In-place [`Tensor::logit`] (integer tensors are refused by the cast rule).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.5f32], &[1]).unwrap();
    /// t.logit_(None).unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    pub fn logit_(&self, eps: Option<f64>) -> Result<()> {
        self.param_op_inplace(UnaryParamOp::Logit { eps })
    }

    /// PyTorch's `round(x, decimals=n)`: `nearbyint(x * 10^n) / 10^n` (negative `n`:
    /// `nearbyint(x / 10^-n) * 10^-n`), half to even; floating inputs only. `n == 0`
    /// is [`Tensor::round`] (but still refuses integers, as PyTorch does).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::from_vec(vec![1.2345f64, 1250.0], &[2]).unwrap();
    /// assert_eq!(t.round_decimals(2).unwrap().to_vec::<f64>().unwrap(), vec![1.23, 1250.0]);
    /// assert_eq!(t.round_decimals(-2).unwrap().to_vec::<f64>().unwrap(), vec![0.0, 1200.0]);
    /// assert!(Tensor::zeros(&[1], DType::I32).round_decimals(1).is_err());
    /// ```
    pub fn round_decimals(&self, decimals: i64) -> Result<Tensor> {
        let op = UnaryParamOp::RoundDecimals { decimals };
        // The refusal first: `round(int, decimals=0)` fails although `round(int)` works.
        typing::unary_param(op, self.dtype(), default_dtype())?;
        if decimals == 0 {
            return unary_op(self, UnaryOp::Round);
        }
        param_op(self, op)
    }

    /// In-place [`Tensor::round_decimals`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.125f32], &[1]).unwrap();
    /// t.round_decimals_(2).unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.12]);
    /// ```
    pub fn round_decimals_(&self, decimals: i64) -> Result<()> {
        let op = UnaryParamOp::RoundDecimals { decimals };
        let sig = typing::unary_param(op, self.dtype(), default_dtype())?;
        if decimals == 0 {
            return self.unary_inplace(sig, Op::Unary(UnaryOp::Round));
        }
        self.unary_inplace(sig, Op::UnaryParam(op))
    }
}
