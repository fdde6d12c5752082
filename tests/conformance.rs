//! Runs the PyTorch-generated conformance corpus (`tests/data/conformance`) through the
//! conformance runner (`lazyfuse-conformance`) and fails when any case fails.

use lazyfuse_conformance as runner;

use std::path::Path;

#[test]
fn conformance_corpus() {
    // Release builds skip the graph verifier unless asked: the corpus is where it
    // earns its keep.
    lazyfuse::set_verify(true);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance");
    let summary = runner::run_dir(&dir);
    assert_eq!(summary.files.len(), 7, "expected the seven corpus files");
    for f in &summary.files {
        assert!(
            f.passed + f.failed + f.unsupported > 0,
            "{} ran no case",
            f.name
        );
    }
    assert_eq!(
        summary.failed,
        0,
        "{} of {} conformance cases failed (first: {:?}); {} unsupported, {} extended",
        summary.failed,
        summary.passed + summary.failed + summary.unsupported,
        summary.failures.first(),
        summary.unsupported,
        summary.extended.len()
    );
    assert_eq!(summary.unsupported, 0, "every corpus case is supported");
}
