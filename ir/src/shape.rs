//! Shapes: element counts, contiguous strides and Python-style dim wrapping.

use crate::dtype::DType;
/// Shapes print in messages as PyTorch prints them (defined beside the messages).
pub use crate::error::fmt_shape;
use crate::error::{Error, Result};

/// Number of elements of a shape (1 for the zero-dim shape `[]`). A product beyond
/// `usize` saturates at `usize::MAX` (never wraps): such a shape only exists in a
/// tensor whose first realize reports the overflow (see [`checked_numel`]).
///
/// ```
/// assert_eq!(lazyfuse_ir::shape::numel(&[2, 3]), 6);
/// assert_eq!(lazyfuse_ir::shape::numel(&[]), 1);
/// assert_eq!(lazyfuse_ir::shape::numel(&[1 << 62, 4]), usize::MAX);
/// assert_eq!(lazyfuse_ir::shape::numel(&[usize::MAX, 4, 0]), 0);
/// ```
pub fn numel(shape: &[usize]) -> usize {
    if shape.contains(&0) {
        return 0;
    }
    shape.iter().fold(1usize, |acc, &s| acc.saturating_mul(s))
}

/// Whether two shapes are equal, dim by dim. Slice `==` calls the C library's
/// `memcmp`, which costs more than the few dims of a shape; every op compares
/// shapes when it reads its operands.
///
/// ```
/// use lazyfuse_ir::shape::same_shape;
/// assert!(same_shape(&[2, 3], &[2, 3]));
/// assert!(!same_shape(&[2, 3], &[3, 2]));
/// assert!(!same_shape(&[2], &[2, 1]));
/// ```
#[inline]
pub fn same_shape(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Number of elements, or PyTorch's "numel: integer multiplication overflow" when it
/// does not fit `int64` (what `expand`, broadcasting and a computed result check).
///
/// ```
/// use lazyfuse_ir::shape::checked_count;
/// assert_eq!(checked_count(&[1 << 31, 1 << 31]).unwrap(), 1 << 62);
/// assert_eq!(
///     checked_count(&[1 << 40, 1 << 40]).unwrap_err().to_string(),
///     "numel: integer multiplication overflow"
/// );
/// ```
pub fn checked_count(shape: &[usize]) -> Result<usize> {
    if shape.contains(&0) {
        return Ok(0);
    }
    shape
        .iter()
        .try_fold(1usize, |acc, &s| acc.checked_mul(s))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| Error::invalid("numel", "numel: integer multiplication overflow"))
}

/// Number of elements, or PyTorch's error when it (or the storage in bytes of
/// `dtype`) does not fit in memory arithmetic.
///
/// ```
/// use lazyfuse_ir::{shape::checked_numel, DType};
/// assert_eq!(checked_numel(&[2, 3], DType::F32).unwrap(), 6);
/// assert!(checked_numel(&[usize::MAX, 2], DType::F32).is_err());
/// ```
pub fn checked_numel(shape: &[usize], dtype: DType) -> Result<usize> {
    // PyTorch multiplies every size in order (a later zero does not excuse an
    // overflowing prefix).
    shape
        .iter()
        .try_fold(1usize, |acc, &s| acc.checked_mul(s))
        .filter(|n| {
            n.checked_mul(dtype.size_in_bytes())
                .is_some_and(|b| b <= isize::MAX as usize)
        })
        .ok_or_else(|| {
            Error::invalid(
                "empty",
                format!(
                    "Storage size calculation overflowed with sizes={}",
                    fmt_shape(shape)
                ),
            )
        })
}

/// `n` copies of `value`, allocated without zeroing: `vec![0; n]` is a zeroed
/// allocation (calloc), which the system allocator serves from its shared
/// arena under a lock rather than from its per-thread cache, and the shapes,
/// strides and work lists of every op and realize are a few words each.
///
/// ```
/// assert_eq!(lazyfuse_ir::shape::filled(0isize, 3), vec![0, 0, 0]);
/// ```
pub fn filled<T: Clone>(value: T, n: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, value);
    v
}

