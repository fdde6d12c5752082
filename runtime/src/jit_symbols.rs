//! The Rust functions that JIT-compiled kernels call, by symbol name.
//!
//! `lazyfuse_codegen::cpu` inlines what is cheap and exact (arithmetic, compares,
//! casts, rounding to integers) and calls these for the rest: transcendentals,
//! float16/bfloat16 conversions and rounding, float8 codes, the `UnaryParamOp`
//! formulas, integer `pow`/shifts/`gcd`/`lcm`. Every function here calls the
//! interpreter's own scalar code (`interp::pointwise`, `interp::elementwise`,
//! `interp::binary_math`, `interp::float8`), so both backends share one set of
//! numerics.
//!
//! Names (one table, [`lookup`]): `lf_<op>_<f32|f64>` for real unary and binary ops
//! (the op's snake-case graph name), `lf_<op>_<int dtype>` for the integer ops (i64
//! arguments and result), `lf_nextafter_<dtype>` and `lf_nan_to_num_<dtype>` (which
//! work on the stored type), `lf_unary_param_<f32|f64>`, `lf_round_<f16|bf16>`,
//! `lf_<f16|bf16>_to_f32`, `lf_f32_to_<f16|bf16>`, `lf_decode_<float8 dtype>`,
//! `lf_encode_<float8 dtype>`, `lf_scan_log_add_exp` (logcumsumexp's step) and the
//! in-place runs and row runs of [`crate::vector_runs`] (`lf_run_<op>_f32`, `lf_row_<op>_f32`)
//! and the streamed transpose tiles (`lf_transpose_stream_<4|8>`).

use crate::interp::binary_math::{fmax, fmin, gcd, lcm, logaddexp, logaddexp2, nextafter};
use crate::interp::binary_math::{shift_left, shift_right, xlogy};
use crate::interp::elementwise::{float_div_floor, float_remainder, int_pow};
use crate::interp::float8::Format;
use crate::interp::num::Real;
use crate::interp::pointwise::{erfinv, hardsigmoid, hardswish, mish, sigmoid, silu};
use crate::interp::pointwise::{nan_to_num, param_real, Math};
use half::{bf16, f16};
use lazyfuse_ir::kernel::param_op;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A real unary function at f32 and f64: `lf_<name>_f32`, `lf_<name>_f64`.
macro_rules! real_unary {
    ($($sym:literal => $f:path),* $(,)?) => {
        [$(
            (concat!("lf_", $sym, "_f32"), {
                extern "C" fn f(x: f32) -> f32 {
                    $f(x)
                }
                f as *const u8
            }),
            (concat!("lf_", $sym, "_f64"), {
                extern "C" fn f(x: f64) -> f64 {
                    $f(x)
                }
                f as *const u8
            }),
        )*]
    };
}

/// A real binary function at f32 and f64.
macro_rules! real_binary {
    ($($sym:literal => $f:path),* $(,)?) => {
        [$(
            (concat!("lf_", $sym, "_f32"), {
                extern "C" fn f(a: f32, b: f32) -> f32 {
                    $f(a, b)
                }
                f as *const u8
            }),
            (concat!("lf_", $sym, "_f64"), {
                extern "C" fn f(a: f64, b: f64) -> f64 {
                    $f(a, b)
                }
                f as *const u8
            }),
        )*]
    };
}

/// The integer ops of one dtype: arguments and result are the values widened to
/// i64 (the generated code truncates the result back).
macro_rules! int_ops {
    ($($t:ty => $name:literal),* $(,)?) => {
        [$(
            int_ops!(@one "pow", int_pow, $t, $name),
            int_ops!(@one "bitwise_left_shift", shift_left, $t, $name),
            int_ops!(@one "bitwise_right_shift", shift_right, $t, $name),
            int_ops!(@one "gcd", gcd, $t, $name),
            int_ops!(@one "lcm", lcm, $t, $name),
        )*]
    };
    (@one $op:literal, $f:path, $t:ty, $name:literal) => {
        (concat!("lf_", $op, "_", $name), {
            extern "C" fn f(a: i64, b: i64) -> i64 {
                $f(a as $t, b as $t) as i64
            }
            f as *const u8
        })
    };
}

/// `f(x)` of a value held in f32 registers as the stored type `$s` (exact).
macro_rules! half_fns {
    ($($s:ty => $name:literal),* $(,)?) => {
        [$(
            (concat!("lf_round_", $name), {
                extern "C" fn f(x: f32) -> f32 {
                    <$s>::from_f32(x).to_f32()
                }
                f as *const u8
            }),
            (concat!("lf_", $name, "_to_f32"), {
                extern "C" fn f(bits: u32) -> f32 {
                    <$s>::from_bits(bits as u16).to_f32()
                }
                f as *const u8
            }),
            (concat!("lf_f32_to_", $name), {
                extern "C" fn f(x: f32) -> u32 {
                    u32::from(<$s>::from_f32(x).to_bits())
                }
                f as *const u8
            }),
        )*]
    };
}

/// `nextafter` and `nan_to_num` of each float dtype, on its stored type.
macro_rules! stored_fns {
    ($($s:ty, $c:ty, $to:expr, $from:expr => $name:literal),* $(,)?) => {
        [$(
            (concat!("lf_nextafter_", $name), {
                extern "C" fn f(a: $c, b: $c) -> $c {
                    let (to, from): (fn($c) -> $s, fn($s) -> $c) = ($to, $from);
                    from(nextafter(to(a), to(b)))
                }
                f as *const u8
            }),
            (concat!("lf_nan_to_num_", $name), {
                extern "C" fn f(x: $c, nan: f64, posinf: f64, neginf: f64) -> $c {
                    let (to, from): (fn($c) -> $s, fn($s) -> $c) = ($to, $from);
                    from(nan_to_num(to(x), nan, posinf, neginf))
                }
                f as *const u8
            }),
        )*]
    };
}

