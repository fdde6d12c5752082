//! Output runs (fast math): an elementwise float32 kernel whose stored value is
//! `exp`, `log`, `tanh`, `sigmoid`, `silu`, `erf`, the exact `gelu`, `expm1`,
//! `log1p`, `mish`, the default `softplus`, the plain `elu`, `sin`, `cos`,
//! `tan`, `atan`, `sinh` or `cosh` of the rest stores the argument, and a precompiled wide-vector routine applies
//! the op in place over each run of the output; such ops inside the expression cut it into passes over the run, each
//! followed by its op's routine (routine chains); a row's last few points,
//! fewer than a vector, take the routines too. The routines must give the bits
//! of the kernels' own inline code, which computes the points of rows too short
//! for a run (and of kernels without one): every test here compares the two on
//! the same values, bit for bit.

use lazyfuse::{DType, GeluApproximate, MathMode, Tensor};
use std::sync::Mutex;

static MODE: Mutex<()> = Mutex::new(());

/// Values over the ops' whole range, with the specials and the clamp edges.
fn values(n: usize) -> Vec<f32> {
    let specials = [
        0.0,
        -0.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-30,
        -1e-30,
        3.9e-4,
        -4.1e-4,
        7.9988,
        -8.1,
        88.72,
        89.5,
        -103.9,
        -104.5,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        1e-42,
        -3e-40,
        0.5,
        1.0,
    ];
    (0..n)
        .map(|i| match i % 7 {
            0 => specials[(i / 7) % specials.len()],
            1 => (i as f32 * 0.013).sin() * 0.01,
            2 => (i as f32 * 0.37).sin() * 9.0,
            _ => (i as f32 * 0.011).cos() * 120.0,
        })
        .collect()
}

/// [`values`] of `n` points as a realized tensor of `dt`.
fn values_of(n: usize, dt: DType) -> Tensor {
    let x = Tensor::from_vec(values(n), &[n]).unwrap();
    x.to_dtype(dt).unwrap().realize().unwrap()
}

type Op = fn(&Tensor) -> Tensor;

const OPS: [(&str, Op); 21] = [
    ("exp", |t| t.exp().unwrap()),
    ("log", |t| t.log().unwrap()),
    ("log2", |t| t.log2().unwrap()),
    ("log10", |t| t.log10().unwrap()),
    ("erf", |t| t.erf().unwrap()),
    ("gelu", |t| t.gelu(GeluApproximate::None).unwrap()),
    ("gelu_tanh", |t| t.gelu(GeluApproximate::Tanh).unwrap()),
    ("tanh", |t| t.tanh().unwrap()),
    ("sigmoid", |t| t.sigmoid().unwrap()),
    ("silu", |t| t.silu().unwrap()),
    ("expm1", |t| t.expm1().unwrap()),
    ("log1p", |t| t.log1p().unwrap()),
    ("mish", |t| t.mish().unwrap()),
    ("softplus", |t| t.softplus(1.0, 20.0).unwrap()),
    ("elu", |t| t.elu(1.0).unwrap()),
    ("sin", |t| t.sin().unwrap()),
    ("cos", |t| t.cos().unwrap()),
    ("tan", |t| t.tan().unwrap()),
    ("atan", |t| t.atan().unwrap()),
    ("sinh", |t| t.sinh().unwrap()),
    ("cosh", |t| t.cosh().unwrap()),
];

/// `op` of `x` computed by the kernel's 128-bit inline code: `max(op(u),
/// min(u, -inf))` with `u = x · ones` is `op(x)` bit for bit (`u` is `x`, the
/// maximum with `-inf` or with a NaN that `op` propagates anyway is `op(u)`),
/// and the part after `op` reads `u`, which `op`'s argument computes too, so no
/// chain pass may cut at `op` (`vchain`): the kernel takes no run. (`ones` is
/// one value broadcast along the row, which a float16 or bfloat16 tile program
/// does not load, `vtiles`.)
fn inline_of(op: Op, x: &Tensor) -> Tensor {
    let ones = Tensor::from_vec(vec![1.0f64], &[1])
        .unwrap()
        .to_dtype(x.dtype())
        .unwrap()
        .realize()
        .unwrap();
    let u = x.mul(&ones).unwrap();
    let floor = u.minimum(&Tensor::scalar(f32::NEG_INFINITY)).unwrap();
    let y = op(&u).maximum(&floor).unwrap();
    assert!(!y.clif_text().unwrap().contains("lf_run_"), "no run");
    y
}

