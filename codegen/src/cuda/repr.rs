//! How kernel IR values are written in CUDA C: register and storage types per
//! dtype, exact float and integer literals, rounding of narrow floats, and the
//! float8 codecs' layouts.

use crate::semantics::Start;
use crate::CodegenError;
use lazyfuse_ir::DType;

pub(super) fn unsupported(what: impl std::fmt::Display, dt: DType) -> CodegenError {
    CodegenError::CudaUnsupported(format!("{what} on {dt}"))
}

/// How a dtype's values live in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rep {
    Bool,
    Int {
        c: &'static str,
        signed: bool,
        bits: u32,
    },
    F32,
    F64,
    F8,
}

pub(super) fn rep(dt: DType) -> Result<Rep, CodegenError> {
    let int = |c, signed, bits| Rep::Int { c, signed, bits };
    Ok(match dt {
        DType::Bool => Rep::Bool,
        DType::U8 => int("u8", false, 8),
        DType::I8 => int("i8", true, 8),
        DType::I16 => int("i16", true, 16),
        DType::U16 => int("u16", false, 16),
        DType::I32 => int("i32", true, 32),
        DType::U32 => int("u32", false, 32),
        DType::I64 => int("i64", true, 64),
        DType::U64 => int("u64", false, 64),
        DType::F16 | DType::BF16 | DType::F32 => Rep::F32,
        DType::F64 => Rep::F64,
        d if d.is_float8() => Rep::F8,
        d => return Err(unsupported("values in a loop kernel", d)),
    })
}

/// The C type of a register value.
pub(super) fn reg(r: Rep) -> &'static str {
    match r {
        Rep::Bool => "bool",
        Rep::Int { c, .. } => c,
        Rep::F32 => "float",
        Rep::F64 => "double",
        Rep::F8 => "u8",
    }
}

/// The C type of a stored element.
pub(super) fn storage(dt: DType) -> Result<&'static str, CodegenError> {
    Ok(match dt {
        DType::Bool => "u8",
        DType::F16 | DType::BF16 => "u16",
        _ => reg(rep(dt)?),
    })
}

/// A float literal of the compute type `r` (F32 or F64) for the f64 value `x`
/// converted as the interpreter's `c::<R>(x)` does.
pub(super) fn flit(x: f64, r: Rep) -> String {
    if r == Rep::F64 {
        if x.is_nan() {
            "lf_nan<double>()".into()
        } else if x.is_infinite() {
            format!("{}lf_inf<double>()", if x < 0.0 { "-" } else { "" })
        } else {
            let s = format!("{x:?}");
            // `1e300` is already a double literal; `1` needs a point.
            if s.contains(['.', 'e']) {
                s
            } else {
                format!("{s}.0")
            }
        }
    } else {
        let f = x as f32;
        if f.is_nan() {
            "lf_nan<float>()".into()
        } else if f.is_infinite() {
            format!("{}lf_inf<float>()", if f < 0.0 { "-" } else { "" })
        } else {
            let s = format!("{f:?}");
            if s.contains(['.', 'e']) {
                format!("{s}f")
            } else {
                format!("{s}.0f")
            }
        }
    }
}

/// An integer literal of C type `c` holding the two's complement bits of `v`.
pub(super) fn ilit(v: i128, c: &str) -> String {
    let bits = v as i64 as u64;
    if (v as i64) >= 0 && v <= i64::MAX as i128 && c != "u64" {
        if v <= i32::MAX as i128 {
            format!("({c}){v}")
        } else {
            format!("({c}){v}ll")
        }
    } else {
        format!("({c})0x{bits:x}ull")
    }
}

/// Rounds a float register holding a `dt` value to `dt` (float16/bfloat16).
pub(super) fn round(v: String, dt: DType) -> String {
    match dt {
        DType::F16 => format!("lf_round_f16({v})"),
        DType::BF16 => format!("lf_round_bf16({v})"),
        _ => v,
    }
}

/// The float8 codec arguments of `dt`: (mantissa bits, bias, specials), or `None`
/// for e8m0.
pub(super) fn f8_layout(dt: DType) -> Option<(u32, i32, u32)> {
    Some(match dt {
        DType::F8E4M3FN => (3, 7, 0),
        DType::F8E5M2 => (2, 15, 1),
        DType::F8E4M3FNUZ => (3, 8, 2),
        DType::F8E5M2FNUZ => (2, 16, 2),
        _ => return None,
    })
}

pub(super) fn f8_decode(code: &str, dt: DType) -> String {
    match f8_layout(dt) {
        Some((m, b, s)) => format!("lf_f8_decode({code}, {m}, {b}, {s})"),
        None => format!("lf_e8m0_decode({code})"),
    }
}

pub(super) fn f8_encode(f: &str, dt: DType) -> String {
    match f8_layout(dt) {
        Some((m, b, s)) => format!("lf_f8_encode({f}, {m}, {b}, {s})"),
        None => format!("lf_e8m0_encode({f})"),
    }
}

/// A starting value ([`crate::semantics`]) as a C expression of type `ty`.
pub(super) fn start(s: Start, ty: &str) -> String {
    match s {
        Start::Bool(b) => b.to_string(),
        Start::Int(v @ (0 | 1)) => format!("({ty}){v}"),
        Start::Int(v) => ilit(v, ty),
        Start::Float(x) if x.is_infinite() => {
            format!("{}lf_inf<{ty}>()", if x < 0.0 { "-" } else { "" })
        }
        Start::Float(x) => format!("({ty}){x}"),
    }
}
