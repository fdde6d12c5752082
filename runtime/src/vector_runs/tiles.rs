//! Tile ops: the steps of a float16 or bfloat16 elementwise kernel run over
//! float32 tiles, 16 or 8 lanes wide where the processor has them.
//!
//! Such a kernel computes each op in float32 and rounds the result to its
//! dtype (PyTorch's and the interpreter's order). Inline, in Cranelift's four
//! lanes, the conversions cost more than the arithmetic: a dozen integer steps
//! to widen a float16 load and as many to round each op. A kernel whose values
//! are all of one narrow dtype (`lazyfuse_codegen`'s tile programs) instead
//! widens each input run into a float32 tile on its stack, applies each op
//! tile to tile with one of these, and narrows the stored tile into its
//! output (`lf_narrow_<dtype>`); transcendentals take the float32 run routine
//! and then `lf_tile_round_<dtype>`.
//!
//! Names, each `unsafe extern "C"`, `n` points (`n ≤ 0`: nothing):
//! - `lf_tile_widen_<f16|bf16>(dst: *mut f32, src: *const u16, n)`: the codes'
//!   exact float32 values (`half`'s `to_f32`: a NaN quieted, its payload kept);
//! - `lf_tile_round_<f16|bf16>(dst: *mut f32, src: *const f32, n)`: each value
//!   rounded to the dtype and back (in place where `dst == src`);
//! - `lf_tile_<add|sub|mul|div|max|min>_<f16|bf16>(dst, a, b, n)`: the float32
//!   op, rounded;
//! - `lf_tile_<relu|neg|abs>_<f16|bf16>(dst, x, n)`: the op, rounded (a
//!   constant operand need not be on the dtype's grid);
//! - the same ops as `lf_tile_<op>_f32`, not rounded: for a value that only
//!   stores read, which `lf_narrow_<dtype>` rounds (rounding it first would
//!   change no code).
//!
//! float16's widening and rounding take the processor's conversions where it
//! has them (`half_hw.rs`: one instruction for 16 or 8 values; an op rounds
//! each vector of its results in the same pass, before storing it), the
//! arithmetic forms below elsewhere.
//!
//! Every step is the kernels' own inline vector code's, bit for bit
//! (`lower::vnarrow` and `lower::vector`): rounding to nearest even on the
//! dtype's grid, overflow to ±inf, float16 subnormals, signed zeros, a NaN
//! keeping the top bits of its payload with the quiet bit set; `max`/`min` as
//! `a < b ? b : a` (`b < a ? b : a`) with float32's default NaN where either
//! is NaN; `relu` as `x < 0 ? 0 : x`.

use super::half_hw::{binary_f16_hw, hw_f16, round_f16_hw, widen_f16_hw};

/// `x` rounded to float16 and back: the magnitude rounded on float16's grid by
/// adding and subtracting `2^(e+13)` (at least `2^-1`, the subnormals' grid),
/// infinity from 65520 (which also keeps the exponents the addition would
/// overflow away), a NaN quieted with its low 13 payload bits cleared.
#[inline(always)]
pub(super) fn round_f16(x: f32) -> f32 {
    let bits = x.to_bits();
    let abits = bits & 0x7FFF_FFFF;
    let a = f32::from_bits(abits);
    let r = if a.is_nan() {
        abits | 0x0040_0000
    } else if a >= 65520.0 {
        0x7F80_0000
    } else {
        let m = f32::from_bits((abits & 0x7F80_0000).max(113 << 23).wrapping_add(13 << 23));
        ((a + m) - m).to_bits()
    };
    f32::from_bits(((bits ^ abits) | r) & !0x1FFF)
}

/// `x` rounded to bfloat16 and back: to nearest even on the bits (a carry
/// moving into the exponent), a NaN quieted.
#[inline(always)]
pub(super) fn round_bf16(x: f32) -> f32 {
    let bits = x.to_bits();
    let r = if x.is_nan() {
        bits | 0x0040_0000
    } else {
        bits.wrapping_add(0x7FFF + ((bits >> 16) & 1))
    };
    f32::from_bits(r & 0xFFFF_0000)
}

/// The float16 code `c`'s value: its magnitude's bits shifted into float32's
/// place times `2^112` (subnormals included), an infinity or a NaN (quieted)
/// with float32's exponent.
#[inline(always)]
pub(super) fn widen_f16(c: u16) -> f32 {
    let h = u32::from(c);
    let abs = h & 0x7FFF;
    let shifted = abs << 13;
    let r = if abs > 0x7C00 {
        shifted | 0x7FC0_0000
    } else if abs == 0x7C00 {
        0x7F80_0000
    } else {
        (f32::from_bits(shifted) * f32::from_bits(239 << 23)).to_bits()
    };
    f32::from_bits(r | (h & 0x8000) << 16)
}

