//! The binary and ternary pointwise math ops, their in-place forms, and `out=`.
//!
//! - Binary nodes: `fmax`, `fmin`, `hypot`, `copysign`, `logaddexp`, `logaddexp2`,
//!   `xlogy`, `nextafter`, `bitwise_left_shift`, `bitwise_right_shift`, `gcd`, `lcm`
//!   (each one `BinaryOp`, promoted like `add`; the ones PyTorch takes only as
//!   tensor-tensor take `&Tensor` here too).
//! - Compositions of existing nodes, built so that the numerics are PyTorch's: `lerp`,
//!   `addcmul`, `addcdiv` compute in PyTorch's "opmath" dtype (float32 for
//!   float16/bfloat16) and round once, with its formulas and evaluation order;
//!   `clamp` with tensor bounds is `maximum` then `minimum`; `masked_fill` is `where`;
//!   `isclose` is PyTorch's own composite.
//! - In-place forms compute the out-of-place value and write it through
//!   `write_view` (functionalization, see `inplace.rs`), after PyTorch's in-place
//!   checks: no shape change by broadcasting, the result castable to the destination,
//!   no internal or partial overlap.
//! - [`Tensor::write_out`] is `out=` for any op's result.

use crate::default_dtype;
use crate::error::Result;
use crate::operand::operand_node;
use crate::operand::Operand;
use crate::ops::elementwise::{binary_op, result_strides};
use crate::store::{with_store, Store};
use crate::tensor::{check_fill_value, Tensor};
use lazyfuse_ir::broadcast::{broadcast_all, inplace_shape};
use lazyfuse_ir::promote::OperandType;
use lazyfuse_ir::typing::{self, Signature};
use lazyfuse_ir::{BinaryOp, DType, Error as IrError, NodeId, Op, Scalar, UnaryOp};
use lazyfuse_runtime::Complex;

fn bin(s: &mut Store, op: BinaryOp, dtype: DType, shape: &[usize], a: NodeId, b: NodeId) -> NodeId {
    s.add(Op::Binary(op), dtype, shape, &[a, b])
}

fn full(s: &mut Store, v: Scalar, dtype: DType, shape: &[usize]) -> Result<NodeId> {
    operand_node(s, &Operand::Scalar(v), dtype, shape)
}

fn otype(t: &Tensor) -> OperandType {
    Operand::Tensor(t).operand_type()
}

macro_rules! tensor_binary {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
                    binary_op(BinaryOp::$op, Operand::Tensor(self), Operand::Tensor(other))
                }
            )*
        }
    };
}

tensor_binary! {
    /// Elementwise maximum that ignores NaN: where one operand is NaN the other is
    /// returned (NaN only if both are). Promotes like `maximum`; refused for complex.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![f32::NAN, 1.0, f32::NAN], &[3]).unwrap();
    /// let b = Tensor::from_vec(vec![2.0f32, f32::NAN, f32::NAN], &[3]).unwrap();
    /// let m = a.fmax(&b).unwrap().to_vec::<f32>().unwrap();
    /// assert_eq!(&m[..2], &[2.0, 1.0]);
    /// assert!(m[2].is_nan());
    /// ```
    fmax => Fmax;
    /// Elementwise minimum that ignores NaN (see [`Tensor::fmax`]).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![f64::NAN, 3.0], &[2]).unwrap();
    /// let b = Tensor::from_vec(vec![2.0f64, 1.0], &[2]).unwrap();
    /// assert_eq!(a.fmin(&b).unwrap().to_vec::<f64>().unwrap(), vec![2.0, 1.0]);
    /// ```
    fmin => Fmin;
    /// `sqrt(self² + other²)`; floating dtypes only (`"hypot_cpu" not implemented for
    /// 'Long'`), an infinite operand gives `inf` even beside NaN.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![3.0f32, f32::INFINITY], &[2]).unwrap();
    /// let b = Tensor::from_vec(vec![4.0f32, f32::NAN], &[2]).unwrap();
    /// assert_eq!(a.hypot(&b).unwrap().to_vec::<f32>().unwrap(), vec![5.0, f32::INFINITY]);
    /// ```
    hypot => Hypot;
    /// `log(e^self + e^other)` without overflow; floating and complex64/128.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1e30f32, f32::NEG_INFINITY], &[2]).unwrap();
    /// assert_eq!(a.logaddexp(&a).unwrap().to_vec::<f32>().unwrap(), vec![1e30, f32::NEG_INFINITY]);
    /// ```
    logaddexp => Logaddexp;
    /// `log2(2^self + 2^other)`; floating dtypes only.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f64, 3.0], &[2]).unwrap();
    /// assert_eq!(a.logaddexp2(&a).unwrap().to_vec::<f64>().unwrap(), vec![2.0, 4.0]);
    /// ```
    logaddexp2 => Logaddexp2;
    /// The next representable value after `self` toward `other`, in the tensor's own
    /// dtype (float16 steps by a float16 ulp); floating dtypes only.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 0.0], &[2]).unwrap();
    /// let b = Tensor::from_vec(vec![2.0f32, -1.0], &[2]).unwrap();
    /// let n = a.nextafter(&b).unwrap().to_vec::<f32>().unwrap();
    /// assert_eq!(n, vec![1.0 + f32::EPSILON, -f32::from_bits(1)]);
    /// ```
    nextafter => Nextafter;
    /// Greatest common divisor; integer dtypes only. Like PyTorch, `gcd(i8::MIN, 0)`
    /// is `i8::MIN` (C's `abs` of the minimum).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![12i64, -6, 0], &[3]).unwrap();
    /// let b = Tensor::from_vec(vec![-18i64, 4, 0], &[3]).unwrap();
    /// assert_eq!(a.gcd(&b).unwrap().to_vec::<i64>().unwrap(), vec![6, 2, 0]);
    /// ```
    gcd => Gcd;
    /// Least common multiple (`|a / gcd * b|`, wrapping as PyTorch's kernel does);
    /// integer dtypes only.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![4i32, -6, 0], &[3]).unwrap();
    /// let b = Tensor::from_vec(vec![6i32, 4, 5], &[3]).unwrap();
    /// assert_eq!(a.lcm(&b).unwrap().to_vec::<i32>().unwrap(), vec![12, 12, 0]);
    /// ```
    lcm => Lcm;
}

