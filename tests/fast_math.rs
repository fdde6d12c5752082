//! `MathMode::Fast` on the JIT against the reference interpreter for every op the
//! inline vector math (`codegen`'s `vmath`) computes (and the compare-and-select
//! activations the vector code computes in both modes), on every float dtype and on
//! lengths that exercise vector bodies and scalar tails (1, 3, 4, 7, 8, 1000):
//! values within a few ulp of the dtype, special values (NaN, ±inf) exactly where
//! the interpreter has them. `MathMode::Exact` must still match bit for bit.
//!
//! The backend and math mode are process-wide: each test holds `GLOBAL`.

use lazyfuse::{CpuBackend, DType, GeluApproximate, MathMode, Tensor};
use std::sync::Mutex;

static GLOBAL: Mutex<()> = Mutex::new(());

type Op = (&'static str, fn(&Tensor) -> lazyfuse::Result<Tensor>);

const OPS: [Op; 28] = [
    ("exp", Tensor::exp),
    ("exp2", Tensor::exp2),
    ("expm1", Tensor::expm1),
    ("log", Tensor::log),
    ("log2", Tensor::log2),
    ("log10", Tensor::log10),
    ("log1p", Tensor::log1p),
    ("tanh", Tensor::tanh),
    ("sigmoid", Tensor::sigmoid),
    ("silu", Tensor::silu),
    ("mish", Tensor::mish),
    ("sin", Tensor::sin),
    ("cos", Tensor::cos),
    ("tan", Tensor::tan),
    ("atan", Tensor::atan),
    ("sinh", Tensor::sinh),
    ("cosh", Tensor::cosh),
    // the parameterised activations (vmath's `emit_param`); the tanh form of
    // gelu is within the conformance tolerance rather than a few ulp (see
    // `fast_gelu_tanh_is_within_the_conformance_tolerance`)
    ("gelu_tanh", |t| t.gelu(GeluApproximate::Tanh)),
    ("softplus", |t| t.softplus(1.0, 20.0)),
    ("softplus_b2_t3", |t| t.softplus(2.0, 3.0)),
    ("elu", |t| t.elu(1.0)),
    ("elu_0.3", |t| t.elu(0.3)),
    ("leaky_relu", |t| t.leaky_relu(0.01)),
    ("hardtanh", |t| t.hardtanh(-1.0, 1.0)),
    ("hardtanh_inf", |t| t.hardtanh(f64::NEG_INFINITY, 2.5)),
    // compares and selects (vector code in both math modes)
    ("sign", Tensor::sign),
    ("hardsigmoid", Tensor::hardsigmoid),
    ("hardswish", Tensor::hardswish),
];

const DTYPES: [DType; 4] = [DType::F32, DType::F64, DType::F16, DType::BF16];

/// `n` inputs: special values first, then a spread over about [-30, 30].
fn inputs(n: usize) -> Vec<f64> {
    let specials = [
        f64::NAN,
        0.5,
        f64::INFINITY,
        -0.0,
        f64::NEG_INFINITY,
        0.0,
        -1.0,
        100.0,
        -100.0,
        1e-6,
    ];
    (0..n)
        .map(|i| {
            if n < 1000 {
                // short tensors: specials land in bodies and tails alike
                specials[(i * 7 + n) % specials.len()]
            } else if i < specials.len() {
                specials[i]
            } else {
                let t = i as f64 / n as f64;
                60.0 * t - 30.0 + (i as f64 * 0.37).sin()
            }
        })
        .collect()
}

/// `op` on `xs` as `dtype`, realized on `backend` in `math`, read back as f64.
fn realized(op: Op, dtype: DType, xs: &[f64], backend: CpuBackend, math: MathMode) -> Vec<f64> {
    lazyfuse::set_cpu_backend(backend);
    lazyfuse::set_math_mode(math);
    let t = Tensor::from_vec(xs.to_vec(), &[xs.len()]).expect("tensor");
    let t = t
        .to_dtype(dtype)
        .expect("cast")
        .realize()
        .expect("realize input");
    let y = (op.1)(&t).expect(op.0);
    let y = y.realize().expect("realize");
    let out = y
        .to_dtype(DType::F64)
        .expect("widen")
        .to_vec::<f64>()
        .expect("read");
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    lazyfuse::set_math_mode(MathMode::Fast);
    out
}

/// The spacing of `dtype` at `r` (its smallest subnormal at 0).
fn ulp(dtype: DType, r: f64) -> f64 {
    let (mant, min_exp) = match dtype {
        DType::F32 => (23, -126),
        DType::F64 => (52, -1022),
        DType::F16 => (10, -14),
        _ => (7, -126),
    };
    let e = if r == 0.0 {
        min_exp
    } else {
        (r.abs().log2().floor() as i32).max(min_exp)
    };
    f64::from(e - mant).exp2()
}

/// `op` in fast math on the JIT against the interpreter in exact math on
/// `dtype`, at every length of the vector bodies and scalar tails: special
/// values (NaN, ±inf) exactly, finite ones where `close(want, got)`; each
/// miss is added to `bad`.
fn fast_against_interpreter(
    op: Op,
    dtype: DType,
    close: impl Fn(f64, f64) -> bool,
    bad: &mut Vec<String>,
) {
    for n in [1, 3, 4, 7, 8, 1000] {
        let xs = inputs(n);
        let want = realized(op, dtype, &xs, CpuBackend::Interp, MathMode::Exact);
        let got = realized(op, dtype, &xs, CpuBackend::Jit, MathMode::Fast);
        for i in 0..n {
            let (w, g) = (want[i], got[i]);
            let ok = if w.is_nan() || g.is_nan() || w.is_infinite() || g.is_infinite() {
                (w.is_nan() && g.is_nan()) || w == g
            } else {
                close(w, g)
            };
            if !ok {
                bad.push(format!(
                    "{} {dtype} n={n} [{i}] x={}: got {g:e}, want {w:e}",
                    op.0, xs[i]
                ));
            }
        }
    }
}

#[test]
fn fast_math_is_within_a_few_ulp_of_the_interpreter() {
    let _g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut bad = Vec::new();
    for &op in OPS.iter().filter(|op| op.0 != "gelu_tanh") {
        for dtype in DTYPES {
            // f32/f64: the approximation's ulps; f16/bf16: one rounding of a
            // value within a few f32 ulp of the interpreter's
            let bound = match dtype {
                DType::F32 | DType::F64 => 8.0,
                _ => 1.0,
            };
            let close = |w: f64, g: f64| (w - g).abs() <= bound * ulp(dtype, w);
            fast_against_interpreter(op, dtype, close, &mut bad);
        }
    }
    assert!(bad.is_empty(), "{}", bad[..bad.len().min(30)].join("\n"));
}

/// The tanh form of GELU in fast math, `x / (1 + e^(-2u))` (vmath's
/// `has_param` says why): where the interpreter's `1 + tanh(u)` cancels (x <
/// -2) its result is a few ulp of tanh's off in absolute terms, and the two
/// differ by many of the result's ulp, but never by more than the conformance
/// tolerance of the dtype (`atol + rtol |want|`, README §1.5); special values
/// exactly.
#[test]
fn fast_gelu_tanh_is_within_the_conformance_tolerance() {
    let _g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    let op: Op = ("gelu_tanh", |t| t.gelu(GeluApproximate::Tanh));
    let mut bad = Vec::new();
    for (dtype, rtol, atol) in [
        (DType::F32, 1e-5, 1e-6),
        (DType::F64, 1e-10, 1e-12),
        (DType::F16, 2e-3, 1e-3),
        (DType::BF16, 1.6e-2, 1e-2),
    ] {
        let close = |w: f64, g: f64| (w - g).abs() <= atol + rtol * w.abs();
        fast_against_interpreter(op, dtype, close, &mut bad);
    }
    assert!(bad.is_empty(), "{}", bad[..bad.len().min(30)].join("\n"));
}

#[test]
fn exact_mode_matches_the_interpreter_bit_for_bit() {
    let _g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut bad = Vec::new();
    for &op in &OPS {
        for dtype in DTYPES {
            for n in [1, 7, 1000] {
                let xs = inputs(n);
                let want = realized(op, dtype, &xs, CpuBackend::Interp, MathMode::Exact);
                let got = realized(op, dtype, &xs, CpuBackend::Jit, MathMode::Exact);
                for i in 0..n {
                    let (w, g) = (want[i], got[i]);
                    if w.to_bits() != g.to_bits() && !(w.is_nan() && g.is_nan()) {
                        bad.push(format!(
                            "{} {dtype} n={n} [{i}]: got {g:e}, want {w:e}",
                            op.0
                        ));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad[..bad.len().min(30)].join("\n"));
}

/// Fast math contracts a product into the add or subtract that takes it
/// (`a*b + c`, `c - a*b` → one `fma`, one rounding) on hosts with FMA, in the
/// vector body and the scalar tail alike, so every element is `mul_add`'s; exact
/// math rounds the product first, as the interpreter does.
#[test]
fn products_contract_into_fma_in_fast_math_only() {
    let _g = GLOBAL.lock().unwrap_or_else(|p| p.into_inner());
    #[cfg(target_arch = "x86_64")]
    let fma =
        std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx");
    #[cfg(target_arch = "aarch64")]
    let fma = true;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let fma = false;
    for n in [1usize, 3, 4, 7, 1001] {
        let v = |seed: f64| -> Vec<f64> {
            (0..n)
                .map(|i| ((i as f64) * 0.731 + seed).sin() * 3.7)
                .collect()
        };
        let (a, b, c) = (v(0.1), v(0.2), v(0.3));
        for dtype in [DType::F32, DType::F64] {
            let t = |x: &[f64]| {
                Tensor::from_vec(x.to_vec(), &[n])
                    .unwrap()
                    .to_dtype(dtype)
                    .unwrap()
                    .realize()
                    .unwrap()
            };
            let (ta, tb, tc) = (t(&a), t(&b), t(&c));
            // the inputs as the dtype holds them
            let back = |x: &Tensor| x.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            let (a, b, c) = (back(&ta), back(&tb), back(&tc));
            for math in [MathMode::Fast, MathMode::Exact] {
                lazyfuse::set_math_mode(math);
                let sum = (&(&ta * &tb) + &tc).realize().unwrap();
                let diff = (&tc - &(&ta * &tb)).realize().unwrap();
                lazyfuse::set_math_mode(MathMode::Fast);
                let (sum, diff) = (back(&sum), back(&diff));
                let fused = fma && math == MathMode::Fast;
                for i in 0..n {
                    let (want_sum, want_diff) = if dtype == DType::F32 {
                        let (x, y, z) = (a[i] as f32, b[i] as f32, c[i] as f32);
                        if fused {
                            (x.mul_add(y, z) as f64, (-x).mul_add(y, z) as f64)
                        } else {
                            ((x * y + z) as f64, (z - x * y) as f64)
                        }
                    } else if fused {
                        (a[i].mul_add(b[i], c[i]), (-a[i]).mul_add(b[i], c[i]))
                    } else {
                        (a[i] * b[i] + c[i], c[i] - a[i] * b[i])
                    };
                    let at = format!("{dtype} n={n} {math:?} element {i}");
                    assert_eq!(sum[i].to_bits(), want_sum.to_bits(), "a*b + c, {at}");
                    assert_eq!(diff[i].to_bits(), want_diff.to_bits(), "c - a*b, {at}");
                }
            }
        }
    }
}
