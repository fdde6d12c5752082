//! The conformance runner knows every op its schema names, not only the ones the public
//! data happens to reach.
//!
//! The op names are read from `tests/data/conformance/SCHEMA.md` itself (the op tables
//! of §2, §3, §5, §6.3 and §7, and the op lists of §4), so a name added to the schema
//! without a runner mapping fails here. Each op gets a small synthetic case that expects
//! an error: a known op then either fails (the case passes) or computes (the case fails
//! with "expected error … got Ok"); only an op the runner cannot dispatch, or a case it
//! cannot read, comes back as a `runner:` failure, which is what this test refuses.

use lazyfuse_conformance as runner;

use runner::{run_case, Outcome};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::Path;

/// The schema's text split into its numbered `## N.` sections.
fn schema_sections() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance/SCHEMA.md");
    let text = std::fs::read_to_string(&path).expect("SCHEMA.md is vendored");
    text.split("\n## ")
        .skip(1)
        .map(|s| {
            let (title, body) = s.split_once('\n').unwrap_or((s, ""));
            (title.trim().to_string(), body.to_string())
        })
        .collect()
}

fn section(title_start: &str) -> String {
    schema_sections()
        .into_iter()
        .find(|(t, _)| t.starts_with(title_start))
        .unwrap_or_else(|| panic!("SCHEMA.md has no section '{title_start}'"))
        .1
}

/// Every backticked word of a markdown cell or sentence, split on spaces.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|span| span.split_whitespace().map(str::to_string))
        .collect()
}

fn cells(line: &str) -> Vec<&str> {
    line.trim()
        .trim_matches('|')
        .split('|')
        .map(str::trim)
        .collect()
}

/// Op names of a section: the first column of every table whose header's first cell is
/// `` `op` ``, plus the value list of a key table's `` `op` | string | … `` row.
fn table_ops(body: &str) -> BTreeSet<String> {
    let lines: Vec<&str> = body.lines().collect();
    let mut ops = BTreeSet::new();
    let mut in_op_table = false;
    for (i, line) in lines.iter().enumerate() {
        if !line.trim_start().starts_with('|') {
            in_op_table = false;
            continue;
        }
        let row = cells(line);
        let is_header = lines
            .get(i + 1)
            .is_some_and(|next| next.trim_start().starts_with("|---"));
        if is_header {
            in_op_table = row.first() == Some(&"`op`");
            continue;
        }
        if row.first().is_some_and(|c| c.starts_with("---")) {
            continue;
        }
        if in_op_table {
            ops.extend(backticked(row[0]));
        } else if row.first() == Some(&"`op`") && row.get(1) == Some(&"string") {
            ops.extend(row.get(2).map(|c| backticked(c)).unwrap_or_default());
        }
    }
    ops
}

/// §4 lists its ops in bullets: backticked spans of several names, and `logsumexp`.
fn unary_ops() -> BTreeSet<String> {
    let body = section("4.");
    let mut ops = BTreeSet::new();
    for bullet in body.split("\n* ").skip(1) {
        for span in bullet.split('`').skip(1).step_by(2) {
            let words: Vec<&str> = span.split_whitespace().collect();
            if words.len() >= 3 {
                ops.extend(words.iter().map(|w| w.to_string()));
            }
        }
        if bullet.contains("(dimension removed)") {
            ops.extend(backticked(bullet).into_iter().filter(|w| w == "logsumexp"));
        }
    }
    ops
}

const PROBE: &str = "probe: a known op may fail or compute; only an unknown one is refused";

fn expect_error() -> Value {
    json!({"error": "RuntimeError", "message": PROBE})
}

fn float_tensor(shape: &[usize]) -> Value {
    let n: usize = shape.iter().product();
    let data: Vec<f64> = (0..n).map(|i| i as f64 + 1.0).collect();
    json!({"dtype": "float32", "shape": shape, "data": data})
}

/// Runs `case` and returns a complaint when the runner could not dispatch it.
fn probe(kind: &str, op: &str, case: &Value) -> Option<String> {
    match run_case(kind, case) {
        Outcome::Fail(m) if m.starts_with("runner:") || m.starts_with("panicked") => {
            Some(format!("{kind}.jsonl op '{op}': {m}"))
        }
        _ => None,
    }
}

