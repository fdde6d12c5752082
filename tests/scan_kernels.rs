//! Scans as loop kernels: `cumsum`, `cumprod`, `cummax`/`cummin` (values and
//! indices) and `logcumsumexp` become one-phase kernels with an `Expr::Scan` that
//! absorb their elementwise prologue. Checked here: kernel counts, and values on
//! every dtype each op accepts (NaN, ±inf, ±0, ties, empty, size-1 and zero-dim
//! inputs, several axes) against the interpreter, through the kernel-IR evaluator
//! (`kernel_eval`, fusion on and off) and through the public API on the JIT, bit
//! for bit (any NaN equals any NaN); errors must be the same errors.

use lazyfuse::{CpuBackend, DType, Tensor};
use lazyfuse_ir::kernel::{Expr, Step};
use lazyfuse_ir::schedule::{schedule, ScheduleOptions};
use lazyfuse_runtime::{interp, kernel_eval, Buffer};
use std::sync::Mutex;

/// The backend is process-wide: tests that switch it hold this.
static BACKEND: Mutex<()> = Mutex::new(());

/// A scan of the public API (cummax/cummin give their values or their indices).
#[derive(Clone, Copy, Debug)]
enum Scan {
    Cumsum,
    Cumprod,
    CummaxValues,
    CummaxIndices,
    CumminValues,
    CumminIndices,
    LogCumSumExp,
}

const SCANS: [Scan; 7] = [
    Scan::Cumsum,
    Scan::Cumprod,
    Scan::CummaxValues,
    Scan::CummaxIndices,
    Scan::CumminValues,
    Scan::CumminIndices,
    Scan::LogCumSumExp,
];

fn apply(s: Scan, t: &Tensor, dim: isize) -> lazyfuse::Result<Tensor> {
    Ok(match s {
        Scan::Cumsum => t.cumsum(dim)?,
        Scan::Cumprod => t.cumprod(dim)?,
        Scan::CummaxValues => t.cummax(dim)?.0,
        Scan::CummaxIndices => t.cummax(dim)?.1,
        Scan::CumminValues => t.cummin(dim)?.0,
        Scan::CumminIndices => t.cummin(dim)?.1,
        Scan::LogCumSumExp => t.logcumsumexp(dim)?,
    })
}

/// Special values: NaN, infinities, signed zeros, ties, and ordinary numbers.
const VALUES: [f64; 16] = [
    1.5,
    -2.0,
    f64::NAN,
    3.0,
    3.0,
    -0.0,
    0.0,
    f64::INFINITY,
    -1.0,
    f64::NEG_INFINITY,
    2.0,
    2.0,
    0.5,
    f64::NAN,
    -3.5,
    1.0,
];

/// `n` test values of `dtype` (cast from [`VALUES`] and a mild ramp, so that
/// products stay finite for a while).
fn input(dtype: DType, n: usize, shape: &[usize], special: bool) -> Tensor {
    let data: Vec<f64> = (0..n)
        .map(|i| {
            if special {
                VALUES[i % VALUES.len()]
            } else {
                ((i * 7 + 3) % 11) as f64 / 4.0 - 1.0
            }
        })
        .collect();
    let t = Tensor::from_vec(data, shape).unwrap();
    t.to_dtype(dtype).unwrap()
}

/// Every element as text (`{:?}` keeps the sign of zero), or the error.
fn shown(t: &lazyfuse::Result<Tensor>) -> String {
    let t = match t {
        Ok(t) => t,
        Err(e) => return format!("error: {e}"),
    };
    let r = match t.realize() {
        Ok(r) => r,
        Err(e) => return format!("realize error: {e}"),
    };
    let items = |v: Vec<String>| format!("{} {:?} {}", r.dtype(), r.shape(), v.join(","));
    macro_rules! each {
        ($ty:ty) => {
            items(
                r.to_vec::<$ty>()
                    .unwrap()
                    .iter()
                    .map(|x| format!("{x:?}"))
                    .collect(),
            )
        };
    }
    match r.dtype() {
        DType::F16 => each!(half::f16),
        DType::BF16 => each!(half::bf16),
        DType::F32 => each!(f32),
        DType::F64 => each!(f64),
        DType::I64 => each!(i64),
        DType::I32 => each!(i32),
        DType::I16 => each!(i16),
        DType::I8 => each!(i8),
        DType::U8 => each!(u8),
        DType::U16 => each!(u16),
        DType::U32 => each!(u32),
        DType::U64 => each!(u64),
        DType::Bool => each!(bool),
        _ => format!("{r}"),
    }
}

