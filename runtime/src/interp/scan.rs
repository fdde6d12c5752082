//! Inclusive scans along one axis (`Op::Scan`): `cumprod`, `cummax`/`cummin` (values
//! and indices) and `logcumsumexp`.
//!
//! As for `cumsum` ([`super::reduce::cumsum`]) the input is gathered with the axis
//! last, every row is scanned, and the result is permuted back. The running value is
//! kept wide (float16/bfloat16 in float32, float32 and complex in float64) and each
//! output element is rounded from it, as PyTorch's CPU kernels do.

use super::num::{cmul, CReal, FloatStore, Int, Real};
use super::rows::{axes_last, restore_axis};
use crate::buffer::{Buffer, Element};
use crate::error::{Error, Result};
use lazyfuse_ir::ScanOp;
use num_complex::Complex;

/// Scans `x` (contiguous, of `shape`) along `axis`.
pub(crate) fn scan(op: ScanOp, x: &Buffer, shape: &[usize], axis: usize) -> Result<Buffer> {
    let (g, outer, inner) = axes_last(x, shape, &[axis]);
    let y = match op {
        ScanOp::Cumprod => cumprod(&g, outer, inner)?,
        ScanOp::Cummax | ScanOp::Cummin | ScanOp::CummaxIndices | ScanOp::CumminIndices => {
            extremes(op, &g, outer, inner)?
        }
        ScanOp::LogCumSumExp => logcumsumexp(&g, outer, inner)?,
    };
    Ok(restore_axis(&y, shape, axis))
}

/// Applies `step` along each row from `init`, emitting `out(state)` per element.
pub(crate) fn running<T: Copy, A: Copy, U>(
    v: &[T],
    outer: usize,
    inner: usize,
    init: A,
    step: impl Fn(A, T) -> A,
    out: impl Fn(A) -> U,
) -> Vec<U> {
    let mut res = Vec::with_capacity(v.len());
    for r in 0..outer {
        let mut acc = init;
        for &x in &v[r * inner..(r + 1) * inner] {
            acc = step(acc, x);
            res.push(out(acc));
        }
    }
    res
}

fn unsupported(what: &str, g: &Buffer) -> Error {
    Error::Malformed(format!("{what} is not defined for {} inputs", g.dtype()))
}

fn cumprod(g: &Buffer, outer: usize, inner: usize) -> Result<Buffer> {
    running_sum_or_product(g, outer, inner, true).ok_or_else(|| unsupported("cumprod", g))
}

/// The running sum (`cumsum`) or product (`cumprod`) of each row, which differ only in
/// their identity and step: integers wrap; floats and complex accumulate wide and
/// round every output element. `None` for the dtypes neither op has (bool, float8).
pub(crate) fn running_sum_or_product(
    g: &Buffer,
    outer: usize,
    inner: usize,
    product: bool,
) -> Option<Buffer> {
    fn int<T: Int>(v: &[T], o: usize, i: usize, product: bool) -> Buffer {
        let (init, step): (T, fn(T, T) -> T) = if product {
            (T::ONE, T::wrapping_mul)
        } else {
            (T::ZERO, T::wrapping_add)
        };
        Buffer::from_vec(running(v, o, i, init, step, |a| a))
    }
    fn flt<S: FloatStore>(v: &[S], o: usize, i: usize, product: bool) -> Buffer {
        let init = if product {
            <S::A as Real>::ONE
        } else {
            <S::A as Real>::ZERO
        };
        let step: fn(S::A, S::A) -> S::A = if product { |a, x| a * x } else { |a, x| a + x };
        Buffer::from_vec(running(
            v,
            o,
            i,
            init,
            |a, x| step(a, x.to_acc()),
            S::from_acc,
        ))
    }
    fn cpx<P: CReal>(v: &[Complex<P>], o: usize, i: usize, product: bool) -> Buffer
    where
        Complex<P>: Element,
    {
        type Wide = Complex<f64>;
        let (init, step): (Wide, fn(Wide, Wide) -> Wide) = if product {
            (Complex::new(1.0, 0.0), cmul)
        } else {
            (Complex::new(0.0, 0.0), |a, z| a + z)
        };
        Buffer::from_vec(running(
            v,
            o,
            i,
            init,
            |a, z| step(a, Complex::new(z.re.to_f64(), z.im.to_f64())),
            |a| Complex::new(P::from_f64(a.re), P::from_f64(a.im)),
        ))
    }
    Some(match g {
        Buffer::U8(v) => int(v, outer, inner, product),
        Buffer::I8(v) => int(v, outer, inner, product),
        Buffer::I16(v) => int(v, outer, inner, product),
        Buffer::I32(v) => int(v, outer, inner, product),
        Buffer::I64(v) => int(v, outer, inner, product),
        Buffer::U16(v) => int(v, outer, inner, product),
        Buffer::U32(v) => int(v, outer, inner, product),
        Buffer::U64(v) => int(v, outer, inner, product),
        Buffer::F16(v) => flt(v, outer, inner, product),
        Buffer::BF16(v) => flt(v, outer, inner, product),
        Buffer::F32(v) => flt(v, outer, inner, product),
        Buffer::F64(v) => flt(v, outer, inner, product),
        Buffer::C64(v) => cpx(v, outer, inner, product),
        Buffer::C128(v) => cpx(v, outer, inner, product),
        _ => return None,
    })
}

