//! Creation kernels without inputs: `random` (Philox, through
//! [`lazyfuse_ir::philox::sample`]) and `linspace` with PyTorch's CPU arithmetic.

use super::cast::{build, Value};
use crate::buffer::Buffer;
use crate::error::Result;
use half::{bf16, f16};
use lazyfuse_ir::philox::{sample, Distribution, Sample};
use lazyfuse_ir::DType;

/// `n` elements of a random node: element `i` is `sample(…, i)` converted to `to`.
pub(crate) fn random(
    distribution: Distribution,
    seed: u64,
    offset: u64,
    to: DType,
    n: usize,
) -> Result<Buffer> {
    // float16/bfloat16 round the f64 sample once (building through f32 would round
    // twice); uniform samples are exact in the dtype already.
    let once: fn(f64) -> f64 = match to {
        DType::F16 => |x| f64::from(f16::from_f64(x)),
        DType::BF16 => |x| f64::from(bf16::from_f64(x)),
        _ => |x| x,
    };
    build(to, n, |i| {
        match sample(distribution, to, seed, offset, i as u64) {
            Sample::Real(x) => Value::Float(once(x)),
            Sample::Complex(re, im) => Value::Complex(re, im),
            Sample::Int(k) => Value::Int(k),
        }
    })
}

/// PyTorch's `linspace_kernel`: `step = (end - start) / (steps - 1)` in the dtype's
/// arithmetic (`f64` for integer dtypes), then element `i` is `start + step * i` for
/// `i < steps / 2` and `end - step * (steps - 1 - i)` after, so that both ends are
/// exact. PyTorch's CPU build contracts these into fused multiply-adds (checked
/// element by element against PyTorch 2.15 for float32 and float64), so they are
/// `mul_add` here. float16/bfloat16 compute in float32 (PyTorch's
/// `opmath`: float32, rounded once); integer dtypes truncate the `f64` result; complex dtypes
/// compute their real part as their real dtype (the imaginary part is zero).
pub(crate) fn linspace(start: f64, end: f64, to: DType, n: usize) -> Result<Buffer> {
    if n <= 1 {
        return build(to, n, |_| Value::Float(start));
    }
    let half = n / 2;
    let last = (n - 1) as f64;
    // (start, step, end) in the arithmetic, and one element's value from them.
    let value: Box<dyn Fn(usize) -> Value> = match to.to_real() {
        DType::F32 => {
            let (s, e) = (start as f32, end as f32);
            let step = (e - s) / last as f32;
            Box::new(move |i| {
                let v = if i < half {
                    step.mul_add(i as f32, s)
                } else {
                    (-step).mul_add((n - 1 - i) as f32, e)
                };
                Value::Float(f64::from(v))
            })
        }
        DType::F16 => half_steps(start, end, n, |x| f64::from(f16::from_f64(x))),
        DType::BF16 => half_steps(start, end, n, |x| f64::from(bf16::from_f64(x))),
        d if d.is_integer() => {
            // The endpoints are converted to the dtype first (truncation), the step
            // is a double.
            let (s, e) = (start.trunc(), end.trunc());
            let step = (e - s) / last;
            Box::new(move |i| {
                let v = if i < half {
                    step.mul_add(i as f64, s)
                } else {
                    (-step).mul_add((n - 1 - i) as f64, e)
                };
                Value::Int(v as i64 as i128)
            })
        }
        _ => {
            let step = (end - start) / last;
            Box::new(move |i| {
                Value::Float(if i < half {
                    step.mul_add(i as f64, start)
                } else {
                    (-step).mul_add((n - 1 - i) as f64, end)
                })
            })
        }
    };
    build(to, n, value)
}

/// linspace in a 16-bit float type: the endpoints are rounded to the type, the
/// arithmetic is the float32 one (PyTorch's `opmath` type for `Half`/`BFloat16`), and
/// each result is rounded to the type once (checked against PyTorch 2.15).
fn half_steps(
    start: f64,
    end: f64,
    n: usize,
    round: fn(f64) -> f64,
) -> Box<dyn Fn(usize) -> Value> {
    let (s, e) = (round(start) as f32, round(end) as f32);
    let step = (e - s) / (n - 1) as f32;
    let half = n / 2;
    Box::new(move |i| {
        let v = if i < half {
            step.mul_add(i as f32, s)
        } else {
            (-step).mul_add((n - 1 - i) as f32, e)
        };
        Value::Float(round(f64::from(v)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(b: Buffer) -> Vec<f32> {
        b.as_slice::<f32>().unwrap().to_vec()
    }

    /// Values printed by PyTorch 2.15 (`torch.linspace(…).tolist()`).
    #[test]
    fn linspace_matches_pytorch() {
        let v = f32s(linspace(0.0, 10.0, DType::F32, 7).unwrap());
        let expected = [
            0.0,
            1.666_666_6,
            3.333_333_3,
            5.0,
            6.666_667,
            8.333_333,
            10.0,
        ];
        assert_eq!(v, expected);
        let i = linspace(-5.0, 5.0, DType::I32, 4).unwrap();
        assert_eq!(i.as_slice::<i32>().unwrap(), [-5, -1, 1, 5]);
        let i = linspace(0.5, 7.9, DType::I64, 3).unwrap();
        assert_eq!(i.as_slice::<i64>().unwrap(), [0, 3, 7]);
        let h = linspace(-1.3, 100.7, DType::F16, 51).unwrap();
        let h: Vec<f64> = h.as_slice::<f16>().unwrap()[20..30]
            .iter()
            .map(|x| f64::from(*x))
            .collect();
        assert_eq!(
            h,
            [
                39.5, 41.53125, 43.5625, 45.625, 47.65625, 49.6875, 51.71875, 53.78125, 55.8125,
                57.84375
            ]
        );
        let b = linspace(-1.3, 100.7, DType::BF16, 51).unwrap();
        let b: Vec<f64> = b.as_slice::<bf16>().unwrap()[20..30]
            .iter()
            .map(|x| f64::from(*x))
            .collect();
        assert_eq!(
            b,
            [39.5, 41.5, 43.5, 45.5, 47.5, 49.5, 51.75, 53.75, 55.75, 57.75]
        );
    }

    #[test]
    fn linspace_short_and_empty() {
        assert_eq!(f32s(linspace(3.0, 1.0, DType::F32, 1).unwrap()), [3.0]);
        assert_eq!(linspace(3.0, 1.0, DType::F32, 0).unwrap().len(), 0);
    }

    #[test]
    fn random_is_reproducible_and_in_range() {
        let a = random(Distribution::Uniform, 1, 0, DType::F32, 1000).unwrap();
        assert_eq!(
            a,
            random(Distribution::Uniform, 1, 0, DType::F32, 1000).unwrap()
        );
        assert!(f32s(a).iter().all(|x| (0.0..1.0).contains(x)));
        let d = Distribution::Integer { low: 0, high: 2 };
        let b = random(d, 1, 0, DType::Bool, 100).unwrap();
        let trues = b.as_slice::<bool>().unwrap().iter().filter(|x| **x).count();
        assert!((20..80).contains(&trues), "{trues}");
    }
}
