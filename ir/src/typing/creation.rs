//! Dtype rules of the creation ops: `eye`, `linspace`, `rand`, `randn`, `randint`.

use super::computable;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// `torch.eye`'s dtypes: everything but `uint16`/`uint32`/`uint64` and the half
/// complex types (PyTorch's `"eye" not implemented for 'UInt16'`). The float8 dtypes
/// work (a bool cast), as in PyTorch.
///
/// ```
/// use lazyfuse_ir::{typing, DType};
/// assert!(typing::eye(DType::F8E4M3FN).is_ok());
/// assert_eq!(typing::eye(DType::U64).unwrap_err().to_string(), "\"eye\" not implemented for 'UInt64'");
/// ```
pub fn eye(dtype: DType) -> Result<()> {
    match dtype {
        DType::U16 | DType::U32 | DType::U64 | DType::C32 | DType::BC32 => {
            Err(Error::not_implemented("eye", dtype))
        }
        _ => Ok(()),
    }
}

/// `torch.linspace`'s dtypes when its kernel runs (`steps > 1`; PyTorch fills
/// shorter results without the kernel, for every dtype): no bool, wide unsigned,
/// half complex or float8 (`"linspace_cpu" not implemented for 'Bool'`).
///
/// ```
/// use lazyfuse_ir::{typing, DType};
/// assert!(typing::linspace(DType::I8).is_ok());
/// assert!(typing::linspace(DType::Bool).is_err());
/// ```
pub fn linspace(dtype: DType) -> Result<()> {
    match dtype {
        DType::Bool | DType::U16 | DType::U32 | DType::U64 | DType::C32 | DType::BC32 => {
            Err(Error::not_implemented("linspace_cpu", dtype))
        }
        d if d.is_float8() => Err(Error::not_implemented("linspace_cpu", d)),
        _ => Ok(()),
    }
}

/// Whether `rand`/`randn` can fill a dtype: real floating (not float8) or complex.
pub(super) fn random_float(dtype: DType) -> bool {
    (dtype.is_floating_point() && !dtype.is_float8()) || dtype.is_complex()
}

/// `torch.rand`'s dtypes: floating and complex; others are refused by
/// `check_uniform_bounds` even for empty results. complex32/bcomplex32 are computed by
/// PyTorch but storage-only here (`Unsupported`).
///
/// ```
/// use lazyfuse_ir::{typing, DType};
/// assert!(typing::rand(DType::C64, 3).is_ok());
/// assert_eq!(
///     typing::rand(DType::I64, 3).unwrap_err().to_string(),
///     "\"check_uniform_bounds\" not implemented for 'Long'"
/// );
/// ```
pub fn rand(dtype: DType, numel: usize) -> Result<()> {
    if !random_float(dtype) {
        return Err(Error::not_implemented("check_uniform_bounds", dtype));
    }
    if numel > 0 {
        computable(dtype)?;
    }
    Ok(())
}

/// `torch.randn`'s dtypes: floating and complex (`"normal_kernel_cpu" not implemented
/// for 'Long'`); an empty result skips the kernel and takes any dtype.
///
/// ```
/// use lazyfuse_ir::{typing, DType};
/// assert!(typing::randn(DType::I64, 0).is_ok());
/// assert!(typing::randn(DType::I64, 1).is_err());
/// ```
pub fn randn(dtype: DType, numel: usize) -> Result<()> {
    if numel == 0 {
        return Ok(());
    }
    if !random_float(dtype) {
        return Err(Error::not_implemented("normal_kernel_cpu", dtype));
    }
    computable(dtype)
}

/// `torch.randint(low, high)`'s checks in PyTorch's order: `low < high`, the dtype
/// (not complex, not float8), then `low` and `high - 1` within the dtype's range
/// (messages name the C++ type: "from is out of bounds for unsigned char").
///
/// ```
/// use lazyfuse_ir::{typing, DType};
/// assert!(typing::randint(0, 256, DType::U8).is_ok());
/// assert_eq!(
///     typing::randint(0, 300, DType::U8).unwrap_err().to_string(),
///     "to - 1 is out of bounds for unsigned char"
/// );
/// assert_eq!(
///     typing::randint(5, 5, DType::I64).unwrap_err().to_string(),
///     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"
/// );
/// ```
pub fn randint(low: i64, high: i64, dtype: DType) -> Result<()> {
    if low >= high {
        return Err(Error::invalid(
            "randint",
            format!("random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"),
        ));
    }
    if dtype.is_float8() || dtype == DType::F4E2M1FNX2 {
        return Err(Error::not_implemented("random_update_from_to", dtype));
    }
    let (lo, hi, c_name): (i128, i128, &str) = match dtype {
        DType::Bool => (0, 1, "bool"),
        DType::U8 => (0, 255, "unsigned char"),
        DType::I8 => (-128, 127, "signed char"),
        DType::I16 => (i16::MIN.into(), i16::MAX.into(), "short int"),
        DType::I32 => (i32::MIN.into(), i32::MAX.into(), "int"),
        DType::I64 => (i64::MIN.into(), i64::MAX.into(), "long int"),
        DType::U16 => (0, u16::MAX.into(), "short unsigned int"),
        DType::U32 => (0, u32::MAX.into(), "unsigned int"),
        DType::U64 => (0, u64::MAX.into(), "long unsigned int"),
        DType::F16 => (-65504, 65504, "c10::Half"),
        DType::BF16 | DType::F32 | DType::F64 => (i64::MIN.into(), i64::MAX.into(), "float"),
        _ => {
            return Err(Error::invalid(
                "randint",
                "check_random_bounds handles only integral, floating-point and boolean types",
            ))
        }
    };
    let out = |what: &str| {
        Err(Error::invalid(
            "randint",
            format!("{what} is out of bounds for {c_name}"),
        ))
    };
    if !(lo..=hi).contains(&i128::from(low)) {
        return out("from");
    }
    if !(lo..=hi).contains(&(i128::from(high) - 1)) {
        return out("to - 1");
    }
    Ok(())
}
