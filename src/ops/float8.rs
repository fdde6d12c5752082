//! The float8 ops PyTorch 2.15 has CPU kernels for: `mul` of two tensors with dims,
//! `eq` and `ne` (also with a number), `abs` (not for `float8_e8m0fnu`), `isnan` and
//! `isinf`, and their in-place forms. c10's float8 types compute through `float`:
//! each operand is a float8 value (a number is rounded to the dtype first), the
//! arithmetic is float32, and a float8 result is rounded once. lazyfuse writes that
//! as casts around a float32 node, so kernels keep float8 as storage only. Other
//! float8 arithmetic is refused, as PyTorch refuses it.

use crate::error::Result;
use crate::operand::Operand;
use crate::store::{with_store, Store};
use crate::Tensor;
use lazyfuse_ir::{BinaryOp, DType, Error as IrError, NodeId, Op, UnaryOp};

/// An operand as the float32 value of its float8 value in `dtype`, of `shape`.
fn widened(s: &mut Store, o: &Operand, dtype: DType, shape: &[usize]) -> Result<NodeId> {
    let f8 = crate::operand::operand_node(s, o, dtype, shape)?;
    Ok(s.cast_node(f8, DType::F32))
}

/// Whether PyTorch's CPU kernel reads this operand as a scalar (a number or a
/// zero-dim tensor), which its float8 `mul` refuses.
fn scalar_like(o: &Operand) -> bool {
    o.tensor().is_none_or(|t| t.ndim() == 0)
}

/// `a op b` where the operands promote to the float8 `dtype`: the node of the
/// result, or `None` for an op PyTorch has no float8 kernel for.
pub(crate) fn binary(
    op: BinaryOp,
    a: &Operand,
    b: &Operand,
    dtype: DType,
    shape: &[usize],
) -> Option<Result<Tensor>> {
    let out = match op {
        BinaryOp::Mul if scalar_like(a) || scalar_like(b) => {
            return Some(Err(IrError::not_implemented(
                "mul_cpu_reduced_float",
                dtype,
            )
            .into()))
        }
        BinaryOp::Mul => dtype,
        BinaryOp::Eq | BinaryOp::Ne => DType::Bool,
        _ => return None,
    };
    Some(with_store(|s| {
        let (x, y) = (widened(s, a, dtype, shape)?, widened(s, b, dtype, shape)?);
        let node = if out == DType::Bool {
            s.add(Op::Binary(op), DType::Bool, shape, &[x, y])
        } else {
            let v = s.add(Op::Binary(op), DType::F32, shape, &[x, y]);
            s.cast_node(v, out)
        };
        Ok(Tensor::from_node(s, node))
    }))
}

/// `op` of a float8 tensor: the result, or `None` where PyTorch has no kernel.
pub(crate) fn unary(t: &Tensor, op: UnaryOp) -> Option<Result<Tensor>> {
    let dtype = t.dtype();
    let out = match op {
        UnaryOp::Abs if dtype == DType::F8E8M0FNU => {
            return Some(Err(IrError::not_implemented("abs_cpu", dtype).into()))
        }
        UnaryOp::Abs => dtype,
        UnaryOp::IsNan | UnaryOp::IsInf => DType::Bool,
        _ => return None,
    };
    let shape = t.shape();
    Some(with_store(|s| {
        let x = widened(s, &Operand::Tensor(t), dtype, &shape)?;
        let out_of = if out == DType::Bool {
            DType::Bool
        } else {
            DType::F32
        };
        let v = s.add(Op::Unary(op), out_of, shape.clone(), &[x]);
        let node = s.cast_node(v, out);
        Ok(Tensor::from_node(s, node))
    }))
}
