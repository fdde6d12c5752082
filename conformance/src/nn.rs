//! The runner of `nn.jsonl` (SCHEMA.md §10): §9's differentiated cases over the
//! functions of `lazyfuse::nn::functional`. An op lazyfuse does not have yet counts
//! as unsupported.

use crate::gradients::run_differentiated;
use crate::{as_str, field, harness, json_f64, Outcome, R};
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
        _ => return Ok(None),
    }))
}
