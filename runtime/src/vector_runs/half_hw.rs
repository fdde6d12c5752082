//! The processor's float16 conversions (`vcvtps2ph`, `vcvtph2ps`), where it
//! has them: float16 codes widened, float32 values as float16 codes, and an
//! op of two runs of codes as codes (widened, computed and rounded in
//! registers), 16 or 8 at a time. Their results are `half`'s (and the
//! arithmetic forms' of `narrow.rs` and `widen.rs`) bit for bit: round to
//! nearest even, overflow to ±inf, float16 subnormals, a NaN quieted with the
//! top of its payload; the unit tests there and in `code_tiles.rs` run every
//! level.

/// Whether the float16 steps take the processor's conversions
/// (`vcvtps2ph`/`vcvtph2ps`: AVX-512F, or F16C beside AVX2), one instruction
/// for sixteen or eight values where the arithmetic takes a dozen; their codes
/// are `half`'s (round to nearest even, a NaN quieted with the top of its
/// payload), the same bits.
pub(super) fn hw_f16() -> bool {
    match super::level() {
        3 => true,
        #[cfg(target_arch = "x86_64")]
        2 => std::arch::is_x86_feature_detected!("f16c"),
        _ => false,
    }
}

#[cfg(target_arch = "x86_64")]
pub(super) use hw::widen16;

/// The processor's float16 conversions over whole vectors: `dst` rounded to
/// float16 in place, the codes `src` widened into `dst`, or the values `src`
/// as codes in `dst`; the points past the last whole vector by the arithmetic.
#[cfg(target_arch = "x86_64")]
mod hw {
    use std::arch::x86_64::*;

