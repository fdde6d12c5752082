//! Reduction runs (fast math): a reduction phase whose only work is one max,
//! min or sum of a contiguous row (or the sum of that row widened to float64,
//! of its squared deviations from an outer value, or of its exps) calls a precompiled
//! wide-vector routine over the row, from rows of [`MIN_ROUTINE_ROW`] points
//! (a sum of exps from 16). The routine must give the bits of the
//! kernel's own vector loop: every test computes the same reduction once with
//! the run and once over `x * 1` (which keeps the loop: the phase then reads
//! two rows and multiplies), on the same values, and compares them bit for bit.

use lazyfuse::{MathMode, Tensor};

/// Shortest row a reduction or affine run takes its routine for
/// (`lazyfuse_codegen`'s `MIN_ROUTINE_ROW`): shorter rows keep the kernel's own
/// loop, which runs them faster.
const MIN_ROUTINE_ROW: usize = 256;

/// Rows with mixed magnitudes; the second holds a NaN, the third an infinity,
/// the first and third signed zeros.
fn rows(rows: usize, cols: usize) -> Vec<f32> {
    let mut xs: Vec<f32> = (0..rows * cols)
        .map(|i| (i as f32 * 0.731).sin() * [1.0, 1e3, 1e-3][i % 3] + (i % 7) as f32 * 0.25)
        .collect();
    xs[cols + cols / 2] = f32::NAN;
    xs[2 * cols + 1] = f32::INFINITY;
    xs[3 * cols - 1] = -0.0;
    xs[3] = -0.0;
    xs[4] = 0.0;
    xs
}

fn bits(t: &Tensor) -> Vec<u64> {
    t.contiguous()
        .unwrap()
        .to_vec::<f64>()
        .unwrap()
        .iter()
        .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
        .collect()
}

type Reduction = fn(&Tensor) -> Tensor;

/// The reductions (float32 and float64 inputs alike), each with the routine
/// its run calls on float32 rows.
const REDUCTIONS: [(&str, Reduction); 10] = [
    ("lf_reduce_max_", |x| x.amax(&[1], true).unwrap()),
    ("lf_reduce_min_", |x| x.amin(&[1], false).unwrap()),
    ("lf_reduce_sum_", |x| x.sum(&[1], true).unwrap()),
    ("lf_reduce_sum_", |x| x.mean(&[1], true).unwrap()),
    ("lf_reduce_sumsq_", |x| x.var(&[1], 0, true).unwrap()),
    ("lf_reduce_sumsq_", |x| {
        // a layer norm's statistics and output, as W5 writes it
        let mean = x.mean(&[1], true).unwrap();
        let std = x
            .var(&[1], 0, true)
            .unwrap()
            .add(1e-5)
            .unwrap()
            .sqrt()
            .unwrap();
        x.sub(&mean).unwrap().div(&std).unwrap()
    }),
    // a log-softmax's sum of exps (nothing stores them), and plain ones
    ("lf_reduce_sumexp_", |x| x.log_softmax(1).unwrap()),
    ("lf_reduce_sumexp_", |x| {
        x.exp().unwrap().sum(&[1], true).unwrap()
    }),
    ("lf_reduce_sumexp_", |x| x.logsumexp(&[1], false).unwrap()),
    ("lf_reduce_sumsq_", |x| {
        // nn's layer norm: its variance squares in the input's dtype, then widens
        let c = x.shape()[1];
        lazyfuse::nn::functional::layer_norm(x, &[c], None, None, 1e-5).unwrap()
    }),
];

