//! Views that add, drop or broadcast dims: `expand`, `squeeze`, `unsqueeze`.

use super::{fmt_ishape, mul_stride};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::shape::{fmt_shape, wrap_dim};

impl Layout {
    /// `Tensor.expand(shape)` (ATen's `inferExpandGeometry`): sizes align from the
    /// right, `-1` keeps a size, new leading dims are allowed; an expanded dim gets
    /// stride 0, and a new leading dim of size 1 gets `size * stride` of the next dim.
    pub fn expand(&self, shape: &[isize]) -> Result<Layout> {
        let n = shape.len();
        let nd = self.ndim();
        if n < nd {
            return Err(Error::invalid(
                "expand",
                format!(
                    "expand(size={}): the number of sizes provided ({n}) must be greater or equal to the number of dimensions in the tensor ({nd})",
                    fmt_ishape(shape)
                ),
            ));
        }
        let negative = || {
            Error::invalid(
                "expand",
                format!(
                    "Trying to create tensor with negative dimension {}: {}",
                    shape.iter().copied().find(|&s| s < 0).unwrap_or(-1),
                    fmt_ishape(shape)
                ),
            )
        };
        if nd == 0 {
            // A 0-d tensor broadcasts everywhere with stride 0, even to size-1 dims.
            if shape.iter().any(|&s| s < 0) {
                return Err(if shape.contains(&-1) {
                    Error::invalid(
                        "expand",
                        format!(
                            "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {}",
                            shape.iter().position(|&s| s == -1).unwrap_or(0)
                        ),
                    )
                } else {
                    negative()
                });
            }
            let sizes: crate::layout::Dims = shape.iter().map(|&s| s as usize).collect();
            crate::shape::checked_count(&sizes)?;
            return Ok(Layout {
                shape: sizes,
                strides: crate::layout::Steps::from_elem(0, n),
                offset: self.offset,
            });
        }
        let mut sizes = crate::layout::Dims::from_elem(0, n);
        let mut strides = crate::layout::Steps::from_elem(0, n);
        for i in (0..n).rev() {
            let from_end = n - 1 - i;
            let existing = (from_end < nd).then(|| nd - 1 - from_end);
            let (mut size, mut stride) = match existing {
                Some(d) => (self.shape[d], self.strides[d]),
                // `i + 1 < n` holds: the last dim always exists when `nd > 0`.
                None => (1, mul_stride(sizes[i + 1], strides[i + 1])?),
            };
            let mut target = shape[i];
            if target == -1 {
                if existing.is_none() {
                    return Err(Error::invalid(
                        "expand",
                        format!(
                            "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                        ),
                    ));
                }
                target = size as isize;
            }
            if target < 0 {
                return Err(negative());
            }
            if size != target as usize {
                if size != 1 {
                    return Err(Error::Expand {
                        target,
                        existing: size,
                        dim: i,
                        target_shape: fmt_ishape(shape),
                        tensor_shape: fmt_shape(&self.shape),
                    });
                }
                size = target as usize;
                stride = 0;
            }
            sizes[i] = size;
            strides[i] = stride;
        }
        // PyTorch computes the view's numel with overflow checks.
        crate::shape::checked_count(&sizes)?;
        Ok(Layout {
            shape: sizes,
            strides,
            offset: self.offset,
        })
    }

    /// `Tensor.squeeze()`: drops every size-1 dim.
    pub fn squeeze(&self) -> Layout {
        let (shape, strides) = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(&s, _)| s != 1)
            .map(|(&s, &st)| (s, st))
            .unzip();
        Layout {
            shape,
            strides,
            offset: self.offset,
        }
    }

    /// `Tensor.squeeze(dim)`: drops `dim` if its size is 1, else returns the same layout.
    pub fn squeeze_dim(&self, dim: isize) -> Result<Layout> {
        let d = wrap_dim(dim, self.ndim())?;
        let mut out = self.clone();
        if self.ndim() > 0 && self.shape[d] == 1 {
            out.shape.remove(d);
            out.strides.remove(d);
        }
        Ok(out)
    }

    /// `Tensor.unsqueeze(dim)`: inserts a size-1 dim at `dim` in `[-ndim-1, ndim]`, with
    /// stride `shape[dim] * strides[dim]` (1 when it becomes the last dim).
    pub fn unsqueeze(&self, dim: isize) -> Result<Layout> {
        let n = self.ndim();
        let d = wrap_dim(dim, n + 1)?;
        let stride = if d >= n {
            1
        } else {
            mul_stride(self.shape[d], self.strides[d])?
        };
        let mut out = self.clone();
        out.shape.insert(d, 1);
        out.strides.insert(d, stride);
        Ok(out)
    }
}
