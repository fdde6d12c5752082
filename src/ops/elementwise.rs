//! Elementwise ops: binary arithmetic, comparisons, logical and bitwise ops, unary
//! math, `where`, `clamp` and dtype conversion.
//!
//! Each op asks `lazyfuse_ir::typing` for its signature (compute and output dtypes,
//! PyTorch's refusals), broadcasts the shapes, and records one node whose inputs are
//! already cast and expanded. Value checks PyTorch makes on host scalars (integer
//! division by a zero scalar, integer powers with a negative scalar) happen here too.

use crate::autograd::record::Custom;
use crate::default_dtype;
use crate::error::Result;
use crate::memory_format;
use crate::operand::{operand_node, Operand};
use crate::ops::signature_memo;
use crate::store::with_store;
use crate::tensor::Tensor;
use lazyfuse_ir::broadcast::{broadcast_all, broadcast_shapes};
use lazyfuse_ir::promote::{result_type, OperandType};
use lazyfuse_ir::{typing, BinaryOp, DType, Error as IrError, NodeId, Op, Scalar, UnaryOp};

/// How `div_mode` rounds the quotient.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoundingMode {
    /// Toward negative infinity (Python `//`).
    Floor,
    /// Toward zero (C division).
    Trunc,
}

/// Refusals PyTorch makes by looking at a host scalar's value.
pub(crate) fn check_scalar_value(op: BinaryOp, compute: DType, b: &Operand) -> Result<()> {
    let Operand::Scalar(s) = b else { return Ok(()) };
    let integral = compute.is_integer() || compute == DType::Bool;
    let divides = matches!(
        op,
        BinaryOp::DivFloor | BinaryOp::DivTrunc | BinaryOp::Remainder | BinaryOp::Fmod
    );
    if integral && divides && s.is_zero() {
        return Err(IrError::ZeroDivision.into());
    }
    if op == BinaryOp::Pow && integral {
        if let Scalar::Int(e) = s {
            if *e < 0 {
                return Err(IrError::invalid(
                    "pow",
                    "Integers to negative integer powers are not allowed.",
                )
                .into());
            }
        }
    }
    Ok(())
}

/// Clips an integer bound into the range of an integer dtype.
fn saturate(bound: Option<Scalar>, dtype: DType) -> Option<Scalar> {
    match (bound, dtype.integer_range()) {
        (Some(Scalar::Int(v)), Some((lo, hi))) => Some(Scalar::Int(
            (v as i128).clamp(lo, hi.min(i64::MAX.into())) as i64,
        )),
        (other, _) => other,
    }
}

/// A shape as the `isize` dims that `expand` and `view` take.
pub(crate) fn to_isize(shape: &[usize]) -> Vec<isize> {
    shape.iter().map(|&s| s as isize).collect()
}

/// The strides PyTorch gives the result of an elementwise op of `shape` over
/// `operands` (a host scalar is a 0-dim operand), each with the dtype PyTorch reads it
/// in: an operand of another dtype is converted first, as PyTorch copies it. `None` is
/// row-major, the answer whenever every operand is row-major (checked first: it is
/// the common case).
// (inline, so that its common answer is a constant: returned from a call,
// the `None` is one word stored and read back by a wider load of the whole
// option, which waits for the store to land)
#[inline]
pub(crate) fn result_strides(
    shape: &[usize],
    operands: &[(&Operand, DType)],
) -> Option<Vec<isize>> {
    if operands
        .iter()
        .filter_map(|(o, _)| o.tensor())
        .all(|t| memory_format::is_row_major(&t.0.layout.shape, &t.0.layout.strides))
    {
        return None;
    }
    strides_of_mixed(shape, operands)
}

/// [`result_strides`] where some operand is not row-major.
#[inline(never)]
fn strides_of_mixed(shape: &[usize], operands: &[(&Operand, DType)]) -> Option<Vec<isize>> {
    let geometry: Vec<memory_format::Operand> = operands
        .iter()
        .map(|(o, dtype)| match o.tensor() {
            Some(t) => memory_format::Operand {
                shape: &t.0.layout.shape,
                strides: &t.0.layout.strides,
                converted: t.dtype() != *dtype,
            },
            None => memory_format::Operand {
                shape: &[],
                strides: &[],
                converted: false,
            },
        })
        .collect();
    memory_format::elementwise_strides(shape, &geometry)
}

