//! The runner of `devices.jsonl` (tests/data/seeds/README.md): `Device` parsing,
//! printing and equality, `Device::from(int)`, and the device of a CPU tensor.

use crate::{as_i64, as_str, as_usize, field, harness, json_bool, Outcome, R};
use lazyfuse::Device;
use lazyfuse::{DType, Tensor};
use serde_json::Value;

/// Compares a device with `{type, index, str}`.
fn same_device(d: Device, expected: &Value) -> R<Outcome> {
    let want_type = as_str(field(expected, "type")?, "type")?;
    let want_index = match field(expected, "index")? {
        Value::Null => None,
        v => Some(as_usize(v, "index")?),
    };
    let want_str = as_str(field(expected, "str")?, "str")?;
    let got = (d.kind().name(), d.index(), d.to_string());
    Ok(if got == (want_type, want_index, want_str.to_string()) {
        Outcome::Pass
    } else {
        Outcome::Fail(format!(
            "expected {want_type} {want_index:?} '{want_str}', got {} {:?} '{}'",
            got.0, got.1, got.2
        ))
    })
}

/// An expected error: the message must be PyTorch's, word for word.
fn same_error(got: Result<Device, lazyfuse::Error>, expected: &Value) -> R<Outcome> {
    let message = as_str(field(expected, "message")?, "message")?;
    Ok(match got {
        Err(e) if e.to_string() == message => Outcome::Pass,
        Err(e) => Outcome::Fail(format!("message: expected '{message}', got '{e}'")),
        Ok(d) => Outcome::Fail(format!("expected '{message}', got device {d}")),
    })
}

pub(super) fn run_devices(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let expected = field(case, "result")?;
    let parsed = |key: &str| -> R<Result<Device, lazyfuse::Error>> {
        Ok(as_str(field(case, key)?, key)?.parse::<Device>())
    };
    match op {
        "parse" | "from_int" => {
            let got = if op == "parse" {
                parsed("string")?
            } else {
                Device::try_from(as_i64(field(case, "ordinal")?, "ordinal")?)
            };
            if expected.get("error").is_some() {
                return same_error(got, expected);
            }
            same_device(got?, expected)
        }
        "equal" => {
            let want = json_bool(field(expected, "value")?)?;
            let got = parsed("a")?? == parsed("b")??;
            Ok(if got == want {
                Outcome::Pass
            } else {
                Outcome::Fail(format!("equality: expected {want}, got {got}"))
            })
        }
        "tensor_device" => {
            let t = Tensor::zeros_on(&[2], DType::F32, parsed("string")??)?;
            let want = as_str(field(expected, "str")?, "str")?;
            let want_index = as_i64(field(expected, "get_device")?, "get_device")?;
            let got = (t.device().to_string(), t.get_device());
            Ok(if got == (want.to_string(), want_index) {
                Outcome::Pass
            } else {
                Outcome::Fail(format!(
                    "expected {want} {want_index}, got {} {}",
                    got.0, got.1
                ))
            })
        }
        other => harness(format!("unknown devices op '{other}'")),
    }
}
