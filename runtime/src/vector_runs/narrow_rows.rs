//! Float16 and bfloat16 rows of reduction phases: a max, a min, a sum of
//! `exp(x - shift)`, a sum in float64, or a sum of float32 squared deviations
//! widened to float64, of a contiguous row of 16-bit codes widened to float32
//! (softmax's row max over a float16 input, `amax` along a row, a
//! log-softmax's sum of exps, a layer norm's mean and variance).
//!
//! The kernel's own vector loop widens each code in Cranelift's four lanes (a
//! dozen integer steps for float16) and steps sixteen accumulators with the
//! widened values. Here the row is widened a block at a time into a float32
//! tile on the stack (`widen.rs`' widening: the processor's conversion where it
//! has one), and the float32 routine (`reductions.rs`) steps the same sixteen
//! accumulators with the tile, position `i` into accumulator `i % 16`. The
//! widening is exact and the steps are the loop's, in its order, so the
//! accumulators hold the loop's bits.
//!
//! Names: `lf_reduce_<max|min|sumexp>_<f16|bf16>`, the other reductions'
//! signature with the codes as the row: `(src: *const u16, n, shift: f32,
//! accs: *mut f32, next: *const u16)`; `lf_reduce_sum_<f16|bf16>_f64` and
//! `lf_reduce_sumsq_<f16|bf16>_widened`, `reductions.rs`' `sum_f32_f64` and
//! `sumsq_f32_widened` over the widened codes (float64 accumulators). `shift`
//! is the sums' (the extrema ignore it), `next` (null: none) is a row to
//! prefetch meanwhile, a block's matching bytes before the block. With
//! AVX-512 the max and min widen sixteen codes at a time in registers
//! instead, four chains at once (`wide`), the same bits.
//!
//! `lf_row_exp_<f16|bf16>(dst: *mut f32, src: *const u16, n, shift, sums,
//! next)`: the row routine `lf_row_exp_f32` over the widened codes (a float16
//! softmax's exp phase, writing its float32 exps), with AVX-512 the codes
//! widened in its loop.

use super::prefetch::{blocks, BLOCK};
use super::reductions::{reduce_max_f32, reduce_min_f32, reduce_sumexp_f32};
use super::reductions::{reduce_sum_f32_f64, reduce_sumsq_f32_widened};
use super::widen::{widen_bf16_run, widen_f16_run};

/// Codes per block: the reduction routines' prefetch block (`prefetch.rs`,
/// 1 KiB of the next row asked for at a time) of 16-bit codes, a multiple of
/// 16 (a block never splits the accumulators' cycle); the tile is 2 KiB of
/// float32 (the narrow affine rows' blocks too, `affine.rs`).
pub(super) const CODES: usize = BLOCK / 2;

/// The widening and the float32 step of one function (`A` its accumulators'
/// type, `C` its shift's).
type Widen = unsafe extern "C" fn(*mut f32, *const u16, i64);
type Step<A, C> = unsafe extern "C" fn(*const f32, i64, C, *mut A, *const f32);

/// Steps `accs` with the widened codes of `src` (and `shift`), a block at a
/// time.
///
/// # Safety
/// As the functions below.
unsafe fn widened_blocks<A, C: Copy>(
    src: *const u16,
    n: i64,
    shift: C,
    accs: *mut A,
    next: *const u16,
    (widen, step): (Widen, Step<A, C>),
) {
    let n = usize::try_from(n).unwrap_or(0);
    let mut tile = [0f32; CODES];
    // (each block of `CODES` codes, its bytes of the next row asked for first)
    for r in blocks(n, next) {
        let len = r.len();
        // SAFETY: the caller's contract: `src` holds `n` codes, so the block
        // lies in it; the tile holds `len ≤ CODES` values; `accs` holds 16
        // accumulators apart from both.
        unsafe {
            widen(tile.as_mut_ptr(), src.add(r.start), len as i64);
            step(tile.as_ptr(), len as i64, shift, accs, std::ptr::null());
        }
    }
}

