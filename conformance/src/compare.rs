//! Comparing a result with the reference (SCHEMA.md §1.5 and §1.6): elementwise
//! tolerances, the readable diff of a failure, and the verdict on an expected value or
//! an expected error.

use crate::{
    as_array, decode_vals, dtype_of, field, read_vals, usize_list, Outcome, RunErr, Vals, R,
};
use lazyfuse::Tensor;
use serde_json::Value;
use std::fmt::Write as _;

// Comparison

/// `|actual - expected| <= atol + rtol * |expected|` with the NaN/inf rules of §1.5.
pub(crate) fn float_close(actual: f64, expected: f64, rtol: f64, atol: f64) -> bool {
    if expected.is_nan() {
        return actual.is_nan();
    }
    if actual.is_nan() {
        return false;
    }
    if expected.is_infinite() {
        return actual == expected;
    }
    (actual - expected).abs() <= atol + rtol * expected.abs()
}

pub(crate) fn fmt_f(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{x:?}")
    }
}

/// Compares element lists; `Err` names the first mismatches (at most five).
pub(crate) fn compare_vals(
    actual: &Vals,
    expected: &Vals,
    rtol: f64,
    atol: f64,
) -> Result<(), String> {
    if actual.len() != expected.len() {
        return Err(format!(
            "element count: expected {}, got {}",
            expected.len(),
            actual.len()
        ));
    }
    let mut bad: Vec<String> = Vec::new();
    let mut count = 0usize;
    let mut note = |i: usize, e: String, a: String| {
        count += 1;
        if bad.len() < 5 {
            bad.push(format!("[{i}] expected {e}, got {a}"));
        }
    };
    match (actual, expected) {
        (Vals::Bool(a), Vals::Bool(e)) => {
            for (i, (x, y)) in a.iter().zip(e).enumerate() {
                if x != y {
                    note(i, y.to_string(), x.to_string());
                }
            }
        }
        (Vals::Int(a), Vals::Int(e)) => {
            for (i, (x, y)) in a.iter().zip(e).enumerate() {
                if x != y {
                    note(i, y.to_string(), x.to_string());
                }
            }
        }
        (Vals::Float(a), Vals::Float(e)) => {
            for (i, (&x, &y)) in a.iter().zip(e).enumerate() {
                if !float_close(x, y, rtol, atol) {
                    note(i, fmt_f(y), fmt_f(x));
                }
            }
        }
        (Vals::Complex(a), Vals::Complex(e)) => {
            for (i, (&(xr, xi), &(yr, yi))) in a.iter().zip(e).enumerate() {
                if !float_close(xr, yr, rtol, atol) || !float_close(xi, yi, rtol, atol) {
                    note(
                        i,
                        format!("({}, {})", fmt_f(yr), fmt_f(yi)),
                        format!("({}, {})", fmt_f(xr), fmt_f(xi)),
                    );
                }
            }
        }
        _ => return Err("element kinds differ".into()),
    }
    if count == 0 {
        Ok(())
    } else {
        Err(format!(
            "{count} of {} elements differ: {}{}",
            expected.len(),
            bad.join("; "),
            if count > bad.len() { "; ..." } else { "" }
        ))
    }
}

pub(crate) fn shape_str(s: &[usize]) -> String {
    format!("{s:?}")
}

/// One line describing a tensor: dtype, shape and (when readable and short) values.
pub(crate) fn describe(t: &Tensor) -> String {
    let mut s = format!("dtype {} shape {}", t.dtype(), shape_str(&t.shape()));
    if t.numel() <= 8 {
        if let Ok(v) = read_vals(t) {
            let _ = write!(s, " values {}", vals_str(&v));
        }
    }
    s
}

