//! The binary and ternary pointwise math ops through the public API.
//!
//! `binary_ops_match_pytorch` replays `tests/data/binary_ops.jsonl`, generated from
//! PyTorch 2.15 by `scripts/gen_binary_ops.py`: every op's dtype table (accepted dtype
//! pairs with the result dtype, refusals with PyTorch's message), special values (NaN,
//! ±inf, ±0, integer extremes), broadcasting, empty and zero-dim tensors. The other
//! tests cover what the file cannot: non-contiguous views, in-place forms and their
//! cast refusals, and `out=` aliasing an input and reaching a view.

use lazyfuse::{BinaryOp, Complex, DType, Operand, Scalar, Tensor};
use serde_json::Value;

use lazyfuse_conformance as runner;

/// A tensor object of the data file, decoded as the conformance runner decodes them.
fn build(v: &Value) -> Tensor {
    runner::tensor_object(v).unwrap_or_else(|e| panic!("{e}: {v}"))
}

fn scalar(v: &Value) -> Scalar {
    match v {
        Value::Bool(b) => Scalar::Bool(*b),
        Value::Number(n) if n.is_i64() => Scalar::Int(n.as_i64().unwrap()),
        other => Scalar::Float(runner::float_element(other).unwrap()),
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

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

#[test]
fn non_contiguous_views_read_and_write() {
    lazyfuse::set_verify(true);
    let base = Tensor::from_vec(vec![1.0f32, f32::NAN, 3.0, 4.0, -5.0, 6.0], &[2, 3]).unwrap();
    let t = base.t().unwrap(); // [3, 2], strides [1, 3]
    let other = Tensor::from_vec(vec![2.0f32, 2.0, 2.0, f32::NAN, 2.0, 2.0], &[3, 2]).unwrap();
    let m = t.fmax(&other).unwrap();
    assert_eq!(f32s(&m), vec![2.0, 4.0, 2.0, -5.0, 3.0, 6.0]);
    // lerp with a transposed weight, hypot of a strided select
    let w = Tensor::full(&[2, 3], 0.5, DType::F32).unwrap().t().unwrap();
    let l = t.lerp(&other, &w).unwrap();
    assert_eq!(f32s(&l)[4], 2.5);
    let col = base.select(1, 2).unwrap(); // [3.0, 6.0], stride 3
    let h = col
        .hypot(&Tensor::from_vec(vec![4.0f32, 8.0], &[2]).unwrap())
        .unwrap();
    assert_eq!(f32s(&h), vec![5.0, 10.0]);
    // in place through a transposed view reaches the base
    let mask = Tensor::from_vec(vec![true, false, false, false, false, true], &[3, 2]).unwrap();
    t.masked_fill_(&mask, 0).unwrap();
    assert_eq!(f32s(&base)[0], 0.0);
    assert_eq!(f32s(&base)[5], 0.0);
    t.clamp_min_(-1.0).unwrap();
    assert_eq!(f32s(&base)[4], -1.0);
}

#[test]
fn inplace_cast_refusals_and_shapes() {
    lazyfuse::set_verify(true);
    let i = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    let f = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let cast = "result type Float can't be cast to the desired output type Int";
    for err in [
        i.copysign_(-1).unwrap_err(),
        i.xlogy_(&i).unwrap_err(),
        i.addcmul_(&f, &f, 1).unwrap_err(),
        i.addcdiv_(&f, &f, 1).unwrap_err(),
        i.clamp_min_(&f).unwrap_err(),
        i.clamp_tensor_(Some(&f), Some(&f)).unwrap_err(),
    ] {
        assert_eq!(err.to_string(), cast);
    }
    let err = i.clamp_(Some(Scalar::Float(1.5)), None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "result type Float can't be cast to the desired output type int"
    );
    let err = i.hypot_(&i).unwrap_err();
    assert_eq!(err.to_string(), "\"hypot_cpu\" not implemented for 'Int'");
    let err = i.lerp_(&i, 0.5).unwrap_err();
    assert_eq!(
        err.to_string(),
        "\"lerp_kernel_scalar\" not implemented for 'Int'"
    );
    let i8 = Tensor::from_vec(vec![8i8], &[1]).unwrap();
    let err = i8
        .gcd_(&Tensor::from_vec(vec![1.0f32], &[1]).unwrap())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "result type Float can't be cast to the desired output type Char"
    );
    i8.bitwise_right_shift_(&Tensor::from_vec(vec![1i64], &[1]).unwrap())
        .unwrap();
    assert_eq!(i8.to_vec::<i8>().unwrap(), vec![4]);
    // broadcasting may not grow the destination
    let x = Tensor::ones(&[3], DType::F32);
    let big = Tensor::ones(&[2, 3], DType::F32);
    let shape = "output with shape [3] doesn't match the broadcast shape [2, 3]";
    assert_eq!(x.addcmul_(&big, &x, 1).unwrap_err().to_string(), shape);
    assert_eq!(x.lerp_(&big, 0.5).unwrap_err().to_string(), shape);
    let m = Tensor::from_vec(vec![true, false], &[2, 1]).unwrap();
    assert_eq!(x.masked_fill_(&m, 1).unwrap_err().to_string(), shape);
    // an expanded destination is refused
    let e = Tensor::zeros(&[1], DType::F32).expand(&[3]).unwrap();
    assert!(e.lerp_(&x, 0.5).is_err());
}

#[test]
fn out_aliases_an_input_and_reaches_views() {
    lazyfuse::set_verify(true);
    // maximum(a, b, out=a) where a is a column of a matrix
    let base = Tensor::from_vec(vec![1i64, 10, 7, 20], &[2, 2]).unwrap();
    let a = base.select(1, 0).unwrap(); // [1, 7]
    let b = Tensor::from_vec(vec![5i64, 5], &[2]).unwrap();
    a.write_out(&a.maximum(&b).unwrap()).unwrap();
    assert_eq!(base.to_vec::<i64>().unwrap(), vec![5, 10, 7, 20]);
    // out aliasing both operands: a = a + a.flip-like view
    let row = base.select(0, 0).unwrap(); // [5, 10]
    row.write_out(&row.add(&base.select(1, 1).unwrap()).unwrap())
        .unwrap();
    assert_eq!(base.to_vec::<i64>().unwrap(), vec![15, 30, 7, 20]);
    // the result is cast into out's dtype when allowed, refused otherwise
    let out = Tensor::zeros(&[2], DType::F64);
    out.write_out(&b.gcd(&b).unwrap()).unwrap();
    assert_eq!(out.to_vec::<f64>().unwrap(), vec![5.0, 5.0]);
    let err = b.write_out(&b.fmax(&out).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "result type Double can't be cast to the desired output type Long"
    );
    let bools = Tensor::zeros(&[2], DType::Bool);
    assert!(bools.write_out(&b.eq(&b).unwrap()).is_ok());
    let err = bools.write_out(&b).unwrap_err();
    assert_eq!(
        err.to_string(),
        "result type Long can't be cast to the desired output type Bool"
    );
    // shape mismatch: no resize
    let err = out.write_out(&Tensor::zeros(&[3], DType::F64)).unwrap_err();
    assert!(err.to_string().contains("[2]") && err.to_string().contains("[3]"));
    // a value recorded before the write keeps the old version
    let before = base.sum(&[], false).unwrap();
    base.select(0, 1)
        .unwrap()
        .write_out(&Tensor::zeros(&[2], DType::I64))
        .unwrap();
    assert_eq!(before.to_vec::<i64>().unwrap(), vec![72]);
    assert_eq!(base.to_vec::<i64>().unwrap(), vec![15, 30, 0, 0]);
}

#[test]
fn scalars_zero_dim_and_empty() {
    lazyfuse::set_verify(true);
    let z = Tensor::scalar(2.0);
    let v = Tensor::from_vec(vec![1.0f64, -1.0], &[2]).unwrap();
    assert_eq!(
        z.copysign(&v).unwrap().to_vec::<f64>().unwrap(),
        vec![2.0, -2.0]
    );
    let e = Tensor::zeros(&[0, 2], DType::F32);
    let r = e.lerp(&e, 0.5).unwrap();
    assert_eq!(r.shape(), vec![0, 2]);
    assert_eq!(e.addcdiv(&e, &e, 1).unwrap().numel(), 0);
    let m = Tensor::zeros(&[0, 2], DType::Bool);
    assert_eq!(e.masked_fill(&m, 1).unwrap().numel(), 0);
    // masked_fill with a zero-dim value tensor, and its checks
    let x = Tensor::from_vec(vec![1i8, 2], &[2]).unwrap();
    let mask = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    let r = x
        .masked_fill(&mask, &Tensor::scalar(Scalar::Int(-3)))
        .unwrap();
    assert_eq!(r.to_vec::<i8>().unwrap(), vec![-3, 2]);
    let err = x
        .masked_fill(&mask, &Tensor::scalar(Scalar::Int(300)))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "value cannot be converted to type int8_t without overflow"
    );
    let err = x.masked_fill(&mask, &v).unwrap_err();
    assert_eq!(
        err.to_string(),
        "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)."
    );
    // integer extremes through the public API
    let mn = Tensor::from_vec(vec![i64::MIN, i64::MIN], &[2]).unwrap();
    let s = Tensor::from_vec(vec![63i64, 64], &[2]).unwrap();
    assert_eq!(
        mn.bitwise_right_shift(&s).unwrap().to_vec::<i64>().unwrap(),
        vec![-1, -1]
    );
    assert_eq!(
        Tensor::binary(BinaryOp::Gcd, &mn, 0)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![i64::MIN; 2]
    );
}