/// Row-major (C-contiguous) strides of a shape, in elements. Like PyTorch, a
/// size-0 or size-1 dim does not zero the strides of the dims before it: each stride
/// is the product of `max(size, 1)` of the dims after it.
///
/// ```
/// assert_eq!(lazyfuse_ir::shape::contiguous_strides(&[2, 3, 4]), vec![12, 4, 1]);
/// assert_eq!(lazyfuse_ir::shape::contiguous_strides(&[2, 0, 4]), vec![4, 4, 1]);
/// ```
pub fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = filled(0isize, shape.len());
    write_contiguous(shape, &mut strides);
    strides
}

/// [`contiguous_strides`] as a layout's inline strides.
#[inline]
pub fn contiguous_steps(shape: &[usize]) -> crate::layout::Steps {
    // Up to four dims, the strides are computed as values and stored as one
    // array: written one by one into the vector, they are read back by the
    // move of the finished layout, whose 16-byte loads wait for pairs of
    // 8-byte stores to land (`layout::dims_of`).
    let dim = |d: usize| isize::try_from(d.max(1)).unwrap_or(isize::MAX);
    let inline = match *shape {
        [] => [0; 4],
        [_] => [1, 0, 0, 0],
        [_, b] => [dim(b), 1, 0, 0],
        [_, b, c] => {
            let s1 = dim(c);
            [s1.saturating_mul(dim(b)), s1, 1, 0]
        }
        [_, b, c, d] => {
            let s2 = dim(d);
            let s1 = s2.saturating_mul(dim(c));
            [s1.saturating_mul(dim(b)), s1, s2, 1]
        }
        _ => {
            let mut strides = crate::layout::Steps::from_elem(0, shape.len());
            write_contiguous(shape, &mut strides);
            return strides;
        }
    };
    crate::layout::Steps::from_buf_and_len(inline, shape.len())
}

/// Writes `shape`'s row-major strides into `strides` (as long as `shape`).
fn write_contiguous(shape: &[usize], strides: &mut [isize]) {
    // Saturating: the shape of a tensor whose size overflows still gets sane
    // (non-negative, non-wrapping) strides; realizing it reports the overflow.
    let mut acc: isize = 1;
    for i in (0..shape.len()).rev() {
        strides[i] = acc;
        acc = acc.saturating_mul(isize::try_from(shape[i].max(1)).unwrap_or(isize::MAX));
    }
}

/// Wraps a Python-style dim (`-1` is the last) into `0..ndim`, with PyTorch's
/// error text. A zero-dim tensor accepts `-1` and `0` (as PyTorch's scalar wrapping).
///
/// ```
/// assert_eq!(lazyfuse_ir::shape::wrap_dim(-1, 3).unwrap(), 2);
/// assert!(lazyfuse_ir::shape::wrap_dim(3, 3).is_err());
/// ```
pub fn wrap_dim(dim: isize, ndim: usize) -> Result<usize> {
    let n = ndim.max(1) as isize;
    if dim < -n || dim >= n {
        return Err(Error::DimOutOfRange {
            dim,
            min: -n,
            max: n - 1,
        });
    }
    Ok(if dim < 0 {
        (dim + n) as usize
    } else {
        dim as usize
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inline strides of up to four dims are the loop's, dims of 0 and 1
    /// and overflowing products (saturated) included, and five dims take the
    /// loop.
    #[test]
    fn contiguous_steps_match_the_loop() {
        let sizes = [0usize, 1, 2, 3, 7, 1 << 40, usize::MAX];
        for ndim in 0..=5u32 {
            for code in 0..sizes.len().pow(ndim) {
                let shape: Vec<usize> = (0..ndim)
                    .map(|k| sizes[code / sizes.len().pow(k) % sizes.len()])
                    .collect();
                let mut want = vec![0isize; shape.len()];
                write_contiguous(&shape, &mut want);
                let got = contiguous_steps(&shape);
                assert_eq!(got[..], want[..], "{shape:?}");
                assert_eq!(contiguous_strides(&shape), want, "{shape:?}");
            }
        }
    }
}
