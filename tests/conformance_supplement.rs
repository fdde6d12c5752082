//! Runs the PyTorch-generated supplement of the conformance corpus
//! (`tests/data/conformance_supplement`: the schema's ops that the public cases never
//! reach) through the conformance runner (`lazyfuse-conformance`), and fails when any case fails.

use lazyfuse_conformance as runner;

use std::path::Path;

#[test]
fn conformance_supplement() {
    lazyfuse::set_verify(true);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance_supplement");
    let summary = runner::run_dir(&dir);
    assert_eq!(summary.files.len(), 3, "expected unary, values and inplace");
    for f in &summary.files {
        assert!(f.passed > 0, "{} ran no case", f.name);
    }
    assert_eq!(
        summary.failed, 0,
        "{} supplement cases failed: {:#?}",
        summary.failed, summary.failures
    );
    assert_eq!(
        summary.unsupported, 0,
        "no supplement case is on a storage-only dtype"
    );
}
