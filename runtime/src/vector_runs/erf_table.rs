//! float32 `erf` and the exact GELU from fast math's interval table
//! (`lazyfuse_ir::fast_math::ERF_COEFFS`): the run functions `lf_run_erf_f32`
//! and `lf_run_gelu_f32`, and the row functions `lf_row_erf_f32` and
//! `lf_row_gelu_f32` (`rows.rs` describes their shift and sums).
//!
//! Each lane needs the coefficients of its own interval. The compiler's
//! vectorized loops would fetch them with gathers, so the vector code here is
//! written out: with AVX-512 one permute of a 16-entry table row per
//! coefficient, with AVX2 two permutes of its halves and a blend. Every level
//! does the same arithmetic as the scalar [`erf`] (and `lazyfuse_codegen`'s
//! `vmath::erf`, which loads the coefficients one lane at a time): the same
//! interval, the same exact `t`, the same fused multiply-adds, so the same bits.

use lazyfuse_ir::fast_math::{ERF_COEFFS, ERF_STEP, ERF_T2};

/// The table's intervals (one per lane of a 512-bit vector).
const INTERVALS: usize = 16;

/// The polynomial's degree.
const DEGREE: usize = ERF_COEFFS.len() - 1;

/// `vmath::erf`: `±P_i(|x| - i/4)` on interval `i = trunc(min(4|x|, 15))`,
/// `±1` from `ERF_T2`.
#[inline(always)]
pub(super) fn erf(x: f32) -> f32 {
    let a = x.abs();
    let f = a * (1.0 / ERF_STEP) as f32;
    let last = (INTERVALS - 1) as f32;
    // (NaN stays NaN and converts to interval 0)
    let f = if last < f { last } else { f };
    let i = (f as i32 as usize) & (INTERVALS - 1);
    let t = a - i as f32 * ERF_STEP as f32;
    let mut p = ERF_COEFFS[DEGREE][i];
    for row in ERF_COEFFS[..DEGREE].iter().rev() {
        p = p.mul_add(t, row[i]);
    }
    let p = if a >= ERF_T2 as f32 { 1.0 } else { p };
    super::signed_as(p, x)
}

/// The exact GELU, `x · ½ · (1 + erf(x · √½))` (`vmath::emit_param`).
#[inline(always)]
pub(super) fn gelu(x: f32) -> f32 {
    let h = x * 0.5;
    let e = erf(x * std::f64::consts::FRAC_1_SQRT_2 as f32);
    h * (1.0 + e)
}

/// Which of the two ops a loop computes.
#[derive(Clone, Copy, PartialEq)]
enum Op {
    Erf,
    Gelu,
}

impl Op {
    #[inline(always)]
    fn scalar(self, x: f32) -> f32 {
        match self {
            Op::Erf => erf(x),
            Op::Gelu => gelu(x),
        }
    }
}

/// `dst[i] = op(src[i] - shift)` (no shift: `op(src[i])`), each also added
/// to `sums[i % 16]` where there are sums; `block` computes sixteen at a time,
/// each sixteen after asking for their lines of the row at `next` (null:
/// for the lines of `src` ahead, `prefetch.rs`).
#[inline(always)]
fn map(
    dst: &mut [f32],
    src: Option<&[f32]>,
    shift: Option<f32>,
    sums: Option<&mut [f32; 16]>,
    next: *const f32,
    op: Op,
    block: impl Fn([f32; 16]) -> [f32; 16],
) {
    // (summed in registers, from the kernel's accumulators read one by one:
    // `handover.rs`)
    let mut acc = sums.as_deref().map(super::handover::sixteen);
    let full = dst.len() - dst.len() % 16;
    for c in (0..full).step_by(16) {
        if next.is_null() {
            super::prefetch::ahead(src, c);
        } else {
            super::prefetch::lines::<false, _>(next, c, 16);
        }
        let mut xs: [f32; 16] = match src {
            Some(s) => s[c..c + 16].try_into().expect("16 elements"),
            None => dst[c..c + 16].try_into().expect("16 elements"),
        };
        if let Some(s) = shift {
            xs.iter_mut().for_each(|x| *x -= s);
        }
        let ys = block(xs);
        dst[c..c + 16].copy_from_slice(&ys);
        if let Some(acc) = acc.as_mut() {
            acc.iter_mut().zip(ys).for_each(|(a, y)| *a += y);
        }
    }
    for i in full..dst.len() {
        let x = src.map_or(dst[i], |s| s[i]);
        let y = op.scalar(shift.map_or(x, |s| x - s));
        dst[i] = y;
        if let Some(acc) = acc.as_mut() {
            acc[i % 16] += y;
        }
    }
    if let (Some(sums), Some(acc)) = (sums, acc) {
        *sums = acc;
    }
}