pub(crate) fn vals_str(v: &Vals) -> String {
    match v {
        Vals::Bool(v) => format!("{v:?}"),
        Vals::Int(v) => format!("{v:?}"),
        Vals::Float(v) => format!(
            "[{}]",
            v.iter().map(|&x| fmt_f(x)).collect::<Vec<_>>().join(", ")
        ),
        Vals::Complex(v) => format!(
            "[{}]",
            v.iter()
                .map(|&(r, i)| format!("({}, {})", fmt_f(r), fmt_f(i)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

pub(crate) fn is_reduced_complex(dtype: &str) -> bool {
    matches!(dtype, "complex32" | "bcomplex32")
}

/// True for the reference's missing-kernel error on a wide unsigned dtype, e.g.
/// `"add_stub" not implemented for 'UInt16'`.
pub(crate) fn is_wide_unsigned_kernel_gap(message: &str) -> bool {
    message.starts_with('"')
        && ["'UInt16'", "'UInt32'", "'UInt64'"]
            .iter()
            .any(|d| message.contains(&format!("\" not implemented for {d}")))
}

pub(crate) fn lib_err_text(e: &lazyfuse::Error) -> String {
    if e.is_unsupported() {
        format!("unsupported: {e}")
    } else {
        e.to_string()
    }
}

/// Judges a case whose outcome is a tensor (or an error) against its `result` object:
/// `check` compares a successful tensor with the expected result.
pub(crate) fn judge(
    expected: &Value,
    got: R<Tensor>,
    check: impl FnOnce(&Tensor) -> R<Outcome>,
) -> Outcome {
    if let Some(class) = expected.get("error") {
        let message = expected
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("");
        return match got {
            Err(RunErr::Harness(m)) => Outcome::Fail(format!("runner: {m}")),
            Err(RunErr::Lib(e)) if e.is_unsupported() => Outcome::Fail(format!(
                "expected error {}: {message}, got unsupported: {e}",
                class.as_str().unwrap_or("?")
            )),
            Err(RunErr::Lib(_)) => Outcome::Pass,
            Ok(_) if is_wide_unsigned_kernel_gap(message) => Outcome::Extended,
            Ok(t) => Outcome::Fail(format!(
                "expected error {}: {message}, got Ok({})",
                class.as_str().unwrap_or("?"),
                describe(&t)
            )),
        };
    }
    let expected_dtype = expected.get("dtype").and_then(Value::as_str).unwrap_or("");
    let got = got.and_then(|t| check(&t));
    match got {
        Ok(o) => o,
        Err(RunErr::Harness(m)) => Outcome::Fail(format!("runner: {m}")),
        Err(RunErr::Lib(e)) if e.is_unsupported() && is_reduced_complex(expected_dtype) => {
            Outcome::Unsupported
        }
        Err(RunErr::Lib(e)) => Outcome::Fail(format!("unexpected error: {}", lib_err_text(&e))),
    }
}

/// Checks dtype and shape of `t` against a result object, then its elements when the
/// object has `data`. Reading the elements realizes the tensor.
pub(crate) fn check_result(t: &Tensor, expected: &Value) -> R<Outcome> {
    let dtype = dtype_of(field(expected, "dtype")?)?;
    let shape = usize_list(field(expected, "shape")?, "shape")?;
    if t.dtype() != dtype {
        return Ok(Outcome::Fail(format!(
            "dtype: expected {dtype}, got {} (shape {})",
            t.dtype(),
            shape_str(&t.shape())
        )));
    }
    if t.shape() != shape {
        return Ok(Outcome::Fail(format!(
            "shape: expected {}, got {} (dtype {dtype})",
            shape_str(&shape),
            shape_str(&t.shape())
        )));
    }
    let Some(data) = expected.get("data") else {
        // Only dtype and shape are recorded; still run it, since an error found at
        // realize time is an error of the op.
        t.realize()?;
        return Ok(Outcome::Pass);
    };
    let exp = decode_vals(dtype, as_array(data, "data")?)?;
    let rtol = expected.get("rtol").and_then(Value::as_f64).unwrap_or(0.0);
    let atol = expected.get("atol").and_then(Value::as_f64).unwrap_or(0.0);
    let actual = read_vals(t)?;
    Ok(match compare_vals(&actual, &exp, rtol, atol) {
        Ok(()) => Outcome::Pass,
        Err(d) => Outcome::Fail(format!("values ({dtype} {}): {d}", shape_str(&shape))),
    })
}

/// Realizes `t` so that errors found only at execution time surface as errors of the op.
pub(crate) fn realized(t: Tensor) -> R<Tensor> {
    t.realize()?;
    Ok(t)
}
