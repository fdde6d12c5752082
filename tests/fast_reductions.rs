//! Reductions and row kernels in fast math against the reference interpreter, with
//! tolerances: fast math reorders float sums (several vector accumulators), so its
//! values may differ from the interpreter's sequential order in the last bits, but
//! integers stay exact, NaN and infinities propagate, and empty reductions give the
//! identity. Lengths sit around the vector width and the accumulator count (the
//! vector loop does multiples of 16 positions, the scalar loop the rest). Exact
//! mode's bit-identity is `tests/jit_differential.rs`'s.
//!
//! The backend and math mode are process-wide: every test holds `MODE`.

use lazyfuse::{CpuBackend, DType, MathMode, Tensor};
use std::sync::Mutex;

static MODE: Mutex<()> = Mutex::new(());

const LENGTHS: [usize; 11] = [0, 1, 3, 4, 15, 16, 17, 33, 64, 1000, 4099];

/// Deterministic values in [-2, 2), with NaN/inf at `special` positions.
fn data(n: usize, seed: u64, special: &[(usize, f64)]) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut v: Vec<f64> = (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) as f64 / (1u64 << 31) as f64) * 4.0 - 2.0
        })
        .collect();
    for &(i, x) in special {
        if i < n {
            v[i] = x;
        }
    }
    v
}

fn tensor(v: &[f64], shape: &[usize], dt: DType) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape)
        .unwrap()
        .to_dtype(dt)
        .unwrap()
}

/// The values of `f(x)` on the interpreter and on the JIT in fast math, as f64.
fn both(f: &dyn Fn() -> Tensor) -> (Vec<f64>, Vec<f64>, DType) {
    lazyfuse::set_math_mode(MathMode::Fast);
    lazyfuse::set_cpu_backend(CpuBackend::Interp);
    let want = f();
    let dt = want.dtype();
    let want = want.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    let got = f().to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
    (want, got, dt)
}

/// Asserts `f` agrees: exactly for integer and bool results, within `rtol` (of
/// the value, or of `scale` for values near zero) for floats; NaN where NaN.
fn check(what: &str, rtol: f64, scale: f64, f: &dyn Fn() -> Tensor) {
    let (want, got, dt) = both(f);
    assert_eq!(want.len(), got.len(), "{what}: lengths");
    for (i, (a, b)) in want.iter().zip(&got).enumerate() {
        let ok = if !dt.is_floating_point() {
            a == b
        } else if a.is_nan() || b.is_nan() {
            a.is_nan() && b.is_nan()
        } else if a.is_infinite() || b.is_infinite() {
            a == b
        } else {
            (a - b).abs() <= rtol * (a.abs() + scale)
        };
        assert!(ok, "{what} [{i}] on {dt}: interpreter {a}, fast JIT {b}");
    }
}

fn rtol(dt: DType) -> f64 {
    match dt {
        DType::F16 => 2e-3,
        DType::BF16 => 1e-2,
        DType::F32 => 2e-6,
        _ => 1e-12,
    }
}

const FLOATS: [DType; 4] = [DType::F32, DType::F64, DType::F16, DType::BF16];

