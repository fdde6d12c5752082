//! `Layout`: how a tensor's logical elements sit in its storage — shape, strides
//! (in elements, may be 0 or negative-free here) and storage offset.
//!
//! A view never copies: it is a new `Layout` over the same storage. The view ops
//! themselves (`view`, `transpose`, `expand`, …) live in `view.rs`; this file holds
//! the struct and the queries every consumer needs (contiguity, overlap, addressing).

use crate::shape::numel;
use std::fmt;

/// A layout's shape: up to four dims inline (every tensor carries one, and most
/// have few dims, so building one allocates nothing).
pub type Dims = smallvec::SmallVec<[usize; 4]>;

/// A layout's strides, inline as [`Dims`].
pub type Steps = smallvec::SmallVec<[isize; 4]>;

/// `shape` as [`Dims`], as `Dims::from_slice` makes it. Up to four dims are
/// loaded as values and stored as one array: copied in pieces, they are read
/// back by the move of the value they end up in, whose 16-byte loads cannot
/// take data from two narrower stores in flight and wait for them to land.
///
/// ```
/// use lazyfuse_ir::layout::dims_of;
/// assert_eq!(dims_of(&[2, 3])[..], [2, 3]);
/// assert_eq!(dims_of(&[])[..], [0usize; 0]);
/// assert_eq!(dims_of(&[1, 2, 3, 4, 5])[..], [1, 2, 3, 4, 5]);
/// ```
#[inline]
pub fn dims_of(shape: &[usize]) -> Dims {
    let inline = match *shape {
        [] => [0; 4],
        [a] => [a, 0, 0, 0],
        [a, b] => [a, b, 0, 0],
        [a, b, c] => [a, b, c, 0],
        [a, b, c, d] => [a, b, c, d],
        _ => return Dims::from_slice(shape),
    };
    Dims::from_buf_and_len(inline, shape.len())
}

/// Shape, strides and storage offset of a tensor over its storage.
///
/// ```
/// use lazyfuse_ir::Layout;
/// let l = Layout::contiguous(&[2, 3]);
/// assert_eq!(l.strides[..], [3, 1]);
/// assert!(l.is_contiguous());
/// assert_eq!(l.offsets().collect::<Vec<_>>(), vec![0, 1, 2, 3, 4, 5]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// Size of each dim.
    pub shape: Dims,
    /// Step in storage elements between neighbours along each dim.
    pub strides: Steps,
    /// Storage index of the element at all-zero indices.
    pub offset: usize,
}

