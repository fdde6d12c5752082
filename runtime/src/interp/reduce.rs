//! Kernels that work along axes: `Reduce`, `ArgReduce`, `Cumsum` and `Softmax`.
//!
//! Each one first gathers its input so that the axes it works along come last
//! ([`axes_last`], in `rows.rs`); the data is then a `[outer, inner]` matrix and every kernel is a
//! function of one contiguous row. Cumsum and softmax keep the shape, so their result
//! is permuted back ([`restore_axis`]). Everything is linear in the element count.
//!
//! Accumulation: integers wrap; float16/bfloat16 accumulate in float32 and float32
//! in float64 ([`FloatStore::A`]), each result rounded once; sums use Neumaier's
//! compensated summation; var/std are two-pass.

use super::map::not_for;
use super::num::{CReal, FloatStore, Int, Real};
use super::rows::{axes_last, restore_axis, rows, sum};
use crate::buffer::{Buffer, Element};
use crate::error::{Error, Result};
use lazyfuse_ir::{ArgReduceOp, DType, ReduceOp};
use num_complex::Complex;

// ---------------------------------------------------------------------------
// Reduce

/// Reduces `x` (of `shape`) over `axes`; the output elements are in row-major order
/// of the kept axes, whatever `keepdim`.
pub(crate) fn reduce(op: ReduceOp, x: &Buffer, shape: &[usize], axes: &[usize]) -> Result<Buffer> {
    if let Buffer::Raw { dtype, .. } = x {
        return Err(Error::Unsupported(format!("{op:?} on {dtype}")));
    }
    let (g, outer, inner) = axes_last(x, shape, axes);
    if super::reduce_special::handles(op) {
        return super::reduce_special::reduce(op, &g, outer, inner);
    }
    match &g {
        Buffer::Bool(v) => bool_reduce(op, v, outer, inner),
        Buffer::U8(v) => int_reduce(op, v, outer, inner),
        Buffer::I8(v) => int_reduce(op, v, outer, inner),
        Buffer::I16(v) => int_reduce(op, v, outer, inner),
        Buffer::I32(v) => int_reduce(op, v, outer, inner),
        Buffer::I64(v) => int_reduce(op, v, outer, inner),
        Buffer::U16(v) => int_reduce(op, v, outer, inner),
        Buffer::U32(v) => int_reduce(op, v, outer, inner),
        Buffer::U64(v) => int_reduce(op, v, outer, inner),
        Buffer::F16(v) => float_reduce(op, v, outer, inner),
        Buffer::BF16(v) => float_reduce(op, v, outer, inner),
        Buffer::F32(v) => float_reduce(op, v, outer, inner),
        Buffer::F64(v) => float_reduce(op, v, outer, inner),
        Buffer::C64(v) => complex_reduce(op, v, outer, inner),
        Buffer::C128(v) => complex_reduce(op, v, outer, inner),
        Buffer::Raw { dtype, .. } => Err(Error::Unsupported(format!("{op:?} on {dtype}"))),
    }
}

fn nonempty(op: ReduceOp, inner: usize, outer: usize) -> Result<()> {
    if inner == 0 && outer > 0 {
        Err(Error::Malformed(format!("{op:?} over an empty dim")))
    } else {
        Ok(())
    }
}

fn bool_reduce(op: ReduceOp, v: &[bool], outer: usize, inner: usize) -> Result<Buffer> {
    Ok(match op {
        ReduceOp::Amax => {
            nonempty(op, inner, outer)?;
            Buffer::from_vec(rows(v, outer, inner, |r| r.iter().any(|&b| b)))
        }
        ReduceOp::Amin => {
            nonempty(op, inner, outer)?;
            Buffer::from_vec(rows(v, outer, inner, |r| r.iter().all(|&b| b)))
        }
        _ => return Err(not_for(op, DType::Bool)),
    })
}

fn int_reduce<T: Int>(op: ReduceOp, v: &[T], outer: usize, inner: usize) -> Result<Buffer> {
    Ok(match op {
        ReduceOp::Sum => Buffer::from_vec(rows(v, outer, inner, |r| {
            r.iter().fold(T::ZERO, |a, &b| a.wrapping_add(b))
        })),
        ReduceOp::Prod => Buffer::from_vec(rows(v, outer, inner, |r| {
            r.iter().fold(T::ONE, |a, &b| a.wrapping_mul(b))
        })),
        ReduceOp::Amax => {
            nonempty(op, inner, outer)?;
            Buffer::from_vec(rows(v, outer, inner, |r| {
                r.iter().copied().max().unwrap_or(T::ZERO)
            }))
        }
        ReduceOp::Amin => {
            nonempty(op, inner, outer)?;
            Buffer::from_vec(rows(v, outer, inner, |r| {
                r.iter().copied().min().unwrap_or(T::ZERO)
            }))
        }
        _ => return Err(not_for(op, T::DTYPE)),
    })
}

