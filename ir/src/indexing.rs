//! Build-time rules of the indexing and shaping ops (`gather`, `scatter*`,
//! `index_select`, `take`, `masked_select`, `tril`/`triu`, `flip`, `pad`): which
//! dtypes PyTorch 2.15's CPU kernels accept (with their refusals), the index dtype
//! checks, and the shape checks of ATen's `scatter_gather` helpers, with PyTorch's
//! messages. Pure functions, so that they can be tested without a graph.
//!
//! Index *values* are only known when the graph runs; the interpreter checks them.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::op::ScatterReduce;
use crate::shape::fmt_shape;

/// The storage-only dtypes no scatter/gather kernel is compiled for.
fn storage_only(dtype: DType) -> bool {
    dtype.is_float8() || matches!(dtype, DType::C32 | DType::BC32)
}

/// `gather`'s dtype table: every computable dtype; complex32 and the float8 types are
/// refused with the kernel name PyTorch reports, which depends on whether its
/// "expanded index" path would run (`expanded_index`: `dim == 0` and an index whose
/// strides are `[1, 0, 0, …]`, on a tensor with dims).
///
/// ```
/// use lazyfuse_ir::{indexing::gather_dtype, DType};
/// assert!(gather_dtype(DType::Bool, false).is_ok());
/// assert_eq!(
///     gather_dtype(DType::C32, false).unwrap_err().to_string(),
///     "\"scatter_gather_tensor_cpu\" not implemented for 'ComplexHalf'"
/// );
/// ```
pub fn gather_dtype(dtype: DType, expanded_index: bool) -> Result<()> {
    if dtype.is_float8() && expanded_index {
        return Err(Error::not_implemented("gather_expanded_index", dtype));
    }
    if storage_only(dtype) {
        return Err(Error::not_implemented("scatter_gather_tensor_cpu", dtype));
    }
    Ok(())
}

/// The dtype table of `scatter` (`reduce: None`; `value`: a host scalar source),
/// `scatter_add` (`Sum`) and `scatter_reduce` (`include_self: false` has a kernel of
/// its own, missing for the wide unsigned and storage-only dtypes).
///
/// ```
/// use lazyfuse_ir::{indexing::scatter_dtype, DType, ScatterReduce};
/// assert!(scatter_dtype(DType::Bool, Some(ScatterReduce::Amax), true, false).is_ok());
/// assert_eq!(
///     scatter_dtype(DType::C64, Some(ScatterReduce::Amin), true, false).unwrap_err().to_string(),
///     "\"scatter_gather_tensor_cpu_reduce_amin\" not implemented for 'ComplexFloat'"
/// );
/// ```
pub fn scatter_dtype(
    dtype: DType,
    reduce: Option<ScatterReduce>,
    include_self: bool,
    value: bool,
) -> Result<()> {
    if !include_self && (storage_only(dtype) || dtype.is_wide_unsigned()) {
        return Err(Error::not_implemented(
            "scatter_reduce_exclude_input_init",
            dtype,
        ));
    }
    let refused = match reduce {
        None | Some(ScatterReduce::Sum) | Some(ScatterReduce::Prod) => storage_only(dtype),
        Some(ScatterReduce::Mean) => {
            storage_only(dtype) || dtype.is_wide_unsigned() || dtype == DType::Bool
        }
        Some(ScatterReduce::Amax) | Some(ScatterReduce::Amin) => {
            storage_only(dtype) || dtype.is_wide_unsigned() || dtype.is_complex()
        }
    };
    if !refused {
        return Ok(());
    }
    let kernel = match reduce {
        None if value => "scatter_gather_scalar_cpu".to_string(),
        None | Some(ScatterReduce::Sum) | Some(ScatterReduce::Prod) => {
            "scatter_gather_tensor_cpu".to_string()
        }
        Some(r) => format!("scatter_gather_tensor_cpu_reduce_{}", r.name()),
    };
    Err(Error::not_implemented(kernel, dtype))
}

/// `take`'s dtype table: no wide unsigned, complex32 or float8 kernel.
///
/// ```
/// use lazyfuse_ir::{indexing::take_dtype, DType};
/// assert!(take_dtype(DType::C64).is_ok());
/// assert!(take_dtype(DType::U16).is_err());
/// ```
pub fn take_dtype(dtype: DType) -> Result<()> {
    if dtype.is_wide_unsigned() || storage_only(dtype) {
        return Err(Error::not_implemented("take_cpu", dtype));
    }
    Ok(())
}

