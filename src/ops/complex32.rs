//! The complex32 ops PyTorch 2.15 has CPU kernels for (`add`, `sub`, `mul`, `eq`,
//! `ne`, `neg`, `abs`, `isnan`, `isinf`, `isfinite`, `isreal`): c10's
//! `complex<Half>` computes through `complex<float>`, so each operand is a complex32
//! value (another dtype, or a number, is rounded to complex32 first), the arithmetic
//! is complex64, and a complex32 (or float16, for `abs`) result is rounded once.
//! lazyfuse writes that as casts around a complex64 node, run by the interpreter as
//! every complex value is. The typing rules refuse the others as PyTorch does.

use crate::error::Result;
use crate::operand::Operand;
use crate::store::{with_store, Store};
use crate::Tensor;
use lazyfuse_ir::typing::Signature;
use lazyfuse_ir::{BinaryOp, DType, NodeId, Op, UnaryOp};

/// An operand as the complex64 value of its complex32 value, of `shape`.
fn widened(s: &mut Store, o: &Operand, shape: &[usize]) -> Result<NodeId> {
    let half = crate::operand::operand_node(s, o, DType::C32, shape)?;
    Ok(s.cast_node(half, DType::C64))
}

/// The node's dtype when computed in complex64: the wide form of a half output.
fn wide(output: DType) -> DType {
    match output {
        DType::C32 => DType::C64,
        DType::F16 => DType::F32,
        other => other,
    }
}

/// `a op b` computing in complex32 (`sig.compute`), of `shape`.
pub(crate) fn binary(
    op: BinaryOp,
    a: &Operand,
    b: &Operand,
    sig: Signature,
    shape: &[usize],
) -> Result<Tensor> {
    with_store(|s| {
        let (x, y) = (widened(s, a, shape)?, widened(s, b, shape)?);
        let v = s.add(Op::Binary(op), wide(sig.output), shape, &[x, y]);
        let node = s.cast_node(v, sig.output);
        Ok(Tensor::from_node(s, node))
    })
}

/// `op` of a complex32 tensor.
pub(crate) fn unary(t: &Tensor, op: UnaryOp, sig: Signature) -> Result<Tensor> {
    let shape = t.shape();
    with_store(|s| {
        let x = widened(s, &Operand::Tensor(t), &shape)?;
        let v = s.add(Op::Unary(op), wide(sig.output), shape.clone(), &[x]);
        let node = s.cast_node(v, sig.output);
        Ok(Tensor::from_node(s, node))
    })
}
