//! The view ops: pure rewrites of a [`Layout`] (shape, strides, storage offset) that
//! never touch the data, with PyTorch's exact geometry.
//!
//! Every op reproduces what ATen computes, including the strides of size-1 dims and of
//! empty tensors, which do not affect addressing but are observable (`.stride()`) and
//! checked by the conformance corpus. The rules that matter most:
//!
//! * `view`/`reshape`/`unflatten`/`flatten` use ATen's `computeStride`: the input is
//!   cut into "chunks" of dims that are contiguous with each other, and each chunk is
//!   re-split into the requested sizes; a size-1 dim of the result gets the stride the
//!   chunk has at its position. A 0-d input gives every new dim stride 1; an empty input
//!   keeps its strides when the shape is unchanged and otherwise gets row-major strides.
//! * `expand` (`inferExpandGeometry`): an expanded dim gets stride 0; a dim that keeps
//!   its size keeps its stride; a new leading dim of size 1 gets `size * stride` of the
//!   dim after it; a 0-d input gives stride 0 everywhere.
//! * `unsqueeze` inserts stride `shape[d] * strides[d]`, or 1 when appending a last dim.
//! * `slice`/`narrow` move the offset by `start * stride` even when the result is empty;
//!   `diagonal` moves it only when the diagonal is non-empty.
//! * `reshape` and `flatten` answer `None` where PyTorch copies: the caller then makes a
//!   row-major copy, whose layout is `Layout::contiguous(shape)` over the new storage.
//!
//! Dims are Python-style `isize` (negative counts from the end), wrapped with
//! [`wrap_dim`]; errors carry PyTorch's message text.
//!
//! One file per family: `reshape` (view, reshape, flatten, unflatten), `permute`
//! (transpose, permute, movedim, t, mT), `broadcast` (expand, squeeze, unsqueeze),
//! `slice` (narrow, select, slice, diagonal, unfold, as_strided) and `split`
//! (split, chunk, unbind); this file holds the stride arithmetic they share.
//!
//! [`Layout`]: crate::layout::Layout
//! [`wrap_dim`]: crate::shape::wrap_dim

use crate::error::{Error, Result};
use crate::shape::numel;

mod broadcast;
mod permute;
mod reshape;
mod slice;
mod split;
#[cfg(test)]
mod tests;

pub(crate) use split::reserve_views;

/// Formats a signed size list as PyTorch prints `IntArrayRef`s: `[2, -1]`.
pub(super) fn fmt_ishape(shape: &[isize]) -> String {
    let parts: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// `offset + delta` as a storage index; a negative or overflowing result (only
/// reachable through a hand-built layout with negative strides) is an error, not a panic.
pub(super) fn shift(offset: usize, delta: isize) -> Result<usize> {
    isize::try_from(offset)
        .ok()
        .and_then(|o| o.checked_add(delta))
        .and_then(|o| usize::try_from(o).ok())
        .ok_or_else(|| {
            Error::invalid(
                "view",
                format!("storage offset {offset} + {delta} is out of range"),
            )
        })
}

/// `size * stride` in `isize`, as an error rather than a panic on overflow.
pub(super) fn mul_stride(size: usize, stride: isize) -> Result<isize> {
    isize::try_from(size)
        .ok()
        .and_then(|s| s.checked_mul(stride))
        .ok_or_else(|| Error::invalid("view", "stride arithmetic overflows"))
}

/// ATen's `computeStride`: strides that let `new_shape` address the same elements, in
/// the same row-major order, as `(old_shape, old_strides)`; `None` when no such strides
/// exist (some requested dim would span two non-contiguous chunks of the input).
pub(super) fn compute_stride(
    old_shape: &[usize],
    old_strides: &[isize],
    new_shape: &[usize],
) -> Option<Vec<isize>> {
    // A 0-d input has no strides to follow: PyTorch answers 1 everywhere.
    if old_shape.is_empty() {
        return Some(vec![1; new_shape.len()]);
    }
    let old_numel = numel(old_shape);
    if old_numel == 0 {
        // Strides are arbitrary here; PyTorch keeps them for an unchanged shape and
        // otherwise uses the strides a fresh row-major tensor would have.
        if old_shape == new_shape {
            return Some(old_strides.to_vec());
        }
        let mut strides = crate::shape::filled(0isize, new_shape.len());
        for d in (0..new_shape.len()).rev() {
            strides[d] = if d + 1 == new_shape.len() {
                1
            } else {
                (new_shape[d + 1].max(1) as isize).checked_mul(strides[d + 1])?
            };
        }
        return Some(strides);
    }

    let mut new_strides = crate::shape::filled(0isize, new_shape.len());
    let mut view_d = new_shape.len() as isize - 1;
    // Stride of the innermost dim of the current chunk of mutually contiguous dims.
    let mut chunk_base_stride = *old_strides.last()?;
    let mut tensor_numel: isize = 1;
    let mut view_numel: isize = 1;
    for tensor_d in (0..old_shape.len()).rev() {
        tensor_numel = tensor_numel.checked_mul(old_shape[tensor_d] as isize)?;
        // A chunk ends at dim 0 or where the dim before is not contiguous with this one
        // (size-1 dims never break a chunk).
        let chunk_ends = tensor_d == 0
            || (old_shape[tensor_d - 1] != 1
                && Some(old_strides[tensor_d - 1]) != tensor_numel.checked_mul(chunk_base_stride));
        if chunk_ends {
            while view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d as usize] == 1) {
                new_strides[view_d as usize] = view_numel.checked_mul(chunk_base_stride)?;
                view_numel = view_numel.checked_mul(new_shape[view_d as usize] as isize)?;
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if tensor_d > 0 {
                chunk_base_stride = old_strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    if view_d != -1 {
        return None;
    }
    Some(new_strides)
}
