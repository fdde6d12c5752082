//! Assignment along one dim through an index vector, which `tensor-views.rst` lists
//! beside advanced indexing: `index_add`, `index_fill`, `index_copy` and `index_put`,
//! with their in-place forms,
//! PyTorch's checks and messages. Each is a scatter of the index broadcast over the
//! other dims (`scatter_add`, `scatter_value`, `scatter`), so the values are checked
//! against the dim's size when they are read, with PyTorch's "index 5 is out of
//! bounds for dimension 1 with size 4".

use crate::error::Result;
use crate::ops::elementwise::to_isize;
use crate::{Device, Tensor};
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

    /// PyTorch's `index_copy(dim, index, source)`: a copy of this tensor with
    /// `source[..., i, ...]` written at `[..., index[i], ...]` along `dim`. `index` is
    /// an int64 vector (or scalar) whose values are checked now, as PyTorch checks
    /// them ("index_copy_(): index 5 is out of bounds for dimension 1 with size 4";
    /// negative values are out of bounds too). Duplicate indices keep one of the
    /// values written there, as in PyTorch.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[2, 3], DType::F32);
    /// let i = Tensor::from_vec(vec![2i64, 0], &[2])?;
    /// let s = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(x.index_copy(1, &i, &s)?.to_vec::<f32>()?, vec![2.0, 0.0, 1.0, 4.0, 0.0, 3.0]);
    /// let bad = Tensor::from_vec(vec![3i64, 0], &[2])?;
    /// assert_eq!(
    ///     x.index_copy(1, &bad, &s).unwrap_err().to_string(),
    ///     "index_copy_(): index 3 is out of bounds for dimension 1 with size 3"
    /// );
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn index_copy(&self, dim: isize, index: &Tensor, source: &Tensor) -> Result<Tensor> {
        let (d, idx, src) = self.index_copy_args(dim, index, source)?;
        let out = self.at_least_1d()?.scatter(d, &idx, &src)?;
        out.view(&to_isize(&self.shape()))
    }

    /// [`Tensor::index_copy`] in place.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[3], DType::I32);
    /// x.index_copy_(0, &Tensor::from_vec(vec![1i64], &[1])?, &Tensor::from_vec(vec![7i32], &[1])?)?;
    /// assert_eq!(x.to_vec::<i32>()?, vec![0, 7, 0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn index_copy_(&self, dim: isize, index: &Tensor, source: &Tensor) -> Result<()> {
        let (d, idx, src) = self.index_copy_args(dim, index, source)?;
        self.at_least_1d()?.scatter_(d, &idx, &src)
    }

    /// PyTorch's `index_put(indices, values, accumulate)`, the assignment
    /// `x[i0, i1, ...] = values` (`+=` with `accumulate`): a copy of this tensor with
    /// `values` (broadcast to the indexing result's shape) written at the positions the
    /// index tensors name. The index tensors (int64, int32, or bool/uint8 masks, which
    /// stand for their nonzero positions) index the leading dims, broadcast together,
    /// and are read now to be checked, as PyTorch checks them; negative values count
    /// from the end. `values` has this tensor's dtype.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[3, 2], DType::F32);
    /// let rows = Tensor::from_vec(vec![0i64, 2, 0], &[3])?;
    /// let v = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    /// let y = x.index_put(&[&rows], &v, true)?; // row 0 twice: accumulates
    /// assert_eq!(y.to_vec::<f32>()?, vec![2.0, 4.0, 0.0, 0.0, 1.0, 2.0]);
    /// let mask = Tensor::from_vec(vec![false, true, false], &[3])?;
    /// assert_eq!(x.index_put(&[&mask], &v, false)?.to_vec::<f32>()?, vec![0.0, 0.0, 1.0, 2.0, 0.0, 0.0]);
    /// let far = Tensor::from_vec(vec![3i64], &[1])?;
    /// assert_eq!(
    ///     x.index_put(&[&far], &v, false).unwrap_err().to_string(),
    ///     "index 3 is out of bounds for dimension 0 with size 3"
    /// );
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn index_put(
        &self,
        indices: &[&Tensor],
        values: &Tensor,
        accumulate: bool,
    ) -> Result<Tensor> {
        if let Some(mask) = self.index_put_mask(indices, values, accumulate)? {
            return self.masked_fill(&mask, &values.reshape(&[])?);
        }
        let plan = self.index_put_plan(indices, values)?;
        let work = self.reshape(&to_isize(&plan.work_shape))?;
        let out = if accumulate {
            work.scatter_add(0, &plan.index, &plan.values)?
        } else {
            work.scatter(0, &plan.index, &plan.values)?
        };
        out.view(&to_isize(&self.shape()))
    }

    /// [`Tensor::index_put`] in place: `x[i0, i1, ...] = values`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[2, 3], DType::I64);
    /// let (r, c) = (Tensor::from_vec(vec![1i64, 0], &[2])?, Tensor::from_vec(vec![-1i32], &[1])?);
    /// x.index_put_(&[&r, &c], &Tensor::scalar(5i64), false)?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![0, 0, 5, 0, 0, 5]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn index_put_(&self, indices: &[&Tensor], values: &Tensor, accumulate: bool) -> Result<()> {
        if let Some(mask) = self.index_put_mask(indices, values, accumulate)? {
            return self.masked_fill_(&mask, &values.reshape(&[])?);
        }
        let plan = self.index_put_plan(indices, values)?;
        // in place through a view where the indexed dims merge, else through a copy
        if let Ok(work) = self.view(&to_isize(&plan.work_shape)) {
            return if accumulate {
                work.scatter_add_(0, &plan.index, &plan.values)
            } else {
                work.scatter_(0, &plan.index, &plan.values)
            };
        }
        let out = self.index_put(indices, values, accumulate)?;
        self.copy_(&out)
    }

    /// ATen's short cut for `x[mask] = v` with one value and no accumulation: a
    /// `masked_fill` with the mask (checked against the leading dims, then unsqueezed
    /// over the others). `None` where the general path applies.
    fn index_put_mask(
        &self,
        indices: &[&Tensor],
        values: &Tensor,
        accumulate: bool,
    ) -> Result<Option<Tensor>> {
        let [mask] = indices else { return Ok(None) };
        if accumulate || values.numel() != 1 || !matches!(mask.dtype(), DType::Bool | DType::U8) {
            return Ok(None);
        }
        self.check_mask_dims(mask, 0)?;
        if mask.dtype() == DType::U8 {
            return Err(invalid(
                "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"
                    .into(),
            ));
        }
        refuse_wide_unsigned(self, "masked_fill")?;
        let mut mask: Tensor = (*mask).clone();
        while mask.ndim() < self.ndim() {
            mask = mask.unsqueeze(-1)?;
        }
        Ok(Some(mask))
    }

    /// A mask indexing the dims from `at` must have their sizes (PyTorch reads each
    /// size, so a mask past the last dim is a dim error).
    fn check_mask_dims(&self, mask: &Tensor, at: usize) -> Result<()> {
        let shape = self.shape();
        for (j, &m) in mask.shape().iter().enumerate() {
            let d = wrap_dim((at + j) as isize, shape.len())?;
            if m != shape[d] {
                return Err(invalid(format!(
                    "The shape of the mask {} at index {j} does not match the shape of the indexed tensor {} at index {d}",
                    fmt_shape(&mask.shape()),
                    fmt_shape(&shape),
                )));
            }
        }
        Ok(())
    }

    /// `index_put`'s checks, in ATen's order, and its scatter along dim 0 of this
    /// tensor with the indexed dims merged into one.
    fn index_put_plan(&self, indices: &[&Tensor], values: &Tensor) -> Result<IndexPut> {
        let index_error = invalid;
        let shape = self.shape();
        let mut dims: Vec<(Vec<usize>, Vec<i64>)> = Vec::new(); // (shape, values) per dim
        for t in indices {
            match t.dtype() {
                DType::I64 | DType::I32 => {
                    if dims.len() >= shape.len() {
                        return Err(too_many(shape.len(), indices));
                    }
                    dims.push((t.shape(), t.to_dtype(DType::I64)?.to_vec::<i64>()?));
                }
                DType::Bool | DType::U8 => {
                    let k = t.ndim();
                    self.check_mask_dims(t, dims.len())?;
                    // the mask's nonzero positions, one coordinate vector per dim
                    let truth = t.ne(0)?.to_vec::<bool>()?;
                    let mask_shape = t.shape();
                    let mut coords = vec![Vec::new(); k];
                    for (flat, _) in truth.iter().enumerate().filter(|(_, &b)| b) {
                        let mut rest = flat;
                        for j in (0..k).rev() {
                            coords[j].push((rest % mask_shape[j]) as i64);
                            rest /= mask_shape[j];
                        }
                    }
                    for c in coords {
                        dims.push((vec![c.len()], c));
                    }
                }
                _ => {
                    return Err(index_error(
                        "tensors used as indices must be long, int, byte or bool tensors".into(),
                    ))
                }
            }
        }
        let mut broadcast = lazyfuse_ir::layout::Dims::new();
        for (s, _) in &dims {
            broadcast = lazyfuse_ir::broadcast::broadcast_shapes(&broadcast, s).map_err(|_| {
                let all: Vec<String> = dims.iter().map(|(s, _)| fmt_shape(s)).collect();
                index_error(format!(
                    "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                    all.join(", ")
                ))
            })?;
        }
        if self.dtype() != values.dtype() {
            return Err(invalid(format!(
                "Index put requires the source and destination dtypes match, got {} for the destination and {} for the source.",
                self.dtype().torch_name(),
                values.dtype().torch_name()
            )));
        }
        refuse_wide_unsigned(self, "index_put")?;
        let k = dims.len();
        let rest = &shape[k..];
        let result: Vec<usize> = broadcast.iter().chain(rest).copied().collect();
        if lazyfuse_ir::broadcast::broadcast_shapes(&values.shape(), &result)
            .ok()
            .as_deref()
            != Some(&result[..])
        {
            return Err(invalid(format!(
                "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
                fmt_shape(&values.shape()),
                fmt_shape(&result)
            )));
        }
        // positions in the merged indexed dims, each index checked against its dim
        let n: usize = broadcast.iter().product();
        let mut linear = vec![0i64; n];
        let mut scale = 1i64;
        for d in (0..k).rev() {
            let (s, vals) = &dims[d];
            let size = shape[d] as i64;
            for (p, slot) in linear.iter_mut().enumerate() {
                let v = vals[source_position(p, &broadcast, s)];
                if v < -size || v >= size {
                    return Err(index_error(format!(
                        "index {v} is out of bounds for dimension {d} with size {size}"
                    )));
                }
                *slot += (if v < 0 { v + size } else { v }) * scale;
            }
            scale *= size;
        }
        let work_shape: Vec<usize> = std::iter::once(scale as usize)
            .chain(rest.iter().copied())
            .collect();
        let rows: Vec<usize> = std::iter::once(n).chain(rest.iter().copied()).collect();
        let index = Tensor::from_vec_on(linear, &[n], self.device())?;
        let index = spread(&index, 0, &rows)?;
        let values = values
            .expand(&to_isize(&result))?
            .reshape(&to_isize(&rows))?;
        Ok(IndexPut {
            work_shape,
            index,
            values,
        })
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
            // (a zero-dim CPU tensor joins the source on any device)
            let a = Tensor::full_on(&[], alpha, self.dtype(), Device::CPU)?;
            src.mul(&a)?.to_dtype(self.dtype())?
        };
        let idx = spread(index, d, &src.shape())?;
        Ok((d as isize, idx, src))
    }

    /// `index_copy`'s checks, in ATen's order (the index values last: they are read
    /// now), and what its scatter takes: the dim, the index broadcast to the
    /// source's shape, and the source.
    fn index_copy_args(
        &self,
        dim: isize,
        index: &Tensor,
        source: &Tensor,
    ) -> Result<(isize, Tensor, Tensor)> {
        let d = wrap_dim(dim, self.ndim())?;
        if index.ndim() > 1 {
            return Err(invalid(format!(
                "index_copy_(): Index should have dimension 1 or 0 (got {})",
                index.ndim()
            )));
        }
        let n = index.numel();
        if source.ndim() == 0 && n != 1 {
            return Err(invalid(format!(
                "index_copy_(): When source is scalar, index should have one element (got {n})"
            )));
        }
        if source.ndim() != self.ndim() && source.ndim() != 0 && self.ndim() != 0 {
            return Err(invalid(format!(
                "index_copy_(): When source and destination are not scalars, their dimensionality must match. Source dimensionality ({}), destination dimensionality ({})",
                source.ndim(),
                self.ndim()
            )));
        }
        if index.dtype() != DType::I64 {
            return Err(invalid(format!(
                "index_copy_(): Expected a long tensor for index, but got {}",
                index.dtype().torch_name()
            )));
        }
        if self.dtype() != source.dtype() {
            return Err(invalid(format!(
                "index_copy_(): self and source expected to have the same dtype, but got (self) {} and (source) {}",
                self.dtype().torch_name(),
                source.dtype().torch_name()
            )));
        }
        let sliced = |t: &Tensor| {
            let mut shape = t.shape();
            if !shape.is_empty() {
                shape.remove(d.min(shape.len() - 1));
            }
            shape
        };
        let (self_rest, source_rest) = (sliced(self), sliced(source));
        if self_rest != source_rest {
            let words = |s: &[usize]| s.iter().map(usize::to_string).collect::<Vec<_>>().join(" ");
            return Err(invalid(format!(
                "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: {} at dimension {d} and source slice shape: {} at dimension 0.",
                words(&self_rest),
                words(&source_rest)
            )));
        }
        if source.ndim() != 0 && n != source.shape()[d] {
            return Err(invalid(format!(
                "index_copy_(): Number of indices ({n}) should be equal to source.size(dim) ({})",
                source.shape()[d]
            )));
        }
        refuse_wide_unsigned(self, "index_copy_cpu")?;
        let size = if self.ndim() == 0 { 1 } else { self.shape()[d] };
        for v in index.to_vec::<i64>()? {
            if v < 0 || v as u64 >= size as u64 {
                return Err(invalid(format!(
                    "index_copy_(): index {v} is out of bounds for dimension {d} with size {size}"
                )));
            }
        }
        let src = source.at_least_1d()?;
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

/// `index_put`'s scatter: the tensor's shape with the indexed dims merged, the
/// merged positions broadcast over the other dims, and the values in that shape.
struct IndexPut {
    work_shape: Vec<usize>,
    index: Tensor,
    values: Tensor,
}

/// The flat position in an index of shape `own` (broadcast to `full`) of the element
/// at flat position `p` of `full`.
fn source_position(p: usize, full: &[usize], own: &[usize]) -> usize {
    let (mut rest, mut pos, mut stride) = (p, 0, 1);
    for d in (0..full.len()).rev() {
        let i = rest % full[d].max(1);
        rest /= full[d].max(1);
        let od = d as isize - (full.len() - own.len()) as isize;
        if od >= 0 {
            let size = own[od as usize];
            if size != 1 {
                pos += i * stride;
            }
            stride *= size;
        }
    }
    pos
}

/// PyTorch's "too many indices for tensor of dimension 2 (got 3)" (a mask counts
/// its dims).
fn too_many(ndim: usize, indices: &[&Tensor]) -> crate::Error {
    let got: usize = indices
        .iter()
        .map(|t| {
            if matches!(t.dtype(), DType::Bool | DType::U8) {
                t.ndim()
            } else {
                1
            }
        })
        .sum();
    invalid(format!(
        "too many indices for tensor of dimension {ndim} (got {got})"
    ))
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