/// One function per op and dtype (see the module doc).
macro_rules! narrow_row_fn {
    ($name:ident, $widen:ident, $step:ident) => {
        narrow_row_fn!($name, $widen, $step, f32, f32);
    };
    ($name:ident, $widen:ident, $step:ident, $a:ty, $c:ty) => {
        /// Steps `accs[i % 16]` with the float32 value of each of the `n`
        /// codes at `src` in order (`n ≤ 0`: nothing); `shift` is a sum's
        /// (an extremum ignores it), `next` (null: none) is a row to prefetch
        /// meanwhile.
        ///
        /// # Safety
        /// `src` must be valid and aligned for reads of `n` codes and `accs`
        /// for reads and writes of 16 accumulators apart from it, which no one
        /// else writes during the call (the JIT kernel passes a row of an
        /// input and a stack slot). `next` may be any address: it is only a
        /// hint.
        pub(crate) unsafe extern "C" fn $name(
            src: *const u16,
            n: i64,
            shift: $c,
            accs: *mut $a,
            next: *const u16,
        ) {
            // SAFETY: the caller's contract above is `widened_blocks`'.
            unsafe { widened_blocks(src, n, shift, accs, next, ($widen, $step)) }
        }
    };
}

/// One max or min function per dtype: with AVX-512, [`wide::extremum`] over
/// the codes; elsewhere the widened blocks and the float32 routine.
macro_rules! narrow_extremum_fn {
    ($name:ident, $widen:ident, $step:ident, $max:expr, $bf:expr) => {
        /// Steps `accs[i % 16]` with the float32 value of each of the `n`
        /// codes at `src` in order (`n ≤ 0`: nothing); `shift` is unused,
        /// `next` (null: none) is a row to prefetch meanwhile (the AVX-512
        /// path, whose row the softmax's exp routine fetched, asks for none).
        ///
        /// # Safety
        /// As the other narrow row functions': `src` valid and aligned for
        /// reads of `n` codes, `accs` for reads and writes of 16 accumulators
        /// apart from it, which no one else writes during the call; `next`
        /// only a hint.
        pub(crate) unsafe extern "C" fn $name(
            src: *const u16,
            n: i64,
            shift: f32,
            accs: *mut f32,
            next: *const u16,
        ) {
            #[cfg(target_arch = "x86_64")]
            if n > 0 && super::level() == 3 {
                // SAFETY: level 3 is AVX-512F; the caller's contract above
                // covers the row and the accumulators.
                unsafe {
                    let row = std::slice::from_raw_parts(src, n as usize);
                    wide::extremum(row, &mut *accs.cast::<[f32; 16]>(), $max, $bf)
                };
                return;
            }
            // SAFETY: the caller's contract above is `widened_blocks`'.
            unsafe { widened_blocks(src, n, shift, accs, next, ($widen, $step)) }
        }
    };
}

narrow_extremum_fn!(reduce_max_f16, widen_f16_run, reduce_max_f32, true, false);
narrow_extremum_fn!(reduce_min_f16, widen_f16_run, reduce_min_f32, false, false);
narrow_row_fn!(reduce_sumexp_f16, widen_f16_run, reduce_sumexp_f32);
narrow_extremum_fn!(reduce_max_bf16, widen_bf16_run, reduce_max_f32, true, true);
narrow_extremum_fn!(reduce_min_bf16, widen_bf16_run, reduce_min_f32, false, true);
narrow_row_fn!(reduce_sumexp_bf16, widen_bf16_run, reduce_sumexp_f32);

