//! View ops: each is a stride rewrite of the tensor's `Layout` over the same storage
//! (the rules live in `lazyfuse_ir::view`); no node is recorded and nothing is copied.
//! `contiguous`, and `reshape`/`flatten` where PyTorch cannot make a view, copy.

use crate::error::Result;
use crate::store::with_store;
use crate::tensor::Tensor;
use lazyfuse_ir::Layout;

impl Tensor {
    fn views(&self, layouts: Vec<Layout>) -> Vec<Tensor> {
        layouts.into_iter().map(|l| self.with_layout(l)).collect()
    }

    /// A contiguous copy of this tensor with the given shape (a new storage).
    fn copy_as(&self, shape: &[usize]) -> Tensor {
        with_store(|s| {
            let read = self.node(s);
            let node = s.view_node(read, &Layout::contiguous(shape));
            // `view_node` returns `read` itself when no reshaping is needed; a new
            // storage on that node still never aliases this one: writes make new nodes.
            Tensor::from_node(s, node)
        })
    }

    /// This tensor with another shape of the same size, without copying; fails when
    /// the strides cannot express it (PyTorch's rule). One dim may be `-1`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32);
    /// assert_eq!(t.view(&[3, -1]).unwrap().shape(), vec![3, 2]);
    /// assert!(t.t().unwrap().view(&[6]).is_err());
    /// ```
    pub fn view(&self, shape: &[isize]) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.view(shape)?))
    }

    /// Like [`Tensor::view`] where possible, else a contiguous copy.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32);
    /// let r = t.t().unwrap().reshape(&[6]).unwrap();
    /// assert!(!r.shares_storage(&t));
    /// assert!(t.reshape(&[6]).unwrap().shares_storage(&t));
    /// ```
    pub fn reshape(&self, shape: &[isize]) -> Result<Tensor> {
        match self.0.layout.reshape(shape)? {
            Some(layout) => Ok(self.with_layout(layout)),
            None => {
                let shape = Layout::infer_shape(shape, self.numel())?;
                Ok(self.copy_as(&shape))
            }
        }
    }

    /// Swaps two dims.
    pub fn transpose(&self, dim0: isize, dim1: isize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.transpose(dim0, dim1)?))
    }

    /// Same as [`Tensor::transpose`].
    pub fn swapaxes(&self, axis0: isize, axis1: isize) -> Result<Tensor> {
        self.transpose(axis0, axis1)
    }

    /// Reorders the dims.
    pub fn permute(&self, dims: &[isize]) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.permute(dims)?))
    }

    /// Broadcasts to `shape` (`-1` keeps a size; new leading dims allowed); expanded
    /// dims get stride 0.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let e = Tensor::zeros(&[3, 1], DType::F32).expand(&[2, -1, 4]).unwrap();
    /// assert_eq!((e.shape(), e.strides()), (vec![2, 3, 4], vec![0, 1, 0]));
    /// ```
    pub fn expand(&self, shape: &[isize]) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.expand(shape)?))
    }

    /// Expands to `other`'s shape.
    pub fn expand_as(&self, other: &Tensor) -> Result<Tensor> {
        self.expand(&crate::ops::elementwise::to_isize(&other.shape()))
    }

    /// `length` elements of `dim` from `start` (negative counts from the end).
    pub fn narrow(&self, dim: isize, start: isize, length: usize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.narrow(dim, start, length)?))
    }

    /// The slice at `index` of `dim`, which is removed.
    pub fn select(&self, dim: isize, index: isize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.select(dim, index)?))
    }

    /// Python slicing `[start:stop:step]` on `dim`; bounds are clamped.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 10.0, 1.0, DType::I64).unwrap();
    /// let s = t.slice(0, Some(1), Some(-1), 3).unwrap();
    /// assert_eq!(s.to_vec::<i64>().unwrap(), vec![1, 4, 7]);
    /// ```
    pub fn slice(
        &self,
        dim: isize,
        start: Option<isize>,
        stop: Option<isize>,
        step: usize,
    ) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.slice(dim, start, stop, step)?))
    }

    /// Drops every size-1 dim.
    pub fn squeeze(&self) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.squeeze()))
    }

    /// Drops `dim` if its size is 1.
    pub fn squeeze_dim(&self, dim: isize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.squeeze_dim(dim)?))
    }

    /// Inserts a size-1 dim at `dim` (in `[-ndim-1, ndim]`).
    pub fn unsqueeze(&self, dim: isize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.unsqueeze(dim)?))
    }

    /// The diagonal of dims `dim1`, `dim2` with `offset`, as a new last dim.
    pub fn diagonal(&self, offset: isize, dim1: isize, dim2: isize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.diagonal(offset, dim1, dim2)?))
    }

    /// A view of the same storage with explicit geometry; `storage_offset` is absolute.
    pub fn as_strided(
        &self,
        size: &[usize],
        stride: &[isize],
        storage_offset: usize,
    ) -> Result<Tensor> {
        let layout = self.0.layout.as_strided_sized(
            size,
            stride,
            storage_offset,
            self.0.storage.numel,
            self.0.dtype.size_in_bytes(),
        )?;
        Ok(self.with_layout(layout))
    }

    /// Sliding windows of `size` with `step` along `dim`, as a new last dim.
    pub fn unfold(&self, dim: isize, size: usize, step: usize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.unfold(dim, size, step)?))
    }

    /// Moves dim `source` to position `destination`.
    pub fn movedim(&self, source: isize, destination: isize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.movedim(source, destination)?))
    }

    /// Transpose of a tensor with at most 2 dims.
    pub fn t(&self) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.t()?))
    }

    /// Swaps the last two dims.
    pub fn mt(&self) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.mt()?))
    }

    /// Merges dims `start..=end` (a view when possible, else a copy).
    pub fn flatten(&self, start: isize, end: isize) -> Result<Tensor> {
        match self.0.layout.flatten(start, end)? {
            Some(layout) => Ok(self.with_layout(layout)),
            None => {
                let shape = self.0.layout.flatten_shape(start, end)?;
                Ok(self.copy_as(&shape))
            }
        }
    }

    /// Splits `dim` into `sizes` (one may be `-1`).
    pub fn unflatten(&self, dim: isize, sizes: &[isize]) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.unflatten(dim, sizes)?))
    }

    /// Pieces of `size` along `dim` (the last may be smaller).
    pub fn split(&self, size: usize, dim: isize) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.split(size, dim)?))
    }

    /// Pieces of the given sizes along `dim`.
    pub fn split_sizes(&self, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.split_sizes(sizes, dim)?))
    }

    /// `chunks` pieces of equal size along `dim` (possibly fewer).
    pub fn chunk(&self, chunks: usize, dim: isize) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.chunk(chunks, dim)?))
    }

    /// Every slice along `dim`.
    pub fn unbind(&self, dim: isize) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.unbind(dim)?))
    }

    /// This tensor if it is contiguous, else a contiguous copy.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32);
    /// assert!(t.contiguous().unwrap().shares_storage(&t));
    /// let c = t.t().unwrap().contiguous().unwrap();
    /// assert!(c.is_contiguous() && !c.shares_storage(&t));
    /// ```
    pub fn contiguous(&self) -> Result<Tensor> {
        if self.is_contiguous() {
            return Ok(self.clone());
        }
        Ok(self.copy_as(&self.shape()))
    }
}