#[test]
fn storage_only_dtypes() {
    let c = Tensor::zeros(&[2], DType::C32);
    let err = c.hypot(&c).unwrap_err();
    assert_eq!(
        err.to_string(),
        "\"hypot_cpu\" not implemented for 'ComplexHalf'"
    );
    let err = c.gcd(&c).unwrap_err();
    assert_eq!(
        err.to_string(),
        "\"gcd_cpu\" not implemented for 'ComplexHalf'"
    );
    assert!(c.addcmul(&c, &c, 1).unwrap_err().is_unsupported());
    let err = c.addcdiv(&c, &c, 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "\"addcdiv_cpu_out\" not implemented for 'ComplexHalf'"
    );
    let m = Tensor::zeros(&[2], DType::Bool);
    assert!(c.masked_fill(&m, 1).unwrap_err().is_unsupported());
    let f8 = Tensor::zeros(&[2], DType::F8E4M3FN);
    let err = f8.masked_fill(&m, 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "\"masked_fill\" not implemented for 'Float8_e4m3fn'"
    );
}

/// `pow` with a host scalar exponent of 2 is PyTorch's short cut, the base
/// times itself: a `square` node (one multiply in every backend) on real
/// floating-point results, bit for bit `x * x` (the correctly rounded square)
/// whatever the math mode; integer results keep the integer `pow`, an integer
/// base with a float 2 squares in float32, the in-place form squares in
/// place, and the gradient is `2 x · g` as `pow`'s.
#[test]
fn pow_of_two_is_the_square() {
    lazyfuse::set_verify(true);
    let xs = vec![
        1.5f32,
        -0.0,
        f32::NAN,
        -3.25,
        1e20,
        1.0 + 1.0 / 4096.0,
        -f32::INFINITY,
    ];
    for dt in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let x = typed(&xs, dt);
        for two in [Scalar::Float(2.0), Scalar::Int(2)] {
            let p = x.pow(two).unwrap();
            assert!(
                p.graph_text().contains("square("),
                "{dt}:\n{}",
                p.graph_text()
            );
            assert_eq!(p.dtype(), dt);
            assert_eq!(bits(&p), bits(&x.mul(&x).unwrap()), "{dt}");
        }
    }
    // integers: the integer pow (no square node); a float 2 squares in float32
    let i = Tensor::from_vec(vec![3i32, -4, 46341], &[3]).unwrap();
    let ip = i.pow(2).unwrap();
    assert!(!ip.graph_text().contains("square("));
    assert_eq!(ip.to_vec::<i32>().unwrap()[..2], [9, 16]);
    let fp = i.pow(2.0).unwrap();
    assert_eq!(fp.dtype(), DType::F32);
    assert!(fp.graph_text().contains("square("));
    assert_eq!(
        fp.to_vec::<f32>().unwrap(),
        vec![9.0, 16.0, 2_147_488_281.0]
    );
    // in place, and pow_ of an integer tensor by a float is refused as before
    let y = Tensor::from_vec(vec![1.5f32, -2.0], &[2]).unwrap();
    y.pow_(2).unwrap();
    assert_eq!(f32s(&y), vec![2.25, 4.0]);
    let cast = "result type Float can't be cast to the desired output type Int";
    assert_eq!(i.pow_(2.0).unwrap_err().to_string(), cast);
    i.pow_(2).unwrap();
    assert_eq!(i.to_vec::<i32>().unwrap()[..2], [9, 16]);
    // the gradient: 2 x · g
    let w = Tensor::from_vec(vec![1.5f32, -3.0], &[2])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    w.pow(2.0)
        .unwrap()
        .sum(&[], false)
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(f32s(&w.grad().unwrap()), vec![3.0, -6.0]);
}

