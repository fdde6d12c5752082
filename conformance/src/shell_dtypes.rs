//! The runner of `shell_dtypes.jsonl` (tests/data/seeds/README.md): PyTorch's kernels
//! and refusals for its shell dtypes (uint16/32/64, float8, complex32), op by op.
//! Where PyTorch has no kernel for a wide unsigned dtype and lazyfuse computes one,
//! the case is "extended" (lazyfuse goes further on purpose; README says so).

use crate::{
    as_array, as_str, compare_vals, decode_vals, dtype_of, field, harness, read_vals, realized,
    shape_str, usize_list, Outcome, RunErr, Vals, R,
};
use lazyfuse::{Complex, DType, Scalar, Tensor};
use serde_json::Value;

/// `[1, 2]` (`[1+1j, 2-1j]` for complex dtypes) in `dtype`.
fn input(dtype: DType) -> R<Tensor> {
    let t = if dtype.is_complex() {
        Tensor::from_vec(
            vec![Complex::new(1.0f32, 1.0), Complex::new(2.0, -1.0)],
            &[2],
        )?
    } else if dtype.is_floating_point() {
        Tensor::from_vec(vec![1.0f32, 2.0], &[2])?
    } else {
        Tensor::from_vec(vec![1i64, 2], &[2])?
    };
    Ok(t.to_dtype(dtype)?)
}

fn apply(op: &str, a: &Tensor) -> R<Tensor> {
    Ok(match op {
        "add" => a.add(a)?,
        "sub" => a.sub(a)?,
        "mul" => a.mul(a)?,
        "div" => a.div(a)?,
        "neg" => a.neg()?,
        "abs" => a.abs()?,
        "exp" => a.exp()?,
        "eq" => a.eq(a)?,
        "lt" => a.lt(a)?,
        "maximum" => a.maximum(a)?,
        "sum" => a.sum(&[], false)?,
        "cat" => Tensor::cat(&[a, a], 0)?,
        "where" => Tensor::where_cond(&Tensor::from_vec(vec![true, false], &[2])?, a, a)?,
        "clamp" => a.clamp(Some(Scalar::Int(0)), Some(Scalar::Int(1)))?,
        "fill_" => {
            let c = a.clone_in(lazyfuse::MemoryFormat::Preserve)?;
            c.fill_(1)?;
            c
        }
        "add_scalar" => a.add(1)?,
        "mul_scalar" => a.mul(2)?,
        "to_float32" => a.to_dtype(DType::F32)?,
        "zeros" => Tensor::try_zeros(&[2], a.dtype())?,
        "amax" => a.amax(&[], false)?,
        "mean" => a.mean(&[], false)?,
        "matmul" => a.matmul(a)?,
        "index_select" => a.index_select(0, &Tensor::from_vec(vec![1i64], &[1])?)?,
        "flip" => a.flip(&[0])?,
        "reshape" => a.reshape(&[2, 1])?,
        "t_contiguous" => a.reshape(&[1, 2])?.t()?.contiguous()?,
        "ne" => a.ne(a)?,
        "eq_scalar" => a.eq(1)?,
        "ne_scalar" => a.ne(1.1)?,
        "isnan" => a.isnan()?,
        "isinf" => a.isinf()?,
        "mul_0d" => a.mul(&a.select(0, 1)?)?,
        "mul_bcast" => a.reshape(&[2, 1])?.mul(a)?,
        "mul_" | "abs_" => {
            let c = a.clone_in(lazyfuse::MemoryFormat::Preserve)?;
            if op == "mul_" {
                c.mul_(a)?;
            } else {
                c.abs_()?;
            }
            c
        }
        other => return harness(format!("unknown shell op '{other}'")),
    })
}

/// A result's values as PyTorch's generator shows them: float64, int64, bool or
/// complex64.
fn shown(t: &Tensor) -> R<Vals> {
    let d = t.dtype();
    let wide = if d.is_complex() {
        t.to_dtype(DType::C64)?
    } else if d.is_floating_point() {
        t.to_dtype(DType::F32)?.to_dtype(DType::F64)?
    } else if d == DType::Bool {
        t.clone()
    } else {
        t.to_dtype(DType::I64)?
    };
    read_vals(&wide)
}

pub(super) fn run_shell_dtypes(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let dtype = dtype_of(field(case, "dtype")?)?;
    let expected = field(case, "result")?;
    let got = input(dtype).and_then(|a| apply(op, &a)).and_then(realized);
    if expected.get("error").is_some() {
        return Ok(match got {
            Err(RunErr::Lib(_)) => Outcome::Pass,
            Err(RunErr::Harness(m)) => Outcome::Fail(format!("runner: {m}")),
            Ok(_) if dtype.is_wide_unsigned() => Outcome::Extended,
            Ok(t) => Outcome::Fail(format!(
                "PyTorch refuses ({}), lazyfuse computed {} {}",
                as_str(field(expected, "message")?, "message")?,
                t.dtype(),
                shape_str(&t.shape())
            )),
        });
    }
    let t = match got {
        Ok(t) => t,
        Err(RunErr::Lib(e)) if e.is_unsupported() && matches!(dtype, DType::C32) => {
            return Ok(Outcome::Unsupported)
        }
        Err(RunErr::Lib(e)) => return Ok(Outcome::Fail(format!("unexpected error: {e}"))),
        Err(RunErr::Harness(m)) => return Ok(Outcome::Fail(format!("runner: {m}"))),
    };
    let want = dtype_of(field(expected, "dtype")?)?;
    if t.dtype() != want || t.shape() != usize_list(field(expected, "shape")?, "shape")? {
        return Ok(Outcome::Fail(format!(
            "expected {want} {}, got {} {}",
            field(expected, "shape")?,
            t.dtype(),
            shape_str(&t.shape())
        )));
    }
    let shown_dtype = if want.is_complex() {
        DType::C64
    } else if want.is_floating_point() {
        DType::F64
    } else if want == DType::Bool {
        DType::Bool
    } else {
        DType::I64
    };
    let exp = decode_vals(shown_dtype, as_array(field(expected, "data")?, "data")?)?;
    Ok(match compare_vals(&shown(&t)?, &exp, 0.0, 0.0) {
        Ok(()) => Outcome::Pass,
        Err(d) => Outcome::Fail(format!("values: {d}")),
    })
}
