//! The dtype and shape rules of `promote`, `broadcast` and `typing` against the
//! PyTorch 2.15 conformance corpus (`tests/data/conformance/*.jsonl`).
//!
//! Every case is either checked (dtype and, for errors, PyTorch's exact message) or
//! put in a named, printed, counted category:
//! - `value-dependent`: errors that depend on operand values (a zero scalar divisor,
//!   an integer tensor to a negative scalar power); typing must accept them.
//! - `not dtype-decidable`: errors that depend on shapes or values, not on dtypes
//!   (empty reductions, matmul and stack shape mismatches, zero divisors in tensors);
//!   typing must accept them.
//! - `extended`: PyTorch has no kernel for a wide unsigned dtype (`"add_stub" not
//!   implemented for 'UInt64'`) where lazyfuse computes anyway; typing must return the
//!   dtype PyTorch's promotion gives.
//! - `unsupported`: PyTorch succeeds in a storage-only dtype (complex32, bcomplex32);
//!   typing must say `Error::Unsupported`.
//!
//! An `op` the harness does not know fails the test, so gaps are visible.

use lazyfuse_ir::broadcast::{broadcast_all, broadcast_shapes, inplace_shape};
use lazyfuse_ir::promote::{result_type, OperandType};
use lazyfuse_ir::typing::{self, Signature};
use lazyfuse_ir::{ArgReduceOp, BinaryOp, DType, Error, ReduceOp, UnaryOp};
use serde_json::Value;
use std::collections::BTreeMap;

const DEFAULT_FLOAT: DType = DType::F32;

fn load(name: &str) -> Vec<Value> {
    let path = format!(
        "{}/../tests/data/conformance/{name}.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}: {e}: {l}")))
        .collect()
}

