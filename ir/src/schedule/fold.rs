//! Constant folding of casts: a constant converted at schedule time exactly as the
//! kernel would convert it, so that a cast of a literal costs nothing per element.

use crate::dtype::DType;
use crate::kernel::Const;

/// `c` converted to `to` exactly as the interpreter's cast (`runtime`'s
/// `interp::cast`) converts it, for the cases where that is plain: floats to
/// float32/float64/float16/bfloat16 (rounded once to nearest; float16 and bfloat16
/// through float32, as the interpreter does), bools to numbers, integers to
/// integers they fit and to floats that hold them exactly. `None`: leave the cast
/// to the kernel.
pub(super) fn fold_cast(c: Const, to: DType) -> Option<Const> {
    let float = |f: f64| -> Option<Const> {
        Some(Const::Float(match to {
            DType::F64 => f,
            DType::F32 => f as f32 as f64,
            DType::F16 => half::f16::from_f32(f as f32).to_f64(),
            DType::BF16 => half::bf16::from_f32(f as f32).to_f64(),
            _ => return None,
        }))
    };
    match c {
        Const::Float(f) => float(f),
        Const::Bool(b) if to == DType::Bool => Some(Const::Bool(b)),
        Const::Bool(b) if to.integer_range().is_some() => Some(Const::Int(b as i128)),
        Const::Bool(b) => float(b as u8 as f64),
        Const::Int(i) => match to.integer_range() {
            Some((lo, hi)) if (lo..=hi).contains(&i) => Some(Const::Int(i)),
            Some(_) => None,
            // within +-2048 every float dtype holds the integer exactly
            None if i.unsigned_abs() <= 2048 => float(i as f64),
            None => None,
        },
    }
}
