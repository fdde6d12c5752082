//! The runners of the corpus's core file kinds: promotion, inplace, unary, values,
//! broadcast and views.

use crate::{
    apply_input_view, apply_view_step, as_array, as_i64, as_str, as_usize, binary,
    build_base_tensor, build_data_operand, build_promotion_operand, build_tensor, check_result,
    deep_copy, field, harness, isize_list, json_bool, json_f64, judge, lib_err_text, realized,
    rounding_mode, shape_str, unary, usize_list, values_op, where_op, with_arg, Arg, Outcome,
    RunErr, R,
};
use lazyfuse::{DType, RoundingMode, Tensor};
use serde_json::Value;

// The files

/// promotion.jsonl (§2): result dtype and shape of one binary op.
pub(crate) fn run_promotion(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let expected = field(case, "result")?;
    let got = (|| {
        let a = build_promotion_operand(field(case, "a")?, false)?;
        let b = build_promotion_operand(field(case, "b")?, false)?;
        let t = if op == "where" {
            let Arg::T(cond) = build_promotion_operand(field(case, "cond")?, true)? else {
                return harness("cond must be a tensor");
            };
            where_op(&cond, &a, &b)?
        } else {
            binary(op, &a, &b, rounding_mode(case.get("rounding_mode"))?)?
        };
        realized(t)
    })();
    Ok(judge(expected, got, |t| check_result(t, expected)))
}

/// The in-place op `a.op_(b)` (§3).
pub(crate) fn inplace_op(op: &str, a: &Tensor, b: &Arg, mode: Option<RoundingMode>) -> R<()> {
    match op {
        "add_" => with_arg!(a, add_, b)?,
        "sub_" => with_arg!(a, sub_, b)?,
        "mul_" => with_arg!(a, mul_, b)?,
        "div_" => match mode {
            None => with_arg!(a, div_, b)?,
            Some(m) => with_arg!(a, div_mode_, b, m)?,
        },
        "floor_divide_" => with_arg!(a, floor_divide_, b)?,
        "remainder_" => with_arg!(a, remainder_, b)?,
        "fmod_" => with_arg!(a, fmod_, b)?,
        "pow_" => with_arg!(a, pow_, b)?,
        "atan2_" => with_arg!(a, atan2_, b)?,
        "bitwise_and_" => with_arg!(a, bitwise_and_, b)?,
        "bitwise_or_" => with_arg!(a, bitwise_or_, b)?,
        "bitwise_xor_" => with_arg!(a, bitwise_xor_, b)?,
        "clamp_min_" => with_arg!(a, clamp_min_, b)?,
        "maximum_out_self" => match b {
            Arg::T(b) => a.write_out(&a.maximum(b)?)?,
            Arg::S(s) => a.write_out(&a.maximum(*s)?)?,
        },
        "copy_" => match b {
            Arg::T(src) => a.copy_(src)?,
            Arg::S(_) => return harness("copy_ from a scalar"),
        },
        other => return harness(format!("op '{other}' is not in the lazyfuse API")),
    }
    Ok(())
}

/// inplace.jsonl (§3): values of the destination (and its base) after `a.op_(b)`.
pub(crate) fn run_inplace(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let family = as_str(field(case, "family")?, "family")?;
    if !matches!(
        family,
        "dtype_matrix"
            | "dtype_sample"
            | "wide_unsigned"
            | "broadcast_shape"
            | "noncontiguous_destination"
            | "aliasing"
    ) {
        return harness(format!("unknown family '{family}'"));
    }
    let expected = field(case, "result")?;
    let a_obj = field(case, "a")?;
    let base = build_base_tensor(a_obj)?;
    let dest = apply_input_view(base.clone(), a_obj)?;
    let b_obj = field(case, "b")?;
    let b = if as_str(field(b_obj, "kind")?, "kind")? == "alias_of_a" {
        Arg::T(match as_str(field(b_obj, "alias")?, "alias")? {
            "self" => dest.clone(),
            "t" => dest.t()?,
            "row0" => dest.select(0, 0)?,
            "clone_t" => deep_copy(&dest.t()?)?,
            other => return harness(format!("unknown alias '{other}'")),
        })
    } else {
        build_data_operand(b_obj)?
    };
    let mode = rounding_mode(case.get("rounding_mode"))?;
    let got = inplace_op(op, &dest, &b, mode).and_then(|()| realized(dest.clone()));
    let described = b.describe();
    let outcome = judge(expected, got, |t| {
        let o = check_result(t, expected)?;
        if o != Outcome::Pass {
            return Ok(o);
        }
        match case.get("a_base_after") {
            None => Ok(Outcome::Pass),
            Some(after) => Ok(match check_result(&base, after)? {
                Outcome::Fail(m) => Outcome::Fail(format!("a_base_after: {m}")),
                o => o,
            }),
        }
    });
    Ok(match outcome {
        Outcome::Fail(m) => Outcome::Fail(format!("{m} [b: {described}]")),
        o => o,
    })
}

