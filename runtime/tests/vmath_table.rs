//! Accuracy table of the Fast-mode inline transcendentals (`codegen`'s `vmath`):
//! each function, compiled as a one-op float32 and float64 kernel in
//! `MathMode::Fast`, against `f64` libm over its whole range (a dense sweep of bit
//! patterns, a linear sweep of the interesting interval, and special values). Prints
//! the max ulp per function and asserts a bound; special values (NaN, ±inf, ±0,
//! overflow and underflow) must match the reference exactly.

#[path = "support/jit.rs"]
mod jit;

use jit::Kb;
use lazyfuse_codegen::cpu::CpuModule;
use lazyfuse_ir::kernel::{Expr, ExprId, MathMode, Stage, STATUS_SLOTS};
use lazyfuse_ir::{DType, UnaryOp, UnaryParamOp};
use lazyfuse_runtime::jit_symbols::lookup;

/// Runs `op` on `xs` (as `dtype`, f32 or f64) in a Fast-mode kernel; results as f64.
fn run_fast(op: UnaryOp, dtype: DType, xs: &[f64]) -> Vec<f64> {
    run_fast_expr(|x| Expr::Unary { op, x }, dtype, xs)
}

/// Runs the one-operand expression `f(x)` on `xs` in a Fast-mode kernel.
fn run_fast_expr(f: impl Fn(ExprId) -> Expr, dtype: DType, xs: &[f64]) -> Vec<f64> {
    let n = xs.len();
    let mut kb = Kb::new(&[n], 1);
    let a = kb.param(dtype, n, false);
    let o = kb.param(dtype, n, true);
    let x = kb.load(a, 0, &[1], Stage::Outer(0));
    let y = kb.push(f(x), dtype, Stage::Outer(0));
    kb.store(o, 0, &[1], y);
    let k = kb.k;
    k.verify().expect("a valid kernel");
    let m = CpuModule::compile_with(&[&k], &lookup, MathMode::Fast).expect("compiles");
    let mut inp: Vec<u8> = Vec::new();
    for &v in xs {
        if dtype == DType::F32 {
            inp.extend((v as f32).to_le_bytes());
        } else {
            inp.extend(v.to_le_bytes());
        }
    }
    let mut out = vec![0u8; inp.len()];
    let mut ptrs = [inp.as_mut_ptr(), out.as_mut_ptr()];
    let mut status = [0u64; STATUS_SLOTS];
    // SAFETY: both params point at buffers of exactly `n` elements of `dtype`, the
    // status block has STATUS_SLOTS words, `0..n` are the kernel's points and `m`
    // outlives the call.
    unsafe {
        m.entry(0)(
            ptrs.as_mut_ptr() as *const *mut u8,
            status.as_mut_ptr(),
            0,
            n as u64,
        )
    };
    let w = dtype.size_in_bytes();
    out.chunks(w)
        .map(|c| {
            if dtype == DType::F32 {
                f64::from(f32::from_le_bytes(c.try_into().expect("4 bytes")))
            } else {
                f64::from_le_bytes(c.try_into().expect("8 bytes"))
            }
        })
        .collect()
}

/// The f64 reference of `op` (the interpreter's formulas for the activations; for
/// float32, `f32` rounds each step as the interpreter's float32 arithmetic does, so
/// `exp` overflowing gives what it gives there).
fn reference(op: UnaryOp, x: f64, f32: bool) -> f64 {
    use UnaryOp::*;
    let r = |v: f64| if f32 { f64::from(v as f32) } else { v };
    match op {
        Sigmoid => 1.0 / (1.0 + r(libm::exp(-x))),
        Silu => x / (1.0 + r(libm::exp(-x))),
        Mish => x * r(libm::tanh(r(libm::log1p(r(libm::exp(x)))))),
        Exp => libm::exp(x),
        Exp2 => libm::exp2(x),
        Expm1 => libm::expm1(x),
        Log => libm::log(x),
        Log2 => libm::log2(x),
        Log10 => libm::log10(x),
        Log1p => libm::log1p(x),
        Tanh => libm::tanh(x),
        Erf => libm::erf(x),
        _ => unreachable!(),
    }
}

