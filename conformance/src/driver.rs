//! Driving a run: one case (runner errors and panics become failures), one `.jsonl`
//! file, a whole directory, each with its printed summary.

use crate::{devices, gradients, memory_format, nn, shell_dtypes, value_views};
use crate::{
    harness, lib_err_text, run_broadcast, run_inplace, run_promotion, run_unary, run_values,
    run_views, FileSummary, Outcome, RunErr, Summary,
};
use serde_json::Value;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Once;

// Driving

thread_local! {
    /// True while this thread runs a case, whose panics are caught and reported.
    static IN_CASE: Cell<bool> = const { Cell::new(false) };
}

/// Installs (once) a panic hook that stays silent for panics inside a case (they are
/// caught and reported as failures; the default hook would print a banner in the
/// middle of the report) and defers to the previous hook everywhere else.
pub(crate) fn install_quiet_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_CASE.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Runs one case, turning runner errors and panics into failures.
pub fn run_case(kind: &str, case: &Value) -> Outcome {
    install_quiet_panic_hook();
    IN_CASE.with(|c| c.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| match kind {
        "promotion" => run_promotion(case),
        "inplace" => run_inplace(case),
        "unary" => run_unary(case),
        "values" => run_values(case),
        "broadcast" => run_broadcast(case),
        "views" => run_views(case),
        "memory_format" => memory_format::run_memory_format(case),
        "devices" => devices::run_devices(case),
        "gradients" => gradients::run_gradients(case),
        "nn" => nn::run_nn(case),
        "value_views" => value_views::run_value_views(case),
        "shell_dtypes" => shell_dtypes::run_shell_dtypes(case),
        other => harness(format!("no runner for file kind '{other}'")),
    }));
    IN_CASE.with(|c| c.set(false));
    match result {
        Ok(Ok(o)) => o,
        Ok(Err(RunErr::Harness(m))) => Outcome::Fail(format!("runner: {m}")),
        Ok(Err(RunErr::Lib(e))) => Outcome::Fail(format!("unexpected error: {}", lib_err_text(&e))),
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".into());
            Outcome::Fail(format!("panicked: {msg}"))
        }
    }
}

/// A short label of a case for failure lines: op and family where present.
pub(crate) fn case_label(case: &Value) -> String {
    let mut parts = Vec::new();
    for key in ["op", "family"] {
        if let Some(s) = case.get(key).and_then(Value::as_str) {
            parts.push(s.to_string());
        }
    }
    parts.join("/")
}

/// Runs one `.jsonl` file; prints its summary line and its failures.
pub fn run_file(path: &Path, summary: &mut Summary) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let kind = name.trim_end_matches(".jsonl").to_string();
    let mut fs = FileSummary {
        name: name.clone(),
        ..Default::default()
    };
    let mut failures = Vec::new();
    match std::fs::read_to_string(path) {
        Err(e) => {
            fs.failed += 1;
            failures.push(format!("{name}: cannot read: {e}"));
        }
        Ok(text) => {
            for (n, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let (id, outcome) = match serde_json::from_str::<Value>(line) {
                    Err(e) => (
                        format!("{name}:{}", n + 1),
                        Outcome::Fail(format!("bad JSON: {e}")),
                    ),
                    Ok(case) => {
                        let id = case
                            .get("id")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                            .unwrap_or_else(|| format!("{name}:{}", n + 1));
                        let o = run_case(&kind, &case);
                        let id = match &o {
                            Outcome::Fail(_) => format!("{id} ({})", case_label(&case)),
                            _ => id,
                        };
                        (id, o)
                    }
                };
                match outcome {
                    Outcome::Pass => fs.passed += 1,
                    Outcome::Extended => {
                        fs.passed += 1;
                        summary.extended.push(id);
                    }
                    Outcome::Unsupported => fs.unsupported += 1,
                    Outcome::Fail(m) => {
                        fs.failed += 1;
                        failures.push(format!("{id}: {m}"));
                    }
                }
            }
        }
    }
    println!(
        "{}: {} passed, {} failed, {} unsupported",
        fs.name, fs.passed, fs.failed, fs.unsupported
    );
    for f in &failures {
        println!("  FAIL {f}");
    }
    summary.passed += fs.passed;
    summary.failed += fs.failed;
    summary.unsupported += fs.unsupported;
    summary.failures.extend(failures);
    summary.files.push(fs);
}

/// Runs every `*.jsonl` file of `dir` (sorted by name) and prints the report.
pub fn run_dir(dir: &Path) -> Summary {
    let mut summary = Summary::default();
    let mut files: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect(),
        Err(e) => {
            summary.failed += 1;
            summary.failures.push(format!("{}: {e}", dir.display()));
            println!("cannot read {}: {e}", dir.display());
            Vec::new()
        }
    };
    files.sort();
    if files.is_empty() && summary.failed == 0 {
        summary.failed += 1;
        summary
            .failures
            .push(format!("{}: no .jsonl files", dir.display()));
        println!("no .jsonl files in {}", dir.display());
    }
    for f in &files {
        run_file(f, &mut summary);
    }
    println!(
        "extended beyond the reference: {} cases",
        summary.extended.len()
    );
    if !summary.extended.is_empty() {
        println!("  extended: {}", summary.extended.join(" "));
    }
    println!(
        "conformance: {} passed, {} failed, {} unsupported",
        summary.passed, summary.failed, summary.unsupported
    );
    summary
}
