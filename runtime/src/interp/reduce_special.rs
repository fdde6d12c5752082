//! The reductions beyond sum/prod/mean/extremes/var: `nansum`, `nanmean`, `any`,
//! `all`, `count_nonzero`, `logsumexp` and the vector `norm`.
//!
//! [`super::reduce::reduce`] gathers the input with the reduced axes last and hands
//! the `[outer, inner]` rows here. Real floats accumulate in their compute type
//! (float16/bfloat16 in float32, like float32 itself) with Neumaier summation, so
//! overflow and underflow happen where PyTorch's float kernels have them; the
//! running mean uses the accumulation type; complex computes in float64. Every
//! result is rounded once.

use super::num::{CReal, FloatStore, Int, Real};
use super::rows::{rows, sum};
use crate::buffer::{Buffer, Element};
use crate::error::{Error, Result};
use lazyfuse_ir::ReduceOp;
use num_complex::Complex;

/// True for the reductions this module computes.
pub(crate) fn handles(op: ReduceOp) -> bool {
    matches!(
        op,
        ReduceOp::NanSum
            | ReduceOp::NanMean
            | ReduceOp::Any
            | ReduceOp::All
            | ReduceOp::LogSumExp
            | ReduceOp::CountNonzero
            | ReduceOp::Norm { .. }
            | ReduceOp::RunningMean
    )
}

fn not_for(op: ReduceOp, g: &Buffer) -> Error {
    Error::Malformed(format!("{op:?} is not defined for {} inputs", g.dtype()))
}

/// Reduces each of the `outer` rows of length `inner` of `g`.
pub(crate) fn reduce(op: ReduceOp, g: &Buffer, outer: usize, inner: usize) -> Result<Buffer> {
    if matches!(op, ReduceOp::Any | ReduceOp::All | ReduceOp::CountNonzero) {
        return truth(op, g, outer, inner);
    }
    match g {
        Buffer::U8(v) => int(op, v, outer, inner),
        Buffer::I8(v) => int(op, v, outer, inner),
        Buffer::I16(v) => int(op, v, outer, inner),
        Buffer::I32(v) => int(op, v, outer, inner),
        Buffer::I64(v) => int(op, v, outer, inner),
        Buffer::U16(v) => int(op, v, outer, inner),
        Buffer::U32(v) => int(op, v, outer, inner),
        Buffer::U64(v) => int(op, v, outer, inner),
        Buffer::F16(v) => float(op, v, outer, inner),
        Buffer::BF16(v) => float(op, v, outer, inner),
        Buffer::F32(v) => float(op, v, outer, inner),
        Buffer::F64(v) => float(op, v, outer, inner),
        Buffer::C64(v) => complex(op, v, outer, inner),
        Buffer::C128(v) => complex(op, v, outer, inner),
        other => Err(not_for(op, other)),
    }
}

/// The truth value of every element (`x != 0`; NaN is true; complex: either part).
fn nonzero(g: &Buffer) -> Result<Vec<bool>> {
    fn by<T: Copy>(v: &[T], f: impl Fn(T) -> bool) -> Vec<bool> {
        v.iter().map(|&x| f(x)).collect()
    }
    Ok(match g {
        Buffer::Bool(v) => v.clone(),
        Buffer::U8(v) => by(v, |x| x != 0),
        Buffer::I8(v) => by(v, |x| x != 0),
        Buffer::I16(v) => by(v, |x| x != 0),
        Buffer::I32(v) => by(v, |x| x != 0),
        Buffer::I64(v) => by(v, |x| x != 0),
        Buffer::U16(v) => by(v, |x| x != 0),
        Buffer::U32(v) => by(v, |x| x != 0),
        Buffer::U64(v) => by(v, |x| x != 0),
        Buffer::F16(v) => by(v, |x| x.to_f32() != 0.0),
        Buffer::BF16(v) => by(v, |x| x.to_f32() != 0.0),
        Buffer::F32(v) => by(v, |x| x != 0.0),
        Buffer::F64(v) => by(v, |x| x != 0.0),
        Buffer::C64(v) => by(v, |z| z.re != 0.0 || z.im != 0.0),
        Buffer::C128(v) => by(v, |z| z.re != 0.0 || z.im != 0.0),
        Buffer::Raw { dtype, .. } => {
            return Err(Error::Unsupported(format!("truth values of {dtype}")))
        }
    })
}

