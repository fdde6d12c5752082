//! PyTorch's `torch.memory_format`, and the strides PyTorch gives the tensors it
//! allocates: a format's strides, `preserve_format`'s (`empty_like`), and the output of
//! an elementwise op (TensorIterator's rule: the inputs' dim order decides the output's).
//!
//! These are decided while the graph is built, like dtypes and shapes: a result whose
//! strides are not row-major is a storage computed in its own dim order (the kernel
//! writes it densely, reading the inputs through a permuted view), presented under
//! PyTorch's strides. Nothing is copied to get there.

use crate::error::Result;
use lazyfuse_ir::shape::contiguous_strides;
use lazyfuse_ir::{Error as IrError, Layout};
use std::fmt;

/// A memory format, as `torch.memory_format`.
///
/// ```
/// use lazyfuse::{DType, MemoryFormat, Tensor};
/// let x = Tensor::zeros(&[2, 3, 4, 5], DType::F32).contiguous_in(MemoryFormat::ChannelsLast)?;
/// assert_eq!(x.strides(), vec![60, 1, 15, 3]);
/// assert!(x.is_contiguous_in(MemoryFormat::ChannelsLast) && !x.is_contiguous());
/// assert_eq!(x.exp()?.strides(), vec![60, 1, 15, 3]); // elementwise results keep it
/// assert_eq!(MemoryFormat::ChannelsLast.to_string(), "torch.channels_last");
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryFormat {
    /// row-major: the last dim is innermost
    Contiguous,
    /// NHWC order of a 4-D tensor: channels innermost
    ChannelsLast,
    /// NDHWC order of a 5-D tensor
    ChannelsLast3d,
    /// the input's own dim order (for the ops that copy a tensor)
    Preserve,
}

impl fmt::Display for MemoryFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemoryFormat::Contiguous => "torch.contiguous_format",
            MemoryFormat::ChannelsLast => "torch.channels_last",
            MemoryFormat::ChannelsLast3d => "torch.channels_last_3d",
            MemoryFormat::Preserve => "torch.preserve_format",
        })
    }
}

/// True when `strides` are exactly the row-major strides of `shape`, size-1 dims
/// included (what PyTorch's rules give back for such an input; `is_contiguous`
/// forgives size-1 and empty dims, these rules do not).
pub(crate) fn is_row_major(shape: &[usize], strides: &[isize]) -> bool {
    let mut expected = 1isize;
    for d in (0..shape.len()).rev() {
        if strides[d] != expected {
            return false;
        }
        expected = expected.saturating_mul(shape[d].max(1) as isize);
    }
    true
}

/// The strides of `format` for a new tensor of `shape`; `op` names the caller in the
/// rank error. `Preserve` asks for row-major strides here; the copying ops decide it
/// themselves ([`copy_strides`]).
pub(crate) fn format_strides(
    shape: &[usize],
    format: MemoryFormat,
    op: &str,
) -> Result<Vec<isize>> {
    // channels innermost, then the spatial dims from the last, then the batch
    // (`c10::get_channels_last_strides_*`: a size 0 counts as 0 here)
    let channels_last = |order: &[usize]| {
        let mut out = vec![0isize; shape.len()];
        let mut acc = 1isize;
        for &d in order {
            out[d] = acc;
            acc = acc.saturating_mul(shape[d] as isize);
        }
        out
    };
    match format {
        MemoryFormat::Contiguous | MemoryFormat::Preserve => Ok(contiguous_strides(shape)),
        MemoryFormat::ChannelsLast if shape.len() == 4 => Ok(channels_last(&[1, 3, 2, 0])),
        MemoryFormat::ChannelsLast3d if shape.len() == 5 => Ok(channels_last(&[1, 4, 3, 2, 0])),
        MemoryFormat::ChannelsLast => {
            Err(IrError::invalid(op, "required rank 4 tensor to use channels_last format").into())
        }
        MemoryFormat::ChannelsLast3d => Err(IrError::invalid(
            op,
            "required rank 5 tensor to use channels_last_3d format",
        )
        .into()),
    }
}

