//! Views that cut a tensor into several: `split`, `split_sizes`, `chunk`, `unbind`.

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::shape::{fmt_shape, wrap_dim};

impl Layout {
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
