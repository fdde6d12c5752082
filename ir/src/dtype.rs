//! Element types: the `DType` enum, its PyTorch names, categories and sizes.
//!
//! Names round-trip through `Display`/`FromStr` exactly as PyTorch spells them
//! (`float32`, `bfloat16`, `complex64`, …). `torch_name` gives the C++ scalar-type name
//! (`Float`, `BFloat16`, `ComplexDouble`, …) that PyTorch's error messages quote.

use std::fmt;
use std::str::FromStr;

/// The element type of a tensor.
///
/// ```
/// use lazyfuse_ir::DType;
/// let d: DType = "bfloat16".parse().unwrap();
/// assert_eq!(d, DType::BF16);
/// assert_eq!(d.to_string(), "bfloat16");
/// assert!(d.is_floating_point());
/// assert_eq!(d.size_in_bytes(), 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `bool`
    Bool,
    /// `uint8`
    U8,
    /// `int8`
    I8,
    /// `int16`
    I16,
    /// `int32`
    I32,
    /// `int64`
    I64,
    /// `uint16` (limited promotion support, as in PyTorch)
    U16,
    /// `uint32` (limited promotion support, as in PyTorch)
    U32,
    /// `uint64` (limited promotion support, as in PyTorch)
    U64,
    /// `float16` (IEEE half)
    F16,
    /// `bfloat16`
    BF16,
    /// `float32`
    F32,
    /// `float64`
    F64,
    /// `complex32`: two `float16` parts; computed through `complex64` where PyTorch has
    /// a kernel.
    C32,
    /// `bcomplex32`: two `bfloat16` parts; storage and casts.
    BC32,
    /// `complex64`: two `float32` parts
    C64,
    /// `complex128`: two `float64` parts
    C128,
    /// `float8_e4m3fn` (storage only)
    F8E4M3FN,
    /// `float8_e5m2` (storage only)
    F8E5M2,
    /// `float8_e4m3fnuz` (storage only)
    F8E4M3FNUZ,
    /// `float8_e5m2fnuz` (storage only)
    F8E5M2FNUZ,
    /// `float8_e8m0fnu` (storage only)
    F8E8M0FNU,
    /// `float4_e2m1fn_x2`: two 4-bit floats packed in a byte (storage and views only;
    /// PyTorch 2.15 converts it to nothing)
    F4E2M1FNX2,
}