/// [`inline_of`] over float32 values.
fn inline_path(op: Op, xs: &[f32]) -> Vec<f32> {
    let x = Tensor::from_vec(xs.to_vec(), &[xs.len()]).unwrap();
    inline_of(op, &x).to_vec::<f32>().unwrap()
}

/// `xs` laid out as rows of 3 (column 0..3 of a [n, 4] tensor): rows shorter
/// than a vector, so every point runs the kernel's inline scalar code; then the
/// values back in `xs`' order.
fn scalar_path(op: Op, xs: &[f32]) -> Vec<f32> {
    let n = xs.len().div_ceil(3);
    let mut padded = xs.to_vec();
    padded.resize(n * 3, 0.0);
    let wide: Vec<f32> = padded
        .chunks(3)
        .flat_map(|c| [c[0], c[1], c[2], 0.0])
        .collect();
    let t = Tensor::from_vec(wide, &[n, 4]).unwrap();
    let rows = t.narrow(1, 0, 3).unwrap();
    let y = op(&rows);
    let mut v = y.contiguous().unwrap().to_vec::<f32>().unwrap();
    v.truncate(xs.len());
    v
}

fn same_bits(what: &str, want: &[f32], got: &[f32]) {
    assert_eq!(want.len(), got.len(), "{what}");
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        assert!(
            w.to_bits() == g.to_bits() || (w.is_nan() && g.is_nan()),
            "{what}: element {i}: inline {w}, run {g}"
        );
    }
}

#[test]
fn runs_give_the_inline_codes_bits() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    // 70001 points: several runs per thread range, ranges that end inside a run,
    // and a tail shorter than a vector.
    let xs = values(70_001);
    let x = Tensor::from_vec(xs.clone(), &[xs.len()]).unwrap();
    for (name, op) in OPS {
        let y = op(&x);
        let clif = y.clif_text().unwrap();
        assert!(
            clif.contains(&format!("lf_run_{name}_f32")),
            "{name}: {clif}"
        );
        let got = y.to_vec::<f32>().unwrap();
        same_bits(name, &inline_path(op, &xs), &got);
        same_bits(name, &scalar_path(op, &xs), &got);
    }
}

#[test]
fn runs_of_rows_of_every_length() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    // Rows of 1..=40 points and rows around the run's length, with a broadcast
    // row and column folded into the argument; the last few small enough for
    // the kernel to fit in L1, which takes runs of 1024 points.
    let streamed = (1..=40)
        .chain([1023, 1024, 1025, 2049, 4099])
        .map(|c| (5, c));
    let resident = [(1, 1023), (1, 1024), (1, 1025), (1, 2049), (2, 1500)];
    for (rows, cols) in streamed.chain(resident) {
        let xs = values(rows * cols);
        let x = Tensor::from_vec(xs.clone(), &[rows, cols]).unwrap();
        let rv: Vec<f32> = (0..cols).map(|i| 1.0 + (i as f32) * 1e-3).collect();
        let cv: Vec<f32> = (0..rows).map(|i| 0.5 - (i as f32) * 0.1).collect();
        let row = Tensor::from_vec(rv.clone(), &[1, cols]).unwrap();
        let col = Tensor::from_vec(cv.clone(), &[rows, 1]).unwrap();
        // The argument on the host, with the kernel's own float32 rounding
        // ((x + row) · col, which fast math does not fuse into an FMA): the
        // inline path gets it as its input.
        let arg: Vec<f32> = (0..rows * cols)
            .map(|i| (xs[i] + rv[i % cols]) * cv[i / cols])
            .collect();
        // The input's rows, contiguous but apart: the routine reads them itself.
        let apart = Tensor::from_vec(values(rows * (cols + 3)), &[rows, cols + 3]).unwrap();
        let apart_values: Vec<f32> = apart
            .to_vec::<f32>()
            .unwrap()
            .chunks(cols + 3)
            .flat_map(|r| r[..cols].to_vec())
            .collect();
        let apart = apart.narrow(1, 0, cols).unwrap();
        for (name, op) in OPS {
            let y = op(&x.add(&row).unwrap().mul(&col).unwrap());
            let got = y.to_vec::<f32>().unwrap();
            same_bits(
                &format!("{name} [{rows},{cols}]"),
                &scalar_path(op, &arg),
                &got,
            );
            let y = op(&apart);
            if cols >= 4 {
                assert!(y.clif_text().unwrap().contains("lf_run_"), "{name} {cols}");
            }
            let got = y.contiguous().unwrap().to_vec::<f32>().unwrap();
            let want = scalar_path(op, &apart_values);
            same_bits(
                &format!("{name} of rows apart [{rows},{cols}]"),
                &want,
                &got,
            );
        }
    }
}