fn dtype(v: &Value) -> DType {
    v.as_str()
        .unwrap_or_else(|| panic!("dtype is not a string: {v}"))
        .parse()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn shape(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap_or_else(|| panic!("shape is not an array: {v}"))
        .iter()
        .map(|s| s.as_u64().expect("size") as usize)
        .collect()
}

/// An operand object (§1.7): its promotion type and its shape (`[]` for scalars).
fn operand(v: &Value) -> (OperandType, Vec<usize>) {
    match v["kind"].as_str().expect("kind") {
        "tensor" | "zerodim" => {
            let s = shape(&v["shape"]);
            let d = dtype(&v["dtype"]);
            (OperandType::tensor(d, s.len()), s)
        }
        "scalar" => {
            let d = match v["scalar_type"].as_str().expect("scalar_type") {
                "bool" => DType::Bool,
                "int" => DType::I64,
                "float" => DType::F64,
                "complex" => DType::C128,
                other => panic!("unknown scalar_type {other}"),
            };
            (OperandType::wrapped(d), vec![])
        }
        other => panic!("unknown operand kind {other}"),
    }
}

/// A binary op name of promotion/values (`div` with its rounding mode).
fn binary_op(name: &str, rounding: Option<&str>) -> Option<BinaryOp> {
    use BinaryOp::*;
    Some(match name {
        "add" => Add,
        "sub" => Sub,
        "mul" => Mul,
        "div" => match rounding {
            None => Div,
            Some("floor") => DivFloor,
            Some("trunc") => DivTrunc,
            Some(other) => panic!("unknown rounding mode {other}"),
        },
        "floor_divide" => DivFloor,
        "remainder" => Remainder,
        "fmod" => Fmod,
        "pow" => Pow,
        "maximum" => Maximum,
        "minimum" => Minimum,
        "atan2" => Atan2,
        "eq" => Eq,
        "ne" => Ne,
        "lt" => Lt,
        "le" => Le,
        "gt" => Gt,
        "ge" => Ge,
        "logical_and" => LogicalAnd,
        "logical_or" => LogicalOr,
        "logical_xor" => LogicalXor,
        "bitwise_and" => BitwiseAnd,
        "bitwise_or" => BitwiseOr,
        "bitwise_xor" => BitwiseXor,
        _ => return None,
    })
}

fn unary_op(name: &str) -> Option<UnaryOp> {
    use UnaryOp::*;
    Some(match name {
        "neg" => Neg,
        "abs" => Abs,
        "sign" => Sign,
        "exp" => Exp,
        "log" => Log,
        "sqrt" => Sqrt,
        "rsqrt" => Rsqrt,
        "sin" => Sin,
        "cos" => Cos,
        "tanh" => Tanh,
        "sigmoid" => Sigmoid,
        "relu" => Relu,
        "floor" => Floor,
        "ceil" => Ceil,
        "round" => Round,
        "trunc" => Trunc,
        "reciprocal" => Reciprocal,
        "logical_not" => LogicalNot,
        "bitwise_not" => BitwiseNot,
        "isnan" => IsNan,
        _ => return None,
    })
}

/// The rounding mode of a case, if any (`null` and absent are true division).
fn rounding(case: &Value) -> Option<&str> {
    case.get("rounding_mode").and_then(Value::as_str)
}

/// What the reference recorded.
enum Expected {
    Dtype(DType),
    Error(String),
}

fn expected(result: &Value) -> Expected {
    if result.get("error").is_some() {
        Expected::Error(result["message"].as_str().expect("message").to_string())
    } else {
        Expected::Dtype(dtype(&result["dtype"]))
    }
}

/// True for a reference error that is a missing kernel for a wide unsigned dtype,
/// which lazyfuse deliberately computes.
fn is_missing_wide_unsigned_kernel(message: &str) -> bool {
    ["'UInt16'", "'UInt32'", "'UInt64'"]
        .iter()
        .any(|d| message.ends_with(&format!("not implemented for {d}")))
}

fn is_value_dependent(message: &str) -> bool {
    message == "ZeroDivisionError"
        || message == "Integers to negative integer powers are not allowed."
}

fn is_not_dtype_decidable(message: &str) -> bool {
    is_value_dependent(message)
        || message.contains("shapes cannot be multiplied")
        || message.starts_with("stack expects each tensor to be equal size")
        || message.contains("Expected reduction dim")
}

/// Tallies of one file.
#[derive(Default)]
struct Report {
    checked: usize,
    categories: BTreeMap<&'static str, Vec<String>>,
    mismatches: Vec<String>,
}

impl Report {
    fn note(&mut self, category: &'static str, id: &str) {
        self.categories
            .entry(category)
            .or_default()
            .push(id.to_string());
    }

    fn count(&self, category: &str) -> usize {
        self.categories.get(category).map_or(0, Vec::len)
    }

    /// Compares a typing outcome with the reference. `storage_only` says whether the
    /// case's compute dtype is one lazyfuse cannot compute in (then `Unsupported` is
    /// the right answer to a reference success).
    fn compare(
        &mut self,
        id: &str,
        got: Result<DType, Error>,
        want: &Expected,
        not_decidable_category: &'static str,
    ) {
        self.checked += 1;
        match (got, want) {
            (Ok(d), Expected::Dtype(w)) if d == *w => {}
            (Err(e), Expected::Dtype(_)) if e.is_unsupported() => self.note("unsupported", id),
            (Ok(d), Expected::Dtype(w)) => {
                self.mismatches.push(format!("{id}: got {d}, expected {w}"))
            }
            (Err(e), Expected::Dtype(w)) => self
                .mismatches
                .push(format!("{id}: got error `{e}`, expected {w}")),
            (Err(e), Expected::Error(m)) if e.to_string() == *m => {}
            (Err(e), Expected::Error(m)) => self
                .mismatches
                .push(format!("{id}: got error `{e}`, expected error `{m}`")),
            (Ok(_), Expected::Error(m)) if is_missing_wide_unsigned_kernel(m) => {
                self.note("extended", id)
            }
            (Ok(_), Expected::Error(m)) if is_not_dtype_decidable(m) => {
                self.note(not_decidable_category, id)
            }
            (Ok(d), Expected::Error(m)) => self
                .mismatches
                .push(format!("{id}: got {d}, expected error `{m}`")),
        }
    }

    fn finish(&self, file: &str) {
        println!("{file}: {} cases checked", self.checked);
        for (cat, ids) in &self.categories {
            println!("  {cat}: {} ({})", ids.len(), ids.join(", "));
        }
        assert!(
            self.mismatches.is_empty(),
            "{file}: {} mismatches:\n{}",
            self.mismatches.len(),
            self.mismatches.join("\n")
        );
    }
}

/// `Unsupported` is only an acceptable answer for a storage-only compute dtype: the
/// harness re-derives the promoted dtype and demotes a wrong `Unsupported` to a
/// mismatch.
fn check_unsupported_is_storage_only(report: &mut Report, id: &str, promoted: Option<DType>) {
    let storage_only = promoted.is_some_and(|d| matches!(d, DType::C32 | DType::BC32));
    if report
        .categories
        .get("unsupported")
        .is_some_and(|ids| ids.last().map(String::as_str) == Some(id))
        && !storage_only
    {
        report.mismatches.push(format!(
            "{id}: Unsupported for a computable dtype {promoted:?}"
        ));
    }
}

#[test]
fn promotion_jsonl() {
    let mut report = Report::default();
    let mut value_dependent = 0;
    for case in load("promotion") {
        let id = case["id"].as_str().expect("id");
        let op = case["op"].as_str().expect("op");
        let (a, sa) = operand(&case["a"]);
        let (b, sb) = operand(&case["b"]);
        let want = expected(&case["result"]);
        if matches!(&want, Expected::Error(m) if is_value_dependent(m)) {
            value_dependent += 1;
        }
        let (got, shapes) = if op == "where" {
            let (c, sc) = operand(&case["cond"]);
            assert_eq!(c.dtype, DType::Bool, "{id}: cond");
            (typing::where_(a, b, DEFAULT_FLOAT), vec![sc, sa, sb])
        } else {
            let bop =
                binary_op(op, rounding(&case)).unwrap_or_else(|| panic!("{id}: unknown op {op}"));
            let sig = typing::binary(bop, a, b, DEFAULT_FLOAT);
            (sig.map(|s| s.output), vec![sa, sb])
        };
        let ok = got.is_ok();
        report.compare(id, got, &want, "value-dependent");
        check_unsupported_is_storage_only(
            &mut report,
            id,
            result_type(&[a, b], DEFAULT_FLOAT).ok(),
        );
        // The result shape: all dimensioned operands share one shape.
        if let (true, Expected::Dtype(_)) = (ok, &want) {
            let refs: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
            let got_shape = broadcast_all(&refs).expect("shape");
            let want_shape = shape(&case["result"]["shape"]);
            if got_shape != want_shape {
                report.mismatches.push(format!(
                    "{id}: shape {got_shape:?}, expected {want_shape:?}"
                ));
            }
        }
    }
    report.finish("promotion.jsonl");
    // 4 zero divisors (div with a rounding mode, floor_divide, fmod twice) and one
    // integer tensor ** negative int scalar.
    assert_eq!(value_dependent, 5);
    assert_eq!(report.count("value-dependent"), 5);
    // add/sub of uint64/uint32 and lt of uint32.
    assert_eq!(report.count("extended"), 3);
    // None: where in complex32 and bcomplex32 selects through complex64, add and mul
    // in complex32 compute through it, and eq and ne in bcomplex32 give bool.
    assert_eq!(report.count("unsupported"), 0);
}

/// The shape of an `alias_of_a` operand, derived from the destination's shape.
fn alias_shape(alias: &str, dest: &[usize]) -> Vec<usize> {
    match alias {
        "self" => dest.to_vec(),
        "t" | "clone_t" => dest.iter().rev().copied().collect(),
        "row0" => dest[1..].to_vec(),
        other => panic!("unknown alias {other}"),
    }
}

#[test]
fn inplace_jsonl() {
    let mut report = Report::default();
    for case in load("inplace") {
        let id = case["id"].as_str().expect("id");
        let op = case["op"].as_str().expect("op");
        assert!(
            case["a"].get("view").is_none(),
            "{id}: destination views are not modelled by this harness"
        );
        let dest_dtype = dtype(&case["a"]["dtype"]);
        let dest_shape = shape(&case["a"]["shape"]);
        let dest = OperandType::tensor(dest_dtype, dest_shape.len());
        let (other, other_shape) = if case["b"]["kind"] == "alias_of_a" {
            let s = alias_shape(case["b"]["alias"].as_str().expect("alias"), &dest_shape);
            (OperandType::tensor(dest_dtype, s.len()), s)
        } else {
            operand(&case["b"])
        };
        let want = expected(&case["result"]);
        if let Expected::Dtype(d) = want {
            assert_eq!(d, dest_dtype, "{id}: an in-place result keeps the dtype");
        }
        // PyTorch checks shapes (TensorIterator's compute_shape) before dtypes.
        let got = inplace_shape(&dest_shape, &other_shape).and_then(|()| {
            if op == "copy_" {
                // Any conversion is allowed.
                return Ok(dest_dtype);
            }
            let name = op.strip_suffix('_').unwrap_or(op);
            let bop =
                binary_op(name, rounding(&case)).unwrap_or_else(|| panic!("{id}: unknown op {op}"));
            typing::binary_inplace(bop, dest, other, DEFAULT_FLOAT).map(|_| dest_dtype)
        });
        report.compare(id, got, &want, "value-dependent");
        check_unsupported_is_storage_only(
            &mut report,
            id,
            result_type(&[dest, other], DEFAULT_FLOAT).ok(),
        );
    }
    report.finish("inplace.jsonl");
    assert_eq!(report.count("value-dependent"), 0);
}

#[test]
fn broadcast_jsonl() {
    let mut report = Report::default();
    for case in load("broadcast") {
        let id = case["id"].as_str().expect("id");
        let shapes: Vec<Vec<usize>> = case["shapes"]
            .as_array()
            .expect("shapes")
            .iter()
            .map(shape)
            .collect();
        let refs: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
        let got = match case["op"].as_str().expect("op") {
            "add" => {
                assert_eq!(refs.len(), 2, "{id}");
                broadcast_shapes(refs[0], refs[1]).map(|d| d.to_vec())
            }
            "where" | "broadcast_shapes" => broadcast_all(&refs),
            other => panic!("{id}: unknown op {other}"),
        };
        report.checked += 1;
        let result = &case["result"];
        match (got, result.get("error")) {
            (Ok(s), None) if s == shape(&result["shape"]) => {}
            (Err(e), Some(_)) if e.to_string() == result["message"].as_str().expect("msg") => {}
            (got, _) => report
                .mismatches
                .push(format!("{id}: got {got:?}, expected {result}")),
        }
    }
    report.finish("broadcast.jsonl");
}

#[test]
fn unary_jsonl() {
    let mut report = Report::default();
    for case in load("unary") {
        let id = case["id"].as_str().expect("id");
        let op = case["op"].as_str().expect("op");
        let input = &case["input"];
        let d = dtype(&input["dtype"]);
        let ndim = shape(&input["shape"]).len();
        let got = reduce_like(op, &case["args"], d, ndim)
            .unwrap_or_else(|| panic!("{id}: unknown op {op}"));
        report.compare(id, got, &expected(&case["result"]), "not dtype-decidable");
        check_unsupported_is_storage_only(&mut report, id, Some(d));
    }
    report.finish("unary.jsonl");
    assert_eq!(report.count("not dtype-decidable"), 0);
    // abs, neg, bitwise_not and amax of uint16/32/64.
    assert_eq!(report.count("extended"), 12);
}

/// The typing of one-input ops shared by unary.jsonl and values.jsonl; `None` for an
/// op this harness does not know.
fn reduce_like(op: &str, args: &Value, d: DType, ndim: usize) -> Option<Result<DType, Error>> {
    let out = |r: Result<Signature, Error>| r.map(|s| s.output);
    let correction = || args.get("correction").and_then(Value::as_i64).unwrap_or(1);
    Some(if let Some(u) = unary_op(op) {
        out(typing::unary(u, d, DEFAULT_FLOAT))
    } else {
        match op {
            "sum" => out(typing::reduce(ReduceOp::Sum, d, DEFAULT_FLOAT)),
            "prod" => out(typing::reduce(ReduceOp::Prod, d, DEFAULT_FLOAT)),
            "mean" => out(typing::reduce(ReduceOp::Mean, d, DEFAULT_FLOAT)),
            "amax" => out(typing::reduce(ReduceOp::Amax, d, DEFAULT_FLOAT)),
            "amin" => out(typing::reduce(ReduceOp::Amin, d, DEFAULT_FLOAT)),
            "var" => {
                let op = ReduceOp::Var {
                    correction: correction(),
                };
                out(typing::reduce(op, d, DEFAULT_FLOAT))
            }
            "std" => {
                let op = ReduceOp::Std {
                    correction: correction(),
                };
                out(typing::reduce(op, d, DEFAULT_FLOAT))
            }
            "argmax" => typing::arg_reduce(ArgReduceOp::ArgMax, d).map(|()| DType::I64),
            "argmin" => typing::arg_reduce(ArgReduceOp::ArgMin, d).map(|()| DType::I64),
            "cumsum" => out(typing::cumsum(d)),
            "softmax" | "log_softmax" => {
                let dim = args["dim"].as_i64().expect("dim");
                let last = ndim == 0 || dim == -1 || dim == ndim as i64 - 1;
                out(typing::softmax_along(d, op == "log_softmax", last))
            }
            _ => return None,
        }
    })
}

/// The rank of an input tensor object after its `view` steps (only the steps that
/// values.jsonl uses; another fails the test).
fn rank_after_views(t: &Value) -> usize {
    let mut rank = shape(&t["shape"]).len();
    for step in t
        .get("view")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match step["op"].as_str().expect("view op") {
            "slice" | "t" | "transpose" | "permute" => {}
            "expand" => rank = step["args"]["shape"].as_array().expect("shape").len(),
            other => panic!("unknown view op {other}"),
        }
    }
    rank
}