/// What PyTorch computes instead of the `pow` kernel when a host scalar makes the
/// answer trivial: an exponent of 0 gives ones, an exponent of 1 the base, a base of 1
/// ones (so `bool_tensor ** False` succeeds although no bool `pow` kernel exists);
/// and on a real floating-point result, PyTorch's `pow_tensor_scalar_kernel`
/// short cuts: an exponent of 2 the base times itself (every float dtype: the
/// correctly rounded square), and, for float32, float64 and bfloat16 (float16
/// takes `pow` itself there), 0.5 its `sqrt`, -0.5 its `rsqrt`, -1 its
/// `reciprocal`, 3 `x · x · x` and -2 `1 / (x · x)`, each product rounded to
/// the dtype. Each is a node of the op, which every backend runs as an
/// instruction or two where `pow` calls the math library per element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PowShortcut {
    Ones,
    Base,
    Square,
    Sqrt,
    Rsqrt,
    Reciprocal,
    Cube,
    InverseSquare,
}

impl PowShortcut {
    /// Whether the short cut gives a result of `dtype` (the square: real
    /// floating point only; the others: float32, float64 and bfloat16).
    pub(crate) fn applies_to(self, dtype: DType) -> bool {
        use PowShortcut::*;
        match self {
            Square => matches!(dtype, DType::F16 | DType::BF16 | DType::F32 | DType::F64),
            Sqrt | Rsqrt | Reciprocal | Cube | InverseSquare => {
                matches!(dtype, DType::BF16 | DType::F32 | DType::F64)
            }
            Ones | Base => !matches!(dtype, DType::C32 | DType::BC32) && !dtype.is_float8(),
        }
    }
}

pub(crate) fn pow_shortcut(op: BinaryOp, a: &Operand, b: &Operand) -> Option<PowShortcut> {
    if op != BinaryOp::Pow {
        return None;
    }
    let is = |o: &Operand, v: f64| matches!(o, Operand::Scalar(s) if scalar_equals(*s, v));
    let exponent = [
        (2.0, PowShortcut::Square),
        (0.5, PowShortcut::Sqrt),
        (-0.5, PowShortcut::Rsqrt),
        (-1.0, PowShortcut::Reciprocal),
        (3.0, PowShortcut::Cube),
        (-2.0, PowShortcut::InverseSquare),
    ];
    if is(b, 0.0) || is(a, 1.0) {
        Some(PowShortcut::Ones)
    } else if is(b, 1.0) {
        Some(PowShortcut::Base)
    } else {
        exponent
            .into_iter()
            .find_map(|(e, shortcut)| is(b, e).then_some(shortcut))
    }
}

fn scalar_equals(s: Scalar, v: f64) -> bool {
    match s {
        Scalar::Complex(re, im) => re == v && im == 0.0,
        other => other.to_f64() == v,
    }
}

/// The node for `pow` taken by a short cut, of `dtype` and `shape`.
pub(crate) fn pow_shortcut_node(
    store: &mut crate::store::Store,
    shortcut: PowShortcut,
    base: &Operand,
    dtype: DType,
    shape: &[usize],
) -> Result<NodeId> {
    match shortcut {
        PowShortcut::Ones => {
            // A constant result stays on the base's device.
            let ones = store.add(Op::Full(Scalar::Int(1)), dtype, shape, &[]);
            if let Some(t) = base.tensor() {
                store.set_device(ones, t.device());
            }
            Ok(ones)
        }
        PowShortcut::Base => operand_node(store, base, dtype, shape),
        PowShortcut::Square
        | PowShortcut::Sqrt
        | PowShortcut::Rsqrt
        | PowShortcut::Reciprocal
        | PowShortcut::Cube
        | PowShortcut::InverseSquare => {
            let x = operand_node(store, base, dtype, shape)?;
            let mut unary = |op: UnaryOp, x: NodeId| store.add(Op::Unary(op), dtype, shape, &[x]);
            Ok(match shortcut {
                PowShortcut::Sqrt => unary(UnaryOp::Sqrt, x),
                PowShortcut::Rsqrt => unary(UnaryOp::Rsqrt, x),
                PowShortcut::Reciprocal => unary(UnaryOp::Reciprocal, x),
                PowShortcut::InverseSquare => {
                    let sq = unary(UnaryOp::Square, x);
                    unary(UnaryOp::Reciprocal, sq)
                }
                PowShortcut::Cube => {
                    let sq = unary(UnaryOp::Square, x);
                    store.add(Op::Binary(BinaryOp::Mul), dtype, shape, &[sq, x])
                }
                _ => unary(UnaryOp::Square, x),
            })
        }
    }
}