fn values_case(op: &str, arity: usize) -> Value {
    let mut inputs: Vec<Value> = (0..arity).map(|_| float_tensor(&[2, 3])).collect();
    if op == "where" {
        inputs[0] = json!({"dtype": "bool", "shape": [2, 3], "data": [true, false, true, false, true, false]});
    }
    json!({
        "id": format!("probe-{op}"), "op": op, "family": "probe", "inputs": inputs,
        "args": {"dim": -1, "keepdim": false, "correction": 1, "dtype": "float64",
                 "min": 0.0, "max": 4.0},
        "result": expect_error(),
    })
}

/// The number of tensors in a §7 row's `inputs` cell (`[a, b]`, `[t0, t1, ...]` → 2).
fn arity(inputs_cell: &str) -> usize {
    let inner = inputs_cell.trim_matches(|c| c == '`' || c == '[' || c == ']');
    inner
        .split(',')
        .filter(|p| !p.trim().is_empty() && p.trim() != "...")
        .count()
}

fn view_args(op: &str) -> Value {
    let mut args = json!({
        "shape": [3, 2], "dim0": 0, "dim1": 1, "axis0": 0, "axis1": 1, "dims": [1, 0],
        "other_shape": [2, 3], "dim": 0, "start": 0, "length": 1, "index": 0, "stop": null,
        "step": 1, "offset": 0, "size": [2], "stride": [1], "storage_offset": 0,
        "dimension": 0, "source": 0, "destination": 1, "start_dim": 0, "end_dim": 1,
        "sizes": [2, 1], "split_size_or_sections": 1, "chunks": 1,
    });
    if op == "unfold" {
        args["size"] = json!(1);
    }
    args
}

#[test]
fn the_runner_knows_every_op_of_the_schema() {
    let mut complaints = Vec::new();
    let mut seen = 0;

    for op in table_ops(&section("2.")) {
        seen += 1;
        let t = json!({"kind": "tensor", "dtype": "float32", "shape": [2]});
        let case = json!({"id": "p", "op": op, "rounding_mode": null,
            "cond": {"kind": "tensor", "dtype": "bool", "shape": [2]},
            "a": t, "b": t, "result": expect_error()});
        complaints.extend(probe("promotion", &op, &case));
    }
    for op in table_ops(&section("3.")) {
        seen += 1;
        let case = json!({"id": "p", "family": "dtype_sample", "op": op,
            "a": float_tensor(&[2]),
            "b": {"kind": "tensor", "dtype": "float32", "shape": [2], "data": [1.0, 2.0]},
            "result": expect_error()});
        complaints.extend(probe("inplace", &op, &case));
    }
    for op in unary_ops() {
        seen += 1;
        let case = json!({"id": "p", "op": op, "family": "per_dtype", "args": {"dim": -1},
            "input": float_tensor(&[2, 3]), "result": expect_error()});
        complaints.extend(probe("unary", &op, &case));
    }
    for op in table_ops(&section("5.")) {
        seen += 1;
        let shapes = match op.as_str() {
            "where" | "broadcast_shapes" => json!([[2], [2], [2]]),
            "broadcast_to" => json!([[2]]),
            _ => json!([[2], [2]]),
        };
        let case = json!({"id": "p", "op": op, "shapes": shapes, "target": [2],
            "result": expect_error()});
        complaints.extend(probe("broadcast", &op, &case));
    }
    for op in table_ops(&section("6.")) {
        seen += 1;
        let case = json!({"id": "p", "family": "chain", "base_shape": [2, 3], "steps": [],
            "error": {"op": op, "args": view_args(&op), "error": "RuntimeError",
                      "message": PROBE}});
        complaints.extend(probe("views", &op, &case));
    }
    let values = section("7.");
    for line in values.lines().filter(|l| l.starts_with("| `")) {
        let row = cells(line);
        let Some(inputs) = row.get(1).filter(|c| c.starts_with("`[")) else {
            continue;
        };
        for op in backticked(row[0]) {
            seen += 1;
            complaints.extend(probe("values", &op, &values_case(&op, arity(inputs))));
        }
    }

    // The parse itself must have found the schema's op lists (about 150 names).
    assert!(seen > 120, "parsed only {seen} op names from SCHEMA.md");
    assert!(
        complaints.is_empty(),
        "ops of the schema the runner does not know:\n{}",
        complaints.join("\n")
    );
}

#[test]
fn an_unknown_op_is_reported_not_skipped() {
    let case = values_case("frobnicate", 1);
    assert!(probe("values", "frobnicate", &case).is_some());
}
