//! `Scalar`: a host-language number (PyTorch's "wrapped number").
//!
//! A scalar carries a value and a category, never a dtype of its own: in promotion
//! only its category (bool < int < float < complex) counts. When a scalar becomes a
//! zero-dim tensor it takes its natural dtype: bool, int64, the default float dtype,
//! or the complex dtype matching the default float dtype.

use crate::dtype::{Category, DType};
use std::fmt;

/// A host number used as an operand or a fill value.
///
/// ```
/// use lazyfuse_ir::{Category, Scalar};
/// let s: Scalar = 2.5f64.into();
/// assert_eq!(s.category(), Category::Floating);
/// assert_eq!(Scalar::from(3i32), Scalar::Int(3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A Python `bool`.
    Bool(bool),
    /// A Python `int` (held as `i64`).
    Int(i64),
    /// A Python `float` (a double).
    Float(f64),
    /// A Python `complex`: real and imaginary parts.
    Complex(f64, f64),
}

impl Scalar {
    /// The promotion category.
    pub fn category(self) -> Category {
        match self {
            Scalar::Bool(_) => Category::Bool,
            Scalar::Int(_) => Category::Integer,
            Scalar::Float(_) => Category::Floating,
            Scalar::Complex(..) => Category::Complex,
        }
    }

    /// The dtype a zero-dim tensor made from this scalar gets: `bool`, `int64`,
    /// `default_float`, or the complex dtype whose parts are `default_float`.
    pub fn natural_dtype(self, default_float: DType) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::I64,
            Scalar::Float(_) => default_float,
            Scalar::Complex(..) => default_float.to_complex().unwrap_or(DType::C64),
        }
    }

    /// The dtype that holds the value exactly as PyTorch's wrapped number does before
    /// promotion: bool, int64, float64 or complex128.
    pub fn wrapped_dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::I64,
            Scalar::Float(_) => DType::F64,
            Scalar::Complex(..) => DType::C128,
        }
    }

    /// The value as a double (real part for complex, 0/1 for bool).
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as u8 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
            Scalar::Complex(re, _) => re,
        }
    }

    /// The value's bitwise identity: its variant and its bits, so that `0.0` and
    /// `-0.0` differ and a NaN equals only a NaN of the same bits (what a
    /// constant's kernels depend on, where `==` confuses the zeros and never
    /// matches a NaN).
    ///
    /// ```
    /// use lazyfuse_ir::Scalar;
    /// assert_ne!(Scalar::Float(0.0).identity(), Scalar::Float(-0.0).identity());
    /// assert_eq!(Scalar::Float(f64::NAN).identity(), Scalar::Float(f64::NAN).identity());
    /// assert_ne!(Scalar::Int(1).identity(), Scalar::Bool(true).identity());
    /// ```
    pub fn identity(self) -> [u64; 3] {
        match self {
            Scalar::Bool(b) => [0, b as u64, 0],
            Scalar::Int(i) => [1, i as u64, 0],
            Scalar::Float(f) => [2, f.to_bits(), 0],
            Scalar::Complex(re, im) => [3, re.to_bits(), im.to_bits()],
        }
    }

    /// True when the value equals zero (used to refuse integer division by zero).
    pub fn is_zero(self) -> bool {
        match self {
            Scalar::Bool(b) => !b,
            Scalar::Int(i) => i == 0,
            Scalar::Float(f) => f == 0.0,
            Scalar::Complex(re, im) => re == 0.0 && im == 0.0,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x:?}"),
            Scalar::Complex(re, im) => write!(f, "({re:?}{im:+?}j)"),
        }
    }
}

impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}
impl From<i32> for Scalar {
    fn from(v: i32) -> Self {
        Scalar::Int(v as i64)
    }
}
impl From<i64> for Scalar {
    fn from(v: i64) -> Self {
        Scalar::Int(v)
    }
}
impl From<f32> for Scalar {
    fn from(v: f32) -> Self {
        Scalar::Float(v as f64)
    }
}
impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::Float(v)
    }
}