#[test]
fn reduction_runs_give_the_vector_loops_bits() {
    lazyfuse::set_math_mode(MathMode::Fast);
    for cols in [16, 17, 40, 256, 257, 296, 1000, 4099] {
        for f64_rows in [false, true] {
            let x = Tensor::from_vec(rows(8, cols), &[8, cols]).unwrap();
            let x = if f64_rows {
                x.to_dtype(lazyfuse::DType::F64).unwrap().realize().unwrap()
            } else {
                x
            };
            let ones = Tensor::from_vec(vec![1.0f32; 8 * cols], &[8, cols]).unwrap();
            let ones = ones.to_dtype(x.dtype()).unwrap().realize().unwrap();
            for (i, (routine, f)) in REDUCTIONS.iter().enumerate() {
                let run = f(&x);
                let clif = run.clif_text().unwrap();
                // (rows shorter than the routines' least keep the loop, but
                // for a sum of exps)
                let long = cols >= MIN_ROUTINE_ROW || *routine == "lf_reduce_sumexp_";
                assert_eq!(
                    clif.contains(routine),
                    long,
                    "reduction {i} [8,{cols}] f64 {f64_rows}: {routine}"
                );
                let inline = f(&x.mul(&ones).unwrap());
                assert!(!inline.clif_text().unwrap().contains("lf_reduce_"));
                // (realized in their own dtype first: a cast fused into the
                // kernel would change its last phase)
                let (run, inline) = (run.realize().unwrap(), inline.realize().unwrap());
                assert_eq!(
                    bits(&run.to_dtype(lazyfuse::DType::F64).unwrap()),
                    bits(&inline.to_dtype(lazyfuse::DType::F64).unwrap()),
                    "reduction {i} [8,{cols}] f64 {f64_rows}"
                );
            }
        }
    }
}

/// Which phases take a run: rows shorter than [`MIN_ROUTINE_ROW`] (but a sum
/// of exps, from the vector loop's step), a reduction of more than a load, two
/// reductions in a phase, and exact math take none.
#[test]
fn only_a_lone_reduction_of_a_row_takes_a_run() {
    lazyfuse::set_math_mode(MathMode::Fast);
    let x = Tensor::from_vec(rows(3, 300), &[3, 300]).unwrap();
    let amax_runs = |cols: usize| {
        let t = Tensor::from_vec(rows(3, cols), &[3, cols]).unwrap();
        let clif = t.amax(&[1], false).unwrap().clif_text().unwrap();
        clif.contains("lf_reduce_")
    };
    assert!(!amax_runs(15));
    assert!(!amax_runs(MIN_ROUTINE_ROW - 1));
    assert!(amax_runs(MIN_ROUTINE_ROW));
    let sumexp_runs = |cols: usize| {
        let t = Tensor::from_vec(rows(3, cols), &[3, cols]).unwrap();
        let clif = t.logsumexp(&[1], false).unwrap().clif_text().unwrap();
        clif.contains("lf_reduce_sumexp_")
    };
    assert!(!sumexp_runs(15));
    assert!(sumexp_runs(16));
    let tanh_sum = x.tanh().unwrap().sum(&[1], false).unwrap();
    assert!(!tanh_sum.clif_text().unwrap().contains("lf_reduce_"));
    // a column reduction reads across rows
    let cols = x.sum(&[0], false).unwrap();
    assert!(!cols.clif_text().unwrap().contains("lf_reduce_"));
}