    /// Sixteen float16 or bfloat16 (`bf`) codes at `p` widened to float32 in a
    /// register, exactly: float16 by `vcvtph2ps`, bfloat16 shifted into the
    /// top half (the routines that widen in their own loops).
    ///
    /// # Safety
    /// `p` must be valid for reads of 16 codes; the processor has AVX-512F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(in crate::vector_runs) unsafe fn widen16(p: *const u16, bf: bool) -> __m512 {
        // SAFETY: the caller's contract.
        let h = unsafe { _mm256_loadu_si256(p.cast()) };
        if bf {
            _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(h)))
        } else {
            _mm512_cvtph_ps(h)
        }
    }

    /// Round to nearest even (AVX-512: exceptions suppressed too; they are
    /// masked either way).
    const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

    /// The float16 codes `src` widened into `dst` (as long), 16 at a time.
    #[target_feature(enable = "avx512f")]
    pub(super) fn widen512(dst: &mut [f32], src: &[u16]) {
        let mut d = dst.chunks_exact_mut(16);
        let mut s = src.chunks_exact(16);
        for (dc, sc) in (&mut d).zip(&mut s) {
            // SAFETY: `sc` holds 16 codes (32 bytes) and `dc` 16 float32.
            unsafe {
                let h = _mm256_loadu_si256(sc.as_ptr().cast());
                _mm512_storeu_ps(dc.as_mut_ptr(), _mm512_cvtph_ps(h));
            }
        }
        let (d, s) = (d.into_remainder(), s.remainder());
        d.iter_mut()
            .zip(s)
            .for_each(|(x, &c)| *x = crate::vector_runs::widen::widen_f16(c));
    }

    /// The float16 codes `src` widened into `dst` (as long), 8 at a time.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) fn widen256(dst: &mut [f32], src: &[u16]) {
        let mut d = dst.chunks_exact_mut(8);
        let mut s = src.chunks_exact(8);
        for (dc, sc) in (&mut d).zip(&mut s) {
            // SAFETY: `sc` holds 8 codes (16 bytes) and `dc` 8 float32.
            unsafe {
                let h = _mm_loadu_si128(sc.as_ptr().cast());
                _mm256_storeu_ps(dc.as_mut_ptr(), _mm256_cvtph_ps(h));
            }
        }
        let (d, s) = (d.into_remainder(), s.remainder());
        d.iter_mut()
            .zip(s)
            .for_each(|(x, &c)| *x = crate::vector_runs::widen::widen_f16(c));
    }

    /// The float16 codes of `src` into `dst` (as long), 16 at a time.
    #[target_feature(enable = "avx512f")]
    pub(super) fn narrow512(dst: &mut [u16], src: &[f32]) {
        let mut d = dst.chunks_exact_mut(16);
        let mut s = src.chunks_exact(16);
        for (dc, sc) in (&mut d).zip(&mut s) {
            // SAFETY: `sc` holds 16 float32 and `dc` 16 codes (32 bytes).
            unsafe {
                let h = _mm512_cvtps_ph::<NEAREST>(_mm512_loadu_ps(sc.as_ptr()));
                _mm256_storeu_si256(dc.as_mut_ptr().cast(), h);
            }
        }
        let (d, s) = (d.into_remainder(), s.remainder());
        d.iter_mut()
            .zip(s)
            .for_each(|(c, &x)| *c = crate::vector_runs::narrow::f16_code(x));
    }

    /// The float16 codes of `src` into `dst` (as long), 8 at a time.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) fn narrow256(dst: &mut [u16], src: &[f32]) {
        let mut d = dst.chunks_exact_mut(8);
        let mut s = src.chunks_exact(8);
        for (dc, sc) in (&mut d).zip(&mut s) {
            // SAFETY: `sc` holds 8 float32 and `dc` 8 codes (16 bytes).
            unsafe {
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_loadu_ps(sc.as_ptr()));
                _mm_storeu_si128(dc.as_mut_ptr().cast(), h);
            }
        }
        let (d, s) = (d.into_remainder(), s.remainder());
        d.iter_mut()
            .zip(s)
            .for_each(|(c, &x)| *c = crate::vector_runs::narrow::f16_code(x));
    }

    /// Sixteen float32 lanes rounded to bfloat16 on their bits, each lane's
    /// code in its upper half (`narrow::bf16_code`'s steps: to nearest even, a
    /// carry moving into the exponent, a NaN quieted); the lower half is
    /// left over.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn bf16_rounded(v: __m512) -> __m512i {
        let bits = _mm512_castps_si512(v);
        let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
        let lsb = _mm512_and_si512(_mm512_srli_epi32::<16>(bits), _mm512_set1_epi32(1));
        let rounded = _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7FFF)), lsb);
        let quiet = _mm512_or_si512(bits, _mm512_set1_epi32(0x0040_0000));
        _mm512_mask_blend_epi32(nan, rounded, quiet)
    }

    /// `f` of sixteen lane pairs through arrays (the compiler vectorizes the
    /// lane loop with the closure inlined).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn lanes16(x: __m512, y: __m512, f: impl Fn(f32, f32) -> f32) -> __m512 {
        let (mut xs, mut ys, mut ts) = ([0f32; 16], [0f32; 16], [0f32; 16]);
        // SAFETY: the arrays hold 16 float32 (unaligned loads and stores).
        unsafe {
            _mm512_storeu_ps(xs.as_mut_ptr(), x);
            _mm512_storeu_ps(ys.as_mut_ptr(), y);
        }
        ts.iter_mut()
            .zip(xs.iter().zip(&ys))
            .for_each(|(t, (&x, &y))| *t = f(x, y));
        // SAFETY: as above.
        unsafe { _mm512_loadu_ps(ts.as_ptr()) }
    }

    /// `dst[i]` the bfloat16 code of `f(a[i], b[i])` over the codes' values,
    /// 32 lanes at a time without a shuffle: a 32-bit lane holds two codes,
    /// the even one's value is the lane shifted up 16 bits and the odd one's
    /// the lane's upper half, each half computed as 16 float32 lanes and
    /// rounded on its bits, the two codes put back in their places (a NaN
    /// operand as it is: the rounding quiets it).
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(super) fn code_binary512_bf(
        dst: &mut [u16],
        a: &[u16],
        b: &[u16],
        hints: &[*const u16],
        f: impl Fn(f32, f32) -> f32 + Copy,
    ) {
        use crate::vector_runs::prefetch::ahead_all;
        let whole = dst.len() / 32 * 32;
        let high = _mm512_set1_epi32(0xFFFF_0000u32 as i32);
        for i in (0..whole).step_by(32) {
            ahead_all(hints, i);
            // SAFETY: `i + 32 <= whole` codes of each slice (unaligned loads
            // of 64 bytes).
            let (x, y) = unsafe {
                (
                    _mm512_loadu_si512(a.as_ptr().add(i).cast()),
                    _mm512_loadu_si512(b.as_ptr().add(i).cast()),
                )
            };
            let even = |v: __m512i| _mm512_castsi512_ps(_mm512_slli_epi32::<16>(v));
            let odd = |v: __m512i| _mm512_castsi512_ps(_mm512_and_si512(v, high));
            let re = bf16_rounded(lanes16(even(x), even(y), f));
            let ro = bf16_rounded(lanes16(odd(x), odd(y), f));
            let codes = _mm512_or_si512(_mm512_srli_epi32::<16>(re), _mm512_and_si512(ro, high));
            // SAFETY: as for the loads; an unaligned store of 64 bytes.
            unsafe { _mm512_storeu_si512(dst.as_mut_ptr().add(i).cast(), codes) };
        }
        super::code_binary_rest::<true>(&mut dst[whole..], &a[whole..], &b[whole..], f);
    }

    /// `dst[i]` the float16 code of `f(a[i], b[i])` over the codes' values,
    /// 16 lanes at a time: both operands widened in registers, the op, and the
    /// rounding before the store.
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(super) fn code_binary512(
        dst: &mut [u16],
        a: &[u16],
        b: &[u16],
        hints: &[*const u16],
        f: impl Fn(f32, f32) -> f32 + Copy,
    ) {
        use crate::vector_runs::prefetch::ahead_all;
        let whole = dst.len() / 16 * 16;
        let (head, tail) = dst.split_at_mut(whole);
        for (i, ((dc, ac), bc)) in head
            .chunks_exact_mut(16)
            .zip(a.chunks_exact(16))
            .zip(b.chunks_exact(16))
            .enumerate()
        {
            // (a line holds 32 codes: the hints every other vector)
            if i % 2 == 0 {
                ahead_all(hints, i * 16);
            }
            // SAFETY: `ac`, `bc` and `dc` hold 16 codes (loads and a store of
            // 32 bytes).
            unsafe {
                let (x, y) = (widen16(ac.as_ptr(), false), widen16(bc.as_ptr(), false));
                let h = _mm512_cvtps_ph::<NEAREST>(lanes16(x, y, f));
                _mm256_storeu_si256(dc.as_mut_ptr().cast(), h);
            }
        }
        super::code_binary_rest::<false>(tail, &a[whole..], &b[whole..], f);
    }

    /// [`code_binary512`], 8 lanes at a time.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) fn code_binary256(
        dst: &mut [u16],
        a: &[u16],
        b: &[u16],
        hints: &[*const u16],
        f: impl Fn(f32, f32) -> f32 + Copy,
    ) {
        use crate::vector_runs::prefetch::ahead_all;
        let whole = dst.len() / 8 * 8;
        let (head, tail) = dst.split_at_mut(whole);
        for (i, ((dc, ac), bc)) in head
            .chunks_exact_mut(8)
            .zip(a.chunks_exact(8))
            .zip(b.chunks_exact(8))
            .enumerate()
        {
            // (a line holds 32 codes: the hints every fourth vector)
            if i % 4 == 0 {
                ahead_all(hints, i * 8);
            }
            let (mut x, mut y, mut t) = ([0f32; 8], [0f32; 8], [0f32; 8]);
            // SAFETY: `ac`, `bc` and `dc` hold 8 codes (16 bytes), the arrays 8
            // float32 (unaligned loads and stores).
            unsafe {
                let wa = _mm256_cvtph_ps(_mm_loadu_si128(ac.as_ptr().cast()));
                let wb = _mm256_cvtph_ps(_mm_loadu_si128(bc.as_ptr().cast()));
                _mm256_storeu_ps(x.as_mut_ptr(), wa);
                _mm256_storeu_ps(y.as_mut_ptr(), wb);
            }
            t.iter_mut()
                .zip(x.iter().zip(&y))
                .for_each(|(t, (&x, &y))| *t = f(x, y));
            // SAFETY: as above.
            unsafe {
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_loadu_ps(t.as_ptr()));
                _mm_storeu_si128(dc.as_mut_ptr().cast(), h);
            }
        }
        super::code_binary_rest::<false>(tail, &a[whole..], &b[whole..], f);
    }
}

