//! Narrowing routines: a run of float32 values rounded to float16 or bfloat16
//! and written as their 16-bit codes, 16 or 8 lanes wide where the processor
//! has them.
//!
//! A float16 or bfloat16 elementwise kernel whose stored op has a float32
//! routine (`lazyfuse_codegen`'s output runs) parks the op's argument in a
//! float32 tile on its stack, runs the routine over the tile and then one of
//! these into its output: `lf_narrow_f16(dst, src, n)` and `lf_narrow_bf16`,
//! `dst` the output's codes, `src` the tile. Each is `half`'s conversion bit
//! for bit (round to nearest even, overflow to ±inf, float16 subnormals on
//! their 2^-24 grid, signed zeros kept, a NaN keeping the top bits of its
//! payload with the quiet bit set), written as plain arithmetic the compiler
//! vectorizes (float16 with the processor's conversion where it has one,
//! `half_hw.rs`), the same steps as the kernels' own vector code
//! (`lower::vnarrow`).

/// The float16 code of `x`: the magnitude rounded on float16's grid by adding
/// and subtracting `2^(e+13)` (at least `2^-1`, the subnormals' grid), from
/// 65520 infinity; its bits times `2^-112`, shifted, are the code.
#[inline(always)]
pub(super) fn f16_code(x: f32) -> u16 {
    let bits = x.to_bits();
    let abits = bits & 0x7FFF_FFFF;
    let sign = (bits >> 16) & 0x8000;
    let a = f32::from_bits(abits);
    let m = f32::from_bits((abits & 0x7F80_0000).max(113 << 23) + (13 << 23));
    let r = (a + m) - m;
    let r = if a >= 65520.0 { f32::INFINITY } else { r };
    let code = (r * f32::from_bits(15 << 23)).to_bits() >> 13;
    let code = if a.is_nan() {
        0x7E00 | ((abits >> 13) & 0x3FF)
    } else {
        // an infinity's scaled bits come out 0x38000 past its code
        code.min(code.wrapping_sub(0x38000))
    };
    (code | sign) as u16
}

/// The bfloat16 code of `x`: rounded to nearest even on its bits (a carry
/// moving into the exponent), a NaN quieted.
#[inline(always)]
pub(super) fn bf16_code(x: f32) -> u16 {
    let bits = x.to_bits();
    let code = if x.is_nan() {
        (bits | 0x0040_0000) >> 16
    } else {
        bits.wrapping_add(0x7FFF + ((bits >> 16) & 1)) >> 16
    };
    code as u16
}

/// One narrowing function per code (see the module doc); `$stream` is the
/// streamed entries' code (`Some(true)` bfloat16, `Some(false)` float16;
/// `None`: plain stores only).
macro_rules! narrow_fn {
    ($name:ident, $code:ident, $hw:literal, $stream:expr) => {
        /// Writes the code of each of the `n` float32 values at `src` to `dst`
        /// (`n ≤ 0`: nothing). A `_stream` entry writes the same codes, the
        /// whole cache lines of `dst` with stores past the caches where the
        /// processor has AVX-512 (`stream.rs`), for an output far larger than
        /// them.
        ///
        /// # Safety
        /// `src` must be valid for reads of `n` aligned float32 values and
        /// `dst` for writes of `n` aligned 16-bit codes, the two disjoint, and
        /// no one else writes them during the call (the JIT kernel passes a
        /// tile on its own stack and a run of its output range, which its
        /// thread alone writes).
        pub(super) unsafe extern "C" fn $name(dst: *mut u16, src: *const f32, n: i64) {
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
            let stream: Option<bool> = $stream;
            let (from, to) = match stream {
                Some(true) => super::stream::narrow_codes::<true>(dst, src),
                Some(false) => super::stream::narrow_codes::<false>(dst, src),
                None => (0, 0),
            };
            fn plain(dst: &mut [u16], src: &[f32]) {
                // (float16 with the processor's conversion where it has one)
                if $hw && super::half_hw::hw_f16() {
                    return super::half_hw::narrow_f16_hw(dst, src);
                }
                by_level!(
                    fn apply(dst: &mut [u16], src: &[f32]) {
                        use super::$code as code;
                        dst.iter_mut().zip(src).for_each(|(d, &x)| *d = code(x));
                    },
                    (dst, src)
                )
            }
            // (what the streamed lines leave: all of it where none were)
            plain(&mut dst[..from], &src[..from]);
            plain(&mut dst[to..], &src[to..]);
        }
    };
}

