//! Type promotion: `torch.promote_types`, `torch.result_type` and `torch.can_cast`.
//!
//! Two dtypes promote by a fixed table ([`promote_types`]). Operands of an op promote
//! by PyTorch's `ResultTypeState` ([`result_type`]): each operand is filed under its
//! priority — dimensioned tensor, zero-dim tensor, or wrapped host scalar — and the
//! three partial results are combined so that a lower-priority operand only counts
//! when its *category* (bool < integer < floating < complex) is higher. Values are
//! never inspected.

use crate::dtype::{Category, DType};
use crate::error::{Error, Result};

/// The promotion priority of an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Priority {
    /// A tensor with at least one dimension.
    Dimensioned,
    /// A zero-dim tensor (shape `[]`) that is not a wrapped scalar.
    ZeroDim,
    /// A host scalar (PyTorch's "wrapped number").
    Wrapped,
}

/// One operand as promotion sees it.
///
/// For [`Priority::Wrapped`] the dtype is [`Scalar::wrapped_dtype`](crate::Scalar::wrapped_dtype)
/// (`bool`, `int64`, `float64` or `complex128`); only its category counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperandType {
    /// The operand's dtype.
    pub dtype: DType,
    /// The operand's priority.
    pub priority: Priority,
}

impl OperandType {
    /// A tensor with at least one dimension.
    pub fn dimensioned(dtype: DType) -> Self {
        OperandType {
            dtype,
            priority: Priority::Dimensioned,
        }
    }

    /// A zero-dim tensor.
    pub fn zero_dim(dtype: DType) -> Self {
        OperandType {
            dtype,
            priority: Priority::ZeroDim,
        }
    }

    /// A tensor of `ndim` dimensions: dimensioned when `ndim > 0`, zero-dim otherwise.
    pub fn tensor(dtype: DType, ndim: usize) -> Self {
        if ndim > 0 {
            Self::dimensioned(dtype)
        } else {
            Self::zero_dim(dtype)
        }
    }

    /// A host scalar of the given dtype (only its category counts).
    pub fn wrapped(dtype: DType) -> Self {
        OperandType {
            dtype,
            priority: Priority::Wrapped,
        }
    }
}

/// Rank among the real floating dtypes; `float16` and `bfloat16` share a rank (neither
/// holds the other, so together they promote to `float32`).
fn float_rank(d: DType) -> u8 {
    match d {
        DType::F16 | DType::BF16 => 0,
        DType::F32 => 1,
        _ => 2,
    }
}

/// Promotion of two distinct real floating dtypes (float8 excluded).
fn promote_floats(a: DType, b: DType) -> DType {
    if a == b {
        a
    } else if float_rank(a) == float_rank(b) {
        // float16 with bfloat16
        DType::F32
    } else if float_rank(a) > float_rank(b) {
        a
    } else {
        b
    }
}

/// Bit width of a signed integer dtype (`uint8` promotes with signed ones as `int16`).
fn signed_rank(d: DType) -> u8 {
    match d {
        DType::I8 => 1,
        DType::I16 | DType::U8 => 2,
        DType::I32 => 3,
        _ => 4,
    }
}