/// unary.jsonl (§4).
pub(crate) fn run_unary(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let empty = Value::Object(Default::default());
    let args = case.get("args").unwrap_or(&empty);
    let expected = field(case, "result")?;
    let got = build_tensor(field(case, "input")?)
        .and_then(|x| unary(op, &x, args))
        .and_then(realized);
    Ok(judge(expected, got, |t| check_result(t, expected)))
}

/// values.jsonl (§7).
pub(crate) fn run_values(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let empty = Value::Object(Default::default());
    let args = case.get("args").unwrap_or(&empty);
    let expected = field(case, "result")?;
    let got = as_array(field(case, "inputs")?, "inputs")
        .and_then(|ins| ins.iter().map(build_tensor).collect::<R<Vec<_>>>())
        .and_then(|inputs| values_op(op, &inputs, args))
        .and_then(realized);
    Ok(judge(expected, got, |t| check_result(t, expected)))
}

/// broadcast.jsonl (§5): result shapes of float32 zero tensors.
pub(crate) fn run_broadcast(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let expected = field(case, "result")?;
    let shapes: Vec<Vec<usize>> = as_array(field(case, "shapes")?, "shapes")?
        .iter()
        .map(|s| usize_list(s, "shape"))
        .collect::<R<_>>()?;
    let zeros = |i: usize, dtype: DType| -> R<Tensor> {
        match shapes.get(i) {
            Some(s) => Ok(Tensor::zeros(s, dtype)),
            None => harness(format!("'{op}' needs shape #{i}")),
        }
    };
    let got = (|| {
        let t = match op {
            "add" => zeros(0, DType::F32)?.add(&zeros(1, DType::F32)?)?,
            "where" => Tensor::where_cond(
                &zeros(0, DType::Bool)?,
                &zeros(1, DType::F32)?,
                &zeros(2, DType::F32)?,
            )?,
            "broadcast_to" => {
                zeros(0, DType::F32)?.expand(&isize_list(field(case, "target")?, "target")?)?
            }
            "broadcast_shapes" => {
                let mut acc = zeros(0, DType::F32)?;
                for i in 1..shapes.len() {
                    acc = acc.add(&zeros(i, DType::F32)?)?;
                }
                acc
            }
            "matmul" => zeros(0, DType::F32)?.matmul(&zeros(1, DType::F32)?)?,
            other => return harness(format!("unknown broadcast op '{other}'")),
        };
        realized(t)
    })();
    Ok(judge(expected, got, |t| {
        let shape = usize_list(field(expected, "shape")?, "shape")?;
        Ok(if t.shape() == shape {
            Outcome::Pass
        } else {
            Outcome::Fail(format!(
                "shape: expected {}, got {}",
                shape_str(&shape),
                shape_str(&t.shape())
            ))
        })
    }))
}

/// Compares a view with a step record (§6.2), strictly.
pub(crate) fn check_step(t: &Tensor, base: &Tensor, rec: &Value) -> R<Option<String>> {
    let mut diffs = Vec::new();
    let shape = usize_list(field(rec, "shape")?, "shape")?;
    if t.shape() != shape {
        diffs.push(format!("shape expected {shape:?} got {:?}", t.shape()));
    }
    let strides = isize_list(field(rec, "strides")?, "strides")?;
    if t.strides() != strides {
        diffs.push(format!(
            "strides expected {strides:?} got {:?}",
            t.strides()
        ));
    }
    let offset = as_usize(field(rec, "storage_offset")?, "storage_offset")?;
    if t.storage_offset() != offset {
        diffs.push(format!(
            "storage_offset expected {offset} got {}",
            t.storage_offset()
        ));
    }
    let contiguous = json_bool(field(rec, "is_contiguous")?)?;
    if t.is_contiguous() != contiguous {
        diffs.push(format!(
            "is_contiguous expected {contiguous} got {}",
            t.is_contiguous()
        ));
    }
    let shares = json_bool(field(rec, "shares_storage_with_base")?)?;
    if t.shares_storage(base) != shares {
        diffs.push(format!(
            "shares_storage_with_base expected {shares} got {}",
            !shares
        ));
    }
    Ok(if diffs.is_empty() {
        None
    } else {
        Some(diffs.join(", "))
    })
}

/// Applies and checks a chain of step records; `Err(outcome)` stops the case.
pub(crate) fn run_chain(base: &Tensor, steps: &Value, what: &str) -> R<Result<Tensor, Outcome>> {
    let mut t = base.clone();
    for (i, step) in as_array(steps, what)?.iter().enumerate() {
        let op = step.get("op").and_then(Value::as_str).unwrap_or("?");
        t = match apply_view_step(&t, step) {
            Ok(v) => v,
            Err(RunErr::Lib(e)) => {
                return Ok(Err(Outcome::Fail(format!(
                    "{what}[{i}] {op} {}: unexpected error: {}",
                    step.get("args").unwrap_or(&Value::Null),
                    lib_err_text(&e)
                ))))
            }
            Err(h) => return Err(h),
        };
        if let Some(d) = check_step(&t, base, step)? {
            return Ok(Err(Outcome::Fail(format!(
                "{what}[{i}] {op} {}: {d}",
                step.get("args").unwrap_or(&Value::Null)
            ))));
        }
    }
    Ok(Ok(t))
}

