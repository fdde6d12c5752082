//! What autograd remembers of the recorded graph: one [`GradRecord`] per node that
//! requires grad, kept by the store beside the graph, and the [`GradLink`] by which
//! a tensor handle joins that history.
//!
//! # Why records beside the graph
//! A realize replaces a node by an input holding its value and releases the node's
//! producers; the graph forgets how the value was made. Backward needs exactly
//! that, so a record keeps the node's rule (its op, as recorded) and its inputs,
//! and pins those inputs: the forward graph lives as long as something that
//! requires grad still reads it, as PyTorch's `grad_fn` chain does. When the graph
//! collects a node, the store drops its record and unpins the record's inputs in
//! turn (`Store::unpin`).
//!
//! # Recording
//! `Store::add` records a node when this thread's grad mode is on, the node's
//! dtype is floating or complex, and one of its inputs has a record. A leaf starts
//! the chain: reading a tensor whose link is a leaf makes an *anchor*, a fresh
//! identity view of the storage whose record sends its gradient to the leaf's
//! `.grad`. Each read has its own anchor, so two equal leaves never share a node.

use crate::tensor::Tensor;
use lazyfuse_ir::{ArgReduceOp, DType, Layout, NodeId, Op};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How a tensor handle takes part in autograd.
#[derive(Clone, Default)]
pub(crate) enum GradLink {
    /// Its history is its storage's node: requires grad when that node has a record.
    #[default]
    Follow,
    /// Cut from history (`detach`): reads of it carry no gradient.
    Detached,
    /// A leaf that requires grad (`owner`), or a view of one.
    Leaf {
        /// the leaf's state, shared by the leaf and its views
        cell: Arc<LeafCell>,
        /// true for the leaf itself, false for views made from it
        owner: bool,
    },
}

/// A tensor handle's [`GradLink`], read on every op that reads the tensor:
/// the common link, [`GradLink::Follow`], is also kept as a flag read without
/// the lock (a lock is two atomic operations per operand of every op).
#[derive(Default)]
pub(crate) struct LinkCell {
    link: Mutex<GradLink>,
    /// the link is something other than `Follow` (set with the link, under its
    /// lock)
    special: AtomicBool,
}

impl LinkCell {
    /// A cell holding `link`.
    pub(crate) fn new(link: GradLink) -> LinkCell {
        LinkCell {
            special: AtomicBool::new(!matches!(link, GradLink::Follow)),
            link: Mutex::new(link),
        }
    }