/// `max(0, n - correction)` as a float: the var/std divisor.
fn divisor<R: Real>(n: usize, correction: i64) -> R {
    R::from_f64(((n as i128 - correction as i128).max(0)) as f64)
}

fn float_reduce<S: FloatStore>(
    op: ReduceOp,
    v: &[S],
    outer: usize,
    inner: usize,
) -> Result<Buffer> {
    let n = <S::A as Real>::from_f64(inner as f64);
    let mean = |r: &[S]| sum(r.iter().map(|x| x.to_acc())) / n;
    // A NaN anywhere gives the canonical (positive, quiet) NaN, as the kernels'
    // `maximum`/`minimum` do, so a NaN's sign bit never depends on the backend.
    let extreme = |r: &[S], max: bool| {
        let mut best = r[0].widen();
        for x in r {
            let x = x.widen();
            if x.is_nan() {
                return S::narrow(<S::C as Real>::NAN);
            }
            if (max && x > best) || (!max && x < best) {
                best = x;
            }
        }
        S::narrow(best)
    };
    let var = |r: &[S], correction: i64| {
        let m = mean(r);
        let m2 = sum(r.iter().map(|x| {
            let d = x.to_acc() - m;
            d * d
        }));
        m2 / divisor(r.len(), correction)
    };
    Ok(Buffer::from_vec(match op {
        ReduceOp::Sum => rows(v, outer, inner, |r| {
            S::from_acc(sum(r.iter().map(|x| x.to_acc())))
        }),
        // ATen's prod reduces in the stored type (no wider accumulator, unlike sum):
        // each partial product is rounded, so float16 [300, 300, 0.001] overflows to inf.
        ReduceOp::Prod => rows(v, outer, inner, |r| {
            r.iter().fold(S::narrow(<S::C as Real>::ONE), |a, x| {
                S::narrow(a.widen() * x.widen())
            })
        }),
        ReduceOp::Mean => rows(v, outer, inner, |r| S::from_acc(mean(r))),
        ReduceOp::Amax | ReduceOp::Amin => {
            nonempty(op, inner, outer)?;
            rows(v, outer, inner, |r| extreme(r, op == ReduceOp::Amax))
        }
        ReduceOp::Var { correction } => rows(v, outer, inner, |r| S::from_acc(var(r, correction))),
        ReduceOp::Std { correction } => {
            rows(v, outer, inner, |r| S::from_acc(var(r, correction).sqrt()))
        }
        _ => return Err(not_for(op, S::DTYPE)),
    }))
}

fn complex_reduce<P: CReal + Element>(
    op: ReduceOp,
    v: &[Complex<P>],
    outer: usize,
    inner: usize,
) -> Result<Buffer>
where
    Complex<P>: Element,
{
    // Complex accumulates in double precision for both complex dtypes.
    let wide = |z: &Complex<P>| Complex::new(z.re.to_f64(), z.im.to_f64());
    let narrow = |z: Complex<f64>| Complex::new(P::from_f64(z.re), P::from_f64(z.im));
    let csum = |r: &[Complex<P>]| {
        Complex::new(
            sum(r.iter().map(|z| wide(z).re)),
            sum(r.iter().map(|z| wide(z).im)),
        )
    };
    let n = inner as f64;
    // var = mean of |x - mean|^2 (a real number)
    let var = |r: &[Complex<P>], correction: i64| {
        let m = csum(r) / n;
        let m2 = sum(r.iter().map(|z| (wide(z) - m).norm_sqr()));
        m2 / divisor::<f64>(r.len(), correction)
    };
    Ok(match op {
        ReduceOp::Sum => Buffer::from_vec(rows(v, outer, inner, |r| narrow(csum(r)))),
        ReduceOp::Prod => Buffer::from_vec(rows(v, outer, inner, |r| {
            narrow(r.iter().fold(Complex::new(1.0, 0.0), |a, z| a * wide(z)))
        })),
        ReduceOp::Mean => Buffer::from_vec(rows(v, outer, inner, |r| narrow(csum(r) / n))),
        ReduceOp::Var { correction } => {
            Buffer::from_vec(rows(v, outer, inner, |r| P::from_f64(var(r, correction))))
        }
        ReduceOp::Std { correction } => Buffer::from_vec(rows(v, outer, inner, |r| {
            P::from_f64(var(r, correction).sqrt())
        })),
        _ => return Err(not_for(op, <Complex<P>>::DTYPE)),
    })
}

// ---------------------------------------------------------------------------
// ArgReduce