/// `masked_select`'s dtype table: every dtype but the wide unsigned ones (it only
/// moves data, so the storage-only dtypes work).
///
/// ```
/// use lazyfuse_ir::{indexing::masked_select_dtype, DType};
/// assert!(masked_select_dtype(DType::F8E5M2).is_ok());
/// assert!(masked_select_dtype(DType::U32).is_err());
/// ```
pub fn masked_select_dtype(dtype: DType) -> Result<()> {
    if dtype.is_wide_unsigned() {
        return Err(Error::not_implemented("masked_select", dtype));
    }
    Ok(())
}

/// `tril`/`triu`'s dtype table: no wide unsigned or float8 kernel (complex32 works).
///
/// ```
/// use lazyfuse_ir::{indexing::triangle_dtype, DType};
/// assert!(triangle_dtype(DType::Bool, true).is_ok());
/// assert_eq!(
///     triangle_dtype(DType::U64, false).unwrap_err().to_string(),
///     "\"tril\" not implemented for 'UInt64'"
/// );
/// ```
pub fn triangle_dtype(dtype: DType, upper: bool) -> Result<()> {
    if dtype.is_wide_unsigned() || dtype.is_float8() {
        return Err(Error::not_implemented(
            if upper { "triu" } else { "tril" },
            dtype,
        ));
    }
    Ok(())
}

/// `flip`'s dtype table: no complex32 or float8 kernel, except on PyTorch's path that
/// copies whole blocks, taken when the elements after the last flipped dim
/// (`inner`) are more than one.
///
/// ```
/// use lazyfuse_ir::{indexing::flip_dtype, DType};
/// assert!(flip_dtype(DType::U64, 1).is_ok());
/// assert!(flip_dtype(DType::F8E4M3FN, 1).is_err());
/// assert!(flip_dtype(DType::F8E4M3FN, 4).is_ok());
/// ```
pub fn flip_dtype(dtype: DType, inner: usize) -> Result<()> {
    if storage_only(dtype) && inner <= 1 {
        return Err(Error::not_implemented("flip_cpu", dtype));
    }
    Ok(())
}

/// The index dtype check of `gather`/`scatter*` (`int32` or `int64`; PyTorch skips it
/// for an empty index).
///
/// ```
/// use lazyfuse_ir::{indexing::scatter_gather_index_dtype, DType};
/// assert!(scatter_gather_index_dtype("gather", DType::I32, 2).is_ok());
/// assert_eq!(
///     scatter_gather_index_dtype("scatter", DType::F32, 2).unwrap_err().to_string(),
///     "scatter(): Expected dtype int32/int64 for index"
/// );
/// ```
pub fn scatter_gather_index_dtype(op: &str, index: DType, index_numel: usize) -> Result<()> {
    if index_numel != 0 && !matches!(index, DType::I32 | DType::I64) {
        return Err(Error::invalid(
            op,
            format!("{op}(): Expected dtype int32/int64 for index"),
        ));
    }
    Ok(())
}

/// The number of dims ATen's scatter/gather checks see (a zero-dim tensor counts as
/// one dim of size 1).
fn nonempty_shape(shape: &[usize]) -> Vec<usize> {
    if shape.is_empty() {
        vec![1]
    } else {
        shape.to_vec()
    }
}

/// ATen's `gather_shape_check`: the index has the input's number of dims and is no
/// larger in every dim but `axis` (the caller skips it for an empty index, as PyTorch).
///
/// ```
/// use lazyfuse_ir::indexing::gather_shape;
/// assert!(gather_shape(&[2, 3], 1, &[2, 7]).is_ok());
/// assert_eq!(
///     gather_shape(&[2, 3], 1, &[3, 3]).unwrap_err().to_string(),
///     "Size does not match at dimension 0 expected index [3, 3] to be no larger than self [2, 3] apart from dimension 1"
/// );
/// ```
pub fn gather_shape(input: &[usize], axis: usize, index: &[usize]) -> Result<()> {
    let (s, i) = (nonempty_shape(input), nonempty_shape(index));
    if s.len() != i.len() {
        return Err(Error::invalid(
            "gather",
            "Index tensor must have the same number of dimensions as input tensor",
        ));
    }
    for d in 0..s.len() {
        if d != axis && i[d] > s[d] {
            return Err(Error::invalid(
                "gather",
                format!(
                    "Size does not match at dimension {d} expected index {} to be no larger than self {} apart from dimension {axis}",
                    fmt_shape(index),
                    fmt_shape(input)
                ),
            ));
        }
    }
    Ok(())
}

