//! The processor's float16 conversions (`vcvtps2ph`, `vcvtph2ps`), where it
//! has them: float32 rounded to float16 and back, float16 codes widened, and
//! float32 values as float16 codes, 16 or 8 at a time. Their results are
//! `half`'s (and the arithmetic forms' of `narrow.rs` and `tiles.rs`) bit for
//! bit: round to nearest even, overflow to ±inf, float16 subnormals, a NaN
//! quieted with the top of its payload; the unit tests there run every level.

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

    /// `dst` rounded to float16 and back, 16 lanes at a time.
    #[target_feature(enable = "avx512f")]
    pub(super) fn round512(dst: &mut [f32]) {
        let mut chunks = dst.chunks_exact_mut(16);
        for c in &mut chunks {
            // SAFETY: `c` holds 16 float32 (unaligned loads and stores).
            unsafe {
                let v = _mm512_loadu_ps(c.as_ptr());
                let h = _mm512_cvtps_ph::<NEAREST>(v);
                _mm512_storeu_ps(c.as_mut_ptr(), _mm512_cvtph_ps(h));
            }
        }
        chunks
            .into_remainder()
            .iter_mut()
            .for_each(|x| *x = crate::vector_runs::tiles::round_f16(*x));
    }

    /// `dst[i] = f(a[i], b[i])` rounded to float16 and back in the same pass,
    /// 16 lanes at a time: the op's lanes stay in a register between the op
    /// and the conversions, where an op pass and a rounding pass stored and
    /// reloaded the tile in between.
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(super) fn binary512(
        dst: &mut [f32],
        a: &[f32],
        b: &[f32],
        f: impl Fn(f32, f32) -> f32 + Copy,
    ) {
        let whole = dst.len() / 16 * 16;
        let (head, tail) = dst.split_at_mut(whole);
        for ((dc, ac), bc) in head
            .chunks_exact_mut(16)
            .zip(a.chunks_exact(16))
            .zip(b.chunks_exact(16))
        {
            let mut t = [0f32; 16];
            t.iter_mut()
                .zip(ac.iter().zip(bc))
                .for_each(|(t, (&x, &y))| *t = f(x, y));
            // SAFETY: `t` and `dc` hold 16 float32 (unaligned loads and stores).
            unsafe {
                let h = _mm512_cvtps_ph::<NEAREST>(_mm512_loadu_ps(t.as_ptr()));
                _mm512_storeu_ps(dc.as_mut_ptr(), _mm512_cvtph_ps(h));
            }
        }
        super::binary_rest(tail, &a[whole..], &b[whole..], f);
    }

    /// [`binary512`], 8 lanes at a time.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) fn binary256(
        dst: &mut [f32],
        a: &[f32],
        b: &[f32],
        f: impl Fn(f32, f32) -> f32 + Copy,
    ) {
        let whole = dst.len() / 8 * 8;
        let (head, tail) = dst.split_at_mut(whole);
        for ((dc, ac), bc) in head
            .chunks_exact_mut(8)
            .zip(a.chunks_exact(8))
            .zip(b.chunks_exact(8))
        {
            let mut t = [0f32; 8];
            t.iter_mut()
                .zip(ac.iter().zip(bc))
                .for_each(|(t, (&x, &y))| *t = f(x, y));
            // SAFETY: `t` and `dc` hold 8 float32 (unaligned loads and stores).
            unsafe {
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_loadu_ps(t.as_ptr()));
                _mm256_storeu_ps(dc.as_mut_ptr(), _mm256_cvtph_ps(h));
            }
        }
        super::binary_rest(tail, &a[whole..], &b[whole..], f);
    }

    /// `dst` rounded to float16 and back, 8 lanes at a time.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) fn round256(dst: &mut [f32]) {
        let mut chunks = dst.chunks_exact_mut(8);
        for c in &mut chunks {
            // SAFETY: `c` holds 8 float32 (unaligned loads and stores).
            unsafe {
                let v = _mm256_loadu_ps(c.as_ptr());
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(v);
                _mm256_storeu_ps(c.as_mut_ptr(), _mm256_cvtph_ps(h));
            }
        }
        chunks
            .into_remainder()
            .iter_mut()
            .for_each(|x| *x = crate::vector_runs::tiles::round_f16(*x));
    }

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
            .for_each(|(x, &c)| *x = crate::vector_runs::tiles::widen_f16(c));
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
            .for_each(|(x, &c)| *x = crate::vector_runs::tiles::widen_f16(c));
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
            let (mut x, mut y, mut t) = ([0f32; 16], [0f32; 16], [0f32; 16]);
            // SAFETY: `ac`, `bc` and `dc` hold 16 codes, the arrays 16 float32
            // (unaligned loads and stores).
            unsafe {
                _mm512_storeu_ps(x.as_mut_ptr(), widen16(ac.as_ptr(), false));
                _mm512_storeu_ps(y.as_mut_ptr(), widen16(bc.as_ptr(), false));
            }
            t.iter_mut()
                .zip(x.iter().zip(&y))
                .for_each(|(t, (&x, &y))| *t = f(x, y));
            // SAFETY: as above.
            unsafe {
                let h = _mm512_cvtps_ph::<NEAREST>(_mm512_loadu_ps(t.as_ptr()));
                _mm256_storeu_si256(dc.as_mut_ptr().cast(), h);
            }
        }
        super::code_binary_rest(tail, &a[whole..], &b[whole..], f);
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
        super::code_binary_rest(tail, &a[whole..], &b[whole..], f);
    }
}

