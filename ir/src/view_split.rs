//! Splits into pieces given by count or by boundaries: `tensor_split` and the
//! direction-named `hsplit`, `vsplit`, `dsplit` (PyTorch's numpy-style splits). Every
//! piece is a view of the input ([`Layout::narrow`] or [`Layout::slice`]).

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::shape::wrap_dim;
use crate::view::reserve_views;

/// How `tensor_split` and the direction-named splits cut a dim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sections<'a> {
    /// this many pieces, as equal as they can be (the first `size % n` one longer)
    Count(usize),
    /// cut before each of these indices (Python slice bounds: negatives count from the
    /// end, out-of-range values are clamped, a bound below the previous gives an empty
    /// piece)
    Indices(&'a [isize]),
}

impl Layout {
    /// `Tensor.tensor_split(sections, dim)` / `tensor_split(indices, dim)`.
    ///
    /// ```
    /// use lazyfuse_ir::{view_split::Sections, Layout};
    /// let l = Layout::contiguous(&[7]);
    /// let sizes = |p: Vec<Layout>| p.iter().map(|l| l.shape[0]).collect::<Vec<_>>();
    /// assert_eq!(sizes(l.tensor_split(Sections::Count(3), 0).unwrap()), vec![3, 2, 2]);
    /// assert_eq!(sizes(l.tensor_split(Sections::Indices(&[1, 5]), 0).unwrap()), vec![1, 4, 2]);
    /// ```
    pub fn tensor_split(&self, sections: Sections, dim: isize) -> Result<Vec<Layout>> {
        if self.ndim() == 0 {
            return Err(Error::invalid(
                "tensor_split",
                format!(
                    "tensor_split expected at least a 1-dimensional tensor, but got a tensor with {} dims",
                    self.ndim()
                ),
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        match sections {
            Sections::Count(0) => Err(Error::invalid(
                "tensor_split",
                "number of sections must be larger than 0, got 0",
            )),
            Sections::Count(n) => {
                let size = self.shape[d];
                let (base, longer) = (size / n, size % n);
                let mut out = reserve_views("tensor_split", n)?;
                let mut start = 0usize;
                for i in 0..n {
                    let len = base + usize::from(i < longer);
                    out.push(self.narrow(d as isize, start as isize, len)?);
                    start += len;
                }
                Ok(out)
            }
            Sections::Indices(indices) => {
                let mut out = reserve_views("tensor_split", indices.len().saturating_add(1))?;
                let mut start = 0isize;
                for &stop in indices {
                    out.push(self.slice(d as isize, Some(start), Some(stop), 1)?);
                    start = stop;
                }
                out.push(self.slice(d as isize, Some(start), None, 1)?);
                Ok(out)
            }
        }
    }

    /// `Tensor.hsplit`: [`Layout::tensor_split`] along dim 1 (dim 0 of a 1-D
    /// layout); a count must divide the dim.
    ///
    /// ```
    /// use lazyfuse_ir::{view_split::Sections, Layout};
    /// let l = Layout::contiguous(&[3, 4]);
    /// assert_eq!(l.hsplit(Sections::Count(2)).unwrap()[1].offset, 2);
    /// assert!(l.hsplit(Sections::Count(3)).is_err());
    /// ```
    pub fn hsplit(&self, sections: Sections) -> Result<Vec<Layout>> {
        let dim = if self.ndim() >= 2 { 1 } else { 0 };
        self.directional_split("hsplit", 1, dim, sections)
    }

    /// `Tensor.vsplit`: [`Layout::tensor_split`] along dim 0 of a layout of at least 2
    /// dims; a count must divide the dim.
    ///
    /// ```
    /// use lazyfuse_ir::{view_split::Sections, Layout};
    /// let l = Layout::contiguous(&[4, 3]);
    /// assert_eq!(l.vsplit(Sections::Indices(&[1])).unwrap()[1].shape[..], [3, 3]);
    /// assert!(Layout::contiguous(&[4]).vsplit(Sections::Count(2)).is_err());
    /// ```
    pub fn vsplit(&self, sections: Sections) -> Result<Vec<Layout>> {
        self.directional_split("vsplit", 2, 0, sections)
    }

    /// `Tensor.dsplit`: [`Layout::tensor_split`] along dim 2 of a layout of at least 3
    /// dims; a count must divide the dim.
    ///
    /// ```
    /// use lazyfuse_ir::{view_split::Sections, Layout};
    /// let l = Layout::contiguous(&[2, 3, 4]);
    /// assert_eq!(l.dsplit(Sections::Count(2)).unwrap()[0].shape[..], [2, 3, 2]);
    /// ```
    pub fn dsplit(&self, sections: Sections) -> Result<Vec<Layout>> {
        self.directional_split("dsplit", 3, 2, sections)
    }

    /// The direction-named splits: at least `min_dims` dims, then `tensor_split` along
    /// `dim`, a count dividing the dim exactly.
    fn directional_split(
        &self,
        name: &str,
        min_dims: usize,
        dim: usize,
        sections: Sections,
    ) -> Result<Vec<Layout>> {
        let op = format!("torch.{name}");
        if self.ndim() < min_dims {
            return Err(Error::invalid(
                op.clone(),
                format!(
                    "{op} requires a tensor with at least {min_dims} dimension, but got a tensor with {} dimensions!",
                    self.ndim()
                ),
            ));
        }
        if let Sections::Count(n) = sections {
            let size = self.shape[dim];
            if n == 0 || !size.is_multiple_of(n) {
                return Err(Error::invalid(
                    op.clone(),
                    format!(
                        "{op} attempted to split along dimension {dim}, but the size of the dimension {size} is not divisible by the split_size {n}!"
                    ),
                ));
            }
        }
        self.tensor_split(sections, dim as isize)
    }
}