/// A clamp bound: a JSON integer is an int scalar, any other number a float scalar.
fn clamp_bound(v: &Value) -> Option<OperandType> {
    match v {
        Value::Null => None,
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(OperandType::wrapped(DType::I64)),
        Value::Number(_) => Some(OperandType::wrapped(DType::F64)),
        other => panic!("bad clamp bound {other}"),
    }
}

#[test]
fn values_jsonl() {
    let mut report = Report::default();
    for case in load("values") {
        let id = case["id"].as_str().expect("id");
        let op = case["op"].as_str().expect("op");
        let args = &case["args"];
        let inputs: Vec<(OperandType, Vec<usize>)> = case["inputs"]
            .as_array()
            .expect("inputs")
            .iter()
            .map(|t| {
                let rank = rank_after_views(t);
                (
                    OperandType::tensor(dtype(&t["dtype"]), rank),
                    shape(&t["shape"]),
                )
            })
            .collect();
        let dt = |i: usize| inputs[i].0.dtype;
        let rank = |i: usize| rank_after_views(&case["inputs"][i]);
        let got =
            if let Some(bop) = binary_op(op, args.get("rounding_mode").and_then(Value::as_str)) {
                typing::binary(bop, inputs[0].0, inputs[1].0, DEFAULT_FLOAT).map(|s| s.output)
            } else {
                match op {
                    "to" => Ok(dtype(&args["dtype"])),
                    "matmul" => typing::matmul_nd(dt(0), rank(0), dt(1), rank(1)),
                    "where" => {
                        assert_eq!(dt(0), DType::Bool, "{id}: cond");
                        typing::where_(inputs[1].0, inputs[2].0, DEFAULT_FLOAT)
                    }
                    "clamp" => typing::clamp(
                        inputs[0].0,
                        clamp_bound(&args["min"]),
                        clamp_bound(&args["max"]),
                        DEFAULT_FLOAT,
                    )
                    .map(|s| s.output),
                    "cat" | "stack" => {
                        let ops: Vec<OperandType> = inputs.iter().map(|i| i.0).collect();
                        result_type(&ops, DEFAULT_FLOAT)
                    }
                    _ => reduce_like(op, args, dt(0), rank(0))
                        .unwrap_or_else(|| panic!("{id}: unknown op {op}")),
                }
            };
        let want = expected(&case["result"]);
        let want_dtype = match want {
            Expected::Dtype(d) => Some(d),
            Expected::Error(_) => None,
        };
        report.compare(id, got, &want, "not dtype-decidable");
        check_unsupported_is_storage_only(&mut report, id, want_dtype);
    }
    report.finish("values.jsonl");
    // Two empty reductions, two integer zero divisors, five matmul and two stack
    // shape mismatches.
    assert_eq!(report.count("not dtype-decidable"), 11);
    assert_eq!(report.count("extended"), 0);
    // (sub and where whose result is complex32 are computed)
    assert_eq!(report.count("unsupported"), 0);
}
