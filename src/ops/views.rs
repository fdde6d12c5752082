//! View ops: each is a stride rewrite of the tensor's `Layout` over the same storage
//! (the rules live in `lazyfuse_ir::view` and `lazyfuse_ir::view_dims`); no node is
//! recorded and nothing is copied.
//! `contiguous`, and `reshape`/`flatten` where PyTorch cannot make a view, copy.

use crate::error::Result;
use crate::memory_format::{self, MemoryFormat};
use crate::ops::elementwise::to_isize;
use crate::store::with_store;
use crate::tensor::Tensor;
use lazyfuse_ir::Error as IrError;
use lazyfuse_ir::Layout;

impl Tensor {
    /// One tensor per layout, each a view of this tensor's storage.
    pub(crate) fn views(&self, layouts: Vec<Layout>) -> Vec<Tensor> {
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
        self.check_size()?;
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
        self.check_size()?;
        match self.0.layout.reshape(shape)? {
            Some(layout) => Ok(self.with_layout(layout)),
            None => {
                let shape = Layout::infer_shape(shape, self.numel())?;
                Ok(self.copy_as(&shape))
            }
        }
    }

    /// Swaps two dims.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3, 4], DType::F32);
    /// let u = t.transpose(0, -1).unwrap();
    /// assert_eq!((u.shape(), u.strides()), (vec![4, 3, 2], vec![1, 4, 12]));
    /// assert!(u.shares_storage(&t));
    /// ```
    pub fn transpose(&self, dim0: isize, dim1: isize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.transpose(dim0, dim1)?))
    }

    /// Same as [`Tensor::transpose`].
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32);
    /// assert_eq!(t.swapaxes(0, 1).unwrap().shape(), vec![3, 2]);
    /// ```
    pub fn swapaxes(&self, axis0: isize, axis1: isize) -> Result<Tensor> {
        self.transpose(axis0, axis1)
    }

    /// Reorders the dims.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3, 4], DType::F32);
    /// let p = t.permute(&[2, 0, 1]).unwrap();
    /// assert_eq!((p.shape(), p.strides()), (vec![4, 2, 3], vec![1, 12, 4]));
    /// assert!(t.permute(&[0, 0, 1]).is_err());
    /// ```
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
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    /// let e = a.expand_as(&Tensor::zeros(&[3, 2], DType::F32)).unwrap();
    /// assert_eq!((e.shape(), e.strides()), (vec![3, 2], vec![0, 1]));
    /// assert_eq!(e.to_vec::<i32>().unwrap(), vec![1, 2, 1, 2, 1, 2]);
    /// ```
    pub fn expand_as(&self, other: &Tensor) -> Result<Tensor> {
        self.expand(&crate::ops::elementwise::to_isize(&other.shape()))
    }

    /// `length` elements of `dim` from `start` (negative counts from the end).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::I64).unwrap();
    /// assert_eq!(t.narrow(0, -4, 2).unwrap().to_vec::<i64>().unwrap(), vec![2, 3]);
    /// assert!(t.narrow(0, 5, 2).is_err());
    /// ```
    pub fn narrow(&self, dim: isize, start: isize, length: usize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.narrow(dim, start, length)?))
    }

    /// The slice at `index` of `dim`, which is removed.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::I64).unwrap().view(&[2, 3]).unwrap();
    /// let c = t.select(1, -1).unwrap();
    /// assert_eq!((c.shape(), c.to_vec::<i64>().unwrap()), (vec![2], vec![2, 5]));
    /// ```
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
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[1, 3, 1], DType::F32);
    /// assert_eq!(t.squeeze().unwrap().shape(), vec![3]);
    /// ```
    pub fn squeeze(&self) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.squeeze()))
    }

    /// Drops `dim` if its size is 1.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[1, 3], DType::F32);
    /// assert_eq!(t.squeeze_dim(0).unwrap().shape(), vec![3]);
    /// assert_eq!(t.squeeze_dim(1).unwrap().shape(), vec![1, 3]); // size 3: unchanged
    /// ```
    pub fn squeeze_dim(&self, dim: isize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.squeeze_dim(dim)?))
    }

    /// Inserts a size-1 dim at `dim` (in `[-ndim-1, ndim]`).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32);
    /// assert_eq!(t.unsqueeze(-1).unwrap().shape(), vec![2, 3, 1]);
    /// assert_eq!(t.unsqueeze(1).unwrap().strides(), vec![3, 3, 1]);
    /// assert!(t.unsqueeze(3).is_err());
    /// ```
    pub fn unsqueeze(&self, dim: isize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.unsqueeze(dim)?))
    }

    /// The diagonal of dims `dim1`, `dim2` with `offset`, as a new last dim.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 9.0, 1.0, DType::I64).unwrap().view(&[3, 3]).unwrap();
    /// assert_eq!(t.diagonal(0, 0, 1).unwrap().to_vec::<i64>().unwrap(), vec![0, 4, 8]);
    /// assert_eq!(t.diagonal(1, 0, 1).unwrap().to_vec::<i64>().unwrap(), vec![1, 5]);
    /// assert_eq!(t.diagonal(-1, 0, 1).unwrap().strides(), vec![4]);
    /// ```
    pub fn diagonal(&self, offset: isize, dim1: isize, dim2: isize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.diagonal(offset, dim1, dim2)?))
    }

    /// A view of the same storage with explicit geometry; `storage_offset` is absolute.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::I64).unwrap();
    /// let w = t.as_strided(&[2, 2], &[3, 1], 1).unwrap();
    /// assert_eq!(w.to_vec::<i64>().unwrap(), vec![1, 2, 4, 5]);
    /// assert!(t.as_strided(&[2, 2], &[3, 1], 3).is_err()); // would read past the storage
    /// ```
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
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 5.0, 1.0, DType::I64).unwrap();
    /// let w = t.unfold(0, 2, 2).unwrap();
    /// assert_eq!((w.shape(), w.strides()), (vec![2, 2], vec![2, 1]));
    /// assert_eq!(w.to_vec::<i64>().unwrap(), vec![0, 1, 2, 3]);
    /// ```
    pub fn unfold(&self, dim: isize, size: usize, step: usize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.unfold(dim, size, step)?))
    }

    /// Moves dim `source` to position `destination`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3, 4], DType::F32);
    /// assert_eq!(t.movedim(0, -1).unwrap().shape(), vec![3, 4, 2]);
    /// ```
    pub fn movedim(&self, source: isize, destination: isize) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.movedim(source, destination)?))
    }

    /// Transpose of a tensor with at most 2 dims.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert_eq!(Tensor::zeros(&[2, 3], DType::F32).t().unwrap().shape(), vec![3, 2]);
    /// assert_eq!(Tensor::zeros(&[4], DType::F32).t().unwrap().shape(), vec![4]);
    /// assert!(Tensor::zeros(&[1, 2, 3], DType::F32).t().is_err());
    /// ```
    pub fn t(&self) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.t()?))
    }

    /// Swaps the last two dims.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert_eq!(Tensor::zeros(&[5, 2, 3], DType::F32).mt().unwrap().shape(), vec![5, 3, 2]);
    /// assert!(Tensor::zeros(&[4], DType::F32).mt().is_err());
    /// ```
    pub fn mt(&self) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.mt()?))
    }

    /// Merges dims `start..=end` (a view when possible, else a copy).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3, 4], DType::F32);
    /// let f = t.flatten(1, -1).unwrap();
    /// assert!(f.shape() == vec![2, 12] && f.shares_storage(&t));
    /// let c = t.transpose(0, 1).unwrap().flatten(0, 1).unwrap(); // strides can't merge: a copy
    /// assert!(c.shape() == vec![6, 4] && !c.shares_storage(&t));
    /// ```
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
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 12], DType::F32);
    /// assert_eq!(t.unflatten(1, &[3, -1]).unwrap().shape(), vec![2, 3, 4]);
    /// assert!(t.unflatten(1, &[5, -1]).is_err());
    /// ```
    pub fn unflatten(&self, dim: isize, sizes: &[isize]) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.unflatten(dim, sizes)?))
    }

    /// Pieces of `size` along `dim` (the last may be smaller).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 5.0, 1.0, DType::I64).unwrap();
    /// let parts = t.split(2, 0).unwrap();
    /// assert_eq!(parts.iter().map(|p| p.numel()).collect::<Vec<_>>(), vec![2, 2, 1]);
    /// assert_eq!(parts[2].to_vec::<i64>().unwrap(), vec![4]);
    /// ```
    pub fn split(&self, size: usize, dim: isize) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.split(size, dim)?))
    }

    /// Pieces of the given sizes along `dim`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 5.0, 1.0, DType::I64).unwrap();
    /// let parts = t.split_sizes(&[1, 4], 0).unwrap();
    /// assert_eq!(parts[1].to_vec::<i64>().unwrap(), vec![1, 2, 3, 4]);
    /// assert!(t.split_sizes(&[1, 2], 0).is_err()); // sizes must sum to 5
    /// ```
    pub fn split_sizes(&self, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.split_sizes(sizes, dim)?))
    }

    /// `chunks` pieces of equal size along `dim` (possibly fewer).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::I64).unwrap();
    /// assert_eq!(t.chunk(4, 0).unwrap().len(), 3); // pieces of ceil(6 / 4) = 2
    /// assert_eq!(t.chunk(2, 0).unwrap()[1].to_vec::<i64>().unwrap(), vec![3, 4, 5]);
    /// ```
    pub fn chunk(&self, chunks: usize, dim: isize) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.chunk(chunks, dim)?))
    }

    /// Every slice along `dim`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::I64).unwrap().view(&[2, 3]).unwrap();
    /// let cols = t.unbind(1).unwrap();
    /// assert_eq!(cols.len(), 3);
    /// assert_eq!(cols[0].to_vec::<i64>().unwrap(), vec![0, 3]);
    /// ```
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

    /// This tensor if it is contiguous in `format`, else a copy that is (PyTorch's
    /// `contiguous(memory_format=...)`; `Preserve` copies nothing: a contiguous tensor
    /// is returned, another refused, as PyTorch does).
    ///
    /// ```
    /// use lazyfuse::{DType, MemoryFormat, Tensor};
    /// let x = Tensor::zeros(&[2, 3, 4, 5], DType::F32);
    /// let cl = x.contiguous_in(MemoryFormat::ChannelsLast)?;
    /// assert_eq!(cl.strides(), vec![60, 1, 15, 3]);
    /// assert!(cl.contiguous_in(MemoryFormat::ChannelsLast)?.shares_storage(&cl));
    /// assert!(x.contiguous_in(MemoryFormat::ChannelsLast3d).is_err()); // needs 5-D
    /// assert!(x.contiguous_in(MemoryFormat::Preserve)?.shares_storage(&x));
    /// assert!(cl.contiguous_in(MemoryFormat::Preserve).is_err()); // would copy
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn contiguous_in(&self, format: MemoryFormat) -> Result<Tensor> {
        if self.is_contiguous_in(format) {
            return Ok(self.clone());
        }
        if format == MemoryFormat::Preserve {
            return Err(IrError::invalid(
                "contiguous",
                "preserve memory format is unsupported by the contiguous operator",
            )
            .into());
        }
        let strides = memory_format::format_strides(&self.shape(), format, "contiguous")?;
        Ok(self.copy_strided(strides))
    }

    /// PyTorch's `is_contiguous(memory_format=...)`: whether the strides are
    /// `format`'s (size-1 dims aside). A channels-last format on a tensor of another
    /// rank answers false; `Preserve` asks row-major contiguity, as in PyTorch.
    ///
    /// ```
    /// use lazyfuse::{DType, MemoryFormat, Tensor};
    /// let x = Tensor::zeros(&[2, 4, 5, 3], DType::F32).permute(&[0, 3, 1, 2])?;
    /// assert!(x.is_contiguous_in(MemoryFormat::ChannelsLast));
    /// assert!(!x.is_contiguous_in(MemoryFormat::Contiguous));
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn is_contiguous_in(&self, format: MemoryFormat) -> bool {
        let l = &self.0.layout;
        memory_format::is_contiguous_as(&l.shape, &l.strides, format)
    }

    /// A copy in `format`: PyTorch's `clone(memory_format=...)`. (`Tensor::clone` is
    /// Rust's `Clone`, a second handle to the same tensor; this copies, and
    /// `clone_in(MemoryFormat::Preserve)` is PyTorch's `clone()`: a dense input keeps
    /// its strides, another keeps its dim order.)
    ///
    /// ```
    /// use lazyfuse::{DType, MemoryFormat, Tensor};
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::F32)?.view(&[2, 3])?.t()?;
    /// let c = t.clone_in(MemoryFormat::Preserve)?;
    /// assert!(!c.shares_storage(&t));
    /// assert_eq!((c.strides(), c.to_vec::<f32>()?), (vec![1, 3], t.to_vec::<f32>()?));
    /// assert_eq!(t.clone_in(MemoryFormat::Contiguous)?.strides(), vec![2, 1]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn clone_in(&self, format: MemoryFormat) -> Result<Tensor> {
        let l = &self.0.layout;
        let strides = memory_format::copy_strides(&l.shape, &l.strides, format, "clone")?;
        Ok(self.copy_strided(strides))
    }

    /// A copy of this tensor in a new storage laid out with `strides` (dense ones).
    fn copy_strided(&self, strides: Vec<isize>) -> Tensor {
        with_store(|s| {
            let read = self.node(s);
            Tensor::from_node_strided(s, read, Some(strides))
        })
    }

    /// PyTorch's `Tensor.T`: every dim reversed (0-D and 1-D tensors are returned as
    /// they are). PyTorch deprecates `T` on tensors of other than 2 dims in favour of
    /// `mT` or `permute`; it still reverses them, and so does this.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3, 4], DType::F32).T().unwrap();
    /// assert_eq!((t.shape(), t.strides()), (vec![4, 3, 2], vec![1, 4, 12]));
    /// ```
    #[allow(non_snake_case)]
    pub fn T(&self) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.reversed_dims()))
    }

    /// PyTorch's `Tensor.mH`: the conjugate transpose of the last two dims, a view
    /// with the conjugate bit (for real dtypes, [`Tensor::mt`]).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[5, 2, 3], DType::F32);
    /// assert_eq!(t.mh().unwrap().strides(), vec![6, 1, 3]);
    /// assert!(Tensor::zeros(&[4], DType::F32).mh().is_err());
    /// ```
    pub fn mh(&self) -> Result<Tensor> {
        let t = self.with_layout(self.0.layout.matrix_transpose("mH")?);
        t.conj()
    }

    /// PyTorch's `Tensor.adjoint()`: the same view as [`Tensor::mh`].
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F64);
    /// assert_eq!(t.adjoint().unwrap().shape(), vec![3, 2]);
    /// ```
    pub fn adjoint(&self) -> Result<Tensor> {
        let t = self.with_layout(self.0.layout.matrix_transpose("adjoint()")?);
        t.conj()
    }

    /// PyTorch's `Tensor.H`: the conjugate transpose of a matrix (2-D tensor; a 0-D
    /// tensor is returned as it is).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert_eq!(Tensor::zeros(&[2, 3], DType::F32).h().unwrap().shape(), vec![3, 2]);
    /// assert!(Tensor::zeros(&[2, 2, 2], DType::F32).h().is_err());
    /// ```
    pub fn h(&self) -> Result<Tensor> {
        self.with_layout(self.0.layout.h()?).conj()
    }

    /// PyTorch's `swapdims`: [`Tensor::transpose`] by another name.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32);
    /// assert_eq!(t.swapdims(0, 1).unwrap().strides(), vec![1, 3]);
    /// ```
    pub fn swapdims(&self, dim0: isize, dim1: isize) -> Result<Tensor> {
        self.transpose(dim0, dim1)
    }

    /// `self.view(other.shape())`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32);
    /// let v = t.view_as(&Tensor::zeros(&[3, 2], DType::I8)).unwrap();
    /// assert!(v.shape() == vec![3, 2] && v.shares_storage(&t));
    /// ```
    pub fn view_as(&self, other: &Tensor) -> Result<Tensor> {
        self.view(&to_isize(&other.shape()))
    }

    /// `self.reshape(other.shape())`: a view where strides allow, else a copy.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32).t().unwrap();
    /// let r = t.reshape_as(&Tensor::zeros(&[6], DType::F32)).unwrap();
    /// assert!(r.shape() == vec![6] && !r.shares_storage(&t));
    /// ```
    pub fn reshape_as(&self, other: &Tensor) -> Result<Tensor> {
        self.reshape(&to_isize(&other.shape()))
    }

    /// PyTorch's `movedim(source, destination)` with lists of dims: each
    /// `source[i]` moves to `destination[i]`, the other dims keep their order.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3, 4], DType::F32);
    /// assert_eq!(t.movedims(&[0, 1], &[2, 0]).unwrap().shape(), vec![3, 4, 2]);
    /// assert!(t.movedims(&[0, 0], &[1, 2]).is_err());
    /// ```
    pub fn movedims(&self, source: &[isize], destination: &[isize]) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.movedims(source, destination)?))
    }

    /// PyTorch's `squeeze(dims)` with a list: drops each listed dim of size 1.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[1, 2, 1, 3], DType::F32);
    /// assert_eq!(t.squeeze_dims(&[0, 1]).unwrap().shape(), vec![2, 1, 3]);
    /// assert!(t.squeeze_dims(&[0, -4]).is_err());
    /// ```
    pub fn squeeze_dims(&self, dims: &[isize]) -> Result<Tensor> {
        Ok(self.with_layout(self.0.layout.squeeze_dims(dims)?))
    }

    /// PyTorch's `to_sparse()`: lazyfuse tensors are strided only, so this is a clear
    /// error rather than a dense tensor passed off as sparse.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert!(Tensor::zeros(&[2, 2], DType::F32).to_sparse().is_err());
    /// ```
    pub fn to_sparse(&self) -> Result<Tensor> {
        Err(crate::Layout::SparseCoo.unsupported("to_sparse"))
    }

    /// PyTorch's `to_dense()`: a strided tensor is dense already; this tensor.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2], DType::F32);
    /// assert!(t.to_dense().unwrap().shares_storage(&t));
    /// ```
    pub fn to_dense(&self) -> Result<Tensor> {
        Ok(self.clone())
    }
}