#[cfg(target_arch = "x86_64")]
mod wide {
    //! The vector blocks and the loops compiled around them.
    use super::{map, Op, DEGREE, ERF_COEFFS, ERF_STEP, ERF_T2, INTERVALS};
    use std::arch::x86_64::*;

    /// [`super::erf`] on sixteen lanes, each lane's coefficients permuted
    /// out of a table row.
    #[target_feature(enable = "avx512f,fma,avx2")]
    fn erf512(x: __m512, rows: &[__m512; DEGREE + 1]) -> __m512 {
        let sign = _mm512_set1_epi32(i32::MIN);
        let a = _mm512_abs_ps(x);
        let f = _mm512_mul_ps(a, _mm512_set1_ps((1.0 / ERF_STEP) as f32));
        // (min(last, f) is `last < f ? last : f`: NaN stays NaN)
        let f = _mm512_min_ps(_mm512_set1_ps((INTERVALS - 1) as f32), f);
        // (NaN converts to i32::MIN, whose low bits pick interval 0)
        let i = _mm512_cvttps_epi32(f);
        let fi = _mm512_cvtepi32_ps(i);
        let t = _mm512_sub_ps(a, _mm512_mul_ps(fi, _mm512_set1_ps(ERF_STEP as f32)));
        let mut p = _mm512_permutexvar_ps(i, rows[DEGREE]);
        for row in rows[..DEGREE].iter().rev() {
            p = _mm512_fmadd_ps(p, t, _mm512_permutexvar_ps(i, *row));
        }
        let big = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, _mm512_set1_ps(ERF_T2 as f32));
        let p = _mm512_mask_mov_ps(p, big, _mm512_set1_ps(1.0));
        let s = _mm512_and_si512(_mm512_castps_si512(x), sign);
        _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(p), s))
    }

    /// [`super::erf`] on eight lanes: each coefficient from two permutes of
    /// the row's halves and a blend.
    #[target_feature(enable = "avx2,fma")]
    fn erf256(x: __m256, rows: &[[__m256; 2]; DEGREE + 1]) -> __m256 {
        let sign = _mm256_set1_ps(-0.0);
        let a = _mm256_andnot_ps(sign, x);
        let f = _mm256_mul_ps(a, _mm256_set1_ps((1.0 / ERF_STEP) as f32));
        let f = _mm256_min_ps(_mm256_set1_ps((INTERVALS - 1) as f32), f);
        let i = _mm256_cvttps_epi32(f);
        let high = _mm256_castsi256_ps(_mm256_cmpgt_epi32(i, _mm256_set1_epi32(7)));
        let pick = |row: &[__m256; 2]| {
            let lo = _mm256_permutevar8x32_ps(row[0], i);
            let hi = _mm256_permutevar8x32_ps(row[1], i);
            _mm256_blendv_ps(lo, hi, high)
        };
        let fi = _mm256_cvtepi32_ps(i);
        let t = _mm256_sub_ps(a, _mm256_mul_ps(fi, _mm256_set1_ps(ERF_STEP as f32)));
        let mut p = pick(&rows[DEGREE]);
        for row in rows[..DEGREE].iter().rev() {
            p = _mm256_fmadd_ps(p, t, pick(row));
        }
        let big = _mm256_cmp_ps::<_CMP_GE_OQ>(a, _mm256_set1_ps(ERF_T2 as f32));
        let p = _mm256_blendv_ps(p, _mm256_set1_ps(1.0), big);
        _mm256_or_ps(p, _mm256_and_ps(x, sign))
    }

    /// The GELU around an erf of the same width (`super::gelu`'s steps).
    macro_rules! gelu_of {
        ($x:expr, $erf:expr, $set1:ident, $mul:ident, $add:ident) => {{
            let x = $x;
            let h = $mul(x, $set1(0.5));
            let e = $erf($mul(x, $set1(std::f64::consts::FRAC_1_SQRT_2 as f32)));
            $mul(h, $add($set1(1.0), e))
        }};
    }

    /// [`map`] with AVX-512 blocks.
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(super) fn map512(
        dst: &mut [f32],
        src: Option<&[f32]>,
        shift: Option<f32>,
        sums: Option<&mut [f32; 16]>,
        next: *const f32,
        op: Op,
    ) {
        // SAFETY: each row is 16 float32s, one unaligned 512-bit load.
        let rows: [__m512; DEGREE + 1] =
            std::array::from_fn(|k| unsafe { _mm512_loadu_ps(ERF_COEFFS[k].as_ptr()) });
        map(dst, src, shift, sums, next, op, |xs| {
            // SAFETY: `xs` is 16 float32s, read and written by unaligned 512-bit
            // moves; the features are this function's.
            unsafe {
                let x = _mm512_loadu_ps(xs.as_ptr());
                let y = match op {
                    Op::Erf => erf512(x, &rows),
                    Op::Gelu => gelu_of!(
                        x,
                        |v| erf512(v, &rows),
                        _mm512_set1_ps,
                        _mm512_mul_ps,
                        _mm512_add_ps
                    ),
                };
                let mut ys = [0.0f32; 16];
                _mm512_storeu_ps(ys.as_mut_ptr(), y);
                ys
            }
        })
    }

    /// [`map`] with two AVX2 blocks of eight.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn map256(
        dst: &mut [f32],
        src: Option<&[f32]>,
        shift: Option<f32>,
        sums: Option<&mut [f32; 16]>,
        next: *const f32,
        op: Op,
    ) {
        // SAFETY: each row is 16 float32s, two unaligned 256-bit loads.
        let rows: [[__m256; 2]; DEGREE + 1] = std::array::from_fn(|k| unsafe {
            let p = ERF_COEFFS[k].as_ptr();
            [_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8))]
        });
        map(dst, src, shift, sums, next, op, |xs| {
            let mut ys = [0.0f32; 16];
            for h in 0..2 {
                // SAFETY: lanes 8h..8h + 8 of the 16 in `xs` and `ys`, read and
                // written by unaligned 256-bit moves; the features are this
                // function's.
                unsafe {
                    let x = _mm256_loadu_ps(xs.as_ptr().add(8 * h));
                    let y = match op {
                        Op::Erf => erf256(x, &rows),
                        Op::Gelu => gelu_of!(
                            x,
                            |v| erf256(v, &rows),
                            _mm256_set1_ps,
                            _mm256_mul_ps,
                            _mm256_add_ps
                        ),
                    };
                    _mm256_storeu_ps(ys.as_mut_ptr().add(8 * h), y);
                }
            }
            ys
        })
    }
}

