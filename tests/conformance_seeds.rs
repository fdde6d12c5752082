//! Runs the PyTorch-generated cases of the seeds' statements that the public corpus
//! never reaches (`tests/data/seeds`: views, value views, memory formats, devices,
//! shell dtypes) through the conformance runner (`lazyfuse-conformance`), and fails when any
//! case fails or is unsupported.

use lazyfuse_conformance as runner;

use std::path::Path;

#[test]
fn conformance_seeds() {
    lazyfuse::set_verify(true);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/seeds");
    let summary = runner::run_dir(&dir);
    assert!(!summary.files.is_empty(), "no seed case files");
    for f in &summary.files {
        assert!(f.passed > 0, "{} ran no case", f.name);
    }
    assert_eq!(
        summary.failed, 0,
        "{} seed cases failed: {:#?}",
        summary.failed, summary.failures
    );
    assert_eq!(summary.unsupported, 0, "every seed case is supported");
}
