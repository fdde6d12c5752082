//! The checks of a fill value against a dtype (PyTorch's overflow messages) and
//! the C type names they quote.

use crate::error::Result;
use lazyfuse_ir::{DType, Scalar};

/// A double as PyTorch prints it in messages (C++ `ostream` defaults, i.e. `%g` with
/// 6 significant digits): `1`, `0.5`, `1e+30`, `nan`, `-inf`.
pub(super) fn fmt_py(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{x:.5e}"); // d.ddddde±x, rounded to 6 significant digits
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa.to_string()), exp.abs())
    } else {
        trim(format!("{x:.*}", (5 - exp) as usize))
    }
}

/// PyTorch's `checked_convert` of a fill value (`full`, `fill_`): the value must fit
/// the dtype. Integer targets refuse NaN, infinities and out-of-range values (a negative
/// integer may wrap into an unsigned type whose range holds its magnitude); floating
/// targets refuse finite values beyond their largest (infinities and NaN pass where the
/// format has them); real targets refuse a complex value with an imaginary part; bool
/// takes anything.
pub(crate) fn check_fill_value(value: Scalar, dtype: DType) -> Result<()> {
    let fits = match (value, dtype) {
        (_, DType::Bool) => true,
        (Scalar::Complex(_, im), d) if im != 0.0 && !d.is_complex() => false,
        (Scalar::Bool(_), _) => true,
        (v, d) if d.is_integer() => integer_fits(v, d),
        (v, d) => {
            let part = |x: f64| {
                x.is_nan() || (x.is_infinite() && has_infinity(d)) || x.abs() <= largest_finite(d)
            };
            match v {
                Scalar::Complex(re, im) => part(re) && part(im),
                other => part(other.to_f64()),
            }
        }
    };
    if fits {
        return Ok(());
    }
    Err(lazyfuse_ir::Error::invalid(
        "fill",
        format!(
            "value cannot be converted to type {} without overflow",
            c_type_name(dtype)
        ),
    )
    .into())
}

/// Whether a host number converts to an integer dtype without overflow.
pub(super) fn integer_fits(value: Scalar, dtype: DType) -> bool {
    let Some((lo, hi)) = dtype.integer_range() else {
        return false;
    };
    match value {
        // Negative integers wrap into unsigned types whose range holds their magnitude.
        Scalar::Int(v) if lo == 0 && v < 0 => -(v as i128) <= hi,
        Scalar::Int(v) => (lo..=hi).contains(&(v as i128)),
        Scalar::Float(f) | Scalar::Complex(f, _) => !f.is_nan() && f >= lo as f64 && f <= hi as f64,
        Scalar::Bool(_) => true,
    }
}

pub(super) fn has_infinity(dtype: DType) -> bool {
    !matches!(
        dtype,
        DType::F8E4M3FN | DType::F8E4M3FNUZ | DType::F8E5M2FNUZ | DType::F8E8M0FNU
    )
}

/// The largest finite value of a floating (or complex part's) dtype.
pub(super) fn largest_finite(dtype: DType) -> f64 {
    match dtype.to_real() {
        DType::F16 => 65504.0,
        DType::BF16 => 3.3895313892515355e38,
        DType::F32 => f32::MAX as f64,
        DType::F8E4M3FN => 448.0,
        DType::F8E5M2 | DType::F8E5M2FNUZ => 57344.0,
        DType::F8E4M3FNUZ => 240.0,
        DType::F8E8M0FNU => 2f64.powi(127),
        _ => f64::MAX,
    }
}

/// The C++ element type PyTorch names in conversion errors.
pub(crate) fn c_type_name(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "bool",
        DType::U8 => "uint8_t",
        DType::I8 => "int8_t",
        DType::I16 => "int16_t",
        DType::I32 => "int",
        DType::I64 => "int64_t",
        DType::U16 => "uint16_t",
        DType::U32 => "uint32_t",
        DType::U64 => "uint64_t",
        DType::F16 => "c10::Half",
        DType::BF16 => "c10::BFloat16",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::C32 => "c10::complex<c10::Half>",
        DType::BC32 => "c10::complex<c10::BFloat16>",
        DType::C64 => "c10::complex<float>",
        DType::C128 => "c10::complex<double>",
        other => other.torch_name(),
    }
}