/// [`map`] at the widest level this processor runs.
fn map_by_level(
    dst: &mut [f32],
    src: Option<&[f32]>,
    shift: Option<f32>,
    sums: Option<&mut [f32; 16]>,
    next: *const f32,
    op: Op,
) {
    match super::level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: level 3 means the processor has AVX-512F, AVX2 and FMA.
        3 => unsafe { wide::map512(dst, src, shift, sums, next, op) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: level 2 means the processor has AVX2 and FMA.
        2 => unsafe { wide::map256(dst, src, shift, sums, next, op) },
        _ => map(dst, src, shift, sums, next, op, |mut xs| {
            xs.iter_mut().for_each(|x| *x = op.scalar(*x));
            xs
        }),
    }
}

/// The run functions (`vector_runs`' `run_fn!` contract).
macro_rules! run_fn {
    ($name:ident, $op:expr) => {
        /// Writes the op of each of the `n` elements at `src` to `dst` (`n ≤ 0`:
        /// nothing); `dst == src` works in place.
        ///
        /// # Safety
        /// `src` must be valid for reads and `dst` for writes of `n` aligned
        /// elements, the same run or disjoint, written by no one else during
        /// the call.
        pub(super) unsafe extern "C" fn $name(dst: *mut f32, src: *const f32, n: i64) {
            if n <= 0 {
                return;
            }
            // SAFETY: the caller's contract above.
            let (dst, src) = unsafe { super::run_slices(dst, src, n as usize) };
            map_by_level(dst, src, None, None, std::ptr::null(), $op);
        }
    };
}