macro_rules! operand_binary {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name<'a>(&self, other: impl Into<Operand<'a>>) -> Result<Tensor> {
                    binary_op(BinaryOp::$op, Operand::Tensor(self), other.into())
                }
            )*
        }
    };
}

operand_binary! {
    /// `|self|` with the sign of `other` (the sign bit: `-0.0` and `-NaN` count as
    /// negative); integers and bool give the default float dtype; complex is refused.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::from_vec(vec![1i32, -2], &[2]).unwrap();
    /// let c = a.copysign(-0.0).unwrap();
    /// assert_eq!((c.dtype(), c.to_vec::<f32>().unwrap()), (DType::F32, vec![-1.0, -2.0]));
    /// ```
    copysign => Copysign;
    /// `self * log(other)`, 0 where `self == 0` (unless `other` is NaN); integers give
    /// the default float dtype; complex is refused.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f32, 2.0], &[2]).unwrap();
    /// let y = Tensor::from_vec(vec![0.0f32, 1.0], &[2]).unwrap();
    /// assert_eq!(x.xlogy(&y).unwrap().to_vec::<f32>().unwrap(), vec![0.0, 0.0]);
    /// ```
    xlogy => Xlogy;
    /// `self << other` on integers; a shift that is negative or at least the bit
    /// width gives 0 (PyTorch's kernel).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1i8, 1, 1], &[3]).unwrap();
    /// let s = Tensor::from_vec(vec![7i8, 8, -1], &[3]).unwrap();
    /// assert_eq!(a.bitwise_left_shift(&s).unwrap().to_vec::<i8>().unwrap(), vec![-128, 0, 0]);
    /// ```
    bitwise_left_shift => BitwiseLeftShift;
    /// `self >> other` on integers (arithmetic for signed types); an out-of-range
    /// shift gives 0, or -1 for a negative signed `self`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![-128i8, 100], &[2]).unwrap();
    /// assert_eq!(a.bitwise_right_shift(100).unwrap().to_vec::<i8>().unwrap(), vec![-1, 0]);
    /// ```
    bitwise_right_shift => BitwiseRightShift;
}

macro_rules! tensor_inplace {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name(&self, other: &Tensor) -> Result<()> {
                    self.inplace_binary(BinaryOp::$op, Operand::Tensor(other))
                }
            )*
        }
    };
}

tensor_inplace! {
    /// In-place [`Tensor::hypot`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![3.0f32], &[1]).unwrap();
    /// a.hypot_(&Tensor::from_vec(vec![4.0f64], &[1]).unwrap()).unwrap();
    /// assert_eq!(a.to_vec::<f32>().unwrap(), vec![5.0]);
    /// ```
    hypot_ => Hypot;
    /// In-place [`Tensor::nextafter`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f64], &[1]).unwrap();
    /// a.nextafter_(&Tensor::from_vec(vec![0.0f64], &[1]).unwrap()).unwrap();
    /// assert_eq!(a.to_vec::<f64>().unwrap(), vec![1.0 - f64::EPSILON / 2.0]);
    /// ```
    nextafter_ => Nextafter;
    /// In-place [`Tensor::gcd`] (the promoted result must cast back: `int8.gcd_(float)`
    /// is refused).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![12i8], &[1]).unwrap();
    /// a.gcd_(&Tensor::from_vec(vec![18i64], &[1]).unwrap()).unwrap();
    /// assert_eq!(a.to_vec::<i8>().unwrap(), vec![6]);
    /// ```
    gcd_ => Gcd;
    /// In-place [`Tensor::lcm`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![4i32], &[1]).unwrap();
    /// a.lcm_(&Tensor::from_vec(vec![6i32], &[1]).unwrap()).unwrap();
    /// assert_eq!(a.to_vec::<i32>().unwrap(), vec![12]);
    /// ```
    lcm_ => Lcm;
}

macro_rules! operand_inplace {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name<'a>(&self, other: impl Into<Operand<'a>>) -> Result<()> {
                    self.inplace_binary(BinaryOp::$op, other.into())
                }
            )*
        }
    };
}

