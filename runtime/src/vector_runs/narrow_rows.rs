//! Float16 and bfloat16 rows of reduction phases: a max, a min, a sum of
//! `exp(x - shift)`, a sum in float64, or a sum of float32 squared deviations
//! widened to float64, of a contiguous row of 16-bit codes widened to float32
//! (softmax's row max over a float16 input, `amax` along a row, a
//! log-softmax's sum of exps, a layer norm's mean and variance).
//!
//! The kernel's own vector loop widens each code in Cranelift's four lanes (a
//! dozen integer steps for float16) and steps sixteen accumulators with the
//! widened values. Here the row is widened a block at a time into a float32
//! tile on the stack (`tiles.rs`' widening: the processor's conversion where it
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
//! prefetch meanwhile, a block's matching bytes before the block.

use super::prefetch::{blocks, BLOCK};
use super::reductions::{reduce_max_f32, reduce_min_f32, reduce_sumexp_f32};
use super::reductions::{reduce_sum_f32_f64, reduce_sumsq_f32_widened};
use super::tiles::{widen_bf16_run, widen_f16_run};

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

narrow_row_fn!(reduce_max_f16, widen_f16_run, reduce_max_f32);
narrow_row_fn!(reduce_min_f16, widen_f16_run, reduce_min_f32);
narrow_row_fn!(reduce_sumexp_f16, widen_f16_run, reduce_sumexp_f32);
narrow_row_fn!(reduce_max_bf16, widen_bf16_run, reduce_max_f32);
narrow_row_fn!(reduce_min_bf16, widen_bf16_run, reduce_min_f32);
narrow_row_fn!(reduce_sumexp_bf16, widen_bf16_run, reduce_sumexp_f32);
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
pub(super) fn symbols() -> [(&'static str, *const u8); 10] {
    [
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
    /// payloads, infinities, subnormals, signed zeros), rows of every length
    /// around the block and the accumulators' cycle, with and without a row
    /// to prefetch.
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
            for codes in [&all, &finite, &small] {
                for n in [0usize, 1, 15, 16, 17, 511, 512, 513, 1040, 4099] {
                    let n = n.min(codes.len());
                    let row = &codes[..n];
                    let next = if n % 2 == 0 {
                        codes.as_ptr()
                    } else {
                        std::ptr::null()
                    };
                    for (f, widen, step) in cases {
                        let start: [f32; 16] = std::array::from_fn(|j| j as f32 * 0.5 - 4.0);
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
