//! The semantic rules of reductions and scans, written once for both code
//! generators: the dtype a reduction accumulates in and the value it starts from,
//! when a sum is compensated, and a scan's running value and its start. The
//! Cranelift lowering (`cpu::lower`) and the CUDA C generator (`cuda`) each render
//! these as their own constants and types; neither decides them. The rules are the
//! interpreter's (`lazyfuse_runtime::interp::{reduce, scan}`), which the differential
//! tests compare both with.

use lazyfuse_ir::kernel::{Accum, MathMode, ScanAccum};
use lazyfuse_ir::DType;

/// A starting value, in the dtype it starts (an accumulator or a running value).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Start {
    /// `false` or `true`
    Bool(bool),
    /// an integer (in range for the dtype: `i128` holds every 64-bit bound)
    Int(i128),
    /// a float
    Float(f64),
}

/// The dtype a reduction of `x` values accumulates in: float32 sums in float64 (as
/// the interpreter sums), everything else in `x` itself (which each renderer holds
/// in its register type: float16/bfloat16 as float32). `None` where no kernel
/// reduces: float8 values are storage only, and `any` / `all` reach a kernel on
/// booleans alone (each renderer says so in its own error).
pub(crate) fn accumulator(op: Accum, x: DType) -> Option<DType> {
    if x.is_float8() || (matches!(op, Accum::Any | Accum::All) && x != DType::Bool) {
        return None;
    }
    Some(match op {
        Accum::Sum if x == DType::F32 => DType::F64,
        _ => x,
    })
}

/// The value a reduction of `x` starts from: the op's identity (0 for sums, 1 for
/// products, the lowest value for a max, the highest for a min, false / true on
/// booleans). Arg-reductions start at zero: their first element replaces it
/// whatever it is.
pub(crate) fn identity(op: Accum, x: DType) -> Start {
    if x == DType::Bool {
        return Start::Bool(matches!(op, Accum::Prod | Accum::All | Accum::Min));
    }
    let (zero, one, lowest, highest) = match x.integer_range() {
        Some((lo, hi)) => (Start::Int(0), Start::Int(1), Start::Int(lo), Start::Int(hi)),
        None => (
            Start::Float(0.0),
            Start::Float(1.0),
            Start::Float(f64::NEG_INFINITY),
            Start::Float(f64::INFINITY),
        ),
    };
    match op {
        Accum::ArgMax | Accum::ArgMin | Accum::Sum | Accum::Any => zero,
        Accum::Prod | Accum::All => one,
        Accum::Max => lowest,
        Accum::Min => highest,
    }
}

/// Whether a reduction is a Neumaier-compensated sum: float32 and float64 sums in
/// exact math (narrower floats reach a reduction widened, with no per-step rounding
/// for the compensation to recover).
pub(crate) fn compensated(op: Accum, x: DType, math: MathMode) -> bool {
    op == Accum::Sum && math == MathMode::Exact && matches!(x, DType::F32 | DType::F64)
}

/// The dtype of a scan's running value over `x` values (the interpreter's
/// `interp::scan`): float32 sums and products in float64, logcumsumexp in float64,
/// everything else in `x` itself.
pub(crate) fn scan_state(op: ScanAccum, x: DType) -> DType {
    match op {
        ScanAccum::LogAddExp => DType::F64,
        ScanAccum::Sum | ScanAccum::Prod if x == DType::F32 => DType::F64,
        _ => x,
    }
}

/// The value the running value of a scan of `x` values starts from, in its
/// [`scan_state`] dtype: 1 for products, -inf for
/// logcumsumexp, zero otherwise (max/min and their indices take the first element
/// whatever the start).
pub(crate) fn scan_start(op: ScanAccum, x: DType) -> Start {
    let float = scan_state(op, x).is_floating_point();
    match op {
        ScanAccum::LogAddExp => Start::Float(f64::NEG_INFINITY),
        ScanAccum::Prod if float => Start::Float(1.0),
        ScanAccum::Prod => Start::Int(1),
        _ if float => Start::Float(0.0),
        _ => Start::Int(0),
    }
}

/// When a candidate replaces the running best of an arg-reduction or of an
/// extremum scan (cummax, cummin and their indices). At the first position it
/// always does; after that, the interpreter's rules below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Replace {
    /// a larger candidate wins (max), else a smaller one (min)
    pub(crate) max: bool,
    /// a tie replaces the running best (scans: ties move to the later element);
    /// otherwise the earlier one stays (arg-reductions: the first of equals)
    pub(crate) ties: bool,
    /// a NaN running best stays (arg-reductions: the first NaN wins); otherwise a
    /// later NaN replaces it (scans: each NaN takes over). A NaN candidate
    /// replaces a number either way.
    pub(crate) nan_stays: bool,
}

/// The replacement rule of `argmax` / `argmin` (`interp::reduce`).
pub(crate) fn arg_reduce_rule(op: Accum) -> Replace {
    Replace {
        max: op == Accum::ArgMax,
        ties: false,
        nan_stays: true,
    }
}

/// The replacement rule of an extremum scan (`interp::scan`'s `extremes_of`).
pub(crate) fn scan_rule(op: ScanAccum) -> Replace {
    Replace {
        max: matches!(op, ScanAccum::Max | ScanAccum::ArgMax),
        ties: true,
        nan_stays: false,
    }
}

