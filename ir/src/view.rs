//! The view ops: pure rewrites of a [`Layout`] (shape, strides, storage offset) that
//! never touch the data, with PyTorch's exact geometry.
//!
//! Every op reproduces what ATen computes, including the strides of size-1 dims and of
//! empty tensors, which do not affect addressing but are observable (`.stride()`) and
//! checked by the conformance corpus. The rules that matter most:
//!
//! * `view`/`reshape`/`unflatten`/`flatten` use ATen's `computeStride`: the input is
//!   cut into "chunks" of dims that are contiguous with each other, and each chunk is
//!   re-split into the requested sizes; a size-1 dim of the result gets the stride the
//!   chunk has at its position. A 0-d input gives every new dim stride 1; an empty input
//!   keeps its strides when the shape is unchanged and otherwise gets row-major strides.
//! * `expand` (`inferExpandGeometry`): an expanded dim gets stride 0; a dim that keeps
//!   its size keeps its stride; a new leading dim of size 1 gets `size * stride` of the
//!   dim after it; a 0-d input gives stride 0 everywhere.
//! * `unsqueeze` inserts stride `shape[d] * strides[d]`, or 1 when appending a last dim.
//! * `slice`/`narrow` move the offset by `start * stride` even when the result is empty;
//!   `diagonal` moves it only when the diagonal is non-empty.
//! * `reshape` and `flatten` answer `None` where PyTorch copies: the caller then makes a
//!   row-major copy, whose layout is `Layout::contiguous(shape)` over the new storage.
//!
//! Dims are Python-style `isize` (negative counts from the end), wrapped with
//! [`wrap_dim`]; errors carry PyTorch's message text.

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::shape::{fmt_shape, numel, wrap_dim};