/// `x` as it is: the ops of a value that only stores read, which round it
/// themselves (`lf_narrow_<dtype>`).
#[inline(always)]
fn keep(x: f32) -> f32 {
    x
}

/// The bfloat16 code `c`'s value: the upper half of a float32, a NaN quieted.
#[inline(always)]
pub(super) fn widen_bf16(c: u16) -> f32 {
    let x = f32::from_bits(u32::from(c) << 16);
    if x.is_nan() {
        f32::from_bits(x.to_bits() | 0x0040_0000)
    } else {
        x
    }
}

/// The float16 or bfloat16 (`bf`) code `c`'s value: the one-code form of
/// `half_hw::widen16`, for the codes short of a vector.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(super) fn widen_code(c: u16, bf: bool) -> f32 {
    if bf {
        widen_bf16(c)
    } else {
        widen_f16(c)
    }
}

/// `a < b ? b : a`, float32's default NaN where either is NaN (`vector`'s
/// `Maximum`).
#[inline(always)]
pub(super) fn maximum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::from_bits(0x7FC0_0000)
    } else if a < b {
        b
    } else {
        a
    }
}

/// `b < a ? b : a`, float32's default NaN where either is NaN.
#[inline(always)]
pub(super) fn minimum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::from_bits(0x7FC0_0000)
    } else if b < a {
        b
    } else {
        a
    }
}

/// One widening function per dtype (see the module doc); `$hw`: float16,
/// which takes the processor's conversions where it has them ([`hw_f16`]).
macro_rules! widen_fn {
    ($name:ident, $widen:ident, $hw:expr) => {
        /// Writes the float32 value of each of the `n` codes at `src` to `dst`.
        ///
        /// # Safety
        /// `src` must be valid for reads of `n` aligned codes and `dst` for
        /// writes of `n` aligned float32 values, the two disjoint and written
        /// by no one else during the call (the JIT kernel passes a run of its
        /// input and a tile on its own stack).
        pub(super) unsafe extern "C" fn $name(dst: *mut f32, src: *const u16, n: i64) {
            if n <= 0 {
                return;
            }
            let n = n as usize;
            // SAFETY: the caller's contract above.
            let (dst, src) = unsafe {
                (
                    std::slice::from_raw_parts_mut(dst, n),
                    std::slice::from_raw_parts(src, n),
                )
            };
            if $hw && hw_f16() {
                return widen_f16_hw(dst, src);
            }
            by_level!(
                fn apply(dst: &mut [f32], src: &[u16]) {
                    use super::$widen as widen;
                    dst.iter_mut().zip(src).for_each(|(d, &c)| *d = widen(c));
                },
                (dst, src)
            )
        }
    };
}

/// One rounding function per dtype (see the module doc; `$hw` as for
/// [`widen_fn`]).
macro_rules! round_fn {
    ($name:ident, $round:ident, $hw:expr) => {
        /// Writes each of the `n` float32 values at `src` rounded to the dtype
        /// to `dst` (in place where the two are the same).
        ///
        /// # Safety
        /// `src` must be valid for reads and `dst` for writes of `n` aligned
        /// float32 values, the same run or disjoint, written by no one else
        /// during the call (the JIT kernel's stack tiles).
        unsafe extern "C" fn $name(dst: *mut f32, src: *const f32, n: i64) {
            if n <= 0 {
                return;
            }
            // SAFETY: the caller's contract above.
            let (dst, src) = unsafe { super::run_slices(dst, src, n as usize) };
            if $hw && hw_f16() {
                if let Some(src) = src {
                    dst.copy_from_slice(src);
                }
                return round_f16_hw(dst);
            }
            by_level!(
                fn apply(dst: &mut [f32], src: Option<&[f32]>) {
                    use super::$round as round;
                    match src {
                        Some(src) => dst.iter_mut().zip(src).for_each(|(d, &x)| *d = round(x)),
                        None => dst.iter_mut().for_each(|d| *d = round(*d)),
                    }
                },
                (dst, src)
            )
        }
    };
}

