//! Views that regroup dims without moving elements: `view`, `reshape`,
//! `flatten`, `unflatten` (ATen's `computeStride` chunks) and `infer_shape`.

use super::{compute_stride, fmt_ishape};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::shape::{numel, wrap_dim};

impl Layout {
    /// Resolves a requested shape with at most one `-1` against `numel`, as ATen's
    /// `infer_size`: the `-1` takes whatever size makes the element counts agree.
    ///
    /// ```
    /// use lazyfuse_ir::Layout;
    /// assert_eq!(Layout::infer_shape(&[2, -1], 6).unwrap(), vec![2, 3]);
    /// assert!(Layout::infer_shape(&[2, 5], 6).is_err());
    /// ```
    pub fn infer_shape(shape: &[isize], numel: usize) -> Result<Vec<usize>> {
        let invalid = || {
            Error::invalid(
                "view",
                format!(
                    "shape '{}' is invalid for input of size {numel}",
                    fmt_ishape(shape)
                ),
            )
        };
        let mut known: Option<usize> = Some(1);
        let mut infer_dim = None;
        let mut out = Vec::with_capacity(shape.len());
        for (d, &s) in shape.iter().enumerate() {
            if s == -1 {
                if infer_dim.is_some() {
                    return Err(Error::invalid("view", "only one dimension can be inferred"));
                }
                infer_dim = Some(d);
                out.push(0);
            } else if s >= 0 {
                // An overflowing product cannot equal any real element count.
                known = known.and_then(|k| k.checked_mul(s as usize));
                out.push(s as usize);
            } else {
                return Err(Error::invalid(
                    "view",
                    format!("invalid shape dimension {s}"),
                ));
            }
        }
        let known = known.ok_or_else(invalid)?;
        let fits =
            numel == known || (infer_dim.is_some() && known > 0 && numel.is_multiple_of(known));
        if !fits {
            return Err(invalid());
        }
        if let Some(d) = infer_dim {
            if known == 0 {
                return Err(Error::invalid(
                    "view",
                    format!(
                        "cannot reshape tensor of 0 elements into shape {} because the unspecified dimension size -1 can be any value and is ambiguous",
                        fmt_ishape(shape)
                    ),
                ));
            }
            out[d] = numel / known;
        }
        Ok(out)
    }

    /// `Tensor.view(shape)`: the same elements under a new shape, never a copy; fails
    /// with [`Error::ViewIncompatible`] when the strides cannot express it.
    pub fn view(&self, shape: &[isize]) -> Result<Layout> {
        let shape = Layout::infer_shape(shape, self.numel())?;
        let strides =
            compute_stride(&self.shape, &self.strides, &shape).ok_or(Error::ViewIncompatible)?;
        Ok(Layout {
            shape: shape.into(),
            strides: strides.into(),
            offset: self.offset,
        })
    }

    /// `Tensor.reshape(shape)`: `Some(view)` where PyTorch returns a view, `None` where
    /// it copies (the caller then makes `Layout::contiguous` of the inferred shape over a
    /// new storage; [`Layout::infer_shape`] gives that shape).
    pub fn reshape(&self, shape: &[isize]) -> Result<Option<Layout>> {
        let shape = Layout::infer_shape(shape, self.numel())?;
        Ok(
            compute_stride(&self.shape, &self.strides, &shape).map(|strides| Layout {
                shape: shape.into(),
                strides: strides.into(),
                offset: self.offset,
            }),
        )
    }

    /// The shape `Tensor.flatten(start, end)` produces: dims `start..=end` merged into
    /// one (`[1]` for a 0-d input). Also the shape of the copy when
    /// [`Layout::flatten`] answers `None`.
    pub fn flatten_shape(&self, start: isize, end: isize) -> Result<Vec<usize>> {
        let s = wrap_dim(start, self.ndim())?;
        let e = wrap_dim(end, self.ndim())?;
        if s > e {
            return Err(Error::invalid(
                "flatten",
                "flatten() has invalid args: start_dim cannot come after end_dim",
            ));
        }
        if self.ndim() == 0 {
            return Ok(vec![1]);
        }
        let mut shape = self.shape[..s].to_vec();
        shape.push(numel(&self.shape[s..=e]));
        shape.extend_from_slice(&self.shape[e + 1..]);
        Ok(shape)
    }

    /// `Tensor.flatten(start, end)`: merges dims `start..=end` through `reshape`
    /// (`None` = PyTorch copies, into `Layout::contiguous(flatten_shape(..))`). A 0-d
    /// input gives shape `[1]`; `start == end` returns the same layout.
    pub fn flatten(&self, start: isize, end: isize) -> Result<Option<Layout>> {
        let shape = self.flatten_shape(start, end)?;
        if self.ndim() > 0 && wrap_dim(start, self.ndim())? == wrap_dim(end, self.ndim())? {
            return Ok(Some(self.clone()));
        }
        Ok(
            compute_stride(&self.shape, &self.strides, &shape).map(|strides| Layout {
                shape: shape.into(),
                strides: strides.into(),
                offset: self.offset,
            }),
        )
    }

    /// `Tensor.unflatten(dim, sizes)`: splits `dim` into `sizes` (one `-1` allowed),
    /// through `view`.
    pub fn unflatten(&self, dim: isize, sizes: &[isize]) -> Result<Layout> {
        let d = wrap_dim(dim, self.ndim())?;
        if self.ndim() == 0 {
            return Err(Error::invalid(
                "unflatten",
                "dimension specified as 0 but tensor has no dimensions",
            ));
        }
        if sizes.is_empty() {
            return Err(Error::invalid(
                "unflatten",
                "unflatten: sizes must be non-empty",
            ));
        }
        let inner = Layout::infer_shape(sizes, self.shape[d]).map_err(|e| match e {
            // infer_size's "invalid for input of size" is reworded by PyTorch here.
            Error::Invalid { message, .. } if message.starts_with("shape '") => Error::invalid(
                "unflatten",
                format!(
                    "unflatten: Provided sizes {} don't multiply up to the size of dim {d} ({}) in the input tensor",
                    fmt_ishape(sizes),
                    self.shape[d]
                ),
            ),
            other => other,
        })?;
        let mut shape = self.shape[..d].to_vec();
        shape.extend_from_slice(&inner);
        shape.extend_from_slice(&self.shape[d + 1..]);
        let strides =
            compute_stride(&self.shape, &self.strides, &shape).ok_or(Error::ViewIncompatible)?;
        Ok(Layout {
            shape: shape.into(),
            strides: strides.into(),
            offset: self.offset,
        })
    }
}
