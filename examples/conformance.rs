//! The conformance runner: checks lazyfuse against the PyTorch-generated cases in
//! `tests/data/conformance/*.jsonl` (schema: `tests/data/conformance/SCHEMA.md`).
//!
//! `cargo run --release --example conformance -- DIR` runs every `*.jsonl` file of `DIR`
//! and prints, per file, `name.jsonl: P passed, F failed, U unsupported`, then one
//! readable diff per failure, and last `conformance: P passed, F failed, U unsupported`.
//! The exit code is non-zero when any case failed. `tests/conformance.rs` includes this
//! file as a module and calls [`run_dir`], so the example and the test share one runner.
//!
//! How a case is judged (SCHEMA.md §1.5, §1.6):
//! * expected result: dtype, shape, then every element (bool/int exact, floats within the
//!   case's `rtol`/`atol`, NaN/inf exact, sign of zero ignored, complex per part);
//! * expected error: the op must fail, when it is built or when it is realized;
//! * **unsupported**: lazyfuse answered `Err` with `is_unsupported()` for a case whose
//!   expected dtype is `complex32`/`bcomplex32` (dtypes lazyfuse has no kernels for); any
//!   other "not supported yet" counts as a failure, so gaps stay visible;
//! * **extended**: the reference has no kernel for a wide unsigned dtype (`"..." not
//!   implemented for 'UInt16'`) and lazyfuse computes a result: lazyfuse deliberately goes
//!   beyond PyTorch there, so the case passes and is listed separately;
//! * an unknown `op`/`family`, a malformed case or a panic is a failure, never a skip.

use lazyfuse::half::{bf16, f16};
use lazyfuse::{BinaryOp, Complex, DType, Element, RoundingMode, Scalar, Tensor};
use serde_json::Value;
use std::cell::Cell;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Once;

#[path = "conformance/devices.rs"]
mod devices;
#[path = "conformance/gradients.rs"]
mod gradients;
#[path = "conformance/memory_format.rs"]
mod memory_format;
#[path = "conformance/shell_dtypes.rs"]
mod shell_dtypes;
#[path = "conformance/value_views.rs"]
mod value_views;

// ---------------------------------------------------------------------------------------
// Results of a run

/// The verdict on one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The case matched the reference.
    Pass,
    /// The reference had no kernel for a wide unsigned dtype and lazyfuse computed one.
    Extended,
    /// lazyfuse reported a gap on a `complex32`/`bcomplex32` result.
    Unsupported,
    /// Anything else; the text says what differed.
    Fail(String),
}

/// Counts of one file.
#[derive(Clone, Debug, Default)]
pub struct FileSummary {
    /// The file name (`promotion.jsonl`).
    pub name: String,
    /// Cases that matched (the extended ones included).
    pub passed: usize,
    /// Cases that did not.
    pub failed: usize,
    /// Cases on dtypes lazyfuse does not support.
    pub unsupported: usize,
}

/// Counts and failure texts of a whole run.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// One entry per file, in the order they ran.
    pub files: Vec<FileSummary>,
    /// All passed cases.
    pub passed: usize,
    /// All failed cases.
    pub failed: usize,
    /// All unsupported cases.
    pub unsupported: usize,
    /// Ids of cases where lazyfuse computed what the reference refuses for lack of a kernel.
    pub extended: Vec<String>,
    /// `id: diff` of every failure.
    pub failures: Vec<String>,
}

// ---------------------------------------------------------------------------------------
// Errors inside a case

/// Why a case could not produce a value: the library refused (`Lib`), or the runner could
/// not make sense of the case (`Harness`; always a failure, never an "expected error").
enum RunErr {
    Lib(lazyfuse::Error),
    Harness(String),
}

impl From<lazyfuse::Error> for RunErr {
    fn from(e: lazyfuse::Error) -> Self {
        RunErr::Lib(e)
    }
}

type R<T> = std::result::Result<T, RunErr>;

fn harness<T>(msg: impl Into<String>) -> R<T> {
    Err(RunErr::Harness(msg.into()))
}

impl RunErr {
    fn text(self) -> String {
        match self {
            RunErr::Lib(e) => e.to_string(),
            RunErr::Harness(m) => m,
        }
    }
}

/// A tensor object of the schema (§1.4: `dtype`, `shape`, `data`; its `view` steps are
/// not applied) as a contiguous tensor. The PyTorch-generated oracle tests
/// (`tests/ops_*.rs`) decode their tensors with it, so that one decoder serves all.
pub fn tensor_object(obj: &Value) -> Result<Tensor, String> {
    build_base_tensor(obj).map_err(RunErr::text)
}

/// A float element of the schema: a JSON number or `"nan"`, `"inf"`, `"-inf"`.
pub fn float_element(v: &Value) -> Result<f64, String> {
    json_f64(v).map_err(RunErr::text)
}

// ---------------------------------------------------------------------------------------
// JSON access

fn field<'a>(v: &'a Value, key: &str) -> R<&'a Value> {
    v.get(key)
        .ok_or_else(|| RunErr::Harness(format!("missing key '{key}'")))
}

fn as_str<'a>(v: &'a Value, what: &str) -> R<&'a str> {
    v.as_str()
        .ok_or_else(|| RunErr::Harness(format!("{what}: expected a string, got {v}")))
}

fn as_i64(v: &Value, what: &str) -> R<i64> {
    v.as_i64()
        .ok_or_else(|| RunErr::Harness(format!("{what}: expected an integer, got {v}")))
}

fn as_isize(v: &Value, what: &str) -> R<isize> {
    let i = as_i64(v, what)?;
    isize::try_from(i).map_err(|_| RunErr::Harness(format!("{what}: {i} out of range")))
}

fn as_usize(v: &Value, what: &str) -> R<usize> {
    v.as_u64()
        .and_then(|u| usize::try_from(u).ok())
        .ok_or_else(|| RunErr::Harness(format!("{what}: expected a non-negative integer, got {v}")))
}

fn as_array<'a>(v: &'a Value, what: &str) -> R<&'a Vec<Value>> {
    v.as_array()
        .ok_or_else(|| RunErr::Harness(format!("{what}: expected an array, got {v}")))
}

fn isize_list(v: &Value, what: &str) -> R<Vec<isize>> {
    as_array(v, what)?
        .iter()
        .map(|x| as_isize(x, what))
        .collect()
}

fn usize_list(v: &Value, what: &str) -> R<Vec<usize>> {
    as_array(v, what)?
        .iter()
        .map(|x| as_usize(x, what))
        .collect()
}

fn arg_isize(args: &Value, key: &str) -> R<isize> {
    as_isize(field(args, key)?, key)
}

fn arg_usize(args: &Value, key: &str) -> R<usize> {
    as_usize(field(args, key)?, key)
}

/// An optional integer argument: absent or `null` is `None`.
fn arg_opt_isize(args: &Value, key: &str) -> R<Option<isize>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => as_isize(v, key).map(Some),
    }
}

fn dtype_of(v: &Value) -> R<DType> {
    let name = as_str(v, "dtype")?;
    name.parse::<DType>()
        .map_err(|_| RunErr::Harness(format!("unknown dtype name '{name}'")))
}

/// A float element: a JSON number or `"nan"`, `"inf"`, `"-inf"`.
fn json_f64(v: &Value) -> R<f64> {
    match v {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| RunErr::Harness(format!("bad float {n}"))),
        Value::String(s) => match s.as_str() {
            "nan" => Ok(f64::NAN),
            "inf" => Ok(f64::INFINITY),
            "-inf" => Ok(f64::NEG_INFINITY),
            _ => harness(format!("bad float string '{s}'")),
        },
        _ => harness(format!("expected a float, got {v}")),
    }
}

/// An integer element, parsed without going through `f64` (int64/uint64 extremes occur).
fn json_int(v: &Value) -> R<i128> {
    if let Some(i) = v.as_i64() {
        Ok(i128::from(i))
    } else if let Some(u) = v.as_u64() {
        Ok(i128::from(u))
    } else {
        harness(format!("expected an integer, got {v}"))
    }
}

