//! The view ops of §6.3, applied one step at a time: an input's view chain, a
//! case's views, an in-place destination.

use crate::{
    arg_isize, arg_opt_isize, arg_usize, as_str, as_usize, field, harness, isize_list, usize_list,
    R,
};
use lazyfuse::{DType, Tensor};
use serde_json::Value;

/// One view op of §6.3 applied to `t`.
pub(crate) fn apply_view_step(t: &Tensor, step: &Value) -> R<Tensor> {
    let op = as_str(field(step, "op")?, "op")?;
    let empty = Value::Object(Default::default());
    let a = step.get("args").unwrap_or(&empty);
    Ok(match op {
        "view" => t.view(&isize_list(field(a, "shape")?, "shape")?)?,
        "reshape" => t.reshape(&isize_list(field(a, "shape")?, "shape")?)?,
        "transpose" => t.transpose(arg_isize(a, "dim0")?, arg_isize(a, "dim1")?)?,
        "swapaxes" => t.swapaxes(arg_isize(a, "axis0")?, arg_isize(a, "axis1")?)?,
        "permute" => t.permute(&isize_list(field(a, "dims")?, "dims")?)?,
        "expand" => t.expand(&isize_list(field(a, "shape")?, "shape")?)?,
        "expand_as" => {
            let shape = usize_list(field(a, "other_shape")?, "other_shape")?;
            t.expand_as(&Tensor::zeros(&shape, DType::F32))?
        }
        "narrow" => t.narrow(
            arg_isize(a, "dim")?,
            arg_isize(a, "start")?,
            arg_usize(a, "length")?,
        )?,
        "select" => t.select(arg_isize(a, "dim")?, arg_isize(a, "index")?)?,
        "slice" => t.slice(
            arg_isize(a, "dim")?,
            arg_opt_isize(a, "start")?,
            arg_opt_isize(a, "stop")?,
            arg_usize(a, "step")?,
        )?,
        "squeeze" => match a.get("dim") {
            Some(dims) if dims.is_array() => t.squeeze_dims(&isize_list(dims, "dim")?)?,
            _ => match arg_opt_isize(a, "dim")? {
                None => t.squeeze()?,
                Some(d) => t.squeeze_dim(d)?,
            },
        },
        "unsqueeze" => t.unsqueeze(arg_isize(a, "dim")?)?,
        "diagonal" => t.diagonal(
            arg_isize(a, "offset")?,
            arg_isize(a, "dim1")?,
            arg_isize(a, "dim2")?,
        )?,
        "as_strided" => t.as_strided(
            &usize_list(field(a, "size")?, "size")?,
            &isize_list(field(a, "stride")?, "stride")?,
            arg_usize(a, "storage_offset")?,
        )?,
        "unfold" => t.unfold(
            arg_isize(a, "dimension")?,
            arg_usize(a, "size")?,
            arg_usize(a, "step")?,
        )?,
        "movedim" if field(a, "source")?.is_array() => t.movedims(
            &isize_list(field(a, "source")?, "source")?,
            &isize_list(field(a, "destination")?, "destination")?,
        )?,
        "movedim" => t.movedim(arg_isize(a, "source")?, arg_isize(a, "destination")?)?,
        "t" => t.t()?,
        "T" => t.T()?,
        "mT" => t.mt()?,
        "mH" => t.mh()?,
        "H" => t.h()?,
        "adjoint" => t.adjoint()?,
        "swapdims" => t.swapdims(arg_isize(a, "dim0")?, arg_isize(a, "dim1")?)?,
        "view_as" | "reshape_as" => {
            let shape = usize_list(field(a, "other_shape")?, "other_shape")?;
            let other = Tensor::zeros(&shape, DType::F32);
            if op == "view_as" {
                t.view_as(&other)?
            } else {
                t.reshape_as(&other)?
            }
        }
        "tensor_split" | "hsplit" | "vsplit" | "dsplit" => {
            let pieces = match (a.get("sections"), op) {
                (Some(n), "tensor_split") => {
                    t.tensor_split(as_usize(n, "sections")?, arg_isize(a, "dim")?)?
                }
                (Some(n), "hsplit") => t.hsplit(as_usize(n, "sections")?)?,
                (Some(n), "vsplit") => t.vsplit(as_usize(n, "sections")?)?,
                (Some(n), _) => t.dsplit(as_usize(n, "sections")?)?,
                (None, _) => {
                    let ix = isize_list(field(a, "indices")?, "indices")?;
                    match op {
                        "tensor_split" => t.tensor_split_indices(&ix, arg_isize(a, "dim")?)?,
                        "hsplit" => t.hsplit_indices(&ix)?,
                        "vsplit" => t.vsplit_indices(&ix)?,
                        _ => t.dsplit_indices(&ix)?,
                    }
                }
            };
            piece(pieces, arg_isize(a, "index")?, op)?
        }
        "split_with_sizes" => {
            let sizes = usize_list(field(a, "split_sizes")?, "split_sizes")?;
            let pieces = t.split_with_sizes(&sizes, arg_isize(a, "dim")?)?;
            piece(pieces, arg_isize(a, "index")?, "split_with_sizes")?
        }
        "flatten" => t.flatten(arg_isize(a, "start_dim")?, arg_isize(a, "end_dim")?)?,
        "unflatten" => t.unflatten(
            arg_isize(a, "dim")?,
            &isize_list(field(a, "sizes")?, "sizes")?,
        )?,
        "split" => {
            let dim = arg_isize(a, "dim")?;
            let sections = field(a, "split_size_or_sections")?;
            let pieces = if sections.is_array() {
                t.split_sizes(&usize_list(sections, "split_size_or_sections")?, dim)?
            } else {
                t.split(as_usize(sections, "split_size_or_sections")?, dim)?
            };
            piece(pieces, arg_isize(a, "index")?, "split")?
        }
        "chunk" => {
            let pieces = t.chunk(arg_usize(a, "chunks")?, arg_isize(a, "dim")?)?;
            piece(pieces, arg_isize(a, "index")?, "chunk")?
        }
        "unbind" => {
            let pieces = t.unbind(arg_isize(a, "dim")?)?;
            piece(pieces, arg_isize(a, "index")?, "unbind")?
        }
        "contiguous" => t.contiguous()?,
        other => return harness(format!("unknown view op '{other}'")),
    })
}

/// Piece `index` (Python-style, negatives count from the end) of a list of views.
fn piece(mut pieces: Vec<Tensor>, index: isize, what: &str) -> R<Tensor> {
    let n = pieces.len() as isize;
    let i = if index < 0 { index + n } else { index };
    if i < 0 || i >= n {
        return harness(format!("{what}: piece {index} of {n}"));
    }
    Ok(pieces.swap_remove(i as usize))
}
