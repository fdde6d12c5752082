//! `Tensor`: a handle to a lazily computed tensor — a storage plus a layout.
//!
//! Constructors record source nodes; ops record more nodes (see `ops/`); nothing runs
//! until [`Tensor::realize`] or a read such as [`Tensor::to_vec`]. A clone is a second
//! name for the same tensor (it aliases the same storage), like a second Python name.
//!
//! This file holds the handle and how it reaches the graph (nodes, readings,
//! layouts); `creation`, `metadata`, `device`, `read` and `inspect` hold the
//! constructors, the accessors, the device rules, reading values and the IR dumps;
//! `fill` the fill-value checks and `repr` the printing.

use crate::autograd::record::{GradLink, LinkCell};
use crate::error::Result;
use crate::reading::Reading;
use crate::store::{with_store, Storage, Store};
use lazyfuse_ir::{DType, Layout, NodeId, Op};
use lazyfuse_runtime::Buffer;
use std::sync::Arc;

mod creation;
mod device;
mod fill;
mod inspect;
mod metadata;
mod read;
mod repr;

use fill::fmt_py;
pub(crate) use fill::{c_type_name, check_fill_value};

/// A lazy tensor: dtype, shape and layout are known at once; values are computed on
/// [`Tensor::realize`] or a read.
///
/// ```
/// use lazyfuse::Tensor;
/// let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// let b = a.mul(2.0).unwrap().add(&a).unwrap();
/// assert_eq!(b.to_vec::<f32>().unwrap(), vec![3.0, 6.0, 9.0, 12.0]);
/// assert_eq!(b.to_string(), "tensor([[ 3.,  6.],\n        [ 9., 12.]])");
/// ```
#[derive(Clone)]
pub struct Tensor(pub(crate) Arc<TensorImpl>);

pub(crate) struct TensorImpl {
    pub(crate) storage: Arc<Storage>,
    pub(crate) layout: Layout,
    pub(crate) dtype: DType,
    /// How the elements come from the storage (see `reading`).
    pub(crate) reading: Reading,
    /// How reads of it join gradient history (see `autograd::record`); a leaf
    /// changes it in place (`requires_grad_`).
    pub(crate) link: LinkCell,
}

/// The widest element in bytes (complex128): a storage of at most
/// `isize::MAX / WIDEST_ELEMENT` elements fits in any dtype, with no dtype to ask
/// (`Tensor::check_size`).
const WIDEST_ELEMENT: usize = 16;

impl Tensor {
    /// A new tensor owning a fresh storage whose contents are `node`'s output.
    pub(crate) fn from_node(store: &mut Store, node: NodeId) -> Tensor {
        let n = store.graph.node(node);
        let (dtype, layout) = (n.dtype, Layout::contiguous(&n.shape));
        Tensor(Arc::new(TensorImpl {
            storage: Storage::new(store, node),
            layout,
            dtype,
            reading: Reading::DIRECT,
            link: LinkCell::default(),
        }))
    }

    /// A new tensor owning `node`'s output under `strides`, dense strides that PyTorch
    /// would give the result (see `memory_format`); `None` means row-major. The
    /// storage holds the elements in the strides' own dim order: it is a permuted view
    /// of `node`, which the kernel that computes `node` writes directly.
    pub(crate) fn from_node_strided(
        store: &mut Store,
        node: NodeId,
        strides: Option<Vec<isize>>,
    ) -> Tensor {
        let n = store.graph.node(node);
        let Some(strides) =
            strides.filter(|s| *s != lazyfuse_ir::shape::contiguous_strides(&n.shape))
        else {
            return Tensor::from_node(store, node);
        };
        let (dtype, shape) = (n.dtype, n.shape.clone());
        let layout = Layout {
            shape: shape.clone(),
            strides: strides.into(),
            offset: 0,
        };
        debug_assert!(layout.is_non_overlapping_and_dense(), "{layout:?}");
        // Outermost first: the dims of size > 1 by decreasing stride, then the others
        // (whose strides address nothing).
        let mut order: Vec<usize> = (0..shape.len()).filter(|&d| shape[d] > 1).collect();
        order.sort_by_key(|&d| std::cmp::Reverse(layout.strides[d]));
        order.extend((0..shape.len()).filter(|&d| shape[d] <= 1));
        let stored = Layout {
            shape: order.iter().map(|&d| shape[d]).collect(),
            strides: {
                let row = lazyfuse_ir::shape::contiguous_strides(&shape);
                order.iter().map(|&d| row[d]).collect()
            },
            offset: 0,
        };
        let permuted = store.view_node(node, &stored);
        Tensor(Arc::new(TensorImpl {
            storage: Storage::new(store, permuted),
            layout,
            dtype,
            reading: Reading::DIRECT,
            link: LinkCell::default(),
        }))
    }

    /// A view: the same storage under another layout, read the same way.
    pub(crate) fn with_layout(&self, layout: Layout) -> Tensor {
        self.reading_as(layout, self.0.dtype, self.0.reading)
    }

