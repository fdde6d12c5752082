//! The expression DAG of a loop kernel: constants, accumulators, scans, the
//! expression ops, and the stage each expression is evaluated at.

use super::{Affine, DynIndex, ExprId, ParamId};
use crate::dtype::DType;
use crate::op::{BinaryOp, UnaryOp, UnaryParamOp};
use std::fmt;

/// A constant. Its expression's dtype says how to read it: `Bool` for bool, `Int`
/// for integer dtypes (the value fits the dtype), `Float` for float dtypes (the value
/// is exactly representable in the dtype).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    /// a bool
    Bool(bool),
    /// an integer
    Int(i128),
    /// a float
    Float(f64),
}

impl fmt::Display for Const {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Const::Bool(b) => write!(f, "{b}"),
            Const::Int(i) => write!(f, "{i}"),
            Const::Float(x) => write!(f, "{x:?}"),
        }
    }
}

/// How a reduction combines values (see the module doc for NaN and empty rules).
/// On `bool` values `Sum` is a logical or and `Prod` a logical and.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Accum {
    /// `+` (identity 0; `float32` accumulates in `float64`)
    Sum,
    /// `*` (identity 1)
    Prod,
    /// largest value, NaN propagates
    Max,
    /// smallest value, NaN propagates
    Min,
    /// row-major position of the first largest value (NaN is largest), `int64`
    ArgMax,
    /// row-major position of the first smallest value (NaN is smallest), `int64`
    ArgMin,
    /// logical or of `bool` values (identity false)
    Any,
    /// logical and of `bool` values (identity true)
    All,
}

/// How a running value ([`Expr::Scan`]) combines (see the module doc for the
/// accumulation types, NaN and tie rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanAccum {
    /// running sum (`cumsum`): integers and floats
    Sum,
    /// running product (`cumprod`): integers and floats
    Prod,
    /// running maximum (`cummax` values)
    Max,
    /// running minimum (`cummin` values)
    Min,
    /// position of the running maximum (`cummax` indices), `int64`
    ArgMax,
    /// position of the running minimum (`cummin` indices), `int64`
    ArgMin,
    /// running `log(Σ exp)` (`logcumsumexp`): floats
    LogAddExp,
}

impl ScanAccum {
    /// The dtype of a scan of a `x` value, or `None` when the scan does not take
    /// that dtype.
    ///
    /// ```
    /// use lazyfuse_ir::kernel::ScanAccum;
    /// use lazyfuse_ir::DType;
    /// assert_eq!(ScanAccum::ArgMax.output_dtype(DType::F16), Some(DType::I64));
    /// assert_eq!(ScanAccum::Sum.output_dtype(DType::Bool), None);
    /// assert_eq!(ScanAccum::LogAddExp.output_dtype(DType::I64), None);
    /// ```
    pub fn output_dtype(self, x: DType) -> Option<DType> {
        if x.is_complex() || x.is_float8() {
            return None;
        }
        let float = matches!(x, DType::F16 | DType::BF16 | DType::F32 | DType::F64);
        match self {
            ScanAccum::Sum | ScanAccum::Prod if x == DType::Bool => None,
            ScanAccum::Sum | ScanAccum::Prod | ScanAccum::Max | ScanAccum::Min => Some(x),
            ScanAccum::ArgMax | ScanAccum::ArgMin => Some(DType::I64),
            ScanAccum::LogAddExp if float => Some(x),
            ScanAccum::LogAddExp => None,
        }
    }
}

/// An expression of a loop kernel.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// The element of param `param` at `index` (plus `dynamic`).
    Load {
        /// the param read
        param: ParamId,
        /// the affine part of the index
        index: Affine,
        /// a data-dependent part, for gather-like reads
        dynamic: Option<DynIndex>,
    },
    /// A constant of the expression's dtype.
    Const(Const),
    /// The loop variable of dim `dim`, as the expression's (integer) dtype.
    LoopIndex {
        /// the dim of the iteration space
        dim: usize,
    },
    /// A unary graph op on a value of the op's input dtype.
    Unary {
        /// the op
        op: UnaryOp,
        /// the operand
        x: ExprId,
    },
    /// A unary graph op with host parameters.
    UnaryParam {
        /// the op
        op: UnaryParamOp,
        /// the operand
        x: ExprId,
    },
    /// A binary graph op; both operands have one dtype.
    Binary {
        /// the op
        op: BinaryOp,
        /// left operand
        a: ExprId,
        /// right operand
        b: ExprId,
    },
    /// `cond ? a : b` with a `bool` condition.
    Where {
        /// the condition (bool)
        cond: ExprId,
        /// the value where true
        a: ExprId,
        /// the value where false
        b: ExprId,
    },
    /// The operand converted to the expression's dtype.
    Cast {
        /// the operand
        x: ExprId,
    },
    /// The reduction of an `Inner(k)` value over all reduction dims; stage `Outer(k+1)`.
    Reduce {
        /// how values combine
        op: Accum,
        /// the value reduced
        x: ExprId,
    },
    /// The inclusive running value of an `Inner(k)` value over the reduction
    /// points so far; stage `Inner(k)` (see the module doc).
    Scan {
        /// how values combine
        op: ScanAccum,
        /// the value scanned
        x: ExprId,
    },
}

/// When an expression is evaluated (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// once per parallel point, after phases `0..k`
    Outer(u32),
    /// inside the loop of phase `k`
    Inner(u32),
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stage::Outer(k) => write!(f, "outer{k}"),
            Stage::Inner(k) => write!(f, "phase{k}"),
        }
    }
}

/// An expression with its dtype and stage.
#[derive(Clone, Debug, PartialEq)]
pub struct ExprNode {
    /// what it computes
    pub expr: Expr,
    /// its value's dtype
    pub dtype: DType,
    /// when it is evaluated
    pub stage: Stage,
}