/// `any`, `all` (bool output; uint8 for a uint8 input, as PyTorch keeps it) and
/// `count_nonzero` (int64).
fn truth(op: ReduceOp, g: &Buffer, outer: usize, inner: usize) -> Result<Buffer> {
    let flags = nonzero(g)?;
    let as_u8 = matches!(g, Buffer::U8(_));
    let logical = |found: Vec<bool>| {
        if as_u8 {
            Buffer::from_vec(found.into_iter().map(u8::from).collect::<Vec<u8>>())
        } else {
            Buffer::from_vec(found)
        }
    };
    Ok(match op {
        ReduceOp::Any => logical(rows(&flags, outer, inner, |r| r.iter().any(|&b| b))),
        ReduceOp::All => logical(rows(&flags, outer, inner, |r| r.iter().all(|&b| b))),
        _ => Buffer::from_vec(rows(&flags, outer, inner, |r| {
            r.iter().filter(|&&b| b).count() as i64
        })),
    })
}

/// `nansum` of integers (the builder made them int64): a wrapping sum.
fn int<T: Int>(op: ReduceOp, v: &[T], outer: usize, inner: usize) -> Result<Buffer> {
    match op {
        ReduceOp::NanSum => Ok(Buffer::from_vec(rows(v, outer, inner, |r| {
            r.iter().fold(T::ZERO, |a, &b| a.wrapping_add(b))
        }))),
        _ => Err(Error::Malformed(format!(
            "{op:?} is not defined for {} inputs",
            T::DTYPE
        ))),
    }
}

fn infinity<R: Real>() -> R {
    R::from_f64(f64::INFINITY)
}

/// The maximum of `values`, NaN if any is NaN, `-inf` when there are none.
fn nan_max<R: Real>(values: impl Iterator<Item = R>) -> R {
    let mut best = -infinity::<R>();
    for x in values {
        if x.is_nan() {
            return x;
        }
        if x > best {
            best = x;
        }
    }
    best
}

/// `log(sum(exp(x)))` as PyTorch computes it: `m + log(sum(exp(x - m)))` with `m` the
/// maximum, replaced by 0 when infinite (so all `-inf` gives `-inf`, a `+inf` gives
/// `+inf`, and NaN propagates).
fn logsumexp<R: Real>(r: &[R]) -> R {
    let mut m = nan_max(r.iter().copied());
    if m.abs() == infinity() {
        m = R::ZERO;
    }
    sum(r.iter().map(|&x| (x - m).exp())).ln() + m
}

/// The vector `p`-norm of the absolute values `a`: `p = 0` counts the nonzero ones,
/// `±inf` take the extreme (NaN propagates), others are `(sum a^p)^(1/p)`.
fn norm<R: Real>(p: f64, a: &[R]) -> R {
    if a.is_empty() {
        // PyTorch fills an empty reduction with 0 for every order it accepts there
        // (NaN included: `0^(1/NaN)` would be NaN).
        return R::ZERO;
    }
    if a.len() == 1 && p != 0.0 {
        // A reduction of one element is `|x|` in PyTorch, exactly, for every order but
        // 0 (no `pow` round trip: `1e30^3` would overflow float32, `NaN` order stays `|x|`).
        return a[0];
    }
    if p == 0.0 {
        return R::from_f64(a.iter().filter(|&&x| x != R::ZERO).count() as f64);
    }
    if p == f64::INFINITY {
        return nan_max(a.iter().copied());
    }
    if p == f64::NEG_INFINITY {
        return -nan_max(a.iter().map(|&x| -x));
    }
    if p == 1.0 {
        return sum(a.iter().copied());
    }
    if p == 2.0 {
        return sum(a.iter().map(|&x| x * x)).sqrt();
    }
    let p = R::from_f64(p);
    sum(a.iter().map(|&x| x.powf(p))).powf(R::ONE / p)
}