#[test]
fn which_kernels_take_runs() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    let x = Tensor::from_vec(values(4096), &[4096]).unwrap();
    lazyfuse::set_math_mode(MathMode::Exact);
    let exact = x.exp().unwrap().clif_text().unwrap();
    lazyfuse::set_math_mode(MathMode::Fast);
    assert!(
        !exact.contains("lf_run_"),
        "exact math keeps the interpreter's bits"
    );
    // float16: a tile program over the codes (`vtiles`), each routine's op
    // on codes; float64 erf: no float64 routine.
    let x16 = x.to_dtype(DType::F16).unwrap().realize().unwrap();
    let clif16 = x16.exp().unwrap().clif_text().unwrap();
    assert!(clif16.contains("lf_ctile_exp_f16") && !clif16.contains("lf_narrow_f16"));
    let chain16 = x16.exp().unwrap().mul(0.5).unwrap().tanh().unwrap();
    let clif16 = chain16.clif_text().unwrap();
    assert!(clif16.contains("lf_ctile_exp_f16") && clif16.contains("lf_ctile_tanh_f16"));
    let x64 = x.to_dtype(DType::F64).unwrap().realize().unwrap();
    assert!(!x64.erf().unwrap().clif_text().unwrap().contains("lf_run_"));
    // exp read again after it is computed: the scheduler stores it apart (two
    // stores), and it stays in registers.
    let e = x.exp().unwrap();
    let twice = e.mul(&e).unwrap();
    assert!(!twice.clif_text().unwrap().contains("lf_run_"));
    // Ops with no routine (log2 and log1p have none in float64), and
    // parameters other than the routines' own.
    assert!(!x64.log2().unwrap().clif_text().unwrap().contains("lf_run_"));
    assert!(!x64
        .log1p()
        .unwrap()
        .clif_text()
        .unwrap()
        .contains("lf_run_"));
    for other in [
        x.softplus(2.0, 20.0).unwrap(),
        x.softplus(1.0, 10.0).unwrap(),
        x.elu(0.5).unwrap(),
    ] {
        assert!(!other.clif_text().unwrap().contains("lf_run_"));
    }
    // The tanh form of GELU in float32 and float64 (its stable form).
    let gelu_tanh = x.gelu(GeluApproximate::Tanh).unwrap();
    assert!(gelu_tanh
        .clif_text()
        .unwrap()
        .contains("lf_run_gelu_tanh_f32"));
    let gelu_tanh64 = x64.gelu(GeluApproximate::Tanh).unwrap();
    assert!(gelu_tanh64
        .clif_text()
        .unwrap()
        .contains("lf_run_gelu_tanh_f64"));
    // The op, then scaled: a pass after the routine scales the run.
    let scaled = x.tanh().unwrap().mul(2.0).unwrap();
    assert!(scaled.clif_text().unwrap().contains("lf_run_tanh_f32"));
    // A value the op's argument computes, read again after the op: no cut.
    let u = x.mul(&x).unwrap();
    let shared = u.exp().unwrap().mul(&u).unwrap();
    assert!(!shared.clif_text().unwrap().contains("lf_run_"));
    // W1's shape: the op last, over a fused argument.
    let w1 = x
        .mul(&x)
        .unwrap()
        .add(&x)
        .unwrap()
        .relu()
        .unwrap()
        .tanh()
        .unwrap();
    assert!(w1.clif_text().unwrap().contains("lf_run_tanh_f32"));
}

