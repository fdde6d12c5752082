//! Why building a kernel stopped ([`Fail`]), and what in a kernel can fail at run
//! time.

use super::Reason;
use crate::graph::NodeId;
use crate::kernel::{Expr, ExprNode};
use crate::op::BinaryOp;

/// Whether a kernel of these expressions may set an error status: a data-dependent
/// load, an integer division or remainder.
pub(super) fn may_fail(exprs: &[ExprNode]) -> bool {
    may_fail_from(exprs, 0)
}

/// Whether the expressions of `exprs` from index `start` on may set an error
/// status (as [`may_fail`]; their operands are indices into all of `exprs`).
pub(super) fn may_fail_from(exprs: &[ExprNode], start: usize) -> bool {
    exprs[start.min(exprs.len())..]
        .iter()
        .any(|e| match &e.expr {
            Expr::Load { dynamic, .. } => dynamic.is_some(),
            Expr::Binary { op, a, .. } => {
                matches!(
                    op,
                    BinaryOp::DivFloor | BinaryOp::DivTrunc | BinaryOp::Remainder | BinaryOp::Fmod
                ) && !exprs[a.0 as usize].dtype.is_floating_point()
            }
            _ => false,
        })
}

/// Why building a kernel stopped.
#[derive(Debug)]
pub(crate) enum Fail {
    /// this node needs a buffer (the reason)
    Materialize(NodeId, Reason),
    /// the root cannot join the kernel being built (it goes into a new one)
    Merge,
    /// a real error
    Error(String),
    /// this write_view cannot store into its base's buffer (a hazard): copy it
    Unshare(NodeId),
    /// the root reads `reduction` broadcast along the root's parallel dims `dims`:
    /// a row kernel (those dims as its reduction loop) computes both (see
    /// `Builder::start`); a kernel that cannot take that form stores the
    /// reduction instead
    Rows { reduction: NodeId, dims: Vec<usize> },
    /// the root reads this write_view, folded into its reader: the root is computed
    /// twice instead (see `Builder::split`); a kernel that cannot stores the write
    Split(NodeId),
}
