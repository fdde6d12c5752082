//! Sorting along a dim: `sort`, `argsort` and `topk`, as a rank computed by
//! comparisons. Element `i`'s place in its row is the number of elements that
//! come before it (smaller, or equal and earlier: a stable order); the
//! permutation is that rank scattered, the values a gather through it. The
//! comparisons broadcast to `[.., n, n]` but feed a sum, so the scheduler runs
//! them inside the reduction's loop: nothing of size `n²` is stored, and the work
//! is `n²` comparisons per row. NaN sorts as larger than every number (last
//! ascending, first descending), as in PyTorch. The values' gradient flows back
//! through the gather.

use crate::{Result, Tensor};
use lazyfuse_ir::shape::wrap_dim;
use lazyfuse_ir::{DType, Error as IrError};

impl Tensor {
    /// PyTorch's `torch.sort(input, dim, descending, stable)`: the values along
    /// `dim` in order, and their positions in `self` (int64). Ties keep their
    /// order (the result is the stable one whatever `stable` says: PyTorch allows
    /// any order of ties without it).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![3.0f32, 1.0, f32::NAN, 1.0], &[4])?;
    /// let (values, indices) = x.sort(0, false, true)?;
    /// let v = values.to_vec::<f32>()?;
    /// assert_eq!(&v[..3], &[1.0, 1.0, 3.0]);
    /// assert!(v[3].is_nan());
    /// assert_eq!(indices.to_vec::<i64>()?, vec![1, 3, 0, 2]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn sort(&self, dim: isize, descending: bool, stable: bool) -> Result<(Tensor, Tensor)> {
        let _ = stable;
        if self.dtype().is_complex() {
            return Err(IrError::not_implemented("sort", self.dtype()).into());
        }
        if self.ndim() == 0 {
            wrap_dim(dim, 0)?;
            let zero = Tensor::zeros_on(&[], DType::I64, self.device())?;
            return Ok((self.clone(), zero));
        }
        let d = wrap_dim(dim, self.ndim())? as isize;
        let rows = self.movedim(d, -1)?;
        let order = rows.sort_order(descending)?;
        let values = rows.gather(-1, &order)?;
        Ok((values.movedim(-1, d)?, order.movedim(-1, d)?))
    }

    /// PyTorch's `torch.argsort(input, dim, descending, stable)`: the positions of
    /// [`Tensor::sort`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![2i32, 9, 4], &[3])?;
    /// assert_eq!(x.argsort(0, true, true)?.to_vec::<i64>()?, vec![1, 2, 0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn argsort(&self, dim: isize, descending: bool, stable: bool) -> Result<Tensor> {
        self.sort(dim, descending, stable)
            .map(|(_, indices)| indices)
    }

    /// PyTorch's `torch.topk(input, k, dim, largest, sorted)`: the `k` largest (or
    /// smallest) values along `dim` and their positions, in order (also when
    /// `sorted` is false, which lets PyTorch return any order).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![2.0f32, 9.0, 4.0, 7.0], &[4])?;
    /// let (v, i) = x.topk(2, -1, true, true)?;
    /// assert_eq!((v.to_vec::<f32>()?, i.to_vec::<i64>()?), (vec![9.0, 7.0], vec![1, 3]));
    /// assert!(x.topk(5, -1, true, true).is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn topk(
        &self,
        k: usize,
        dim: isize,
        largest: bool,
        sorted: bool,
    ) -> Result<(Tensor, Tensor)> {
        let _ = sorted;
        let d = wrap_dim(dim, self.ndim())?;
        let n = if self.ndim() == 0 { 1 } else { self.shape()[d] };
        if k > n {
            return Err(IrError::invalid("topk", "selected index k out of range").into());
        }
        let (values, indices) = self.sort(dim, largest, true)?;
        if self.ndim() == 0 {
            return Ok((values, indices));
        }
        Ok((
            values.narrow(d as isize, 0, k)?,
            indices.narrow(d as isize, 0, k)?,
        ))
    }

    /// The stable sorting permutation of each row (the last dim) of `self`.
    fn sort_order(&self, descending: bool) -> Result<Tensor> {
        let n = *self.shape().last().unwrap_or(&1);
        let device = self.device();
        // element i along the second-to-last dim, element j along the last
        let (xi, xj) = (self.unsqueeze(-1)?, self.unsqueeze(-2)?);
        let ahead = if descending {
            xj.after(&xi)?
        } else {
            xi.after(&xj)?
        };
        let equal = xj.eq(&xi)?;
        let equal = if self.dtype().is_floating_point() {
            equal.logical_or(&xj.isnan()?.logical_and(&xi.isnan()?)?)?
        } else {
            equal
        };
        let iota = Tensor::arange_on(0.0, n as f64, 1.0, DType::I64, device)?;
        let earlier = iota.unsqueeze(0)?.lt(&iota.unsqueeze(1)?)?;
        let before = ahead.logical_or(&equal.logical_and(&earlier)?)?;
        let rank = before.sum(&[-1], false)?;
        let positions =
            iota.expand(&rank.shape().iter().map(|&d| d as isize).collect::<Vec<_>>())?;
        Tensor::zeros_like(&rank, None)?.scatter(-1, &rank, &positions)
    }

    /// Whether `self` comes after `other` in ascending order, NaN after every
    /// number.
    fn after(&self, other: &Tensor) -> Result<Tensor> {
        let gt = self.gt(other)?;
        if self.dtype().is_floating_point() {
            gt.logical_or(&self.isnan()?.logical_and(&other.isnan()?.logical_not()?)?)
        } else {
            Ok(gt)
        }
    }
}