/// Softmax over rows: its exp-sum phase calls the row routine, which reads `x`,
/// subtracts the max, stores the exps and sums them into the vector loop's
/// sixteen accumulators; over `x * 0.5` the vector loop stores the argument and
/// the routine runs in place. Its values must be, bit for bit, those of the
/// same steps realized one by one (the max, the exps, their sums, the scaling),
/// rows short of a vector, rows with a tail, and rows too long for a run
/// included.
#[test]
fn softmax_rows_take_a_run_with_the_same_bits() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    for cols in [3, 16, 17, 31, 40, 100, 1023, 4096, 4099, 16384, 16385] {
        let rows = 3;
        let xs: Vec<f32> = (0..rows * cols)
            .map(|i| (i as f32 * 0.37).sin() * 30.0 + (i % 5) as f32)
            .collect();
        let x = Tensor::from_vec(xs, &[rows, cols]).unwrap();
        for x in [x.clone(), x.mul(0.5).unwrap()] {
            let y = x.softmax(1).unwrap();
            let runs = y.clif_text().unwrap().contains("lf_row_exp_f32");
            assert_eq!(runs, (16..=16384).contains(&cols), "[{rows},{cols}]");
            let got = y.to_vec::<f32>().unwrap();
            let x = x.realize().unwrap();
            let m = x.amax(&[1], true).unwrap().realize().unwrap();
            let e = x.sub(&m).unwrap().exp().unwrap().realize().unwrap();
            let s = e.sum(&[1], true).unwrap().realize().unwrap();
            let want = e.mul(&s.reciprocal().unwrap()).unwrap();
            let want = want.to_vec::<f32>().unwrap();
            same_bits(&format!("softmax [{rows},{cols}]"), &want, &got);
        }
    }
}

/// Float16 and bfloat16 softmax rows keep their float32 `exp(x - max)` in a
/// row slot for the last phase; the exp-sum phase's row routine reads the
/// codes and writes the exps there (a kept row's run), and the last phase
/// scales the slot in place with the affine routine and narrows it into the
/// output: against the same steps realized one by one in float32 and rounded
/// once, bit for bit.
#[test]
fn narrow_softmax_rows_take_a_run_over_the_kept_row() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    for dt in [DType::F16, DType::BF16] {
        for cols in [3, 16, 17, 40, 100, 256, 257, 1023, 4096, 4099, 16384, 16385] {
            let rows = 3;
            let xs: Vec<f32> = (0..rows * cols)
                .map(|i| (i as f32 * 0.37).sin() * 30.0 + (i % 5) as f32)
                .collect();
            let x = Tensor::from_vec(xs, &[rows, cols]).unwrap();
            let x = x.to_dtype(dt).unwrap().realize().unwrap();
            let y = x.softmax(1).unwrap();
            let clif = y.clif_text().unwrap();
            let (exp, narrow) = if dt == DType::F16 {
                ("lf_row_exp_f16", "lf_narrow_f16")
            } else {
                ("lf_row_exp_bf16", "lf_narrow_bf16")
            };
            for routine in [exp, "lf_row_affine_f32", narrow] {
                let runs = clif.contains(routine);
                // (the scaling of a bfloat16 row shorter than 256 points
                // keeps the kernel's loop, whose rounding to bfloat16 is
                // cheap; float16's keeps the routine and its conversions)
                let short = routine != exp && dt == DType::BF16 && cols < 256;
                assert_eq!(
                    runs,
                    (16..=16384).contains(&cols) && !short,
                    "{routine} {dt:?} [{rows},{cols}]"
                );
            }
            let got = bits64(&y.realize().unwrap());
            let x = x.to_dtype(DType::F32).unwrap().realize().unwrap();
            let m = x.amax(&[1], true).unwrap().realize().unwrap();
            let e = x.sub(&m).unwrap().exp().unwrap().realize().unwrap();
            let s = e.sum(&[1], true).unwrap().realize().unwrap();
            let r = s.reciprocal().unwrap().realize().unwrap();
            let want = e.mul(&r).unwrap().realize().unwrap();
            let want = want.to_dtype(dt).unwrap().realize().unwrap();
            same_bits64(
                &format!("{dt:?} softmax [{rows},{cols}]"),
                &bits64(&want),
                &got,
            );
        }
    }
}

