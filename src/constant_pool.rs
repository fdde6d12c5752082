//! The store's constant pool: the `full` nodes that host-scalar operands become,
//! kept alive and reused from one graph to the next.
//!
//! `x.mul(1.5)` reads its scalar as a constant node of the broadcast shape (see
//! `operand::operand_node`). A program that rebuilds its graph every step (a
//! training loop, W9's chain) made the same constants each time: a node added,
//! then collected after the realize, every step. The pool keeps the node of each
//! recent (value, dtype, shape) pinned and hands it out again, so a repeated
//! constant costs one slot's comparison.
//!
//! A constant node has no buffer (a kernel computes it where it is read), no
//! gradient history and no device of its own (a CPU node, which the ops of a
//! GPU tensor read as a constant; `Store::add_node`), so keeping it costs a
//! node slot. The pool is direct-mapped, [`SLOTS`] nodes at most: a constant
//! that lands on an occupied slot takes it, and the one it replaces is unpinned
//! (collected once nothing reads it). Values compare by their bits
//! ([`Scalar::identity`]): `-0.0` is not `0.0`, and a NaN is the same NaN.

use crate::realize::fx_step;
use crate::store::Store;
use lazyfuse_ir::layout::Dims;
use lazyfuse_ir::shape::same_shape;
use lazyfuse_ir::{DType, NodeId, Op, Scalar};

/// Most constant nodes the pool keeps.
pub(crate) const SLOTS: usize = 64;

/// One kept constant: what it is and its node.
struct Kept {
    value: [u64; 3],
    dtype: DType,
    shape: Dims,
    node: NodeId,
}

/// The kept constants, by slot.
pub(crate) struct ConstantPool {
    slots: Vec<Option<Kept>>,
}

impl Default for ConstantPool {
    fn default() -> Self {
        ConstantPool {
            slots: (0..SLOTS).map(|_| None).collect(),
        }
    }
}

/// The slot of a constant: its words mixed (the Fx step over value, dtype and
/// shape).
fn slot(value: &[u64; 3], dtype: DType, shape: &[usize]) -> usize {
    let h = value.iter().fold(dtype as u64, |h, &w| fx_step(h, w));
    let h = shape.iter().fold(h, |h, &d| fx_step(h, d as u64));
    (h >> 32) as usize % SLOTS
}

impl Store {
    /// A `full` node of `value`, `dtype` and `shape` with no gradient history,
    /// on the CPU: the pool's node when it keeps this constant, else a new node
    /// that it keeps from now on.
    pub(crate) fn constant(&mut self, value: Scalar, dtype: DType, shape: &[usize]) -> NodeId {
        let bits = value.identity();
        let at = slot(&bits, dtype, shape);
        if let Some(k) = &self.constants.slots[at] {
            if k.value == bits && k.dtype == dtype && same_shape(&k.shape, shape) {
                return k.node;
            }
        }
        let node = self.add_unrecorded(Op::Full(value), dtype, shape, &[]);
        self.graph.pin(node);
        let kept = Kept {
            value: bits,
            dtype,
            shape: Dims::from_slice(shape),
            node,
        };
        if let Some(old) = self.constants.slots[at].replace(kept) {
            self.unpin(old.node);
        }
        node
    }

    /// Number of constant nodes the pool keeps.
    #[cfg(test)]
    pub(crate) fn kept_constants(&self) -> usize {
        self.constants.slots.iter().flatten().count()
    }
}

#[cfg(test)]
mod tests {
    use crate::store::with_store;
    use crate::Tensor;
    use lazyfuse_ir::{DType, Op, Scalar};

    /// The checks run under one lock of the store: between two locks, a
    /// test beside this one may take `nz`'s slot, and `nz`, unpinned and read
    /// by nothing, is collected and its index reused.
    #[test]
    fn a_repeated_constant_is_one_node() {
        with_store(|s| {
            let a = s.constant(Scalar::Float(1.5), DType::F32, &[7, 3]);
            let b = s.constant(Scalar::Float(1.5), DType::F32, &[7, 3]);
            let c = s.constant(Scalar::Float(1.5), DType::F64, &[7, 3]);
            let z = s.constant(Scalar::Float(0.0), DType::F32, &[5]);
            let nz = s.constant(Scalar::Float(-0.0), DType::F32, &[5]);
            assert_eq!(a, b);
            assert_ne!(a, c);
            assert_ne!(z, nz);
            let n = s.graph.node(nz);
            assert!(
                matches!(n.op, Op::Full(Scalar::Float(v)) if v.to_bits() == (-0.0f64).to_bits())
            );
            assert!(s.kept_constants() <= super::SLOTS);
        });
    }

    /// Constants that share a slot replace each other; the graph keeps no more
    /// than the pool's slots, and a replaced constant still read by a live
    /// tensor stays until that tensor goes.
    #[test]
    fn the_pool_stays_bounded_and_replaced_constants_stay_correct() {
        let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
        let held: Vec<Tensor> = (0..300).map(|i| x.add(i as f64).unwrap()).collect();
        with_store(|s| assert!(s.kept_constants() <= super::SLOTS));
        for (i, t) in held.iter().enumerate() {
            assert_eq!(
                t.to_vec::<f32>().unwrap(),
                vec![1.0 + i as f32, 2.0 + i as f32]
            );
        }
    }
}
