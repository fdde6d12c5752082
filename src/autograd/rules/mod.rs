//! One derivative per op: given a node's gradient, its inputs' gradients, as
//! PyTorch's `derivatives.yaml` and `FunctionsManual.cpp` define them (subgradients
//! and NaN included). The rules are written with the tensor API, so gradients are
//! ordinary lazy graph and, built with grad mode on, differentiable again.
//!
//! - `pointwise`: unary, parameterised unary, binary, `where`, casts;
//! - `reduce`: reductions, softmax, scans;
//! - `shape`: views, in-place writes, `cat`, `flip`, indexing, `matmul`;
//! - `custom`: the API ops whose nodes would differentiate otherwise (`clamp`,
//!   `max(dim)`, `matmul` over a transposed operand).
//!
//! Every rule returns one entry per input of the node, `None` where the input needs
//! no gradient; the engine converts each to its input's dtype.

mod custom;
mod pointwise;
mod reduce;
mod shape;

use super::record::Rule;
use crate::error::Result;
use crate::tensor::Tensor;
use lazyfuse_ir::{Error as IrError, Op};

/// What a rule reads: the node's value and inputs, which inputs need a gradient,
/// and the node's gradient.
pub(crate) struct Ctx<'a> {
    pub(crate) value: &'a Tensor,
    pub(crate) inputs: &'a [Tensor],
    /// the inputs as the op was given them, before a float promotion
    pub(crate) originals: &'a [Tensor],
    pub(crate) needs: &'a [bool],
    pub(crate) grad: &'a Tensor,
}

impl Ctx<'_> {
    /// Input `i`.
    pub(crate) fn x(&self, i: usize) -> &Tensor {
        &self.inputs[i]
    }

    /// Input `i` as the op was given it (its dtype before promotion).
    pub(crate) fn orig(&self, i: usize) -> &Tensor {
        &self.originals[i]
    }

    /// `f()` where input `i` needs a gradient.
    pub(crate) fn when(
        &self,
        i: usize,
        f: impl FnOnce() -> Result<Tensor>,
    ) -> Result<Option<Tensor>> {
        if self.needs.get(i).copied().unwrap_or(false) {
            f().map(Some)
        } else {
            Ok(None)
        }
    }
}

/// The gradients of a node's inputs.
pub(crate) fn input_grads(rule: &Rule, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    match rule {
        Rule::Op(op) => match op {
            Op::Cast => Ok(vec![Some(c.grad.clone())]),
            Op::Unary(u) => pointwise::unary(*u, c).map(|g| vec![g]),
            Op::UnaryParam(p) => pointwise::unary_param(*p, c).map(|g| vec![g]),
            Op::Binary(b) => pointwise::binary(*b, c),
            Op::Where => pointwise::where_(c),
            Op::Reduce { op, axes, keepdim } => reduce::reduce(*op, axes, *keepdim, c),
            Op::Softmax { axis, log } => reduce::softmax(*axis, *log, c),
            Op::Cumsum { axis } => reduce::cumsum(*axis, c),
            Op::Scan { op, axis } => reduce::scan(*op, *axis, c),
            Op::View(layout) => shape::view(layout, c),
            Op::WriteView(layout) => shape::write_view(layout, c),
            Op::Matmul => shape::matmul([false, false], c),
            Op::Cat { axis } => shape::cat(*axis, c),
            Op::Flip { axes } => shape::flip(axes, c),
            Op::Gather { axis } => shape::gather(*axis, c),
            Op::IndexSelect { axis } => shape::index_select(*axis, c),
            Op::Take => shape::take(c),
            Op::Scatter {
                axis,
                reduce,
                include_self,
            } => shape::scatter(*axis, *reduce, *include_self, c),
            other => Err(not_implemented(&other.name())),
        },
        Rule::Custom(custom) => custom::input_grads(*custom, c),
        // a leaf's anchor has no inputs: the engine sends its gradient to the leaf
        Rule::Leaf(_) => Ok(Vec::new()),
    }
}

/// PyTorch's error for an op without a derivative.
pub(crate) fn not_implemented(name: &str) -> crate::Error {
    IrError::invalid(
        "backward",
        format!("the derivative for '{name}' is not implemented."),
    )
    .into()
}

/// A gradient of `x`'s shape and dtype that is zero everywhere.
pub(crate) fn zeros_like(x: &Tensor) -> Result<Tensor> {
    x.zeros_like(None)
}

/// `g`, the gradient of a reduction of a tensor of `shape` over `axes`, spread back
/// over that shape (its reduced dims restored first when the output dropped them).
pub(crate) fn unreduce(
    g: &Tensor,
    shape: &[usize],
    axes: &[usize],
    keepdim: bool,
) -> Result<Tensor> {
    if shape.is_empty() {
        return g.reshape(&[]);
    }
    let kept: Vec<isize> = (0..shape.len())
        .map(|d| {
            if axes.contains(&d) {
                1
            } else {
                shape[d] as isize
            }
        })
        .collect();
    let g = if keepdim {
        g.clone()
    } else {
        g.reshape(&kept)?
    };
    let target: Vec<isize> = shape.iter().map(|&n| n as isize).collect();
    g.expand(&target)
}

/// The number of elements a reduction over `axes` of `shape` combines.
pub(crate) fn reduced_count(shape: &[usize], axes: &[usize]) -> usize {
    if shape.is_empty() {
        return 1;
    }
    axes.iter().map(|&a| shape[a]).product()
}
