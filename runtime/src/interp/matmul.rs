//! `Matmul`: the batched product `[B, M, K] @ [B, K, N] -> [B, M, N]`.
//!
//! A plain triple loop in `i, k, j` order (the inner loop walks both the right
//! operand and the output row contiguously). Integers wrap; floats accumulate in
//! [`FloatStore::A`] (float16/bfloat16 in float32, float32 in float64) and round once;
//! complex accumulates in complex128.

use super::num::{CReal, FloatStore, Int, Real};
use crate::buffer::{Buffer, Element};
use crate::error::{Error, Result};
use num_complex::Complex;

/// Sizes of one batched product.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dims {
    /// batch
    pub b: usize,
    /// rows of the left operand
    pub m: usize,
    /// the contracted dim
    pub k: usize,
    /// columns of the right operand
    pub n: usize,
}

/// The generic loop: `load` widens an element to the accumulator, `store` narrows.
fn product<T: Copy, A: Copy>(
    x: &[T],
    y: &[T],
    d: Dims,
    zero: A,
    mul_add: impl Fn(A, A, A) -> A,
    load: impl Fn(T) -> A,
    store: impl Fn(A) -> T,
) -> Vec<T> {
    let mut out = Vec::with_capacity(d.b * d.m * d.n);
    let mut acc = vec![zero; d.n];
    for b in 0..d.b {
        let xb = &x[b * d.m * d.k..(b + 1) * d.m * d.k];
        let yb = &y[b * d.k * d.n..(b + 1) * d.k * d.n];
        for i in 0..d.m {
            acc.iter_mut().for_each(|a| *a = zero);
            for k in 0..d.k {
                let a = load(xb[i * d.k + k]);
                let row = &yb[k * d.n..(k + 1) * d.n];
                for (acc, &v) in acc.iter_mut().zip(row) {
                    *acc = mul_add(*acc, a, load(v));
                }
            }
            out.extend(acc.iter().map(|&a| store(a)));
        }
    }
    out
}

fn int<T: Int>(x: &[T], y: &[T], d: Dims) -> Buffer {
    Buffer::from_vec(product(
        x,
        y,
        d,
        T::ZERO,
        |acc, a, b| acc.wrapping_add(a.wrapping_mul(b)),
        |v| v,
        |v| v,
    ))
}

fn float<S: FloatStore>(x: &[S], y: &[S], d: Dims) -> Buffer {
    Buffer::from_vec(product(
        x,
        y,
        d,
        <S::A as Real>::ZERO,
        |acc, a, b| acc + a * b,
        S::to_acc,
        S::from_acc,
    ))
}

fn complex<P: CReal>(x: &[Complex<P>], y: &[Complex<P>], d: Dims) -> Buffer
where
    Complex<P>: Element,
{
    Buffer::from_vec(product(
        x,
        y,
        d,
        Complex::new(0.0f64, 0.0),
        |acc, a, b| acc + a * b,
        |z| Complex::new(z.re.to_f64(), z.im.to_f64()),
        |a| Complex::new(P::from_f64(a.re), P::from_f64(a.im)),
    ))
}

/// `x @ y` for two contiguous buffers of one dtype with the sizes `d`.
pub(crate) fn matmul(x: &Buffer, y: &Buffer, d: Dims) -> Result<Buffer> {
    if x.len() != d.b * d.m * d.k || y.len() != d.b * d.k * d.n {
        return Err(Error::Malformed(format!(
            "matmul operands do not match {d:?}"
        )));
    }
    Ok(match (x, y) {
        (Buffer::U8(a), Buffer::U8(b)) => int(a, b, d),
        (Buffer::I8(a), Buffer::I8(b)) => int(a, b, d),
        (Buffer::I16(a), Buffer::I16(b)) => int(a, b, d),
        (Buffer::I32(a), Buffer::I32(b)) => int(a, b, d),
        (Buffer::I64(a), Buffer::I64(b)) => int(a, b, d),
        (Buffer::U16(a), Buffer::U16(b)) => int(a, b, d),
        (Buffer::U32(a), Buffer::U32(b)) => int(a, b, d),
        (Buffer::U64(a), Buffer::U64(b)) => int(a, b, d),
        (Buffer::F16(a), Buffer::F16(b)) => float(a, b, d),
        (Buffer::BF16(a), Buffer::BF16(b)) => float(a, b, d),
        (Buffer::F32(a), Buffer::F32(b)) => float(a, b, d),
        (Buffer::F64(a), Buffer::F64(b)) => float(a, b, d),
        (Buffer::C64(a), Buffer::C64(b)) => complex(a, b, d),
        (Buffer::C128(a), Buffer::C128(b)) => complex(a, b, d),
        _ => {
            return Err(Error::Malformed(format!(
                "matmul is not defined for {} @ {}",
                x.dtype(),
                y.dtype()
            )))
        }
    })
}