/// Float64 runs (exp, log, tanh, sigmoid, silu): against the kernel's inline
/// code (the op times ones) and its scalar code (rows of 3), bit for bit, on a
/// plain input and on a fused argument; softmax rows against the same steps
/// realized one by one.
#[test]
fn float64_runs_give_the_inline_codes_bits() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    let mut xs: Vec<f64> = values(9001).into_iter().map(f64::from).collect();
    xs.extend([
        700.0, 709.9, -745.5, -746.5, 19.9, -20.5, 1e-10, 5e-320, 1e-300,
    ]);
    let n = xs.len();
    let x = Tensor::from_vec(xs.clone(), &[n]).unwrap();
    let ones = Tensor::from_vec(vec![1.0f64; n], &[n]).unwrap();
    let rows: Vec<f64> = xs
        .chunks(3)
        .flat_map(|c| {
            [
                c[0],
                *c.get(1).unwrap_or(&0.0),
                *c.get(2).unwrap_or(&0.0),
                0.0,
            ]
        })
        .collect();
    let m = rows.len() / 4;
    let rows = Tensor::from_vec(rows, &[m, 4])
        .unwrap()
        .narrow(1, 0, 3)
        .unwrap();
    let bits = |t: &Tensor| -> Vec<u64> {
        let v = t.contiguous().unwrap().to_vec::<f64>().unwrap();
        v.iter()
            .map(|x| {
                if x.is_nan() {
                    f64::NAN.to_bits()
                } else {
                    x.to_bits()
                }
            })
            .collect()
    };
    let ops: [(&str, Op); 6] = [OPS[0], OPS[1], OPS[6], OPS[7], OPS[8], OPS[9]];
    for (name, op) in ops {
        let y = op(&x);
        assert!(
            y.clif_text()
                .unwrap()
                .contains(&format!("lf_run_{name}_f64")),
            "{name}"
        );
        let fused = op(&x.mul(&ones).unwrap().add(&x).unwrap());
        assert!(fused
            .clif_text()
            .unwrap()
            .contains(&format!("lf_run_{name}_f64")));
        let got = bits(&y);
        assert_eq!(
            got,
            bits(&inline_of(op, &x)),
            "{name} float64: run against inline"
        );
        let mut scalar = bits(&op(&rows));
        scalar.truncate(n);
        assert_eq!(got, scalar, "{name} float64: run against scalar");
        let arg = x.mul(&ones).unwrap().add(&x).unwrap().realize().unwrap();
        let apart = op(&arg).mul(&ones).unwrap();
        assert_eq!(bits(&fused), bits(&apart), "{name} float64 fused argument");
    }
    for cols in [16, 40, 4099, 8192, 8193] {
        let xs: Vec<f64> = (0..3 * cols)
            .map(|i| (i as f64 * 0.37).sin() * 30.0)
            .collect();
        let x = Tensor::from_vec(xs, &[3, cols]).unwrap();
        let y = x.softmax(1).unwrap();
        let runs = y.clif_text().unwrap().contains("lf_row_exp_f64");
        assert_eq!(runs, cols <= 8192, "softmax float64 [3,{cols}]");
        let m = x.amax(&[1], true).unwrap().realize().unwrap();
        let e = x.sub(&m).unwrap().exp().unwrap().realize().unwrap();
        let s = e.sum(&[1], true).unwrap().realize().unwrap();
        let want = e.mul(&s.reciprocal().unwrap()).unwrap();
        assert_eq!(bits(&y), bits(&want), "softmax float64 [3,{cols}]");
    }
}

/// A phase that stores `exp(x - max)` and reduces it twice (a sum and a max):
/// the routine stores the row and a second loop reads it back into both
/// reductions. The values and both reductions must be, bit for bit, those of
/// the same steps realized one by one.
#[test]
fn a_stored_op_reduced_twice_is_read_back() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    for cols in [16, 40, 1025] {
        let x = phase_rows(cols);
        let m = x.amax(&[1], true).unwrap();
        let e = x.sub(&m).unwrap().exp().unwrap();
        let (s, mx) = (e.sum(&[1], true).unwrap(), e.amax(&[1], true).unwrap());
        assert!(e.clif_text().unwrap().contains("lf_row_exp_f32"));
        lazyfuse::realize_all(&[&e, &s, &mx]).unwrap();
        let m1 = m.realize().unwrap();
        let e1 = x.sub(&m1).unwrap().exp().unwrap().realize().unwrap();
        let s1 = e1.sum(&[1], true).unwrap();
        let mx1 = e1.amax(&[1], true).unwrap();
        same_values(
            &format!("[3,{cols}]"),
            [("exp", &e, &e1), ("sum", &s, &s1), ("max", &mx, &mx1)],
        );
    }
}

/// Three rows of `cols` float32 values for the phase tests.
fn phase_rows(cols: usize) -> Tensor {
    let xs: Vec<f32> = (0..3 * cols)
        .map(|i| (i as f32 * 0.37).sin() * 30.0 + (i % 7) as f32)
        .collect();
    Tensor::from_vec(xs, &[3, cols]).unwrap()
}