#[test]
fn float_reductions_over_rows_and_the_whole_tensor() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    for &n in &LENGTHS {
        let v = data(3 * n, n as u64, &[]);
        for dt in FLOATS {
            let t = || tensor(&v, &[3, n], dt);
            let (r, s) = (rtol(dt), n as f64);
            let w = format!("n={n} {dt}");
            check(&format!("sum rows {w}"), r, s, &|| {
                t().sum(&[1], false).unwrap()
            });
            check(&format!("sum all {w}"), r, 3.0 * s, &|| {
                t().sum(&[], false).unwrap()
            });
            check(&format!("sum keepdim {w}"), r, s, &|| {
                t().sum(&[-1], true).unwrap()
            });
            check(&format!("mean {w}"), r, 1.0, &|| {
                t().mean(&[1], false).unwrap()
            });
            if n > 0 {
                check(&format!("amax {w}"), 0.0, 0.0, &|| {
                    t().amax(&[1], false).unwrap()
                });
                check(&format!("amin {w}"), 0.0, 0.0, &|| {
                    t().amin(&[1], true).unwrap()
                });
                check(&format!("argmax {w}"), 0.0, 0.0, &|| {
                    t().argmax(Some(1), false).unwrap()
                });
                check(&format!("softmax {w}"), r, 1e-6, &|| {
                    t().softmax(1).unwrap()
                });
                check(&format!("log_softmax {w}"), r, 1.0, &|| {
                    t().log_softmax(1).unwrap()
                });
            }
            check(&format!("var {w}"), r * 10.0, 1.0, &|| {
                t().var(&[1], 1, false).unwrap()
            });
            check(&format!("std {w}"), r * 10.0, 1.0, &|| {
                t().std(&[1], 0, false).unwrap()
            });
            check(&format!("logsumexp {w}"), r, 1.0, &|| {
                t().logsumexp(&[1], false).unwrap()
            });
            check(&format!("norm {w}"), r, 1.0, &|| {
                t().norm(2.0, &[1], false).unwrap()
            });
            // products of values near 1 stay finite
            check(&format!("prod {w}"), r * 10.0, 0.0, &|| {
                t().mul(0.01)
                    .unwrap()
                    .add(1.0)
                    .unwrap()
                    .prod(&[1], false)
                    .unwrap()
            });
            // a fused prologue: (x*x + x) summed
            check(&format!("fused sum {w}"), r, 3.0 * s, &|| {
                let x = t();
                x.mul(&x)
                    .unwrap()
                    .add(&x)
                    .unwrap()
                    .sum(&[1], false)
                    .unwrap()
            });
        }
    }
}

#[test]
fn columns_and_non_contiguous_inputs() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    for &n in &LENGTHS {
        let v = data(5 * n, 7 + n as u64, &[]);
        for dt in FLOATS {
            let (r, s) = (rtol(dt), n as f64);
            let w = format!("n={n} {dt}");
            // columns: reduce the strided dim (37 columns: two blocks of 16 and
            // a scalar tail of 5)
            check(&format!("column sums {w}"), r, s, &|| {
                tensor(&v, &[n, 5], dt).sum(&[0], false).unwrap()
            });
            let wide = data(37 * n, 11 + n as u64, &[(n / 2 * 37 + 3, f64::NAN)]);
            check(&format!("wide column sums {w}"), r, s, &|| {
                tensor(&wide, &[n, 37], dt).sum(&[0], false).unwrap()
            });
            check(&format!("wide column mean {w}"), r, 1.0, &|| {
                tensor(&wide, &[n, 37], dt).mean(&[0], true).unwrap()
            });
            check(&format!("wide column var {w}"), r * 10.0, 1.0, &|| {
                tensor(&wide, &[n, 37], dt).var(&[0], 1, false).unwrap()
            });
            if n > 0 {
                check(&format!("wide column amin {w}"), 0.0, 0.0, &|| {
                    tensor(&wide, &[n, 37], dt).amin(&[0], false).unwrap()
                });
                check(&format!("wide column softmax {w}"), r, 1e-6, &|| {
                    tensor(&wide, &[n, 37], dt).softmax(0).unwrap()
                });
            }
            if n > 0 {
                check(&format!("column max {w}"), 0.0, 0.0, &|| {
                    tensor(&v, &[n, 5], dt).amax(&[0], true).unwrap()
                });
            }
            // rows of a transposed view (strided along the reduced dim); with
            // n = 0 a kernel once hoisted a load of the empty buffer out of its
            // never-running reduction loop (now an extern step, and the kernel
            // verifier checks outer loads over the parallel space alone)
            check(&format!("transposed rows {w}"), r, s, &|| {
                tensor(&v, &[n, 5], dt)
                    .t()
                    .unwrap()
                    .sum(&[1], false)
                    .unwrap()
            });
            // every other element of a row
            if n > 0 {
                check(&format!("strided slice {w}"), r, s, &|| {
                    tensor(&v, &[5, n], dt)
                        .transpose(0, 1)
                        .unwrap()
                        .softmax(0)
                        .unwrap()
                });
            }
        }
    }
}