/// A last phase that only scales a row by an outer value calls
/// `lf_row_affine_`: `x / sum(x)` and `amax(x) * x` (where each is one kernel) and
/// softmax (which scales its stored exps in place) on float32 and float64 rows,
/// against the same computed over `x * 1` (the vector loop), bit for bit.
#[test]
fn scaled_rows_give_the_vector_loops_bits() {
    lazyfuse::set_math_mode(MathMode::Fast);
    type Scaled = fn(&Tensor) -> Tensor;
    let cases: [(&str, Scaled); 3] = [
        ("lf_row_affine_", |x| {
            x.div(&x.sum(&[1], true).unwrap()).unwrap()
        }),
        ("lf_row_affine_", |x| {
            x.amax(&[1], true).unwrap().mul(x).unwrap()
        }),
        ("lf_row_affine_", |x| x.softmax(1).unwrap()),
    ];
    for cols in [16, 17, 40, 256, 257, 296, 1000, 4099] {
        for dt in [lazyfuse::DType::F32, lazyfuse::DType::F64] {
            let x = Tensor::from_vec(rows(8, cols), &[8, cols]).unwrap();
            let x = x.to_dtype(dt).unwrap().realize().unwrap();
            let ones = Tensor::from_vec(vec![1.0f32; 8 * cols], &[8, cols]).unwrap();
            let ones = ones.to_dtype(dt).unwrap().realize().unwrap();
            for (i, (routine, f)) in cases.iter().enumerate() {
                let run = f(&x);
                // (long rows of `x / sum` and `amax * x` are scheduled as two
                // kernels: the reduction, then an elementwise kernel)
                let fused = run.schedule_text().unwrap().matches("kernel ").count() == 1;
                assert_eq!(
                    run.clif_text().unwrap().contains(routine),
                    fused && cols >= MIN_ROUTINE_ROW,
                    "case {i} [8,{cols}] {dt:?}: {routine}"
                );
                assert!(fused || i != 2, "softmax [8,{cols}] {dt:?} is one kernel");
                let xo = x.mul(&ones).unwrap();
                let inline = if i == 2 {
                    // softmax's exps stored, then scaled by the vector loop
                    let e = xo.sub(&x.amax(&[1], true).unwrap()).unwrap().exp().unwrap();
                    let e = e.realize().unwrap();
                    // (times the ones first: `e * 1` is no load, so no run)
                    let r = e.sum(&[1], true).unwrap().reciprocal().unwrap();
                    e.mul(&ones).unwrap().mul(&r).unwrap()
                } else {
                    f(&xo)
                };
                assert!(!inline.clif_text().unwrap().contains("lf_row_affine_"));
                // (realized in their own dtype first: a cast fused into the
                // kernel would change its last phase)
                let f64s = |t: &Tensor| {
                    let t = t.realize().unwrap();
                    bits(&t.to_dtype(lazyfuse::DType::F64).unwrap())
                };
                assert_eq!(f64s(&run), f64s(&inline), "case {i} [8,{cols}] {dt:?}");
            }
        }
    }
}

/// A row's mean, as a layer norm's statistics.
fn mean_of(x: &Tensor) -> Tensor {
    x.mean(&[1], true).unwrap()
}

/// `sqrt(var + 1e-5)` of a row (the biased variance).
fn std_of(x: &Tensor) -> Tensor {
    x.var(&[1], 0, true)
        .unwrap()
        .add(1e-5)
        .unwrap()
        .sqrt()
        .unwrap()
}

