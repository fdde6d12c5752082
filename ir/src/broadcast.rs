//! Broadcasting: the common shape of several operands, as PyTorch's `infer_size`.
//!
//! Shapes are aligned from the right; at each dim the sizes must be equal or one of
//! them must be 1. A size-0 dim is *not* 1-like: it matches only 0 or 1 (`[0] + [1]`
//! is `[0]`, `[0] + [2]` is an error).

use crate::error::{Error, Result};

/// The broadcast shape of two shapes, with PyTorch's error text on failure.
///
/// The error names the sizes of `a` and `b` at the failing dim, counted in the
/// result's dims; dims are checked from the last to the first, so the reported dim is
/// the rightmost failing one (as PyTorch reports it).
///
/// ```
/// use lazyfuse_ir::broadcast::broadcast_shapes;
/// assert_eq!(broadcast_shapes(&[5, 1, 4, 1], &[3, 1, 1]).unwrap()[..], [5, 3, 4, 1]);
/// assert_eq!(broadcast_shapes(&[0], &[1]).unwrap()[..], [0]);
/// let err = broadcast_shapes(&[5, 2, 4, 1], &[3, 1, 1]).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1"
/// );
/// ```
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<crate::layout::Dims> {
    // (the common cases, equal shapes and a zero-dim operand, give one of the
    // shapes as it is)
    if b.is_empty() || crate::shape::same_shape(a, b) || a.is_empty() {
        let out = crate::layout::Dims::from_slice(if a.is_empty() { b } else { a });
        crate::shape::checked_count(&out)?;
        return Ok(out);
    }
    let ndim = a.len().max(b.len());
    let mut out = crate::layout::Dims::from_elem(0, ndim);
    for dim in (0..ndim).rev() {
        let offset = ndim - 1 - dim;
        // A missing leading dim behaves as a size-1 dim.
        let size_a = if offset < a.len() {
            a[a.len() - 1 - offset]
        } else {
            1
        };
        let size_b = if offset < b.len() {
            b[b.len() - 1 - offset]
        } else {
            1
        };
        out[dim] = if size_a == size_b || size_b == 1 {
            size_a
        } else if size_a == 1 {
            size_b
        } else {
            return Err(Error::Broadcast {
                size_a,
                size_b,
                dim,
            });
        };
    }
    // The result must be a tensor that can exist: PyTorch's numel check of the output.
    crate::shape::checked_count(&out)?;
    Ok(out)
}

/// The broadcast shape of any number of shapes, folded left to right as PyTorch's
/// `TensorIterator` does (so an error's "tensor a" is the shape broadcast so far).
/// No shapes at all give the zero-dim shape `[]`.
///
/// ```
/// use lazyfuse_ir::broadcast::broadcast_all;
/// assert_eq!(broadcast_all(&[&[2, 1], &[3], &[1, 1, 1]]).unwrap(), vec![1, 2, 3]);
/// assert!(broadcast_all(&[&[2], &[3]]).is_err());
/// ```
pub fn broadcast_all(shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let mut acc: Vec<usize> = Vec::new();
    for (i, shape) in shapes.iter().enumerate() {
        acc = if i == 0 {
            shape.to_vec()
        } else {
            broadcast_shapes(&acc, shape)?.to_vec()
        };
    }
    Ok(acc)
}

/// Checks that `other` broadcasts into an in-place destination of shape `dest`
/// without changing it (`a.add_(b)` may broadcast `b`, never `a`). A pair that does
/// not broadcast at all gives [`Error::Broadcast`], as PyTorch reports it first;
/// one whose broadcast shape differs from `dest` gives [`Error::InplaceShape`].
///
/// ```
/// use lazyfuse_ir::broadcast::inplace_shape;
/// assert!(inplace_shape(&[2, 3], &[3]).is_ok());
/// let err = inplace_shape(&[1, 3, 1], &[3, 1, 7]).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "output with shape [1, 3, 1] doesn't match the broadcast shape [3, 3, 7]"
/// );
/// ```
pub fn inplace_shape(dest: &[usize], other: &[usize]) -> Result<()> {
    let broadcast = broadcast_shapes(dest, other)?;
    if broadcast[..] != *dest {
        return Err(Error::InplaceShape {
            output: dest.to_vec(),
            broadcast: broadcast.to_vec(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_size_only_matches_zero_or_one() {
        assert_eq!(broadcast_shapes(&[0], &[1]).unwrap()[..], [0]);
        assert_eq!(broadcast_shapes(&[1], &[0]).unwrap()[..], [0]);
        assert_eq!(broadcast_shapes(&[2, 0], &[0]).unwrap()[..], [2, 0]);
        assert_eq!(
            broadcast_shapes(&[0], &[2, 2]).unwrap_err(),
            Error::Broadcast {
                size_a: 0,
                size_b: 2,
                dim: 1
            }
        );
    }

    #[test]
    fn rightmost_failing_dim_is_reported() {
        assert_eq!(
            broadcast_shapes(&[2, 3], &[3, 4]).unwrap_err(),
            Error::Broadcast {
                size_a: 3,
                size_b: 4,
                dim: 1
            }
        );
        assert!(broadcast_shapes(&[], &[]).unwrap().is_empty());
        assert_eq!(broadcast_all(&[]).unwrap(), Vec::<usize>::new());
    }
}
