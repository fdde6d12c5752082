//! The counter-based random generator behind `rand`, `randn` and `randint`:
//! Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11),
//! and the pure map from `(seed, offset, element index)` to an element's value.
//!
//! Element `i` of a random node depends only on `(seed, offset, i)`: its 128-bit
//! counter is `offset + i` (wrapping in 64 bits, high words zero) and its 64-bit key
//! is the seed. Every backend (the interpreter today, compiled kernels later) calls
//! [`sample`] (or reimplements these few lines) and so produces the same numbers for
//! the same seed, offset and shape, in any order and with any parallelism. One
//! element consumes one counter, so a call that makes `n` elements advances the
//! generator's offset by `n`.
//!
//! How each distribution uses the four 32-bit words `w0..w3` of its counter's block:
//! - uniform `[0, 1)`: the top `d` bits of `w0` times `2^-d`, with `d` the dtype's
//!   significand digits (11 for float16, 8 for bfloat16, 24 for float32); float64
//!   takes the top 53 bits of `w0:w1`. Every value is exact in the dtype, so it never
//!   rounds up to 1. Complex dtypes take the imaginary part from `w2` (`w2:w3`).
//! - normal: Box–Muller on `u1 = w0:w1` and `u2 = w2:w3` (53 bits each), in `f64`:
//!   `sqrt(-2 ln(1 - u1)) · cos(2π u2)` (`1 - u1` is in `(0, 1]`, so the logarithm is
//!   finite). Complex dtypes use the pair `(cos, sin)` scaled by `sqrt(1/2)`, so that
//!   the complex variance is 1, as PyTorch's.
//! - integers in `[low, high)`: `low + (w0:w1 mod (high - low))` with 64-bit
//!   words. The modulo is biased by at most `(high - low) / 2^64` (below `2^-32` for
//!   every range under `2^32`), which is documented rather than removed: a
//!   rejection loop would make an element's cost data-dependent for every backend.

use crate::dtype::DType;

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// The Philox4x32 bijection with 10 rounds: one 128-bit block from a 128-bit counter
/// and a 64-bit key (Random123's `philox4x32_R(10, ctr, key)`).
///
/// ```
/// use lazyfuse_ir::philox::philox4x32_10;
/// assert_eq!(
///     philox4x32_10([0; 4], [0; 2]),
///     [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
/// );
/// ```
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (counter, key);
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let p0 = u64::from(M0) * u64::from(c[0]);
        let p1 = u64::from(M1) * u64::from(c[2]);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// The block of element `index` of a random node with this seed and offset.
///
/// ```
/// use lazyfuse_ir::philox::{block, philox4x32_10};
/// assert_eq!(block(0, 5, 2), philox4x32_10([7, 0, 0, 0], [0, 0]));
/// ```
pub fn block(seed: u64, offset: u64, index: u64) -> [u32; 4] {
    let counter = offset.wrapping_add(index);
    philox4x32_10(
        [counter as u32, (counter >> 32) as u32, 0, 0],
        [seed as u32, (seed >> 32) as u32],
    )
}

/// What a random node draws from.
///
/// ```
/// use lazyfuse_ir::philox::Distribution;
/// let d = Distribution::Integer { low: 0, high: 10 };
/// assert_ne!(d, Distribution::Uniform);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// uniform on `[0, 1)` (`rand`)
    Uniform,
    /// standard normal (`randn`)
    Normal,
    /// uniform integers in `[low, high)` (`randint`); `low < high`
    Integer {
        /// smallest value
        low: i64,
        /// one past the largest value
        high: i64,
    },
}

/// One element's value before conversion to the node's dtype.
///
/// ```
/// use lazyfuse_ir::philox::{sample, Distribution, Sample};
/// use lazyfuse_ir::DType;
/// let s = sample(Distribution::Normal, DType::C64, 1, 0, 0);
/// assert!(matches!(s, Sample::Complex(..)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sample {
    /// a real number, exact in the node's dtype for `Uniform`
    Real(f64),
    /// a complex number (complex dtypes)
    Complex(f64, f64),
    /// an integer in `[low, high)`
    Int(i128),
}

/// Significand digits used for uniform floats of a dtype (of its real part).
fn digits(dtype: DType) -> u32 {
    match dtype.to_real() {
        DType::F16 => 11,
        DType::BF16 => 8,
        DType::F64 => 53,
        _ => 24,
    }
}