/// PyTorch computes `eq`/`ne` of a float16/bfloat16 tensor and a complex host scalar
/// in complex32/bcomplex32. Widening both sides to complex64 gives the same answer,
/// once a host scalar's parts are rounded to the half type as PyTorch's conversion does.
fn widen_half_complex(op: BinaryOp, compute: DType, operand: Operand) -> (DType, Operand) {
    let round: fn(f64) -> f64 = match compute {
        DType::C32 => |x| half::f16::from_f64(x).to_f64(),
        DType::BC32 => |x| half::bf16::from_f64(x).to_f64(),
        _ => return (compute, operand),
    };
    if !matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
        return (compute, operand);
    }
    let operand = match operand {
        Operand::Scalar(s) => {
            let (re, im) = match s {
                Scalar::Complex(re, im) => (re, im),
                other => (other.to_f64(), 0.0),
            };
            Operand::Scalar(Scalar::Complex(round(re), round(im)))
        }
        tensor => tensor,
    };
    (DType::C64, operand)
}

/// Records `a op b` with PyTorch's promotion and broadcasting; either operand may be
/// a host scalar, not both.
pub(crate) fn binary_op(op: BinaryOp, a: Operand, b: Operand) -> Result<Tensor> {
    if let (Operand::Scalar(x), Operand::Scalar(_)) = (&a, &b) {
        // PyTorch's add, sub, mul and div (and floor_divide) take two numbers: the
        // first becomes a zero-dim tensor of its number's dtype, so two wrapped
        // numbers promote as PyTorch's (`add(5, 5)` is an int64 zero-dim tensor,
        // `add(5, 2.5)` float32, `div(5, 2)` float32). Its other ops take none.
        use BinaryOp::*;
        if matches!(op, Add | Sub | Mul | Div | DivFloor | DivTrunc) {
            let first = Tensor::scalar(*x);
            return binary_op(op, Operand::Tensor(&first), b);
        }
        return Err(
            IrError::invalid(op_name(op), "expected at least one operand to be a tensor").into(),
        );
    }
    let operands = [a.tensor(), b.tensor()];
    // The op's name is made only when a device is checked: this path is per op.
    let moved = if Tensor::all_on_cpu(&operands) {
        Vec::new()
    } else {
        Tensor::align_devices(&op_name(op), &operands)?
    };
    let (a, b) = (a.or_moved(&moved, 0), b.or_moved(&moved, 1));
    for t in operands.iter().flatten() {
        t.check_size()?;
    }
    let shape = broadcast_shapes(a.shape(), b.shape())?;
    if let Some(shortcut) = pow_shortcut(op, &a, &b) {
        let dtype = result_type(&[a.operand_type(), b.operand_type()], default_dtype())?;
        if shortcut.applies_to(dtype) {
            return with_store(|s| {
                let node = pow_shortcut_node(s, shortcut, &a, dtype, &shape)?;
                Ok(Tensor::from_node(s, node))
            });
        }
    }
    let key = signature_memo::Key {
        op,
        a: a.operand_type(),
        b: b.operand_type(),
        default: default_dtype(),
    };
    let (common, sig) = match key.get() {
        Some(kept) => kept,
        None => {
            let common = result_type(&[key.a, key.b], key.default)?;
            if common.is_float8() {
                if let Some(r) = crate::ops::float8::binary(op, &a, &b, common, &shape) {
                    return r;
                }
            }
            let sig = typing::binary(op, key.a, key.b, key.default)?;
            key.put(common, sig);
            (common, sig)
        }
    };
    check_scalar_value(op, sig.compute, &b)?;
    if sig.compute == DType::C32 {
        return crate::ops::complex32::binary(op, &a, &b, sig, &shape);
    }
    let (compute, a) = widen_half_complex(op, sig.compute, a);
    let (_, b) = widen_half_complex(op, sig.compute, b);
    let strides = result_strides(&shape, &[(&a, common), (&b, common)]);
    with_store(|s| {
        let na = operand_node(s, &a, compute, &shape)?;
        let nb = operand_node(s, &b, compute, &shape)?;
        let node = s.add(Op::Binary(op), sig.output, shape, &[na, nb]);
        Ok(Tensor::from_node_strided(s, node, strides))
    })
}

fn op_name(op: BinaryOp) -> String {
    Op::Binary(op).name()
}

pub(crate) fn unary_op(t: &Tensor, op: UnaryOp) -> Result<Tensor> {
    t.check_size()?;
    if t.dtype().is_float8() {
        if let Some(r) = crate::ops::float8::unary(t, op) {
            return r;
        }
    }
    let sig = typing::unary(op, t.dtype(), default_dtype())?;
    if sig.compute == DType::C32 {
        return crate::ops::complex32::unary(t, op, sig);
    }
    let shape = &t.0.layout.shape;
    let strides = result_strides(shape, &[(&Operand::Tensor(t), unary_common(t, sig.output))]);
    with_store(|s| {
        let input = t.node_as(s, sig.compute, shape)?;
        let node = s.add(Op::Unary(op), sig.output, shape, &[input]);
        Ok(Tensor::from_node_strided(s, node, strides))
    })
}