    /// The link.
    pub(crate) fn get(&self) -> GradLink {
        if !self.special.load(Ordering::Acquire) {
            return GradLink::Follow;
        }
        self.link.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Replaces the link (a leaf's `requires_grad_`, `detach`).
    pub(crate) fn set(&self, link: GradLink) {
        let mut held = self.link.lock().unwrap_or_else(|p| p.into_inner());
        self.special
            .store(!matches!(link, GradLink::Follow), Ordering::Release);
        *held = link;
    }
}

impl GradLink {
    /// The link of a view made from a tensor with this link.
    pub(crate) fn of_view(&self) -> GradLink {
        match self {
            GradLink::Leaf { cell, .. } => GradLink::Leaf {
                cell: Arc::clone(cell),
                owner: false,
            },
            other => other.clone(),
        }
    }
}

/// A leaf's state: whether it requires grad, its accumulated `.grad`, and the
/// layout by which it reads its storage (its gradient is the storage's, read
/// through it).
pub(crate) struct LeafCell {
    pub(crate) requires_grad: AtomicBool,
    pub(crate) grad: Mutex<Option<Tensor>>,
    pub(crate) layout: Layout,
}

impl LeafCell {
    pub(crate) fn new(layout: Layout, requires_grad: bool) -> Arc<LeafCell> {
        Arc::new(LeafCell {
            requires_grad: AtomicBool::new(requires_grad),
            grad: Mutex::new(None),
            layout,
        })
    }

    pub(crate) fn requires_grad(&self) -> bool {
        self.requires_grad.load(Ordering::Relaxed)
    }

    pub(crate) fn grad(&self) -> Option<Tensor> {
        self.grad.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn set_grad(&self, grad: Option<Tensor>) {
        *self.grad.lock().unwrap_or_else(|p| p.into_inner()) = grad;
    }
}

/// How a recorded node passes its gradient to its inputs.
#[derive(Clone)]
pub(crate) enum Rule {
    /// by the derivative of its op (`autograd::rules`)
    Op(Op),
    /// it is a leaf's anchor: the gradient goes to the leaf
    Leaf(Arc<LeafCell>),
    /// by the derivative of the API op that built it, where the op's nodes would
    /// differentiate otherwise (ties of `maximum` split the gradient; `clamp`'s pass
    /// it)
    Custom(Custom),
}

/// The geometry of a 2-D convolution (`[N, C, H, W]` input, `[O, C/groups, kh,
/// kw]` weight), for its derivative.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ConvGeometry {
    pub(crate) stride: [usize; 2],
    /// (before, after) zeros of H and W
    pub(crate) padding: [(usize, usize); 2],
    pub(crate) dilation: [usize; 2],
    pub(crate) groups: usize,
}

/// A convolution's input gradients `[input, weight]` (`None` where not needed),
/// from the output's gradient: written beside the op (`nn::functional::conv`),
/// called by the engine through this pointer.
pub(crate) type ConvGrads = fn(
    geometry: ConvGeometry,
    input: &Tensor,
    weight: &Tensor,
    grad: &Tensor,
    needs: [bool; 2],
) -> crate::Result<[Option<Tensor>; 2]>;

/// API ops whose derivative is not the chain rule over their nodes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Custom {
    /// `clamp` with number bounds: input `[x]` in the output's shape and dtype; the
    /// gradient passes strictly inside the bounds (tensor bounds differentiate as
    /// the `maximum` and `minimum` they are, ties split).
    Clamp {
        /// the lower bound
        min: Option<f64>,
        /// the upper bound
        max: Option<f64>,
    },
    /// the values of `max(dim)`/`min(dim)`: input `[x]`; the gradient goes to the
    /// index the op returns.
    ArgExtreme {
        /// which extreme
        op: ArgReduceOp,
        /// the reduced dim
        axis: usize,
        /// whether the output kept it
        keepdim: bool,
    },
    /// `matmul` with an operand that reads a column-major matrix (a transposed
    /// view): inputs `[a, b]` of the batched product. That operand's gradient is
    /// computed as the transpose of a product, so that it lies as the operand does
    /// and reaches its source without a copy (PyTorch's `mm_mat1_backward` and
    /// `mm_mat2_backward`, which read the operand's strides the same way).
    Matmul {
        /// which of `[a, b]` read column-major
        transposed: [bool; 2],
    },
    /// `(x - mean) / sqrt(var + eps)` over the last `dims` dims (biased variance):
    /// input `[x]`. Its gradient is the closed form of `layer_norm`'s and
    /// `group_norm`'s backward, in float64: the chain through the mean and the
    /// variance cancels on short rows, losing digits PyTorch's results keep.
    Normalize {
        /// how many trailing dims are normalized together
        dims: usize,
        /// added to the variance
        eps: f64,
    },
    /// a 2-D convolution without bias: inputs `[x, weight]`. Its gradients are
    /// convolutions (PyTorch's `convolution_backward`: the input's a transposed
    /// convolution of the output's gradient, the weight's a product with the
    /// input's windows), where the chain rule through the window view would
    /// scatter-add every window back.
    Conv2d {
        /// strides, padding, dilation and groups
        geometry: ConvGeometry,
        /// the gradients
        grads: ConvGrads,
    },
}

/// One node's history.
pub(crate) struct GradRecord {
    pub(crate) rule: Rule,
    /// The node's inputs when it was made, each pinned by the record.
    pub(crate) inputs: Vec<NodeId>,
    /// For a binary node whose inputs were promoted from other float dtypes, the
    /// values before promotion (pinned; empty when they are the inputs): PyTorch's
    /// formulas compute on the tensors the op was given, and a product of two
    /// bfloat16 values rounds where one of two promoted values does not.
    pub(crate) sources: Vec<NodeId>,
    /// When it was made, in the order of all records (see `saved`).
    pub(crate) seq: u64,
}

/// The sequence number the next record gets.
static NEXT_SEQ: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The storage this thread's current in-place op writes, and the sequence
    /// number at the op's start (an op that computes its value with other in-place
    /// ops, or through `copy_`, starts once).
    static WRITE_START: std::cell::Cell<Option<(u64, u64)>> = const { std::cell::Cell::new(None) };
}

/// A new record's sequence number.
pub(crate) fn next_seq() -> u64 {
    NEXT_SEQ.fetch_add(1, Ordering::Relaxed)
}

/// Marks the start of an in-place op on this thread writing the storage
/// `storage`: the records it makes from now on read the version it overwrites
/// legitimately (PyTorch's in-place ops save their original input).
pub(crate) fn begin_write(storage: u64) {
    WRITE_START.with(|w| {
        if w.get().is_none_or(|(s, _)| s != storage) {
            w.set(Some((storage, NEXT_SEQ.load(Ordering::Relaxed))));
        }
    });
}

/// The first record of the in-place op writing `storage` now (every record so far
/// when no op marked its start), and the end of that op.
pub(crate) fn end_write(storage: u64) -> u64 {
    WRITE_START.with(|w| match w.take() {
        Some((s, start)) if s == storage => start,
        _ => NEXT_SEQ.load(Ordering::Relaxed),
    })
}

/// The records of the store's graph, by node.
#[derive(Default)]
pub(crate) struct Records {
    map: HashMap<NodeId, GradRecord>,
}

impl Records {
    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub(crate) fn contains(&self, node: NodeId) -> bool {
        self.map.contains_key(&node)
    }

    pub(crate) fn get(&self, node: NodeId) -> Option<&GradRecord> {
        self.map.get(&node)
    }

    pub(crate) fn get_mut(&mut self, node: NodeId) -> Option<&mut GradRecord> {
        self.map.get_mut(&node)
    }

    /// Stores `record` for `node`; returns the record it replaces, whose inputs the
    /// caller unpins.
    pub(crate) fn insert(&mut self, node: NodeId, record: GradRecord) -> Option<GradRecord> {
        self.map.insert(node, record)
    }

    pub(crate) fn remove(&mut self, node: NodeId) -> Option<GradRecord> {
        // (every collected node asks, and a program without history has none:
        // no hashing then)
        if self.map.is_empty() {
            return None;
        }
        self.map.remove(&node)
    }

    /// Number of records (a diagnostic for tests of memory per training step).
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

/// Whether a node of `dtype` can carry a gradient.
pub(crate) fn differentiable(dtype: DType) -> bool {
    dtype.is_floating_point() || dtype.is_complex()
}
