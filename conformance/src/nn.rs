//! The runner of `nn.jsonl` (SCHEMA.md §10): §9's differentiated cases over the
//! functions of `lazyfuse::nn::functional`. An op lazyfuse does not have yet counts
//! as unsupported.

use crate::gradients::{arg_opt_f64, run_differentiated};
use crate::{
    as_i64, as_isize, as_str, as_usize, field, harness, json_bool, json_f64, usize_list, Outcome, R,
};
use lazyfuse::nn::functional::{self as F, Reduction};
use lazyfuse::Tensor;
use serde_json::Value;

/// Runs one case.
pub fn run_nn(case: &Value) -> R<Outcome> {
    run_differentiated(case, &nn_op)
}

/// The `reduction` argument.
fn reduction(args: &Value) -> R<Reduction> {
    Ok(as_str(field(args, "reduction")?, "reduction")?.parse()?)
}

fn nn_op(op: &str, x: &[Tensor], args: &Value) -> R<Option<Tensor>> {
    let need = |n: usize| -> R<()> {
        if x.len() == n {
            Ok(())
        } else {
            harness(format!("'{op}' expects {n} inputs, got {}", x.len()))
        }
    };
    Ok(Some(match op {
        "linear" => match x.len() {
            2 => F::linear(&x[0], &x[1], None)?,
            _ => {
                need(3)?;
                F::linear(&x[0], &x[1], Some(&x[2]))?
            }
        },
        "mse_loss" | "l1_loss" => {
            need(2)?;
            let r = reduction(args)?;
            if op == "mse_loss" {
                F::mse_loss(&x[0], &x[1], r)?
            } else {
                F::l1_loss(&x[0], &x[1], r)?
            }
        }
        "smooth_l1_loss" => {
            need(2)?;
            let beta = json_f64(field(args, "beta")?)?;
            F::smooth_l1_loss(&x[0], &x[1], reduction(args)?, beta)?
        }
        "huber_loss" => {
            need(2)?;
            let delta = json_f64(field(args, "delta")?)?;
            F::huber_loss(&x[0], &x[1], reduction(args)?, delta)?
        }
        "layer_norm" => {
            let shape = usize_list(field(args, "normalized_shape")?, "normalized_shape")?;
            let eps = json_f64(field(args, "eps")?)?;
            F::layer_norm(&x[0], &shape, x.get(1), x.get(2), eps)?
        }
        "rms_norm" => {
            let shape = usize_list(field(args, "normalized_shape")?, "normalized_shape")?;
            let eps = arg_opt_f64(args, "eps")?;
            F::rms_norm(&x[0], &shape, x.get(1), eps)?
        }
        "group_norm" => {
            let groups = as_usize(field(args, "num_groups")?, "num_groups")?;
            let eps = json_f64(field(args, "eps")?)?;
            F::group_norm(&x[0], groups, x.get(1), x.get(2), eps)?
        }
        "embedding" => {
            need(2)?;
            let padding = match args.get("padding_idx") {
                None | Some(Value::Null) => None,
                Some(v) => Some(as_i64(v, "padding_idx")?),
            };
            F::embedding(&x[0], &x[1], padding)?
        }
        "one_hot" => {
            need(1)?;
            F::one_hot(&x[0], as_i64(field(args, "num_classes")?, "num_classes")?)?
        }
        "nll_loss" | "cross_entropy" | "cross_entropy_probs" => {
            let r = reduction(args)?;
            let ignore = match args.get("ignore_index") {
                Some(v) => as_i64(v, "ignore_index")?,
                None => -100,
            };
            let smoothing = arg_opt_f64(args, "label_smoothing")?.unwrap_or(0.0);
            if op == "nll_loss" {
                F::nll_loss(&x[0], &x[1], x.get(2), ignore, r)?
            } else {
                F::cross_entropy(&x[0], &x[1], x.get(2), ignore, r, smoothing)?
            }
        }
        "binary_cross_entropy" => {
            F::binary_cross_entropy(&x[0], &x[1], x.get(2), reduction(args)?)?
        }
        "binary_cross_entropy_with_logits" => {
            F::binary_cross_entropy_with_logits(&x[0], &x[1], None, reduction(args)?, x.get(2))?
        }
        "kl_div" => {
            need(2)?;
            let r = as_str(field(args, "reduction")?, "reduction")?.parse()?;
            let log_target = json_bool(field(args, "log_target")?)?;
            F::kl_div(&x[0], &x[1], r, log_target)?
        }
        "scaled_dot_product_attention" => {
            let causal = json_bool(field(args, "is_causal")?)?;
            let scale = arg_opt_f64(args, "scale")?;
            F::scaled_dot_product_attention(&x[0], &x[1], &x[2], x.get(3), 0.0, causal, scale)?
        }
        "interpolate" => {
            need(1)?;
            let factor = json_f64(field(args, "scale_factor")?)?;
            let mode = as_str(field(args, "mode")?, "mode")?.parse()?;
            let corners = args.get("align_corners").map(json_bool).transpose()?;
            F::interpolate(&x[0], None, Some(&[factor]), mode, corners)?
        }
        "max_pool2d" | "max_pool2d_indices" => {
            need(1)?;
            let list = |k: &str| usize_list(field(args, k)?, k);
            let (k, s, p, d) = (
                list("kernel_size")?,
                list("stride")?,
                list("padding")?,
                list("dilation")?,
            );
            let ceil = json_bool(field(args, "ceil_mode")?)?;
            let (values, indices) = F::max_pool2d_with_indices(&x[0], &k, &s, &p, &d, ceil)?;
            if op == "max_pool2d" {
                values
            } else {
                indices
            }
        }
        "avg_pool2d" => {
            need(1)?;
            let list = |k: &str| usize_list(field(args, k)?, k);
            let (k, s, p) = (list("kernel_size")?, list("stride")?, list("padding")?);
            let ceil = json_bool(field(args, "ceil_mode")?)?;
            let include = json_bool(field(args, "count_include_pad")?)?;
            F::avg_pool2d(&x[0], &k, &s, &p, ceil, include, None)?
        }
        "adaptive_avg_pool2d" | "adaptive_max_pool2d" => {
            need(1)?;
            let size = usize_list(field(args, "output_size")?, "output_size")?;
            if op == "adaptive_avg_pool2d" {
                F::adaptive_avg_pool2d(&x[0], &size)?
            } else {
                F::adaptive_max_pool2d(&x[0], &size)?
            }
        }
        "batch_norm" => {
            need(5)?;
            let training = json_bool(field(args, "training")?)?;
            let momentum = json_f64(field(args, "momentum")?)?;
            let eps = json_f64(field(args, "eps")?)?;
            F::batch_norm(
                &x[0],
                Some(&x[1]),
                Some(&x[2]),
                Some(&x[3]),
                Some(&x[4]),
                training,
                momentum,
                eps,
            )?
        }
        "sort" | "argsort" => {
            need(1)?;
            let dim = as_isize(field(args, "dim")?, "dim")?;
            let descending = json_bool(field(args, "descending")?)?;
            let stable = json_bool(field(args, "stable")?)?;
            let (values, indices) = x[0].sort(dim, descending, stable)?;
            if op == "sort" {
                values
            } else {
                indices
            }
        }
        "topk" | "topk_indices" => {
            need(1)?;
            let k = as_usize(field(args, "k")?, "k")?;
            let dim = as_isize(field(args, "dim")?, "dim")?;
            let largest = json_bool(field(args, "largest")?)?;
            let sorted = json_bool(field(args, "sorted")?)?;
            let (values, indices) = x[0].topk(k, dim, largest, sorted)?;
            if op == "topk" {
                values
            } else {
                indices
            }
        }
        "conv1d" | "conv2d" => {
            let list = |k: &str| usize_list(field(args, k)?, k);
            let (stride, dilation) = (list("stride")?, list("dilation")?);
            let groups = as_usize(field(args, "groups")?, "groups")?;
            let bias = x.get(2);
            match (op, field(args, "padding")?) {
                ("conv2d", Value::String(s)) if s == "same" => {
                    F::conv2d_same(&x[0], &x[1], bias, &stride, &dilation, groups)?
                }
                (_, Value::String(s)) => return harness(format!("padding '{s}'")),
                ("conv1d", p) => {
                    let p = usize_list(p, "padding")?;
                    F::conv1d(&x[0], &x[1], bias, &stride, &p, &dilation, groups)?
                }
                (_, p) => {
                    let p = usize_list(p, "padding")?;
                    F::conv2d(&x[0], &x[1], bias, &stride, &p, &dilation, groups)?
                }
            }
        }
        "conv_transpose2d" => {
            let list = |k: &str| usize_list(field(args, k)?, k);
            let groups = as_usize(field(args, "groups")?, "groups")?;
            F::conv_transpose2d(
                &x[0],
                &x[1],
                x.get(2),
                &list("stride")?,
                &list("padding")?,
                &list("output_padding")?,
                groups,
                &list("dilation")?,
            )?
        }
        _ => return Ok(None),
    }))
}
