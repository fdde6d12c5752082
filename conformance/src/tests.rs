//! The runner's own unit tests: decoding, comparison and verdicts.

use crate::compare::{compare_vals, float_close, is_wide_unsigned_kernel_gap, judge};
use crate::dispatch::clamp_bound;
use crate::values::{decode_vals, Vals};
use crate::verdict::{harness, R};
use crate::{run_case, Outcome};
use lazyfuse::half::f16;
use lazyfuse::{DType, Scalar, Tensor};
use serde_json::{json, Value};

#[test]
fn int64_extremes_decode_exactly() {
    let data: Vec<Value> =
        serde_json::from_str("[-9223372036854775808, 9223372036854775807, 18446744073709551615]")
            .unwrap();
    assert_eq!(
        decode_vals(DType::I64, &data).ok(),
        Some(Vals::Int(vec![
            i128::from(i64::MIN),
            i128::from(i64::MAX),
            i128::from(u64::MAX)
        ]))
    );
}

#[test]
fn floats_round_to_their_dtype() {
    let data = vec![json!(0.1), json!("nan"), json!("-inf"), json!(-0.0)];
    let Ok(Vals::Float(v)) = decode_vals(DType::F32, &data) else {
        panic!("decode failed")
    };
    assert_eq!(v[0], 0.1f32 as f64);
    assert!(v[1].is_nan());
    assert_eq!(v[2], f64::NEG_INFINITY);
    assert!(v[3] == 0.0 && v[3].is_sign_negative());
    let Ok(Vals::Float(h)) = decode_vals(DType::F16, &[json!(0.1)]) else {
        panic!("decode failed")
    };
    assert_eq!(h[0], f16::from_f32(0.1).to_f64());
    // A subnormal float16 must survive.
    let Ok(Vals::Float(s)) = decode_vals(DType::F16, &[json!(6e-8)]) else {
        panic!("decode failed")
    };
    assert!(s[0] > 0.0);
    let Ok(Vals::Complex(c)) = decode_vals(DType::C64, &[json!([1.5, "inf"])]) else {
        panic!("decode failed")
    };
    assert_eq!(c[0], (1.5, f64::INFINITY));
}

#[test]
fn tolerance_rules() {
    assert!(float_close(f64::NAN, f64::NAN, 0.0, 0.0));
    assert!(!float_close(1.0, f64::NAN, 1.0, 1.0));
    assert!(!float_close(f64::NAN, 1.0, 1.0, 1.0));
    assert!(float_close(f64::INFINITY, f64::INFINITY, 0.0, 0.0));
    assert!(!float_close(f64::NEG_INFINITY, f64::INFINITY, 1.0, 1.0));
    assert!(!float_close(1e300, f64::INFINITY, 1.0, 1.0));
    assert!(float_close(-0.0, 0.0, 0.0, 0.0));
    assert!(float_close(1.00001, 1.0, 1e-5, 1e-6));
    assert!(!float_close(1.0001, 1.0, 1e-5, 1e-6));
}

#[test]
fn compare_reports_first_mismatches() {
    let a = Vals::Int(vec![1, 2, 3]);
    let e = Vals::Int(vec![1, 5, 3]);
    let err = compare_vals(&a, &e, 0.0, 0.0).unwrap_err();
    assert!(err.contains("[1] expected 5, got 2"), "{err}");
    assert!(compare_vals(&a, &a, 0.0, 0.0).is_ok());
    let c = Vals::Complex(vec![(1.0, 2.0)]);
    let d = Vals::Complex(vec![(1.0, 2.5)]);
    assert!(compare_vals(&c, &d, 1e-5, 1e-6).is_err());
    assert!(compare_vals(&Vals::Bool(vec![true]), &Vals::Int(vec![1]), 0.0, 0.0).is_err());
}

#[test]
fn clamp_bounds_keep_their_category() {
    let v: Value = serde_json::from_str(r#"{"min": 1.0, "max": 4, "x": 1e2}"#).unwrap();
    assert_eq!(
        clamp_bound(v.get("min")).ok(),
        Some(Some(Scalar::Float(1.0)))
    );
    assert_eq!(clamp_bound(v.get("max")).ok(), Some(Some(Scalar::Int(4))));
    assert_eq!(
        clamp_bound(v.get("x")).ok(),
        Some(Some(Scalar::Float(100.0)))
    );
    assert_eq!(clamp_bound(Some(&Value::Null)).ok(), Some(None));
}

#[test]
fn kernel_gap_messages() {
    assert!(is_wide_unsigned_kernel_gap(
        "\"add_stub\" not implemented for 'UInt16'"
    ));
    assert!(!is_wide_unsigned_kernel_gap(
        "\"add_stub\" not implemented for 'Bool'"
    ));
    assert!(!is_wide_unsigned_kernel_gap(
        "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote UInt16 and Byte"
    ));
}

#[test]
fn unknown_ops_and_families_fail() {
    let case = json!({"id": "x", "op": "frobnicate", "input": {"dtype": "float32", "shape": [1], "data": [1.0]}, "args": {}, "result": {"dtype": "float32", "shape": [1], "data": [1.0]}});
    assert!(matches!(run_case("unary", &case), Outcome::Fail(_)));
    let case =
        json!({"id": "y", "family": "mystery", "base_shape": [2], "steps": [], "values": [0, 1]});
    assert!(matches!(run_case("views", &case), Outcome::Fail(_)));
    assert!(matches!(run_case("nonsense", &case), Outcome::Fail(_)));
}

#[test]
fn judging_errors() {
    let err =
        json!({"error": "RuntimeError", "message": "\"add_stub\" not implemented for 'UInt32'"});
    let ok = Tensor::zeros(&[1], DType::U32);
    assert_eq!(
        judge(&err, Ok(ok.clone()), |_| Ok(Outcome::Pass)),
        Outcome::Extended
    );
    let err2 = json!({"error": "RuntimeError", "message": "boom"});
    assert!(matches!(
        judge(&err2, Ok(ok), |_| Ok(Outcome::Pass)),
        Outcome::Fail(_)
    ));
    let harness_err: R<Tensor> = harness("bad case");
    assert!(matches!(
        judge(&err2, harness_err, |_| Ok(Outcome::Pass)),
        Outcome::Fail(_)
    ));
}