pub(crate) fn read_i64s(t: &Tensor) -> R<Vec<i64>> {
    Ok(t.to_vec::<i64>()?)
}

pub(crate) fn check_i64s(t: &Tensor, expected: &Value, what: &str) -> R<Option<String>> {
    let exp: Vec<i64> = as_array(expected, what)?
        .iter()
        .map(|v| as_i64(v, what))
        .collect::<R<_>>()?;
    let got = match read_i64s(t) {
        Ok(v) => v,
        Err(RunErr::Lib(e)) => {
            return Ok(Some(format!(
                "{what}: unexpected error: {}",
                lib_err_text(&e)
            )))
        }
        Err(h) => return Err(h),
    };
    Ok((got != exp).then(|| format!("{what}: expected {exp:?}, got {got:?}")))
}

/// The write op of §6.5.
pub(crate) fn write_op(t: &Tensor, w: &Value) -> R<()> {
    let op = as_str(field(w, "op")?, "op")?;
    let args = field(w, "args")?;
    match op {
        "add_" => t.add_(as_i64(field(args, "other")?, "other")?)?,
        "mul_" => t.mul_(as_i64(field(args, "other")?, "other")?)?,
        "fill_" => {
            let v = field(args, "value")?;
            match v.as_i64() {
                Some(i) => t.fill_(i)?,
                None => t.fill_(json_f64(v)?)?,
            }
        }
        other => return harness(format!("unknown write op '{other}'")),
    }
    Ok(())
}

/// views.jsonl (§6).
pub(crate) fn run_views(case: &Value) -> R<Outcome> {
    let family = as_str(field(case, "family")?, "family")?;
    if !matches!(
        family,
        "chain"
            | "view_on_noncontiguous"
            | "reshape_on_noncontiguous"
            | "write_through_view"
            | "write_to_expanded"
            | "cross_view_write"
            | "overlap_fill"
    ) {
        return harness(format!("unknown family '{family}'"));
    }
    let base_shape = usize_list(field(case, "base_shape")?, "base_shape")?;
    let numel: usize = base_shape.iter().product();
    let shape_i: Vec<isize> = base_shape.iter().map(|&s| s as isize).collect();
    let base = Tensor::arange(0.0, numel as f64, 1.0, DType::I64)?.reshape(&shape_i)?;
    // The observer is taken from the base before anything is written.
    let observer = match case.get("observer_steps") {
        Some(steps) => match run_chain(&base, steps, "observer_steps")? {
            Ok(t) => Some(t),
            Err(o) => return Ok(o),
        },
        None => None,
    };
    let t = match run_chain(&base, field(case, "steps")?, "steps")? {
        Ok(t) => t,
        Err(o) => return Ok(o),
    };
    if let Some(err) = case.get("error") {
        let op = err.get("op").and_then(Value::as_str).unwrap_or("?");
        let got = apply_view_step(&t, err).and_then(realized);
        let expected =
            serde_json::json!({"error": err.get("error"), "message": err.get("message")});
        return Ok(match judge(&expected, got, |_| Ok(Outcome::Pass)) {
            Outcome::Fail(m) => Outcome::Fail(format!(
                "{op} {}: {m}",
                err.get("args").unwrap_or(&Value::Null)
            )),
            o => o,
        });
    }
    if let Some(w) = case.get("write") {
        let got = write_op(&t, w).and_then(|()| realized(t.clone()));
        if let Some(we) = case.get("write_error") {
            return Ok(match judge(we, got, |_| Ok(Outcome::Pass)) {
                Outcome::Fail(m) => Outcome::Fail(format!("write {w}: {m}")),
                o => o,
            });
        }
        match got {
            Ok(_) => {}
            Err(RunErr::Lib(e)) => {
                return Ok(Outcome::Fail(format!(
                    "write {w}: unexpected error: {}",
                    lib_err_text(&e)
                )))
            }
            Err(h) => return Err(h),
        }
        let mut diffs = Vec::new();
        for (key, tensor) in [
            ("view_after", Some(&t)),
            ("base_after", Some(&base)),
            ("observer_after", observer.as_ref()),
        ] {
            if let Some(exp) = case.get(key) {
                let Some(tensor) = tensor else {
                    return harness(format!("{key} without observer_steps"));
                };
                diffs.extend(check_i64s(tensor, exp, key)?);
            }
        }
        return Ok(if diffs.is_empty() {
            Outcome::Pass
        } else {
            Outcome::Fail(format!("write {w}: {}", diffs.join("; ")))
        });
    }
    let values = field(case, "values")?;
    Ok(match check_i64s(&t, values, "values")? {
        None => Outcome::Pass,
        Some(d) => Outcome::Fail(d),
    })
}