/// A uniform number in `[0, 1)` from the top `d` (≤ 32) bits of a word.
fn uniform32(word: u32, d: u32) -> f64 {
    f64::from(word >> (32 - d)) * 2f64.powi(-(d as i32))
}

/// A uniform number in `[0, 1)` from the top 53 bits of two words.
fn uniform53(hi: u32, lo: u32) -> f64 {
    let bits = (u64::from(hi) << 32 | u64::from(lo)) >> 11;
    bits as f64 * 2f64.powi(-53)
}

fn uniform(dtype: DType, hi: u32, lo: u32) -> f64 {
    match digits(dtype) {
        53 => uniform53(hi, lo),
        d => uniform32(hi, d),
    }
}

/// Element `index` of a random node (`seed`, `offset`, `distribution`) of `dtype`.
/// A pure function: the interpreter calls it per element and compiled backends must
/// match it bit for bit before the conversion to the dtype.
///
/// ```
/// use lazyfuse_ir::philox::{sample, Distribution, Sample};
/// use lazyfuse_ir::DType;
/// let Sample::Real(u) = sample(Distribution::Uniform, DType::F32, 42, 0, 7) else { panic!() };
/// assert!((0.0..1.0).contains(&u));
/// let d = Distribution::Integer { low: -3, high: 4 };
/// let Sample::Int(k) = sample(d, DType::I64, 42, 0, 7) else { panic!() };
/// assert!((-3..4).contains(&k));
/// ```
pub fn sample(
    distribution: Distribution,
    dtype: DType,
    seed: u64,
    offset: u64,
    index: u64,
) -> Sample {
    let [w0, w1, w2, w3] = block(seed, offset, index);
    match distribution {
        Distribution::Uniform if dtype.is_complex() => {
            Sample::Complex(uniform(dtype, w0, w1), uniform(dtype, w2, w3))
        }
        Distribution::Uniform => Sample::Real(uniform(dtype, w0, w1)),
        Distribution::Normal => {
            let (u1, u2) = (uniform53(w0, w1), uniform53(w2, w3));
            let r = (-2.0 * (1.0 - u1).ln()).sqrt();
            let theta = 2.0 * std::f64::consts::PI * u2;
            if dtype.is_complex() {
                let s = std::f64::consts::FRAC_1_SQRT_2;
                Sample::Complex(r * theta.cos() * s, r * theta.sin() * s)
            } else {
                Sample::Real(r * theta.cos())
            }
        }
        Distribution::Integer { low, high } => {
            let range = (high as u64).wrapping_sub(low as u64).max(1);
            let bits = u64::from(w0) << 32 | u64::from(w1);
            Sample::Int(i128::from(low) + i128::from(bits % range))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's `kat_vectors` for `philox4x32 10` (checked by hand against the
    /// published file: zero, all-ones, and the digits-of-pi vector).
    #[test]
    fn known_answers() {
        assert_eq!(
            philox4x32_10([0; 4], [0; 2]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    #[test]
    fn uniform_is_exact_and_below_one() {
        // The largest words give the largest values, still below 1 in every dtype.
        assert_eq!(uniform32(u32::MAX, 24), 1.0 - 2f64.powi(-24));
        assert_eq!(uniform32(u32::MAX, 11), 1.0 - 2f64.powi(-11));
        assert_eq!(uniform53(u32::MAX, u32::MAX), 1.0 - 2f64.powi(-53));
        assert_eq!(uniform32(0, 8), 0.0);
    }

    #[test]
    fn integers_cover_the_full_int64_range() {
        let d = Distribution::Integer {
            low: i64::MIN,
            high: i64::MAX,
        };
        for i in 0..100 {
            let Sample::Int(k) = sample(d, DType::I64, 1, 0, i) else {
                panic!("integer sample expected");
            };
            assert!((i128::from(i64::MIN)..i128::from(i64::MAX)).contains(&k));
        }
    }

    #[test]
    fn elements_depend_on_seed_offset_and_index_only() {
        let a = sample(Distribution::Normal, DType::F64, 9, 10, 5);
        assert_eq!(a, sample(Distribution::Normal, DType::F64, 9, 14, 1));
        assert_ne!(a, sample(Distribution::Normal, DType::F64, 8, 10, 5));
    }
}
