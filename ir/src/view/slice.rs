//! Views of part of a tensor: `narrow`, `select`, `slice`, `diagonal`, `unfold`,
//! `as_strided`.

use super::{fmt_ishape, mul_stride, shift};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::shape::{fmt_shape, wrap_dim};

impl Layout {
    /// `Tensor.narrow(dim, start, length)`: `length` elements from `start` (negative
    /// `start` counts from the end) along `dim`.
    pub fn narrow(&self, dim: isize, start: isize, length: usize) -> Result<Layout> {
        if self.ndim() == 0 {
            return Err(Error::invalid(
                "narrow",
                "narrow() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let size = self.shape[d] as isize;
        if start < -size || start > size {
            return Err(Error::invalid(
                "narrow",
                format!(
                    "start out of range (expected to be in range of [{}, {size}], but got {start})",
                    -size
                ),
            ));
        }
        let start = if start < 0 { start + size } else { start };
        if isize::try_from(length).map_or(true, |l| start > size - l) {
            return Err(Error::invalid(
                "narrow",
                format!("start ({start}) + length ({length}) exceeds dimension size ({size})."),
            ));
        }
        self.slice(d as isize, Some(start), Some(start + length as isize), 1)
    }

    /// `Tensor.select(dim, index)`: removes `dim`, fixing it at `index` (negative
    /// counts from the end).
    pub fn select(&self, dim: isize, index: isize) -> Result<Layout> {
        if self.ndim() == 0 {
            return Err(Error::invalid(
                "select",
                "select() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let size = self.shape[d] as isize;
        if index < -size || index >= size {
            return Err(Error::invalid(
                "select",
                format!(
                    "select(): index {index} out of range for tensor of size {} at dimension {d}",
                    fmt_shape(&self.shape)
                ),
            ));
        }
        let index = if index < 0 { index + size } else { index };
        let mut out = self.clone();
        out.offset = shift(self.offset, mul_stride(index as usize, self.strides[d])?)?;
        out.shape.remove(d);
        out.strides.remove(d);
        Ok(out)
    }

    /// ATen's `slice(dim, start, stop, step)`, i.e. Python's `x[..., start:stop:step]`:
    /// `None` is the default bound, negatives count from the end, out-of-range bounds
    /// are clamped. The offset moves by `start * stride` even when the result is empty.
    pub fn slice(
        &self,
        dim: isize,
        start: Option<isize>,
        stop: Option<isize>,
        step: usize,
    ) -> Result<Layout> {
        if self.ndim() == 0 {
            return Err(Error::invalid(
                "slice",
                "slice() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        if step == 0 {
            return Err(Error::invalid("slice", "slice step must be positive"));
        }
        let size = self.shape[d] as isize;
        let mut start = start.unwrap_or(0);
        let mut stop = stop.unwrap_or(isize::MAX);
        if start < 0 {
            start = start.saturating_add(size);
        }
        if stop < 0 {
            stop = stop.saturating_add(size);
        }
        start = start.clamp(0, size);
        stop = stop.clamp(start, size);
        let len = (stop - start) as usize;
        let mut out = self.clone();
        out.offset = shift(self.offset, mul_stride(start as usize, self.strides[d])?)?;
        out.shape[d] = len.div_ceil(step);
        out.strides[d] = mul_stride(step, self.strides[d])?;
        Ok(out)
    }

    /// `Tensor.diagonal(offset, d1, d2)`: removes `d1` and `d2` and appends their
    /// diagonal (above the main one for `offset > 0`) as the last dim, possibly empty.
    pub fn diagonal(&self, offset: isize, d1: isize, d2: isize) -> Result<Layout> {
        let a = wrap_dim(d1, self.ndim())?;
        let b = wrap_dim(d2, self.ndim())?;
        if a == b {
            return Err(Error::invalid(
                "diagonal",
                format!("diagonal dimensions cannot be identical {d1}, {d2}"),
            ));
        }
        // Distinct wrapped dims imply ndim >= 2, so both index real dims.
        let (sa, sb) = (self.shape[a] as i128, self.shape[b] as i128);
        let off = offset as i128;
        let diag = if off >= 0 {
            sa.min(sb - off).max(0)
        } else {
            (sa + off).min(sb).max(0)
        } as usize;
        let mut storage_offset = self.offset;
        // PyTorch leaves the offset alone for an empty diagonal ("off the end").
        if diag > 0 {
            storage_offset = if offset >= 0 {
                shift(self.offset, mul_stride(offset as usize, self.strides[b])?)?
            } else {
                shift(
                    self.offset,
                    mul_stride(offset.unsigned_abs(), self.strides[a])?,
                )?
            };
        }
        let diag_stride = self.strides[a]
            .checked_add(self.strides[b])
            .ok_or_else(|| Error::invalid("diagonal", "stride arithmetic overflows"))?;
        let mut out = Layout {
            shape: self.shape.clone(),
            strides: self.strides.clone(),
            offset: storage_offset,
        };
        // Remove the larger dim first so the smaller one's index stays valid.
        for d in [a.max(b), a.min(b)] {
            out.shape.remove(d);
            out.strides.remove(d);
        }
        out.shape.push(diag);
        out.strides.push(diag_stride);
        Ok(out)
    }

    /// `Tensor.as_strided(size, stride, storage_offset)`: any geometry over the same
    /// storage. `offset` is absolute (not relative to this layout's offset); the result
    /// must fit in a storage of `storage_numel` elements. The bounds message counts bytes
    /// with PyTorch's wording for an 8-byte element type; [`Layout::as_strided_sized`]
    /// takes the element size.
    pub fn as_strided(
        &self,
        size: &[usize],
        stride: &[isize],
        offset: usize,
        storage_numel: usize,
    ) -> Result<Layout> {
        self.as_strided_sized(size, stride, offset, storage_numel, 8)
    }

    /// [`Layout::as_strided`] over a storage of `itemsize`-byte elements: PyTorch's
    /// bounds message counts bytes ("and itemsize 4 requiring a storage size of 20 are
    /// out of bounds for storage of size 16").
    ///
    /// ```
    /// use lazyfuse_ir::Layout;
    /// let e = Layout::contiguous(&[4]).as_strided_sized(&[3], &[2], 0, 4, 2).unwrap_err();
    /// assert_eq!(e.to_string(), "setStorage: sizes [3], strides [2], storage offset 0, and itemsize 2 requiring a storage size of 10 are out of bounds for storage of size 8");
    /// ```
    pub fn as_strided_sized(
        &self,
        size: &[usize],
        stride: &[isize],
        offset: usize,
        storage_numel: usize,
        itemsize: usize,
    ) -> Result<Layout> {
        let item = itemsize as u128;
        if size.len() != stride.len() {
            return Err(Error::invalid(
                "as_strided",
                "mismatch in length of strides and shape",
            ));
        }
        if stride.iter().any(|&s| s < 0) {
            return Err(Error::invalid(
                "as_strided",
                format!(
                    "as_strided: Negative strides are not supported at the moment, got strides: {}",
                    fmt_ishape(stride)
                ),
            ));
        }
        // ATen's computeStorageNbytes, in saturating u128 so that huge requests fail the
        // bounds check instead of overflowing.
        let needed_elems: u128 = if size.contains(&0) {
            0
        } else {
            size.iter()
                .zip(stride)
                .map(|(&s, &st)| (s as u128 - 1).saturating_mul(st as u128))
                .fold(1u128, u128::saturating_add)
        };
        if needed_elems > 0 {
            let needed = needed_elems
                .saturating_add(offset as u128)
                .saturating_mul(item);
            let have = storage_numel as u128 * item;
            if needed > have {
                return Err(Error::invalid(
                    "as_strided",
                    format!(
                        "setStorage: sizes {}, strides {}, storage offset {offset}, and itemsize {item} requiring a storage size of {needed} are out of bounds for storage of size {have}",
                        fmt_shape(size),
                        fmt_ishape(stride)
                    ),
                ));
            }
        }
        // Stride-0 geometries pass the storage bound at any size: the numel check.
        crate::shape::checked_count(size)?;
        Ok(Layout {
            shape: crate::layout::Dims::from_slice(size),
            strides: crate::layout::Steps::from_slice(stride),
            offset,
        })
    }

    /// `Tensor.unfold(dim, size, step)`: windows of `size` elements every `step` along
    /// `dim`; the window index replaces `dim` and a last dim of length `size` is added.
    pub fn unfold(&self, dim: isize, size: usize, step: usize) -> Result<Layout> {
        let n = self.ndim();
        let d = wrap_dim(dim, n)?;
        let max_size = if n == 0 { 1 } else { self.shape[d] };
        if size > max_size {
            return Err(Error::invalid(
                "unfold",
                format!(
                    "maximum size for tensor at dimension {d} is {max_size} but size is {size}"
                ),
            ));
        }
        if step == 0 {
            return Err(Error::invalid("unfold", "step is 0 but must be > 0"));
        }
        let mut out = self.clone();
        out.shape.push(size);
        out.strides.push(if n == 0 { 1 } else { self.strides[d] });
        if n > 0 {
            out.shape[d] = (self.shape[d] - size) / step + 1;
            out.strides[d] = mul_stride(step, self.strides[d])?;
        }
        // Windows can hold more elements than the input (numel check, as PyTorch).
        crate::shape::checked_count(&out.shape)?;
        Ok(out)
    }
}