/// The float16 codes `src` widened into `dst` by the processor's conversions
/// (only where [`hw_f16`]).
pub(super) fn widen_f16_hw(dst: &mut [f32], src: &[u16]) {
    #[cfg(target_arch = "x86_64")]
    match super::level() {
        // SAFETY: level 3 means AVX-512F; level 2 with `hw_f16` AVX2 and F16C.
        3 => return unsafe { hw::widen512(dst, src) },
        2 => return unsafe { hw::widen256(dst, src) },
        _ => {}
    }
    dst.iter_mut()
        .zip(src)
        .for_each(|(x, &c)| *x = super::widen::widen_f16(c));
}

/// The float16 codes of `src` into `dst` by the processor's conversions
/// (only where [`hw_f16`]).
pub(super) fn narrow_f16_hw(dst: &mut [u16], src: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    match super::level() {
        // SAFETY: level 3 means AVX-512F; level 2 with `hw_f16` AVX2 and F16C.
        3 => return unsafe { hw::narrow512(dst, src) },
        2 => return unsafe { hw::narrow256(dst, src) },
        _ => {}
    }
    dst.iter_mut()
        .zip(src)
        .for_each(|(c, &x)| *c = super::narrow::f16_code(x));
}

/// Whether [`code_binary_hw`] runs explicit vector code for the codes of
/// bfloat16 (`bf`) or float16: with AVX-512F for either, with AVX2 and F16C
/// for float16 ([`hw_f16`]).
pub(super) fn code_hw(bf: bool) -> bool {
    match super::level() {
        3 => true,
        2 => !bf && hw_f16(),
        _ => false,
    }
}