/// Index of the extremum of each row along `axis` (`None`: of the whole input).
pub(crate) fn arg_reduce(
    op: ArgReduceOp,
    x: &Buffer,
    shape: &[usize],
    axis: Option<usize>,
) -> Result<Buffer> {
    let (g, outer, inner) = match axis {
        Some(a) => axes_last(x, shape, &[a]),
        None => (x.clone(), 1, x.len()),
    };
    if inner == 0 && outer > 0 {
        return Err(Error::Malformed(format!("{op:?} over an empty dim")));
    }
    let max = op == ArgReduceOp::ArgMax;
    // `better(candidate, best)`; NaN beats everything and the first NaN wins.
    fn arg<T: Copy>(r: &[T], better: impl Fn(T, T) -> bool, is_nan: impl Fn(T) -> bool) -> i64 {
        let mut best = 0;
        for i in 1..r.len() {
            if is_nan(r[best]) {
                break;
            }
            if is_nan(r[i]) || better(r[i], r[best]) {
                best = i;
            }
        }
        best as i64
    }
    fn ord<T: Copy + PartialOrd>(v: &[T], outer: usize, inner: usize, max: bool) -> Vec<i64> {
        rows(v, outer, inner, |r| {
            arg(r, |a, b| if max { a > b } else { a < b }, |_| false)
        })
    }
    fn flt<S: FloatStore>(v: &[S], outer: usize, inner: usize, max: bool) -> Vec<i64> {
        rows(v, outer, inner, |r| {
            arg(
                r,
                |a: S, b: S| {
                    if max {
                        a.widen() > b.widen()
                    } else {
                        a.widen() < b.widen()
                    }
                },
                |a: S| a.widen().is_nan(),
            )
        })
    }
    Ok(Buffer::from_vec(match &g {
        Buffer::Bool(v) => ord(v, outer, inner, max),
        Buffer::U8(v) => ord(v, outer, inner, max),
        Buffer::I8(v) => ord(v, outer, inner, max),
        Buffer::I16(v) => ord(v, outer, inner, max),
        Buffer::I32(v) => ord(v, outer, inner, max),
        Buffer::I64(v) => ord(v, outer, inner, max),
        Buffer::U16(v) => ord(v, outer, inner, max),
        Buffer::U32(v) => ord(v, outer, inner, max),
        Buffer::U64(v) => ord(v, outer, inner, max),
        Buffer::F16(v) => flt(v, outer, inner, max),
        Buffer::BF16(v) => flt(v, outer, inner, max),
        Buffer::F32(v) => flt(v, outer, inner, max),
        Buffer::F64(v) => flt(v, outer, inner, max),
        other => return Err(not_for(op, other.dtype())),
    }))
}

// ---------------------------------------------------------------------------
// Cumsum and softmax

/// Inclusive prefix sum along `axis`.
pub(crate) fn cumsum(x: &Buffer, shape: &[usize], axis: usize) -> Result<Buffer> {
    let (g, outer, inner) = axes_last(x, shape, &[axis]);
    let y = super::scan::running_sum_or_product(&g, outer, inner, false)
        .ok_or_else(|| not_for("cumsum", g.dtype()))?;
    Ok(restore_axis(&y, shape, axis))
}

/// Softmax (or log-softmax) along `axis`: `exp(x - max) / sum`, computed in the
/// accumulation type and rounded once.
pub(crate) fn softmax(x: &Buffer, shape: &[usize], axis: usize, log: bool) -> Result<Buffer> {
    let (g, outer, inner) = axes_last(x, shape, &[axis]);
    fn run<S: FloatStore>(v: &[S], outer: usize, inner: usize, log: bool) -> Buffer {
        let mut out = Vec::with_capacity(v.len());
        for r in 0..outer {
            let row = &v[r * inner..(r + 1) * inner];
            // max ignoring NaN: a NaN element still poisons the row through exp/sum.
            let mut m = row.first().map_or(<S::A as Real>::ZERO, |x| x.to_acc());
            for x in row {
                let x = x.to_acc();
                if x > m || m.is_nan() {
                    m = x;
                }
            }
            let s = sum(row.iter().map(|x| (x.to_acc() - m).exp()));
            if log {
                let ls = s.ln();
                out.extend(row.iter().map(|x| S::from_acc(x.to_acc() - m - ls)));
            } else {
                out.extend(row.iter().map(|x| S::from_acc((x.to_acc() - m).exp() / s)));
            }
        }
        Buffer::from_vec(out)
    }
    let y = match &g {
        Buffer::F16(v) => run(v, outer, inner, log),
        Buffer::BF16(v) => run(v, outer, inner, log),
        Buffer::F32(v) => run(v, outer, inner, log),
        Buffer::F64(v) => run(v, outer, inner, log),
        other => return Err(not_for("softmax", other.dtype())),
    };
    Ok(restore_axis(&y, shape, axis))
}
