//! The runner of `gradients.jsonl` (SCHEMA.md §9): leaves made with
//! `requires_grad_`, their view steps applied after, the op, then `backward` (with
//! the case's `grad_output`, or none for a single value), and each leaf's `.grad`
//! against PyTorch's. Autograd's own refusals are compared word for word.

use crate::{
    apply_input_view, apply_view_step, arg_isize, as_array, as_i64, as_isize, as_str,
    build_base_tensor, build_tensor, check_result, describe, field, harness, isize_list, json_bool,
    json_f64, judge, keepdim, lib_err_text, reduce_dims, unary, usize_list, values_op, Outcome,
    RunErr, R,
};
use lazyfuse::{Scalar, Tensor};
use serde_json::Value;

/// Runs one case.
pub fn run_gradients(case: &Value) -> R<Outcome> {
    run_differentiated(case, &|op, inputs, args| {
        gradient_op(op, inputs, args).map(Some)
    })
}

/// An op of a differentiated case: its output, or `None` where lazyfuse has no
/// such op yet (the case counts as unsupported).
pub(crate) type CaseOp<'a> = &'a dyn Fn(&str, &[Tensor], &Value) -> R<Option<Tensor>>;

/// Runs one case of the §9 schema (and §10's, which adds `mutated`: inputs the op
/// updates in place, compared after the op ran) with `op`.
pub(crate) fn run_differentiated(case: &Value, op_of: CaseOp<'_>) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let empty = Value::Object(Default::default());
    let args = case.get("args").unwrap_or(&empty);
    let expected = field(case, "result")?;
    let specs = as_array(field(case, "inputs")?, "inputs")?;
    let mut leaves = Vec::with_capacity(specs.len());
    let mut inputs = Vec::with_capacity(specs.len());
    let forward = (|| -> R<Option<Tensor>> {
        for spec in specs {
            let base = build_base_tensor(spec)?;
            let wants = spec
                .get("requires_grad")
                .map(json_bool)
                .transpose()?
                .unwrap_or(false);
            let leaf = if wants {
                base.requires_grad_(true)?
            } else {
                base
            };
            inputs.push(apply_input_view(leaf.clone(), spec)?);
            leaves.push((leaf, wants));
        }
        op_of(op, &inputs, args)
    })();
    let forward = match forward {
        Ok(None) => return Ok(Outcome::Unsupported),
        Ok(Some(t)) => Ok(t),
        Err(e) => Err(e),
    };
    if expected.get("error").is_some() {
        // (an index out of range is found when the value is computed)
        let realized = forward.and_then(|t| t.realize().map(drop).map_err(RunErr::Lib));
        return Ok(judge_message(expected, realized));
    }
    let out = match forward {
        Ok(t) => t,
        Err(e) => return Ok(judge(expected, Err(e), |_| Ok(Outcome::Pass))),
    };
    match check_result(&out, expected) {
        Ok(Outcome::Pass) => {}
        other => return other,
    }
    if let Some(mutated) = case.get("mutated").and_then(Value::as_object) {
        for (pos, want) in mutated {
            let i: usize = pos
                .parse()
                .map_err(|_| RunErr::Harness(format!("mutated input '{pos}'")))?;
            let Some(t) = inputs.get(i) else {
                return harness(format!("mutated input {i} of {}", inputs.len()));
            };
            match check_result(t, want)? {
                Outcome::Pass => {}
                Outcome::Fail(m) => {
                    return Ok(Outcome::Fail(format!("input {i} after the op: {m}")))
                }
                other => return Ok(other),
            }
        }
    }
    let grads = field(case, "grads")?;
    // §10: where no input requires grad (an integer output), `grads` is all null
    // and there is no backward.
    let no_backward = leaves.iter().all(|(_, wants)| !wants)
        && grads
            .as_array()
            .is_some_and(|g| g.iter().all(Value::is_null));
    if no_backward {
        return Ok(Outcome::Pass);
    }
    let backward = match case.get("grad_output") {
        Some(g) => {
            let seed = build_tensor(g)?;
            out.backward_with(&seed)
        }
        None => out.backward(),
    };
    if grads.get("error").is_some() {
        return Ok(judge_message(grads, backward.map_err(RunErr::Lib)));
    }
    backward?;
    let want = as_array(grads, "grads")?;
    if want.len() != leaves.len() {
        return harness(format!("{} grads for {} inputs", want.len(), leaves.len()));
    }
    for (i, ((leaf, wants), w)) in leaves.iter().zip(want).enumerate() {
        let got = leaf.grad();
        let none = w.is_null() || w.get("none").is_some();
        match (got, none) {
            (None, true) => {}
            (Some(g), true) => {
                return Ok(Outcome::Fail(format!(
                    "input {i} (requires_grad {wants}): expected no .grad, got {}",
                    describe(&g)
                )))
            }
            (None, false) => {
                return Ok(Outcome::Fail(format!("input {i}: .grad is None")));
            }
            (Some(g), false) => match check_result(&g, w)? {
                Outcome::Pass => {}
                Outcome::Fail(m) => return Ok(Outcome::Fail(format!("grad of input {i}: {m}"))),
                other => return Ok(other),
            },
        }
    }
    Ok(Outcome::Pass)
}