/// The row functions (`rows.rs`' contract).
macro_rules! row_fn {
    ($name:ident, $op:expr) => {
        /// Writes `op(src[i] - shift)` to `dst[i]` for the `n` elements and adds
        /// each to `sums[i % 16]` (`n ≤ 0`: nothing; `sums` null: no sums),
        /// asking for the lines of the row at `next` as it goes (null: none);
        /// `dst == src` works in place.
        ///
        /// # Safety
        /// `src` must be valid for reads and `dst` for writes of `n` aligned
        /// elements, the same run or disjoint; `sums` null or valid for reads
        /// and writes of 16 elements apart from both; no one else writes them
        /// during the call. `next` may be any address: it is only a hint.
        pub(super) unsafe extern "C" fn $name(
            dst: *mut f32,
            src: *const f32,
            n: i64,
            shift: f32,
            sums: *mut f32,
            next: *const f32,
        ) {
            if n <= 0 {
                return;
            }
            // SAFETY: the caller's contract above.
            let (dst, src, sums) = unsafe {
                let (dst, src) = super::run_slices(dst, src, n as usize);
                (dst, src, sums.cast::<[f32; 16]>().as_mut())
            };
            map_by_level(dst, src, Some(shift), sums, next, $op);
        }
    };
}

run_fn!(run_erf, Op::Erf);
run_fn!(run_gelu, Op::Gelu);
row_fn!(row_erf, Op::Erf);
row_fn!(row_gelu, Op::Gelu);

/// The four functions: symbol and address, for [`crate::jit_symbols`].
pub(super) fn symbols() -> [(&'static str, *const u8); 4] {
    [
        ("lf_run_erf_f32", run_erf as *const u8),
        ("lf_run_gelu_f32", run_gelu as *const u8),
        ("lf_row_erf_f32", row_erf as *const u8),
        ("lf_row_gelu_f32", row_gelu as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's float32 erf is within 2.2 ulp of libm's (float64) erf
    /// everywhere below 4.5, keeps `-0`, reaches ±1 and passes NaN.
    #[test]
    fn erf_is_close_to_libm() {
        let mut worst = 0.0f64;
        for b in (0..4.5f32.to_bits()).step_by(101) {
            let x = f32::from_bits(b);
            for x in [x, -x] {
                let want = libm::erf(f64::from(x));
                let ulp = f64::from((want.abs() as f32).next_up() - want.abs() as f32);
                worst = worst.max((f64::from(erf(x)) - want).abs() / ulp);
            }
        }
        assert!(worst <= 2.25, "{worst} ulp");
        assert_eq!(erf(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(erf(f32::INFINITY), 1.0);
        assert_eq!(erf(-1e30), -1.0);
        assert!(erf(f32::NAN).is_nan() && gelu(f32::NAN).is_nan());
        assert_eq!(gelu(0.0), 0.0);
    }
}