/// `lf_unary_param_*`: a [`lazyfuse_ir::UnaryParamOp`] passed as a kind code and
/// three parameters ([`lazyfuse_ir::kernel::param_code`]).
extern "C" fn unary_param_f32(kind: i32, p0: f64, p1: f64, p2: f64, x: f32) -> f32 {
    match param_op(i64::from(kind), [p0, p1, p2]) {
        Some(op) => param_real(op, x),
        None => f32::NAN,
    }
}

extern "C" fn unary_param_f64(kind: i32, p0: f64, p1: f64, p2: f64, x: f64) -> f64 {
    match param_op(i64::from(kind), [p0, p1, p2]) {
        Some(op) => param_real(op, x),
        None => f64::NAN,
    }
}

extern "C" fn decode<const K: usize>(code: u32) -> f32 {
    Format::ALL[K].decode(code as u8)
}

extern "C" fn encode<const K: usize>(x: f32) -> u32 {
    u32::from(Format::ALL[K].encode(x))
}

/// Every function: name and address (as `usize`, so the table can be shared).
fn table() -> &'static HashMap<String, usize> {
    static TABLE: OnceLock<HashMap<String, usize>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: Vec<(String, *const u8)> = Vec::new();
        let mut add = |entries: &[(&str, *const u8)]| {
            t.extend(entries.iter().map(|&(n, p)| (n.to_string(), p)));
        };
        add(&real_unary![
            "exp" => Real::exp,
            "log" => Real::ln,
            "sin" => Real::sin,
            "cos" => Real::cos,
            "tanh" => Real::tanh,
            "sigmoid" => sigmoid,
            "exp2" => Math::exp2,
            "expm1" => Math::exp_m1,
            "log2" => Math::log2,
            "log10" => Math::log10,
            "log1p" => Math::ln_1p,
            "tan" => Math::tan,
            "asin" => Math::asin,
            "acos" => Math::acos,
            "atan" => Math::atan,
            "sinh" => Math::sinh,
            "cosh" => Math::cosh,
            "asinh" => Math::asinh,
            "acosh" => Math::acosh,
            "atanh" => Math::atanh,
            "erf" => Math::erf,
            "erfc" => Math::erfc,
            "erfinv" => erfinv,
            "silu" => silu,
            "mish" => mish,
            "hardsigmoid" => hardsigmoid,
            "hardswish" => hardswish,
        ]);
        add(&real_binary![
            "div_floor" => float_div_floor,
            "remainder" => float_remainder,
            "fmod" => std::ops::Rem::rem,
            "pow" => Real::powf,
            "atan2" => Real::atan2,
            "fmax" => fmax,
            "fmin" => fmin,
            "hypot" => Real::hypot,
            "copysign" => Real::copysign,
            "logaddexp" => logaddexp,
            "logaddexp2" => logaddexp2,
            "xlogy" => xlogy,
        ]);
        add(&int_ops![
            u8 => "uint8", i8 => "int8", i16 => "int16", i32 => "int32", i64 => "int64",
            u16 => "uint16", u32 => "uint32", u64 => "uint64",
        ]);
        add(&half_fns![f16 => "f16", bf16 => "bf16"]);
        add(&stored_fns![
            f16, f32, f16::from_f32, f16::to_f32 => "float16",
            bf16, f32, bf16::from_f32, bf16::to_f32 => "bfloat16",
            f32, f32, |x| x, |x| x => "float32",
            f64, f64, |x| x, |x| x => "float64",
        ]);
        add(&[
            ("lf_scan_log_add_exp", scan_log_add_exp as *const u8),
            ("lf_unary_param_f32", unary_param_f32 as *const u8),
            ("lf_unary_param_f64", unary_param_f64 as *const u8),
        ]);
        add(&crate::streamed_transpose::symbols());
        t.extend(crate::vector_runs::symbols());
        let codecs: [(*const u8, *const u8); 5] = [
            (decode::<0> as *const u8, encode::<0> as *const u8),
            (decode::<1> as *const u8, encode::<1> as *const u8),
            (decode::<2> as *const u8, encode::<2> as *const u8),
            (decode::<3> as *const u8, encode::<3> as *const u8),
            (decode::<4> as *const u8, encode::<4> as *const u8),
        ];
        for (f, (d, e)) in Format::ALL.iter().zip(codecs) {
            let name = f.dtype().as_str();
            t.push((format!("lf_decode_{name}"), d));
            t.push((format!("lf_encode_{name}"), e));
        }
        t.into_iter().map(|(n, p)| (n, p as usize)).collect()
    })
}

/// One step of `logcumsumexp`'s running value (`Expr::Scan` with `LogAddExp`):
/// the interpreter's `log_add_exp(x, acc)` in float64.
extern "C" fn scan_log_add_exp(x: f64, acc: f64) -> f64 {
    crate::interp::kernels::log_add_exp(x, acc)
}

/// The address of runtime function `name`, for `CpuModule::compile`'s `symbols`.
///
/// ```
/// use lazyfuse_runtime::jit_symbols::lookup;
/// assert!(lookup("lf_tanh_f32").is_some());
/// assert!(lookup("lf_no_such_function").is_none());
/// ```
pub fn lookup(name: &str) -> Option<*const u8> {
    table().get(name).map(|&p| p as *const u8)
}

/// Every function name, sorted (for dumps and tests).
pub fn names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = table().keys().map(|s| s.as_str()).collect();
    v.sort_unstable();
    v
}