fn json_bool(v: &Value) -> R<bool> {
    v.as_bool()
        .ok_or_else(|| RunErr::Harness(format!("expected a bool, got {v}")))
}

fn json_complex(v: &Value) -> R<(f64, f64)> {
    match v.as_array().map(Vec::as_slice) {
        Some([re, im]) => Ok((json_f64(re)?, json_f64(im)?)),
        _ => harness(format!("expected [re, im], got {v}")),
    }
}

/// Rounds a decoded `f64` to the float dtype (or complex part dtype) `dtype` and widens it
/// back, so that the expected value is exactly the recorded value of that dtype.
fn round_to(dtype: DType, x: f64) -> f64 {
    match dtype.to_real() {
        DType::F16 => f16::from_f64(x).to_f64(),
        DType::BF16 => bf16::from_f64(x).to_f64(),
        DType::F32 => x as f32 as f64,
        _ => x,
    }
}

// ---------------------------------------------------------------------------------------
// Element values, widened for comparison

/// The elements of a tensor, widened to one type per category.
#[derive(Clone, Debug, PartialEq)]
enum Vals {
    Bool(Vec<bool>),
    Int(Vec<i128>),
    Float(Vec<f64>),
    Complex(Vec<(f64, f64)>),
}

impl Vals {
    fn len(&self) -> usize {
        match self {
            Vals::Bool(v) => v.len(),
            Vals::Int(v) => v.len(),
            Vals::Float(v) => v.len(),
            Vals::Complex(v) => v.len(),
        }
    }
}

/// Decodes a JSON `data` list of `dtype` elements (§1.4).
fn decode_vals(dtype: DType, data: &[Value]) -> R<Vals> {
    Ok(if dtype == DType::Bool {
        Vals::Bool(data.iter().map(json_bool).collect::<R<_>>()?)
    } else if dtype.is_integer() {
        Vals::Int(data.iter().map(json_int).collect::<R<_>>()?)
    } else if dtype.is_complex() {
        Vals::Complex(
            data.iter()
                .map(|v| {
                    let (re, im) = json_complex(v)?;
                    Ok((round_to(dtype, re), round_to(dtype, im)))
                })
                .collect::<R<_>>()?,
        )
    } else if dtype.is_floating_point() {
        Vals::Float(
            data.iter()
                .map(|v| Ok(round_to(dtype, json_f64(v)?)))
                .collect::<R<_>>()?,
        )
    } else {
        return harness(format!("no element decoding for dtype {dtype}"));
    })
}

fn ints<T: TryFrom<i128>>(v: &[i128], dtype: DType) -> R<Vec<T>> {
    v.iter()
        .map(|&i| {
            T::try_from(i).map_err(|_| RunErr::Harness(format!("{i} does not fit in {dtype}")))
        })
        .collect()
}

/// A contiguous tensor of `dtype` and `shape` holding `vals`.
/// Whether input tensors go to `cuda:0` (`--device cuda`): the op then runs there.
static ON_CUDA: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// An input tensor on the device the cases run on (`--device`).
fn on_target_device(t: Tensor) -> R<Tensor> {
    if ON_CUDA.load(std::sync::atomic::Ordering::Relaxed) {
        Ok(t.to_device(lazyfuse::Device::cuda(0))?)
    } else {
        Ok(t)
    }
}

fn tensor_from_vals(dtype: DType, shape: &[usize], vals: &Vals) -> R<Tensor> {
    on_target_device(tensor_from_vals_on_cpu(dtype, shape, vals)?)
}

fn tensor_from_vals_on_cpu(dtype: DType, shape: &[usize], vals: &Vals) -> R<Tensor> {
    let t = match (dtype, vals) {
        (DType::Bool, Vals::Bool(v)) => Tensor::from_vec(v.clone(), shape),
        (DType::U8, Vals::Int(v)) => Tensor::from_vec(ints::<u8>(v, dtype)?, shape),
        (DType::I8, Vals::Int(v)) => Tensor::from_vec(ints::<i8>(v, dtype)?, shape),
        (DType::I16, Vals::Int(v)) => Tensor::from_vec(ints::<i16>(v, dtype)?, shape),
        (DType::I32, Vals::Int(v)) => Tensor::from_vec(ints::<i32>(v, dtype)?, shape),
        (DType::I64, Vals::Int(v)) => Tensor::from_vec(ints::<i64>(v, dtype)?, shape),
        (DType::U16, Vals::Int(v)) => Tensor::from_vec(ints::<u16>(v, dtype)?, shape),
        (DType::U32, Vals::Int(v)) => Tensor::from_vec(ints::<u32>(v, dtype)?, shape),
        (DType::U64, Vals::Int(v)) => Tensor::from_vec(ints::<u64>(v, dtype)?, shape),
        (DType::F16, Vals::Float(v)) => {
            Tensor::from_vec(v.iter().map(|&x| f16::from_f64(x)).collect(), shape)
        }
        (DType::BF16, Vals::Float(v)) => {
            Tensor::from_vec(v.iter().map(|&x| bf16::from_f64(x)).collect(), shape)
        }
        (DType::F32, Vals::Float(v)) => {
            Tensor::from_vec(v.iter().map(|&x| x as f32).collect(), shape)
        }
        (DType::F64, Vals::Float(v)) => Tensor::from_vec(v.clone(), shape),
        (DType::C64, Vals::Complex(v)) => Tensor::from_vec(
            v.iter()
                .map(|&(re, im)| Complex::new(re as f32, im as f32))
                .collect(),
            shape,
        ),
        (DType::C128, Vals::Complex(v)) => Tensor::from_vec(
            v.iter().map(|&(re, im)| Complex::new(re, im)).collect(),
            shape,
        ),
        // the parts are half values, exact in complex64
        (DType::C32 | DType::BC32, Vals::Complex(_)) => {
            return Ok(tensor_from_vals_on_cpu(DType::C64, shape, vals)?.to_dtype(dtype)?)
        }
        _ => return harness(format!("cannot build an input tensor of dtype {dtype}")),
    };
    Ok(t?)
}

fn read_as<T: Element>(t: &Tensor, f: impl Fn(&T) -> f64) -> lazyfuse::Result<Vec<f64>> {
    Ok(t.to_vec::<T>()?.iter().map(f).collect())
}

fn read_ints<T: Element + Into<i128>>(t: &Tensor) -> lazyfuse::Result<Vals> {
    Ok(Vals::Int(
        t.to_vec::<T>()?.into_iter().map(Into::into).collect(),
    ))
}

/// Reads a tensor's elements (logical row-major order), widened.
fn read_vals(t: &Tensor) -> R<Vals> {
    Ok(match t.dtype() {
        DType::Bool => Vals::Bool(t.to_vec::<bool>()?),
        DType::U8 => read_ints::<u8>(t)?,
        DType::I8 => read_ints::<i8>(t)?,
        DType::I16 => read_ints::<i16>(t)?,
        DType::I32 => read_ints::<i32>(t)?,
        DType::I64 => read_ints::<i64>(t)?,
        DType::U16 => read_ints::<u16>(t)?,
        DType::U32 => read_ints::<u32>(t)?,
        DType::U64 => read_ints::<u64>(t)?,
        DType::F16 => Vals::Float(read_as::<f16>(t, |x| x.to_f64())?),
        DType::BF16 => Vals::Float(read_as::<bf16>(t, |x| x.to_f64())?),
        DType::F32 => Vals::Float(read_as::<f32>(t, |&x| f64::from(x))?),
        DType::F64 => Vals::Float(t.to_vec::<f64>()?),
        DType::C64 => Vals::Complex(
            t.to_vec::<Complex<f32>>()?
                .iter()
                .map(|c| (f64::from(c.re), f64::from(c.im)))
                .collect(),
        ),
        DType::C128 => Vals::Complex(
            t.to_vec::<Complex<f64>>()?
                .iter()
                .map(|c| (c.re, c.im))
                .collect(),
        ),
        // (each half part widens exactly)
        DType::C32 | DType::BC32 => read_vals(&t.to_dtype(DType::C64)?)?,
        other => return harness(format!("the runner cannot read elements of dtype {other}")),
    })
}

