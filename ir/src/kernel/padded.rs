//! `ZeroPadded`: an extern step's operand read from a zero-padded buffer that is
//! never stored. A convolution's windows are a strided view of its padded input;
//! the product reads them from the unpadded input instead, and reads zero where a
//! window reaches into the padding.

use std::fmt;

/// The zero-padded buffer an [`ExternView`](super::ExternView) indexes, in place
/// of a stored one: the view's offset and strides step through this buffer's
/// row-major layout of `shape`; its interior (`before[d] .. before[d] +
/// interior[d]` along each dim) is the source buffer's elements, at
/// `source_offset + Σ source_strides[d] · (i_d − before[d])`; everything else
/// reads zero.
///
/// ```
/// use lazyfuse_ir::kernel::ZeroPadded;
/// // a [2, 3] source padded by one on each side of its last dim: [2, 5]
/// let p = ZeroPadded {
///     shape: vec![2, 5],
///     before: vec![0, 1],
///     interior: vec![2, 3],
///     source_offset: 0,
///     source_strides: vec![3, 1],
/// };
/// assert_eq!(p.coords(7), Some(vec![1, 2]));
/// assert_eq!(p.source_index(&[1, 2]), Some(4));
/// assert_eq!(p.source_index(&[1, 0]), None); // padding
/// assert_eq!(p.source_last(), Some(5));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ZeroPadded {
    /// the padded buffer's dims
    pub shape: Vec<usize>,
    /// the interior's first index along each dim
    pub before: Vec<usize>,
    /// the interior's length along each dim (the source's dims)
    pub interior: Vec<usize>,
    /// the source buffer index of the interior's first element
    pub source_offset: usize,
    /// the source buffer step of each dim
    pub source_strides: Vec<usize>,
}

impl ZeroPadded {
    /// Whether the dims agree: one `before`, `interior` and source stride per dim,
    /// each interior inside the padded dim.
    pub fn is_consistent(&self) -> bool {
        let n = self.shape.len();
        self.before.len() == n
            && self.interior.len() == n
            && self.source_strides.len() == n
            && (0..n).all(|d| {
                self.before[d]
                    .checked_add(self.interior[d])
                    .is_some_and(|end| end <= self.shape[d])
            })
    }

    /// The per-dim coordinates of a step (or index) of the padded buffer's
    /// row-major layout, the first dim taking what the others leave; `None` for
    /// an empty buffer.
    pub fn coords(&self, mut step: usize) -> Option<Vec<usize>> {
        if self.shape.contains(&0) {
            return None;
        }
        let mut coords = vec![0; self.shape.len()];
        let mut dense = 1usize;
        for d in (0..self.shape.len()).rev() {
            if d == 0 {
                coords[0] = step / dense;
            } else {
                coords[d] = (step / dense) % self.shape[d];
                step -= coords[d] * dense;
                dense = dense.checked_mul(self.shape[d])?;
            }
        }
        Some(coords)
    }

    /// Whether the view of `dims` × `strides` from `offset` stays inside the padded
    /// buffer with no carry between its dims: each dim's coordinate, summed over
    /// the view's dims, stays below the dim's size, so the coordinates of every
    /// element are the sums of its steps' coordinates (what a reader of the
    /// source computes).
    pub fn holds_view(&self, offset: usize, strides: &[usize], dims: &[usize]) -> bool {
        if !self.is_consistent() || strides.len() != dims.len() || dims.contains(&0) {
            return false;
        }
        let Some(mut reach) = self.coords(offset) else {
            return false;
        };
        for (&st, &n) in strides.iter().zip(dims) {
            let Some(c) = self.coords(st) else {
                return false;
            };
            for (r, c) in reach.iter_mut().zip(c) {
                match c.checked_mul(n - 1).and_then(|v| v.checked_add(*r)) {
                    Some(v) => *r = v,
                    None => return false,
                }
            }
        }
        reach.iter().zip(&self.shape).all(|(r, n)| r < n)
    }

    /// The source buffer index of the padded element at `coords`, or `None` in
    /// the padding.
    pub fn source_index(&self, coords: &[usize]) -> Option<usize> {
        let mut at = self.source_offset;
        for (d, &x) in coords.iter().enumerate().take(self.shape.len()) {
            let i = x.checked_sub(self.before[d])?;
            if i >= self.interior[d] {
                return None;
            }
            at += i * self.source_strides[d];
        }
        Some(at)
    }

    /// The largest source buffer index of the interior (`None` when it is empty,
    /// or the index overflows).
    pub fn source_last(&self) -> Option<usize> {
        if self.interior.contains(&0) {
            return None;
        }
        self.interior
            .iter()
            .zip(&self.source_strides)
            .try_fold(self.source_offset, |acc, (&n, &st)| {
                acc.checked_add((n - 1).checked_mul(st)?)
            })
    }
}

impl fmt::Display for ZeroPadded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "zero_padded(shape={:?}, before={:?}, source(offset={}, strides={:?}, dims={:?}))",
            self.shape, self.before, self.source_offset, self.source_strides, self.interior
        )
    }
}