    /// A view of the same storage with its own layout, dtype and reading.
    pub(crate) fn reading_as(&self, layout: Layout, dtype: DType, reading: Reading) -> Tensor {
        Tensor(Arc::new(TensorImpl {
            storage: Arc::clone(&self.0.storage),
            layout,
            dtype,
            reading,
            link: LinkCell::new(self.link().of_view()),
        }))
    }

    /// How this handle joins gradient history.
    pub(crate) fn link(&self) -> GradLink {
        self.0.link.get()
    }

    /// The node of this view's elements read through `layout` (in this view's
    /// element space) from the storage's current version.
    pub(crate) fn read_through(&self, store: &mut Store, layout: &Layout) -> NodeId {
        let base = crate::autograd::history_base(self, store);
        self.0.reading.read(store, base, layout, self.0.dtype)
    }

    /// PyTorch's "Storage size calculation overflowed with sizes=[…]" for a tensor
    /// whose storage cannot exist (made by a constructor without a `Result`, such
    /// as `zeros(&[1 << 62, 4])`): the ops that would otherwise fail on a derived
    /// size ("numel: integer multiplication overflow", a suggestion to reshape)
    /// report the real cause. Cheap for every other tensor (no lock).
    pub(crate) fn check_size(&self) -> Result<()> {
        let numel = self.0.storage.numel;
        if numel <= isize::MAX as usize / WIDEST_ELEMENT
            || lazyfuse_ir::shape::checked_numel(&[numel], self.0.dtype).is_ok()
        {
            return Ok(());
        }
        // the message names the sizes asked for, which the storage's node keeps
        let shape = with_store(|s| s.graph.node(self.0.storage.node()).shape.clone());
        lazyfuse_ir::shape::checked_numel(&shape, self.0.dtype)?;
        Ok(())
    }

    /// The node that reads this tensor's elements (in logical order) from the
    /// storage's current version.
    pub(crate) fn node(&self, store: &mut Store) -> NodeId {
        self.read_through(store, &self.0.layout)
    }

    /// The node reading this tensor converted to `dtype` and broadcast to `shape`
    /// (which the caller has checked is a broadcast of this tensor's shape).
    pub(crate) fn node_as(
        &self,
        store: &mut Store,
        dtype: DType,
        shape: &[usize],
    ) -> Result<NodeId> {
        if dtype == self.0.dtype && lazyfuse_ir::shape::same_shape(&self.0.layout.shape, shape) {
            // (expanding to its own shape is the layout itself)
            return Ok(self.read_through(store, &self.0.layout));
        }
        let target = || shape.iter().map(|&s| s as isize).collect::<Vec<isize>>();
        if dtype == self.0.dtype {
            if let Some(node) = self.constant_as(store, shape) {
                return Ok(node);
            }
            let layout = self.0.layout.expand(&target())?;
            return Ok(self.read_through(store, &layout));
        }
        let read = self.node(store);
        let cast = store.cast_node(read, dtype);
        let layout = Layout::contiguous(&self.0.layout.shape).expand(&target())?;
        Ok(store.view_node(cast, &layout))
    }
}

impl Tensor {
    /// A constant node of `shape` and this tensor's dtype where this tensor is
    /// an unrealized constant (its storage's node a `full`, read directly, with
    /// no gradient history, on the CPU): `x.maximum(&Tensor::scalar(0.1))` broadcasts the
    /// constant as a scalar operand does, one node of the broadcast shape
    /// rather than a view of the constant (what the graph passes would fold
    /// it into, in a structure every rebuilt graph repeats).
    fn constant_as(&self, store: &mut Store, shape: &[usize]) -> Option<NodeId> {
        let on_cpu = self.0.storage.device == crate::Device::CPU;
        if !on_cpu || !self.0.reading.is_direct() || !matches!(self.link(), GradLink::Follow) {
            return None;
        }
        let base = self.0.storage.node();
        let n = store.graph.node(base);
        match n.op {
            Op::Full(value) if n.dtype == self.0.dtype && !store.records.contains(base) => {
                Some(store.constant(value, self.0.dtype, shape))
            }
            _ => None,
        }
    }
}

// Test hook: the scheduler's tests take graphs built through the facade.
impl Tensor {
    /// For the scheduler's tests only: the optimized graph that computes these
    /// tensors (in logical order), its targets (one per tensor) and the input buffers
    /// it reads. The view nodes it may add to the store's graph stay unreferenced.
    #[doc(hidden)]
    pub fn debug_optimized_graph(
        tensors: &[&Tensor],
    ) -> (
        lazyfuse_ir::Graph,
        Vec<NodeId>,
        std::collections::HashMap<lazyfuse_ir::InputId, Arc<Buffer>>,
    ) {
        with_store(|s| {
            let nodes: Vec<NodeId> = tensors.iter().map(|t| t.node(s)).collect();
            let opt = lazyfuse_ir::passes::optimize(&s.graph, &nodes);
            (opt.graph, opt.targets, s.buffers.clone())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::WIDEST_ELEMENT;
    use lazyfuse_ir::DType;

    #[test]
    fn no_dtype_is_wider_than_the_widest_element() {
        assert!(DType::ALL
            .iter()
            .all(|d| d.size_in_bytes() <= WIDEST_ELEMENT));
        assert_eq!(DType::C128.size_in_bytes(), WIDEST_ELEMENT);
    }
}