/// The dtype PyTorch converts a unary op's input to: the output's when an integer
/// or bool input gives a float result (`exp` of int), else the input's own.
pub(crate) fn unary_common(t: &Tensor, output: DType) -> DType {
    let integral = t.dtype().is_integer() || t.dtype() == DType::Bool;
    if integral && (output.is_floating_point() || output.is_complex()) {
        output
    } else {
        t.dtype()
    }
}

macro_rules! binary_methods {
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

binary_methods! {
    /// `self + other` with PyTorch's promotion and broadcasting.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::ones(&[2, 1], DType::I32);
    /// let b = Tensor::ones(&[3], DType::F16);
    /// let c = a.add(&b).unwrap();
    /// assert_eq!((c.shape(), c.dtype()), (vec![2, 3], DType::F16));
    /// ```
    add => Add;
    /// `self - other` (refused for bool operands, as in PyTorch).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::from_vec(vec![5u8, 1], &[2]).unwrap();
    /// assert_eq!(a.sub(2).unwrap().to_vec::<u8>().unwrap(), vec![3, 255]); // wraps
    /// assert!(Tensor::ones(&[1], DType::Bool).sub(true).is_err());
    /// ```
    sub => Sub;
    /// `self * other`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let m = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap().mul(1.5).unwrap();
    /// assert_eq!((m.dtype(), m.to_vec::<f32>().unwrap()), (DType::F32, vec![1.5, 3.0]));
    /// ```
    mul => Mul;
    /// True division: integer operands give the default float dtype.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let q = Tensor::from_vec(vec![7i64, -7], &[2]).unwrap().div(2).unwrap();
    /// assert_eq!(q.to_vec::<f32>().unwrap(), vec![3.5, -3.5]);
    /// ```
    div => Div;
    /// `floor(self / other)` (Python `//`).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![7i64, -7], &[2]).unwrap();
    /// assert_eq!(a.floor_divide(2).unwrap().to_vec::<i64>().unwrap(), vec![3, -4]);
    /// assert!(a.floor_divide(0).is_err()); // ZeroDivisionError
    /// ```
    floor_divide => DivFloor;
    /// Python modulo: the result has the sign of `other`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![-3i32, 3], &[2]).unwrap();
    /// assert_eq!(a.remainder(2).unwrap().to_vec::<i32>().unwrap(), vec![1, 1]);
    /// assert_eq!(a.remainder(-2).unwrap().to_vec::<i32>().unwrap(), vec![-1, -1]);
    /// ```
    remainder => Remainder;
    /// C modulo: the result has the sign of `self`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![-3i32, 3], &[2]).unwrap();
    /// assert_eq!(a.fmod(2).unwrap().to_vec::<i32>().unwrap(), vec![-1, 1]);
    /// assert_eq!(a.fmod(-2).unwrap().to_vec::<i32>().unwrap(), vec![-1, 1]);
    /// ```
    fmod => Fmod;
    /// `self ** other`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::from_vec(vec![2i64, 3], &[2]).unwrap();
    /// assert_eq!(a.pow(3).unwrap().to_vec::<i64>().unwrap(), vec![8, 27]);
    /// assert_eq!(a.pow(0.5).unwrap().dtype(), DType::F32);
    /// assert!(a.pow(-1).is_err()); // integers to negative integer powers
    /// ```
    pow => Pow;
    /// Elementwise maximum; NaN propagates.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, f32::NAN], &[2]).unwrap();
    /// let b = Tensor::from_vec(vec![2.0f32, 0.0], &[2]).unwrap();
    /// let m = a.maximum(&b).unwrap().to_vec::<f32>().unwrap();
    /// assert!(m[0] == 2.0 && m[1].is_nan());
    /// ```
    maximum => Maximum;
    /// Elementwise minimum; NaN propagates.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, f32::NAN], &[2]).unwrap();
    /// let b = Tensor::from_vec(vec![2.0f32, 0.0], &[2]).unwrap();
    /// let m = a.minimum(&b).unwrap().to_vec::<f32>().unwrap();
    /// assert!(m[0] == 1.0 && m[1].is_nan());
    /// ```
    minimum => Minimum;
    /// `atan2(self, other)`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// use std::f64::consts::{FRAC_PI_2, PI};
    /// let y = Tensor::from_vec(vec![1.0f64, 0.0], &[2]).unwrap();
    /// let x = Tensor::from_vec(vec![0.0f64, -1.0], &[2]).unwrap();
    /// assert_eq!(y.atan2(&x).unwrap().to_vec::<f64>().unwrap(), vec![FRAC_PI_2, PI]);
    /// ```
    atan2 => Atan2;
    /// `self == other` (bool).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let r = Tensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap().eq(2).unwrap();
    /// assert_eq!((r.dtype(), r.to_vec::<bool>().unwrap()), (DType::Bool, vec![false, true, false]));
    /// ```
    eq => Eq;
    /// `self != other` (bool).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, f32::NAN], &[2]).unwrap();
    /// assert_eq!(a.ne(&a).unwrap().to_vec::<bool>().unwrap(), vec![false, true]);
    /// ```
    ne => Ne;
    /// `self < other` (bool).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
    /// assert_eq!(a.lt(2).unwrap().to_vec::<bool>().unwrap(), vec![true, false, false]);
    /// ```
    lt => Lt;
    /// `self <= other` (bool).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
    /// assert_eq!(a.le(2).unwrap().to_vec::<bool>().unwrap(), vec![true, true, false]);
    /// ```
    le => Le;
    /// `self > other` (bool).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0, f32::NAN], &[3]).unwrap();
    /// assert_eq!(a.gt(1).unwrap().to_vec::<bool>().unwrap(), vec![false, true, false]);
    /// ```
    gt => Gt;
    /// `self >= other` (bool).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1u8, 2], &[2]).unwrap();
    /// assert_eq!(a.ge(1.5).unwrap().to_vec::<bool>().unwrap(), vec![false, true]);
    /// ```
    ge => Ge;
    /// Logical and of truth values (bool).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32, 2.0, -1.0], &[3]).unwrap();
    /// let b = Tensor::from_vec(vec![1i32, 0, 3], &[3]).unwrap();
    /// assert_eq!(a.logical_and(&b).unwrap().to_vec::<bool>().unwrap(), vec![false, false, true]);
    /// ```
    logical_and => LogicalAnd;
    /// Logical or of truth values (bool).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32, 2.0, 0.0], &[3]).unwrap();
    /// let b = Tensor::from_vec(vec![0i32, 0, 3], &[3]).unwrap();
    /// assert_eq!(a.logical_or(&b).unwrap().to_vec::<bool>().unwrap(), vec![false, true, true]);
    /// ```
    logical_or => LogicalOr;
    /// Logical xor of truth values (bool).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32, 2.0, -1.0], &[3]).unwrap();
    /// let b = Tensor::from_vec(vec![1i32, 0, 3], &[3]).unwrap();
    /// assert_eq!(a.logical_xor(&b).unwrap().to_vec::<bool>().unwrap(), vec![true, true, false]);
    /// ```
    logical_xor => LogicalXor;
    /// Bitwise and (logical for bool); refused for floats.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::from_vec(vec![12i32, -1], &[2]).unwrap();
    /// assert_eq!(a.bitwise_and(10).unwrap().to_vec::<i32>().unwrap(), vec![8, 10]);
    /// assert!(Tensor::ones(&[1], DType::F32).bitwise_and(1).is_err());
    /// ```
    bitwise_and => BitwiseAnd;
    /// Bitwise or (logical for bool); refused for floats.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![12i32, -1], &[2]).unwrap();
    /// assert_eq!(a.bitwise_or(3).unwrap().to_vec::<i32>().unwrap(), vec![15, -1]);
    /// ```
    bitwise_or => BitwiseOr;
    /// Bitwise xor (logical for bool); refused for floats.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![12i32, -1], &[2]).unwrap();
    /// assert_eq!(a.bitwise_xor(10).unwrap().to_vec::<i32>().unwrap(), vec![6, -11]);
    /// let b = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    /// assert_eq!(b.bitwise_xor(true).unwrap().to_vec::<bool>().unwrap(), vec![false, true]);
    /// ```
    bitwise_xor => BitwiseXor;
}

macro_rules! unary_methods {
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

unary_methods! {
    /// `-self` (integers wrap; refused for bool).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::from_vec(vec![i8::MIN, 5], &[2]).unwrap();
    /// assert_eq!(a.neg().unwrap().to_vec::<i8>().unwrap(), vec![i8::MIN, -5]); // wraps
    /// assert!(Tensor::ones(&[1], DType::Bool).neg().is_err());
    /// ```
    neg => Neg;
    /// `|self|`; complex gives the (real) modulus.
    ///
    /// ```
    /// use lazyfuse::{Complex, DType, Tensor};
    /// let z = Tensor::from_vec(vec![Complex::new(3.0f32, -4.0)], &[1]).unwrap().abs().unwrap();
    /// assert_eq!((z.dtype(), z.to_vec::<f32>().unwrap()), (DType::F32, vec![5.0]));
    /// let i = Tensor::from_vec(vec![-3i64], &[1]).unwrap().abs().unwrap();
    /// assert_eq!(i.to_vec::<i64>().unwrap(), vec![3]);
    /// ```
    abs => Abs;
    /// `-1`, `0` or `1`; refused for complex.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let s = Tensor::from_vec(vec![-2.5f32, 0.0, 7.0], &[3]).unwrap().sign().unwrap();
    /// assert_eq!(s.to_vec::<f32>().unwrap(), vec![-1.0, 0.0, 1.0]);
    /// assert!(Tensor::zeros(&[1], DType::C64).sign().is_err());
    /// ```
    sign => Sign;
    /// `e^self`; integers give the default float dtype.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let e = Tensor::zeros(&[1], DType::I32).exp().unwrap();
    /// assert_eq!((e.dtype(), e.to_vec::<f32>().unwrap()), (DType::F32, vec![1.0]));
    /// ```
    exp => Exp;
    /// Natural logarithm.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f64, 0.0, -1.0], &[3]).unwrap().log().unwrap();
    /// let v = t.to_vec::<f64>().unwrap();
    /// assert_eq!(&v[..2], &[0.0, f64::NEG_INFINITY]);
    /// assert!(v[2].is_nan());
    /// ```
    log => Log;
    /// Square root.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::from_vec(vec![4i32, 9], &[2]).unwrap().sqrt().unwrap();
    /// assert_eq!((t.dtype(), t.to_vec::<f32>().unwrap()), (DType::F32, vec![2.0, 3.0]));
    /// ```
    sqrt => Sqrt;
    /// `1 / sqrt(self)`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![4.0f32, 0.0], &[2]).unwrap().rsqrt().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.5, f32::INFINITY]);
    /// ```
    rsqrt => Rsqrt;
    /// Sine.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f64, std::f64::consts::FRAC_PI_2], &[2]).unwrap();
    /// assert_eq!(t.sin().unwrap().to_vec::<f64>().unwrap(), vec![0.0, 1.0]);
    /// ```
    sin => Sin;
    /// Cosine.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f64, std::f64::consts::PI], &[2]).unwrap();
    /// assert_eq!(t.cos().unwrap().to_vec::<f64>().unwrap(), vec![1.0, -1.0]);
    /// ```
    cos => Cos;
    /// Hyperbolic tangent.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32, f32::INFINITY, f32::NEG_INFINITY], &[3]).unwrap();
    /// assert_eq!(t.tanh().unwrap().to_vec::<f32>().unwrap(), vec![0.0, 1.0, -1.0]);
    /// ```
    tanh => Tanh;
    /// Logistic sigmoid.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32, f32::INFINITY, f32::NEG_INFINITY], &[3]).unwrap();
    /// assert_eq!(t.sigmoid().unwrap().to_vec::<f32>().unwrap(), vec![0.5, 1.0, 0.0]);
    /// ```
    sigmoid => Sigmoid;
    /// `max(self, 0)`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-1i32, 0, 3], &[3]).unwrap();
    /// assert_eq!(t.relu().unwrap().to_vec::<i32>().unwrap(), vec![0, 0, 3]);
    /// ```
    relu => Relu;
    /// Round toward negative infinity.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-1.5f32, 1.5], &[2]).unwrap();
    /// assert_eq!(t.floor().unwrap().to_vec::<f32>().unwrap(), vec![-2.0, 1.0]);
    /// ```
    floor => Floor;
    /// Round toward positive infinity.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-1.5f32, 1.5], &[2]).unwrap();
    /// assert_eq!(t.ceil().unwrap().to_vec::<f32>().unwrap(), vec![-1.0, 2.0]);
    /// ```
    ceil => Ceil;
    /// Round half to even.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.5f32, 1.5, 2.5, -2.5], &[4]).unwrap();
    /// assert_eq!(t.round().unwrap().to_vec::<f32>().unwrap(), vec![0.0, 2.0, 2.0, -2.0]);
    /// ```
    round => Round;
    /// Round toward zero.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-1.7f32, 1.7], &[2]).unwrap();
    /// assert_eq!(t.trunc().unwrap().to_vec::<f32>().unwrap(), vec![-1.0, 1.0]);
    /// ```
    trunc => Trunc;
    /// `1 / self`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::from_vec(vec![2i32, 0], &[2]).unwrap().reciprocal().unwrap();
    /// assert_eq!((t.dtype(), t.to_vec::<f32>().unwrap()), (DType::F32, vec![0.5, f32::INFINITY]));
    /// ```
    reciprocal => Reciprocal;
    /// `self == 0` (bool).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32, 2.0, f32::NAN], &[3]).unwrap();
    /// assert_eq!(t.logical_not().unwrap().to_vec::<bool>().unwrap(), vec![true, false, false]);
    /// ```
    logical_not => LogicalNot;
    /// Bitwise not (logical not for bool); refused for floats.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::from_vec(vec![0i32, 5], &[2]).unwrap();
    /// assert_eq!(t.bitwise_not().unwrap().to_vec::<i32>().unwrap(), vec![-1, -6]);
    /// let b = Tensor::from_vec(vec![true], &[1]).unwrap();
    /// assert_eq!(b.bitwise_not().unwrap().to_vec::<bool>().unwrap(), vec![false]);
    /// assert!(Tensor::zeros(&[1], DType::F32).bitwise_not().is_err());
    /// ```
    bitwise_not => BitwiseNot;
    /// `self != self` (bool).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32, f32::NAN, f32::INFINITY], &[3]).unwrap();
    /// assert_eq!(t.isnan().unwrap().to_vec::<bool>().unwrap(), vec![false, true, false]);
    /// ```
    isnan => IsNan;
}

impl Tensor {
    /// `a op b` for any two operands of which at least one is a tensor: the form
    /// behind Python's reflected operators (`2 - t` is `binary(Sub, 2, &t)`,
    /// `2 ** t` is `binary(Pow, 2, &t)`), with the same promotion as the methods.
    ///
    /// ```
    /// use lazyfuse::{BinaryOp, DType, Tensor};
    /// let t = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    /// let r = Tensor::binary(BinaryOp::Sub, 10, &t).unwrap();
    /// assert_eq!(r.to_vec::<i32>().unwrap(), vec![9, 8]);
    /// let p = Tensor::binary(BinaryOp::Pow, 2.0, &t).unwrap();
    /// assert_eq!((p.dtype(), p.to_vec::<f32>().unwrap()), (DType::F32, vec![2.0, 4.0]));
    /// ```
    pub fn binary<'a, 'b>(
        op: BinaryOp,
        a: impl Into<Operand<'a>>,
        b: impl Into<Operand<'b>>,
    ) -> Result<Tensor> {
        binary_op(op, a.into(), b.into())
    }

    /// Division with a rounding mode.
    ///
    /// ```
    /// use lazyfuse::{RoundingMode, Tensor};
    /// let a = Tensor::from_vec(vec![-7i32, 7], &[2]).unwrap();
    /// assert_eq!(a.div_mode(2, RoundingMode::Floor).unwrap().to_vec::<i32>().unwrap(), vec![-4, 3]);
    /// assert_eq!(a.div_mode(2, RoundingMode::Trunc).unwrap().to_vec::<i32>().unwrap(), vec![-3, 3]);
    /// ```
    pub fn div_mode<'a>(
        &self,
        other: impl Into<Operand<'a>>,
        mode: RoundingMode,
    ) -> Result<Tensor> {
        let op = match mode {
            RoundingMode::Floor => BinaryOp::DivFloor,
            RoundingMode::Trunc => BinaryOp::DivTrunc,
        };
        binary_op(op, Operand::Tensor(self), other.into())
    }

    /// Elements of `a` where `cond` is true, else of `b`; all three broadcast.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let c = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    /// let w = Tensor::where_cond(&c, 1, 2.5).unwrap();
    /// assert_eq!(w.to_vec::<f32>().unwrap(), vec![1.0, 2.5]);
    /// ```
    pub fn where_cond<'a, 'b>(
        cond: &Tensor,
        a: impl Into<Operand<'a>>,
        b: impl Into<Operand<'b>>,
    ) -> Result<Tensor> {
        let (a, b) = (a.into(), b.into());
        if cond.dtype() != DType::Bool {
            return Err(IrError::invalid(
                "where",
                format!("where expected condition to be a boolean tensor, but got a tensor with dtype {}", cond.dtype().torch_name()),
            )
            .into());
        }
        let moved = Tensor::align_devices("where", &[Some(cond), a.tensor(), b.tensor()])?;
        let cond = cond.or_moved(&moved, 0);
        let (a, b) = (a.or_moved(&moved, 1), b.or_moved(&moved, 2));
        let dtype = typing::where_(a.operand_type(), b.operand_type(), default_dtype())?;
        let shape = broadcast_all(&[&cond.shape(), a.shape(), b.shape()])?;
        // the values are converted to the result's dtype; the condition stays bool
        let c = Operand::Tensor(cond);
        let strides = result_strides(&shape, &[(&c, DType::Bool), (&a, dtype), (&b, dtype)]);
        // half-complex values are selected as complex64 ones (exactly: they round back)
        let select = if matches!(dtype, DType::C32 | DType::BC32) {
            DType::C64
        } else {
            dtype
        };
        with_store(|s| {
            let nc = cond.node_as(s, DType::Bool, &shape)?;
            let na = operand_node(s, &a, dtype, &shape)?;
            let na = s.cast_node(na, select);
            let nb = operand_node(s, &b, dtype, &shape)?;
            let nb = s.cast_node(nb, select);
            let node = s.add(Op::Where, select, shape, &[nc, na, nb]);
            let node = s.cast_node(node, dtype);
            Ok(Tensor::from_node_strided(s, node, strides))
        })
    }

    /// Clamps into `[min, max]` (either bound may be absent). The result dtype
    /// promotes the tensor with the bounds as scalars; if `min > max` every element
    /// becomes `max`; NaN stays NaN.
    ///
    /// ```
    /// use lazyfuse::{Scalar, Tensor};
    /// let t = Tensor::from_vec(vec![-2i64, 0, 5], &[3]).unwrap();
    /// let c = t.clamp(Some(Scalar::Int(-1)), Some(Scalar::Float(2.5))).unwrap();
    /// assert_eq!(c.to_vec::<f32>().unwrap(), vec![-1.0, 0.0, 2.5]);
    /// ```
    pub fn clamp(&self, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
        let wrapped = |b: Option<Scalar>| b.map(|v| OperandType::wrapped(v.wrapped_dtype()));
        let sig = typing::clamp(
            Operand::Tensor(self).operand_type(),
            wrapped(min),
            wrapped(max),
            default_dtype(),
        )?;
        let dtype = sig.output;
        // An integer bound outside the dtype's range acts as the range's end (PyTorch
        // compares with the bound's value: `uint8.clamp(min=-3)` changes nothing).
        let (min, max) = (saturate(min, dtype), saturate(max, dtype));
        let shape = self.shape();
        let strides = result_strides(&shape, &[(&Operand::Tensor(self), dtype)]);
        with_store(|s| {
            let x = self.node_as(s, dtype, &shape)?;
            let mut node = x;
            for (bound, op) in [(min, BinaryOp::Maximum), (max, BinaryOp::Minimum)] {
                if let Some(v) = bound {
                    let b = operand_node(s, &Operand::Scalar(v), dtype, &shape)?;
                    node = s.add(Op::Binary(op), dtype, shape.clone(), &[node, b]);
                }
            }
            let custom = Custom::Clamp {
                min: min.map(Scalar::to_f64),
                max: max.map(Scalar::to_f64),
            };
            s.custom_rule(node, custom, vec![x]);
            Ok(Tensor::from_node_strided(s, node, strides))
        })
    }

    /// Converts to `dtype` (PyTorch's `.to(dtype)`): floats truncate toward zero into
    /// integers, integers wrap, nonzero becomes `true`, complex drops the imaginary
    /// part. Converting to the same dtype returns this tensor itself (aliasing).
    ///
    /// The float8 dtypes convert both ways, always through `float32` (c10's `Float8_*`
    /// types only convert to and from `float`): encoding rounds to nearest even, and
    /// overflow gives NaN (`e4m3fn`, the `fnuz` formats) or infinity (`e5m2`).
    /// `complex32` and `bcomplex32` round each part to the half type.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::from_vec(vec![-1.7f32, 300.0], &[2]).unwrap();
    /// assert_eq!(t.to_dtype(DType::I32).unwrap().to_vec::<i32>().unwrap(), vec![-1, 300]);
    /// assert_eq!(t.to_dtype(DType::Bool).unwrap().to_vec::<bool>().unwrap(), vec![true, true]);
    /// let f8 = t.to_dtype(DType::F8E4M3FN).unwrap(); // -1.7 → -1.75, 300 → 288
    /// assert_eq!(f8.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap(), vec![-1.75, 288.0]);
    /// ```
    pub fn to_dtype(&self, dtype: DType) -> Result<Tensor> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        if self.dtype() == DType::F4E2M1FNX2 || dtype == DType::F4E2M1FNX2 {
            // PyTorch 2.15 converts float4 to and from nothing (view(dtype) reads its
            // bytes)
            return Err(IrError::not_implemented("copy_kernel", DType::F4E2M1FNX2).into());
        }
        // `preserve_format`, as PyTorch's `to`
        let layout = &self.0.layout;
        let strides = (!memory_format::is_row_major(&layout.shape, &layout.strides))
            .then(|| memory_format::preserved_strides(&layout.shape, &layout.strides));
        with_store(|s| {
            let read = self.node(s);
            let node = s.cast_node(read, dtype);
            Ok(Tensor::from_node_strided(s, node, strides))
        })
    }
}