/// A genuine copy (new storage) of `t`, contiguous, through the host.
fn deep_copy(t: &Tensor) -> R<Tensor> {
    let vals = read_vals(t)?;
    tensor_from_vals(t.dtype(), &t.shape(), &vals)
}

// ---------------------------------------------------------------------------------------
// Comparison

/// `|actual - expected| <= atol + rtol * |expected|` with the NaN/inf rules of §1.5.
fn float_close(actual: f64, expected: f64, rtol: f64, atol: f64) -> bool {
    if expected.is_nan() {
        return actual.is_nan();
    }
    if actual.is_nan() {
        return false;
    }
    if expected.is_infinite() {
        return actual == expected;
    }
    (actual - expected).abs() <= atol + rtol * expected.abs()
}

fn fmt_f(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{x:?}")
    }
}

/// Compares element lists; `Err` names the first mismatches (at most five).
fn compare_vals(actual: &Vals, expected: &Vals, rtol: f64, atol: f64) -> Result<(), String> {
    if actual.len() != expected.len() {
        return Err(format!(
            "element count: expected {}, got {}",
            expected.len(),
            actual.len()
        ));
    }
    let mut bad: Vec<String> = Vec::new();
    let mut count = 0usize;
    let mut note = |i: usize, e: String, a: String| {
        count += 1;
        if bad.len() < 5 {
            bad.push(format!("[{i}] expected {e}, got {a}"));
        }
    };
    match (actual, expected) {
        (Vals::Bool(a), Vals::Bool(e)) => {
            for (i, (x, y)) in a.iter().zip(e).enumerate() {
                if x != y {
                    note(i, y.to_string(), x.to_string());
                }
            }
        }
        (Vals::Int(a), Vals::Int(e)) => {
            for (i, (x, y)) in a.iter().zip(e).enumerate() {
                if x != y {
                    note(i, y.to_string(), x.to_string());
                }
            }
        }
        (Vals::Float(a), Vals::Float(e)) => {
            for (i, (&x, &y)) in a.iter().zip(e).enumerate() {
                if !float_close(x, y, rtol, atol) {
                    note(i, fmt_f(y), fmt_f(x));
                }
            }
        }
        (Vals::Complex(a), Vals::Complex(e)) => {
            for (i, (&(xr, xi), &(yr, yi))) in a.iter().zip(e).enumerate() {
                if !float_close(xr, yr, rtol, atol) || !float_close(xi, yi, rtol, atol) {
                    note(
                        i,
                        format!("({}, {})", fmt_f(yr), fmt_f(yi)),
                        format!("({}, {})", fmt_f(xr), fmt_f(xi)),
                    );
                }
            }
        }
        _ => return Err("element kinds differ".into()),
    }
    if count == 0 {
        Ok(())
    } else {
        Err(format!(
            "{count} of {} elements differ: {}{}",
            expected.len(),
            bad.join("; "),
            if count > bad.len() { "; ..." } else { "" }
        ))
    }
}

fn shape_str(s: &[usize]) -> String {
    format!("{s:?}")
}

/// One line describing a tensor: dtype, shape and (when readable and short) values.
fn describe(t: &Tensor) -> String {
    let mut s = format!("dtype {} shape {}", t.dtype(), shape_str(&t.shape()));
    if t.numel() <= 8 {
        if let Ok(v) = read_vals(t) {
            let _ = write!(s, " values {}", vals_str(&v));
        }
    }
    s
}