/// Column reductions wider than a chunk (1024 points) and a tail of blocks and
/// single points: 1024 + 2·16 + 5 columns.
#[test]
fn chunked_column_reductions() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    // widths: two of the widest chunk and a tail (one thread range, or one per
    // thread, each a widest chunk and what follows); past the middle chunk; past
    // the narrow one only; 2048 columns, one range per thread of 1024 on two
    // threads (341 on six: narrow chunks, then blocks of 16, then single columns)
    for (w, n) in [2 * 4096usize + 37, 1024 + 37, 256 + 37, 2048]
        .into_iter()
        .flat_map(|w| [0usize, 1, 17, 100].map(|n| (w, n)))
    {
        let v = data(
            w * n,
            5 + n as u64,
            &[(w + w - 31, f64::NAN), (3, f64::INFINITY)],
        );
        for dt in FLOATS {
            let (r, s) = (rtol(dt), n as f64);
            let t = || tensor(&v, &[n, w], dt);
            check(&format!("chunk sums [{n},{w}] {dt}"), r, s, &|| {
                t().sum(&[0], false).unwrap()
            });
            check(&format!("chunk mean [{n},{w}] {dt}"), r, 1.0, &|| {
                t().mean(&[0], true).unwrap()
            });
            check(&format!("chunk fused [{n},{w}] {dt}"), r, s, &|| {
                let x = t();
                x.mul(&x).unwrap().sum(&[0], false).unwrap()
            });
            if n > 0 {
                check(&format!("chunk amax [{n},{w}] {dt}"), 0.0, 0.0, &|| {
                    t().amax(&[0], false).unwrap()
                });
            }
        }
    }
}

#[test]
fn nan_and_infinities_propagate() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    for &n in &[16usize, 17, 33, 1000] {
        for (name, special) in [
            ("nan first", vec![(0, f64::NAN)]),
            ("nan in the vector part", vec![(9, f64::NAN)]),
            ("nan in the tail", vec![(n - 1, f64::NAN)]),
            ("+inf", vec![(5, f64::INFINITY)]),
            ("-inf", vec![(n - 2, f64::NEG_INFINITY)]),
            (
                "both infs",
                vec![(3, f64::INFINITY), (12, f64::NEG_INFINITY)],
            ),
        ] {
            let v = data(2 * n, n as u64, &special);
            for dt in FLOATS {
                let t = || tensor(&v, &[2, n], dt);
                let r = rtol(dt);
                let w = format!("{name} n={n} {dt}");
                check(&format!("sum {w}"), r, n as f64, &|| {
                    t().sum(&[1], false).unwrap()
                });
                check(&format!("amax {w}"), 0.0, 0.0, &|| {
                    t().amax(&[1], false).unwrap()
                });
                check(&format!("amin {w}"), 0.0, 0.0, &|| {
                    t().amin(&[1], false).unwrap()
                });
                check(&format!("softmax {w}"), r, 1e-6, &|| {
                    t().softmax(1).unwrap()
                });
                check(&format!("logsumexp {w}"), r, 1.0, &|| {
                    t().logsumexp(&[1], false).unwrap()
                });
                check(&format!("log_softmax {w}"), r, 1.0, &|| {
                    t().log_softmax(1).unwrap()
                });
            }
        }
    }
}

/// Fast softmax/log_softmax of float32/float16/bfloat16 compute in float32 (one
/// reciprocal per row): rows of -inf only (NaN, as PyTorch), rows with one
/// finite value among -inf, rows of large magnitude (the max subtraction keeps
/// exp finite) and long rows (float32 sums of exps), against the interpreter.
#[test]
fn softmax_rows_in_fast_math() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    // (16400 float32 or float64 exceed the 64 KiB of rows a kernel keeps between
    // its phases, so those rows compute exp twice; shorter ones read it back)
    for &n in &[1usize, 4, 15, 16, 17, 64, 4099, 16400] {
        let ninf = f64::NEG_INFINITY;
        let mut v = data(4 * n, 7 + n as u64, &[]);
        // row 0: all -inf; row 1: -inf but one; row 2: large values
        for x in &mut v[..n] {
            *x = ninf;
        }
        for (i, x) in v[n..2 * n].iter_mut().enumerate() {
            if i != n / 2 {
                *x = ninf;
            }
        }
        for x in &mut v[2 * n..3 * n] {
            *x *= 3.0e4;
        }
        for dt in FLOATS {
            let t = || tensor(&v, &[4, n], dt);
            let r = rtol(dt);
            let w = format!("n={n} {dt}");
            check(&format!("softmax {w}"), r, 1e-6, &|| {
                t().softmax(1).unwrap()
            });
            check(&format!("log_softmax {w}"), r, 1.0, &|| {
                t().log_softmax(1).unwrap()
            });
            check(&format!("softmax of a column {w}"), r, 1e-6, &|| {
                t().softmax(0).unwrap()
            });
            // a prologue with its own exp (kept from the max phase for the sum
            // phase) and an epilogue after the kept exp; its rows of many equal
            // terms (row 1: exp(-1) but one) show the float32 lanes' sequential
            // sums at their worst, an error growing with n/16 terms per lane
            let tol = r * 4.0 * (1.0 + n as f64 / 1024.0);
            check(&format!("fused softmax {w}"), tol, 1e-6, &|| {
                let x = t().mul(0.001).unwrap().exp().unwrap();
                let y = x.softmax(1).unwrap();
                y.mul(2.0).unwrap().add(&x).unwrap()
            });
        }
    }
}

