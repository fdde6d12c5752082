//! Streamed rows: the affine routine's forms (`super::affine`) and the
//! float16/bfloat16 narrowing (`super::narrow`'s `_stream` entries) with
//! stores that bypass the caches (AVX-512 or AVX2 non-temporal stores). A
//! plain store of a line not in the cache first reads the line from memory;
//! for an output far larger than the caches, which nothing reads back soon,
//! that read is a third of the traffic of a one-read, one-write row (layer
//! norm's output phase, a float16 softmax's codes), and streaming saves it.
//!
//! The stores must be in the computing loop itself: measured, a chunk
//! computed into a buffer and then streamed out (or streamed in bursts of a
//! few lines) was slower than plain stores, not faster. So each form is
//! written here with the processor's vector operations: the same IEEE
//! operations in the same order as the routine's loop (a subtract, a divide
//! or multiply, a multiply, an add, or the one fused multiply-add the loop
//! contracts), which round the same at every width, so the values are the
//! routine's bit for bit.
//!
//! Only whole cache lines are streamed (a line that both streamed and plain
//! stores write is read and flushed, slower than either); the caller
//! computes the elements before the first line and after the last plainly.
//! Streamed stores are weakly ordered: each function ends with a store fence,
//! so the row is complete before the kernel signals its end.

use lazyfuse_ir::fast_math::AFFINE_DIVIDE as DIVIDE;

/// Bytes of a cache line: the streamed range's alignment.
const LINE: usize = 64;

/// The part of a row of `n` elements at `dst` that covers whole cache lines,
/// as a range of element indices (empty where `dst` cannot reach a line
/// boundary).
fn lines_of<T>(dst: *const T, n: usize) -> (usize, usize) {
    let size = std::mem::size_of::<T>();
    let from = dst.align_offset(LINE).min(n);
    let whole = (n - from) * size / LINE * LINE / size;
    (from, from + whole)
}

/// An affine row's parameters besides its rows (see `super::affine`).
#[derive(Clone, Copy)]
pub(super) struct Affine<T> {
    /// subtracted first
    pub(super) shift: T,
    /// the multiplier or divisor
    pub(super) scale: T,
    /// the `AFFINE_*` bits
    pub(super) form: i64,
}

/// One streamed form function per element type and vector width.
macro_rules! streamed {
    ($name:ident, $feat:literal, $t:ty, $lanes:expr, $load:ident, $set1:ident, $sub:ident,
     $div:ident, $mul:ident, $add:ident, $fmadd:ident, $stream:ident) => {
        /// The affine form `form` of `src` into `dst` over `from..to` (whole
        /// lines of `dst`, a multiple of the lanes), with streamed stores.
        ///
        /// # Safety
        /// The processor has the features named; `dst` and `src` (and `w`,
        /// `b` where `form` has their bits) hold at least `to` elements.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feat)]
        unsafe fn $name(
            dst: &mut [$t],
            src: &[$t],
            (from, to): (usize, usize),
            a: Affine<$t>,
            w: Option<&[$t]>,
            b: Option<&[$t]>,
        ) {
            use std::arch::x86_64::*;
            assert!(to <= dst.len() && to <= src.len() && (to - from) % $lanes == 0);
            assert!(w.is_none_or(|w| w.len() >= to) && b.is_none_or(|b| b.len() >= to));
            let (sh, sc) = ($set1(a.shift), $set1(a.scale));
            let divide = a.form & DIVIDE != 0;
            let (d_ptr, s_ptr) = (dst.as_mut_ptr(), src.as_ptr());
            let mut i = from;
            while i < to {
                // SAFETY: `i + lanes ≤ to`, within every row (the asserts);
                // `dst + i` is on a line boundary or a whole vector past one,
                // aligned as the streamed store needs.
                unsafe {
                    let d = $sub($load(s_ptr.add(i)), sh);
                    let y = if divide { $div(d, sc) } else { $mul(d, sc) };
                    let v = match (w, b) {
                        (None, None) => y,
                        (Some(w), None) => $mul(y, $load(w.as_ptr().add(i))),
                        (None, Some(b)) if divide => $add(y, $load(b.as_ptr().add(i))),
                        (None, Some(b)) => $fmadd(d, sc, $load(b.as_ptr().add(i))),
                        (Some(w), Some(b)) => {
                            $fmadd(y, $load(w.as_ptr().add(i)), $load(b.as_ptr().add(i)))
                        }
                    };
                    $stream(d_ptr.add(i), v);
                }
                i += $lanes;
            }
            _mm_sfence();
        }
    };
}

