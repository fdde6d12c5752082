//! Views that reorder dims: `transpose`, `permute`, `movedim`, `t`, `mT`.

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::shape::wrap_dim;

impl Layout {
    /// `Tensor.transpose(d0, d1)` (also `swapaxes`): swaps two dims.
    pub fn transpose(&self, d0: isize, d1: isize) -> Result<Layout> {
        let a = wrap_dim(d0, self.ndim())?;
        let b = wrap_dim(d1, self.ndim())?;
        let mut out = self.clone();
        // A 0-d tensor accepts dims 0/-1 and stays as it is.
        if self.ndim() > 0 {
            out.shape.swap(a, b);
            out.strides.swap(a, b);
        }
        Ok(out)
    }

    /// `Tensor.permute(dims)`: dim `i` of the result is dim `dims[i]` of the input.
    pub fn permute(&self, dims: &[isize]) -> Result<Layout> {
        let n = self.ndim();
        if dims.len() != n {
            return Err(Error::invalid(
                "permute",
                format!(
                    "permute(): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal to len(dims) = {}",
                    dims.len()
                ),
            ));
        }
        let mut seen = crate::shape::filled(false, n);
        let mut out = Layout {
            shape: crate::layout::Dims::with_capacity(n),
            strides: crate::layout::Steps::with_capacity(n),
            offset: self.offset,
        };
        for &d in dims {
            let d = wrap_dim(d, n)?;
            if seen[d] {
                return Err(Error::invalid(
                    "permute",
                    "permute(): duplicate dims are not allowed.",
                ));
            }
            seen[d] = true;
            out.shape.push(self.shape[d]);
            out.strides.push(self.strides[d]);
        }
        Ok(out)
    }

    /// `Tensor.movedim(src, dst)`: moves one dim, keeping the others in order.
    pub fn movedim(&self, src: isize, dst: isize) -> Result<Layout> {
        let n = self.ndim();
        let s = wrap_dim(src, n)?;
        let d = wrap_dim(dst, n)?;
        if n == 0 || s == d {
            return Ok(self.clone());
        }
        let mut order: Vec<usize> = (0..n).filter(|&i| i != s).collect();
        order.insert(d, s);
        Ok(Layout {
            shape: order.iter().map(|&i| self.shape[i]).collect(),
            strides: order.iter().map(|&i| self.strides[i]).collect(),
            offset: self.offset,
        })
    }

    /// `Tensor.t()`: transposes a 2-D layout; 0-D and 1-D stay as they are.
    pub fn t(&self) -> Result<Layout> {
        match self.ndim() {
            0 | 1 => Ok(self.clone()),
            2 => self.transpose(0, 1),
            n => Err(Error::invalid(
                "t",
                format!("t() expects a tensor with <= 2 dimensions, but self is {n}D"),
            )),
        }
    }

    /// `Tensor.mT`: swaps the last two dims (ndim >= 2; a 0-D layout stays as it is).
    pub fn mt(&self) -> Result<Layout> {
        self.matrix_transpose("mT")
    }
}