#[test]
fn integer_reductions_stay_exact() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    for &n in &LENGTHS {
        let v: Vec<f64> = data(3 * n, n as u64, &[])
            .iter()
            .map(|x| (x * 1000.0).round())
            .collect();
        for dt in [DType::I32, DType::I64, DType::I16, DType::U8, DType::Bool] {
            let t = || tensor(&v, &[3, n], dt);
            let w = format!("n={n} {dt}");
            check(&format!("int sum {w}"), 0.0, 0.0, &|| {
                t().sum(&[1], false).unwrap()
            });
            check(&format!("int sum all {w}"), 0.0, 0.0, &|| {
                t().sum(&[], false).unwrap()
            });
            check(&format!("int column sum {w}"), 0.0, 0.0, &|| {
                t().sum(&[0], true).unwrap()
            });
            if n > 0 {
                check(&format!("int amax {w}"), 0.0, 0.0, &|| {
                    t().amax(&[1], false).unwrap()
                });
            }
            if n > 0 && dt != DType::Bool {
                check(&format!("int argmin {w}"), 0.0, 0.0, &|| {
                    t().argmin(Some(1), false).unwrap()
                });
            }
        }
    }
}

/// Exact mode gives the interpreter's bits for float reductions: column sums (the
/// scalar order in each lane, but not for compensated sums, which stay scalar), row
/// sums and whole-tensor sums, means and variances, all compensated as the
/// interpreter's (Neumaier). The data has full mantissas (thirds), so an
/// uncompensated sum would differ in the last bits.
#[test]
fn exact_reductions_are_bit_identical() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    for (&n, w) in [0usize, 1, 17, 1000, 19].iter().zip([37, 37, 37, 37, 1061]) {
        let v: Vec<f64> = data(w * n, 3 + n as u64, &[(5, f64::INFINITY)])
            .iter()
            .map(|x| x / 3.0)
            .collect();
        for dt in [DType::F32, DType::F64] {
            let t = || tensor(&v, &[n, w], dt);
            let col_sums = || t().sum(&[0], false).unwrap();
            let col_means = || t().mean(&[0], true).unwrap();
            let col_vars = || t().var(&[0], 1, false).unwrap();
            let row_sums = || t().sum(&[1], false).unwrap();
            let row_vars = || t().var(&[1], 1, false).unwrap();
            let total = || t().sum(&[0, 1], false).unwrap();
            let fs: [&dyn Fn() -> Tensor; 6] = [
                &col_sums, &col_means, &col_vars, &row_sums, &row_vars, &total,
            ];
            for (k, f) in fs.into_iter().enumerate() {
                lazyfuse::set_math_mode(MathMode::Exact);
                lazyfuse::set_cpu_backend(CpuBackend::Interp);
                let want = f().to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
                lazyfuse::set_cpu_backend(CpuBackend::Jit);
                let got = f().to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
                lazyfuse::set_math_mode(MathMode::Fast);
                let bits = |x: &[f64]| x.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&want), bits(&got), "case {k} n={n} w={w} {dt}");
            }
        }
    }
}

/// Fast math sums a product with one `fma` per step (`acc + a*b`: a dot, a
/// layernorm's variance) where the host has FMA; values stay within the
/// tolerance of the interpreter's.
#[test]
fn sums_of_products_take_fma_in_fast_math() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    let (rows, cols) = (5usize, 1029usize);
    let a = data(rows * cols, 7, &[]);
    let b = data(rows * cols, 8, &[]);
    for dt in [DType::F32, DType::F64] {
        let f = || {
            let x = tensor(&a, &[rows, cols], dt).realize().unwrap();
            let y = tensor(&b, &[rows, cols], dt).realize().unwrap();
            x.mul(&y).unwrap().sum(&[1], false).unwrap()
        };
        check(&format!("sum(a*b) {dt}"), rtol(dt) * 4.0, 1.0, &|| {
            f().realize().unwrap()
        });
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("fma") {
            let clif = f().clif_text().unwrap();
            assert!(clif.contains(" fma "), "{dt}: no fma in\n{clif}");
        }
    }
    lazyfuse::set_math_mode(MathMode::Fast);
}