/// ATen's `scatter_shape_check` (skipped for an empty index): the index has the input's
/// number of dims, is no larger than the input in every dim but `axis`, and no larger
/// than `src` (when the source is a tensor) in every dim; then `src` has the index's
/// number of dims.
///
/// ```
/// use lazyfuse_ir::indexing::scatter_shape;
/// assert!(scatter_shape(&[3, 3], 0, &[4, 2], Some(&[5, 5])).is_ok());
/// assert_eq!(
///     scatter_shape(&[3, 3], 0, &[2, 2], Some(&[1, 2])).unwrap_err().to_string(),
///     "Expected index [2, 2] to be no larger than self [3, 3] apart from dimension 0 and to be no larger size than src [1, 2]"
/// );
/// ```
pub fn scatter_shape(
    input: &[usize],
    axis: usize,
    index: &[usize],
    src: Option<&[usize]>,
) -> Result<()> {
    if index.iter().product::<usize>() == 0 {
        return Ok(());
    }
    let (s, i) = (nonempty_shape(input), nonempty_shape(index));
    if s.len() != i.len() {
        return Err(Error::invalid(
            "scatter",
            "Index tensor must have the same number of dimensions as self tensor",
        ));
    }
    let mut wrong = (0..s.len()).any(|d| d != axis && i[d] > s[d]);
    if let (false, Some(src)) = (wrong, src) {
        let src_n = nonempty_shape(src);
        for (d, &size) in i.iter().enumerate() {
            // ATen reads `src.size(d)` through dim wrapping: a source with fewer dims
            // fails with the dim error.
            // (`ensure_nonempty_size`: a zero-dim source has size 1 in every dim)
            let Some(&src_size) = src_n.get(d).or(src.is_empty().then_some(&1)) else {
                let n = src_n.len() as isize;
                return Err(Error::DimOutOfRange {
                    dim: d as isize,
                    min: -n,
                    max: n - 1,
                });
            };
            if size > src_size {
                wrong = true;
                break;
            }
        }
    }
    // Checked after the sizes (a source with fewer dims fails with the dim error) but
    // before the size message, whichever size was wrong, as ATen does.
    if src.is_some_and(|src| nonempty_shape(src).len() != i.len()) {
        return Err(Error::invalid(
            "scatter",
            "Index tensor must have the same number of dimensions as src tensor",
        ));
    }
    if !wrong {
        return Ok(());
    }
    let mut message = format!(
        "Expected index {} to be no larger than self {} apart from dimension {axis}",
        fmt_shape(index),
        fmt_shape(input)
    );
    if let Some(src) = src {
        message.push_str(&format!(
            " and to be no larger size than src {}",
            fmt_shape(src)
        ));
    }
    Err(Error::invalid("scatter", message))
}

/// What `pad` (constant mode) does to one dim: keep `len` elements from `start` of
/// the input (negative pads crop), then add `before`/`after` elements of the value.
///
/// ```
/// use lazyfuse_ir::indexing::{pad_plan, PadDim};
/// let plan = pad_plan(&[5], &[-2, 3]).unwrap();
/// assert_eq!(plan, vec![PadDim { start: 2, len: 3, before: 0, after: 3 }]);
/// assert_eq!(plan[0].size(), 6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PadDim {
    /// first input element kept
    pub start: usize,
    /// number of input elements kept
    pub len: usize,
    /// elements of the value before them
    pub before: usize,
    /// elements of the value after them
    pub after: usize,
}

impl PadDim {
    /// The dim's size after padding.
    pub fn size(&self) -> usize {
        self.before + self.len + self.after
    }
}