/// `dst` rounded to float16 in place by the processor's conversions (only
/// where [`hw_f16`]).
pub(super) fn round_f16_hw(dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    match super::level() {
        // SAFETY: level 3 means AVX-512F; level 2 with `hw_f16` AVX2 and F16C.
        3 => return unsafe { hw::round512(dst) },
        2 => return unsafe { hw::round256(dst) },
        _ => {}
    }
    dst.iter_mut()
        .for_each(|x| *x = super::tiles::round_f16(*x));
}

/// `dst[i] = f(a[i], b[i])` rounded to float16 and back, op and rounding in
/// one pass by the processor's conversions (only where [`hw_f16`]); a unary op
/// passes its run as both operands.
pub(super) fn binary_f16_hw(
    dst: &mut [f32],
    a: &[f32],
    b: &[f32],
    f: impl Fn(f32, f32) -> f32 + Copy,
) {
    #[cfg(target_arch = "x86_64")]
    match super::level() {
        // SAFETY: level 3 means AVX-512F, AVX2 and FMA; level 2 with `hw_f16`
        // AVX2, FMA and F16C.
        3 => return unsafe { hw::binary512(dst, a, b, f) },
        2 => return unsafe { hw::binary256(dst, a, b, f) },
        _ => {}
    }
    binary_rest(dst, a, b, f);
}

/// `dst[i] = f(a[i], b[i])` rounded to float16 and back by the arithmetic: the
/// points past the last whole vector.
#[inline(always)]
fn binary_rest(dst: &mut [f32], a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f32) {
    dst.iter_mut()
        .zip(a.iter().zip(b))
        .for_each(|(d, (&x, &y))| *d = super::tiles::round_f16(f(x, y)));
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
        .for_each(|(x, &c)| *x = super::tiles::widen_f16(c));
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

/// `dst[i]` the float16 code of `f(a[i], b[i])` over the codes' values, by
/// the processor's conversions (only where [`hw_f16`]), asking for the lines
/// ahead of the runs `hints`; a unary op passes its run as both operands.
pub(super) fn code_binary_f16_hw(
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
        3 => return unsafe { hw::code_binary512(dst, a, b, hints, f) },
        2 => return unsafe { hw::code_binary256(dst, a, b, hints, f) },
        _ => {}
    }
    let _ = hints;
    code_binary_rest(dst, a, b, f);
}

/// `dst[i]` the float16 code of `f(a[i], b[i])` by the arithmetic: the
/// points past the last whole vector.
#[inline(always)]
fn code_binary_rest(dst: &mut [u16], a: &[u16], b: &[u16], f: impl Fn(f32, f32) -> f32) {
    use super::tiles::widen_f16;
    dst.iter_mut()
        .zip(a.iter().zip(b))
        .for_each(|(d, (&x, &y))| {
            *d = super::narrow::f16_code(f(widen_f16(x), widen_f16(y)));
        });
}