/// One unary op per dtype, rounded (see the module doc; `$hw` as for
/// [`widen_fn`]: the op and the processor's rounding in one pass, the run
/// passed as both operands of [`binary_f16_hw`]).
macro_rules! unary_fn {
    ($name:ident, $round:ident, $hw:expr, |$x:ident| $body:expr) => {
        /// Writes the op of each of the `n` float32 values at `src`, rounded
        /// to the dtype, to `dst`.
        ///
        /// # Safety
        /// `src` must be valid for reads and `dst` for writes of `n` aligned
        /// float32 values, disjoint, written by no one else during the call
        /// (the JIT kernel's stack tiles).
        unsafe extern "C" fn $name(dst: *mut f32, src: *const f32, n: i64) {
            if n <= 0 {
                return;
            }
            let n = n as usize;
            // SAFETY: the caller's contract above.
            let (dst, src) = unsafe {
                (
                    std::slice::from_raw_parts_mut(dst, n),
                    std::slice::from_raw_parts(src, n),
                )
            };
            if $hw && hw_f16() {
                return binary_f16_hw(dst, src, src, |$x, _| $body);
            }
            by_level!(
                fn apply(dst: &mut [f32], src: &[f32]) {
                    use super::$round as round;
                    dst.iter_mut()
                        .zip(src)
                        .for_each(|(d, &$x)| *d = round($body));
                },
                (dst, src)
            )
        }
    };
}

/// One binary op per dtype, rounded (see the module doc; `$hw` as for
/// [`unary_fn`]).
macro_rules! binary_fn {
    ($name:ident, $round:ident, $hw:expr, |$a:ident, $b:ident| $body:expr) => {
        /// Writes the op of the `n` float32 pairs at `a` and `b`, rounded to
        /// the dtype, to `dst`.
        ///
        /// # Safety
        /// `a` and `b` must be valid for reads and `dst` for writes of `n`
        /// aligned float32 values, `dst` disjoint from both (which may be the
        /// same), written by no one else during the call (the JIT kernel's
        /// stack tiles).
        unsafe extern "C" fn $name(dst: *mut f32, a: *const f32, b: *const f32, n: i64) {
            if n <= 0 {
                return;
            }
            let n = n as usize;
            // SAFETY: the caller's contract above.
            let (dst, a, b) = unsafe {
                (
                    std::slice::from_raw_parts_mut(dst, n),
                    std::slice::from_raw_parts(a, n),
                    std::slice::from_raw_parts(b, n),
                )
            };
            if $hw && hw_f16() {
                return binary_f16_hw(dst, a, b, |$a, $b| $body);
            }
            by_level!(
                fn apply(dst: &mut [f32], a: &[f32], b: &[f32]) {
                    use super::$round as round;
                    #[allow(unused_imports)]
                    use super::{maximum, minimum};
                    dst.iter_mut()
                        .zip(a.iter().zip(b))
                        .for_each(|(d, (&$a, &$b))| *d = round($body));
                },
                (dst, a, b)
            )
        }
    };
}

/// The unary and binary ops of each dtype.
macro_rules! dtype_ops {
    ($round:ident, $hw:literal; $relu:ident, $neg:ident, $abs:ident,
     $add:ident, $sub:ident, $mul:ident, $div:ident, $max:ident, $min:ident) => {
        unary_fn!($relu, $round, $hw, |x| if x < 0.0 { 0.0 } else { x });
        unary_fn!($neg, $round, $hw, |x| -x);
        unary_fn!($abs, $round, $hw, |x| x.abs());
        binary_fn!($add, $round, $hw, |a, b| a + b);
        binary_fn!($sub, $round, $hw, |a, b| a - b);
        binary_fn!($mul, $round, $hw, |a, b| a * b);
        binary_fn!($div, $round, $hw, |a, b| a / b);
        binary_fn!($max, $round, $hw, |a, b| maximum(a, b));
        binary_fn!($min, $round, $hw, |a, b| minimum(a, b));
    };
}

widen_fn!(widen_f16_run, widen_f16, true);
widen_fn!(widen_bf16_run, widen_bf16, false);
round_fn!(round_f16_run, round_f16, true);
round_fn!(round_bf16_run, round_bf16, false);
dtype_ops!(round_f16, true; relu_f16, neg_f16, abs_f16, add_f16, sub_f16, mul_f16, div_f16, max_f16, min_f16);
dtype_ops!(round_bf16, false; relu_bf16, neg_bf16, abs_bf16, add_bf16, sub_bf16, mul_bf16, div_bf16, max_bf16, min_bf16);
dtype_ops!(keep, false; relu_f32, neg_f32, abs_f32, add_f32, sub_f32, mul_f32, div_f32, max_f32, min_f32);

