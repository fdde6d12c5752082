//! Differential test of the JIT: every random program of
//! `tests/support/random_program.rs` (every op family, all dtypes, size-0/size-1
//! dims, view chains, in-place writes through views, reused subexpressions) is built
//! twice, realized once on the reference interpreter and once on the JIT (fused
//! kernels), and every tensor must print identically: values, dtype, shape, or the
//! same error. Fusion off (`LAZYFUSE_NOFUSE=1` in the environment) runs the same
//! comparison one kernel per node. `PROPTEST_CASES=5000` runs it long; a failing
//! seed becomes a regression test below. Where NVRTC is installed, every schedule's
//! kernels are also compiled to sm_90 CUBINs (the CUDA compile check), so a kernel the
//! GPU backend cannot compile fails here too.
//!
//! The backend is process-wide: every test here holds `BACKEND` while it builds and
//! realizes.

#[path = "support/random_program.rs"]
mod random_program;

#[path = "support/cases.rs"]
mod cases;
use lazyfuse::CpuBackend;
use proptest::prelude::*;
use random_program::{build, build_with_grad, observe, source, step, Step};
use std::sync::Mutex;

static BACKEND: Mutex<()> = Mutex::new(());

/// Whether every realize here also compiles its kernels' CUDA C with NVRTC (the CUDA
/// compile check): where NVRTC is installed, or required (`LAZYFUSE_REQUIRE_NVRTC=1`,
/// CI); otherwise the reason is printed once and only the CPU comparison runs.
fn cuda_check_on() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| match lazyfuse_runtime::cuda::nvrtc::global() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var_os("LAZYFUSE_REQUIRE_NVRTC").is_none_or(|v| v != "1"),
                "LAZYFUSE_REQUIRE_NVRTC=1 but NVRTC is unusable: {e}"
            );
            eprintln!("CUDA compile check skipped: {e}");
            false
        }
    })
}

/// What every tensor of the program prints on `backend`.
fn realized(sources: &[(usize, usize, u64)], steps: &[Step], backend: CpuBackend) -> Vec<String> {
    lazyfuse::set_cpu_backend(backend);
    let pool = build(sources, steps);
    let seen = pool.iter().map(observe).collect();
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    seen
}

fn compare(sources: &[(usize, usize, u64)], steps: &[Step]) -> Result<(), TestCaseError> {
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_verify(true);
    // A kernel the CUDA backend cannot compile is this realize's error on the JIT.
    lazyfuse::set_cuda_compile_check(cuda_check_on());
    // Bit-identical values are the contract of exact math; fast math (vector
    // approximations, reordered sums) is checked against tolerances elsewhere.
    lazyfuse::set_math_mode(lazyfuse::MathMode::Exact);
    let interp = realized(sources, steps, CpuBackend::Interp);
    let jit = realized(sources, steps, CpuBackend::Jit);
    for (i, (a, b)) in interp.iter().zip(&jit).enumerate() {
        prop_assert_eq!(a, b, "tensor {} differs on the JIT", i);
    }
    Ok(())
}

/// What the leaves' gradients of the program print on `backend`.
fn gradients(sources: &[(usize, usize, u64)], steps: &[Step], backend: CpuBackend) -> Vec<String> {
    lazyfuse::set_cpu_backend(backend);
    let seen = match build_with_grad(sources, steps) {
        Ok(grads) => grads
            .iter()
            .map(|g| g.as_ref().map_or("None".to_string(), observe))
            .collect(),
        Err(e) => vec![e],
    };
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    seen
}

fn compare_gradients(sources: &[(usize, usize, u64)], steps: &[Step]) -> Result<(), TestCaseError> {
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_verify(true);
    lazyfuse::set_math_mode(lazyfuse::MathMode::Exact);
    let interp = gradients(sources, steps, CpuBackend::Interp);
    let jit = gradients(sources, steps, CpuBackend::Jit);
    prop_assert_eq!(interp, jit, "the gradients differ on the JIT");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::cases(256)))]

    /// Forward and backward of random programs: the leaves' gradients agree.
    #[test]
    fn jit_gradients_agree_with_the_interpreter(
        sources in proptest::collection::vec(source(), 1..4),
        steps in proptest::collection::vec(step(), 1..12),
    ) {
        compare_gradients(&sources, &steps)?;
    }

    #[test]
    fn jit_agrees_with_the_interpreter(
        sources in proptest::collection::vec(source(), 1..4),
        steps in proptest::collection::vec(step(), 1..16),
    ) {
        compare(&sources, &steps)?;
    }
}

/// Found by a long run (`PROPTEST_CASES=20000`, tests/random_graphs.rs): `cat` of
/// empty tensors has no step, and a kernel reading its (empty) buffer failed with
/// "reads b3 before it was written".
#[test]
fn regression_empty_cat_read_by_a_kernel() {
    let sources = [(0, 3, 0)];
    let steps = [
        Step::View(34, 0),
        Step::BinaryScalar(23, 13, 0),
        Step::Cat(1, 2),
        Step::Index(0, 0, 0),
        Step::Pointwise(0, 33),
    ];
    compare(&sources, &steps).unwrap();
}

/// Found by a long run (`PROPTEST_CASES=5000`): a float64 reduction printed one
/// last bit differently on the JIT in exact math.
#[test]
fn regression_float64_reduction_last_bit() {
    let sources = [
        (8, 5, 15740035375586183000),
        (1, 4, 1785999513931592213),
        (5, 0, 0),
    ];
    let steps = [
        Step::Reduce(0, 0, false),
        Step::Inplace(11, 53, 0),
        Step::Inplace(57, 5, 21),
        Step::Reduce(4, 5, false),
    ];
    compare(&sources, &steps).unwrap();
}
