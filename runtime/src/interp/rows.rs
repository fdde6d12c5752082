//! The ground the axis kernels share: an input gathered with the axes they work
//! along last, so that it is a `[outer, inner]` matrix of contiguous rows
//! ([`axes_last`], and back: [`restore_axis`]), a function over each row
//! ([`rows`]), and the interpreter's float sum, Neumaier's compensated summation
//! ([`sum`]).

use super::num::Real;
use crate::buffer::Buffer;
use lazyfuse_ir::shape::contiguous_strides;
use lazyfuse_ir::Layout;

/// The layout that reads a contiguous tensor of `shape` with its dims in the order
/// `perm` (a permutation of `0..shape.len()`).
fn permuted(shape: &[usize], perm: &[usize]) -> Layout {
    let strides = contiguous_strides(shape);
    Layout {
        shape: perm.iter().map(|&d| shape[d]).collect(),
        strides: perm.iter().map(|&d| strides[d]).collect(),
        offset: 0,
    }
}

/// Gathers `x` (contiguous, of `shape`) with the `axes` moved last, keeping the
/// relative order of both groups. Returns the buffer and `(outer, inner)`: the
/// number of rows and the row length.
pub(crate) fn axes_last(x: &Buffer, shape: &[usize], axes: &[usize]) -> (Buffer, usize, usize) {
    let mut perm: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    let outer = perm.iter().map(|&d| shape[d]).product();
    perm.extend_from_slice(axes);
    let inner = axes.iter().map(|&d| shape[d]).product();
    (x.gather(&permuted(shape, &perm)), outer, inner)
}

/// Inverse of [`axes_last`] for one axis: `y` has `shape` with `axis` moved last;
/// returns it in `shape`'s own dim order.
pub(crate) fn restore_axis(y: &Buffer, shape: &[usize], axis: usize) -> Buffer {
    let mut perm: Vec<usize> = (0..shape.len()).filter(|&d| d != axis).collect();
    perm.push(axis);
    let moved: Vec<usize> = perm.iter().map(|&d| shape[d]).collect();
    // inverse[d] = position of original dim d in the moved order
    let mut inverse = vec![0; perm.len()];
    for (i, &d) in perm.iter().enumerate() {
        inverse[d] = i;
    }
    y.gather(&permuted(&moved, &inverse))
}

/// `f` applied to each of the `outer` rows of length `inner`.
pub(crate) fn rows<T, U>(v: &[T], outer: usize, inner: usize, f: impl FnMut(&[T]) -> U) -> Vec<U> {
    let mut f = f;
    (0..outer)
        .map(|r| f(&v[r * inner..(r + 1) * inner]))
        .collect()
}

/// Neumaier's compensated sum.
pub(crate) fn sum<R: Real>(values: impl Iterator<Item = R>) -> R {
    let (mut s, mut c) = (R::ZERO, R::ZERO);
    for x in values {
        let t = s + x;
        if s.abs() >= x.abs() {
            c = c + ((s - t) + x);
        } else {
            c = c + ((x - t) + s);
        }
        s = t;
    }
    // An infinite or NaN sum has no meaningful compensation (it would be NaN).
    let total = s + c;
    if total.is_nan() && !s.is_nan() {
        s
    } else {
        total
    }
}