/// PyTorch's `is_contiguous(memory_format)`: the strides are `format`'s, size-1 dims
/// aside. A channels-last format asks a tensor of its rank; others answer false.
/// `Preserve` asks row-major contiguity, as PyTorch does.
pub(crate) fn is_contiguous_as(shape: &[usize], strides: &[isize], format: MemoryFormat) -> bool {
    let dense_in = |order: &[usize]| {
        let mut expected = 1isize;
        for &d in order {
            if shape[d] == 1 {
                continue;
            }
            if strides[d] != expected {
                return false;
            }
            expected = expected.saturating_mul(shape[d] as isize);
        }
        true
    };
    match format {
        MemoryFormat::Contiguous | MemoryFormat::Preserve => {
            shape.contains(&0) || dense_in(&(0..shape.len()).rev().collect::<Vec<_>>())
        }
        MemoryFormat::ChannelsLast => shape.len() == 4 && dense_in(&[1, 3, 2, 0]),
        MemoryFormat::ChannelsLast3d => shape.len() == 5 && dense_in(&[1, 4, 3, 2, 0]),
    }
}

/// PyTorch's `is_non_overlapping_and_dense` ([`Layout`]'s, on a bare geometry).
fn is_non_overlapping_and_dense(shape: &[usize], strides: &[isize]) -> bool {
    Layout {
        shape: lazyfuse_ir::layout::Dims::from_slice(shape),
        strides: lazyfuse_ir::layout::Steps::from_slice(strides),
        offset: 0,
    }
    .is_non_overlapping_and_dense()
}

/// Packs `shape` densely in the order `perm` gives (innermost first), multiplying
/// by each size as it is (PyTorch's `compatible_stride`).
fn packed(shape: &[usize], perm: &[usize], skip_small: bool) -> Vec<isize> {
    let mut out = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for &d in perm {
        out[d] = acc;
        if !skip_small || shape[d] > 1 {
            acc = acc.saturating_mul(shape[d] as isize);
        }
    }
    out
}

/// Sorts dims innermost first by insertion with an ambiguous comparison, from the
/// row-major order (TensorIterator's `reorder_dimensions`); `should_swap(d0, d1)` is
/// positive when `d0` belongs after `d1`, negative when before, 0 when it cannot tell.
fn reorder(ndim: usize, should_swap: impl Fn(usize, usize) -> i32) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..ndim).rev().collect();
    for i in 1..ndim {
        let mut d1 = i;
        for d0 in (0..i).rev() {
            match should_swap(perm[d0], perm[d1]) {
                c if c > 0 => {
                    perm.swap(d0, d1);
                    d1 = d0;
                }
                c if c < 0 => break,
                _ => {}
            }
        }
    }
    perm
}

/// The strides of PyTorch's `preserve_format` for a new dense tensor shaped like a
/// view with these strides (`at::infer_dense_strides`): dims ordered by stride
/// (innermost first; equal strides by size; a stride 0 is ambiguous and keeps the
/// row-major order), then packed.
pub(crate) fn dense_strides_like(shape: &[usize], strides: &[isize]) -> Vec<isize> {
    let perm = reorder(shape.len(), |d0, d1| {
        let (s0, s1) = (strides[d0], strides[d1]);
        if s0 == 0 || s1 == 0 {
            0
        } else if s0 != s1 {
            if s0 < s1 {
                -1
            } else {
                1
            }
        } else if shape[d0] > shape[d1] {
            1
        } else {
            0
        }
    });
    packed(shape, &perm, true)
}

/// The strides `empty_like(preserve_format)` gives a copy of a tensor: its own when
/// they are dense and non-overlapping, else [`dense_strides_like`].
pub(crate) fn preserved_strides(shape: &[usize], strides: &[isize]) -> Vec<isize> {
    if is_non_overlapping_and_dense(shape, strides) {
        strides.to_vec()
    } else {
        dense_strides_like(shape, strides)
    }
}

/// The strides of a copy in `format` (`clone`, `*_like`, `to`): `Preserve` keeps the
/// input's dim order.
pub(crate) fn copy_strides(
    shape: &[usize],
    strides: &[isize],
    format: MemoryFormat,
    op: &str,
) -> Result<Vec<isize>> {
    match format {
        MemoryFormat::Preserve => Ok(preserved_strides(shape, strides)),
        other => format_strides(shape, other, op),
    }
}

/// One input of an elementwise op, as TensorIterator sees it: its shape and strides
/// (a host scalar is a 0-dim tensor), and whether it is converted to the op's common
/// dtype first (PyTorch copies such an input, in `preserve_format`, before it looks).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operand<'a> {
    pub(crate) shape: &'a [usize],
    pub(crate) strides: &'a [isize],
    pub(crate) converted: bool,
}