fn vals_str(v: &Vals) -> String {
    match v {
        Vals::Bool(v) => format!("{v:?}"),
        Vals::Int(v) => format!("{v:?}"),
        Vals::Float(v) => format!(
            "[{}]",
            v.iter().map(|&x| fmt_f(x)).collect::<Vec<_>>().join(", ")
        ),
        Vals::Complex(v) => format!(
            "[{}]",
            v.iter()
                .map(|&(r, i)| format!("({}, {})", fmt_f(r), fmt_f(i)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn is_reduced_complex(dtype: &str) -> bool {
    matches!(dtype, "complex32" | "bcomplex32")
}

/// True for the reference's missing-kernel error on a wide unsigned dtype, e.g.
/// `"add_stub" not implemented for 'UInt16'`.
fn is_wide_unsigned_kernel_gap(message: &str) -> bool {
    message.starts_with('"')
        && ["'UInt16'", "'UInt32'", "'UInt64'"]
            .iter()
            .any(|d| message.contains(&format!("\" not implemented for {d}")))
}

fn lib_err_text(e: &lazyfuse::Error) -> String {
    if e.is_unsupported() {
        format!("unsupported: {e}")
    } else {
        e.to_string()
    }
}

/// Judges a case whose outcome is a tensor (or an error) against its `result` object:
/// `check` compares a successful tensor with the expected result.
fn judge(expected: &Value, got: R<Tensor>, check: impl FnOnce(&Tensor) -> R<Outcome>) -> Outcome {
    if let Some(class) = expected.get("error") {
        let message = expected
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("");
        return match got {
            Err(RunErr::Harness(m)) => Outcome::Fail(format!("runner: {m}")),
            Err(RunErr::Lib(e)) if e.is_unsupported() => Outcome::Fail(format!(
                "expected error {}: {message}, got unsupported: {e}",
                class.as_str().unwrap_or("?")
            )),
            Err(RunErr::Lib(_)) => Outcome::Pass,
            Ok(_) if is_wide_unsigned_kernel_gap(message) => Outcome::Extended,
            Ok(t) => Outcome::Fail(format!(
                "expected error {}: {message}, got Ok({})",
                class.as_str().unwrap_or("?"),
                describe(&t)
            )),
        };
    }
    let expected_dtype = expected.get("dtype").and_then(Value::as_str).unwrap_or("");
    let got = got.and_then(|t| check(&t));
    match got {
        Ok(o) => o,
        Err(RunErr::Harness(m)) => Outcome::Fail(format!("runner: {m}")),
        Err(RunErr::Lib(e)) if e.is_unsupported() && is_reduced_complex(expected_dtype) => {
            Outcome::Unsupported
        }
        Err(RunErr::Lib(e)) => Outcome::Fail(format!("unexpected error: {}", lib_err_text(&e))),
    }
}

/// Checks dtype and shape of `t` against a result object, then its elements when the
/// object has `data`. Reading the elements realizes the tensor.
fn check_result(t: &Tensor, expected: &Value) -> R<Outcome> {
    let dtype = dtype_of(field(expected, "dtype")?)?;
    let shape = usize_list(field(expected, "shape")?, "shape")?;
    if t.dtype() != dtype {
        return Ok(Outcome::Fail(format!(
            "dtype: expected {dtype}, got {} (shape {})",
            t.dtype(),
            shape_str(&t.shape())
        )));
    }
    if t.shape() != shape {
        return Ok(Outcome::Fail(format!(
            "shape: expected {}, got {} (dtype {dtype})",
            shape_str(&shape),
            shape_str(&t.shape())
        )));
    }
    let Some(data) = expected.get("data") else {
        // Only dtype and shape are recorded; still run it, since an error found at
        // realize time is an error of the op.
        t.realize()?;
        return Ok(Outcome::Pass);
    };
    let exp = decode_vals(dtype, as_array(data, "data")?)?;
    let rtol = expected.get("rtol").and_then(Value::as_f64).unwrap_or(0.0);
    let atol = expected.get("atol").and_then(Value::as_f64).unwrap_or(0.0);
    let actual = read_vals(t)?;
    Ok(match compare_vals(&actual, &exp, rtol, atol) {
        Ok(()) => Outcome::Pass,
        Err(d) => Outcome::Fail(format!("values ({dtype} {}): {d}", shape_str(&shape))),
    })
}

/// Realizes `t` so that errors found only at execution time surface as errors of the op.
fn realized(t: Tensor) -> R<Tensor> {
    t.realize()?;
    Ok(t)
}

// ---------------------------------------------------------------------------------------
// Building inputs

/// A binary-op operand: a tensor or a host scalar.
enum Arg {
    T(Tensor),
    S(Scalar),
}

impl Arg {
    fn describe(&self) -> String {
        match self {
            Arg::T(t) => format!("tensor {} {}", t.dtype(), shape_str(&t.shape())),
            Arg::S(s) => format!("scalar {s}"),
        }
    }
}

/// A tensor object (§1.4), with its optional `view` steps applied.
fn build_tensor(obj: &Value) -> R<Tensor> {
    let base = build_base_tensor(obj)?;
    apply_input_view(base, obj)
}

/// The contiguous tensor of a tensor object, before its `view` steps.
fn build_base_tensor(obj: &Value) -> R<Tensor> {
    let dtype = dtype_of(field(obj, "dtype")?)?;
    let shape = usize_list(field(obj, "shape")?, "shape")?;
    let data = as_array(field(obj, "data")?, "data")?;
    let vals = decode_vals(dtype, data)?;
    tensor_from_vals(dtype, &shape, &vals)
}

fn apply_input_view(mut t: Tensor, obj: &Value) -> R<Tensor> {
    if let Some(steps) = obj.get("view") {
        for step in as_array(steps, "view")? {
            t = apply_view_step(&t, step)?;
        }
    }
    Ok(t)
}

/// A host scalar operand (§1.7).
fn build_scalar(obj: &Value) -> R<Scalar> {
    let value = field(obj, "value")?;
    Ok(match as_str(field(obj, "scalar_type")?, "scalar_type")? {
        "bool" => Scalar::Bool(json_bool(value)?),
        "int" => Scalar::Int(as_i64(value, "int scalar")?),
        // Always a double, even when it looks integral (`3.0`).
        "float" => Scalar::Float(json_f64(value)?),
        "complex" => {
            let (re, im) = json_complex(value)?;
            Scalar::Complex(re, im)
        }
        other => return harness(format!("unknown scalar_type '{other}'")),
    })
}

/// A promotion.jsonl operand: every element 1 (`true`), or the alternating `cond`.
fn build_promotion_operand(obj: &Value, alternating: bool) -> R<Arg> {
    let kind = as_str(field(obj, "kind")?, "kind")?;
    match kind {
        "scalar" => Ok(Arg::S(build_scalar(obj)?)),
        "tensor" | "zerodim" => {
            let dtype = dtype_of(field(obj, "dtype")?)?;
            let shape = usize_list(field(obj, "shape")?, "shape")?;
            let t = if alternating {
                let n: usize = shape.iter().product();
                let v: Vec<bool> = (0..n).map(|i| i % 2 == 0).collect();
                Tensor::from_vec(v, &shape)?
            } else {
                Tensor::ones(&shape, dtype)
            };
            Ok(Arg::T(on_target_device(t)?))
        }
        other => harness(format!("unknown operand kind '{other}'")),
    }
}

/// An inplace.jsonl / values-style operand with data.
fn build_data_operand(obj: &Value) -> R<Arg> {
    match as_str(field(obj, "kind")?, "kind")? {
        "scalar" => Ok(Arg::S(build_scalar(obj)?)),
        "tensor" | "zerodim" => Ok(Arg::T(build_tensor(obj)?)),
        other => harness(format!("unknown operand kind '{other}'")),
    }
}

fn rounding_mode(v: Option<&Value>) -> R<Option<RoundingMode>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s == "floor" => Ok(Some(RoundingMode::Floor)),
        Some(Value::String(s)) if s == "trunc" => Ok(Some(RoundingMode::Trunc)),
        Some(other) => harness(format!("unknown rounding_mode {other}")),
    }
}

// ---------------------------------------------------------------------------------------
// Ops

/// Calls `$recv.$method(x)` with the operand `$arg` as `&Tensor` or `Scalar`.
macro_rules! with_arg {
    ($recv:expr, $method:ident, $arg:expr $(, $extra:expr)*) => {
        match $arg {
            Arg::T(t) => $recv.$method(t $(, $extra)*),
            Arg::S(s) => $recv.$method(*s $(, $extra)*),
        }
    };
}

/// `a OP b` for the binary ops of §2 (`where` excluded).
fn binary(op: &str, a: &Arg, b: &Arg, mode: Option<RoundingMode>) -> R<Tensor> {
    let a = match a {
        Arg::T(t) => t,
        Arg::S(s) => return binary_scalar_left(op, *s, b, mode),
    };
    Ok(match op {
        "add" => with_arg!(a, add, b)?,
        "sub" => with_arg!(a, sub, b)?,
        "mul" => with_arg!(a, mul, b)?,
        "div" => match mode {
            None => with_arg!(a, div, b)?,
            Some(m) => with_arg!(a, div_mode, b, m)?,
        },
        "floor_divide" => with_arg!(a, floor_divide, b)?,
        "remainder" => with_arg!(a, remainder, b)?,
        "fmod" => with_arg!(a, fmod, b)?,
        "pow" => with_arg!(a, pow, b)?,
        "maximum" => with_arg!(a, maximum, b)?,
        "minimum" => with_arg!(a, minimum, b)?,
        "atan2" => with_arg!(a, atan2, b)?,
        "eq" => with_arg!(a, eq, b)?,
        "ne" => with_arg!(a, ne, b)?,
        "lt" => with_arg!(a, lt, b)?,
        "le" => with_arg!(a, le, b)?,
        "gt" => with_arg!(a, gt, b)?,
        "ge" => with_arg!(a, ge, b)?,
        "logical_and" => with_arg!(a, logical_and, b)?,
        "logical_or" => with_arg!(a, logical_or, b)?,
        "logical_xor" => with_arg!(a, logical_xor, b)?,
        "bitwise_and" => with_arg!(a, bitwise_and, b)?,
        "bitwise_or" => with_arg!(a, bitwise_or, b)?,
        "bitwise_xor" => with_arg!(a, bitwise_xor, b)?,
        "fmax" | "fmin" => match b {
            Arg::T(b) if op == "fmax" => a.fmax(b)?,
            Arg::T(b) => a.fmin(b)?,
            Arg::S(_) => return harness(format!("'{op}' takes two tensors")),
        },
        other => return harness(format!("unknown binary op '{other}'")),
    })
}

/// `scalar OP tensor` through `Tensor::binary`, the form behind Python's reflected
/// operators (`2 - t`), so promotion and errors are the library's own for that order.
fn binary_scalar_left(op: &str, s: Scalar, b: &Arg, mode: Option<RoundingMode>) -> R<Tensor> {
    let Arg::T(b) = b else {
        return harness(format!("'{op}' with two scalar operands"));
    };
    let op = match (op, mode) {
        ("div", Some(RoundingMode::Floor)) | ("floor_divide", None) => BinaryOp::DivFloor,
        ("div", Some(RoundingMode::Trunc)) => BinaryOp::DivTrunc,
        ("div", None) => BinaryOp::Div,
        ("add", None) => BinaryOp::Add,
        ("sub", None) => BinaryOp::Sub,
        ("mul", None) => BinaryOp::Mul,
        ("remainder", None) => BinaryOp::Remainder,
        ("fmod", None) => BinaryOp::Fmod,
        ("pow", None) => BinaryOp::Pow,
        ("maximum", None) => BinaryOp::Maximum,
        ("minimum", None) => BinaryOp::Minimum,
        ("atan2", None) => BinaryOp::Atan2,
        ("eq", None) => BinaryOp::Eq,
        ("ne", None) => BinaryOp::Ne,
        ("lt", None) => BinaryOp::Lt,
        ("le", None) => BinaryOp::Le,
        ("gt", None) => BinaryOp::Gt,
        ("ge", None) => BinaryOp::Ge,
        ("logical_and", None) => BinaryOp::LogicalAnd,
        ("logical_or", None) => BinaryOp::LogicalOr,
        ("logical_xor", None) => BinaryOp::LogicalXor,
        ("bitwise_and", None) => BinaryOp::BitwiseAnd,
        ("bitwise_or", None) => BinaryOp::BitwiseOr,
        ("bitwise_xor", None) => BinaryOp::BitwiseXor,
        (other, mode) => {
            return harness(format!(
                "unknown binary op '{other}' (rounding mode {mode:?})"
            ))
        }
    };
    Ok(Tensor::binary(op, s, b)?)
}

/// `where(cond, a, b)` with tensor or scalar branches.
fn where_op(cond: &Tensor, a: &Arg, b: &Arg) -> R<Tensor> {
    Ok(match (a, b) {
        (Arg::T(x), Arg::T(y)) => Tensor::where_cond(cond, x, y)?,
        (Arg::T(x), Arg::S(y)) => Tensor::where_cond(cond, x, *y)?,
        (Arg::S(x), Arg::T(y)) => Tensor::where_cond(cond, *x, y)?,
        (Arg::S(x), Arg::S(y)) => Tensor::where_cond(cond, *x, *y)?,
    })
}

/// The unary ops and simple reductions of unary.jsonl (§4).
fn unary(op: &str, x: &Tensor, args: &Value) -> R<Tensor> {
    let dim = || arg_isize(args, "dim");
    Ok(match op {
        "neg" => x.neg()?,
        "abs" => x.abs()?,
        "sign" => x.sign()?,
        "exp" => x.exp()?,
        "log" => x.log()?,
        "sqrt" => x.sqrt()?,
        "rsqrt" => x.rsqrt()?,
        "sin" => x.sin()?,
        "cos" => x.cos()?,
        "tanh" => x.tanh()?,
        "sigmoid" => x.sigmoid()?,
        "relu" => x.relu()?,
        "floor" => x.floor()?,
        "ceil" => x.ceil()?,
        "round" => x.round()?,
        "trunc" => x.trunc()?,
        "reciprocal" => x.reciprocal()?,
        "logical_not" => x.logical_not()?,
        "bitwise_not" => x.bitwise_not()?,
        "isnan" => x.isnan()?,
        // unary math, predicates and activations
        "sgn" => x.sgn()?,
        "exp2" => x.exp2()?,
        "expm1" => x.expm1()?,
        "log2" => x.log2()?,
        "log10" => x.log10()?,
        "log1p" => x.log1p()?,
        "tan" => x.tan()?,
        "asin" => x.asin()?,
        "acos" => x.acos()?,
        "atan" => x.atan()?,
        "sinh" => x.sinh()?,
        "cosh" => x.cosh()?,
        "asinh" => x.asinh()?,
        "acosh" => x.acosh()?,
        "atanh" => x.atanh()?,
        "erf" => x.erf()?,
        "erfc" => x.erfc()?,
        "erfinv" => x.erfinv()?,
        "frac" => x.frac()?,
        "square" => x.square()?,
        "positive" => x.positive()?,
        "isinf" => x.isinf()?,
        "isposinf" => x.isposinf()?,
        "isneginf" => x.isneginf()?,
        "isfinite" => x.isfinite()?,
        "isreal" => x.isreal()?,
        "signbit" => x.signbit()?,
        "silu" => x.silu()?,
        "mish" => x.mish()?,
        "hardsigmoid" => x.hardsigmoid()?,
        "hardswish" => x.hardswish()?,
        "relu6" => x.relu6()?,
        "sum" => x.sum(&[], false)?,
        "prod" => x.prod(&[], false)?,
        "mean" => x.mean(&[], false)?,
        "amax" => x.amax(&[], false)?,
        "amin" => x.amin(&[], false)?,
        "argmax" => x.argmax(None, false)?,
        "argmin" => x.argmin(None, false)?,
        "cumsum" => x.cumsum(dim()?)?,
        "softmax" => x.softmax(dim()?)?,
        "log_softmax" => x.log_softmax(dim()?)?,
        "all" => x.all(&[], false)?,
        "any" => x.any(&[], false)?,
        "nansum" => x.nansum(&[], false)?,
        "cumprod" => x.cumprod(dim()?)?,
        "logsumexp" => x.logsumexp(&[dim()?], false)?,
        other => return harness(format!("op '{other}' is not in the lazyfuse API")),
    })
}

/// The reduction dims of values.jsonl: `null` and `[]` mean all dims.
fn reduce_dims(args: &Value) -> R<Vec<isize>> {
    match args.get("dim") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v @ Value::Array(_)) => isize_list(v, "dim"),
        Some(v) => Ok(vec![as_isize(v, "dim")?]),
    }
}

fn keepdim(args: &Value) -> R<bool> {
    match args.get("keepdim") {
        None | Some(Value::Null) => Ok(false),
        Some(v) => json_bool(v),
    }
}

/// A clamp bound: a JSON integer is an int scalar, a number with a fraction or an
/// exponent a float scalar (the difference decides the result dtype).
fn clamp_bound(v: Option<&Value>) -> R<Option<Scalar>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.is_f64() => {
            Ok(Some(Scalar::Float(n.as_f64().unwrap_or(f64::NAN))))
        }
        Some(v) => Ok(Some(Scalar::Int(as_i64(v, "clamp bound")?))),
    }
}