/// The promotion category of a dtype or a scalar: bool < integer < floating < complex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// `bool`
    Bool,
    /// signed and unsigned integers
    Integer,
    /// real floating point
    Floating,
    /// complex
    Complex,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 23] = [
        DType::Bool,
        DType::U8,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::C32,
        DType::BC32,
        DType::C64,
        DType::C128,
        DType::F8E4M3FN,
        DType::F8E5M2,
        DType::F8E4M3FNUZ,
        DType::F8E5M2FNUZ,
        DType::F8E8M0FNU,
        DType::F4E2M1FNX2,
    ];

    /// The PyTorch Python name (`torch.float32` → `"float32"`).
    pub fn as_str(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C32 => "complex32",
            DType::BC32 => "bcomplex32",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
            DType::F8E4M3FN => "float8_e4m3fn",
            DType::F8E5M2 => "float8_e5m2",
            DType::F8E4M3FNUZ => "float8_e4m3fnuz",
            DType::F8E5M2FNUZ => "float8_e5m2fnuz",
            DType::F8E8M0FNU => "float8_e8m0fnu",
            DType::F4E2M1FNX2 => "float4_e2m1fn_x2",
        }
    }

    /// The C++ scalar-type name PyTorch uses in error messages (`Float`, `Long`, …).
    pub fn torch_name(self) -> &'static str {
        match self {
            DType::Bool => "Bool",
            DType::U8 => "Byte",
            DType::I8 => "Char",
            DType::I16 => "Short",
            DType::I32 => "Int",
            DType::I64 => "Long",
            DType::U16 => "UInt16",
            DType::U32 => "UInt32",
            DType::U64 => "UInt64",
            DType::F16 => "Half",
            DType::BF16 => "BFloat16",
            DType::F32 => "Float",
            DType::F64 => "Double",
            DType::C32 => "ComplexHalf",
            DType::BC32 => "BComplex32",
            DType::C64 => "ComplexFloat",
            DType::C128 => "ComplexDouble",
            DType::F8E4M3FN => "Float8_e4m3fn",
            DType::F8E5M2 => "Float8_e5m2",
            DType::F8E4M3FNUZ => "Float8_e4m3fnuz",
            DType::F8E5M2FNUZ => "Float8_e5m2fnuz",
            DType::F8E8M0FNU => "Float8_e8m0fnu",
            DType::F4E2M1FNX2 => "Float4_e2m1fn_x2",
        }
    }

    /// Size of one element in bytes.
    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::Bool | DType::U8 | DType::I8 => 1,
            DType::F8E4M3FN
            | DType::F8E5M2
            | DType::F8E4M3FNUZ
            | DType::F8E5M2FNUZ
            | DType::F8E8M0FNU
            | DType::F4E2M1FNX2 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 | DType::C32 | DType::BC32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    /// Bytes per element, as `torch.dtype.itemsize` (the same as
    /// [`DType::size_in_bytes`]).
    ///
    /// ```
    /// use lazyfuse_ir::DType;
    /// assert_eq!((DType::C32.itemsize(), DType::BF16.itemsize()), (4, 2));
    /// ```
    pub fn itemsize(self) -> usize {
        self.size_in_bytes()
    }

    /// Whether the dtype holds negative values, as `torch.dtype.is_signed`: every
    /// dtype but bool, the unsigned integers and `float8_e8m0fnu` (an exponent only).
    ///
    /// ```
    /// use lazyfuse_ir::DType;
    /// assert!(DType::I8.is_signed() && DType::F16.is_signed() && DType::C64.is_signed());
    /// assert!(!DType::Bool.is_signed() && !DType::U16.is_signed() && !DType::F8E8M0FNU.is_signed());
    /// ```
    pub fn is_signed(self) -> bool {
        !(self.is_unsigned() || matches!(self, DType::Bool | DType::F8E8M0FNU))
    }

    /// The promotion category.
    pub fn category(self) -> Category {
        if self == DType::Bool {
            Category::Bool
        } else if self.is_complex() {
            Category::Complex
        } else if self.is_floating_point() {
            Category::Floating
        } else {
            Category::Integer
        }
    }

    /// True for real floating-point dtypes (float8 variants included), as
    /// `torch.is_floating_point`.
    pub fn is_floating_point(self) -> bool {
        matches!(
            self,
            DType::F16
                | DType::BF16
                | DType::F32
                | DType::F64
                | DType::F8E4M3FN
                | DType::F8E5M2
                | DType::F8E4M3FNUZ
                | DType::F8E5M2FNUZ
                | DType::F8E8M0FNU
                | DType::F4E2M1FNX2
        )
    }

    /// True for complex dtypes.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C32 | DType::BC32 | DType::C64 | DType::C128)
    }

    /// True for signed or unsigned integer dtypes (not bool).
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            DType::U8
                | DType::I8
                | DType::I16
                | DType::I32
                | DType::I64
                | DType::U16
                | DType::U32
                | DType::U64
        )
    }

    /// True for the "wide" unsigned integers whose promotion PyTorch restricts.
    pub fn is_wide_unsigned(self) -> bool {
        matches!(self, DType::U16 | DType::U32 | DType::U64)
    }

    /// True for unsigned integers (uint8 included).
    pub fn is_unsigned(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    /// The smallest and largest value of an integer dtype (`None` for other dtypes).
    ///
    /// ```
    /// use lazyfuse_ir::DType;
    /// assert_eq!(DType::I8.integer_range(), Some((-128, 127)));
    /// assert_eq!(DType::U64.integer_range(), Some((0, u64::MAX as i128)));
    /// assert_eq!(DType::F32.integer_range(), None);
    /// ```
    pub fn integer_range(self) -> Option<(i128, i128)> {
        Some(match self {
            DType::U8 => (0, u8::MAX.into()),
            DType::I8 => (i8::MIN.into(), i8::MAX.into()),
            DType::I16 => (i16::MIN.into(), i16::MAX.into()),
            DType::I32 => (i32::MIN.into(), i32::MAX.into()),
            DType::I64 => (i64::MIN.into(), i64::MAX.into()),
            DType::U16 => (0, u16::MAX.into()),
            DType::U32 => (0, u32::MAX.into()),
            DType::U64 => (0, u64::MAX.into()),
            _ => return None,
        })
    }

    /// True for the float8 dtypes, which can be stored and converted but not computed on.
    pub fn is_float8(self) -> bool {
        matches!(
            self,
            DType::F8E4M3FN
                | DType::F8E5M2
                | DType::F8E4M3FNUZ
                | DType::F8E5M2FNUZ
                | DType::F8E8M0FNU
        )
    }

    /// The real dtype of a complex dtype's parts (`complex64` → `float32`); other
    /// dtypes map to themselves.
    pub fn to_real(self) -> DType {
        match self {
            DType::C32 => DType::F16,
            DType::BC32 => DType::BF16,
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            other => other,
        }
    }

    /// The complex dtype with `self` as parts (`float32` → `complex64`), if any.
    pub fn to_complex(self) -> Option<DType> {
        match self {
            DType::F16 => Some(DType::C32),
            DType::BF16 => Some(DType::BC32),
            DType::F32 => Some(DType::C64),
            DType::F64 => Some(DType::C128),
            d if d.is_complex() => Some(d),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an unknown dtype name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown dtype name '{0}'")]
pub struct ParseDTypeError(pub String);

impl FromStr for DType {
    type Err = ParseDTypeError;

    /// Parses a PyTorch dtype name; the aliases `float`, `double`, `half`, `long`,
    /// `int`, `short`, `cfloat`, `cdouble`, `chalf` are accepted too.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let name = s.strip_prefix("torch.").unwrap_or(s);
        if let Some(d) = DType::ALL.iter().find(|d| d.as_str() == name) {
            return Ok(*d);
        }
        Ok(match name {
            "float" => DType::F32,
            "double" => DType::F64,
            "half" => DType::F16,
            "long" => DType::I64,
            "int" => DType::I32,
            "short" => DType::I16,
            "cfloat" => DType::C64,
            "cdouble" => DType::C128,
            "chalf" => DType::C32,
            _ => return Err(ParseDTypeError(s.to_string())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(d.as_str().parse::<DType>().unwrap(), d);
        }
        assert_eq!("torch.half".parse::<DType>().unwrap(), DType::F16);
        assert!("float31".parse::<DType>().is_err());
    }

    #[test]
    fn categories() {
        assert_eq!(DType::Bool.category(), Category::Bool);
        assert_eq!(DType::U64.category(), Category::Integer);
        assert_eq!(DType::BF16.category(), Category::Floating);
        assert_eq!(DType::C32.category(), Category::Complex);
        assert_eq!(DType::C128.size_in_bytes(), 16);
        assert_eq!(DType::F8E5M2.size_in_bytes(), 1);
    }
}
