//! Differential test of the CUDA code generator without a GPU: every random program
//! of `tests/support/random_program.rs` is realized once on the reference
//! interpreter and once with its fused kernels' CUDA C compiled for the host
//! (`CpuBackend::CudaHost`: `lazyfuse_codegen::cuda`'s source, the system C++
//! compiler, the CPU executor), in exact math, and every tensor must print
//! identically. The host build shares the interpreter's libm, so values agree to the
//! printed digits; what this checks is the generated code: indexing, stages,
//! reductions, scans, casts, every op's semantics and the status codes.
//!
//! Each case runs a C++ compiler, so the default case count is small;
//! `PROPTEST_CASES=2000` runs it long. Without a C++ compiler (`CXX`, else `c++`) the
//! test prints why and passes, unless `LAZYFUSE_REQUIRE_CXX=1` (CI) makes that a
//! failure. The backend is process-wide: every test here holds
//! `differential::SETTINGS` while it builds and realizes.

#[path = "support/random_program.rs"]
mod random_program;

#[path = "support/cases.rs"]
mod cases;
use lazyfuse::CpuBackend;
use proptest::prelude::*;
#[path = "support/differential.rs"]
mod differential;
use differential::{settings_guard, Run};
use random_program::{source, step, Step};

/// Whether a C++ compiler runs here; `false` (after printing why) lets the test
/// pass where none is installed and none is required.
fn have_cxx() -> bool {
    static HAVE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAVE.get_or_init(|| {
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        let ok = std::process::Command::new(&cxx)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            assert!(
                std::env::var_os("LAZYFUSE_REQUIRE_CXX").is_none_or(|v| v == "0"),
                "LAZYFUSE_REQUIRE_CXX is set but the C++ compiler `{cxx}` does not run"
            );
            eprintln!("skipped: no C++ compiler (`{cxx}`) to build the CUDA C for the host");
        }
        ok
    })
}

/// The CUDA C built for the host against the interpreter (see
/// `support/differential.rs`).
fn compare(sources: &[(usize, usize, u64)], steps: &[Step]) -> Result<(), TestCaseError> {
    if !have_cxx() {
        return Ok(());
    }
    differential::compare(
        sources,
        steps,
        Run::reference(),
        Run::exact(CpuBackend::CudaHost),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::cases(48)))]

    #[test]
    fn cuda_c_agrees_with_the_interpreter(
        sources in proptest::collection::vec(source(), 1..4),
        steps in proptest::collection::vec(step(), 1..16),
    ) {
        compare(&sources, &steps)?;
    }
}

/// Elementwise kernels whose last dim is a multiple of four run vectorized (groups of
/// four points, one vector load per contiguous input): every dtype's vector width,
/// broadcasts along either dim, casts between widths, an unaligned view (scalar), and
/// thread ranges that start mid-group (sizes above the executor's one-chunk limit).
#[test]
fn vectorized_elementwise_kernels_agree() {
    if !have_cxx() {
        return;
    }
    use lazyfuse::{DType, Tensor};
    let _guard = settings_guard();
    lazyfuse::set_math_mode(lazyfuse::MathMode::Exact);
    let build = |rows: usize, cols: usize, dt: DType| -> Vec<Tensor> {
        let n = rows * cols;
        let v: Vec<f64> = (0..n)
            .map(|i| ((i * 37 % 101) as f64 - 50.0) * 0.37)
            .collect();
        let a = Tensor::from_vec(v, &[rows, cols])
            .unwrap()
            .to_dtype(dt)
            .unwrap();
        let row = Tensor::from_vec((0..cols).map(|i| i as f64 - 1.5).collect(), &[1, cols])
            .unwrap()
            .to_dtype(dt)
            .unwrap();
        let col = Tensor::from_vec((0..rows).map(|i| i as f64 * 0.5).collect(), &[rows, 1])
            .unwrap()
            .to_dtype(dt)
            .unwrap();
        let sum = a.mul(&row).unwrap().add(&col).unwrap();
        let widened = sum.to_dtype(DType::F64).unwrap().mul(0.25).unwrap();
        let mask = a.gt(&row).unwrap();
        let picked = Tensor::where_cond(&mask, &a, &col).unwrap();
        // an unaligned slice: the last dim from 1 (scalar code)
        let shifted = a.narrow(1, 1, cols - 1).unwrap().add(1).unwrap();
        vec![sum, widened, mask, picked, shifted]
    };
    let shapes = [(3, 8), (1, 4), (5, 12), (70, 1024)];
    let dtypes = [
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::F64,
        DType::I64,
        DType::I32,
        DType::U8,
        DType::I16,
    ];
    for (rows, cols) in shapes {
        for dt in dtypes {
            let seen = |backend| {
                lazyfuse::set_cpu_backend(backend);
                let out: Vec<String> = build(rows, cols, dt)
                    .iter()
                    .map(|t| format!("{:?}", t.to_dtype(DType::F64).unwrap().to_vec::<f64>()))
                    .collect();
                lazyfuse::set_cpu_backend(CpuBackend::Jit);
                out
            };
            let want = seen(CpuBackend::Interp);
            let got = seen(CpuBackend::CudaHost);
            assert_eq!(want, got, "[{rows}, {cols}] {dt}");
        }
    }
    lazyfuse::set_math_mode(lazyfuse::MathMode::Fast);
}