/// The normalizations' output phases: `((x - shift) ∘ scale) · w + b` with
/// each part there or not, `∘` a multiply or divide, operands on either side,
/// as W5 and `nn`'s layer norm write them; each calls `lf_row_affine_` and
/// gives the bits of the same computed over `x * 1` (the vector loop, whose
/// products an add takes fused), on float32 and float64 rows, the largest
/// streamed.
#[test]
fn affine_rows_give_the_vector_loops_bits() {
    lazyfuse::set_math_mode(MathMode::Fast);
    type Normalized = fn(&Tensor, &Tensor, &Tensor, &Tensor) -> Tensor;
    let cases: [Normalized; 8] = [
        // W5: (x - mean) / std * w + b
        |x, x0, w, b| {
            let (mean, std) = (mean_of(x0), std_of(x0));
            x.sub(&mean)
                .unwrap()
                .div(&std)
                .unwrap()
                .mul(w)
                .unwrap()
                .add(b)
                .unwrap()
        },
        // nn's layer norm: (x - mean) * rstd * w + b
        |x, _, w, b| {
            let c = x.shape()[1];
            lazyfuse::nn::functional::layer_norm(x, &[c], Some(w), Some(b), 1e-5).unwrap()
        },
        // b + w * ((x - mean) * rstd): every operand on the other side
        |x, x0, w, b| {
            let (mean, rstd) = (mean_of(x0), std_of(x0).reciprocal().unwrap());
            b.add(&w.mul(&rstd.mul(&x.sub(&mean).unwrap()).unwrap()).unwrap())
                .unwrap()
        },
        // (x - mean) * rstd + b: the product fused into the add
        |x, x0, _, b| {
            let (mean, rstd) = (mean_of(x0), std_of(x0).reciprocal().unwrap());
            x.sub(&mean).unwrap().mul(&rstd).unwrap().add(b).unwrap()
        },
        // (x - mean) / std + b: a quotient added, not fused
        |x, x0, _, b| {
            let (mean, std) = (mean_of(x0), std_of(x0));
            x.sub(&mean).unwrap().div(&std).unwrap().add(b).unwrap()
        },
        // (x - mean) / std * w: a weight, no bias
        |x, x0, w, _| {
            let (mean, std) = (mean_of(x0), std_of(x0));
            x.sub(&mean).unwrap().div(&std).unwrap().mul(w).unwrap()
        },
        // RMS norm's shape: x * rsqrt(mean(x²)) * w, no shift
        |x, x0, w, _| {
            let ms = x0.mul(x0).unwrap().mean(&[1], true).unwrap();
            x.mul(&ms.add(1e-6).unwrap().rsqrt().unwrap())
                .unwrap()
                .mul(w)
                .unwrap()
        },
        // x / max + b
        |x, x0, _, b| {
            x.div(&x0.amax(&[1], true).unwrap())
                .unwrap()
                .add(b)
                .unwrap()
        },
    ];
    // (the last rows' output is past 16 MiB: streamed out past the caches)
    for (nrows, cols) in [
        (8, 16),
        (8, 40),
        (8, 296),
        (8, 1000),
        (8, 4099),
        (1024, 4099),
    ] {
        for dt in [lazyfuse::DType::F32, lazyfuse::DType::F64] {
            let x = Tensor::from_vec(rows(nrows, cols), &[nrows, cols]).unwrap();
            let x = x.to_dtype(dt).unwrap().realize().unwrap();
            let vals = |seed: f32| -> Vec<f32> {
                (0..cols).map(|i| (i as f32 * 0.37 + seed).sin()).collect()
            };
            let w = Tensor::from_vec(vals(0.2), &[cols])
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let b = Tensor::from_vec(vals(0.3), &[cols])
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let (w, b) = (w.realize().unwrap(), b.realize().unwrap());
            let ones = Tensor::from_vec(vec![1.0f32; nrows * cols], &[nrows, cols]).unwrap();
            let ones = ones.to_dtype(dt).unwrap().realize().unwrap();
            let xo = x.mul(&ones).unwrap();
            for (i, f) in cases.iter().enumerate() {
                let run = f(&x, &x, &w, &b);
                let fused = run.schedule_text().unwrap().matches("kernel ").count() == 1;
                if i < 2 && cols <= 1000 {
                    assert!(fused, "case {i} [{nrows},{cols}] {dt:?} is one kernel");
                }
                let clif = run.clif_text().unwrap();
                assert_eq!(
                    clif.contains("lf_row_affine_"),
                    fused && cols >= MIN_ROUTINE_ROW,
                    "case {i} [{nrows},{cols}] {dt:?}"
                );
                if i == 0 && nrows > 8 {
                    // W5's form, divided, weighted, biased and streamed
                    assert!(clif.contains("iconst.i64 15"), "case 0 streams: {clif}");
                }
                let inline = f(&xo, &x, &w, &b);
                assert!(!inline.clif_text().unwrap().contains("lf_row_affine_"));
                // (realized in their own dtype first: a cast fused into the
                // kernel would change its last phase)
                let f64s = |t: &Tensor| {
                    let t = t.realize().unwrap();
                    bits(&t.to_dtype(lazyfuse::DType::F64).unwrap())
                };
                assert_eq!(
                    f64s(&run),
                    f64s(&inline),
                    "case {i} [{nrows},{cols}] {dt:?}"
                );
            }
        }
    }
}

/// Phases that look like an affine map but are not the routine's form keep
/// the vector loop: a bias subtracted, an outer value divided by the row, a
/// row times a row.
#[test]
fn other_maps_keep_the_vector_loop() {
    lazyfuse::set_math_mode(MathMode::Fast);
    let x = Tensor::from_vec(rows(4, 64), &[4, 64]).unwrap();
    let b = Tensor::from_vec(vec![0.5f32; 64], &[64]).unwrap();
    let s = x.sum(&[1], true).unwrap();
    let not_affine = [
        x.div(&s).unwrap().sub(&b).unwrap(),
        s.div(&x).unwrap(),
        x.sub(&s).unwrap().mul(&x).unwrap(),
    ];
    for (i, t) in not_affine.iter().enumerate() {
        assert!(
            !t.clif_text().unwrap().contains("lf_row_affine_"),
            "case {i}"
        );
    }
    // (exact math takes no run either: `affine_run` asks for fast math; the
    // mode is global, so this binary's tests, which run at once, leave it)
}