/// An expected error object against what happened: the library's message must be
/// PyTorch's.
fn judge_message(expected: &Value, got: R<()>) -> Outcome {
    let message = expected
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("");
    match got {
        Ok(()) => Outcome::Fail(format!("expected error: {message}, got Ok")),
        Err(RunErr::Harness(m)) => Outcome::Fail(format!("runner: {m}")),
        Err(RunErr::Lib(e)) if e.to_string() == message => Outcome::Pass,
        Err(RunErr::Lib(e)) => Outcome::Fail(format!(
            "expected error: {message}\n      got: {}",
            lib_err_text(&e)
        )),
    }
}

fn arg_f64(args: &Value, key: &str) -> R<f64> {
    json_f64(field(args, key)?)
}

/// An optional float argument (`null` or absent: `None`).
pub(crate) fn arg_opt_f64(args: &Value, key: &str) -> R<Option<f64>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => json_f64(v).map(Some),
    }
}

/// A number argument that is a float or `"inf"`/`"-inf"`.
fn arg_norm_p(args: &Value) -> R<f64> {
    match field(args, "p")? {
        Value::String(s) if s == "inf" => Ok(f64::INFINITY),
        Value::String(s) if s == "-inf" => Ok(f64::NEG_INFINITY),
        v => json_f64(v),
    }
}

/// An int or a list of ints.
fn int_or_list(v: &Value, what: &str) -> R<Vec<isize>> {
    if v.is_array() {
        isize_list(v, what)
    } else {
        Ok(vec![as_isize(v, what)?])
    }
}