/// Each pair's tensors (got, want) hold the same float32 bits (any NaN as any).
fn same_values<const N: usize>(what: &str, pairs: [(&str, &Tensor, &Tensor); N]) {
    for (name, got, want) in pairs {
        let got = got.contiguous().unwrap().to_vec::<f32>().unwrap();
        let want = want.contiguous().unwrap().to_vec::<f32>().unwrap();
        same_bits(&format!("{name} {what}"), &want, &got);
    }
}

/// The unary ops' row routines: a phase that stores `op(x - max)` and sums it
/// (softmax's shape) calls `lf_row_<op>_f32`, whose values and sum must be,
/// bit for bit, those of the same steps realized one by one. (The ops with
/// parameters, the GELUs, softplus and elu, have row routines too, but a
/// reduction phase computes them in scalar code: `vreduce` vectorizes no
/// parameterized op.)
#[test]
fn unary_ops_take_row_routines() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    for cols in [16, 40, 1025] {
        let x = phase_rows(cols);
        let m = x.amax(&[1], true).unwrap();
        // (the max realized apart: `m` itself stays lazy, in the kernel)
        let m1 = x.amax(&[1], true).unwrap().realize().unwrap();
        let unary = OPS
            .into_iter()
            .filter(|(name, _)| !["gelu", "gelu_tanh", "softplus", "elu"].contains(name));
        for (name, op) in unary {
            let e = op(&x.sub(&m).unwrap());
            let s = e.sum(&[1], true).unwrap();
            assert!(
                e.clif_text()
                    .unwrap()
                    .contains(&format!("lf_row_{name}_f32")),
                "{name} [3,{cols}]"
            );
            lazyfuse::realize_all(&[&e, &s]).unwrap();
            let e1 = op(&x.sub(&m1).unwrap()).realize().unwrap();
            let s1 = e1.sum(&[1], true).unwrap();
            same_values(
                &format!("{name} [3,{cols}]"),
                [("op", &e, &e1), ("sum", &s, &s1)],
            );
        }
    }
}

/// `x` laid out as rows of 3 (as [`scalar_path`]) in its own dtype: every point
/// of a kernel over it runs the inline scalar code.
fn rows_of_three(x: &Tensor) -> Tensor {
    let v = x.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
    let m = v.len().div_ceil(3);
    let mut wide = vec![0.0f64; m * 4];
    for (i, &x) in v.iter().enumerate() {
        wide[i / 3 * 4 + i % 3] = x;
    }
    Tensor::from_vec(wide, &[m, 4])
        .unwrap()
        .to_dtype(x.dtype())
        .unwrap()
        .realize()
        .unwrap()
        .narrow(1, 0, 3)
        .unwrap()
}

/// The elements of `t` as float64 bits (exact for float32), NaNs as one NaN.
fn bits64(t: &Tensor) -> Vec<u64> {
    let v = t.contiguous().unwrap().to_dtype(DType::F64).unwrap();
    v.to_vec::<f64>()
        .unwrap()
        .iter()
        .map(|x| if x.is_nan() { f64::NAN } else { *x }.to_bits())
        .collect()
}

/// The first element where `got` differs from `want` (bits from [`bits64`]).
fn same_bits64(what: &str, want: &[u64], got: &[u64]) {
    assert_eq!(want.len(), got.len(), "{what}");
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        let (w, g) = (f64::from_bits(want[i]), f64::from_bits(got[i]));
        panic!("{what}: element {i}: inline {w:e}, chain {g:e}");
    }
}