operand_inplace! {
    /// In-place [`Tensor::copysign`] (an integer destination is refused: the result is
    /// floating).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::from_vec(vec![2.0f32], &[1]).unwrap();
    /// a.copysign_(-1).unwrap();
    /// assert_eq!(a.to_vec::<f32>().unwrap(), vec![-2.0]);
    /// assert!(Tensor::zeros(&[1], DType::I32).copysign_(-1).is_err());
    /// ```
    copysign_ => Copysign;
    /// In-place [`Tensor::xlogy`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f64, 2.0], &[2]).unwrap();
    /// a.xlogy_(1.0).unwrap();
    /// assert_eq!(a.to_vec::<f64>().unwrap(), vec![0.0, 0.0]);
    /// ```
    xlogy_ => Xlogy;
    /// In-place [`Tensor::bitwise_left_shift`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![3u8], &[1]).unwrap();
    /// a.bitwise_left_shift_(2).unwrap();
    /// assert_eq!(a.to_vec::<u8>().unwrap(), vec![12]);
    /// ```
    bitwise_left_shift_ => BitwiseLeftShift;
    /// In-place [`Tensor::bitwise_right_shift`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![-8i16], &[1]).unwrap();
    /// a.bitwise_right_shift_(1).unwrap();
    /// assert_eq!(a.to_vec::<i16>().unwrap(), vec![-4]);
    /// ```
    bitwise_right_shift_ => BitwiseRightShift;
}

/// The absolute value of a host-scalar weight as PyTorch's `lerp` compares it with
/// 0.5: after conversion to the compute dtype.
fn weight_abs(w: Scalar, compute: DType) -> f64 {
    let a = match w {
        Scalar::Complex(re, im) => re.hypot(im),
        other => other.to_f64().abs(),
    };
    if matches!(compute, DType::F32 | DType::C64) {
        f64::from(a as f32)
    } else {
        a
    }
}

/// The dtype checks, weight check and broadcast shape of `lerp`.
fn lerp_check(start: &Tensor, end: &Tensor, weight: &Operand) -> Result<(Signature, Vec<usize>)> {
    let wt = match weight {
        Operand::Tensor(t) => Some(t.dtype()),
        Operand::Scalar(_) => None,
    };
    let sig = typing::lerp(start.dtype(), end.dtype(), wt)?;
    if let Operand::Scalar(w) = weight {
        check_fill_value(*w, sig.compute)?;
    }
    let shape = broadcast_all(&[&start.shape(), &end.shape(), weight.shape()])?;
    Ok((sig, shape))
}

/// PyTorch's `lerp`: `start + w * (end - start)` where `|w| < 0.5`, else
/// `end - (end - start) * (1 - w)`, in the compute dtype, rounded once.
fn lerp_value(
    start: &Tensor,
    end: &Tensor,
    weight: &Operand,
    sig: Signature,
    shape: &[usize],
) -> Result<Tensor> {
    let c = sig.compute;
    let (st, en) = (Operand::Tensor(start), Operand::Tensor(end));
    let strides = result_strides(
        shape,
        &[(&st, sig.output), (&en, sig.output), (weight, sig.output)],
    );
    with_store(|s| {
        let a = start.node_as(s, c, shape)?;
        let e = end.node_as(s, c, shape)?;
        let w = operand_node(s, weight, c, shape)?;
        let diff = bin(s, BinaryOp::Sub, c, shape, e, a);
        let small = |s: &mut Store| {
            let m = bin(s, BinaryOp::Mul, c, shape, w, diff);
            bin(s, BinaryOp::Add, c, shape, a, m)
        };
        let large = |s: &mut Store| -> Result<NodeId> {
            let one = full(s, Scalar::Int(1), c, shape)?;
            let one_minus_w = bin(s, BinaryOp::Sub, c, shape, one, w);
            let m = bin(s, BinaryOp::Mul, c, shape, diff, one_minus_w);
            Ok(bin(s, BinaryOp::Sub, c, shape, e, m))
        };
        let node = match weight {
            Operand::Scalar(v) if weight_abs(*v, c) < 0.5 => small(s),
            Operand::Scalar(_) => large(s)?,
            Operand::Tensor(_) => {
                let real = c.to_real();
                let abs = s.add(Op::Unary(UnaryOp::Abs), real, shape, &[w]);
                let half = full(s, Scalar::Float(0.5), real, shape)?;
                let cond = bin(s, BinaryOp::Lt, DType::Bool, shape, abs, half);
                let (lo, hi) = (small(s), large(s)?);
                s.add(Op::Where, c, shape, &[cond, lo, hi])
            }
        };
        let node = s.cast_node(node, sig.output);
        Ok(Tensor::from_node_strided(s, node, strides))
    })
}

/// `addcmul` (`div`: `addcdiv`): `x + value * t1 * t2` (`x + value * t1 / t2`), left
/// to right as PyTorch's kernel evaluates it, in the compute dtype, rounded once.
fn addc_value(
    x: &Tensor,
    t1: &Tensor,
    t2: &Tensor,
    value: Scalar,
    div: bool,
    sig: Signature,
    shape: &[usize],
) -> Result<Tensor> {
    let c = sig.compute;
    let operands = [Operand::Tensor(x), Operand::Tensor(t1), Operand::Tensor(t2)];
    let strides = result_strides(shape, &operands.each_ref().map(|o| (o, sig.output)));
    with_store(|s| {
        let a = x.node_as(s, c, shape)?;
        let p = t1.node_as(s, c, shape)?;
        let q = t2.node_as(s, c, shape)?;
        let v = full(s, value, c, shape)?;
        let vp = bin(s, BinaryOp::Mul, c, shape, v, p);
        let op = if div { BinaryOp::Div } else { BinaryOp::Mul };
        let r = bin(s, op, c, shape, vp, q);
        let node = bin(s, BinaryOp::Add, c, shape, a, r);
        let node = s.cast_node(node, sig.output);
        Ok(Tensor::from_node_strided(s, node, strides))
    })
}