/// The ops of values.jsonl (§7).
fn values_op(op: &str, inputs: &[Tensor], args: &Value) -> R<Tensor> {
    let one = |n: usize| -> R<()> {
        if inputs.len() == n {
            Ok(())
        } else {
            harness(format!("'{op}' expects {n} inputs, got {}", inputs.len()))
        }
    };
    match op {
        "add" | "sub" | "mul" | "div" | "floor_divide" | "remainder" | "fmod" | "pow"
        | "maximum" | "minimum" | "atan2" | "fmax" | "fmin" => {
            one(2)?;
            let mode = rounding_mode(args.get("rounding_mode"))?;
            let (a, b) = (Arg::T(inputs[0].clone()), Arg::T(inputs[1].clone()));
            binary(op, &a, &b, mode)
        }
        "exp" | "log" | "sqrt" | "tanh" | "sigmoid" | "neg" | "abs" => {
            one(1)?;
            unary(op, &inputs[0], args)
        }
        "to" => {
            one(1)?;
            Ok(inputs[0].to_dtype(dtype_of(field(args, "dtype")?)?)?)
        }
        "sum" | "mean" | "amax" | "amin" | "var" | "std" => {
            one(1)?;
            let (x, dims, kd) = (&inputs[0], reduce_dims(args)?, keepdim(args)?);
            Ok(match op {
                "sum" => x.sum(&dims, kd)?,
                "mean" => x.mean(&dims, kd)?,
                "amax" => x.amax(&dims, kd)?,
                "amin" => x.amin(&dims, kd)?,
                "var" => x.var(&dims, as_i64(field(args, "correction")?, "correction")?, kd)?,
                _ => x.std(&dims, as_i64(field(args, "correction")?, "correction")?, kd)?,
            })
        }
        "prod" | "argmax" | "argmin" => {
            one(1)?;
            let (x, dim, kd) = (&inputs[0], arg_opt_isize(args, "dim")?, keepdim(args)?);
            Ok(match op {
                "prod" => x.prod(dim.as_slice(), kd)?,
                "argmax" => x.argmax(dim, kd)?,
                _ => x.argmin(dim, kd)?,
            })
        }
        "cumsum" | "softmax" | "log_softmax" => {
            one(1)?;
            unary(op, &inputs[0], args)
        }
        "nansum" | "logsumexp" => {
            one(1)?;
            let (x, dims, kd) = (&inputs[0], reduce_dims(args)?, keepdim(args)?);
            Ok(if op == "nansum" {
                x.nansum(&dims, kd)?
            } else {
                x.logsumexp(&dims, kd)?
            })
        }
        "cumprod" => {
            one(1)?;
            unary(op, &inputs[0], args)
        }
        "matmul" => {
            one(2)?;
            Ok(inputs[0].matmul(&inputs[1])?)
        }
        "where" => {
            one(3)?;
            Ok(Tensor::where_cond(&inputs[0], &inputs[1], &inputs[2])?)
        }
        "clamp" => {
            one(1)?;
            let min = clamp_bound(args.get("min"))?;
            let max = clamp_bound(args.get("max"))?;
            Ok(inputs[0].clamp(min, max)?)
        }
        "clamp_tensor" => {
            one(3)?;
            Ok(inputs[0].clamp_tensor(Some(&inputs[1]), Some(&inputs[2]))?)
        }
        "cat" | "stack" => {
            let refs: Vec<&Tensor> = inputs.iter().collect();
            let dim = arg_isize(args, "dim")?;
            Ok(if op == "cat" {
                Tensor::cat(&refs, dim)?
            } else {
                Tensor::stack(&refs, dim)?
            })
        }
        other => harness(format!("op '{other}' is not in the lazyfuse API")),
    }
}