/// Buffers equal bit for bit, except that any NaN equals any NaN.
fn same(a: &Buffer, b: &Buffer) -> bool {
    fn eq<T: PartialEq + Copy>(x: &[T], y: &[T], nan: impl Fn(T) -> bool) -> bool {
        x.len() == y.len() && x.iter().zip(y).all(|(&p, &q)| p == q || (nan(p) && nan(q)))
    }
    match (a, b) {
        (Buffer::F16(x), Buffer::F16(y)) => eq(x, y, |v| v.is_nan()),
        (Buffer::BF16(x), Buffer::BF16(y)) => eq(x, y, |v| v.is_nan()),
        (Buffer::F32(x), Buffer::F32(y)) => {
            eq(x, y, f32::is_nan)
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| p.is_nan() || p.to_bits() == q.to_bits())
        }
        (Buffer::F64(x), Buffer::F64(y)) => {
            eq(x, y, f64::is_nan)
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| p.is_nan() || p.to_bits() == q.to_bits())
        }
        (Buffer::C64(x), Buffer::C64(y)) => eq(x, y, |v| v.re.is_nan() || v.im.is_nan()),
        (Buffer::C128(x), Buffer::C128(y)) => eq(x, y, |v| v.re.is_nan() || v.im.is_nan()),
        _ => a == b,
    }
}

/// The kernel-IR evaluator (fusion on and off) against the interpreter; returns
/// the fused schedule.
fn check_kernel_eval(tensors: &[&Tensor]) -> Result<lazyfuse_ir::kernel::Schedule, String> {
    let (graph, targets, inputs) = Tensor::debug_optimized_graph(tensors);
    let want = interp::execute(&graph, &inputs, &targets);
    let mut fused = None;
    for fuse in [true, false] {
        let s = schedule(
            &graph,
            &targets,
            &ScheduleOptions {
                fuse,
                ..Default::default()
            },
        )
        .map_err(|e| format!("schedule: {e}"))?;
        s.verify()
            .map_err(|e| format!("verify: {e}\n{}", s.text()))?;
        let got = kernel_eval::run_schedule(&s, &graph, &inputs);
        match (&want, &got) {
            (Ok(w), Ok(g)) => {
                for (i, (x, y)) in g.iter().zip(w).enumerate() {
                    if !same(x, y) {
                        return Err(format!(
                            "fuse {fuse} target {i}: {x:?} vs {y:?}\n{}",
                            s.text()
                        ));
                    }
                }
            }
            (Err(w), Err(g)) if w.to_string() == g.to_string() => {}
            _ => return Err(format!("interp {want:?} vs kernels {got:?}\n{}", s.text())),
        }
        if fuse {
            fused = Some(s);
        }
    }
    Ok(fused.expect("the fused schedule ran"))
}

/// The tensor `make` builds, realized on the interpreter and on the JIT.
fn check_jit(make: &dyn Fn() -> lazyfuse::Result<Tensor>) -> Result<(), String> {
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_cpu_backend(CpuBackend::Interp);
    let want = shown(&make());
    // printed values must match bit for bit: the JIT runs Exact (Fast may differ
    // by ulps in the transcendentals)
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    lazyfuse::set_math_mode(lazyfuse::MathMode::Exact);
    let got = shown(&make());
    lazyfuse::set_math_mode(lazyfuse::MathMode::Fast);
    if want == got {
        Ok(())
    } else {
        Err(format!("interp {want}\n   jit {got}"))
    }
}

fn loop_steps(s: &lazyfuse_ir::kernel::Schedule) -> usize {
    s.steps
        .iter()
        .filter(|st| matches!(st, Step::Loop(_)))
        .count()
}

fn has_scan(s: &lazyfuse_ir::kernel::Schedule) -> bool {
    s.steps.iter().any(|st| match st {
        Step::Loop(k) => k.exprs.iter().any(|e| matches!(e.expr, Expr::Scan { .. })),
        Step::Extern(_) => false,
    })
}

#[test]
fn a_scan_absorbs_its_prologue() {
    let x = input(DType::F32, 20, &[4, 5], false);
    let y = x.exp().unwrap().cumsum(1).unwrap();
    let s = check_kernel_eval(&[&y]).unwrap();
    assert_eq!(s.kernel_count(), 1, "{}", s.text());
    assert!(has_scan(&s), "{}", s.text());
    // every scan op, with a two-op prologue, along a middle axis
    let x = input(DType::F64, 24, &[2, 3, 4], true);
    for op in SCANS {
        let p = -&(&x * &x.tanh().unwrap());
        let y = apply(op, &p, 1).unwrap();
        let s = check_kernel_eval(&[&y]).unwrap();
        assert_eq!(s.kernel_count(), 1, "{op:?}\n{}", s.text());
        assert_eq!(loop_steps(&s), 1, "{op:?}\n{}", s.text());
    }
    // an integer cumsum is an int64 scan of the cast input, in one kernel
    let x = input(DType::I32, 12, &[3, 4], false);
    let y = (&x + &x).cumsum(0).unwrap();
    assert_eq!(y.dtype(), DType::I64);
    let s = check_kernel_eval(&[&y]).unwrap();
    assert_eq!(s.kernel_count(), 1, "{}", s.text());
}

