//! Assignment along one dim through an index vector, which `tensor-views.rst` lists
//! beside advanced indexing: `index_add` and `index_fill`, with their in-place forms,
//! PyTorch's checks and messages. Each is a scatter of the index broadcast over the
//! other dims (`scatter_add`, `scatter_value`, `scatter`), so the values are checked
//! against the dim's size when they are read, with PyTorch's "index 5 is out of
//! bounds for dimension 1 with size 4".

use crate::error::Result;
use crate::ops::elementwise::to_isize;
use crate::Tensor;
use lazyfuse_ir::shape::{fmt_shape, wrap_dim};
use lazyfuse_ir::{DType, Error as IrError, Scalar};

impl Tensor {
    /// PyTorch's `index_add(dim, index, source, alpha)`: a copy of this tensor with
    /// `alpha * source[..., i, ...]` added at `[..., index[i], ...]` along `dim`
    /// (duplicates accumulate). `index` is a vector (or a scalar) of int32 or int64;
    /// `source` has this dtype and this shape but for `dim`, where it has one entry
    /// per index. `alpha` is converted to this dtype first, as PyTorch does.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[2, 3], DType::F32);
    /// let i = Tensor::from_vec(vec![2i64, 0, 2], &[3])?;
    /// let s = Tensor::ones(&[2, 3], DType::F32);
    /// let y = x.index_add(1, &i, &s, 2.0)?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![2.0, 0.0, 4.0, 2.0, 0.0, 4.0]);
    /// assert!(x.index_add(1, &i, &Tensor::ones(&[2, 2], DType::F32), 1).is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn index_add(
        &self,
        dim: isize,
        index: &Tensor,
        source: &Tensor,
        alpha: impl Into<Scalar>,
    ) -> Result<Tensor> {
        let (d, idx, src) = self.index_add_args(dim, index, source, alpha.into())?;
        let flat = self.at_least_1d()?;
        let out = flat.scatter_add(d, &idx, &src)?;
        out.view(&to_isize(&self.shape()))
    }

    /// [`Tensor::index_add`] in place; the write reaches every view of the storage.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[4], DType::I64);
    /// let i = Tensor::from_vec(vec![1i32, 1], &[2])?;
    /// x.index_add_(0, &i, &Tensor::from_vec(vec![3i64, 4], &[2])?, 1)?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![0, 7, 0, 0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn index_add_(
        &self,
        dim: isize,
        index: &Tensor,
        source: &Tensor,
        alpha: impl Into<Scalar>,
    ) -> Result<()> {
        let (d, idx, src) = self.index_add_args(dim, index, source, alpha.into())?;
        self.at_least_1d()?.scatter_add_(d, &idx, &src)
    }

    /// PyTorch's `index_fill(dim, index, value)`: a copy of this tensor with every
    /// slice `[..., index[i], ...]` along `dim` set to `value` (which must fit this
    /// dtype). `index` is an int64 vector or scalar; negative values count from the
    /// end.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[2, 3], DType::F32);
    /// let i = Tensor::from_vec(vec![0i64, -1], &[2])?;
    /// let y = x.index_fill(1, &i, 7.5)?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![7.5, 0.0, 7.5, 7.5, 0.0, 7.5]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn index_fill(
        &self,
        dim: isize,
        index: &Tensor,
        value: impl Into<Scalar>,
    ) -> Result<Tensor> {
        let value = value.into();
        let (d, idx) = self.index_fill_args(dim, index, Some(value))?;
        let out = self.at_least_1d()?.scatter_value(d, &idx, value)?;
        out.view(&to_isize(&self.shape()))
    }

    /// [`Tensor::index_fill`] in place.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[3], DType::Bool);
    /// x.index_fill_(0, &Tensor::from_vec(vec![1i64], &[1])?, true)?;
    /// assert_eq!(x.to_vec::<bool>()?, vec![false, true, false]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn index_fill_(&self, dim: isize, index: &Tensor, value: impl Into<Scalar>) -> Result<()> {
        let value = value.into();
        let (d, idx) = self.index_fill_args(dim, index, Some(value))?;
        self.at_least_1d()?.scatter_value_(d, &idx, value)
    }

    /// [`Tensor::index_fill`] with the value in a zero-dim tensor (converted to this
    /// dtype), as PyTorch's tensor overload.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[3], DType::F32);
    /// let i = Tensor::from_vec(vec![2i64], &[1])?;
    /// let y = x.index_fill_tensor(0, &i, &Tensor::scalar(3i64))?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![0.0, 0.0, 3.0]);
    /// assert!(x.index_fill_tensor(0, &i, &Tensor::ones(&[1], DType::F32)).is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn index_fill_tensor(&self, dim: isize, index: &Tensor, value: &Tensor) -> Result<Tensor> {
        let (d, idx, src) = self.index_fill_tensor_args(dim, index, value)?;
        let out = self.at_least_1d()?.scatter(d, &idx, &src)?;
        out.view(&to_isize(&self.shape()))
    }

    /// [`Tensor::index_fill_tensor`] in place.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[2, 2], DType::I32);
    /// x.index_fill_tensor_(0, &Tensor::scalar(1i64), &Tensor::scalar(9i64))?;
    /// assert_eq!(x.to_vec::<i32>()?, vec![0, 0, 9, 9]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn index_fill_tensor_(&self, dim: isize, index: &Tensor, value: &Tensor) -> Result<()> {
        let (d, idx, src) = self.index_fill_tensor_args(dim, index, value)?;
        self.at_least_1d()?.scatter_(d, &idx, &src)
    }

    /// This tensor, or a 1-element view of a zero-dim one (the scatters need a dim).
    fn at_least_1d(&self) -> Result<Tensor> {
        if self.ndim() == 0 {
            self.view(&[1])
        } else {
            Ok(self.clone())
        }
    }

    /// `index_add`'s checks, in ATen's order, and what its scatter takes: the dim,
    /// the int64 index broadcast to the source's shape, and `alpha * source`.
    fn index_add_args(
        &self,
        dim: isize,
        index: &Tensor,
        source: &Tensor,
        alpha: Scalar,
    ) -> Result<(isize, Tensor, Tensor)> {
        let d = wrap_dim(dim, self.ndim())?;
        refuse_wide_unsigned(self, "index_add_")?;
        if index.ndim() > 1 {
            return Err(invalid(format!(
                "index_add_(): Index is supposed to be a vector, but got dim: {} with type: {} and size: {}",
                index.ndim(),
                index.dtype().torch_name(),
                fmt_shape(&index.shape())
            )));
        }
        if !matches!(index.dtype(), DType::I64 | DType::I32) {
            return Err(invalid(format!(
                "index_add_(): Expected dtype int32/int64 for index but got: {}",
                index.dtype().torch_name()
            )));
        }
        if self.dtype() != source.dtype() {
            return Err(invalid(format!(
                "index_add_(): self ({}) and source ({}) must have the same scalar type",
                self.dtype().torch_name(),
                source.dtype().torch_name()
            )));
        }
        if d != 0 && d >= source.ndim() {
            return Err(invalid(format!(
                "index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim {}",
                source.ndim()
            )));
        }
        let n = index.numel();
        let along = if source.ndim() == 0 {
            1
        } else {
            source.shape()[d]
        };
        if n != along {
            return Err(invalid(format!(
                "index_add_(): Number of indices ({n}) should be equal to source.size(dim): ({along}), for dim: {d}"
            )));
        }
        let (mut self_rest, mut source_rest) = (self.shape(), source.shape());
        if self.ndim() != 0 && source.ndim() != 0 {
            self_rest.remove(d);
            source_rest.remove(d);
        }
        if self_rest != source_rest {
            return Err(invalid(format!(
                "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = {} source.shape = {}",
                fmt_shape(&self.shape()),
                fmt_shape(&source.shape())
            )));
        }
        let src = source.at_least_1d()?;
        let src = if alpha_is_one(alpha) {
            src
        } else {
            // alpha in this dtype first (an int64 tensor's 1.5 is 1), as ATen's kernel
            let a = Tensor::full(&[], alpha, self.dtype())?;
            src.mul(&a)?.to_dtype(self.dtype())?
        };
        let idx = spread(index, d, &src.shape())?;
        Ok((d as isize, idx, src))
    }

    /// `index_fill`'s checks and its scatter's index: the int64 index, negative
    /// values counted from the end, broadcast over this shape with one entry per
    /// index along `dim`.
    fn index_fill_args(
        &self,
        dim: isize,
        index: &Tensor,
        value: Option<Scalar>,
    ) -> Result<(isize, Tensor)> {
        let d = wrap_dim(dim, self.ndim())?;
        refuse_wide_unsigned(self, "index_fill_cpu")?;
        if index.dtype() != DType::I64 {
            return Err(invalid(
                "index_fill_(): Expected dtype int64 for index.".to_string(),
            ));
        }
        if index.ndim() > 1 {
            return Err(invalid("Index has to be a vector/scalar".to_string()));
        }
        if let Some(Scalar::Complex(..)) = value {
            if !self.dtype().is_complex() {
                return Err(invalid(
                    "index_fill_(): Converting complex Scalar to non-complex type is not supported"
                        .to_string(),
                ));
            }
        }
        if let Some(v) = value {
            crate::tensor::check_fill_value(v, self.dtype())?;
        }
        let size = if self.ndim() == 0 { 1 } else { self.shape()[d] } as i64;
        // Negative values count from the end; one below `-size` stays as it is, so
        // that the scatter reports it as PyTorch does ("index -5 is out of bounds").
        let index = index.reshape(&[-1])?;
        let wraps = index.lt(0)?.logical_and(&index.ge(-size)?)?;
        let wrapped = Tensor::where_cond(&wraps, &index.add(size)?, &index)?;
        let mut shape = self.at_least_1d()?.shape();
        shape[d] = index.numel();
        Ok((d as isize, spread(&wrapped, d, &shape)?))
    }

    /// `index_fill`'s tensor overload: the value must be zero-dim.
    fn index_fill_tensor_args(
        &self,
        dim: isize,
        index: &Tensor,
        value: &Tensor,
    ) -> Result<(isize, Tensor, Tensor)> {
        if value.ndim() != 0 {
            return Err(invalid(format!(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                value.ndim()
            )));
        }
        let (d, idx) = self.index_fill_args(dim, index, None)?;
        let shape = to_isize(&idx.shape());
        let src = value.to_dtype(self.dtype())?.expand(&shape)?;
        Ok((d, idx, src))
    }
}

/// The index vector (or scalar) as int64, laid along `dim` and broadcast to `shape`.
fn spread(index: &Tensor, dim: usize, shape: &[usize]) -> Result<Tensor> {
    let mut along = vec![1isize; shape.len()];
    along[dim] = -1;
    index
        .to_dtype(DType::I64)?
        .reshape(&along)?
        .expand(&to_isize(shape))
}

/// PyTorch has no kernel of these ops for uint16, uint32 and uint64.
fn refuse_wide_unsigned(t: &Tensor, kernel: &str) -> Result<()> {
    if t.dtype().is_wide_unsigned() {
        return Err(IrError::NotImplemented {
            kernel: kernel.into(),
            dtype: t.dtype(),
        }
        .into());
    }
    Ok(())
}

fn alpha_is_one(alpha: Scalar) -> bool {
    match alpha {
        Scalar::Int(1) => true,
        Scalar::Float(f) => f == 1.0,
        _ => false,
    }
}

fn invalid(message: String) -> crate::Error {
    IrError::invalid("index", message).into()
}