/// Piece `index` (Python-style, negatives count from the end) of a list of views.
fn piece(mut pieces: Vec<Tensor>, index: isize, what: &str) -> R<Tensor> {
    let n = pieces.len() as isize;
    let i = if index < 0 { index + n } else { index };
    if i < 0 || i >= n {
        return harness(format!("{what}: piece {index} of {n}"));
    }
    Ok(pieces.swap_remove(i as usize))
}

/// One view op of §6.3 applied to `t`.
fn apply_view_step(t: &Tensor, step: &Value) -> R<Tensor> {
    let op = as_str(field(step, "op")?, "op")?;
    let empty = Value::Object(Default::default());
    let a = step.get("args").unwrap_or(&empty);
    Ok(match op {
        "view" => t.view(&isize_list(field(a, "shape")?, "shape")?)?,
        "reshape" => t.reshape(&isize_list(field(a, "shape")?, "shape")?)?,
        "transpose" => t.transpose(arg_isize(a, "dim0")?, arg_isize(a, "dim1")?)?,
        "swapaxes" => t.swapaxes(arg_isize(a, "axis0")?, arg_isize(a, "axis1")?)?,
        "permute" => t.permute(&isize_list(field(a, "dims")?, "dims")?)?,
        "expand" => t.expand(&isize_list(field(a, "shape")?, "shape")?)?,
        "expand_as" => {
            let shape = usize_list(field(a, "other_shape")?, "other_shape")?;
            t.expand_as(&Tensor::zeros(&shape, DType::F32))?
        }
        "narrow" => t.narrow(
            arg_isize(a, "dim")?,
            arg_isize(a, "start")?,
            arg_usize(a, "length")?,
        )?,
        "select" => t.select(arg_isize(a, "dim")?, arg_isize(a, "index")?)?,
        "slice" => t.slice(
            arg_isize(a, "dim")?,
            arg_opt_isize(a, "start")?,
            arg_opt_isize(a, "stop")?,
            arg_usize(a, "step")?,
        )?,
        "squeeze" => match a.get("dim") {
            Some(dims) if dims.is_array() => t.squeeze_dims(&isize_list(dims, "dim")?)?,
            _ => match arg_opt_isize(a, "dim")? {
                None => t.squeeze()?,
                Some(d) => t.squeeze_dim(d)?,
            },
        },
        "unsqueeze" => t.unsqueeze(arg_isize(a, "dim")?)?,
        "diagonal" => t.diagonal(
            arg_isize(a, "offset")?,
            arg_isize(a, "dim1")?,
            arg_isize(a, "dim2")?,
        )?,
        "as_strided" => t.as_strided(
            &usize_list(field(a, "size")?, "size")?,
            &isize_list(field(a, "stride")?, "stride")?,
            arg_usize(a, "storage_offset")?,
        )?,
        "unfold" => t.unfold(
            arg_isize(a, "dimension")?,
            arg_usize(a, "size")?,
            arg_usize(a, "step")?,
        )?,
        "movedim" if field(a, "source")?.is_array() => t.movedims(
            &isize_list(field(a, "source")?, "source")?,
            &isize_list(field(a, "destination")?, "destination")?,
        )?,
        "movedim" => t.movedim(arg_isize(a, "source")?, arg_isize(a, "destination")?)?,
        "t" => t.t()?,
        "T" => t.T()?,
        "mT" => t.mt()?,
        "mH" => t.mh()?,
        "H" => t.h()?,
        "adjoint" => t.adjoint()?,
        "swapdims" => t.swapdims(arg_isize(a, "dim0")?, arg_isize(a, "dim1")?)?,
        "view_as" | "reshape_as" => {
            let shape = usize_list(field(a, "other_shape")?, "other_shape")?;
            let other = Tensor::zeros(&shape, DType::F32);
            if op == "view_as" {
                t.view_as(&other)?
            } else {
                t.reshape_as(&other)?
            }
        }
        "tensor_split" | "hsplit" | "vsplit" | "dsplit" => {
            let pieces = match (a.get("sections"), op) {
                (Some(n), "tensor_split") => {
                    t.tensor_split(as_usize(n, "sections")?, arg_isize(a, "dim")?)?
                }
                (Some(n), "hsplit") => t.hsplit(as_usize(n, "sections")?)?,
                (Some(n), "vsplit") => t.vsplit(as_usize(n, "sections")?)?,
                (Some(n), _) => t.dsplit(as_usize(n, "sections")?)?,
                (None, _) => {
                    let ix = isize_list(field(a, "indices")?, "indices")?;
                    match op {
                        "tensor_split" => t.tensor_split_indices(&ix, arg_isize(a, "dim")?)?,
                        "hsplit" => t.hsplit_indices(&ix)?,
                        "vsplit" => t.vsplit_indices(&ix)?,
                        _ => t.dsplit_indices(&ix)?,
                    }
                }
            };
            piece(pieces, arg_isize(a, "index")?, op)?
        }
        "split_with_sizes" => {
            let sizes = usize_list(field(a, "split_sizes")?, "split_sizes")?;
            let pieces = t.split_with_sizes(&sizes, arg_isize(a, "dim")?)?;
            piece(pieces, arg_isize(a, "index")?, "split_with_sizes")?
        }
        "flatten" => t.flatten(arg_isize(a, "start_dim")?, arg_isize(a, "end_dim")?)?,
        "unflatten" => t.unflatten(
            arg_isize(a, "dim")?,
            &isize_list(field(a, "sizes")?, "sizes")?,
        )?,
        "split" => {
            let dim = arg_isize(a, "dim")?;
            let sections = field(a, "split_size_or_sections")?;
            let pieces = if sections.is_array() {
                t.split_sizes(&usize_list(sections, "split_size_or_sections")?, dim)?
            } else {
                t.split(as_usize(sections, "split_size_or_sections")?, dim)?
            };
            piece(pieces, arg_isize(a, "index")?, "split")?
        }
        "chunk" => {
            let pieces = t.chunk(arg_usize(a, "chunks")?, arg_isize(a, "dim")?)?;
            piece(pieces, arg_isize(a, "index")?, "chunk")?
        }
        "unbind" => {
            let pieces = t.unbind(arg_isize(a, "dim")?)?;
            piece(pieces, arg_isize(a, "index")?, "unbind")?
        }
        "contiguous" => t.contiguous()?,
        other => return harness(format!("unknown view op '{other}'")),
    })
}

// ---------------------------------------------------------------------------------------
// The files

/// promotion.jsonl (§2): result dtype and shape of one binary op.
fn run_promotion(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let expected = field(case, "result")?;
    let got = (|| {
        let a = build_promotion_operand(field(case, "a")?, false)?;
        let b = build_promotion_operand(field(case, "b")?, false)?;
        let t = if op == "where" {
            let Arg::T(cond) = build_promotion_operand(field(case, "cond")?, true)? else {
                return harness("cond must be a tensor");
            };
            where_op(&cond, &a, &b)?
        } else {
            binary(op, &a, &b, rounding_mode(case.get("rounding_mode"))?)?
        };
        realized(t)
    })();
    Ok(judge(expected, got, |t| check_result(t, expected)))
}