/// A long reduction with few outputs is split for the CPU's threads (partials over
/// equal chunks, then their reduction): in fast math float sums and means, in
/// either mode the order-free ones (integer sums, max, min); exact float sums stay
/// one kernel with the interpreter's bits. Values match the interpreter's, and an
/// extent without a divisor into chunks of 16K is left whole.
#[test]
fn long_reductions_split_for_the_threads() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    // 98,311 has no divisor up to 64 that leaves chunks of 16K: no split.
    for (n, split) in [(1usize << 17, true), (1 << 20, true), (98_311, false)] {
        let v = data(n, n as u64, &[]);
        let kernels = |want: usize, what: &str, y: Tensor| {
            lazyfuse::set_cpu_backend(CpuBackend::Jit);
            assert_eq!(y.kernel_count().unwrap(), want, "{what} n={n}");
        };
        let k = if split { 2 } else { 1 };
        for dt in [DType::F32, DType::F64] {
            let t = || tensor(&v, &[n], dt);
            let scale = n as f64 * 2.0;
            check(&format!("sum n={n} {dt}"), rtol(dt), scale, &|| {
                t().sum(&[], false).unwrap()
            });
            check(&format!("mean n={n} {dt}"), rtol(dt), 2.0, &|| {
                t().mean(&[0], false).unwrap()
            });
            check(
                &format!("sum of squares n={n} {dt}"),
                rtol(dt),
                scale,
                &|| t().mul(&t()).unwrap().sum(&[0], false).unwrap(),
            );
            lazyfuse::set_math_mode(MathMode::Fast);
            kernels(k, "fast sum", t().sum(&[], false).unwrap());
            kernels(k, "fast mean", t().mean(&[0], false).unwrap());
            // Eight rows: 8 outputs × 8 partials.
            let rows = || tensor(&v[..n / 8 * 8], &[8, n / 8], dt);
            check(&format!("row sums n={n} {dt}"), rtol(dt), scale, &|| {
                rows().sum(&[1], false).unwrap()
            });
            lazyfuse::set_math_mode(MathMode::Exact);
            kernels(1, "exact sum", t().sum(&[], false).unwrap());
            lazyfuse::set_cpu_backend(CpuBackend::Interp);
            let total = || t().sum(&[], false).unwrap().to_dtype(DType::F64).unwrap();
            let want = total().to_vec::<f64>();
            lazyfuse::set_cpu_backend(CpuBackend::Jit);
            let got = total().to_vec::<f64>();
            let bits = |x: Vec<f64>| x.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(want.unwrap()),
                bits(got.unwrap()),
                "exact sum n={n} {dt}"
            );
            lazyfuse::set_math_mode(MathMode::Fast);
        }
        let ints: Vec<f64> = v.iter().map(|x| (x * 1000.0).round()).collect();
        let t = || tensor(&ints, &[n], DType::I32);
        for mode in [MathMode::Fast, MathMode::Exact] {
            lazyfuse::set_math_mode(mode);
            kernels(k, "int sum", t().sum(&[], false).unwrap());
            kernels(k, "int amax", t().amax(&[0], false).unwrap());
        }
        lazyfuse::set_math_mode(MathMode::Fast);
        check(&format!("int sum n={n}"), 0.0, 0.0, &|| {
            t().sum(&[], false).unwrap()
        });
        check(&format!("int amin n={n}"), 0.0, 0.0, &|| {
            t().amin(&[0], false).unwrap()
        });
        let nan = data(n, 7, &[(n - 3, f64::NAN), (n / 2, f64::INFINITY)]);
        check(&format!("amax with NaN n={n}"), 0.0, 0.0, &|| {
            tensor(&nan, &[n], DType::F32).amax(&[0], false).unwrap()
        });
        check(&format!("sum with inf n={n}"), 0.0, 0.0, &|| {
            tensor(&nan[..n - 4], &[n - 4], DType::F32)
                .sum(&[], false)
                .unwrap()
        });
    }
}