/// One exp row function per dtype: a float16 or bfloat16 row's `exp(x -
/// shift)` into float32 with its sums (a float16 softmax's exp phase, which
/// keeps the float32 exps for its last phase). With AVX-512 the exp routine
/// over the codes widened in registers; elsewhere the codes widened into
/// `dst` and the float32 row routine over it in place; the same bits (the
/// widening is exact).
macro_rules! narrow_exp_row_fn {
    ($name:ident, $widen:ident, $bf:expr) => {
        /// Writes `exp(x - shift)` of the float32 value `x` of each of the `n`
        /// codes at `src` to `dst[i]` (float32) and adds it to `sums[i % 16]`
        /// (`n ≤ 0`: nothing; `sums` null: no sums), asking for the lines of
        /// the codes at `next` as it goes (null: none).
        ///
        /// # Safety
        /// `src` valid and aligned for reads of `n` codes, `dst` for writes of
        /// `n` float32, apart; `sums` null or valid for 16 float32 apart from
        /// both; no one else writes them during the call (the JIT kernel
        /// passes an input row, its own row of float32 and a stack slot).
        /// `next` may be any address: it is only a hint.
        pub(crate) unsafe extern "C" fn $name(
            dst: *mut f32,
            src: *const u16,
            n: i64,
            shift: f32,
            sums: *mut f32,
            next: *const u16,
        ) {
            if n <= 0 {
                return;
            }
            #[cfg(target_arch = "x86_64")]
            if super::level() == 3 {
                let mut none = [0.0; 16];
                // SAFETY: level 3 is AVX-512F with FMA; the caller's contract
                // covers the runs and the sums.
                unsafe {
                    let (dst, src) = (
                        std::slice::from_raw_parts_mut(dst, n as usize),
                        std::slice::from_raw_parts(src, n as usize),
                    );
                    let sums = if sums.is_null() {
                        &mut none
                    } else {
                        &mut *sums.cast::<[f32; 16]>()
                    };
                    super::exp_scalef::row_f32_of_codes(dst, src, $bf, shift, sums, next);
                }
                return;
            }
            // SAFETY: the caller's contract: `dst` holds `n` float32 apart from
            // the codes, and the row routine runs over it in place.
            unsafe {
                $widen(dst, src, n);
                super::rows::row_exp(dst, dst, n, shift, sums, next.cast());
            }
        }
    };
}

narrow_exp_row_fn!(row_exp_f16, widen_f16_run, false);
narrow_exp_row_fn!(row_exp_bf16, widen_bf16_run, true);

#[cfg(target_arch = "x86_64")]
mod wide {
    //! A float16 or bfloat16 row's max or min with AVX-512, the codes widened
    //! in registers: no tile stored and read back, and four chains of
    //! sixteen lanes at once where the float32 routine steps one.
    use super::super::half_hw::widen16;
    use super::super::reductions::{pick_max, pick_min};
    use std::arch::x86_64::*;

    /// `reductions.rs`' `pick_max(a, x)` (`a < x ? x : a`) or `pick_min(a, x)`
    /// (`x < a ? x : a`) of sixteen lanes: `vmaxps`/`vminps` with `x` first,
    /// which return their second operand, `a`, where either is NaN or both
    /// are zeros.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn pick(a: __m512, x: __m512, max: bool) -> __m512 {
        if max {
            _mm512_max_ps(x, a)
        } else {
            _mm512_min_ps(x, a)
        }
    }

    /// Steps `accs[i % 16]` with each code of `row` in order by the pick,
    /// each lane's NaNs noted apart and made its result (the canonical NaN)
    /// at the end: the float32 routine's bits (`reduce_<max|min>_f32` over
    /// the widened codes). The whole vectors are cut into four contiguous
    /// blocks stepped side by side, each into sixteen accumulators of its own
    /// (the first block's from `accs`, the others' from the infinity the
    /// pick passes over), then picked together block after block: the pick
    /// keeps the earlier of two equal values and a NaN never replaces a
    /// number, so each block's result is the first of its extreme values and
    /// the joined result the first of the row's, as in order.
    ///
    /// # Safety
    /// The processor has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn extremum(row: &[u16], accs: &mut [f32; 16], max: bool, bf: bool) {
        let n = row.len();
        let chunks = n / 16;
        let per = chunks / 4;
        let start = if max {
            f32::NEG_INFINITY
        } else {
            f32::INFINITY
        };
        let first = super::super::handover::sixteen_ps(accs);
        let mut nan: __mmask16 = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(first, first);
        let mut acc = [
            first,
            _mm512_set1_ps(start),
            _mm512_set1_ps(start),
            _mm512_set1_ps(start),
        ];
        let at = |c: usize| row.as_ptr().wrapping_add(c * 16);
        for j in 0..per {
            for (b, a) in acc.iter_mut().enumerate() {
                // SAFETY: chunk `b * per + j` < `chunks` lies in the row.
                let x = unsafe { widen16(at(b * per + j), bf) };
                nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x);
                *a = pick(*a, x, max);
            }
        }
        // (the last block goes on over the chunks the split left)
        for c in 4 * per..chunks {
            // SAFETY: chunk `c` < `chunks` lies in the row.
            let x = unsafe { widen16(at(c), bf) };
            nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x);
            acc[3] = pick(acc[3], x, max);
        }
        let joined = acc[1..].iter().fold(acc[0], |o, &a| pick(o, a, max));
        let mut out = [0f32; 16];
        // SAFETY: `out` holds sixteen float32.
        unsafe { _mm512_storeu_ps(out.as_mut_ptr(), joined) };
        // (the codes short of a chunk, one lane each, in order)
        for (i, &c) in row[chunks * 16..].iter().enumerate() {
            let x = super::super::widen::widen_code(c, bf);
            if x.is_nan() {
                nan |= 1 << i;
            }
            out[i] = if max {
                pick_max(out[i], x)
            } else {
                pick_min(out[i], x)
            };
        }
        for (i, (a, o)) in accs.iter_mut().zip(out).enumerate() {
            *a = if nan >> i & 1 == 1 { f32::NAN } else { o };
        }
    }
}
narrow_row_fn!(
    reduce_sum_f16_f64,
    widen_f16_run,
    reduce_sum_f32_f64,
    f64,
    f64
);
narrow_row_fn!(
    reduce_sum_bf16_f64,
    widen_bf16_run,
    reduce_sum_f32_f64,
    f64,
    f64
);
narrow_row_fn!(
    reduce_sumsq_f16_widened,
    widen_f16_run,
    reduce_sumsq_f32_widened,
    f64,
    f32
);
narrow_row_fn!(
    reduce_sumsq_bf16_widened,
    widen_bf16_run,
    reduce_sumsq_f32_widened,
    f64,
    f32
);