/// The value of a zero-dim tensor as a host scalar (PyTorch's `.item()`): realizes it.
fn scalar_of(t: &Tensor) -> Result<Scalar> {
    fn first<T: Copy>(v: Vec<T>) -> Result<T> {
        v.first().copied().ok_or_else(|| {
            IrError::invalid(
                "item",
                "a Tensor with 0 elements cannot be converted to Scalar",
            )
            .into()
        })
    }
    let d = t.dtype();
    Ok(if d == DType::Bool {
        Scalar::Bool(first(t.to_vec::<bool>()?)?)
    } else if d.is_integer() {
        Scalar::Int(first(t.to_dtype(DType::I64)?.to_vec::<i64>()?)?)
    } else if d.is_complex() {
        let z = first(t.to_dtype(DType::C128)?.to_vec::<Complex<f64>>()?)?;
        Scalar::Complex(z.re, z.im)
    } else {
        Scalar::Float(first(t.to_dtype(DType::F64)?.to_vec::<f64>()?)?)
    })
}

/// The checks of `masked_fill` and the fill value as a host scalar.
fn masked_fill_value(x: &Tensor, mask: &Tensor, value: &Operand) -> Result<Scalar> {
    let ndim = match value {
        Operand::Tensor(t) => Some(t.ndim()),
        Operand::Scalar(_) => None,
    };
    typing::masked_fill(x.dtype(), mask.dtype(), ndim)?;
    let v = match value {
        Operand::Scalar(s) => *s,
        Operand::Tensor(t) => scalar_of(t)?,
    };
    check_fill_value(v, x.dtype())?;
    Ok(v)
}

fn masked_fill_node(
    s: &mut Store,
    x: &Tensor,
    mask: &Tensor,
    v: Scalar,
    shape: &[usize],
) -> Result<NodeId> {
    let d = x.dtype();
    let cond = mask.node_as(s, DType::Bool, shape)?;
    let fill = full(s, v, d, shape)?;
    let keep = x.node_as(s, d, shape)?;
    Ok(s.add(Op::Where, d, shape, &[cond, fill, keep]))
}

impl Tensor {
    /// Writes a computed value (any shape that broadcasts to this one, any dtype) into
    /// this view, converted to its dtype. The caller has made PyTorch's checks.
    fn assign(&self, result: &Tensor) -> Result<()> {
        crate::autograd::check_inplace(self)?;
        if result.device() != self.device() {
            // A result computed on another device (a zero-dim CPU destination with
            // CUDA operands): PyTorch refuses to write it in place too.
            return Err(crate::Error::device_mismatch(
                "in-place op",
                self.device(),
                result.device(),
            ));
        }
        let shape = self.shape();
        with_store(|s| {
            let v = result.node_as(s, self.dtype(), &shape)?;
            self.write(s, v);
            Ok(())
        })
    }

    /// PyTorch's `out=`: writes `result`, an op's (lazy) result, into this tensor, as
    /// `torch.maximum(a, b, out=a)` is `a.write_out(&a.maximum(&b)?)`.
    ///
    /// - The result is converted to this tensor's dtype under the in-place rule: the
    ///   result dtype (for `maximum` the promoted dtype) must cast to it without going
    ///   to a lower category, else PyTorch's "result type Float can't be cast to the
    ///   desired output type Int".
    /// - `out` may alias an input: results are lazy values of the storage version they
    ///   were built from, so the write never disturbs its own inputs (what PyTorch
    ///   refuses as a partial overlap of `out` and an input is computed as if the input
    ///   had been copied first).
    /// - The write reaches every view of this tensor's storage.
    /// - **Shape**: PyTorch resizes a mismatched `out` (with a warning unless it is
    ///   empty). A lazyfuse tensor is a shared handle whose shape cannot change, so a
    ///   result whose shape differs from this one is an `Err` naming both shapes (no
    ///   broadcasting either). An `out` whose elements overlap (an expanded view) is
    ///   refused as by PyTorch.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let base = Tensor::from_vec(vec![1i64, 5, 2, 0], &[2, 2]).unwrap();
    /// let a = base.select(0, 0).unwrap();                    // a view: [1, 5]
    /// let b = Tensor::from_vec(vec![3i64, 4], &[2]).unwrap();
    /// a.write_out(&a.maximum(&b).unwrap()).unwrap();         // maximum(a, b, out=a)
    /// assert_eq!(base.to_vec::<i64>().unwrap(), vec![3, 5, 2, 0]);
    /// let f = Tensor::from_vec(vec![0.5f32, 0.5], &[2]).unwrap();
    /// let err = a.write_out(&a.maximum(&f).unwrap()).unwrap_err();
    /// assert_eq!(err.to_string(), "result type Float can't be cast to the desired output type Long");
    /// assert!(a.write_out(&Tensor::zeros(&[3], DType::I64)).is_err());
    /// ```
    pub fn write_out(&self, result: &Tensor) -> Result<()> {
        if result.shape() != self.shape() {
            return Err(IrError::invalid(
                "out",
                format!(
                    "out= expects a result of the output's shape: output with shape {:?} cannot hold a result of shape {:?} (lazyfuse does not resize `out`)",
                    self.shape(),
                    result.shape()
                ),
            )
            .into());
        }
        typing::inplace(result.dtype(), self.dtype())?;
        self.check_destination(None)?;
        if result.dtype() != self.dtype() && matches!(self.dtype(), DType::C32 | DType::BC32) {
            return Err(IrError::Unsupported(format!(
                "out= conversion from {} to {}",
                result.dtype(),
                self.dtype()
            ))
            .into());
        }
        self.assign(result)
    }