narrow_fn!(narrow_f16, f16_code, true, None);
narrow_fn!(narrow_bf16, bf16_code, false, None);
narrow_fn!(narrow_f16_stream, f16_code, true, Some(false));
narrow_fn!(narrow_bf16_stream, bf16_code, false, Some(true));

/// The narrowing functions: symbol and address.
pub(super) fn symbols() -> [(&'static str, *const u8); 4] {
    [
        ("lf_narrow_f16", narrow_f16 as *const u8),
        ("lf_narrow_bf16", narrow_bf16 as *const u8),
        ("lf_narrow_f16_stream", narrow_f16_stream as *const u8),
        ("lf_narrow_bf16_stream", narrow_bf16_stream as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    /// Every 257th float32 pattern and the edge cases of float16 and
    /// bfloat16 rounding.
    fn patterns() -> Vec<f32> {
        let mut xs: Vec<f32> = (0..u32::MAX / 257)
            .map(|i| f32::from_bits(i * 257))
            .collect();
        xs.extend([
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::from_bits(0x7FC0_0001),
            f32::from_bits(0xFF80_2001),
            f32::from_bits(0x7F80_0001),
            65504.0,
            65519.996,
            65520.0,
            -65520.0,
            6.103_515_6e-5,
            2.980_232_2e-8,
            2.980_232_3e-8,
            5.960_464_5e-8,
            1.000_488_3,
            f32::MAX,
            f32::MIN_POSITIVE,
        ]);
        xs
    }

    /// [`patterns`] through each level.
    #[test]
    fn codes_are_halfs_bit_for_bit() {
        let xs = patterns();
        crate::vector_runs::each_level(|| {
            let mut out = vec![0u16; xs.len()];
            // SAFETY: `xs` and `out` hold `n` elements each and are disjoint.
            unsafe { narrow_f16(out.as_mut_ptr(), xs.as_ptr(), xs.len() as i64) };
            for (x, &o) in xs.iter().zip(&out) {
                let want = f16::from_f32(*x).to_bits();
                assert_eq!(o, want, "float16 of {:#010x}", x.to_bits());
            }
            // SAFETY: as above.
            unsafe { narrow_bf16(out.as_mut_ptr(), xs.as_ptr(), xs.len() as i64) };
            for (x, &o) in xs.iter().zip(&out) {
                let want = bf16::from_f32(*x).to_bits();
                assert_eq!(o, want, "bfloat16 of {:#010x}", x.to_bits());
            }
        });
    }

    /// The streamed entries write the plain entries' codes, at every level,
    /// for outputs starting anywhere in a line and rows with and without
    /// whole lines: the rows sample [`patterns`] across all of it, every
    /// seventh value one of its edge cases, from three starts (so that each
    /// lands in a streamed line and in a plain head or tail).
    #[test]
    fn streamed_codes_are_the_plain_codes() {
        let xs = patterns();
        // (the 18 edge cases `patterns` ends with)
        let edges = &xs[xs.len() - 18..];
        crate::vector_runs::each_level(|| {
            for (offset, len) in [(0, 4096), (1, 4096), (13, 31), (31, 97), (7, 2000), (0, 5)] {
                for start in [0, 1000, 4099] {
                    let src: Vec<f32> = (start..start + len)
                        .map(|i| match i % 7 {
                            0 => edges[i / 7 % edges.len()],
                            _ => xs[i * 4099 % xs.len()],
                        })
                        .collect();
                    let entries: [(Entry, Entry); 2] = [
                        (narrow_f16, narrow_f16_stream),
                        (narrow_bf16, narrow_bf16_stream),
                    ];
                    for (plain, streamed) in entries {
                        let mut want = vec![0u16; len + 40];
                        let mut got = vec![7u16; len + 40];
                        // SAFETY: both rows hold `offset + len` codes and `src`
                        // `len` values, disjoint.
                        unsafe {
                            plain(want.as_mut_ptr().add(offset), src.as_ptr(), len as i64);
                            streamed(got.as_mut_ptr().add(offset), src.as_ptr(), len as i64);
                        }
                        assert_eq!(
                            want[offset..offset + len],
                            got[offset..offset + len],
                            "offset {offset}, len {len}, start {start}"
                        );
                        assert!(got[offset + len..].iter().all(|&c| c == 7));
                    }
                }
            }
        });
    }

    type Entry = unsafe extern "C" fn(*mut u16, *const f32, i64);
}