#[test]
fn an_epilogue_reads_the_stored_scan() {
    let x = input(DType::F32, 20, &[4, 5], false);
    let y = x.cumsum(1).unwrap().tanh().unwrap();
    let s = check_kernel_eval(&[&y]).unwrap();
    assert_eq!(s.kernel_count(), 2, "{}", s.text());
    check_jit(&|| input(DType::F32, 20, &[4, 5], false).cumsum(1)?.tanh()).unwrap();
}

#[test]
fn every_scan_on_every_dtype_matches_the_interpreter() {
    let shapes: [&[usize]; 7] = [&[16], &[4, 4], &[2, 1, 8], &[1], &[], &[0], &[3, 0, 2]];
    let mut failures = Vec::new();
    let mut scans = 0;
    for dtype in DType::ALL {
        let zero = Tensor::from_vec(vec![0.0f64], &[1]).unwrap();
        if zero.to_dtype(dtype).is_err() {
            continue; // no conversion from float64 (complex32): no input to scan
        }
        for shape in shapes {
            let n: usize = shape.iter().product();
            for special in [true, false] {
                for op in SCANS {
                    for dim in -(shape.len().max(1) as isize)..shape.len().max(1) as isize {
                        let make = || {
                            let x = input(dtype, n, shape, special);
                            apply(op, &x, dim)
                        };
                        let what = format!("{op:?} {dtype} {shape:?} dim {dim} special {special}");
                        if let Err(e) = check_jit(&make) {
                            failures.push(format!("jit {what}: {e}"));
                        }
                        if let Ok(y) = make() {
                            match check_kernel_eval(&[&y]) {
                                Ok(s) => scans += usize::from(has_scan(&s)),
                                Err(e) => failures.push(format!("kernel_eval {what}: {e}")),
                            }
                        }
                    }
                }
            }
        }
    }
    let n = failures.len();
    failures.truncate(20);
    assert!(n == 0, "{n} failures, first:\n{}", failures.join("\n"));
    assert!(scans > 500, "only {scans} schedules had a scan kernel");
}

#[test]
fn scans_read_through_views() {
    // transposed, flipped, and broadcast along the scanned axis (an outer value
    // lifted into the row loop); every op, kernel_eval and JIT
    type View = fn(&Tensor) -> lazyfuse::Result<Tensor>;
    let views: [View; 3] = [
        |x| x.t(),
        |x| x.flip(&[0, 1]),
        |x| x.narrow(1, 2, 1)?.expand(&[4, 5]),
    ];
    for view in views {
        for op in SCANS {
            for dim in [0, 1] {
                let make = || apply(op, &view(&input(DType::F32, 20, &[4, 5], true))?, dim);
                let y = make().unwrap();
                let s = check_kernel_eval(&[&y]).unwrap_or_else(|e| panic!("{op:?}: {e}"));
                assert_eq!(s.kernel_count(), 1, "{op:?}\n{}", s.text());
                check_jit(&make).unwrap_or_else(|e| panic!("{op:?} dim {dim}: {e}"));
            }
        }
    }
}

#[test]
fn complex_scans_stay_extern() {
    let c = input(DType::C64, 6, &[2, 3], false);
    let y = c.cumsum(1).unwrap();
    let s = check_kernel_eval(&[&y]).unwrap();
    assert!(!has_scan(&s), "{}", s.text());
    assert!(s.text().contains("extern cumsum"), "{}", s.text());
}

/// A scan over an empty dim of a non-empty tensor stores nothing; its fused
/// prologue (here a `take` through empty indices, broadcast over the rows) must not
/// run once per row and read the empty buffers (random_graphs found the kernel
/// verifier refusing such a load).
#[test]
fn a_scan_over_an_empty_dim_runs_no_kernel() {
    lazyfuse::set_verify(true);
    let x = Tensor::from_vec(vec![1.5f64, -2.0], &[2, 1]).unwrap();
    let small = x.to_dtype(DType::I8).unwrap();
    let none = Tensor::from_vec(Vec::<i64>::new(), &[0]).unwrap();
    let taken = small.take(&none).unwrap().unsqueeze(0).unwrap();
    let rows = taken.expand(&[2, 0]).unwrap();
    let twice = small.add(&small).unwrap().narrow(1, 0, 0).unwrap();
    let y = rows
        .add(&twice)
        .unwrap()
        .to_dtype(DType::I64)
        .unwrap()
        .cumsum(1)
        .unwrap();
    assert_eq!(y.shape(), vec![2, 0]);
    assert_eq!(y.to_vec::<i64>().unwrap(), Vec::<i64>::new());
    for dim in [0, 1] {
        let e = Tensor::zeros(&[3, 0], DType::F32).exp().unwrap();
        assert!(e.cumsum(dim).unwrap().to_vec::<f32>().unwrap().is_empty());
    }
}