/// The plan of `constant_pad_nd(shape, pad)`: `pad` holds `(left, right)` pairs from
/// the last dim backwards. One [`PadDim`] per dim of `shape`, with PyTorch's checks
/// and messages.
///
/// ```
/// use lazyfuse_ir::indexing::pad_plan;
/// let plan = pad_plan(&[2, 3], &[-1, 2]).unwrap();
/// assert_eq!(plan.iter().map(|p| p.size()).collect::<Vec<_>>(), vec![2, 4]);
/// assert_eq!(
///     pad_plan(&[2, 3], &[1]).unwrap_err().to_string(),
///     "Padding length must be divisible by 2"
/// );
/// ```
pub fn pad_plan(shape: &[usize], pad: &[i64]) -> Result<Vec<PadDim>> {
    let bad = |m: String| Err(Error::invalid("pad", m));
    if !pad.len().is_multiple_of(2) {
        return bad("Padding length must be divisible by 2".into());
    }
    if pad.len() / 2 > shape.len() {
        return bad(format!(
            "Padding length should be less than or equal to two times the input dimension but got padding length {} and input of dimension {}",
            pad.len(),
            shape.len()
        ));
    }
    let mut plan: Vec<PadDim> = shape
        .iter()
        .map(|&s| PadDim {
            start: 0,
            len: s,
            before: 0,
            after: 0,
        })
        .collect();
    for (i, pair) in pad.chunks(2).enumerate() {
        let d = shape.len() - 1 - i;
        let (l, r) = (pair[0] as i128, pair[1] as i128);
        let size = shape[d] as i128;
        // PyTorch narrows for the negative pads first, then checks the new size.
        let start = (-l).max(0);
        let len = size - start - (-r).max(0);
        if len < 0 {
            return bad("narrow(): length must be non-negative.".into());
        }
        // ATen adds the pads in int64: a sum that wraps reads as negative.
        let new = size + l + r;
        let wrapped = (shape[d] as i64)
            .wrapping_add(pair[0])
            .wrapping_add(pair[1]);
        if new > i64::MAX as i128 && wrapped >= 0 {
            // wrapped twice back to a valid size: ATen fails in its narrow instead
            return bad("narrow(): length must be non-negative.".into());
        }
        if new < 0 || new > i64::MAX as i128 {
            return bad(format!(
                "The input size {size}, plus negative padding {} and {} resulted in a negative output size, which is invalid. Check dimension {d} of your input.",
                pair[0], pair[1]
            ));
        }
        plan[d] = PadDim {
            start: start as usize,
            len: len as usize,
            before: l.max(0) as usize,
            after: r.max(0) as usize,
        };
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_reduce_tables() {
        use ScatterReduce::*;
        assert!(scatter_dtype(DType::U16, Some(Sum), true, false).is_ok());
        assert_eq!(
            scatter_dtype(DType::U16, Some(Sum), false, false)
                .unwrap_err()
                .to_string(),
            "\"scatter_reduce_exclude_input_init\" not implemented for 'UInt16'"
        );
        assert_eq!(
            scatter_dtype(DType::Bool, Some(Mean), true, false)
                .unwrap_err()
                .to_string(),
            "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"
        );
        assert_eq!(
            scatter_dtype(DType::C32, None, true, true)
                .unwrap_err()
                .to_string(),
            "\"scatter_gather_scalar_cpu\" not implemented for 'ComplexHalf'"
        );
        assert!(scatter_dtype(DType::U64, Some(Amax), true, false).is_err());
        assert!(scatter_dtype(DType::C128, Some(Mean), true, false).is_ok());
    }

    #[test]
    fn scatter_shape_with_short_src_is_a_dim_error() {
        assert_eq!(
            scatter_shape(&[3, 3], 0, &[2, 2], Some(&[5]))
                .unwrap_err()
                .to_string(),
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
        );
        assert!(scatter_shape(&[3, 3], 0, &[2, 0], Some(&[5])).is_ok());
    }

    #[test]
    fn pad_messages() {
        assert_eq!(
            pad_plan(&[2, 3], &[-4, 0]).unwrap_err().to_string(),
            "narrow(): length must be non-negative."
        );
        assert_eq!(
            pad_plan(&[2, 3], &[1 << 62, 1 << 62]).unwrap_err().to_string(),
            "The input size 3, plus negative padding 4611686018427387904 and 4611686018427387904 resulted in a negative output size, which is invalid. Check dimension 1 of your input."
        );
        assert_eq!(pad_plan(&[2, 3], &[-3, 0]).unwrap()[1].size(), 0);
    }
}
