//! Derivatives of the ops that move elements: views, in-place writes (PyTorch's
//! `CopySlices`), `cat`, `flip`, the indexing ops and `matmul`.

use super::{zeros_like, Ctx};
use crate::error::Result;
use crate::tensor::Tensor;
use lazyfuse_ir::{DType, Error as IrError, Layout, ScatterReduce};

/// `t`'s elements read through `layout`, a layout over the row-major elements of a
/// tensor of `t`'s shape.
pub(crate) fn strided_read(t: &Tensor, layout: &Layout) -> Result<Tensor> {
    if layout.shape == t.strided_layout().shape && layout.is_identity_of(t.numel()) {
        return Ok(t.clone());
    }
    let t = t.contiguous()?;
    t.as_strided(
        &layout.shape,
        &layout.strides,
        t.storage_offset() + layout.offset,
    )
}

/// Whether no two elements of `layout` address one position (a sufficient test:
/// sorted by stride, each dim steps past everything the smaller ones reach).
fn non_overlapping(layout: &Layout) -> bool {
    let mut dims: Vec<(isize, usize)> = layout
        .strides
        .iter()
        .zip(&layout.shape)
        .filter(|(_, &n)| n > 1)
        .map(|(&s, &n)| (s, n))
        .collect();
    dims.sort_by_key(|&(s, _)| s.unsigned_abs());
    let mut reach: usize = 0;
    for (s, n) in dims {
        if s.unsigned_abs() <= reach {
            return false;
        }
        reach += s.unsigned_abs() * (n - 1);
    }
    true
}

/// When `layout` reads each of `n` elements exactly once from offset 0 (a
/// permutation of a reshape: a transpose, a broadcast summed away), the order of
/// its dims that lists them by decreasing stride (size-1 dims last): permuted so,
/// the view's elements are in row-major order.
fn dense_order(layout: &Layout, n: usize) -> Option<Vec<isize>> {
    if layout.offset != 0 || layout.numel() != n {
        return None;
    }
    let mut big: Vec<usize> = (0..layout.shape.len())
        .filter(|&d| layout.shape[d] > 1)
        .collect();
    big.sort_by_key(|&d| std::cmp::Reverse(layout.strides[d]));
    let mut expected: isize = 1;
    for &d in big.iter().rev() {
        if layout.strides[d] != expected {
            return None;
        }
        expected = expected.checked_mul(layout.shape[d] as isize)?;
    }
    let ones = (0..layout.shape.len()).filter(|&d| layout.shape[d] <= 1);
    Some(big.into_iter().chain(ones).map(|d| d as isize).collect())
}

/// The gradient of a view of `x` through `layout`: summed over broadcast dims,
/// then written back where the view reads (a scatter-add where it reads a position
/// more than once, as `unfold` does).
/// The sum of `g` over its `broadcast` dims (ascending), kept as size 1. Where
/// they are a trailing run and some other dims (a bias's gradient: dims 0, 2, 3
/// of `[N, C, H, W]`), the trailing run is summed first: one reduction over the
/// other dims and the run together walks the run's contiguous elements with an
/// odometer per element, while two reductions each run a contiguous or a column
/// loop.
fn sum_broadcast(g: &Tensor, broadcast: &[isize]) -> Result<Tensor> {
    let nd = g.ndim() as isize;
    let run = broadcast
        .iter()
        .rev()
        .zip((0..nd).rev())
        .take_while(|(&d, e)| d == *e)
        .count();
    if run == 0 || run == broadcast.len() {
        return g.sum(broadcast, true);
    }
    let (outer, trailing) = broadcast.split_at(broadcast.len() - run);
    g.sum(trailing, true)?.sum(outer, true)
}

pub(super) fn view(layout: &Layout, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let (x, g) = (c.x(0), c.grad);
    Ok(vec![c.when(0, || {
        let shape: Vec<isize> = x.shape().iter().map(|&n| n as isize).collect();
        if layout.is_identity_of(x.numel()) {
            return g.reshape(&shape);
        }
        let mut layout = layout.clone();
        let broadcast: Vec<isize> = (0..layout.shape.len())
            .filter(|&d| layout.strides[d] == 0 && layout.shape[d] > 1)
            .map(|d| d as isize)
            .collect();
        let g = if broadcast.is_empty() {
            g.clone()
        } else {
            for &d in &broadcast {
                layout.shape[d as usize] = 1;
            }
            sum_broadcast(g, &broadcast)?
        };
        if let Some(order) = dense_order(&layout, x.numel()) {
            // every element once: the gradient is the output's, reordered
            return g.permute(&order)?.reshape(&shape);
        }
        let zeros = zeros_like(x)?;
        if non_overlapping(&layout) {
            let region = zeros.as_strided(&layout.shape, &layout.strides, layout.offset)?;
            region.copy_(&g)?;
            return Ok(zeros);
        }
        let n = x.numel();
        let positions = Tensor::arange_on(0.0, n as f64, 1.0, DType::I64, x.device())?
            .as_strided(&layout.shape, &layout.strides, layout.offset)?
            .reshape(&[-1])?;
        zeros
            .reshape(&[-1])?
            .scatter_add(0, &positions, &g.reshape(&[-1])?)?
            .reshape(&shape)
    })?])
}

/// The gradients of a write of `value` into `base` through `layout`: the base's
/// is the output's with the written region zeroed, the value's is that region.
pub(super) fn write_view(layout: &Layout, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let g = c.grad;
    Ok(vec![
        c.when(0, || {
            let kept = g.clone_in(crate::MemoryFormat::Contiguous)?;
            kept.as_strided(&layout.shape, &layout.strides, layout.offset)?
                .fill_(0.0)?;
            Ok(kept)
        })?,
        c.when(1, || strided_read(g, layout))?,
    ])
}