impl Layout {
    /// The row-major layout of `shape` at offset 0.
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout {
            shape: dims_of(shape),
            strides: crate::shape::contiguous_steps(shape),
            offset: 0,
        }
    }

    /// Number of dims.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of logical elements.
    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }

    /// PyTorch's `is_contiguous`: empty tensors are contiguous; otherwise every dim of
    /// size != 1, walked from the last, has the stride of a row-major layout.
    pub fn is_contiguous(&self) -> bool {
        if self.numel() == 0 {
            return true;
        }
        let mut expected: isize = 1;
        for i in (0..self.ndim()).rev() {
            if self.shape[i] == 1 {
                continue;
            }
            if self.strides[i] != expected {
                return false;
            }
            expected *= self.shape[i] as isize;
        }
        true
    }

    /// True when this is exactly the row-major layout of `shape` at offset 0 over a
    /// storage of exactly `numel` elements: reading it is reading the storage itself.
    pub fn is_identity_of(&self, storage_numel: usize) -> bool {
        self.offset == 0 && self.numel() == storage_numel && self.is_contiguous()
    }

    /// PyTorch's `is_non_overlapping_and_dense`: the elements fill a contiguous block
    /// of storage exactly once, in some dim order.
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        if self.numel() == 0 || self.is_contiguous() {
            return true;
        }
        let mut perm: Vec<usize> = (0..self.ndim()).collect();
        // Sort dims by stride, size-1 dims last so they never break density.
        perm.sort_by(|&a, &b| {
            let ka = (self.shape[a] < 2, self.strides[a]);
            let kb = (self.shape[b] < 2, self.strides[b]);
            ka.cmp(&kb)
        });
        let mut expected: isize = 1;
        for &d in &perm {
            let size = self.shape[d];
            if size == 1 {
                continue;
            }
            if self.strides[d] != expected {
                return false;
            }
            expected *= size as isize;
        }
        true
    }

    /// PyTorch's `has_internal_overlap` answering "yes": some dim of size > 1 has
    /// stride 0, so several elements share one storage location. (Overlaps PyTorch
    /// finds "too hard" to prove, such as an overlapping `unfold`, are not reported.)
    pub fn has_internal_overlap(&self) -> bool {
        if self.is_non_overlapping_and_dense() {
            return false;
        }
        self.shape
            .iter()
            .zip(&self.strides)
            .any(|(&s, &st)| s > 1 && st == 0)
    }

    /// One past the largest storage index addressed (0 for empty tensors): the storage
    /// must hold at least this many elements.
    pub fn required_storage(&self) -> usize {
        if self.numel() == 0 {
            return 0;
        }
        // Saturating: a layout whose extent overflows needs "all of memory", which
        // no storage has (such layouts only exist over tensors that cannot realize).
        let mut max = self.offset;
        for (&s, &st) in self.shape.iter().zip(&self.strides) {
            if st > 0 {
                max = max.saturating_add((s - 1).saturating_mul(st as usize));
            }
        }
        max.saturating_add(1)
    }

    /// Storage index of every logical element, in row-major order of the shape.
    pub fn offsets(&self) -> StridedOffsets<'_> {
        StridedOffsets::new(self)
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "shape={:?}, strides={:?}, offset={}",
            self.shape, self.strides, self.offset
        )
    }
}

/// Iterator over the storage indices of a layout in row-major logical order.
pub struct StridedOffsets<'a> {
    layout: &'a Layout,
    index: Vec<usize>,
    next: Option<isize>,
}

impl<'a> StridedOffsets<'a> {
    fn new(layout: &'a Layout) -> Self {
        let next = if layout.numel() == 0 {
            None
        } else {
            Some(layout.offset as isize)
        };
        StridedOffsets {
            layout,
            index: vec![0; layout.ndim()],
            next,
        }
    }
}

impl Iterator for StridedOffsets<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let current = self.next?;
        // Advance the multi-index like an odometer, last dim fastest.
        let mut pos = current;
        let mut d = self.layout.ndim();
        loop {
            if d == 0 {
                self.next = None;
                break;
            }
            d -= 1;
            self.index[d] += 1;
            pos += self.layout.strides[d];
            if self.index[d] < self.layout.shape[d] {
                self.next = Some(pos);
                break;
            }
            pos -= self.layout.strides[d] * self.layout.shape[d] as isize;
            self.index[d] = 0;
        }
        Some(current as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_of_transpose() {
        let l = Layout {
            shape: vec![3, 2].into(),
            strides: vec![1, 3].into(),
            offset: 1,
        };
        assert_eq!(l.offsets().collect::<Vec<_>>(), vec![1, 4, 2, 5, 3, 6]);
        assert!(!l.is_contiguous());
        assert!(l.is_non_overlapping_and_dense());
        assert_eq!(l.required_storage(), 7);
    }

    #[test]
    fn zero_dim_and_empty() {
        let l = Layout::contiguous(&[]);
        assert_eq!(l.offsets().collect::<Vec<_>>(), vec![0]);
        let e = Layout::contiguous(&[2, 0]);
        assert_eq!(e.offsets().count(), 0);
        assert!(e.is_contiguous());
    }

    #[test]
    fn expanded_overlaps() {
        let l = Layout {
            shape: vec![2, 3].into(),
            strides: vec![0, 1].into(),
            offset: 0,
        };
        assert!(l.has_internal_overlap());
        assert!(!Layout::contiguous(&[2, 3]).has_internal_overlap());
    }
}