/// `torch.promote_types(a, b)`: the smallest dtype both convert to without leaving
/// their categories.
///
/// Errors as PyTorch: `uint16`/`uint32`/`uint64` with any other non-floating dtype
/// (integers, bool, complex) is [`Error::UnsignedPromotion`]; float8 with any other
/// dtype is refused too.
///
/// ```
/// use lazyfuse_ir::{promote::promote_types, DType};
/// assert_eq!(promote_types(DType::U8, DType::I8).unwrap(), DType::I16);
/// assert_eq!(promote_types(DType::BF16, DType::F16).unwrap(), DType::F32);
/// assert_eq!(promote_types(DType::C32, DType::BF16).unwrap(), DType::C64);
/// assert_eq!(promote_types(DType::U16, DType::F16).unwrap(), DType::F16);
/// assert!(promote_types(DType::U16, DType::I32).is_err());
/// ```
pub fn promote_types(a: DType, b: DType) -> Result<DType> {
    if a == b {
        return Ok(a);
    }
    if a.is_float8() || b.is_float8() {
        return Err(Error::invalid(
            "promote_types",
            format!(
                "Promotion for Float8 Types is not supported, attempted to promote {} and {}",
                a.torch_name(),
                b.torch_name()
            ),
        ));
    }
    if a == DType::F4E2M1FNX2 || b == DType::F4E2M1FNX2 {
        // (PyTorch's table has no row for it and fails an internal assert)
        return Err(Error::invalid(
            "promote_types",
            format!(
                "Promotion for Float4 Types is not supported, attempted to promote {} and {}",
                a.torch_name(),
                b.torch_name()
            ),
        ));
    }
    if a.is_wide_unsigned() || b.is_wide_unsigned() {
        // PyTorch has no table entries for these: a real float wins, everything else
        // (other integers, bool, complex) is refused.
        if a.is_floating_point() {
            return Ok(a);
        }
        if b.is_floating_point() {
            return Ok(b);
        }
        return Err(Error::UnsignedPromotion { a, b });
    }
    if a.is_complex() || b.is_complex() {
        // The value type is the promotion of the floating parts; integers and bool
        // fit into any complex dtype and do not widen it.
        let (c, other) = if a.is_complex() { (a, b) } else { (b, a) };
        let real = if other.is_complex() || other.is_floating_point() {
            promote_floats(c.to_real(), other.to_real())
        } else {
            c.to_real()
        };
        return real.to_complex().ok_or_else(|| {
            Error::invalid(
                "promote_types",
                format!("Unknown Complex ScalarType for {}", real.torch_name()),
            )
        });
    }
    if a.is_floating_point() && b.is_floating_point() {
        return Ok(promote_floats(a, b));
    }
    if a.is_floating_point() {
        return Ok(a);
    }
    if b.is_floating_point() {
        return Ok(b);
    }
    if a == DType::Bool {
        return Ok(b);
    }
    if b == DType::Bool {
        return Ok(a);
    }
    // Two distinct integers among uint8 and the signed ones.
    let rank = signed_rank(a).max(signed_rank(b));
    Ok(match rank {
        1 => DType::I8,
        2 => DType::I16,
        3 => DType::I32,
        _ => DType::I64,
    })
}

/// `promote_types` where either side may be absent (PyTorch's `Undefined`).
fn promote_skip_undefined(a: Option<DType>, b: Option<DType>) -> Result<Option<DType>> {
    Ok(match (a, b) {
        (None, x) | (x, None) => x,
        (Some(x), Some(y)) => Some(promote_types(x, y)?),
    })
}

/// PyTorch's `combine_categories`: the result of a higher-priority group, unless the
/// lower-priority group is of a higher category.
fn combine_categories(higher: Option<DType>, lower: Option<DType>) -> Result<Option<DType>> {
    let (h, l) = match (higher, lower) {
        (None, x) | (x, None) => return Ok(x),
        (Some(h), Some(l)) => (h, l),
    };
    if h.is_complex() {
        return Ok(Some(h));
    }
    if l.is_complex() {
        // A floating `higher` keeps its precision in the complex result
        // (float16 tensor + complex scalar -> complex32).
        if h.is_floating_point() {
            return h.to_complex().map(Some).ok_or_else(|| {
                Error::invalid(
                    "result_type",
                    format!("Unknown Complex ScalarType for {}", h.torch_name()),
                )
            });
        }
        return Ok(Some(l));
    }
    if h.is_floating_point() {
        return Ok(Some(h));
    }
    if h == DType::Bool || l.is_floating_point() {
        return promote_skip_undefined(Some(h), Some(l));
    }
    Ok(Some(h))
}

/// The dtype a wrapped scalar of `dtype`'s category stands for in promotion.
fn wrapped_stand_in(dtype: DType, default_float: DType) -> DType {
    match dtype.category() {
        Category::Bool => DType::Bool,
        Category::Integer => DType::I64,
        Category::Floating => default_float,
        Category::Complex => default_float.to_complex().unwrap_or(DType::C64),
    }
}