/// float16 and bfloat16 ops with a float32 routine, against the kernel's
/// inline code (the op of `x · ones`) and its scalar code (rows of 3), bit
/// for bit: alone, a tile program's op on codes (`lf_ctile_<op>_<dtype>`),
/// over a length with several runs, thread ranges that end inside one and a
/// tail; with a row and a column broadcast into the argument, the routine
/// over a float32 tile on the kernel's stack, then the tile narrowed into the
/// output (`lf_narrow_<dtype>`), over rows of every length up to 40 and
/// around a run's.
#[test]
fn narrow_runs_give_the_inline_codes_bits() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    for (dt, suffix) in [(DType::F16, "f16"), (DType::BF16, "bf16")] {
        let n = 70_001;
        let x = values_of(n, dt);
        for (name, op) in OPS {
            let y = op(&x);
            let clif = y.clif_text().unwrap();
            assert!(
                clif.contains(&format!("lf_ctile_{name}_{suffix}")),
                "{dt} {name}: {clif}"
            );
            let got = bits64(&y.realize().unwrap());
            let inline = bits64(&inline_of(op, &x).realize().unwrap());
            same_bits64(&format!("{dt} {name}"), &inline, &got);
            let mut scalar = bits64(&op(&rows_of_three(&x)).realize().unwrap());
            scalar.truncate(n);
            same_bits64(&format!("{dt} {name}, rows of 3"), &scalar, &got);
        }
        for cols in (1..=40).chain([127, 128, 129, 1025]) {
            let rows = 5;
            let x = Tensor::from_vec(values(rows * cols), &[rows, cols])
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let rv: Vec<f32> = (0..cols).map(|i| 1.0 + (i as f32) * 1e-3).collect();
            let cv: Vec<f32> = (0..rows).map(|i| 0.5 - (i as f32) * 0.1).collect();
            let row = Tensor::from_vec(rv, &[1, cols])
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let col = Tensor::from_vec(cv, &[rows, 1])
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            for (name, op) in OPS {
                let arg = x.add(&row).unwrap().mul(&col).unwrap();
                let y = op(&arg);
                if cols >= 4 {
                    let clif = y.clif_text().unwrap();
                    assert!(
                        clif.contains(&format!("lf_run_{name}_f32"))
                            && clif.contains(&format!("lf_narrow_{suffix}")),
                        "{dt} {name} [{rows},{cols}]: {clif}"
                    );
                }
                let y = y.realize().unwrap();
                // (the argument realized on its own rounds as the kernel does)
                let alone = arg.realize().unwrap();
                let short = op(&rows_of_three(&alone)).realize().unwrap();
                let mut want = bits64(&short);
                want.truncate(rows * cols);
                same_bits64(&format!("{dt} {name} [{rows},{cols}]"), &want, &bits64(&y));
            }
        }
    }
}