/// The spacing of `dtype` values at `r` (the smallest subnormal at 0).
fn ulp(dtype: DType, r: f64) -> f64 {
    let a = r.abs();
    if dtype == DType::F32 {
        let a = a as f32;
        let e = if a < f32::MIN_POSITIVE {
            -149
        } else {
            ((a.to_bits() >> 23) as i32) - 127 - 23
        };
        (e as f64).exp2()
    } else {
        let e = if a < f64::MIN_POSITIVE {
            -1074
        } else {
            ((a.to_bits() >> 52) as i32) - 1023 - 52
        };
        (e as f64).exp2()
    }
}

/// Inputs: every 61st f32 bit pattern (or 3M pseudo-random f64 patterns), a linear
/// sweep of [-lim, lim] and the special values.
fn inputs(dtype: DType, lim: f64) -> Vec<f64> {
    let mut xs = Vec::new();
    if dtype == DType::F32 {
        let mut b: u64 = 0;
        while b < 1u64 << 32 {
            xs.push(f64::from(f32::from_bits(b as u32)));
            b += 61 * 17;
        }
    } else {
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..1_000_000 {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            xs.push(f64::from_bits(s));
            // and one with a moderate exponent (|x| within about 2^±40)
            let e = ((s >> 52) % 80) + 1023 - 40;
            xs.push(f64::from_bits((s & !(0x7ffu64 << 52)) | (e << 52)));
        }
    }
    let n = 400_000;
    for i in 0..=n {
        xs.push(-lim + 2.0 * lim * i as f64 / n as f64);
    }
    let sub = if dtype == DType::F32 {
        f64::from(f32::from_bits(1))
    } else {
        f64::from_bits(1)
    };
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        sub,
        -sub,
        1e-30,
        -1e-30,
        1.0,
        -1.0,
        88.7,
        88.73,
        89.0,
        -87.3,
        -103.9,
        -104.0,
        709.7,
        709.8,
        -745.1,
        -745.2,
        1e30,
        -1e30,
        f64::from(f32::MAX),
        f64::MAX,
        -f64::MAX,
        f64::from(f32::MIN_POSITIVE),
        f64::MIN_POSITIVE,
    ];
    xs.extend(specials);
    xs.extend(specials.iter().map(|s| -s));
    xs
}