/// `dst[i]` the code of `f(a[i], b[i])` over the codes' values (`BF`:
/// bfloat16's, else float16's), widened, computed and rounded in registers
/// (only where [`code_hw`]), asking for the lines ahead of the runs `hints`;
/// a unary op passes its run as both operands.
pub(super) fn code_binary_hw<const BF: bool>(
    dst: &mut [u16],
    a: &[u16],
    b: &[u16],
    hints: &[*const u16],
    f: impl Fn(f32, f32) -> f32 + Copy,
) {
    #[cfg(target_arch = "x86_64")]
    match super::level() {
        // SAFETY: level 3 means AVX-512F, AVX2 and FMA; level 2 with `hw_f16`
        // AVX2, FMA and F16C.
        3 if BF => return unsafe { hw::code_binary512_bf(dst, a, b, hints, f) },
        3 => return unsafe { hw::code_binary512(dst, a, b, hints, f) },
        2 if !BF => return unsafe { hw::code_binary256(dst, a, b, hints, f) },
        _ => {}
    }
    let _ = hints;
    code_binary_rest::<BF>(dst, a, b, f);
}

/// `dst[i]` the code of `f(a[i], b[i])` by the arithmetic: the points past
/// the last whole vector.
#[inline(always)]
fn code_binary_rest<const BF: bool>(
    dst: &mut [u16],
    a: &[u16],
    b: &[u16],
    f: impl Fn(f32, f32) -> f32,
) {
    use super::narrow::{bf16_code, f16_code};
    use super::widen::widen_code;
    dst.iter_mut()
        .zip(a.iter().zip(b))
        .for_each(|(d, (&x, &y))| {
            let r = f(widen_code(x, BF), widen_code(y, BF));
            *d = if BF { bf16_code(r) } else { f16_code(r) };
        });
}
