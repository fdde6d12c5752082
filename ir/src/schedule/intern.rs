//! The key under which the kernel builder hash-conses its expressions: an
//! expression, its dtype and its stage, compared the way a kernel's values are
//! (constants by their bits, so `0.0` and `-0.0` stay two expressions) without
//! formatting them.

use crate::kernel::{Accum, Affine, Const, DynIndex, Expr, ExprId, ParamId, ScanAccum, Stage};
use crate::op::{BinaryOp, UnaryOp};
use crate::DType;

/// An interned expression (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum InternKey {
    /// a load of a parameter at its resolved index (the expression itself holds
    /// a placeholder until the kernel is finished); its dtype is the parameter's
    LoadAt {
        param: usize,
        index: Affine,
        dynamic: Option<DynIndex>,
        stage: Stage,
    },
    /// any other expression
    Expr {
        expr: ExprKey,
        dtype: DType,
        stage: Stage,
    },
}

/// An expression with its float attributes as bits.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum ExprKey {
    Load {
        param: ParamId,
        index: Affine,
        dynamic: Option<DynIndex>,
    },
    Bool(bool),
    Int(i128),
    /// a float constant's bits
    Float(u64),
    LoopIndex(usize),
    Unary(UnaryOp, ExprId),
    /// a parameterized op by its `Debug` text (its floats in full, `-0.0`
    /// included; such ops are rare, so their formatting costs little)
    UnaryParam(String, ExprId),
    Binary(BinaryOp, ExprId, ExprId),
    Where(ExprId, ExprId, ExprId),
    Cast(ExprId),
    Reduce(Accum, ExprId),
    Scan(ScanAccum, ExprId),
}

impl ExprKey {
    /// The key of `e`.
    pub(super) fn of(e: &Expr) -> ExprKey {
        match e {
            Expr::Load {
                param,
                index,
                dynamic,
            } => ExprKey::Load {
                param: *param,
                index: index.clone(),
                dynamic: dynamic.clone(),
            },
            Expr::Const(Const::Bool(b)) => ExprKey::Bool(*b),
            Expr::Const(Const::Int(i)) => ExprKey::Int(*i),
            Expr::Const(Const::Float(f)) => ExprKey::Float(f.to_bits()),
            Expr::LoopIndex { dim } => ExprKey::LoopIndex(*dim),
            Expr::Unary { op, x } => ExprKey::Unary(*op, *x),
            Expr::UnaryParam { op, x } => ExprKey::UnaryParam(format!("{op:?}"), *x),
            Expr::Binary { op, a, b } => ExprKey::Binary(*op, *a, *b),
            Expr::Where { cond, a, b } => ExprKey::Where(*cond, *a, *b),
            Expr::Cast { x } => ExprKey::Cast(*x),
            Expr::Reduce { op, x } => ExprKey::Reduce(*op, *x),
            Expr::Scan { op, x } => ExprKey::Scan(*op, *x),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(e: Expr) -> InternKey {
        InternKey::Expr {
            expr: ExprKey::of(&e),
            dtype: DType::F32,
            stage: Stage::Outer(0),
        }
    }

    #[test]
    fn constants_are_told_apart_by_their_bits() {
        let c = |v: f64| key(Expr::Const(Const::Float(v)));
        assert_eq!(c(0.5), c(0.5));
        assert_ne!(c(0.0), c(-0.0), "0.0 and -0.0 give other kernels");
        assert_ne!(c(1.0), key(Expr::Const(Const::Int(1))));
        let nan = f64::NAN;
        assert_eq!(c(nan), c(nan));
        let u = |op, x| key(Expr::UnaryParam { op, x });
        use crate::op::UnaryParamOp::Logit;
        assert_ne!(
            u(Logit { eps: Some(0.0) }, ExprId(0)),
            u(Logit { eps: Some(-0.0) }, ExprId(0))
        );
        assert_eq!(
            u(Logit { eps: None }, ExprId(1)),
            u(Logit { eps: None }, ExprId(1))
        );
    }
}
