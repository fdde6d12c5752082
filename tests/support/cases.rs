//! Property-test case counts: each test's default, or `PROPTEST_CASES` for a long
//! run. (proptest reads that variable only into `ProptestConfig::default()`, and
//! `with_cases(n)` replaces it, so a test that sets its own default must read it.)

/// `PROPTEST_CASES` when set to a number, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