    /// `clamp` with tensor bounds (PyTorch's `clamp.Tensor`): `min`, `max` and `self`
    /// broadcast and promote together; either bound may be absent (then it is
    /// `clamp_min`/`clamp_max`). NaN anywhere gives NaN; where `min > max` the result
    /// is `max`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::from_vec(vec![-5i8, 0, 9], &[3]).unwrap();
    /// let lo = Tensor::from_vec(vec![-1i64], &[1]).unwrap();
    /// let hi = Tensor::from_vec(vec![2.5f32, 2.5, 2.5], &[3]).unwrap();
    /// let c = x.clamp_tensor(Some(&lo), Some(&hi)).unwrap();
    /// assert_eq!((c.dtype(), c.to_vec::<f32>().unwrap()), (DType::F32, vec![-1.0, 0.0, 2.5]));
    /// ```
    pub fn clamp_tensor(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
        let sig =
            typing::clamp_tensor(otype(self), min.map(otype), max.map(otype), default_dtype())?;
        self.clamp_nodes(min, max, sig.output)
    }

    /// `max(self, min)` then `min(., max)` in `dtype` (the checked promoted dtype).
    fn clamp_nodes(
        &self,
        min: Option<&Tensor>,
        max: Option<&Tensor>,
        dtype: DType,
    ) -> Result<Tensor> {
        let moved = Tensor::align_devices("clamp", &[Some(self), min, max])?;
        let this = self.or_moved(&moved, 0);
        let min = min.map(|t| t.or_moved(&moved, 1));
        let max = max.map(|t| t.or_moved(&moved, 2));
        let shape = this.clamp_shape(min, max)?;
        let operands: Vec<Operand> = [Some(this), min, max]
            .into_iter()
            .flatten()
            .map(Operand::Tensor)
            .collect();
        let typed: Vec<(&Operand, DType)> = operands.iter().map(|o| (o, dtype)).collect();
        let strides = result_strides(&shape, &typed);
        with_store(|s| {
            // differentiated as the `maximum` and `minimum` it is (ties split)
            let mut node = this.node_as(s, dtype, &shape)?;
            for (bound, op) in [(min, BinaryOp::Maximum), (max, BinaryOp::Minimum)] {
                if let Some(b) = bound {
                    let b = b.node_as(s, dtype, &shape)?;
                    node = bin(s, op, dtype, &shape, node, b);
                }
            }
            Ok(Tensor::from_node_strided(s, node, strides))
        })
    }

    fn clamp_shape(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Vec<usize>> {
        let shapes: Vec<Vec<usize>> = std::iter::once(self.shape())
            .chain(min.map(Tensor::shape))
            .chain(max.map(Tensor::shape))
            .collect();
        let refs: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
        Ok(broadcast_all(&refs)?)
    }

    /// `max(self, min)` elementwise: a host-scalar bound follows [`Tensor::clamp`]'s
    /// rules, a tensor bound [`Tensor::clamp_tensor`]'s.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![-2.0f32, 3.0], &[2]).unwrap();
    /// assert_eq!(x.clamp_min(0).unwrap().to_vec::<f32>().unwrap(), vec![0.0, 3.0]);
    /// ```
    pub fn clamp_min<'a>(&self, min: impl Into<Operand<'a>>) -> Result<Tensor> {
        match min.into() {
            Operand::Scalar(v) => self.clamp(Some(v), None),
            Operand::Tensor(t) => {
                let sig = typing::clamp_bound(otype(self), otype(t), true, false, default_dtype())?;
                self.clamp_nodes(Some(t), None, sig.output)
            }
        }
    }

