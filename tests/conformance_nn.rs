//! The neural-network cases (`tests/data/nn/nn.jsonl`, SCHEMA.md §10: forward values,
//! in-place updates and gradients of `lazyfuse::nn::functional`) on the JIT and on
//! the interpreter. No case may fail or be unsupported, and the count of passing
//! cases only grows.

use lazyfuse_conformance as runner;

use std::path::Path;

/// Cases that pass today: raise it as ops land, never lower it.
const PASSING: usize = 210;

fn run(backend: lazyfuse::CpuBackend) {
    lazyfuse::set_cpu_backend(backend);
    lazyfuse::set_verify(true);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nn");
    let summary = runner::run_dir(&dir);
    println!(
        "{backend:?}: {} passed, {} failed, {} unsupported",
        summary.passed, summary.failed, summary.unsupported
    );
    assert_eq!(
        summary.failed,
        0,
        "{} nn cases failed on {backend:?} (first: {:?})",
        summary.failed,
        summary.failures.first()
    );
    assert!(
        summary.passed >= PASSING,
        "{} nn cases passed on {backend:?}, fewer than the {PASSING} that did",
        summary.passed
    );
    assert_eq!(summary.unsupported, 0, "every nn case is supported");
}

#[test]
fn nn_cases_on_the_jit_and_the_interpreter() {
    // One test: the backend is process-wide state.
    run(lazyfuse::CpuBackend::Jit);
    run(lazyfuse::CpuBackend::Interp);
}
