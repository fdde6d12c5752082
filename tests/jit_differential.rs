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
//! The comparison is `support/differential.rs`'s, which holds the process-wide
//! settings while it builds and realizes.

#[path = "support/random_program.rs"]
mod random_program;

#[path = "support/cases.rs"]
mod cases;
use lazyfuse::CpuBackend;
use proptest::prelude::*;
#[path = "support/differential.rs"]
mod differential;
use differential::Run;
use random_program::{source, step, Step};

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

/// The JIT against the interpreter (see `support/differential.rs`); a kernel the
/// CUDA backend cannot compile is the realize's error on the JIT.
fn compare(sources: &[(usize, usize, u64)], steps: &[Step]) -> Result<(), TestCaseError> {
    lazyfuse::set_cuda_compile_check(cuda_check_on());
    differential::compare(
        sources,
        steps,
        Run::reference(),
        Run::exact(CpuBackend::Jit),
    )
}

/// The leaves' gradients on the JIT against the interpreter's.
fn compare_gradients(sources: &[(usize, usize, u64)], steps: &[Step]) -> Result<(), TestCaseError> {
    differential::compare_gradients(
        sources,
        steps,
        Run::reference(),
        Run::exact(CpuBackend::Jit),
    )
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

/// Found by a run of `PROPTEST_CASES=3000`: `(x // x)[1:]` with `x[0] == 0`
/// raised nothing on the JIT, which inlined the division into the slice's kernel
/// and so never divided element 0; PyTorch (and the interpreter) compute the
/// division whole and raise `ZeroDivisionError`.
#[test]
fn regression_partial_view_of_a_failing_division() {
    let sources = [(1, 1, 2819579926334545484)];
    let steps = [
        Step::Binary(40, 0, 0),
        Step::View(16, 0),
        Step::Binary(10, 3, 0),
        Step::View(40, 13),
        Step::Cast(0, 0),
        Step::Binary(0, 8, 32),
        Step::Fill(2, 0),
        Step::Cast(0, 0),
        Step::Binary(0, 6, 22),
    ];
    compare(&sources, &steps).unwrap();
}

/// Found by a run of `PROPTEST_CASES=10000`: `(x // y)` over [2, 1] with a zero in
/// `y`, read only through a view of shape [2, 0] whose empty dim has stride 0,
/// times an empty tensor. The scheduler took that view for one reading every
/// element (the stride-0 dim looked like a broadcast), inlined the division into
/// the product's kernel of no point, and so raised nothing; PyTorch (and the
/// interpreter) compute the division whole and raise `ZeroDivisionError`.
#[test]
fn regression_division_read_through_an_empty_stride_zero_view() {
    let sources = [(0, 4, 0), (1, 3, 12513102009351807539)];
    let steps = [
        Step::View(16, 1),
        Step::Binary(16, 0, 19),
        Step::Binary(0, 0, 0),
        Step::Binary(22, 17, 0),
        Step::Binary(0, 0, 0),
        Step::BinaryPointwise(29, 0, 38, 0),
        Step::Index(19, 2, 4),
        Step::View(4, 17),
        Step::Binary(0, 0, 0),
        Step::Binary(14, 47, 27),
    ];
    compare(&sources, &steps).unwrap();
}

/// Found by CI (a random seed): `copysign(x, sqrt(s).amax(0))` over a column holding
/// `sqrt(-1)` (x86's negative default NaN). The interpreter's `amax` kept that NaN,
/// sign and all; the kernels' `maximum` gives the canonical positive NaN, so
/// `copysign` read a different sign.
#[test]
fn regression_nan_sign_of_a_max_reduction() {
    let sources = [(0, 3, 0), (2, 5, 0)];
    let steps = [
        Step::Unary(43, 5),
        Step::BinaryScalar(7, 0, 0),
        Step::Cast(0, 0),
        Step::Cat(36, 56),
        Step::Reduce(36, 62, false),
        Step::Index(0, 0, 0),
        Step::Reduce(6, 0, false),
        Step::BinaryPointwise(35, 3, 60, 0),
    ];
    compare(&sources, &steps).unwrap();
}

/// Found by a run of `PROPTEST_CASES=3000` (the gradient test): an integer
/// division by zero whose result only an empty view reads (the values of a
/// `write_view` of no element) ran in no kernel, so the realize succeeded;
/// PyTorch (and the interpreter) compute the division and raise.
#[test]
fn regression_division_read_only_by_an_empty_view() {
    let sources = [(1, 4, 16406477541720690650), (0, 0, 0), (5, 3, 0)];
    let steps = [
        Step::View(49, 21),
        Step::Binary(28, 11, 27),
        Step::View(34, 4),
        Step::BinaryPointwise(5, 2, 0, 0),
        Step::Binary(14, 2, 40),
    ];
    compare_gradients(&sources, &steps).unwrap();
}