streamed!(
    f32_512,
    "avx512f,fma",
    f32,
    16,
    _mm512_loadu_ps,
    _mm512_set1_ps,
    _mm512_sub_ps,
    _mm512_div_ps,
    _mm512_mul_ps,
    _mm512_add_ps,
    _mm512_fmadd_ps,
    _mm512_stream_ps
);
streamed!(
    f32_256,
    "avx2,fma",
    f32,
    8,
    _mm256_loadu_ps,
    _mm256_set1_ps,
    _mm256_sub_ps,
    _mm256_div_ps,
    _mm256_mul_ps,
    _mm256_add_ps,
    _mm256_fmadd_ps,
    _mm256_stream_ps
);
streamed!(
    f64_512,
    "avx512f,fma",
    f64,
    8,
    _mm512_loadu_pd,
    _mm512_set1_pd,
    _mm512_sub_pd,
    _mm512_div_pd,
    _mm512_mul_pd,
    _mm512_add_pd,
    _mm512_fmadd_pd,
    _mm512_stream_pd
);
streamed!(
    f64_256,
    "avx2,fma",
    f64,
    4,
    _mm256_loadu_pd,
    _mm256_set1_pd,
    _mm256_sub_pd,
    _mm256_div_pd,
    _mm256_mul_pd,
    _mm256_add_pd,
    _mm256_fmadd_pd,
    _mm256_stream_pd
);

/// One entry per element type: streams the whole lines of the row with the
/// widest vectors the processor has and returns their range (empty: nothing
/// streamed, no such vectors); the caller computes the rest.
macro_rules! streamed_row {
    ($name:ident, $t:ty, $wide:ident, $narrow:ident) => {
        pub(super) fn $name(
            dst: &mut [$t],
            src: &[$t],
            a: Affine<$t>,
            w: Option<&[$t]>,
            b: Option<&[$t]>,
        ) -> (usize, usize) {
            let lines = lines_of(dst.as_ptr(), dst.len().min(src.len()));
            match super::level() {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: level 3 means AVX-512F and FMA; the rows' lengths
                // are checked inside.
                3 => unsafe { $wide(dst, src, lines, a, w, b) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: level 2 means AVX2 and FMA.
                2 => unsafe { $narrow(dst, src, lines, a, w, b) },
                _ => return (0, 0),
            }
            lines
        }
    };
}

streamed_row!(affine_f32, f32, f32_512, f32_256);
streamed_row!(affine_f64, f64, f64_512, f64_256);

/// The codes of `src` into `dst` over `from..to` (whole lines of `dst`, a
/// multiple of 16 codes), with streamed stores: float16 by the processor's
/// conversion (`half_hw.rs`), bfloat16 rounded to nearest even on the bits
/// with a NaN quieted (`narrow.rs`' `bf16_code`), both `narrow.rs`' codes
/// bit for bit.
///
/// # Safety
/// The processor has AVX-512F; `dst` and `src` hold at least `to` elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn codes_512<const BF16: bool>(dst: &mut [u16], src: &[f32], (from, to): (usize, usize)) {
    use std::arch::x86_64::*;
    assert!(to <= dst.len() && to <= src.len() && (to - from) % 16 == 0);
    let (d_ptr, s_ptr) = (dst.as_mut_ptr(), src.as_ptr());
    let (one, half, quiet) = (
        _mm512_set1_epi32(1),
        _mm512_set1_epi32(0x7FFF),
        _mm512_set1_epi32(0x0040_0000),
    );
    let mut i = from;
    while i < to {
        // SAFETY: `i + 16 ≤ to`, within both rows (the assert); `dst + i` is
        // on a line boundary or half a line past one, aligned as the 32-byte
        // streamed store needs.
        unsafe {
            let x = _mm512_loadu_ps(s_ptr.add(i));
            let codes = if BF16 {
                let bits = _mm512_castps_si512(x);
                let odd = _mm512_and_si512(_mm512_srli_epi32::<16>(bits), one);
                let rounded = _mm512_add_epi32(bits, _mm512_add_epi32(half, odd));
                let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x);
                let r = _mm512_mask_blend_epi32(nan, rounded, _mm512_or_si512(bits, quiet));
                _mm512_cvtepi32_epi16(_mm512_srli_epi32::<16>(r))
            } else {
                _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x)
            };
            _mm256_stream_si256(d_ptr.add(i).cast(), codes);
        }
        i += 16;
    }
    _mm_sfence();
}

/// Streams the codes (bfloat16 where `BF16`, else float16) of the whole
/// lines of `dst` where the processor has AVX-512 and returns their range
/// (empty: nothing streamed); the caller narrows the rest.
pub(super) fn narrow_codes<const BF16: bool>(dst: &mut [u16], src: &[f32]) -> (usize, usize) {
    let lines = lines_of(dst.as_ptr(), dst.len().min(src.len()));
    match super::level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: level 3 means AVX-512F; the rows' lengths are checked
        // inside.
        3 => unsafe { codes_512::<BF16>(dst, src, lines) },
        _ => return (0, 0),
    }
    lines
}