/// The ops of §9 beyond §7's, then §7's.
fn gradient_op(op: &str, x: &[Tensor], args: &Value) -> R<Tensor> {
    let need = |n: usize| -> R<()> {
        if x.len() == n {
            Ok(())
        } else {
            harness(format!("'{op}' expects {n} inputs, got {}", x.len()))
        }
    };
    Ok(match op {
        "hypot" | "logaddexp" | "xlogy" | "copysign" => {
            need(2)?;
            match op {
                "hypot" => x[0].hypot(&x[1])?,
                "logaddexp" => x[0].logaddexp(&x[1])?,
                "xlogy" => x[0].xlogy(&x[1])?,
                _ => x[0].copysign(&x[1])?,
            }
        }
        "gelu" => {
            need(1)?;
            let approximate = match args.get("approximate").and_then(Value::as_str) {
                Some("tanh") => lazyfuse::GeluApproximate::Tanh,
                _ => lazyfuse::GeluApproximate::None,
            };
            x[0].gelu(approximate)?
        }
        "softplus" => {
            need(1)?;
            x[0].softplus(arg_f64(args, "beta")?, arg_f64(args, "threshold")?)?
        }
        "elu" => {
            need(1)?;
            x[0].elu(arg_f64(args, "alpha")?)?
        }
        "leaky_relu" => {
            need(1)?;
            x[0].leaky_relu(arg_f64(args, "negative_slope")?)?
        }
        "hardtanh" => {
            need(1)?;
            x[0].hardtanh(arg_f64(args, "min_val")?, arg_f64(args, "max_val")?)?
        }
        "logit" => {
            need(1)?;
            x[0].logit(arg_opt_f64(args, "eps")?)?
        }
        "norm" => {
            need(1)?;
            x[0].norm(arg_norm_p(args)?, &reduce_dims(args)?, keepdim(args)?)?
        }
        "max_dim" | "min_dim" => {
            need(1)?;
            let (d, kd) = (arg_isize(args, "dim")?, keepdim(args)?);
            let (values, _) = if op == "max_dim" {
                x[0].max_dim(d, kd)?
            } else {
                x[0].min_dim(d, kd)?
            };
            values
        }
        "max" | "min" if args.get("dim").is_none_or(Value::is_null) => {
            need(1)?;
            if op == "max" {
                x[0].max()?
            } else {
                x[0].min()?
            }
        }
        "logcumsumexp" => {
            need(1)?;
            x[0].logcumsumexp(arg_isize(args, "dim")?)?
        }
        "index_select" | "gather" => {
            need(2)?;
            let d = arg_isize(args, "dim")?;
            if op == "gather" {
                x[0].gather(d, &x[1])?
            } else {
                x[0].index_select(d, &x[1])?
            }
        }
        "take" => {
            need(2)?;
            x[0].take(&x[1])?
        }
        "scatter_add" => {
            need(3)?;
            x[0].scatter_add(arg_isize(args, "dim")?, &x[1], &x[2])?
        }
        "masked_fill" => {
            need(2)?;
            x[0].masked_fill(&x[1], arg_f64(args, "value")?)?
        }
        "flip" => {
            need(1)?;
            x[0].flip(&isize_list(field(args, "dims")?, "dims")?)?
        }
        "roll" => {
            need(1)?;
            let shifts: Vec<i64> = int_or_list(field(args, "shifts")?, "shifts")?
                .into_iter()
                .map(|s| s as i64)
                .collect();
            let dims = match args.get("dims") {
                None | Some(Value::Null) => Vec::new(),
                Some(v) => int_or_list(v, "dims")?,
            };
            x[0].roll(&shifts, &dims)?
        }
        "repeat" => {
            need(1)?;
            x[0].repeat(&usize_list(field(args, "repeats")?, "repeats")?)?
        }
        "pad" => {
            need(1)?;
            let pad: Vec<i64> = isize_list(field(args, "pad")?, "pad")?
                .into_iter()
                .map(|p| p as i64)
                .collect();
            x[0].pad(&pad, arg_f64(args, "value")?)?
        }
        "tril" | "triu" => {
            need(1)?;
            let k = as_i64(field(args, "diagonal")?, "diagonal")?;
            if op == "tril" {
                x[0].tril(k)?
            } else {
                x[0].triu(k)?
            }
        }
        "lerp" => {
            need(3)?;
            x[0].lerp(&x[1], &x[2])?
        }
        "addcmul" | "addcdiv" => {
            need(3)?;
            let v = arg_f64(args, "value")?;
            if op == "addcmul" {
                x[0].addcmul(&x[1], &x[2], v)?
            } else {
                x[0].addcdiv(&x[1], &x[2], v)?
            }
        }
        "where_sqrt" => {
            need(3)?;
            Tensor::where_cond(&x[0], &x[1].sqrt()?, &x[2])?
        }
        "inplace" => inplace(x, args)?,
        "add" | "sub" | "mul" | "div" | "remainder" | "fmod" | "pow" | "maximum" | "minimum"
        | "atan2" | "fmax" | "fmin" | "to" | "sum" | "mean" | "amax" | "amin" | "var" | "std"
        | "prod" | "nansum" | "logsumexp" | "matmul" | "where" | "clamp" | "clamp_tensor"
        | "cat" | "stack" | "cumsum" | "softmax" | "log_softmax" | "cumprod" => {
            values_op(op, x, args)?
        }
        _ => {
            need(1)?;
            unary(op, &x[0], args)?
        }
    })
}

/// `y = inputs[0] * 1`, then `op` in place on `y`'s `target_view`; the output is `y`.
fn inplace(x: &[Tensor], args: &Value) -> R<Tensor> {
    let y = x[0].mul(1)?;
    let mut target = y.clone();
    for step in as_array(field(args, "target_view")?, "target_view")? {
        target = apply_view_step(&target, step)?;
    }
    let other = || -> R<&Tensor> {
        x.get(1)
            .ok_or_else(|| RunErr::Harness("the in-place op needs a second input".into()))
    };
    match as_str(field(args, "op")?, "op")? {
        "add_" => target.add_(other()?)?,
        "mul_" => target.mul_(other()?)?,
        "div_" => target.div_(other()?)?,
        "copy_" => target.copy_(other()?)?,
        "clamp_" => target.clamp_(Some(Scalar::Float(-0.5)), Some(Scalar::Float(0.5)))?,
        other => return harness(format!("unknown in-place op '{other}'")),
    }
    Ok(y)
}
