//! What each derivative reads of the forward pass (PyTorch's saved tensors), and
//! PyTorch's refusal of a backward that needs a value an in-place write has since
//! replaced ("one of the variables needed for gradient computation has been
//! modified by an inplace operation").
//!
//! lazyfuse keeps every old version a record reads, so it could compute such a
//! gradient from the old values; PyTorch cannot, and refuses, and a program ported
//! from PyTorch expects the refusal where PyTorch gives it, and only there. So a
//! rule's saved values are PyTorch's (`derivatives.yaml`): a backward fails when one
//! of them, or the storage version it was read through (views share their base's
//! version), was overwritten by an in-place write after it was recorded.

use super::record::{Custom, Rule};
use crate::error::Result;
use crate::store::Store;
use lazyfuse_ir::UnaryParamOp;
use lazyfuse_ir::{BinaryOp, DType, Error as IrError, NodeId, Op, ReduceOp, ScanOp, UnaryOp};

/// Which forward values a rule reads: its inputs, and its own output.
pub(crate) struct Saved {
    pub(crate) inputs: Vec<bool>,
    pub(crate) output: bool,
}

/// PyTorch's saved tensors of a rule, given which inputs need a gradient.
pub(crate) fn saved(rule: &Rule, needs: &[bool]) -> Saved {
    let n = needs.len();
    let need = |i: usize| needs.get(i).copied().unwrap_or(false);
    let none = || Saved {
        inputs: vec![false; n],
        output: false,
    };
    let with = |inputs: Vec<bool>, output: bool| Saved { inputs, output };
    let input = || with(vec![true; n], false);
    let output = || with(vec![false; n], true);
    match rule {
        Rule::Leaf(_) | Rule::Custom(Custom::ArgExtreme { .. }) => none(),
        Rule::Custom(Custom::Clamp { .. } | Custom::Normalize { .. }) => input(),
        Rule::Custom(Custom::Matmul { .. } | Custom::Conv2d { .. }) => {
            with(vec![need(1), need(0)], false)
        }
        Rule::Op(op) => match op {
            Op::Unary(u) => {
                use UnaryOp::*;
                match u {
                    Neg | Floor | Ceil | Round | Trunc | Sign | Sgn | Frac => none(),
                    Exp | Tanh | Sigmoid | Sqrt | Rsqrt | Reciprocal | Exp2 | Expm1 | Erfinv
                    | Relu | Tan => output(),
                    _ => input(),
                }
            }
            Op::UnaryParam(UnaryParamOp::RoundDecimals { .. }) => none(),
            Op::UnaryParam(_) => input(),
            Op::Binary(b) => match b {
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::DivFloor | BinaryOp::DivTrunc => none(),
                // each side is saved for the other's gradient
                BinaryOp::Mul => with(vec![need(1), need(0)], false),
                BinaryOp::Div => with(vec![need(1), true], false),
                BinaryOp::Remainder | BinaryOp::Fmod => with(vec![need(1), need(1)], false),
                BinaryOp::Pow => with(vec![true, true], need(1)),
                BinaryOp::Hypot | BinaryOp::Copysign => with(vec![true, true], true),
                _ => input(),
            },
            Op::Where => with(vec![true, false, false], false),
            Op::Reduce { op, .. } => match op {
                ReduceOp::Sum | ReduceOp::Mean | ReduceOp::RunningMean => none(),
                ReduceOp::NanSum | ReduceOp::NanMean | ReduceOp::Var { .. } => input(),
                _ => with(vec![true], true),
            },
            Op::Softmax { .. } => output(),
            Op::Scan {
                op: ScanOp::Cummax | ScanOp::Cummin,
                ..
            } => input(),
            Op::Scan { .. } => with(vec![true], true),
            Op::Matmul => with(vec![need(1), need(0)], false),
            Op::Gather { .. } | Op::IndexSelect { .. } | Op::Take => with(vec![false, true], false),
            Op::Scatter { .. } => with(vec![false, true, false], false),
            _ => none(),
        },
    }
}

/// PyTorch's version error when one of `nodes` (a rule's saved values) reads an
/// overwritten version.
/// PyTorch's version error when one of `nodes`, the saved values of the record
/// numbered `seq`, reads a version that an in-place op begun after the record
/// overwrote.
pub(crate) fn check_versions(s: &Store, nodes: &[NodeId], seq: u64) -> Result<()> {
    for &n in nodes {
        if let Some(old) = overwritten_under(s, n, seq) {
            return Err(version_error(s, old));
        }
    }
    Ok(())
}

/// The version `n` reads, when an in-place op begun after the record `seq`
/// overwrote it: `n` itself, or the node a chain of views of it (a leaf's anchor
/// included) reads.
fn overwritten_under(s: &Store, mut n: NodeId, seq: u64) -> Option<NodeId> {
    loop {
        if s.overwritten.get(&n).is_some_and(|o| o.since > seq) {
            return Some(n);
        }
        match (&s.graph.node(n).op, s.graph.inputs(n)) {
            (Op::View(_), &[base]) => n = base,
            _ => return None,
        }
    }
}

/// PyTorch's message: the tensor's type and shape, the op that made it (for a
/// computed tensor), its version now and when it was saved.
fn version_error(s: &Store, old: NodeId) -> crate::Error {
    let node = s.graph.node(old);
    let overwrite = &s.overwritten[&old];
    let expected = overwrite.version;
    let now = overwrite.storage.upgrade().map_or(expected + 1, |st| {
        st.version.load(std::sync::atomic::Ordering::Relaxed)
    });
    let shape: Vec<String> = node.shape.iter().map(usize::to_string).collect();
    let producer = match s.records.get(old).map(|r| &r.rule) {
        Some(Rule::Op(op)) => format!(", which is output 0 of {},", camel(&op.name())),
        _ => String::new(),
    };
    let device = if s.device_of(old).is_cuda() {
        "cuda."
    } else {
        ""
    };
    IrError::invalid(
        "backward",
        format!(
            "one of the variables needed for gradient computation has been modified by an \
             inplace operation: [torch.{device}{}Tensor [{}]]{producer} is at version {now}; \
             expected version {expected} instead. Hint: enable anomaly detection to find the \
             operation that failed to compute its gradient, with \
             torch.autograd.set_detect_anomaly(True, check_nan=False).",
            type_name(node.dtype),
            shape.join(", ")
        ),
    )
    .into()
}

/// `log_softmax` → `LogSoftmax`, as PyTorch names an op's node.
fn camel(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// The legacy tensor type name (`Float` of `torch.FloatTensor`).
fn type_name(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "Float",
        DType::F64 => "Double",
        DType::F16 => "Half",
        DType::BF16 => "BFloat16",
        other => other.torch_name(),
    }
}
