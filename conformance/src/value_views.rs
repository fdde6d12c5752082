//! The runner of `value_views.jsonl` (tests/data/seeds/README.md): chains of the
//! views that see a storage's values differently (`view(dtype)`, the complex parts,
//! the conjugate), each step's geometry, bits and values, PyTorch's refusals word for
//! word, and writes through the last view.

use crate::{
    arg_isize, arg_usize, as_array, as_i64, as_str, as_usize, compare_vals, decode_vals, dtype_of,
    field, harness, isize_list, json_bool, json_complex, json_f64, read_vals, tensor_from_vals,
    usize_list, Outcome, RunErr, R,
};
use lazyfuse::{Complex, DType, Scalar, Tensor};
use serde_json::Value;

/// The base of a case: complex `(i + 1) - ((i % 3) + 0.5)i`, or real `i - 2.5`.
fn base_of(dtype: DType, shape: &[usize]) -> R<Tensor> {
    let n: usize = shape.iter().product();
    let re = |i: usize| i as f64 + 1.0;
    let im = |i: usize| -((i % 3) as f64) - 0.5;
    Ok(match dtype {
        DType::C64 => Tensor::from_vec(
            (0..n)
                .map(|i| Complex::new(re(i) as f32, im(i) as f32))
                .collect(),
            shape,
        )?,
        DType::C128 => {
            Tensor::from_vec((0..n).map(|i| Complex::new(re(i), im(i))).collect(), shape)?
        }
        other => {
            Tensor::from_vec((0..n).map(|i| i as f64 - 2.5).collect(), shape)?.to_dtype(other)?
        }
    })
}

fn step(t: &Tensor, op: &str, args: &Value) -> R<Tensor> {
    Ok(match op {
        "real" => t.real()?,
        "imag" => t.imag()?,
        "conj" => t.conj()?,
        "resolve_conj" => t.resolve_conj()?,
        "resolve_neg" => t.resolve_neg()?,
        "view_as_real" => t.view_as_real()?,
        "view_as_complex" => t.view_as_complex()?,
        "view_dtype" => t.view_dtype(dtype_of(field(args, "dtype")?)?)?,
        "mH" => t.mh()?,
        "H" => t.h()?,
        "adjoint" => t.adjoint()?,
        "transpose" => t.transpose(arg_isize(args, "dim0")?, arg_isize(args, "dim1")?)?,
        "narrow" => t.narrow(
            arg_isize(args, "dim")?,
            arg_isize(args, "start")?,
            arg_usize(args, "length")?,
        )?,
        other => return harness(format!("unknown complex view '{other}'")),
    })
}

/// The values of `t` against a list of numbers or `[re, im]` pairs.
fn same_values(t: &Tensor, expected: &Value) -> R<Option<String>> {
    let exp = decode_vals(t.dtype(), as_array(expected, "values")?)?;
    let got = read_vals(t)?;
    // (reinterpreted bits are exact; the JSON decimals of huge doubles may parse one
    // ulp away)
    Ok(compare_vals(&got, &exp, 1e-15, 0.0).err())
}

pub(super) fn run_value_views(case: &Value) -> R<Outcome> {
    let dtype = dtype_of(field(case, "base_dtype")?)?;
    let shape = usize_list(field(case, "base_shape")?, "base_shape")?;
    let base = match case.get("base_data") {
        Some(data) => {
            let vals = decode_vals(dtype, as_array(data, "base_data")?)?;
            tensor_from_vals(dtype, &shape, &vals)?
        }
        None => base_of(dtype, &shape)?,
    };
    let mut t = base.clone();
    for (i, rec) in as_array(field(case, "steps")?, "steps")?.iter().enumerate() {
        let op = as_str(field(rec, "op")?, "op")?;
        t = step(&t, op, field(rec, "args")?)?;
        let got = (
            t.dtype().to_string(),
            t.shape(),
            t.strides(),
            t.storage_offset(),
            t.is_conj(),
            t.is_neg(),
            t.shares_storage(&base),
        );
        let want = (
            as_str(field(rec, "dtype")?, "dtype")?.to_string(),
            usize_list(field(rec, "shape")?, "shape")?,
            isize_list(field(rec, "strides")?, "strides")?,
            as_usize(field(rec, "storage_offset")?, "storage_offset")?,
            json_bool(field(rec, "is_conj")?)?,
            json_bool(field(rec, "is_neg")?)?,
            json_bool(field(rec, "shares_storage_with_base")?)?,
        );
        // (PyTorch compares data pointers, and every empty storage's is null)
        let empty = base.numel() == 0;
        let (mut got, want) = (got, want);
        if empty {
            got.6 = want.6;
        }
        if got != want {
            return Ok(Outcome::Fail(format!(
                "step {i} ({op}): expected {want:?}, got {got:?}"
            )));
        }
        if let Some(d) = same_values(&t, field(rec, "values")?)? {
            return Ok(Outcome::Fail(format!("step {i} ({op}) values: {d}")));
        }
    }
    if let Some(err) = case.get("error") {
        let op = as_str(field(err, "op")?, "op")?;
        let message = as_str(field(err, "message")?, "message")?;
        return Ok(match step(&t, op, field(err, "args")?) {
            Err(RunErr::Lib(e)) if e.to_string() == message => Outcome::Pass,
            Err(RunErr::Lib(e)) => Outcome::Fail(format!("{op}: expected '{message}', got '{e}'")),
            Err(RunErr::Harness(m)) => Outcome::Fail(format!("runner: {m}")),
            Ok(_) => Outcome::Fail(format!("{op} succeeded; PyTorch: '{message}'")),
        });
    }
    if let Some(w) = case.get("write") {
        let value = field(w, "value")?;
        let scalar = match value {
            Value::Array(_) => {
                let (re, im) = json_complex(value)?;
                Scalar::Complex(re, im)
            }
            Value::Null => Scalar::Int(0),
            Value::Bool(b) => Scalar::Bool(*b),
            v if v.is_i64() => Scalar::Int(as_i64(v, "value")?),
            v => Scalar::Float(json_f64(v)?),
        };
        match as_str(field(w, "op")?, "op")? {
            "add_" => t.add_(scalar)?,
            "mul_" => t.mul_(scalar)?,
            "bitwise_xor_" => t.bitwise_xor_(scalar)?,
            "zero_" | "fill_" => t.fill_(scalar)?,
            other => return harness(format!("unknown write '{other}'")),
        }
        let exp = decode_vals(
            base.dtype(),
            as_array(field(case, "base_after")?, "base_after")?,
        )?;
        if let Err(d) = compare_vals(&read_vals(&base)?, &exp, 1e-6, 1e-6) {
            return Ok(Outcome::Fail(format!("base after the write: {d}")));
        }
    }
    Ok(Outcome::Pass)
}