/// Integer (and boolean) `hardtanh`, a clamp to `[min_val, max_val]`, as the
/// interpreter computes it: the bounds truncated to integers, the clamp in `i128`,
/// and `x` kept where the result would not fit the dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntClamp {
    /// the value unchanged
    Keep,
    /// this constant for every value (`min_val > max_val`: the upper bound wins)
    Const(i128),
    /// raised to `below` and lowered to `above` where given (a bound past the
    /// dtype's own range clamps nothing)
    Bounds {
        below: Option<i128>,
        above: Option<i128>,
    },
}

/// The clamp `hardtanh(min_val, max_val)` makes of a `dt` value (bool or integer).
pub(crate) fn int_hardtanh(min_val: f64, max_val: f64, dt: DType) -> IntClamp {
    let (lo, hi) = (min_val as i128, max_val as i128);
    let (tmin, tmax) = if dt == DType::Bool {
        (0, 1)
    } else {
        dt.integer_range().unwrap_or((0, 0))
    };
    if lo > hi {
        return if (tmin..=tmax).contains(&hi) {
            IntClamp::Const(hi)
        } else {
            IntClamp::Keep
        };
    }
    if lo > tmax || hi < tmin {
        return IntClamp::Keep;
    }
    IntClamp::Bounds {
        below: (lo > tmin).then_some(lo),
        above: (hi < tmax).then_some(hi),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulators_and_identities_are_the_interpreters() {
        assert_eq!(accumulator(Accum::Sum, DType::F32), Some(DType::F64));
        assert_eq!(accumulator(Accum::Sum, DType::F16), Some(DType::F16));
        assert_eq!(accumulator(Accum::Max, DType::I8), Some(DType::I8));
        assert_eq!(accumulator(Accum::Any, DType::F32), None);
        assert_eq!(accumulator(Accum::Sum, DType::F8E4M3FN), None);
        assert_eq!(identity(Accum::Max, DType::I8), Start::Int(-128));
        assert_eq!(
            identity(Accum::Min, DType::U64),
            Start::Int(u64::MAX.into())
        );
        assert_eq!(identity(Accum::Max, DType::U16), Start::Int(0));
        assert_eq!(
            identity(Accum::Min, DType::F32),
            Start::Float(f64::INFINITY)
        );
        assert_eq!(identity(Accum::Prod, DType::F64), Start::Float(1.0));
        assert_eq!(identity(Accum::ArgMin, DType::F32), Start::Float(0.0));
        assert_eq!(identity(Accum::All, DType::Bool), Start::Bool(true));
        assert_eq!(identity(Accum::Max, DType::Bool), Start::Bool(false));
        assert!(compensated(Accum::Sum, DType::F32, MathMode::Exact));
        assert!(!compensated(Accum::Sum, DType::F32, MathMode::Fast));
        assert!(!compensated(Accum::Sum, DType::BF16, MathMode::Exact));
    }

    #[test]
    fn arg_reductions_keep_the_first_and_scans_take_the_last() {
        let r = arg_reduce_rule(Accum::ArgMin);
        assert!(!r.max && !r.ties && r.nan_stays);
        let s = scan_rule(ScanAccum::ArgMax);
        assert!(s.max && s.ties && !s.nan_stays);
        assert!(scan_rule(ScanAccum::Max).max && !scan_rule(ScanAccum::Min).max);
    }

    #[test]
    fn integer_hardtanh_clamps_as_the_interpreter() {
        use IntClamp::*;
        assert_eq!(
            int_hardtanh(-1.5, 2.7, DType::I8),
            Bounds {
                below: Some(-1),
                above: Some(2)
            }
        );
        assert_eq!(
            int_hardtanh(-1.0, 300.0, DType::U8),
            Bounds {
                below: None,
                above: None
            }
        );
        assert_eq!(int_hardtanh(5.0, 3.0, DType::I32), Const(3));
        assert_eq!(
            int_hardtanh(5.0, 300.0, DType::I8),
            Bounds {
                below: Some(5),
                above: None
            }
        );
        assert_eq!(int_hardtanh(500.0, 300.0, DType::I8), Keep);
        assert_eq!(int_hardtanh(200.0, 300.0, DType::I8), Keep);
        assert_eq!(
            int_hardtanh(0.0, 0.0, DType::Bool),
            Bounds {
                below: None,
                above: Some(0)
            }
        );
    }

    #[test]
    fn scans_start_from_their_identity_in_their_state_type() {
        assert_eq!(scan_state(ScanAccum::LogAddExp, DType::F16), DType::F64);
        assert_eq!(scan_state(ScanAccum::Prod, DType::F32), DType::F64);
        assert_eq!(scan_state(ScanAccum::Max, DType::F32), DType::F32);
        assert_eq!(scan_start(ScanAccum::Prod, DType::I32), Start::Int(1));
        assert_eq!(
            scan_start(ScanAccum::LogAddExp, DType::F64),
            Start::Float(f64::NEG_INFINITY)
        );
        assert_eq!(scan_start(ScanAccum::ArgMax, DType::F64), Start::Float(0.0));
        assert_eq!(scan_start(ScanAccum::Sum, DType::F32), Start::Float(0.0));
        assert_eq!(scan_start(ScanAccum::Sum, DType::I8), Start::Int(0));
    }
}
