//! The conformance corpus on the reference interpreter (`tests/conformance.rs` runs
//! it on the default backend, the JIT). A separate test binary, because the backend
//! is process-wide state.

use lazyfuse_conformance as runner;

use std::path::Path;

#[test]
fn conformance_corpus_on_the_interpreter() {
    lazyfuse::set_cpu_backend(lazyfuse::CpuBackend::Interp);
    lazyfuse::set_verify(true);
    for dir in [
        "tests/data/conformance",
        "tests/data/conformance_supplement",
    ] {
        let summary = runner::run_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir));
        assert!(summary.passed > 0, "{dir}: no case ran");
        assert_eq!(
            summary.failed,
            0,
            "{dir}: {} cases failed on the interpreter (first: {:?})",
            summary.failed,
            summary.failures.first()
        );
    }
}