/// `torch.result_type` of several operands: the common dtype an op computes in.
///
/// `default_float` is the default floating dtype (what a float scalar stands for;
/// the default complex dtype is its complex counterpart). Operands promote within
/// their priority group in order; the groups then combine by category.
///
/// ```
/// use lazyfuse_ir::promote::{result_type, OperandType};
/// use lazyfuse_ir::DType;
/// let t = |d| OperandType::dimensioned(d);
/// let z = |d| OperandType::zero_dim(d);
/// let s = |d| OperandType::wrapped(d);
/// assert_eq!(result_type(&[t(DType::I32), z(DType::F64)], DType::F32).unwrap(), DType::F64);
/// assert_eq!(result_type(&[t(DType::F16), z(DType::F64)], DType::F32).unwrap(), DType::F16);
/// assert_eq!(result_type(&[t(DType::I32), z(DType::I64)], DType::F32).unwrap(), DType::I32);
/// assert_eq!(result_type(&[t(DType::I32), s(DType::F64)], DType::F32).unwrap(), DType::F32);
/// assert_eq!(result_type(&[t(DType::F16), s(DType::C128)], DType::F32).unwrap(), DType::C32);
/// ```
pub fn result_type(operands: &[OperandType], default_float: DType) -> Result<DType> {
    if !matches!(
        default_float,
        DType::F16 | DType::BF16 | DType::F32 | DType::F64
    ) {
        return Err(Error::invalid(
            "result_type",
            format!(
                "only floating-point types are supported as the default type, got {}",
                default_float
            ),
        ));
    }
    let (mut dim, mut zero, mut wrapped) = (None, None, None);
    for op in operands {
        match op.priority {
            Priority::Dimensioned => dim = promote_skip_undefined(dim, Some(op.dtype))?,
            Priority::ZeroDim => zero = promote_skip_undefined(zero, Some(op.dtype))?,
            Priority::Wrapped => {
                let d = wrapped_stand_in(op.dtype, default_float);
                wrapped = promote_skip_undefined(wrapped, Some(d))?;
            }
        }
    }
    combine_categories(dim, combine_categories(zero, wrapped)?)?.ok_or_else(|| {
        Error::invalid(
            "result_type",
            "result_type needs at least one operand".to_string(),
        )
    })
}

/// `torch.can_cast(from, to)`: true unless the cast goes to a lower category
/// (complex → real, floating → integer, non-bool → bool). This is the rule for
/// writing an op's result into an existing tensor (in-place ops, `out=`).
///
/// ```
/// use lazyfuse_ir::{promote::can_cast, DType};
/// assert!(can_cast(DType::I64, DType::I8));
/// assert!(!can_cast(DType::F32, DType::I64));
/// assert!(!can_cast(DType::U8, DType::Bool));
/// ```
pub fn can_cast(from: DType, to: DType) -> bool {
    from.category() <= to.category()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_spot_checks() {
        use DType::*;
        let cases = [
            (U8, I8, I16),
            (U8, I32, I32),
            (Bool, U8, U8),
            (I64, F16, F16),
            (BF16, I64, BF16),
            (F16, F32, F32),
            (BF16, F64, F64),
            (C32, F32, C64),
            (C32, U8, C32),
            (C64, F64, C128),
            (BC32, F16, C64),
            (BC32, I8, BC32),
            (U64, F64, F64),
            (U16, U16, U16),
        ];
        for (a, b, want) in cases {
            assert_eq!(promote_types(a, b).unwrap(), want, "{a} {b}");
            assert_eq!(promote_types(b, a).unwrap(), want, "{b} {a}");
        }
        assert_eq!(
            promote_types(U64, C128).unwrap_err(),
            Error::UnsignedPromotion { a: U64, b: C128 }
        );
        assert!(promote_types(U16, Bool).is_err());
        assert!(promote_types(F8E4M3FN, F32).is_err());
        assert_eq!(promote_types(F8E5M2, F8E5M2).unwrap(), F8E5M2);
    }

    #[test]
    fn priorities() {
        use DType::*;
        let t = OperandType::dimensioned;
        let z = OperandType::zero_dim;
        let s = OperandType::wrapped;
        // A zero-dim wide unsigned is outranked by a dimensioned integer...
        assert_eq!(result_type(&[t(I16), z(U32)], F32).unwrap(), I16);
        // ...but promoted against a dimensioned bool.
        assert!(result_type(&[t(Bool), z(U16)], F32).is_err());
        assert_eq!(result_type(&[t(Bool), s(I64)], F32).unwrap(), I64);
        assert_eq!(result_type(&[t(BF16), s(C128)], F32).unwrap(), BC32);
        assert_eq!(result_type(&[t(I8), s(C128)], F64).unwrap(), C128);
        assert_eq!(result_type(&[s(I64), s(F64)], F32).unwrap(), F32);
        assert_eq!(result_type(&[z(U8), s(F64)], F64).unwrap(), F64);
        assert!(result_type(&[], F32).is_err());
        assert!(result_type(&[t(I8)], I32).is_err());
    }
}