#[test]
fn vmath_accuracy_table() {
    use UnaryOp::*;
    let ops = [
        (Exp, 100.0),
        (Exp2, 160.0),
        (Expm1, 50.0),
        (Log, 10.0),
        (Log2, 10.0),
        (Log10, 10.0),
        (Log1p, 10.0),
        (Tanh, 12.0),
        (Sigmoid, 50.0),
        (Silu, 50.0),
        (Mish, 50.0),
        (Erf, 6.0),
    ];
    let mut failures = Vec::new();
    for dtype in [DType::F32, DType::F64] {
        for &(op, lim) in &ops {
            let xs = inputs(dtype, lim);
            let got = run_fast(op, dtype, &xs);
            let (mut worst, mut at) = (0.0f64, 0.0f64);
            for (&x, &g) in xs.iter().zip(&got) {
                let x = if dtype == DType::F32 {
                    f64::from(x as f32)
                } else {
                    x
                };
                let r = reference(op, x, dtype == DType::F32);
                let r = if dtype == DType::F32 {
                    f64::from(r as f32)
                } else {
                    r
                };
                if r.is_nan() || g.is_nan() || r.is_infinite() || g.is_infinite() || r == 0.0 {
                    let same = (r.is_nan() && g.is_nan())
                        || (r == g && r.is_sign_negative() == g.is_sign_negative());
                    // a zero reference may be approached by a subnormal (ulp check)
                    if !(same || (r == 0.0 && g.is_finite())) {
                        failures.push(format!("{op:?} {dtype}: f({x:e}) = {g:e}, want {r:e}"));
                        continue;
                    }
                    if r != 0.0 || same {
                        continue;
                    }
                }
                if op == Mish && dtype == DType::F32 && x < -87.3 {
                    // e^x is subnormal in float32 (the interpreter's too): its
                    // quantum, times |x|, bounds the error.
                    if (g - r).abs() > x.abs() * 2f64.powi(-147) {
                        failures.push(format!("{op:?} {dtype}: f({x:e}) = {g:e}, want {r:e}"));
                    }
                    continue;
                }
                let e = (g - r).abs() / ulp(dtype, r);
                if e > worst {
                    worst = e;
                    at = x;
                }
            }
            // mish composes three approximations (as the interpreter composes
            // three roundings); the rest are single functions.
            let bound = match (op, dtype) {
                (Mish, _) => 8.0,
                // the rational float32 tanh (5 ulp measured exhaustively, FACTS.md)
                (Tanh, DType::F32) => 5.0,
                (_, DType::F32) => 4.0,
                _ => 6.0,
            };
            println!("{op:?} {dtype}: max {worst:.2} ulp (at {at:e})");
            if worst > bound {
                failures.push(format!("{op:?} {dtype}: {worst:.2} ulp at {at:e}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(40)].join("\n")
    );
}

/// The float32 exact GELU (`x · ½ · (1 + erf(x · √½))` on the vector `erf`)
/// against the same formula in f64 libm: within the conformance tolerance of
/// float32 (`|Δ| ≤ 1e-6 + 1e-5 |r|`) everywhere, `1 + erf` cancelling for
/// x < -2 included; special values exactly.
#[test]
fn vector_gelu_within_tolerance() {
    let op = UnaryParamOp::Gelu { tanh: false };
    let xs = inputs(DType::F32, 12.0);
    let got = run_fast_expr(|x| Expr::UnaryParam { op, x }, DType::F32, &xs);
    let mut bad = Vec::new();
    for (&x, &g) in xs.iter().zip(&got) {
        let x = f64::from(x as f32);
        let r =
            f64::from((x * 0.5 * (1.0 + libm::erf(x * std::f64::consts::FRAC_1_SQRT_2))) as f32);
        let ok = if r.is_nan() || r.is_infinite() {
            (r.is_nan() && g.is_nan()) || r == g
        } else {
            (g - r).abs() <= 1e-6 + 1e-5 * r.abs()
        };
        if !ok {
            bad.push(format!("gelu({x:e}) = {g:e}, want {r:e}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad[..bad.len().min(20)].join("\n"));
}

/// The tanh form of GELU (`½ x (1 + tanh(β (x + 0.044715 x³)))`, computed by
/// `vmath` as `x / (1 + e^(-2u))`) in float32 and float64 against the
/// interpreter's formula in f64 libm: within the conformance tolerance of the
/// dtype everywhere, the region where `1 + tanh` cancels (x < -2) included;
/// special values exactly (`-inf` gives NaN, as `-inf · 0` does).
#[test]
fn vector_gelu_tanh_within_tolerance() {
    let op = UnaryParamOp::Gelu { tanh: true };
    for (dtype, rtol, atol) in [(DType::F32, 1e-5, 1e-6), (DType::F64, 1e-10, 1e-12)] {
        let xs = inputs(dtype, 12.0);
        let got = run_fast_expr(|x| Expr::UnaryParam { op, x }, dtype, &xs);
        let mut bad = Vec::new();
        for (&x, &g) in xs.iter().zip(&got) {
            let x = if dtype == DType::F32 {
                f64::from(x as f32)
            } else {
                x
            };
            let beta = std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5;
            let r = 0.5 * x * (1.0 + libm::tanh(beta * (x + 0.044715 * (x * x * x))));
            let r = if dtype == DType::F32 {
                f64::from(r as f32)
            } else {
                r
            };
            let ok = if r.is_nan() || r.is_infinite() {
                (r.is_nan() && g.is_nan()) || r == g
            } else {
                (g - r).abs() <= atol + rtol * r.abs()
            };
            if !ok {
                bad.push(format!("{dtype} gelu_tanh({x:e}) = {g:e}, want {r:e}"));
            }
        }
        assert!(bad.is_empty(), "{}", bad[..bad.len().min(20)].join("\n"));
    }
}