/// `xs` as a realized tensor of `dt`.
fn typed(xs: &[f32], dt: DType) -> Tensor {
    Tensor::from_vec(xs.to_vec(), &[xs.len()])
        .unwrap()
        .to_dtype(dt)
        .unwrap()
        .realize()
        .unwrap()
}

/// The values of `t` as float64 bits, every NaN as one value.
fn bits(t: &Tensor) -> Vec<u64> {
    t.to_dtype(DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap()
        .iter()
        .map(|v| if v.is_nan() { 1 } else { v.to_bits() })
        .collect()
}

/// PyTorch's other exponent short cuts (`pow_tensor_scalar_kernel`): on
/// float32, float64 and bfloat16, 0.5 is `sqrt`, -0.5 `rsqrt`, -1
/// `reciprocal`, 3 `x · x · x` and -2 `1 / (x · x)`, each step rounded to the
/// dtype (`pow(-0.0, 0.5)` is `-0.0`, as `sqrt`'s, where `pow` gives `+0`);
/// float16 keeps `pow` itself, as PyTorch's; in place too; the gradients are
/// `pow`'s within rounding.
#[test]
fn pow_takes_pytorchs_exponent_short_cuts() {
    lazyfuse::set_verify(true);
    let xs = vec![
        1.5f32,
        -0.0,
        0.0,
        f32::NAN,
        -3.25,
        1e20,
        3.0e-3,
        f32::INFINITY,
    ];
    type Steps = fn(&Tensor) -> Tensor;
    let cases: [(f64, &str, Steps); 5] = [
        (0.5, "sqrt(", |x| x.sqrt().unwrap()),
        (-0.5, "rsqrt(", |x| x.rsqrt().unwrap()),
        (-1.0, "reciprocal(", |x| x.reciprocal().unwrap()),
        (3.0, "square(", |x| x.mul(x).unwrap().mul(x).unwrap()),
        (-2.0, "square(", |x| x.mul(x).unwrap().reciprocal().unwrap()),
    ];
    for dt in [DType::F32, DType::F64, DType::BF16, DType::F16] {
        let x = typed(&xs, dt);
        for (e, node, steps) in cases {
            let p = x.pow(e).unwrap();
            let text = p.graph_text();
            assert_eq!(p.dtype(), dt);
            if dt == DType::F16 {
                assert!(text.contains("pow("), "{dt} {e}:\n{text}");
                continue;
            }
            assert!(
                text.contains(node) && !text.contains("pow("),
                "{dt} {e}:\n{text}"
            );
            assert_eq!(bits(&p), bits(&steps(&x)), "{dt} {e}");
            let y = x.mul(1.0).unwrap().realize().unwrap();
            y.pow_(e).unwrap();
            assert_eq!(bits(&y), bits(&p), "{dt} {e} in place");
        }
    }
    // an integer base with a float exponent: float32 steps
    let i = Tensor::from_vec(vec![4i32, 9], &[2]).unwrap();
    assert_eq!(f32s(&i.pow(0.5).unwrap()), vec![2.0, 3.0]);
    assert_eq!(f32s(&i.pow(-1.0).unwrap()), vec![0.25, 1.0 / 9.0]);
    // gradients: e · x^(e-1) · g
    for (e, want) in [
        (0.5, [0.25f32, 1.0 / 6.0]),
        (3.0, [48.0, 243.0]),
        (-1.0, [-1.0 / 16.0, -1.0 / 81.0]),
    ] {
        let w = Tensor::from_vec(vec![4.0f32, 9.0], &[2])
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        w.pow(e)
            .unwrap()
            .sum(&[], false)
            .unwrap()
            .backward()
            .unwrap();
        let g = f32s(&w.grad().unwrap());
        for (g, w) in g.iter().zip(want) {
            assert!((g - w).abs() <= 1e-6 * w.abs(), "{e}: {g} vs {w}");
        }
    }
}