/// Formats a signed size list as PyTorch prints `IntArrayRef`s: `[2, -1]`.
fn fmt_ishape(shape: &[isize]) -> String {
    let parts: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// `offset + delta` as a storage index; a negative or overflowing result (only
/// reachable through a hand-built layout with negative strides) is an error, not a panic.
fn shift(offset: usize, delta: isize) -> Result<usize> {
    isize::try_from(offset)
        .ok()
        .and_then(|o| o.checked_add(delta))
        .and_then(|o| usize::try_from(o).ok())
        .ok_or_else(|| {
            Error::invalid(
                "view",
                format!("storage offset {offset} + {delta} is out of range"),
            )
        })
}

/// `size * stride` in `isize`, as an error rather than a panic on overflow.
fn mul_stride(size: usize, stride: isize) -> Result<isize> {
    isize::try_from(size)
        .ok()
        .and_then(|s| s.checked_mul(stride))
        .ok_or_else(|| Error::invalid("view", "stride arithmetic overflows"))
}

/// ATen's `computeStride`: strides that let `new_shape` address the same elements, in
/// the same row-major order, as `(old_shape, old_strides)`; `None` when no such strides
/// exist (some requested dim would span two non-contiguous chunks of the input).
fn compute_stride(
    old_shape: &[usize],
    old_strides: &[isize],
    new_shape: &[usize],
) -> Option<Vec<isize>> {
    // A 0-d input has no strides to follow: PyTorch answers 1 everywhere.
    if old_shape.is_empty() {
        return Some(vec![1; new_shape.len()]);
    }
    let old_numel = numel(old_shape);
    if old_numel == 0 {
        // Strides are arbitrary here; PyTorch keeps them for an unchanged shape and
        // otherwise uses the strides a fresh row-major tensor would have.
        if old_shape == new_shape {
            return Some(old_strides.to_vec());
        }
        let mut strides = vec![0isize; new_shape.len()];
        for d in (0..new_shape.len()).rev() {
            strides[d] = if d + 1 == new_shape.len() {
                1
            } else {
                (new_shape[d + 1].max(1) as isize).checked_mul(strides[d + 1])?
            };
        }
        return Some(strides);
    }

    let mut new_strides = vec![0isize; new_shape.len()];
    let mut view_d = new_shape.len() as isize - 1;
    // Stride of the innermost dim of the current chunk of mutually contiguous dims.
    let mut chunk_base_stride = *old_strides.last()?;
    let mut tensor_numel: isize = 1;
    let mut view_numel: isize = 1;
    for tensor_d in (0..old_shape.len()).rev() {
        tensor_numel = tensor_numel.checked_mul(old_shape[tensor_d] as isize)?;
        // A chunk ends at dim 0 or where the dim before is not contiguous with this one
        // (size-1 dims never break a chunk).
        let chunk_ends = tensor_d == 0
            || (old_shape[tensor_d - 1] != 1
                && Some(old_strides[tensor_d - 1]) != tensor_numel.checked_mul(chunk_base_stride));
        if chunk_ends {
            while view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d as usize] == 1) {
                new_strides[view_d as usize] = view_numel.checked_mul(chunk_base_stride)?;
                view_numel = view_numel.checked_mul(new_shape[view_d as usize] as isize)?;
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if tensor_d > 0 {
                chunk_base_stride = old_strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    if view_d != -1 {
        return None;
    }
    Some(new_strides)
}

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
            shape,
            strides,
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
                shape,
                strides,
                offset: self.offset,
            }),
        )
    }

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
        let mut seen = vec![false; n];
        let mut out = Layout {
            shape: Vec::with_capacity(n),
            strides: Vec::with_capacity(n),
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
            let sizes: Vec<usize> = shape.iter().map(|&s| s as usize).collect();
            crate::shape::checked_count(&sizes)?;
            return Ok(Layout {
                shape: sizes,
                strides: vec![0; n],
                offset: self.offset,
            });
        }
        let mut sizes = vec![0usize; n];
        let mut strides = vec![0isize; n];
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
            shape: size.to_vec(),
            strides: stride.to_vec(),
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
                shape,
                strides,
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
            shape,
            strides,
            offset: self.offset,
        })
    }

    /// `Tensor.split(size, dim)`: pieces of `size` along `dim`, the last possibly
    /// smaller (one empty piece for an empty dim).
    pub fn split(&self, size: usize, dim: isize) -> Result<Vec<Layout>> {
        if self.ndim() == 0 {
            return Err(Error::invalid(
                "split",
                "split expects at least a 1-dimensional tensor",
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let dim_size = self.shape[d];
        if size == 0 && dim_size != 0 {
            return Err(Error::invalid(
                "split",
                format!(
                    "split_size can only be 0 if dimension size is 0, but got dimension size of {dim_size}"
                ),
            ));
        }
        let pieces = if size == 0 {
            1
        } else {
            dim_size.div_ceil(size).max(1)
        };
        reserve_views("split", pieces)?;
        (0..pieces)
            .map(|i| {
                let start = i * size;
                let len = if i + 1 < pieces {
                    size
                } else {
                    dim_size - start.min(dim_size)
                };
                self.narrow(d as isize, start as isize, len)
            })
            .collect()
    }

    /// `Tensor.split(sizes, dim)` with explicit piece sizes, which must sum to the
    /// size of `dim` (`split_with_sizes`).
    pub fn split_sizes(&self, sizes: &[usize], dim: isize) -> Result<Vec<Layout>> {
        if self.ndim() == 0 {
            return Err(Error::invalid(
                "split",
                "split expects at least a 1-dimensional tensor",
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let dim_size = self.shape[d];
        let total = sizes.iter().try_fold(0usize, |acc, &s| acc.checked_add(s));
        if total != Some(dim_size) {
            return Err(Error::invalid(
                "split_with_sizes",
                format!(
                    "split_with_sizes expects split_sizes to sum exactly to {dim_size} (input tensor's size at dimension {dim}), but got split_sizes={}",
                    fmt_shape(sizes)
                ),
            ));
        }
        let mut start = 0isize;
        sizes
            .iter()
            .map(|&len| {
                let piece = self.slice(d as isize, Some(start), Some(start + len as isize), 1);
                start += len as isize;
                piece
            })
            .collect()
    }

    /// `Tensor.chunk(chunks, dim)`: pieces of `ceil(size / chunks)` (so possibly fewer
    /// than `chunks`); an empty dim gives `chunks` empty pieces.
    pub fn chunk(&self, chunks: usize, dim: isize) -> Result<Vec<Layout>> {
        if self.ndim() == 0 {
            return Err(Error::invalid(
                "chunk",
                "chunk expects at least a 1-dimensional tensor",
            ));
        }
        if chunks == 0 {
            return Err(Error::invalid(
                "chunk",
                "chunk expects `chunks` to be greater than 0, got: 0",
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let dim_size = self.shape[d];
        let size = dim_size.div_ceil(chunks);
        if dim_size == 0 {
            // split() would collapse the chunks into one piece; PyTorch keeps them all,
            // `chunks` empty views, so a huge count is an allocation failure (PyTorch's
            // `std::vector` messages), never a capacity-overflow panic.
            let mut out = reserve_views("chunk", chunks)?;
            let empty = self.narrow(d as isize, 0, 0)?;
            out.resize(chunks, empty);
            return Ok(out);
        }
        self.split(size, d as isize)
    }

    /// `Tensor.unbind(dim)`: every `select(dim, i)`.
    pub fn unbind(&self, dim: isize) -> Result<Vec<Layout>> {
        if self.ndim() == 0 {
            return Err(Error::invalid(
                "unbind",
                "Dimension specified as 0 but tensor has no dimensions",
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        reserve_views("unbind", self.shape[d])?;
        (0..self.shape[d])
            .map(|i| self.select(d as isize, i as isize))
            .collect()
    }
}

/// Checks that `n` views can be listed: a count the host cannot hold is PyTorch's
/// `std::vector` error ("cannot create std::vector larger than max_size()" beyond
/// its 8-byte-element limit, "std::bad_alloc" when the allocator refuses), never a
/// capacity-overflow panic or an abort.
pub(crate) fn reserve_views(op: &str, n: usize) -> Result<Vec<Layout>> {
    if n > isize::MAX as usize / 8 {
        return Err(Error::invalid(
            op,
            "cannot create std::vector larger than max_size()",
        ));
    }
    let mut out: Vec<Layout> = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| Error::invalid(op, "std::bad_alloc"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(shape: &[usize], strides: &[isize], offset: usize) -> Layout {
        Layout {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
        }
    }

    #[test]
    fn view_strides_of_size_one_dims_follow_their_chunk() {
        // A diagonal of a 1x1 matrix has stride 2; splitting it keeps 2 everywhere.
        let diag = l(&[1], &[2], 0);
        assert_eq!(diag.view(&[1, 1]).unwrap(), l(&[1, 1], &[2, 2], 0));
        // Size-1 dims inserted inside a contiguous block take the running stride.
        let c = Layout::contiguous(&[2, 3]);
        assert_eq!(c.view(&[2, 1, 3, 1]).unwrap().strides, vec![3, 3, 1, 1]);
        // A 0-d input gives stride 1 everywhere.
        assert_eq!(
            Layout::contiguous(&[]).view(&[1, 1]).unwrap().strides,
            vec![1, 1]
        );
    }

    #[test]
    fn view_of_empty_tensor() {
        let e = l(&[2, 0, 3], &[7, 5, 1], 4);
        // Same shape keeps the strides; another shape gets max(size, 1) row-major ones.
        assert_eq!(e.view(&[2, 0, 3]).unwrap().strides, vec![7, 5, 1]);
        assert_eq!(e.view(&[0, 6]).unwrap().strides, vec![6, 1]);
        assert_eq!(e.view(&[3, 0, 2]).unwrap().strides, vec![2, 2, 1]);
        assert!(e.view(&[-1, 0]).is_err());
    }

    #[test]
    fn view_fails_across_chunks_and_reshape_copies() {
        let t = Layout::contiguous(&[2, 3]).t().unwrap();
        assert_eq!(t.view(&[6]), Err(Error::ViewIncompatible));
        assert_eq!(t.reshape(&[6]).unwrap(), None);
        // Splitting a dim of a transposed tensor is a view.
        let v = t.reshape(&[3, 2, 1]).unwrap().unwrap();
        assert_eq!(v, l(&[3, 2, 1], &[1, 3, 3], 0));
        // Merging two dims that are contiguous with each other is a view too.
        let p = Layout::contiguous(&[2, 3, 4]).permute(&[1, 2, 0]).unwrap();
        let m = p.reshape(&[12, 2]).unwrap().unwrap();
        assert_eq!(m, l(&[12, 2], &[1, 12], 0));
    }

    #[test]
    fn infer_shape_errors() {
        assert_eq!(
            Layout::infer_shape(&[2, 5], 6).unwrap_err().to_string(),
            "shape '[2, 5]' is invalid for input of size 6"
        );
        assert_eq!(
            Layout::infer_shape(&[-1, -1], 6).unwrap_err().to_string(),
            "only one dimension can be inferred"
        );
        assert!(Layout::infer_shape(&[4, -1], 6).is_err());
        assert!(Layout::infer_shape(&[-2, 3], 6).is_err());
        assert_eq!(Layout::infer_shape(&[0, -1, 2], 0).unwrap_err().to_string(),
            "cannot reshape tensor of 0 elements into shape [0, -1, 2] because the unspecified dimension size -1 can be any value and is ambiguous");
        assert_eq!(Layout::infer_shape(&[-1, 2], 0).unwrap(), vec![0, 2]);
    }

    #[test]
    fn expand_stride_rule() {
        let a = l(&[4, 1], &[1, 1], 0);
        // Expanded dim: 0; kept dim: its stride; new leading size-1 dims: size*stride.
        assert_eq!(
            a.expand(&[1, 1, 4, 2]).unwrap(),
            l(&[1, 1, 4, 2], &[4, 4, 1, 0], 0)
        );
        assert_eq!(a.expand(&[3, -1, 1]).unwrap(), l(&[3, 4, 1], &[0, 1, 1], 0));
        // A 0-d input: stride 0 everywhere, size-1 dims included.
        assert_eq!(
            Layout::contiguous(&[]).expand(&[1, 3]).unwrap().strides,
            vec![0, 0]
        );
        let err = a.expand(&[4, 3, 2]).unwrap_err();
        assert!(matches!(err, Error::Expand { dim: 1, .. }), "{err}");
        assert!(a.expand(&[-1, 4, 1]).is_err());
        assert!(a.expand(&[2]).is_err());
    }

    #[test]
    fn unsqueeze_stride_rule() {
        let a = l(&[3, 4], &[1, 3], 2);
        assert_eq!(a.unsqueeze(0).unwrap(), l(&[1, 3, 4], &[3, 1, 3], 2));
        assert_eq!(a.unsqueeze(1).unwrap(), l(&[3, 1, 4], &[1, 12, 3], 2));
        assert_eq!(a.unsqueeze(-1).unwrap(), l(&[3, 4, 1], &[1, 3, 1], 2));
        assert_eq!(
            Layout::contiguous(&[]).unsqueeze(-1).unwrap(),
            l(&[1], &[1], 0)
        );
        assert!(a.unsqueeze(3).is_err());
        assert!(a.unsqueeze(-4).is_err());
    }

    #[test]
    fn slice_narrow_select_offsets() {
        let a = Layout::contiguous(&[3, 2, 3]);
        // An empty slice still moves the offset by start * stride.
        assert_eq!(
            a.slice(2, Some(-1), Some(-1), 1).unwrap(),
            l(&[3, 2, 0], &[6, 3, 1], 2)
        );
        assert_eq!(
            a.slice(0, None, None, 2).unwrap(),
            l(&[2, 2, 3], &[12, 3, 1], 0)
        );
        assert_eq!(a.slice(0, Some(-10), Some(10), 1).unwrap(), a);
        assert_eq!(a.narrow(1, -1, 1).unwrap(), l(&[3, 1, 3], &[6, 3, 1], 3));
        assert!(a.narrow(1, 1, 2).is_err());
        assert!(a.narrow(1, 3, 0).is_err());
        assert_eq!(a.select(0, -1).unwrap(), l(&[2, 3], &[3, 1], 12));
        assert_eq!(
            a.select(0, 5).unwrap_err().to_string(),
            "select(): index 5 out of range for tensor of size [3, 2, 3] at dimension 0"
        );
        assert!(Layout::contiguous(&[]).select(0, 0).is_err());
    }

    #[test]
    fn diagonal_offsets_and_errors() {
        let a = Layout::contiguous(&[3, 4]);
        assert_eq!(a.diagonal(1, 0, 1).unwrap(), l(&[3], &[5], 1));
        assert_eq!(a.diagonal(-2, 0, 1).unwrap(), l(&[1], &[5], 8));
        // An empty diagonal leaves the offset alone.
        assert_eq!(a.diagonal(9, 0, 1).unwrap(), l(&[0], &[5], 0));
        assert_eq!(
            a.diagonal(0, 1, -1).unwrap_err().to_string(),
            "diagonal dimensions cannot be identical 1, -1"
        );
    }

    #[test]
    fn unfold_as_strided_and_splits() {
        let a = Layout::contiguous(&[5]);
        assert_eq!(a.unfold(0, 2, 2).unwrap(), l(&[2, 2], &[2, 1], 0));
        assert_eq!(
            Layout::contiguous(&[3])
                .unfold(0, 4, 1)
                .unwrap_err()
                .to_string(),
            "maximum size for tensor at dimension 0 is 3 but size is 4"
        );
        assert!(a.unfold(0, 2, 0).is_err());
        assert_eq!(
            Layout::contiguous(&[]).unfold(0, 1, 1).unwrap(),
            l(&[1], &[1], 0)
        );
        assert!(a.as_strided(&[2, 2], &[2, 1], 1, 5).is_ok());
        assert_eq!(
            a.as_strided(&[2, 2], &[2, 1], 2, 5).unwrap_err().to_string(),
            "setStorage: sizes [2, 2], strides [2, 1], storage offset 2, and itemsize 8 requiring a storage size of 48 are out of bounds for storage of size 40"
        );
        assert!(a.as_strided(&[0, 2], &[100, 1], 100, 5).is_ok());
        let parts = a.split(2, 0).unwrap();
        assert_eq!(
            parts.iter().map(|p| p.shape[0]).collect::<Vec<_>>(),
            vec![2, 2, 1]
        );
        assert_eq!(parts[2].offset, 4);
        let chunks = Layout::contiguous(&[0, 2]).chunk(3, 0).unwrap();
        assert_eq!(chunks.len(), 3);
        assert_eq!(a.chunk(3, 0).unwrap().len(), 3);
        assert_eq!(Layout::contiguous(&[6]).chunk(4, 0).unwrap().len(), 3);
        assert!(a.split_sizes(&[2, 2], 0).is_err());
        assert_eq!(a.unbind(0).unwrap()[3], l(&[], &[], 3));
    }

    #[test]
    fn absurd_arguments_are_errors_not_panics() {
        let a = Layout::contiguous(&[4]);
        let big = usize::MAX;
        assert!(a
            .as_strided(&[big, big, big], &[isize::MAX; 3], big, 4)
            .is_err());
        assert!(Layout::infer_shape(&[isize::MAX, isize::MAX, -1], 4).is_err());
        assert!(a.narrow(0, isize::MIN, big).is_err());
        assert!(a.slice(0, Some(isize::MIN), Some(isize::MAX), big).is_err()); // stride 1 * usize::MAX overflows isize
        assert!(a.diagonal(isize::MIN, 0, 1).is_err());
        assert!(a.unsqueeze(0).unwrap().diagonal(isize::MIN, 0, 1).is_ok());
        // PyTorch: "numel: integer multiplication overflow"
        assert!(a.expand(&[isize::MAX, 4]).is_err());
        assert!(a.expand(&[-2, 4]).is_err());
        assert!(a.unfold(0, big, 1).is_err());
        assert!(a.split(big, 0).is_ok());
        assert!(a.split_sizes(&[big, 5], 0).is_err());
        assert!(a.chunk(big, 0).is_ok());
    }

    #[test]
    fn flatten_movedim_t() {
        let a = Layout::contiguous(&[2, 3, 4]);
        assert_eq!(a.flatten(0, 1).unwrap().unwrap(), l(&[6, 4], &[4, 1], 0));
        assert_eq!(a.flatten(1, 1).unwrap().unwrap(), a);
        assert_eq!(
            Layout::contiguous(&[]).flatten(0, -1).unwrap().unwrap(),
            l(&[1], &[1], 0)
        );
        let p = a.movedim(0, -1).unwrap();
        assert_eq!(p, l(&[3, 4, 2], &[4, 1, 12], 0));
        assert_eq!(p.flatten(1, 2).unwrap(), None);
        assert_eq!(p.flatten_shape(1, 2).unwrap(), vec![3, 8]);
        assert!(a.flatten(2, 1).is_err());
        assert!(a.t().is_err());
        assert_eq!(a.mt().unwrap(), l(&[2, 4, 3], &[12, 1, 4], 0));
        assert!(Layout::contiguous(&[3]).mt().is_err());
        assert_eq!(
            a.unflatten(-1, &[2, -1]).unwrap(),
            l(&[2, 3, 2, 2], &[12, 4, 2, 1], 0)
        );
        assert!(a.unflatten(0, &[3, -1]).is_err());
    }
}