/// Running extremes of one row type: values (`indices == false`) or int64 indices.
/// An element replaces the running one when it is NaN or at least as large (small):
/// so ties move the index to the later element, a NaN sticks, and each further NaN
/// takes over its index, as PyTorch's `cummax_helper` does.
fn extremes_of<T: Copy + PartialOrd + Element>(
    v: &[T],
    outer: usize,
    inner: usize,
    max: bool,
    indices: bool,
    is_nan: impl Fn(T) -> bool,
) -> Buffer {
    let mut vals = Vec::with_capacity(if indices { 0 } else { v.len() });
    let mut idx = Vec::with_capacity(if indices { v.len() } else { 0 });
    for r in 0..outer {
        let row = &v[r * inner..(r + 1) * inner];
        let mut best = 0usize;
        for (i, &x) in row.iter().enumerate() {
            let b = row[best];
            let wins = if max { x >= b } else { x <= b };
            if i == 0 || is_nan(x) || (!is_nan(b) && wins) {
                best = i;
            }
            if indices {
                idx.push(best as i64);
            } else {
                vals.push(row[best]);
            }
        }
    }
    if indices {
        Buffer::from_vec(idx)
    } else {
        Buffer::from_vec(vals)
    }
}

fn extremes(op: ScanOp, g: &Buffer, outer: usize, inner: usize) -> Result<Buffer> {
    let max = matches!(op, ScanOp::Cummax | ScanOp::CummaxIndices);
    let ix = matches!(op, ScanOp::CummaxIndices | ScanOp::CumminIndices);
    fn ord<T: Copy + PartialOrd + Element>(
        v: &[T],
        o: usize,
        i: usize,
        max: bool,
        ix: bool,
    ) -> Buffer {
        extremes_of(v, o, i, max, ix, |_| false)
    }
    fn flt<S: FloatStore + PartialOrd>(v: &[S], o: usize, i: usize, max: bool, ix: bool) -> Buffer {
        extremes_of(v, o, i, max, ix, |x: S| x.widen().is_nan())
    }
    Ok(match g {
        Buffer::Bool(v) => ord(v, outer, inner, max, ix),
        Buffer::U8(v) => ord(v, outer, inner, max, ix),
        Buffer::I8(v) => ord(v, outer, inner, max, ix),
        Buffer::I16(v) => ord(v, outer, inner, max, ix),
        Buffer::I32(v) => ord(v, outer, inner, max, ix),
        Buffer::I64(v) => ord(v, outer, inner, max, ix),
        Buffer::U16(v) => ord(v, outer, inner, max, ix),
        Buffer::U32(v) => ord(v, outer, inner, max, ix),
        Buffer::U64(v) => ord(v, outer, inner, max, ix),
        Buffer::F16(v) => flt(v, outer, inner, max, ix),
        Buffer::BF16(v) => flt(v, outer, inner, max, ix),
        Buffer::F32(v) => flt(v, outer, inner, max, ix),
        Buffer::F64(v) => flt(v, outer, inner, max, ix),
        other => return Err(unsupported("cummax/cummin", other)),
    })
}

/// PyTorch's `_log_add_exp_helper(x, acc)` for reals, with `std::min`/`std::max`'s
/// NaN behaviour (NaN propagates; two equal infinities give `x`).
pub(crate) fn log_add_exp(x: f64, acc: f64) -> f64 {
    let (lo, hi) = if acc.is_nan() {
        (acc, acc)
    } else if x.is_nan() {
        (x, x)
    } else {
        (x.min(acc), x.max(acc))
    };
    if lo != hi || lo.is_finite() {
        (lo - hi).exp().ln_1p() + hi
    } else {
        x
    }
}

/// The complex `_log_add_exp_helper`: the operand with the smaller real part is
/// shifted by the larger; equal infinite real parts are special-cased.
fn c_log_add_exp(x: Complex<f64>, acc: Complex<f64>) -> Complex<f64> {
    let nan = |z: Complex<f64>| z.re.is_nan() || z.im.is_nan();
    let (lo, hi) = if nan(acc) {
        (acc, acc)
    } else if nan(x) {
        (x, x)
    } else if x.re < acc.re {
        (x, acc)
    } else {
        (acc, x)
    };
    if nan(lo) {
        return Complex::new(f64::NAN, f64::NAN);
    }
    if !lo.re.is_finite() && lo.re == hi.re {
        return if lo.re < 0.0 {
            lo
        } else {
            <f64 as CReal>::c_ln(<f64 as CReal>::c_exp(lo) + <f64 as CReal>::c_exp(hi))
        };
    }
    <f64 as CReal>::c_ln(<f64 as CReal>::c_exp(lo - hi) + 1.0) + hi
}

fn logcumsumexp(g: &Buffer, outer: usize, inner: usize) -> Result<Buffer> {
    fn flt<S: FloatStore>(v: &[S], o: usize, i: usize) -> Buffer {
        Buffer::from_vec(running(
            v,
            o,
            i,
            f64::NEG_INFINITY,
            |a, x| log_add_exp(x.to_acc().to_f64(), a),
            |a| S::from_acc(<S::A as Real>::from_f64(a)),
        ))
    }
    fn cpx<P: CReal>(v: &[Complex<P>], o: usize, i: usize) -> Buffer
    where
        Complex<P>: Element,
    {
        Buffer::from_vec(running(
            v,
            o,
            i,
            Complex::new(f64::NEG_INFINITY, 0.0),
            |a, z| c_log_add_exp(Complex::new(z.re.to_f64(), z.im.to_f64()), a),
            |a| Complex::new(P::from_f64(a.re), P::from_f64(a.im)),
        ))
    }
    Ok(match g {
        Buffer::F16(v) => flt(v, outer, inner),
        Buffer::BF16(v) => flt(v, outer, inner),
        Buffer::F32(v) => flt(v, outer, inner),
        Buffer::F64(v) => flt(v, outer, inner),
        Buffer::C64(v) => cpx(v, outer, inner),
        Buffer::C128(v) => cpx(v, outer, inner),
        other => return Err(unsupported("logcumsumexp", other)),
    })
}