/// Routine chains: expressions with transcendentals inside (W9's chain, a
/// hand-written softplus and silu, an op scaled afterwards, ops in parallel
/// branches, two routines straight from the input, broadcast operands after a
/// cut; an op read twice takes none) against the
/// same expression over rows of 3 (inline scalar code), bit for bit, in float32,
/// float64, float16 and bfloat16, over lengths with several runs, a run's edges and tails, and
/// rows too short for cuts; and the routines each kernel calls.
#[test]
fn routine_chains_give_the_inline_codes_bits() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    type Chain = (&'static str, fn(&Tensor) -> Tensor, &'static [&'static str]);
    let chains: [Chain; 8] = [
        (
            "w9",
            |x| {
                let v = x.mul(1.5).unwrap().add(0.25).unwrap().abs().unwrap();
                let v = v.sqrt().unwrap().sub(0.5).unwrap();
                let v = v.mul(&v).unwrap().add(1.0).unwrap().log().unwrap();
                let floor = Tensor::from_vec(vec![0.1f64], &[]).unwrap();
                let floor = floor.to_dtype(x.dtype()).unwrap().realize().unwrap();
                let v = v.maximum(&floor).unwrap();
                v.div(3.0).unwrap().exp().unwrap().tanh().unwrap()
            },
            &["log", "exp", "tanh"],
        ),
        (
            "softplus",
            |x| x.exp().unwrap().add(1.0).unwrap().log().unwrap(),
            &["exp", "log"],
        ),
        (
            "silu by hand",
            |x| x.sigmoid().unwrap().mul(x).unwrap(),
            &["sigmoid"],
        ),
        (
            "scaled",
            |x| x.tanh().unwrap().mul(2.0).unwrap().add(x).unwrap(),
            &["tanh"],
        ),
        (
            "branches",
            |x| {
                let a = x.tanh().unwrap().mul(&x.sigmoid().unwrap()).unwrap();
                a.add(&x.mul(0.5).unwrap().exp().unwrap()).unwrap()
            },
            &["exp"],
        ),
        (
            // (the scheduler stores an expensive value read twice: two
            // stores, no run)
            "read twice",
            |x| {
                let e = x.mul(0.1).unwrap().exp().unwrap();
                e.mul(&e).unwrap().sub(&e).unwrap()
            },
            &[],
        ),
        (
            "two ops in a row",
            |x| x.silu().unwrap().exp().unwrap().log().unwrap(),
            &["silu", "exp", "log"],
        ),
        (
            // (the first routine reads the input itself: no pass loads it)
            "exp then tanh",
            |x| x.exp().unwrap().tanh().unwrap(),
            &["exp", "tanh"],
        ),
    ];
    // (float16 and bfloat16 chains run tile programs, each routine's op on
    // codes)
    for dt in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        for n in [4, 7, 1023, 1024, 1025, 4099, 70_001] {
            let x = values_of(n, dt);
            let rows = rows_of_three(&x);
            for (name, f, routines) in chains {
                let y = f(&x);
                let clif = y.clif_text().unwrap();
                // A float16 or bfloat16 chain of rows of 32 points or more
                // without `sqrt` is a tile program (`vtiles`): every
                // transcendental calls its op on codes, in the expression's
                // order.
                let tiles = matches!(dt, DType::F16 | DType::BF16) && n >= 32 && name != "w9";
                let (prefix, suffix) = match dt {
                    _ if !tiles => (": lf_run_", if dt == DType::F64 { "f64" } else { "f32" }),
                    DType::F16 => (": lf_ctile_", "f16"),
                    _ => (": lf_ctile_", "bf16"),
                };
                let arithmetic = [
                    "add", "sub", "mul", "div", "max", "min", "relu", "neg", "abs",
                ];
                let calls: Vec<&str> = clif
                    .lines()
                    .filter_map(|l| l.split("import ").nth(1))
                    .filter_map(|l| l.split(prefix).nth(1))
                    .filter(|c| {
                        !arithmetic
                            .iter()
                            .any(|a| c.strip_prefix(a).is_some_and(|r| r.starts_with('_')))
                    })
                    .collect();
                // Rows shorter than 64 points take no cuts: only a stored op
                // (the last of a chain that stores one) keeps its run.
                let stored = matches!(
                    name,
                    "w9" | "softplus" | "two ops in a row" | "exp then tanh"
                );
                let routines = match (tiles, n < 64, stored) {
                    (true, _, _) => match name {
                        "branches" => &["tanh", "sigmoid", "exp"][..],
                        "read twice" => &["exp"][..],
                        _ => routines,
                    },
                    (false, false, _) => routines,
                    (false, true, true) => &routines[routines.len() - 1..],
                    (false, true, false) => &[][..],
                };
                let want: Vec<String> = routines.iter().map(|r| format!("{r}_{suffix}")).collect();
                assert_eq!(calls, want, "{name} {dt:?}: {clif}");
                if name == "exp then tanh" && n >= 64 && matches!(dt, DType::F32 | DType::F64) {
                    assert!(
                        !clif.contains("load.f32x4") && !clif.contains("load.f64x2"),
                        "{dt:?}: {clif}"
                    );
                }
                let mut scalar = bits64(&f(&rows));
                scalar.truncate(n);
                // (realized first: a cast taken into the kernel would store
                // float64 and take no run)
                let got = bits64(&y.realize().unwrap());
                same_bits64(&format!("{name} {dt:?} [{n}]"), &scalar, &got);
            }
        }
    }
    // Broadcast operands after a cut, over rows around a run's length (and
    // rows too short for a cut).
    for cols in [5, 1023, 1024, 1025, 2049] {
        let x = Tensor::from_vec(values(3 * cols), &[3, cols]).unwrap();
        let row: Vec<f32> = (0..cols).map(|i| 1.0 + i as f32 * 1e-3).collect();
        let row = Tensor::from_vec(row, &[1, cols]).unwrap();
        let col = Tensor::from_vec(vec![0.5f32, -1.0, 2.0], &[3, 1]).unwrap();
        let f = |x: &Tensor| x.add(&row).unwrap().exp().unwrap().mul(&col).unwrap();
        let y = f(&x);
        let cut = y.clif_text().unwrap().contains("lf_run_exp_f32");
        assert_eq!(cut, cols >= 64, "[3,{cols}]");
        let e = x.add(&row).unwrap().realize().unwrap();
        let mut want = e.exp().unwrap().realize().unwrap().mul(&col).unwrap();
        // (the exps realized apart, one more kernel: the same bits)
        want = want.realize().unwrap();
        same_bits64(
            &format!("broadcast [3,{cols}]"),
            &bits64(&want),
            &bits64(&y.realize().unwrap()),
        );
    }
}