/// Reductions over long rows share a block in fast math (`lf_block_reduce`; on the
/// host a block is one thread, so this checks everything but the combine across
/// threads): sums, means, variances, max/min, any/all, softmax and log_softmax,
/// along the last dim and along the first, against the interpreter within fast
/// math's tolerance (the interpreter compensates its sums).
#[test]
fn block_reductions_agree_in_fast_math() {
    if !have_cxx() {
        return;
    }
    use lazyfuse::{DType, Tensor};
    let _guard = settings_guard();
    lazyfuse::set_math_mode(lazyfuse::MathMode::Fast);
    let outs = |rows: usize, cols: usize, dt: DType| -> Vec<Tensor> {
        let n = rows * cols;
        let v: Vec<f64> = (0..n)
            .map(|i| ((i * 37 % 101) as f64 - 50.0) / 7.0)
            .collect();
        let a = Tensor::from_vec(v, &[rows, cols])
            .unwrap()
            .to_dtype(dt)
            .unwrap();
        let pos = a.gt(0.0).unwrap();
        vec![
            a.sum(&[-1], false).unwrap(),
            a.mean(&[0], false).unwrap(),
            a.var(&[-1], 1, true).unwrap(),
            a.amax(&[-1], false).unwrap(),
            a.amin(&[0, 1], false).unwrap(),
            a.softmax(-1).unwrap(),
            a.log_softmax(0).unwrap(),
            pos.any(&[-1], false).unwrap(),
            pos.all(&[0], false).unwrap(),
        ]
    };
    for (rows, cols) in [(3, 300), (2, 1024), (70, 64)] {
        for dt in [DType::F32, DType::F64, DType::F16] {
            let seen = |backend| {
                lazyfuse::set_cpu_backend(backend);
                let v: Vec<Vec<f64>> = outs(rows, cols, dt)
                    .iter()
                    .map(|t| t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap())
                    .collect();
                lazyfuse::set_cpu_backend(CpuBackend::Jit);
                v
            };
            let (want, got) = (seen(CpuBackend::Interp), seen(CpuBackend::CudaHost));
            let tol = if dt == DType::F16 { 2e-3 } else { 1e-5 };
            for (k, (w, g)) in want.iter().zip(&got).enumerate() {
                assert_eq!(w.len(), g.len());
                for (x, y) in w.iter().zip(g) {
                    assert!(
                        (x - y).abs() <= tol * x.abs().max(1.0),
                        "output {k} [{rows}, {cols}] {dt}: {x} vs {y}"
                    );
                }
            }
        }
    }
}