    /// `min(self, max)` elementwise (see [`Tensor::clamp_min`]).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![-2i32, 3], &[2]).unwrap();
    /// let hi = Tensor::from_vec(vec![1i32, 1], &[2]).unwrap();
    /// assert_eq!(x.clamp_max(&hi).unwrap().to_vec::<i32>().unwrap(), vec![-2, 1]);
    /// ```
    pub fn clamp_max<'a>(&self, max: impl Into<Operand<'a>>) -> Result<Tensor> {
        match max.into() {
            Operand::Scalar(v) => self.clamp(None, Some(v)),
            Operand::Tensor(t) => {
                let sig =
                    typing::clamp_bound(otype(self), otype(t), false, false, default_dtype())?;
                self.clamp_nodes(None, Some(t), sig.output)
            }
        }
    }

    /// In-place [`Tensor::clamp`] with host-scalar bounds. As in PyTorch, a bound
    /// that promotes the result past this dtype is refused with the message naming the
    /// C++ type (`"… desired output type int"`).
    ///
    /// ```
    /// use lazyfuse::{DType, Scalar, Tensor};
    /// let x = Tensor::from_vec(vec![-5i32, 0, 9], &[3]).unwrap();
    /// x.clamp_(Some(Scalar::Int(-1)), Some(Scalar::Int(2))).unwrap();
    /// assert_eq!(x.to_vec::<i32>().unwrap(), vec![-1, 0, 2]);
    /// let err = x.clamp_(Some(Scalar::Float(1.5)), None).unwrap_err();
    /// assert_eq!(err.to_string(), "result type Float can't be cast to the desired output type int");
    /// ```
    pub fn clamp_(&self, min: Option<Scalar>, max: Option<Scalar>) -> Result<()> {
        let w = |b: Option<Scalar>| b.map(|v| OperandType::wrapped(v.wrapped_dtype()));
        typing::clamp_inplace(otype(self), w(min), w(max), default_dtype())?;
        self.check_destination(None)?;
        let value = self.clamp(min, max)?;
        self.assign(&value)
    }

    /// In-place [`Tensor::clamp_tensor`]: the bounds must broadcast to this shape and
    /// the promoted result must cast back to this dtype.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![-5.0f32, 0.0, 9.0], &[3]).unwrap();
    /// let lo = Tensor::from_vec(vec![-1.0f32], &[1]).unwrap();
    /// x.clamp_tensor_(Some(&lo), None).unwrap();
    /// assert_eq!(x.to_vec::<f32>().unwrap(), vec![-1.0, 0.0, 9.0]);
    /// ```
    pub fn clamp_tensor_(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<()> {
        let shape = self.clamp_shape(min, max)?;
        inplace_shape(&self.shape(), &shape)?;
        typing::clamp_tensor_inplace(otype(self), min.map(otype), max.map(otype), default_dtype())?;
        self.check_destination(None)?;
        for b in min.into_iter().chain(max) {
            self.check_destination(Some(b))?;
        }
        let value = self.clamp_tensor(min, max)?;
        self.assign(&value)
    }

    fn clamp_bound_(&self, bound: &Tensor, is_min: bool) -> Result<()> {
        inplace_shape(&self.shape(), &bound.shape())?;
        let sig = typing::clamp_bound(otype(self), otype(bound), is_min, true, default_dtype())?;
        self.check_destination(Some(bound))?;
        let (lo, hi) = if is_min {
            (Some(bound), None)
        } else {
            (None, Some(bound))
        };
        let value = self.clamp_nodes(lo, hi, sig.output)?;
        self.assign(&value)
    }

    /// In-place [`Tensor::clamp_min`] (`a = max(a, min)`).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 5], &[2]).unwrap();
    /// a.clamp_min_(&Tensor::from_vec(vec![3i64, 3], &[2]).unwrap()).unwrap();
    /// assert_eq!(a.to_vec::<i64>().unwrap(), vec![3, 5]);
    /// ```
    pub fn clamp_min_<'a>(&self, min: impl Into<Operand<'a>>) -> Result<()> {
        match min.into() {
            Operand::Scalar(v) => self.clamp_(Some(v), None),
            Operand::Tensor(t) => self.clamp_bound_(t, true),
        }
    }

    /// In-place [`Tensor::clamp_max`] (`a = min(a, max)`).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f64, 5.0], &[2]).unwrap();
    /// a.clamp_max_(2).unwrap();
    /// assert_eq!(a.to_vec::<f64>().unwrap(), vec![1.0, 2.0]);
    /// ```
    pub fn clamp_max_<'a>(&self, max: impl Into<Operand<'a>>) -> Result<()> {
        match max.into() {
            Operand::Scalar(v) => self.clamp_(None, Some(v)),
            Operand::Tensor(t) => self.clamp_bound_(t, false),
        }
    }

    /// Linear interpolation `self + weight * (end - self)` with PyTorch's two-sided
    /// formula (exact at `weight == 1`). No promotion: `end`, and a tensor `weight`,
    /// must have this dtype; floating and complex64/128 only. float16/bfloat16 compute
    /// in float32 and round once; a host-scalar weight stays in float32 for them.
    /// PyTorch's vectorized loop fuses the final multiply-add, which lazyfuse (two
    /// nodes) rounds twice: the results may differ by one ulp there.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 1.0], &[2]).unwrap();
    /// let b = Tensor::from_vec(vec![3.0f32, 2.0], &[2]).unwrap();
    /// assert_eq!(a.lerp(&b, 0.25).unwrap().to_vec::<f32>().unwrap(), vec![1.5, 1.25]);
    /// let w = Tensor::from_vec(vec![0.5f32, 2.0], &[2]).unwrap();
    /// assert_eq!(a.lerp(&b, &w).unwrap().to_vec::<f32>().unwrap(), vec![2.0, 3.0]);
    /// ```
    pub fn lerp<'a>(&self, end: &Tensor, weight: impl Into<Operand<'a>>) -> Result<Tensor> {
        let weight = weight.into();
        let moved = Tensor::align_devices("lerp", &[Some(self), Some(end), weight.tensor()])?;
        let (this, end) = (self.or_moved(&moved, 0), end.or_moved(&moved, 1));
        let weight = weight.or_moved(&moved, 2);
        let (sig, shape) = lerp_check(this, end, &weight)?;
        lerp_value(this, end, &weight, sig, &shape)
    }

    /// In-place [`Tensor::lerp`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f64, 10.0], &[2]).unwrap();
    /// a.lerp_(&Tensor::from_vec(vec![10.0f64], &[1]).unwrap(), 0.5).unwrap();
    /// assert_eq!(a.to_vec::<f64>().unwrap(), vec![5.0, 10.0]);
    /// ```
    pub fn lerp_<'a>(&self, end: &Tensor, weight: impl Into<Operand<'a>>) -> Result<()> {
        let weight = weight.into();
        let moved = Tensor::align_to("lerp_", self.device(), &[Some(end), weight.tensor()])?;
        let (end, weight) = (end.or_moved(&moved, 0), weight.or_moved(&moved, 1));
        let (sig, shape) = lerp_check(self, end, &weight)?;
        inplace_shape(&self.shape(), &shape)?;
        self.check_destination(Some(end))?;
        if let Operand::Tensor(w) = weight {
            self.check_destination(Some(w))?;
        }
        let value = lerp_value(self, end, &weight, sig, &shape)?;
        self.assign(&value)
    }

    fn addc(&self, t1: &Tensor, t2: &Tensor, value: Scalar, div: bool) -> Result<Tensor> {
        let name = if div { "addcdiv" } else { "addcmul" };
        let moved = Tensor::align_devices(name, &[Some(self), Some(t1), Some(t2)])?;
        let this = self.or_moved(&moved, 0);
        let (t1, t2) = (t1.or_moved(&moved, 1), t2.or_moved(&moved, 2));
        this.addc_aligned(t1, t2, value, div)
    }

    fn addc_aligned(&self, t1: &Tensor, t2: &Tensor, value: Scalar, div: bool) -> Result<Tensor> {
        let sig = typing::addc(div, otype(self), otype(t1), otype(t2), default_dtype())?;
        check_fill_value(value, sig.compute)?;
        let shape = broadcast_all(&[&self.shape(), &t1.shape(), &t2.shape()])?;
        addc_value(self, t1, t2, value, div, sig, &shape)
    }

    fn addc_(&self, t1: &Tensor, t2: &Tensor, value: Scalar, div: bool) -> Result<()> {
        let name = if div { "addcdiv_" } else { "addcmul_" };
        let moved = Tensor::align_to(name, self.device(), &[Some(t1), Some(t2)])?;
        let (t1, t2) = (t1.or_moved(&moved, 0), t2.or_moved(&moved, 1));
        let shape = broadcast_all(&[&self.shape(), &t1.shape(), &t2.shape()])?;
        inplace_shape(&self.shape(), &shape)?;
        let sig = typing::addc_inplace(div, otype(self), otype(t1), otype(t2), default_dtype())?;
        check_fill_value(value, sig.compute)?;
        self.check_destination(Some(t1))?;
        self.check_destination(Some(t2))?;
        let v = addc_value(self, t1, t2, value, div, sig, &shape)?;
        self.assign(&v)
    }

    /// `self + value * t1 * t2`, all three tensors broadcast and promoted together;
    /// `value` is converted to the compute dtype (truncated for integers; an overflow
    /// is PyTorch's "value cannot be converted" error). No bool kernel.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1i64, 1], &[2]).unwrap();
    /// let a = Tensor::from_vec(vec![2i64, 3], &[2]).unwrap();
    /// assert_eq!(x.addcmul(&a, &a, 2).unwrap().to_vec::<i64>().unwrap(), vec![9, 19]);
    /// ```
    pub fn addcmul(&self, t1: &Tensor, t2: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        self.addc(t1, t2, value.into(), false)
    }

    /// `self + value * t1 / t2` (true division); two integral `t1`/`t2` are refused
    /// with PyTorch's message.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
    /// let a = Tensor::from_vec(vec![3.0f32], &[1]).unwrap();
    /// let b = Tensor::from_vec(vec![2i32], &[1]).unwrap();
    /// assert_eq!(x.addcdiv(&a, &b, 2).unwrap().to_vec::<f32>().unwrap(), vec![4.0]);
    /// assert!(x.addcdiv(&b, &b, 1).is_err());
    /// ```
    pub fn addcdiv(&self, t1: &Tensor, t2: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        self.addc(t1, t2, value.into(), true)
    }

    /// In-place [`Tensor::addcmul`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 1.0], &[2]).unwrap();
    /// let a = Tensor::from_vec(vec![2.0f32], &[1]).unwrap();
    /// x.addcmul_(&a, &a, 0.5).unwrap();
    /// assert_eq!(x.to_vec::<f32>().unwrap(), vec![3.0, 3.0]);
    /// ```
    pub fn addcmul_(&self, t1: &Tensor, t2: &Tensor, value: impl Into<Scalar>) -> Result<()> {
        self.addc_(t1, t2, value.into(), false)
    }

    /// In-place [`Tensor::addcdiv`].
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f64], &[1]).unwrap();
    /// let a = Tensor::from_vec(vec![1.0f64], &[1]).unwrap();
    /// x.addcdiv_(&a, &Tensor::from_vec(vec![4.0f64], &[1]).unwrap(), 1).unwrap();
    /// assert_eq!(x.to_vec::<f64>().unwrap(), vec![1.25]);
    /// let i = Tensor::zeros(&[1], DType::I32);
    /// assert!(i.addcdiv_(&a, &a, 1).is_err()); // float result into int
    /// ```
    pub fn addcdiv_(&self, t1: &Tensor, t2: &Tensor, value: impl Into<Scalar>) -> Result<()> {
        self.addc_(t1, t2, value.into(), true)
    }

    /// `value` where `mask` is true, else `self`; `mask` (bool only) broadcasts with
    /// `self`. `value` is a host scalar or a zero-dim tensor (whose value is read, as
    /// PyTorch's `.item()` does: that realizes it), converted to this dtype with
    /// PyTorch's overflow check.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    /// let m = Tensor::from_vec(vec![true, false, true], &[3]).unwrap();
    /// assert_eq!(x.masked_fill(&m, -1).unwrap().to_vec::<f32>().unwrap(), vec![-1.0, 2.0, -1.0]);
    /// let v = Tensor::scalar(7.5);
    /// assert_eq!(x.masked_fill(&m, &v).unwrap().to_vec::<f32>().unwrap(), vec![7.5, 2.0, 7.5]);
    /// ```
    pub fn masked_fill<'a>(&self, mask: &Tensor, value: impl Into<Operand<'a>>) -> Result<Tensor> {
        // The value is read on the host (`masked_fill_value`): any device will do.
        let moved = Tensor::align_devices("masked_fill", &[Some(self), Some(mask)])?;
        let (this, mask) = (self.or_moved(&moved, 0), mask.or_moved(&moved, 1));
        let v = masked_fill_value(this, mask, &value.into())?;
        let shape = broadcast_all(&[&this.shape(), &mask.shape()])?;
        with_store(|s| {
            let node = masked_fill_node(s, this, mask, v, &shape)?;
            Ok(Tensor::from_node(s, node))
        })
    }

    /// In-place [`Tensor::masked_fill`]; the mask must broadcast to this shape.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let base = Tensor::zeros(&[2, 2], DType::I32);
    /// let m = Tensor::from_vec(vec![false, true], &[2]).unwrap();
    /// base.masked_fill_(&m, 4).unwrap();
    /// assert_eq!(base.to_vec::<i32>().unwrap(), vec![0, 4, 0, 4]);
    /// ```
    pub fn masked_fill_<'a>(&self, mask: &Tensor, value: impl Into<Operand<'a>>) -> Result<()> {
        let shape = self.shape();
        inplace_shape(&shape, &mask.shape())?;
        let moved = Tensor::align_to("masked_fill_", self.device(), &[Some(mask)])?;
        let mask = mask.or_moved(&moved, 0);
        let v = masked_fill_value(self, mask, &value.into())?;
        self.check_destination(Some(mask))?;
        with_store(|s| {
            let node = masked_fill_node(s, self, mask, v, &shape)?;
            self.write(s, node);
            Ok(())
        })
    }

    /// `|self - other| <= atol + rtol * |other|` elementwise (bool), with equal values
    /// (infinities included) always close and NaN close to NaN only with
    /// `equal_nan` (floating dtypes). Both tensors must have one dtype; integers are
    /// compared in the default float dtype (PyTorch's composite, step by step).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, f32::NAN, f32::INFINITY], &[3]).unwrap();
    /// let b = Tensor::from_vec(vec![1.000001f32, f32::NAN, f32::INFINITY], &[3]).unwrap();
    /// let c = a.isclose(&b, 1e-5, 1e-8, false).unwrap();
    /// assert_eq!(c.to_vec::<bool>().unwrap(), vec![true, false, true]);
    /// let c = a.isclose(&b, 1e-5, 1e-8, true).unwrap();
    /// assert_eq!(c.to_vec::<bool>().unwrap(), vec![true, true, true]);
    /// ```
    pub fn isclose(&self, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<Tensor> {
        typing::isclose(self.dtype(), other.dtype(), rtol, atol)?;
        let mut close = self.eq(other)?;
        if equal_nan && self.dtype().is_floating_point() {
            let both_nan = self.ne(self)?.bitwise_and(&other.ne(other)?)?;
            close = close.bitwise_or(&both_nan)?;
        }
        if rtol == 0.0 && atol == 0.0 {
            return Ok(close);
        }
        let integral = self.dtype() == DType::Bool || self.dtype().is_integer();
        let cast_self = if self.dtype() == DType::Bool {
            self.to_dtype(default_dtype())?
        } else {
            self.clone()
        };
        let cast_other = if integral {
            other.to_dtype(default_dtype())?
        } else {
            other.clone()
        };
        let allowed = Tensor::binary(
            BinaryOp::Add,
            atol,
            &Tensor::binary(BinaryOp::Mul, rtol, &cast_other)?.abs()?,
        )?;
        let actual = cast_self.sub(&cast_other)?.abs()?;
        // isfinite(actual): actual is real (abs), NaN or +inf are the non-finite cases.
        let finite = actual
            .eq(&actual)?
            .bitwise_and(&actual.ne(f64::INFINITY)?)?;
        let within = finite.bitwise_and(&actual.le(&allowed)?)?;
        close.bitwise_or(&within)
    }
}