/// The narrow row functions: symbol and address.
pub(super) fn symbols() -> [(&'static str, *const u8); 12] {
    [
        ("lf_row_exp_f16", row_exp_f16 as *const u8),
        ("lf_row_exp_bf16", row_exp_bf16 as *const u8),
        ("lf_reduce_sum_f16_f64", reduce_sum_f16_f64 as *const u8),
        ("lf_reduce_sum_bf16_f64", reduce_sum_bf16_f64 as *const u8),
        (
            "lf_reduce_sumsq_f16_widened",
            reduce_sumsq_f16_widened as *const u8,
        ),
        (
            "lf_reduce_sumsq_bf16_widened",
            reduce_sumsq_bf16_widened as *const u8,
        ),
        ("lf_reduce_max_f16", reduce_max_f16 as *const u8),
        ("lf_reduce_min_f16", reduce_min_f16 as *const u8),
        ("lf_reduce_sumexp_f16", reduce_sumexp_f16 as *const u8),
        ("lf_reduce_max_bf16", reduce_max_bf16 as *const u8),
        ("lf_reduce_min_bf16", reduce_min_bf16 as *const u8),
        ("lf_reduce_sumexp_bf16", reduce_sumexp_bf16 as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    type R = unsafe extern "C" fn(*const u16, i64, f32, *mut f32, *const u16);
    /// A function, its codes' widening, and its step `(acc, x, shift)`.
    type Case = (R, fn(u16) -> f32, fn(f32, f32, f32) -> f32);

    /// Each function at every level against the codes widened by `half` and
    /// stepped one at a time with the vector loop's max, min or sum of
    /// `exp(x - shift)`, bit for bit: every 16-bit code in hashed orders (NaN
    /// payloads, infinities, subnormals, signed zeros), rows whose extrema are
    /// ties of signed zeros, rows of every length
    /// around the block, the accumulators' cycle and the extrema's four
    /// blocks, accumulators that start with a NaN, with and without a row to
    /// prefetch.
    #[test]
    fn narrow_rows_step_the_widened_codes_in_order() {
        let f16: fn(u16) -> f32 = |c| half::f16::from_bits(c).to_f32();
        let bf16: fn(u16) -> f32 = |c| half::bf16::from_bits(c).to_f32();
        let max: fn(f32, f32, f32) -> f32 = |a, b, _| {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else if a < b {
                b
            } else {
                a
            }
        };
        let min: fn(f32, f32, f32) -> f32 = |a, b, _| {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else if b < a {
                b
            } else {
                a
            }
        };
        let sumexp: fn(f32, f32, f32) -> f32 = |a, x, c| a + super::super::exp(x - c);
        super::super::each_level(|| {
            let all: Vec<u16> = (0..=u16::MAX as u32)
                .map(|i| (i.wrapping_mul(40503) & 0xFFFF) as u16)
                .collect();
            // rows of only finite codes too (a NaN ends every comparison), and
            // of small ones (whose exps sum to a finite value)
            let finite: Vec<u16> = all
                .iter()
                .copied()
                .filter(|&c| !f16(c).is_nan() && !bf16(c).is_nan())
                .collect();
            let small: Vec<u16> = finite
                .iter()
                .copied()
                .filter(|&c| f16(c).abs() < 8.0 && bf16(c).abs() < 8.0)
                .collect();
            let cases: [Case; 6] = [
                (reduce_max_f16, f16, max),
                (reduce_min_f16, f16, min),
                (reduce_sumexp_f16, f16, sumexp),
                (reduce_max_bf16, bf16, max),
                (reduce_min_bf16, bf16, min),
                (reduce_sumexp_bf16, bf16, sumexp),
            ];
            // signed zeros beside values below (above) them: a lane's max (min)
            // is the first of its zeros, which the picks keep
            let cycle = |c: [u16; 3]| (0..8192).map(|i| c[i % 3]).collect::<Vec<u16>>();
            let (zeros_up, zeros_down) = (
                cycle([0x8000, 0x0000, 0x8001]),
                cycle([0x0000, 0x8000, 0x0001]),
            );
            for codes in [&all, &finite, &small, &zeros_up, &zeros_down] {
                for n in [
                    0usize, 1, 15, 16, 17, 63, 64, 65, 511, 512, 513, 1040, 4096, 4099, 8192,
                ] {
                    let n = n.min(codes.len());
                    let row = &codes[..n];
                    let next = if n % 2 == 0 {
                        codes.as_ptr()
                    } else {
                        std::ptr::null()
                    };
                    for (f, widen, step) in cases {
                        // (a NaN accumulator too: lane 5 met one in an earlier call)
                        let start: [f32; 16] = std::array::from_fn(|j| {
                            if j == 5 && n % 3 == 0 {
                                f32::NAN
                            } else {
                                j as f32 * 0.5 - 4.0
                            }
                        });
                        let mut want = start;
                        for (i, &c) in row.iter().enumerate() {
                            want[i % 16] = step(want[i % 16], widen(c), 1.5);
                        }
                        let mut got = start;
                        // SAFETY: a live row of `n` codes and an array of 16.
                        unsafe { f(row.as_ptr(), n as i64, 1.5, got.as_mut_ptr(), next) };
                        // (a NaN as any NaN: which payload `a + NaN` keeps
                        // where `a` is one too is each compiled loop's choice)
                        let bits =
                            |v: [f32; 16]| v.map(|x| if x.is_nan() { 1 } else { x.to_bits() });
                        assert_eq!(bits(got), bits(want), "n {n}");
                    }
                }
            }
        });
    }

    /// The exp rows over codes (`lf_row_exp_<f16|bf16>`) at every level give
    /// the float32 row routine's values and sums over the widened codes, bit
    /// for bit: codes of every kind but NaN (whose sums are any NaN),
    /// lengths around the vector, with sums and without.
    #[test]
    fn exp_rows_of_codes_are_the_widened_rows() {
        type Row = unsafe extern "C" fn(*mut f32, *const u16, i64, f32, *mut f32, *const u16);
        /// A function and its codes' widening.
        type Case = (Row, fn(u16) -> f32);
        let f16: fn(u16) -> f32 = |c| half::f16::from_bits(c).to_f32();
        let bf16: fn(u16) -> f32 = |c| half::bf16::from_bits(c).to_f32();
        let cases: [Case; 2] = [(row_exp_f16, f16), (row_exp_bf16, bf16)];
        super::super::each_level(|| {
            for (f, widen) in cases {
                let codes: Vec<u16> = (0..=u16::MAX as u32)
                    .map(|i| (i.wrapping_mul(40503) & 0xFFFF) as u16)
                    .filter(|&c| !widen(c).is_nan())
                    .collect();
                for n in [0usize, 1, 15, 16, 17, 100, 4096, 4099] {
                    let row = &codes[..n];
                    let widened: Vec<f32> = row.iter().map(|&c| widen(c)).collect();
                    let start: [f32; 16] = std::array::from_fn(|j| j as f32 * 0.25);
                    let (mut want, mut want_sums) = (vec![0f32; n], start);
                    // SAFETY: live runs of `n` and an array of 16.
                    unsafe {
                        super::super::rows::row_exp(
                            want.as_mut_ptr(),
                            widened.as_ptr(),
                            n as i64,
                            1.25,
                            want_sums.as_mut_ptr(),
                            std::ptr::null(),
                        )
                    };
                    let (mut got, mut got_sums) = (vec![0f32; n], start);
                    let mut no_sums = vec![0f32; n];
                    // SAFETY: as above; the second call without sums.
                    unsafe {
                        f(
                            got.as_mut_ptr(),
                            row.as_ptr(),
                            n as i64,
                            1.25,
                            got_sums.as_mut_ptr(),
                            codes.as_ptr(),
                        );
                        f(
                            no_sums.as_mut_ptr(),
                            row.as_ptr(),
                            n as i64,
                            1.25,
                            std::ptr::null_mut(),
                            std::ptr::null(),
                        );
                    }
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got), bits(&want), "n {n}");
                    assert_eq!(bits(&no_sums), bits(&want), "n {n}, no sums");
                    assert_eq!(bits(&got_sums), bits(&want_sums), "n {n}, sums");
                }
            }
        });
    }

    /// The float64 sums (a layer norm's mean and variance of a narrow row)
    /// at every level against the codes widened by `half` and stepped one at
    /// a time in order, bit for bit: finite codes (the sums of all codes
    /// overflow), rows of every length around the block and the
    /// accumulators' cycle.
    #[test]
    fn narrow_rows_sum_in_float64() {
        type R64<C> = unsafe extern "C" fn(*const u16, i64, C, *mut f64, *const u16);
        /// A function and its codes' widening.
        type Case<C> = (R64<C>, fn(u16) -> f32);
        let f16: fn(u16) -> f32 = |c| half::f16::from_bits(c).to_f32();
        let bf16: fn(u16) -> f32 = |c| half::bf16::from_bits(c).to_f32();
        super::super::each_level(|| {
            let codes: Vec<u16> = (0..=u16::MAX as u32)
                .map(|i| (i.wrapping_mul(40503) & 0xFFFF) as u16)
                .filter(|&c| f16(c).is_finite() && bf16(c).abs() < 1e30)
                .collect();
            for n in [0usize, 1, 15, 16, 17, 511, 512, 513, 1040, 4099] {
                let row = &codes[..n];
                let start: [f64; 16] = std::array::from_fn(|j| j as f64 * 0.25 - 2.0);
                let sums: [Case<f64>; 2] = [(reduce_sum_f16_f64, f16), (reduce_sum_bf16_f64, bf16)];
                for (f, widen) in sums {
                    let mut want = start;
                    for (i, &c) in row.iter().enumerate() {
                        want[i % 16] += f64::from(widen(c));
                    }
                    let mut got = start;
                    // SAFETY: a live row of `n` codes and an array of 16.
                    unsafe {
                        f(
                            row.as_ptr(),
                            n as i64,
                            0.0,
                            got.as_mut_ptr(),
                            std::ptr::null(),
                        )
                    };
                    assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "n {n}");
                }
                let squares: [Case<f32>; 2] = [
                    (reduce_sumsq_f16_widened, f16),
                    (reduce_sumsq_bf16_widened, bf16),
                ];
                for (f, widen) in squares {
                    let mut want = start;
                    for (i, &c) in row.iter().enumerate() {
                        let d = widen(c) - 0.75;
                        want[i % 16] += f64::from(d * d);
                    }
                    let mut got = start;
                    // SAFETY: as above.
                    unsafe { f(row.as_ptr(), n as i64, 0.75, got.as_mut_ptr(), row.as_ptr()) };
                    assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "n {n}");
                }
            }
        });
    }
}
