//! The cost rule's one definition of a cheap op: what the scheduler recomputes in
//! every reader rather than storing, and what the code generators need not avoid
//! recomputing.

use crate::dtype::DType;
use crate::kernel::Expr;
use crate::op::{BinaryOp, UnaryOp, UnaryParamOp};

/// Unary ops cheap enough to recompute in every reader (the scheduler's cost
/// rule; code generators use it to tell which recomputation is worth avoiding).
///
/// ```
/// use lazyfuse_ir::schedule::cheap_unary;
/// use lazyfuse_ir::UnaryOp;
/// assert!(cheap_unary(UnaryOp::Neg));
/// assert!(!cheap_unary(UnaryOp::Exp));
/// ```
pub fn cheap_unary(op: UnaryOp) -> bool {
    use UnaryOp::*;
    matches!(
        op,
        Neg | Abs
            | Sign
            | Relu
            | Floor
            | Ceil
            | Round
            | Trunc
            | LogicalNot
            | BitwiseNot
            | IsNan
            | Square
            | IsInf
            | IsPosInf
            | IsNegInf
            | IsFinite
            | IsReal
            | Signbit
            | Sgn
            | Frac
    )
}

/// Binary ops cheap enough to recompute in every reader (see [`cheap_unary`]).
///
/// ```
/// use lazyfuse_ir::schedule::cheap_binary;
/// use lazyfuse_ir::BinaryOp;
/// assert!(cheap_binary(BinaryOp::Add));
/// assert!(!cheap_binary(BinaryOp::Pow));
/// ```
pub fn cheap_binary(op: BinaryOp) -> bool {
    use BinaryOp::*;
    !matches!(
        op,
        Pow | Atan2 | Hypot | Logaddexp | Logaddexp2 | Xlogy | Gcd | Lcm | Remainder | Fmod
    )
}

/// Parameterised unary ops cheap enough to recompute in every reader (see
/// [`cheap_unary`]): the ones that are a few compares and selects or a rounding
/// (NaN replacement, `round(decimals)`, `leaky_relu`, `hardtanh`); the ones that
/// take an exp, a log or tanh (`logit`, `gelu`, `softplus`, `elu`) are not.
///
/// ```
/// use lazyfuse_ir::schedule::cheap_unary_param;
/// use lazyfuse_ir::UnaryParamOp;
/// assert!(cheap_unary_param(UnaryParamOp::LeakyRelu { negative_slope: 0.01 }));
/// assert!(!cheap_unary_param(UnaryParamOp::Gelu { tanh: false }));
/// ```
pub fn cheap_unary_param(op: UnaryParamOp) -> bool {
    use UnaryParamOp::*;
    !matches!(
        op,
        Logit { .. } | Gelu { .. } | Softplus { .. } | Elu { .. }
    )
}

/// Whether a kernel expression applies an expensive op: the one definition, from
/// [`cheap_unary`], [`cheap_unary_param`] and [`cheap_binary`], that the scheduler's
/// cost rule (a value read twice is stored) and the code generators (which
/// recomputations to avoid, which loops to interleave) share.
///
/// ```
/// use lazyfuse_ir::kernel::{Expr, ExprId};
/// use lazyfuse_ir::schedule::expensive;
/// use lazyfuse_ir::UnaryOp;
/// assert!(expensive(&Expr::Unary { op: UnaryOp::Exp, x: ExprId(0) }));
/// assert!(!expensive(&Expr::Unary { op: UnaryOp::Neg, x: ExprId(0) }));
/// ```
pub fn expensive(e: &Expr) -> bool {
    match e {
        Expr::Unary { op, .. } => !cheap_unary(*op),
        Expr::UnaryParam { op, .. } => !cheap_unary_param(*op),
        Expr::Binary { op, .. } => !cheap_binary(*op),
        _ => false,
    }
}

/// Whether a dtype may appear in a loop kernel's arithmetic (float8 only in loads,
/// stores and casts; complex and float4 never).
pub(super) fn arith_dtype(d: DType) -> bool {
    !d.is_complex()
        && !d.is_float8()
        && d.size_in_bytes() > 0
        && !matches!(d, DType::C32 | DType::BC32 | DType::F4E2M1FNX2)
}