/// The tile ops: symbol and address.
pub(super) fn symbols() -> [(&'static str, *const u8); 31] {
    [
        ("lf_tile_widen_f16", widen_f16_run as *const u8),
        ("lf_tile_widen_bf16", widen_bf16_run as *const u8),
        ("lf_tile_round_f16", round_f16_run as *const u8),
        ("lf_tile_round_bf16", round_bf16_run as *const u8),
        ("lf_tile_relu_f16", relu_f16 as *const u8),
        ("lf_tile_neg_f16", neg_f16 as *const u8),
        ("lf_tile_abs_f16", abs_f16 as *const u8),
        ("lf_tile_add_f16", add_f16 as *const u8),
        ("lf_tile_sub_f16", sub_f16 as *const u8),
        ("lf_tile_mul_f16", mul_f16 as *const u8),
        ("lf_tile_div_f16", div_f16 as *const u8),
        ("lf_tile_max_f16", max_f16 as *const u8),
        ("lf_tile_min_f16", min_f16 as *const u8),
        ("lf_tile_relu_bf16", relu_bf16 as *const u8),
        ("lf_tile_neg_bf16", neg_bf16 as *const u8),
        ("lf_tile_abs_bf16", abs_bf16 as *const u8),
        ("lf_tile_add_bf16", add_bf16 as *const u8),
        ("lf_tile_sub_bf16", sub_bf16 as *const u8),
        ("lf_tile_mul_bf16", mul_bf16 as *const u8),
        ("lf_tile_div_bf16", div_bf16 as *const u8),
        ("lf_tile_max_bf16", max_bf16 as *const u8),
        ("lf_tile_min_bf16", min_bf16 as *const u8),
        ("lf_tile_relu_f32", relu_f32 as *const u8),
        ("lf_tile_neg_f32", neg_f32 as *const u8),
        ("lf_tile_abs_f32", abs_f32 as *const u8),
        ("lf_tile_add_f32", add_f32 as *const u8),
        ("lf_tile_sub_f32", sub_f32 as *const u8),
        ("lf_tile_mul_f32", mul_f32 as *const u8),
        ("lf_tile_div_f32", div_f32 as *const u8),
        ("lf_tile_max_f32", max_f32 as *const u8),
        ("lf_tile_min_f32", min_f32 as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector_runs::narrow::tests::patterns;
    use half::{bf16, f16};

    /// The rounding is `half`'s there and back, and widening every code is
    /// `half`'s `to_f32`, at every level, bit for bit.
    #[test]
    fn rounding_and_widening_are_halfs() {
        let xs = patterns();
        let n = xs.len() as i64;
        let codes: Vec<u16> = (0..=u16::MAX).collect();
        crate::vector_runs::each_level(|| {
            let mut out = vec![0f32; xs.len()];
            // SAFETY: `xs` and `out` hold `n` values each and are disjoint.
            unsafe { round_f16_run(out.as_mut_ptr(), xs.as_ptr(), n) };
            for (x, o) in xs.iter().zip(&out) {
                let want = f16::from_f32(*x).to_f32().to_bits();
                assert_eq!(o.to_bits(), want, "float16 of {:#010x}", x.to_bits());
            }
            let mut inplace = xs.clone();
            // SAFETY: one run of `n` values, in place.
            unsafe { round_bf16_run(inplace.as_mut_ptr(), inplace.as_ptr(), n) };
            for (x, o) in xs.iter().zip(&inplace) {
                let want = bf16::from_f32(*x).to_f32().to_bits();
                assert_eq!(o.to_bits(), want, "bfloat16 of {:#010x}", x.to_bits());
            }
            let mut wide = vec![0f32; codes.len()];
            let m = codes.len() as i64;
            // SAFETY: `codes` and `wide` hold `m` elements each, disjoint.
            unsafe { widen_f16_run(wide.as_mut_ptr(), codes.as_ptr(), m) };
            for (&c, w) in codes.iter().zip(&wide) {
                let want = f16::from_bits(c).to_f32().to_bits();
                assert_eq!(w.to_bits(), want, "float16 code {c:#06x}");
            }
            // SAFETY: as above.
            unsafe { widen_bf16_run(wide.as_mut_ptr(), codes.as_ptr(), m) };
            for (&c, w) in codes.iter().zip(&wide) {
                let want = bf16::from_bits(c).to_f32().to_bits();
                assert_eq!(w.to_bits(), want, "bfloat16 code {c:#06x}");
            }
        });
    }

    /// The binary ops round the float32 op; max and min give float32's default
    /// NaN and keep the first of equal operands (signed zeros). Runs of 8
    /// special pairs and then 300 of every kind of value, so that whole
    /// vectors and a remainder take every path.
    #[test]
    fn binary_ops_round_the_float32_op() {
        let mut a: Vec<f32> = vec![1.0, 0.0, -0.0, f32::NAN, 3.0, 1e-6, 70000.0, 0.1];
        let mut b: Vec<f32> = vec![
            1e-4,
            -0.0,
            0.0,
            1.0,
            f32::from_bits(0xFFC0_1234),
            3.0,
            1.0,
            0.2,
        ];
        let xs = patterns();
        a.extend(xs.iter().step_by(7001).take(300));
        b.extend(xs.iter().skip(3).step_by(6007).take(300));
        let n = a.len() as i64;
        type Binary = unsafe extern "C" fn(*mut f32, *const f32, *const f32, i64);
        type Want = fn(f32, f32) -> f32;
        let cases: [(Binary, Want); 7] = [
            (add_f16, |x, y| f16::from_f32(x + y).to_f32()),
            (sub_f16, |x, y| f16::from_f32(x - y).to_f32()),
            (mul_f16, |x, y| f16::from_f32(x * y).to_f32()),
            (div_f16, |x, y| f16::from_f32(x / y).to_f32()),
            (div_bf16, |x, y| bf16::from_f32(x / y).to_f32()),
            (max_f16, |x, y| f16::from_f32(maximum(x, y)).to_f32()),
            (min_bf16, |x, y| bf16::from_f32(minimum(x, y)).to_f32()),
        ];
        crate::vector_runs::each_level(|| {
            let mut out = vec![0f32; a.len()];
            for (f, want) in cases {
                // SAFETY: three runs of `n` values, `out` disjoint from both.
                unsafe { f(out.as_mut_ptr(), a.as_ptr(), b.as_ptr(), n) };
                for ((&x, &y), o) in a.iter().zip(&b).zip(&out) {
                    let (o, w) = (o.to_bits(), want(x, y).to_bits());
                    // (NaN operands: the payload of the operand the
                    // processor keeps, which the two sides may order apart)
                    let nan = (o & 0x7FFF_FFFF) > 0x7F80_0000 && (w & 0x7FFF_FFFF) > 0x7F80_0000;
                    assert!(
                        o == w || (nan && (x.is_nan() && y.is_nan())),
                        "{x} {y}: {o:#x} {w:#x}"
                    );
                }
            }
        });
        assert_eq!(maximum(0.0, -0.0).to_bits(), 0);
        assert_eq!(maximum(-0.0, 0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(minimum(0.0, -0.0).to_bits(), 0);
        assert_eq!(maximum(f32::NAN, 1.0).to_bits(), 0x7FC0_0000);
    }

    /// The unary ops round the float32 op at every level (float16's through
    /// the processor's conversions in the op's own pass): every kind of value,
    /// signed zeros and NaNs included, in whole vectors and a remainder.
    #[test]
    fn unary_ops_round_the_float32_op() {
        let mut xs: Vec<f32> = vec![
            -0.0,
            0.0,
            f32::NAN,
            f32::from_bits(0xFF80_0001),
            65519.0,
            -65520.0,
        ];
        xs.extend(patterns().iter().step_by(4099).take(500));
        let n = xs.len() as i64;
        type Unary = unsafe extern "C" fn(*mut f32, *const f32, i64);
        type Want = fn(f32) -> f32;
        let relu: fn(f32) -> f32 = |x| if x < 0.0 { 0.0 } else { x };
        let cases: [(Unary, Want); 6] = [
            (relu_f16, |x| {
                f16::from_f32(if x < 0.0 { 0.0 } else { x }).to_f32()
            }),
            (neg_f16, |x| f16::from_f32(-x).to_f32()),
            (abs_f16, |x| f16::from_f32(x.abs()).to_f32()),
            (relu_bf16, |x| {
                bf16::from_f32(if x < 0.0 { 0.0 } else { x }).to_f32()
            }),
            (abs_bf16, |x| bf16::from_f32(x.abs()).to_f32()),
            (relu_f32, relu),
        ];
        crate::vector_runs::each_level(|| {
            let mut out = vec![0f32; xs.len()];
            for (f, want) in cases {
                // SAFETY: two disjoint runs of `n` values.
                unsafe { f(out.as_mut_ptr(), xs.as_ptr(), n) };
                for (&x, o) in xs.iter().zip(&out) {
                    let (o, w) = (o.to_bits(), want(x).to_bits());
                    assert_eq!(o, w, "{:#010x}: {o:#x} {w:#x}", x.to_bits());
                }
            }
        });
    }
}