/// The in-place op `a.op_(b)` (§3).
fn inplace_op(op: &str, a: &Tensor, b: &Arg, mode: Option<RoundingMode>) -> R<()> {
    match op {
        "add_" => with_arg!(a, add_, b)?,
        "sub_" => with_arg!(a, sub_, b)?,
        "mul_" => with_arg!(a, mul_, b)?,
        "div_" => match mode {
            None => with_arg!(a, div_, b)?,
            Some(m) => with_arg!(a, div_mode_, b, m)?,
        },
        "floor_divide_" => with_arg!(a, floor_divide_, b)?,
        "remainder_" => with_arg!(a, remainder_, b)?,
        "fmod_" => with_arg!(a, fmod_, b)?,
        "pow_" => with_arg!(a, pow_, b)?,
        "atan2_" => with_arg!(a, atan2_, b)?,
        "bitwise_and_" => with_arg!(a, bitwise_and_, b)?,
        "bitwise_or_" => with_arg!(a, bitwise_or_, b)?,
        "bitwise_xor_" => with_arg!(a, bitwise_xor_, b)?,
        "clamp_min_" => with_arg!(a, clamp_min_, b)?,
        "maximum_out_self" => match b {
            Arg::T(b) => a.write_out(&a.maximum(b)?)?,
            Arg::S(s) => a.write_out(&a.maximum(*s)?)?,
        },
        "copy_" => match b {
            Arg::T(src) => a.copy_(src)?,
            Arg::S(_) => return harness("copy_ from a scalar"),
        },
        other => return harness(format!("op '{other}' is not in the lazyfuse API")),
    }
    Ok(())
}

/// inplace.jsonl (§3): values of the destination (and its base) after `a.op_(b)`.
fn run_inplace(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let family = as_str(field(case, "family")?, "family")?;
    if !matches!(
        family,
        "dtype_matrix"
            | "dtype_sample"
            | "wide_unsigned"
            | "broadcast_shape"
            | "noncontiguous_destination"
            | "aliasing"
    ) {
        return harness(format!("unknown family '{family}'"));
    }
    let expected = field(case, "result")?;
    let a_obj = field(case, "a")?;
    let base = build_base_tensor(a_obj)?;
    let dest = apply_input_view(base.clone(), a_obj)?;
    let b_obj = field(case, "b")?;
    let b = if as_str(field(b_obj, "kind")?, "kind")? == "alias_of_a" {
        Arg::T(match as_str(field(b_obj, "alias")?, "alias")? {
            "self" => dest.clone(),
            "t" => dest.t()?,
            "row0" => dest.select(0, 0)?,
            "clone_t" => deep_copy(&dest.t()?)?,
            other => return harness(format!("unknown alias '{other}'")),
        })
    } else {
        build_data_operand(b_obj)?
    };
    let mode = rounding_mode(case.get("rounding_mode"))?;
    let got = inplace_op(op, &dest, &b, mode).and_then(|()| realized(dest.clone()));
    let described = b.describe();
    let outcome = judge(expected, got, |t| {
        let o = check_result(t, expected)?;
        if o != Outcome::Pass {
            return Ok(o);
        }
        match case.get("a_base_after") {
            None => Ok(Outcome::Pass),
            Some(after) => Ok(match check_result(&base, after)? {
                Outcome::Fail(m) => Outcome::Fail(format!("a_base_after: {m}")),
                o => o,
            }),
        }
    });
    Ok(match outcome {
        Outcome::Fail(m) => Outcome::Fail(format!("{m} [b: {described}]")),
        o => o,
    })
}

/// unary.jsonl (§4).
fn run_unary(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let empty = Value::Object(Default::default());
    let args = case.get("args").unwrap_or(&empty);
    let expected = field(case, "result")?;
    let got = build_tensor(field(case, "input")?)
        .and_then(|x| unary(op, &x, args))
        .and_then(realized);
    Ok(judge(expected, got, |t| check_result(t, expected)))
}

/// values.jsonl (§7).
fn run_values(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let empty = Value::Object(Default::default());
    let args = case.get("args").unwrap_or(&empty);
    let expected = field(case, "result")?;
    let got = as_array(field(case, "inputs")?, "inputs")
        .and_then(|ins| ins.iter().map(build_tensor).collect::<R<Vec<_>>>())
        .and_then(|inputs| values_op(op, &inputs, args))
        .and_then(realized);
    Ok(judge(expected, got, |t| check_result(t, expected)))
}

/// broadcast.jsonl (§5): result shapes of float32 zero tensors.
fn run_broadcast(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let expected = field(case, "result")?;
    let shapes: Vec<Vec<usize>> = as_array(field(case, "shapes")?, "shapes")?
        .iter()
        .map(|s| usize_list(s, "shape"))
        .collect::<R<_>>()?;
    let zeros = |i: usize, dtype: DType| -> R<Tensor> {
        match shapes.get(i) {
            Some(s) => Ok(Tensor::zeros(s, dtype)),
            None => harness(format!("'{op}' needs shape #{i}")),
        }
    };
    let got = (|| {
        let t = match op {
            "add" => zeros(0, DType::F32)?.add(&zeros(1, DType::F32)?)?,
            "where" => Tensor::where_cond(
                &zeros(0, DType::Bool)?,
                &zeros(1, DType::F32)?,
                &zeros(2, DType::F32)?,
            )?,
            "broadcast_to" => {
                zeros(0, DType::F32)?.expand(&isize_list(field(case, "target")?, "target")?)?
            }
            "broadcast_shapes" => {
                let mut acc = zeros(0, DType::F32)?;
                for i in 1..shapes.len() {
                    acc = acc.add(&zeros(i, DType::F32)?)?;
                }
                acc
            }
            "matmul" => zeros(0, DType::F32)?.matmul(&zeros(1, DType::F32)?)?,
            other => return harness(format!("unknown broadcast op '{other}'")),
        };
        realized(t)
    })();
    Ok(judge(expected, got, |t| {
        let shape = usize_list(field(expected, "shape")?, "shape")?;
        Ok(if t.shape() == shape {
            Outcome::Pass
        } else {
            Outcome::Fail(format!(
                "shape: expected {}, got {}",
                shape_str(&shape),
                shape_str(&t.shape())
            ))
        })
    }))
}

/// Compares a view with a step record (§6.2), strictly.
fn check_step(t: &Tensor, base: &Tensor, rec: &Value) -> R<Option<String>> {
    let mut diffs = Vec::new();
    let shape = usize_list(field(rec, "shape")?, "shape")?;
    if t.shape() != shape {
        diffs.push(format!("shape expected {shape:?} got {:?}", t.shape()));
    }
    let strides = isize_list(field(rec, "strides")?, "strides")?;
    if t.strides() != strides {
        diffs.push(format!(
            "strides expected {strides:?} got {:?}",
            t.strides()
        ));
    }
    let offset = as_usize(field(rec, "storage_offset")?, "storage_offset")?;
    if t.storage_offset() != offset {
        diffs.push(format!(
            "storage_offset expected {offset} got {}",
            t.storage_offset()
        ));
    }
    let contiguous = json_bool(field(rec, "is_contiguous")?)?;
    if t.is_contiguous() != contiguous {
        diffs.push(format!(
            "is_contiguous expected {contiguous} got {}",
            t.is_contiguous()
        ));
    }
    let shares = json_bool(field(rec, "shares_storage_with_base")?)?;
    if t.shares_storage(base) != shares {
        diffs.push(format!(
            "shares_storage_with_base expected {shares} got {}",
            !shares
        ));
    }
    Ok(if diffs.is_empty() {
        None
    } else {
        Some(diffs.join(", "))
    })
}

/// Applies and checks a chain of step records; `Err(outcome)` stops the case.
fn run_chain(base: &Tensor, steps: &Value, what: &str) -> R<Result<Tensor, Outcome>> {
    let mut t = base.clone();
    for (i, step) in as_array(steps, what)?.iter().enumerate() {
        let op = step.get("op").and_then(Value::as_str).unwrap_or("?");
        t = match apply_view_step(&t, step) {
            Ok(v) => v,
            Err(RunErr::Lib(e)) => {
                return Ok(Err(Outcome::Fail(format!(
                    "{what}[{i}] {op} {}: unexpected error: {}",
                    step.get("args").unwrap_or(&Value::Null),
                    lib_err_text(&e)
                ))))
            }
            Err(h) => return Err(h),
        };
        if let Some(d) = check_step(&t, base, step)? {
            return Ok(Err(Outcome::Fail(format!(
                "{what}[{i}] {op} {}: {d}",
                step.get("args").unwrap_or(&Value::Null)
            ))));
        }
    }
    Ok(Ok(t))
}

fn read_i64s(t: &Tensor) -> R<Vec<i64>> {
    Ok(t.to_vec::<i64>()?)
}

