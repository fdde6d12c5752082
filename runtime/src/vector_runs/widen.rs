//! Widening routines: a run of float16 or bfloat16 codes as float32 values,
//! 16 or 8 lanes wide where the processor has them (`lf_widen_f16(dst, src,
//! n)` and `lf_widen_bf16`, `dst` float32, `src` the codes). A float16
//! softmax row or an affine row that another op reads widens its codes into
//! the run's own float32 row first, and the float32 routine then runs in
//! place (`lazyfuse_codegen`'s reduction runs); the routines that read codes
//! themselves take [`widen_code`] and `half_hw::widen16`.
//!
//! Each is `half`'s `to_f32` bit for bit (a NaN quieted, its payload kept),
//! written as plain arithmetic the compiler vectorizes (float16 with the
//! processor's conversion where it has one, `half_hw.rs`).

use super::half_hw::{hw_f16, widen_f16_hw};

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
#[inline(always)]
pub(super) fn widen_code(c: u16, bf: bool) -> f32 {
    if bf {
        widen_bf16(c)
    } else {
        widen_f16(c)
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

widen_fn!(widen_f16_run, widen_f16, true);
widen_fn!(widen_bf16_run, widen_bf16, false);

/// The widening functions: symbol and address.
pub(super) fn symbols() -> [(&'static str, *const u8); 2] {
    [
        ("lf_widen_f16", widen_f16_run as *const u8),
        ("lf_widen_bf16", widen_bf16_run as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    /// Widening every code is `half`'s `to_f32`, at every level, bit for bit.
    #[test]
    fn widening_is_halfs() {
        let codes: Vec<u16> = (0..=u16::MAX).collect();
        crate::vector_runs::each_level(|| {
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
}