/// The gradients of a batched `[b, m, k] @ [b, k, n]`. An operand marked
/// `transposed` (it reads a column-major matrix) gets its gradient as the transpose
/// of the transposed product, which has the same elements (each is the same sum
/// of the same products, in the same order) and lies column-major as the operand.
pub(super) fn matmul(transposed: [bool; 2], c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let (a, b, g) = (c.x(0), c.x(1), c.grad);
    Ok(vec![
        c.when(0, || match transposed[0] {
            false => g.matmul(&b.transpose(1, 2)?),
            true => b.matmul(&g.transpose(1, 2)?)?.transpose(1, 2),
        })?,
        c.when(1, || match transposed[1] {
            false => a.transpose(1, 2)?.matmul(g),
            true => g.transpose(1, 2)?.matmul(a)?.transpose(1, 2),
        })?,
    ])
}

/// The gradients of `cat` along `axis`: the slices of the output's.
pub(super) fn cat(axis: usize, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let mut offset = 0usize;
    let mut out = Vec::with_capacity(c.inputs.len());
    for (i, x) in c.inputs.iter().enumerate() {
        let len = x.shape().get(axis).copied().unwrap_or(0);
        let start = offset as isize;
        out.push(c.when(i, || c.grad.narrow(axis as isize, start, len))?);
        offset += len;
    }
    Ok(out)
}

/// The gradient of `flip`: the flipped gradient.
pub(super) fn flip(axes: &[usize], c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let dims: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
    Ok(vec![c.when(0, || c.grad.flip(&dims))?])
}

/// The gradient of `gather`: the output's added back at the gathered positions.
///
/// One index per row (`x.gather(1, y)` with `y` of shape `[N, 1]`, cross-entropy's
/// pick) selects instead of scattering: `where(index == position, g, 0)` is
/// elementwise, so it fuses with what reads it, and it is the scatter's value
/// exactly (one addend per element; `+ 0` turns `-0` into the scatter's `+0`).
pub(super) fn gather(axis: usize, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let (x, index, g) = (c.x(0), c.x(1), c.grad);
    let picks_one = x.ndim() > 0
        && x.ndim() == index.ndim()
        && (0..x.ndim()).all(|d| index.shape()[d] == if d == axis { 1 } else { x.shape()[d] });
    Ok(vec![
        c.when(0, || {
            if !picks_one {
                return zeros_like(x)?.scatter_add(axis as isize, index, g);
            }
            let n = x.shape()[axis];
            let mut along = vec![1isize; x.ndim()];
            along[axis] = n as isize;
            let position =
                Tensor::arange_on(0.0, n as f64, 1.0, DType::I64, x.device())?.reshape(&along)?;
            Tensor::where_cond(&index.eq(&position)?, g, 0.0)?.add(0.0)
        })?,
        None,
    ])
}

/// The gradient of `index_select`: the output's added back at the selected rows.
pub(super) fn index_select(axis: usize, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let (x, index, g) = (c.x(0), c.x(1), c.grad);
    Ok(vec![
        c.when(0, || {
            if x.ndim() == 0 {
                return g.reshape(&[]);
            }
            zeros_like(x)?.index_add(axis as isize, index, g, 1)
        })?,
        None,
    ])
}

/// The gradient of `take`: the output's added back at the taken positions of the
/// flattened input.
pub(super) fn take(c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let (x, index, g) = (c.x(0), c.x(1), c.grad);
    Ok(vec![
        c.when(0, || {
            let n = x.numel() as i64;
            let flat = index.reshape(&[-1])?;
            let wrapped = Tensor::where_cond(&flat.lt(0)?, &flat.add(n)?, &flat)?;
            let shape: Vec<isize> = x.shape().iter().map(|&s| s as isize).collect();
            zeros_like(x)?
                .reshape(&[-1])?
                .index_add(0, &wrapped, &g.reshape(&[-1])?, 1)?
                .reshape(&shape)
        })?,
        None,
    ])
}

/// The gradients of `scatter` and `scatter_reduce` (sum and mean).
pub(super) fn scatter(
    axis: usize,
    reduce: Option<ScatterReduce>,
    include_self: bool,
    c: &Ctx,
) -> Result<Vec<Option<Tensor>>> {
    let (index, src, g) = (c.x(1), c.x(2), c.grad);
    let d = axis as isize;
    let (gx, gs) = match reduce {
        None | Some(ScatterReduce::Sum) => {
            let overwritten = reduce.is_none() || !include_self;
            (
                c.when(0, || {
                    if overwritten {
                        g.scatter_value(d, index, 0.0)
                    } else {
                        Ok(g.clone())
                    }
                })?,
                c.when(2, || g.gather(d, index))?,
            )
        }
        Some(ScatterReduce::Mean) => {
            let start = if include_self {
                g.ones_like(None)?
            } else {
                g.zeros_like(None)?
            };
            let n = start.scatter_add(d, index, &src.ones_like(None)?)?;
            let n = n.masked_fill(&n.eq(0.0)?, 1.0)?;
            (
                c.when(0, || {
                    let share = g.div(&n)?;
                    if include_self {
                        Ok(share)
                    } else {
                        share.scatter_value(d, index, 0.0)
                    }
                })?,
                c.when(2, || g.gather(d, index)?.div(&n.gather(d, index)?))?,
            )
        }
        Some(other) => {
            return Err(IrError::Unsupported(format!(
                "the derivative of scatter_reduce with reduce=\"{}\"",
                other.name()
            ))
            .into())
        }
    };
    Ok(vec![gx, None, gs])
}