fn check_i64s(t: &Tensor, expected: &Value, what: &str) -> R<Option<String>> {
    let exp: Vec<i64> = as_array(expected, what)?
        .iter()
        .map(|v| as_i64(v, what))
        .collect::<R<_>>()?;
    let got = match read_i64s(t) {
        Ok(v) => v,
        Err(RunErr::Lib(e)) => {
            return Ok(Some(format!(
                "{what}: unexpected error: {}",
                lib_err_text(&e)
            )))
        }
        Err(h) => return Err(h),
    };
    Ok((got != exp).then(|| format!("{what}: expected {exp:?}, got {got:?}")))
}

/// The write op of §6.5.
fn write_op(t: &Tensor, w: &Value) -> R<()> {
    let op = as_str(field(w, "op")?, "op")?;
    let args = field(w, "args")?;
    match op {
        "add_" => t.add_(as_i64(field(args, "other")?, "other")?)?,
        "mul_" => t.mul_(as_i64(field(args, "other")?, "other")?)?,
        "fill_" => {
            let v = field(args, "value")?;
            match v.as_i64() {
                Some(i) => t.fill_(i)?,
                None => t.fill_(json_f64(v)?)?,
            }
        }
        other => return harness(format!("unknown write op '{other}'")),
    }
    Ok(())
}

/// views.jsonl (§6).
fn run_views(case: &Value) -> R<Outcome> {
    let family = as_str(field(case, "family")?, "family")?;
    if !matches!(
        family,
        "chain"
            | "view_on_noncontiguous"
            | "reshape_on_noncontiguous"
            | "write_through_view"
            | "write_to_expanded"
            | "cross_view_write"
            | "overlap_fill"
    ) {
        return harness(format!("unknown family '{family}'"));
    }
    let base_shape = usize_list(field(case, "base_shape")?, "base_shape")?;
    let numel: usize = base_shape.iter().product();
    let shape_i: Vec<isize> = base_shape.iter().map(|&s| s as isize).collect();
    let base = Tensor::arange(0.0, numel as f64, 1.0, DType::I64)?.reshape(&shape_i)?;
    // The observer is taken from the base before anything is written.
    let observer = match case.get("observer_steps") {
        Some(steps) => match run_chain(&base, steps, "observer_steps")? {
            Ok(t) => Some(t),
            Err(o) => return Ok(o),
        },
        None => None,
    };
    let t = match run_chain(&base, field(case, "steps")?, "steps")? {
        Ok(t) => t,
        Err(o) => return Ok(o),
    };
    if let Some(err) = case.get("error") {
        let op = err.get("op").and_then(Value::as_str).unwrap_or("?");
        let got = apply_view_step(&t, err).and_then(realized);
        let expected =
            serde_json::json!({"error": err.get("error"), "message": err.get("message")});
        return Ok(match judge(&expected, got, |_| Ok(Outcome::Pass)) {
            Outcome::Fail(m) => Outcome::Fail(format!(
                "{op} {}: {m}",
                err.get("args").unwrap_or(&Value::Null)
            )),
            o => o,
        });
    }
    if let Some(w) = case.get("write") {
        let got = write_op(&t, w).and_then(|()| realized(t.clone()));
        if let Some(we) = case.get("write_error") {
            return Ok(match judge(we, got, |_| Ok(Outcome::Pass)) {
                Outcome::Fail(m) => Outcome::Fail(format!("write {w}: {m}")),
                o => o,
            });
        }
        match got {
            Ok(_) => {}
            Err(RunErr::Lib(e)) => {
                return Ok(Outcome::Fail(format!(
                    "write {w}: unexpected error: {}",
                    lib_err_text(&e)
                )))
            }
            Err(h) => return Err(h),
        }
        let mut diffs = Vec::new();
        for (key, tensor) in [
            ("view_after", Some(&t)),
            ("base_after", Some(&base)),
            ("observer_after", observer.as_ref()),
        ] {
            if let Some(exp) = case.get(key) {
                let Some(tensor) = tensor else {
                    return harness(format!("{key} without observer_steps"));
                };
                diffs.extend(check_i64s(tensor, exp, key)?);
            }
        }
        return Ok(if diffs.is_empty() {
            Outcome::Pass
        } else {
            Outcome::Fail(format!("write {w}: {}", diffs.join("; ")))
        });
    }
    let values = field(case, "values")?;
    Ok(match check_i64s(&t, values, "values")? {
        None => Outcome::Pass,
        Some(d) => Outcome::Fail(d),
    })
}

// ---------------------------------------------------------------------------------------
// Driving

thread_local! {
    /// True while this thread runs a case, whose panics are caught and reported.
    static IN_CASE: Cell<bool> = const { Cell::new(false) };
}

/// Installs (once) a panic hook that stays silent for panics inside a case (they are
/// caught and reported as failures; the default hook would print a banner in the
/// middle of the report) and defers to the previous hook everywhere else.
fn install_quiet_panic_hook() {
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
fn case_label(case: &Value) -> String {
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

#[allow(dead_code)] // unused when tests/conformance.rs includes this file as a module
fn main() {
    // `conformance [DIR] [--backend jit|interp|cuda-host|cuda] [--device cpu|cuda] [--cuda-compile-check]`
    // --backend cuda: CPU tensors whose kernels run on cuda:0 (buffers copied there and
    // back per kernel); --device cuda: tensors on cuda:0.
    // --cuda-compile-check: every schedule's kernels are also compiled to CUDA C and
    // by NVRTC for sm_90 (values still from the CPU backend; a compile failure fails
    // the case).
    let mut dir = "tests/data/conformance".to_string();
    let mut args = std::env::args().skip(1);
    let mut check = false;
    while let Some(a) = args.next() {
        if a == "--device" {
            // `--device cuda`: every input tensor is moved to cuda:0, so the ops run
            // there on device-resident buffers and the results are read back (with
            // `LAZYFUSE_CUDA_EMULATION=1`, on the host emulation of the device);
            // `--device cpu`: the default.
            let cuda = match args.next().as_deref() {
                Some("cuda") | Some("cuda:0") => true,
                Some("cpu") => false,
                other => {
                    eprintln!("conformance: --device takes cpu or cuda, not {other:?}");
                    std::process::exit(2);
                }
            };
            ON_CUDA.store(cuda, std::sync::atomic::Ordering::Relaxed);
        } else if a == "--cuda-compile-check" {
            check = true;
            lazyfuse::set_cuda_compile_check(true);
        } else if a == "--backend" {
            let name = args.next().unwrap_or_default();
            match name.parse::<lazyfuse::CpuBackend>() {
                Ok(b) => lazyfuse::set_cpu_backend(b),
                Err(e) => {
                    eprintln!("conformance: {e}");
                    std::process::exit(2);
                }
            }
        } else {
            dir = a;
        }
    }
    if ON_CUDA.load(std::sync::atomic::Ordering::Relaxed) {
        println!(
            "device: cuda:0{}",
            if lazyfuse::cuda_emulation() {
                " (host emulation)"
            } else {
                ""
            }
        );
    }
    match lazyfuse::cpu_backend() {
        Ok(b) => println!("backend: {b:?}"),
        Err(e) => {
            eprintln!("conformance: {e}");
            std::process::exit(2);
        }
    }
    let summary = run_dir(Path::new(&dir));
    if check {
        let (units, kernels) = lazyfuse::cuda_compile_check_counts();
        println!(
            "cuda compile check: {kernels} kernels in {units} translation units compiled for {} by NVRTC",
            lazyfuse::CHECK_ARCH
        );
    }
    if summary.failed > 0 {
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn int64_extremes_decode_exactly() {
        let data: Vec<Value> = serde_json::from_str(
            "[-9223372036854775808, 9223372036854775807, 18446744073709551615]",
        )
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
        let case = json!({"id": "y", "family": "mystery", "base_shape": [2], "steps": [], "values": [0, 1]});
        assert!(matches!(run_case("views", &case), Outcome::Fail(_)));
        assert!(matches!(run_case("nonsense", &case), Outcome::Fail(_)));
    }

    #[test]
    fn judging_errors() {
        let err = json!({"error": "RuntimeError", "message": "\"add_stub\" not implemented for 'UInt32'"});
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
}
