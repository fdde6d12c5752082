//! Views that reorder or drop several dims at once: `T` (every dim reversed),
//! `movedim` with lists of dims, `squeeze` with a list of dims, and the matrix
//! transposes `mH`/`H`/`adjoint` (of real layouts: the conjugate is the tensor's
//! business, not the layout's).

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::shape::wrap_dim;

impl Layout {
    /// `Tensor.T`: every dim reversed (0-D and 1-D layouts stay as they are).
    ///
    /// ```
    /// use lazyfuse_ir::Layout;
    /// let l = Layout::contiguous(&[2, 3, 4]).reversed_dims();
    /// assert_eq!((&l.shape[..], &l.strides[..]), (&[4, 3, 2][..], &[1, 4, 12][..]));
    /// ```
    pub fn reversed_dims(&self) -> Layout {
        Layout {
            shape: self.shape.iter().rev().copied().collect(),
            strides: self.strides.iter().rev().copied().collect(),
            offset: self.offset,
        }
    }

    /// `Tensor.movedim(source, destination)` with lists: each `source[i]` goes to
    /// `destination[i]`, the other dims keep their order in the places left.
    ///
    /// ```
    /// use lazyfuse_ir::Layout;
    /// let l = Layout::contiguous(&[2, 3, 4]).movedims(&[0, 1], &[2, 0]).unwrap();
    /// assert_eq!((&l.shape[..], &l.strides[..]), (&[3, 4, 2][..], &[4, 1, 12][..]));
    /// assert!(Layout::contiguous(&[2, 3]).movedims(&[0, -2], &[0, 1]).is_err());
    /// ```
    pub fn movedims(&self, source: &[isize], destination: &[isize]) -> Result<Layout> {
        let n = self.ndim();
        if source.len() != destination.len() {
            return Err(Error::invalid(
                "movedim",
                format!(
                    "movedim: Invalid source or destination dims: source ({source:?} dims) should contain the same number of dims as destination ({destination:?} dims)"
                ),
            ));
        }
        let wrap = |dims: &[isize], what: &str| -> Result<Vec<usize>> {
            let wrapped = dims
                .iter()
                .map(|&d| wrap_dim(d, n))
                .collect::<Result<Vec<usize>>>()?;
            let mut seen = vec![false; n.max(1)];
            for &d in &wrapped {
                if std::mem::replace(&mut seen[d], true) {
                    return Err(Error::invalid(
                        "movedim",
                        format!("movedim: repeated dim in `{what}` ({dims:?})"),
                    ));
                }
            }
            Ok(wrapped)
        };
        let src = wrap(source, "source")?;
        let dst = wrap(destination, "destination")?;
        if n == 0 {
            return Ok(self.clone());
        }
        let mut order: Vec<Option<usize>> = vec![None; n];
        for (&s, &d) in src.iter().zip(&dst) {
            order[d] = Some(s);
        }
        let mut rest = (0..n).filter(|d| !src.contains(d));
        let order: Vec<usize> = order
            .into_iter()
            .map(|o| o.or_else(|| rest.next()).unwrap_or(0))
            .collect();
        Ok(Layout {
            shape: order.iter().map(|&i| self.shape[i]).collect(),
            strides: order.iter().map(|&i| self.strides[i]).collect(),
            offset: self.offset,
        })
    }

    /// `Tensor.squeeze(dims)`: drops each listed dim whose size is 1 (the others
    /// stay); a dim listed twice is PyTorch's error.
    ///
    /// ```
    /// use lazyfuse_ir::Layout;
    /// let l = Layout::contiguous(&[1, 2, 1, 3, 1]);
    /// assert_eq!(l.squeeze_dims(&[0, 1, -1]).unwrap().shape[..], [2, 1, 3]);
    /// assert!(l.squeeze_dims(&[0, -5]).is_err());
    /// ```
    pub fn squeeze_dims(&self, dims: &[isize]) -> Result<Layout> {
        let n = self.ndim();
        let mut drop = vec![false; n.max(1)];
        let mut seen = vec![false; n.max(1)];
        for &dim in dims {
            let d = wrap_dim(dim, n)?;
            if std::mem::replace(&mut seen[d], true) {
                return Err(Error::invalid(
                    "squeeze",
                    format!("dim {d} appears multiple times in the list of dims"),
                ));
            }
            drop[d] = n > 0 && self.shape[d] == 1;
        }
        let (shape, strides) = (0..n)
            .filter(|&d| !drop[d])
            .map(|d| (self.shape[d], self.strides[d]))
            .unzip();
        Ok(Layout {
            shape,
            strides,
            offset: self.offset,
        })
    }

    /// The matrix transposes' layout (`mT`, and `mH`/`adjoint()` of real tensors):
    /// the last two dims swapped; `name` is the op in PyTorch's message for a 1-D
    /// layout (a 0-D layout stays as it is).
    ///
    /// ```
    /// use lazyfuse_ir::Layout;
    /// let l = Layout::contiguous(&[2, 3, 4]).matrix_transpose("mH").unwrap();
    /// assert_eq!(l.strides[..], [12, 1, 4]);
    /// assert!(Layout::contiguous(&[3]).matrix_transpose("adjoint()").is_err());
    /// ```
    pub fn matrix_transpose(&self, name: &str) -> Result<Layout> {
        match self.ndim() {
            0 => Ok(self.clone()),
            1 => Err(Error::invalid(
                name,
                format!(
                    "tensor.{name} is only supported on matrices or batches of matrices. Got 1-D tensor."
                ),
            )),
            _ => self.transpose(-2, -1),
        }
    }

    /// `Tensor.H`'s layout: a 2-D layout transposed (a 0-D one stays as it is).
    ///
    /// ```
    /// use lazyfuse_ir::Layout;
    /// assert_eq!(Layout::contiguous(&[2, 3]).h().unwrap().strides[..], [1, 3]);
    /// assert!(Layout::contiguous(&[2, 3, 4]).h().is_err());
    /// ```
    pub fn h(&self) -> Result<Layout> {
        match self.ndim() {
            0 => Ok(self.clone()),
            2 => self.transpose(0, 1),
            n => {
                let hint = if n > 2 {
                    " For batches of matrices, consider using tensor.mH"
                } else {
                    ""
                };
                Err(Error::invalid(
                    "H",
                    format!(
                        "tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{hint}"
                    ),
                ))
            }
        }
    }
}