/// The mean by Welford's update `m += (x - m) / n` (NaN for an empty row).
fn welford<R: Real>(r: &[R]) -> R {
    if r.is_empty() {
        return R::NAN;
    }
    let mut m = R::ZERO;
    for (k, &x) in r.iter().enumerate() {
        m = m + (x - m) / R::from_f64((k + 1) as f64);
    }
    m
}

fn float<S: FloatStore>(op: ReduceOp, v: &[S], outer: usize, inner: usize) -> Result<Buffer> {
    // These accumulate in the compute type (float32 for float16/bfloat16/float32), as
    // PyTorch's kernels do: a float32 norm or nansum overflows to inf (or underflows)
    // exactly where PyTorch's does. Neumaier summation keeps the sums accurate.
    let wide = |r: &[S]| r.iter().map(|x| x.widen()).collect::<Vec<S::C>>();
    let out: Vec<S> = match op {
        ReduceOp::NanSum => rows(v, outer, inner, |r| {
            S::narrow(sum(wide(r).into_iter().filter(|a| !a.is_nan())))
        }),
        ReduceOp::NanMean => rows(v, outer, inner, |r| {
            let kept = wide(r)
                .into_iter()
                .filter(|a| !a.is_nan())
                .collect::<Vec<_>>();
            let n = <S::C as Real>::from_f64(kept.len() as f64);
            S::narrow(sum(kept.into_iter()) / n)
        }),
        ReduceOp::LogSumExp => rows(v, outer, inner, |r| S::narrow(logsumexp(&wide(r)))),
        ReduceOp::Norm { ord } => rows(v, outer, inner, |r| {
            let a: Vec<S::C> = r.iter().map(|x| x.widen().abs()).collect();
            S::narrow(norm(ord.value(), &a))
        }),
        ReduceOp::RunningMean => rows(v, outer, inner, |r| {
            let a: Vec<S::A> = r.iter().map(|x| x.to_acc()).collect();
            S::from_acc(welford(&a))
        }),
        _ => return Err(Error::Malformed(format!("{op:?} of {}", S::DTYPE))),
    };
    Ok(Buffer::from_vec(out))
}

fn complex<P: CReal + Element>(
    op: ReduceOp,
    v: &[Complex<P>],
    outer: usize,
    inner: usize,
) -> Result<Buffer>
where
    Complex<P>: Element,
{
    let wide = |z: &Complex<P>| Complex::new(z.re.to_f64(), z.im.to_f64());
    Ok(match op {
        ReduceOp::Norm { ord } => Buffer::from_vec(rows(v, outer, inner, |r| {
            // In the part type, as for real floats (complex64 overflows like float32).
            let a: Vec<P> = r.iter().map(|z| z.re.hypot(z.im)).collect();
            norm(ord.value(), &a)
        })),
        // The real parts choose the shift (PyTorch: `amax(real(x))`).
        ReduceOp::LogSumExp => Buffer::from_vec(rows(v, outer, inner, |r| {
            let mut m = nan_max(r.iter().map(|z| z.re.to_f64()));
            if m.is_infinite() {
                m = 0.0;
            }
            let shifted: Vec<Complex<f64>> = r
                .iter()
                .map(|z| <f64 as CReal>::c_exp(wide(z) - m))
                .collect();
            let s = Complex::new(
                sum(shifted.iter().map(|z| z.re)),
                sum(shifted.iter().map(|z| z.im)),
            );
            let l = <f64 as CReal>::c_ln(s) + m;
            Complex::new(P::from_f64(l.re), P::from_f64(l.im))
        })),
        ReduceOp::RunningMean => Buffer::from_vec(rows(v, outer, inner, |r| {
            let re: Vec<f64> = r.iter().map(|z| z.re.to_f64()).collect();
            let im: Vec<f64> = r.iter().map(|z| z.im.to_f64()).collect();
            Complex::new(P::from_f64(welford(&re)), P::from_f64(welford(&im)))
        })),
        _ => {
            return Err(Error::Malformed(format!(
                "{op:?} of {}",
                <Complex<P>>::DTYPE
            )))
        }
    })
}