/// The strides PyTorch gives the output of an elementwise op of `shape` over
/// `inputs`, or `None` for row-major ones (TensorIterator: `fast_set_up`, else
/// `reorder_dimensions` and `compatible_stride`).
pub(crate) fn elementwise_strides(shape: &[usize], inputs: &[Operand]) -> Option<Vec<isize>> {
    // a converted input is looked at as its copy
    let owned: Vec<(Vec<isize>, &[usize])> = inputs
        .iter()
        .map(|op| {
            let strides = if op.converted {
                preserved_strides(op.shape, op.strides)
            } else {
                op.strides.to_vec()
            };
            (strides, op.shape)
        })
        .collect();
    // Fast set-up: operands of one shape that are all row-major, all channels-last,
    // or all dense with equal strides give those strides.
    if owned.iter().all(|(_, s)| *s == owned[0].1) {
        let all = |f: &dyn Fn(&[usize], &[isize]) -> bool| owned.iter().all(|(st, s)| f(s, st));
        if all(&|s, st| is_contiguous_as(s, st, MemoryFormat::Contiguous)) {
            return None;
        }
        if all(&|s, st| is_contiguous_as(s, st, MemoryFormat::ChannelsLast)) {
            return format_strides(shape, MemoryFormat::ChannelsLast, "").ok();
        }
        let last = &owned[owned.len() - 1].0;
        if all(&is_non_overlapping_and_dense) && owned.iter().all(|(st, _)| st == last) {
            return Some(last.clone());
        }
    }
    // The general rule: each input's strides over the output's dims (0 where it is
    // broadcast), compared in operand order.
    let ndim = shape.len();
    let aligned: Vec<Vec<isize>> = owned
        .iter()
        .map(|(st, s)| {
            let lead = ndim - s.len();
            (0..ndim)
                .map(|d| {
                    if d < lead || (s[d - lead] == 1 && shape[d] != 1) {
                        0
                    } else {
                        st[d - lead]
                    }
                })
                .collect()
        })
        .collect();
    let perm = if ndim == 1 {
        vec![0]
    } else {
        reorder(ndim, |d0, d1| {
            for st in &aligned {
                let (s0, s1) = (st[d0], st[d1]);
                if s0 == 0 || s1 == 0 {
                    continue;
                }
                if s0 != s1 {
                    return if s0 < s1 { -1 } else { 1 };
                }
                if shape[d0] > shape[d1] {
                    return 1;
                }
            }
            0
        })
    };
    if perm.iter().copied().eq((0..ndim).rev()) {
        return None;
    }
    Some(packed(shape, &perm, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op<'a>(shape: &'a [usize], strides: &'a [isize]) -> Operand<'a> {
        Operand {
            shape,
            strides,
            converted: false,
        }
    }

    #[test]
    fn channels_last_inputs_give_channels_last_outputs() {
        let (s, cl) = ([2, 3, 4, 5], [60, 1, 15, 3]);
        assert_eq!(elementwise_strides(&s, &[op(&s, &cl)]), Some(cl.to_vec()));
        let scalar = op(&[], &[]);
        assert_eq!(
            elementwise_strides(&s, &[op(&s, &cl), scalar]),
            Some(cl.to_vec())
        );
        let row = contiguous_strides(&s);
        assert_eq!(
            elementwise_strides(&s, &[op(&s, &cl), op(&s, &row)]),
            Some(cl.to_vec())
        );
        assert_eq!(elementwise_strides(&s, &[op(&s, &row), op(&s, &cl)]), None);
    }

    #[test]
    fn a_transpose_keeps_its_order() {
        let (s, t) = ([4, 3], [1, 4]);
        assert_eq!(elementwise_strides(&s, &[op(&s, &t)]), Some(vec![1, 4]));
        assert_eq!(
            elementwise_strides(&s, &[op(&s, &t), op(&s, &t)]),
            Some(vec![1, 4])
        );
        assert_eq!(elementwise_strides(&s, &[op(&s, &[0, 1])]), None);
    }

    #[test]
    fn formats_and_their_checks() {
        assert_eq!(
            format_strides(&[2, 0, 3, 4], MemoryFormat::ChannelsLast, "t").unwrap(),
            vec![0, 1, 0, 0]
        );
        assert!(format_strides(&[2, 3], MemoryFormat::ChannelsLast, "t").is_err());
        assert!(is_contiguous_as(
            &[2, 1, 4, 5],
            &[20, 1, 5, 1],
            MemoryFormat::ChannelsLast
        ));
        assert!(!is_contiguous_as(
            &[2, 3],
            &[3, 1],
            MemoryFormat::ChannelsLast
        ));
        assert!(is_non_overlapping_and_dense(&[3, 4], &[1, 3]));
        assert!(!is_non_overlapping_and_dense(&[3, 4], &[1, 1]));
        assert_eq!(dense_strides_like(&[3, 4], &[0, 1]), vec![4, 1]);
    }
}
