//! Reduction runs: a reduction phase whose only work is one reduction of a
//! contiguous row (`lazyfuse_codegen`'s reduction runs: softmax's max, a
//! layer norm's mean and squared deviations) over sixteen running
//! accumulators, `acc[i % 16] = step(acc[i % 16], src[i])` in the row's order.
//!
//! Sixteen because the kernel's own vector loop keeps sixteen (four unrolled
//! copies of four lanes; see `rows.rs`): stepping each in that order gives the
//! kernel's bits, and the kernel reads them back and combines them as before.
//! Each step is the vector loop's, operation for operation: the max and min of
//! `vbinary` (`a < b ? b : a`, NaN if either is NaN; the uncached routines
//! step by the select alone and note each lane's NaNs apart, the same bits
//! with a shorter chain, see [`pick_max`]), adds, lane-exact float32
//! → float64 widening, and the squared deviation `d * d + acc` as the one fused
//! multiply-add the loop contracts it to (or, squared in float32 and widened,
//! as a product and an add), and `exp(x - shift)` as the row routines compute
//! it (a log-softmax's sum of exps, which nothing stores).
//!
//! Each also takes a `next` row to prefetch while it reduces (null: none;
//! `prefetch.rs`).

/// The vector loop's maximum: `a < b ? b : a`, the canonical NaN if either is
/// NaN.
#[inline(always)]
fn max32(a: f32, b: f32) -> f32 {
    let m = if a < b { b } else { a };
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else {
        m
    }
}

/// The vector loop's minimum: `b < a ? b : a`, NaN as [`max32`].
#[inline(always)]
fn min32(a: f32, b: f32) -> f32 {
    let m = if b < a { b } else { a };
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else {
        m
    }
}

#[inline(always)]
fn max64(a: f64, b: f64) -> f64 {
    let m = if a < b { b } else { a };
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        m
    }
}

#[inline(always)]
fn min64(a: f64, b: f64) -> f64 {
    let m = if b < a { b } else { a };
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        m
    }
}

/// The max and min steps without their NaN test: `a < x ? x : a` and `x < a ?
/// x : a`. A routine that steps with one of these and notes separately
/// whether its lane met a NaN gives [`max32`]'s and [`min32`]'s bits (their
/// result is the canonical NaN from the first NaN on, else exactly this
/// select's), with the select alone on the chain from one step to the next:
/// one instruction (`vmaxps`, `vminps`) where the NaN test and its blend
/// made three.
#[inline(always)]
pub(super) fn pick_max<T: PartialOrd>(a: T, x: T) -> T {
    if a < x {
        x
    } else {
        a
    }
}

/// The min of [`pick_max`]: `x < a ? x : a`.
#[inline(always)]
pub(super) fn pick_min<T: PartialOrd>(a: T, x: T) -> T {
    if x < a {
        x
    } else {
        a
    }
}

/// Steps each of `accs` with the lanes of `xs` by `pick` (a [`pick_max`] or [`pick_min`] step),
/// keeping in `nan` the lanes' last NaN (the note of [`pick_max`]: a lane of
/// `nan` is NaN once its lane met one; a select, off the accumulators' chain).
#[inline(always)]
fn pick_lanes<T: Copy + PartialEq>(
    accs: &mut [T; 16],
    nan: &mut [T; 16],
    xs: &[T],
    pick: fn(T, T) -> T,
) {
    for ((a, n), &x) in accs.iter_mut().zip(nan.iter_mut()).zip(xs) {
        *a = pick(*a, x);
        // (`x != x`: NaN, without a float trait)
        #[allow(clippy::eq_op)]
        let is_nan = x != x;
        *n = if is_nan { x } else { *n };
    }
}

/// The row of `n` elements at `src` and the sixteen accumulators at `accs`
/// that every routine here steps (`None` for `n ≤ 0`: nothing to step).
///
/// # Safety
/// For `n > 0`, `src` must be valid and aligned for reads of `n` elements and
/// `accs` for reads and writes of 16 accumulators apart from it, which no one
/// else writes while the references live.
#[inline(always)]
unsafe fn row_and_accs<'a, S, A>(
    src: *const S,
    n: i64,
    accs: *mut A,
) -> Option<(&'a [S], &'a mut [A; 16])> {
    if n <= 0 {
        return None;
    }
    // SAFETY: the caller's contract above.
    Some(unsafe {
        (
            std::slice::from_raw_parts(src, n as usize),
            &mut *accs.cast::<[A; 16]>(),
        )
    })
}

/// One reduction function per step: `$s` the row's element type, `$a` the
/// accumulators', `$c` the shift's (the accumulators' unless given), `$step`
/// the step `(acc, x, shift) -> acc`.
macro_rules! reduce_fn {
    ($name:ident, $s:ty, $a:ty, $step:expr $(, wide $($w:ident)::+)?) => {
        reduce_fn!($name, $s, $a, $a, $step $(, wide $($w)::+)?);
    };
    ($name:ident, $s:ty, $a:ty, $c:ty, $step:expr $(, wide $($w:ident)::+)?) => {
        /// Steps `accs[i % 16]` with each of the `n` elements at `src` in order
        /// (`n ≤ 0`: nothing); `shift` is the squared deviations' center;
        /// `next` (null: none) is a row to prefetch meanwhile.
        ///
        /// # Safety
        /// `src` must be valid and aligned for reads of `n` elements and `accs`
        /// for reads and writes of 16 accumulators apart from it, which no one
        /// else writes during the call (the JIT kernel passes a row of an input
        /// and a stack slot). `next` may be any address: it is only a hint.
        pub(crate) unsafe extern "C" fn $name(
            src: *const $s,
            n: i64,
            shift: $c,
            accs: *mut $a,
            next: *const $s,
        ) {
            // SAFETY: the caller's contract above is `row_and_accs`'.
            let Some((src, accs)) = (unsafe { row_and_accs(src, n, accs) }) else {
                return;
            };
            by_level!(
                fn apply(src: &[$s], shift: $c, accs: &mut [$a; 16], next: *const $s) {
                    // (the steps name this module's max and min)
                    #[allow(unused_imports)]
                    use super::*;
                    let step: fn($a, $s, $c) -> $a = $step;
                    let mut acc = super::super::handover::sixteen(accs);
                    for r in super::super::prefetch::blocks(src.len(), next) {
                        // (blocks are whole multiples of 16 but the last)
                        let mut chunks = src[r].chunks_exact(16);
                        for c in &mut chunks {
                            for (a, &x) in acc.iter_mut().zip(c) {
                                *a = step(*a, x, shift);
                            }
                        }
                        for (a, &x) in acc.iter_mut().zip(chunks.remainder()) {
                            *a = step(*a, x, shift);
                        }
                    }
                    *accs = acc;
                },
                (src, shift, accs, next)
                $(, avx512 super::$($w)::+)?
            )
        }
    };
}

/// A max or min routine (`lf_reduce_<max|min>_<f32|f64>`, `reduce_fn`'s
/// contract, no shift): the row stepped in order by `$pick` ([`pick_max`] or
/// [`pick_min`]), each lane's NaNs noted apart and made the result (the
/// canonical NaN) at the end.
macro_rules! extremum_run_fn {
    ($name:ident, $t:ty, $pick:expr) => {
        /// Steps `accs[i % 16]` with each of the `n` elements at `src` in
        /// order (`n ≤ 0`: nothing); `shift` is unused; `next` (null: none)
        /// is a row to prefetch meanwhile.
        ///
        /// # Safety
        /// `src` must be valid and aligned for reads of `n` elements and `accs`
        /// for reads and writes of 16 accumulators apart from it, which no one
        /// else writes during the call (the JIT kernel passes a row of an input
        /// and a stack slot). `next` may be any address: it is only a hint.
        pub(crate) unsafe extern "C" fn $name(
            src: *const $t,
            n: i64,
            _shift: $t,
            accs: *mut $t,
            next: *const $t,
        ) {
            // SAFETY: the caller's contract above is `row_and_accs`'.
            let Some((src, accs)) = (unsafe { row_and_accs(src, n, accs) }) else {
                return;
            };
            by_level!(
                fn apply(src: &[$t], accs: &mut [$t; 16], next: *const $t) {
                    // (the steps name this module's picks)
                    #[allow(unused_imports)]
                    use super::*;
                    let pick: fn($t, $t) -> $t = $pick;
                    // (a NaN start is noted as one met)
                    let mut acc = super::super::handover::sixteen(accs);
                    let mut nan = acc;
                    for r in super::super::prefetch::blocks(src.len(), next) {
                        // (blocks are whole multiples of 16 but the last)
                        let mut chunks = src[r].chunks_exact(16);
                        for c in &mut chunks {
                            pick_lanes(&mut acc, &mut nan, c, pick);
                        }
                        pick_lanes(&mut acc, &mut nan, chunks.remainder(), pick);
                    }
                    for (a, n) in acc.iter_mut().zip(nan) {
                        if n.is_nan() {
                            *a = <$t>::NAN;
                        }
                    }
                    *accs = acc;
                },
                (src, accs, next)
            )
        }
    };
}

/// Blocks a cached extremum routine splits a row into (see [`extremum_fn`]).
const BLOCKS: usize = 4;

/// Shortest block of a cached extremum routine: measured on softmax rows, four
/// blocks of 1 KiB (a row of 4 KiB) were slower than the row in order, four
/// of 4 KiB faster.
const MIN_BLOCK_BYTES: usize = 2048;

/// A max or min routine for a row in the cache (`lf_reduce_<max|min>_cached`,
/// `reduce_fn`'s contract, no shift): [`BLOCKS`] contiguous blocks of the row
/// stepped side by side, each into sixteen accumulators of its own (the first
/// block's start from `accs`, the others from `$identity`), then combined
/// block after block. One set of sixteen makes every step wait for the one
/// before (one vector, a chain as long as the row over sixteen); four chains
/// run at once. The bits stay the ones of stepping the row in order: the step
/// keeps the earlier of two equal values (`-0`/`+0`) and returns NaN if either
/// is, so a block's result is the first of its extreme values, and stepping
/// the earlier blocks' result with it gives the first of the joined blocks'
/// (and `$identity`, the infinity of the other sign, steps to the value it
/// meets). Only for a row in the cache (one that a softmax's exp routine
/// fetched while it computed the row before): read from memory, four streams
/// at once were slower than one (a row max over [4096, 4096] 1.32 → 1.84 ms).
macro_rules! extremum_fn {
    ($name:ident, $t:ty, $step:expr, $identity:expr) => {
        /// Steps `accs[i % 16]` with each of the `n` elements at `src` in
        /// order (`n ≤ 0`: nothing). `shift` and `next` are unused (the
        /// signature is the other reductions'): the kernel's row routine, which
        /// fetched this row, fetches the next one too.
        ///
        /// # Safety
        /// `src` must be valid and aligned for reads of `n` elements and `accs`
        /// for reads and writes of 16 accumulators apart from it, which no one
        /// else writes during the call (the JIT kernel passes a row of an input
        /// and a stack slot).
        pub(crate) unsafe extern "C" fn $name(
            src: *const $t,
            n: i64,
            _shift: $t,
            accs: *mut $t,
            _next: *const $t,
        ) {
            // SAFETY: the caller's contract above is `row_and_accs`'.
            let Some((src, accs)) = (unsafe { row_and_accs(src, n, accs) }) else {
                return;
            };
            by_level!(
                fn apply(src: &[$t], accs: &mut [$t; 16]) {
                    // (the steps name this module's max and min)
                    #[allow(unused_imports)]
                    use super::*;
                    let step: fn($t, $t) -> $t = $step;
                    let chunks = src.len() / 16;
                    // (rows too short for blocks of `MIN_BLOCK_BYTES` go in order)
                    let bytes = chunks * 16 * std::mem::size_of::<$t>();
                    let per = if bytes < super::BLOCKS * super::MIN_BLOCK_BYTES {
                        0
                    } else {
                        chunks / super::BLOCKS
                    };
                    let mut acc = [[$identity; 16]; super::BLOCKS];
                    acc[0] = super::super::handover::sixteen(accs);
                    for j in 0..per {
                        for (b, a) in acc.iter_mut().enumerate() {
                            let c = (b * per + j) * 16;
                            for (a, &x) in a.iter_mut().zip(&src[c..c + 16]) {
                                *a = step(*a, x);
                            }
                        }
                    }
                    // (the last block goes on over the chunks the split left,
                    // then the elements short of a chunk)
                    let last = &mut acc[super::BLOCKS - 1];
                    for c in (super::BLOCKS * per * 16..chunks * 16).step_by(16) {
                        for (a, &x) in last.iter_mut().zip(&src[c..c + 16]) {
                            *a = step(*a, x);
                        }
                    }
                    let mut out = acc[0];
                    for block in &acc[1..] {
                        for (o, &x) in out.iter_mut().zip(block) {
                            *o = step(*o, x);
                        }
                    }
                    for (o, &x) in out.iter_mut().zip(&src[chunks * 16..]) {
                        *o = step(*o, x);
                    }
                    *accs = out;
                },
                (src, accs)
            )
        }
    };
}

extremum_run_fn!(reduce_max_f32, f32, pick_max);
extremum_run_fn!(reduce_min_f32, f32, pick_min);
reduce_fn!(reduce_sum_f32, f32, f32, |a, x, _| a + x);
extremum_run_fn!(reduce_max_f64, f64, pick_max);
extremum_run_fn!(reduce_min_f64, f64, pick_min);
reduce_fn!(reduce_sum_f64, f64, f64, |a, x, _| a + x);
extremum_fn!(reduce_max_cached_f32, f32, max32, f32::NEG_INFINITY);
extremum_fn!(reduce_min_cached_f32, f32, min32, f32::INFINITY);
extremum_fn!(reduce_max_cached_f64, f64, max64, f64::NEG_INFINITY);
extremum_fn!(reduce_min_cached_f64, f64, min64, f64::INFINITY);
reduce_fn!(reduce_sum_f32_f64, f32, f64, |a, x, _| a + f64::from(x));
// (a log-softmax's `sum(exp(x - max))`: the exp as the row routines compute it)
reduce_fn!(
    reduce_sumexp_f32,
    f32,
    f32,
    |a, x, c| a + super::super::exp(x - c),
    wide exp_scalef::sum_f32
);
reduce_fn!(
    reduce_sumexp_f64,
    f64,
    f64,
    |a, x, c| a + super::super::float64::exp(x - c),
    wide exp_scalef::sum_f64
);
reduce_fn!(reduce_sumsq_f32, f32, f32, |a, x, c| {
    let d = x - c;
    d.mul_add(d, a)
});
reduce_fn!(reduce_sumsq_f64, f64, f64, |a, x, c| {
    let d = x - c;
    d.mul_add(d, a)
});
reduce_fn!(reduce_sumsq_f32_f64, f32, f64, |a, x, c| {
    let d = f64::from(x) - c;
    d.mul_add(d, a)
});
// (a layer norm's variance as `nn::functional` writes it: `d · d` in float32,
// widened, then added; no FMA, since the widening sits between)
reduce_fn!(reduce_sumsq_f32_widened, f32, f64, f32, |a, x, c| {
    let d = x - c;
    a + f64::from(d * d)
});

/// The reduction functions: symbol and address, for [`crate::jit_symbols`].
pub(super) fn symbols() -> [(&'static str, *const u8); 17] {
    [
        ("lf_reduce_sumexp_f32", reduce_sumexp_f32 as *const u8),
        ("lf_reduce_sumexp_f64", reduce_sumexp_f64 as *const u8),
        (
            "lf_reduce_max_cached_f32",
            reduce_max_cached_f32 as *const u8,
        ),
        (
            "lf_reduce_min_cached_f32",
            reduce_min_cached_f32 as *const u8,
        ),
        (
            "lf_reduce_max_cached_f64",
            reduce_max_cached_f64 as *const u8,
        ),
        (
            "lf_reduce_min_cached_f64",
            reduce_min_cached_f64 as *const u8,
        ),
        (
            "lf_reduce_sumsq_f32_widened",
            reduce_sumsq_f32_widened as *const u8,
        ),
        ("lf_reduce_max_f32", reduce_max_f32 as *const u8),
        ("lf_reduce_min_f32", reduce_min_f32 as *const u8),
        ("lf_reduce_sum_f32", reduce_sum_f32 as *const u8),
        ("lf_reduce_max_f64", reduce_max_f64 as *const u8),
        ("lf_reduce_min_f64", reduce_min_f64 as *const u8),
        ("lf_reduce_sum_f64", reduce_sum_f64 as *const u8),
        ("lf_reduce_sum_f32_f64", reduce_sum_f32_f64 as *const u8),
        ("lf_reduce_sumsq_f32", reduce_sumsq_f32 as *const u8),
        ("lf_reduce_sumsq_f64", reduce_sumsq_f64 as *const u8),
        ("lf_reduce_sumsq_f32_f64", reduce_sumsq_f32_f64 as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every function at this processor's level against the step applied one
    /// element at a time, bit for bit, on rows with NaN, infinities and signed
    /// zeros, of lengths that are and are not multiples of 16.
    #[test]
    fn reductions_step_the_sixteen_accumulators_in_order() {
        super::super::each_level(|| {
            let mut xs: Vec<f32> = (0..1000)
                .map(|i| ((i as f32) * 0.731).sin() * 1e3)
                .collect();
            xs[17] = -0.0;
            xs[33] = 0.0;
            xs[400] = f32::INFINITY;
            let mut with_nan = xs.clone();
            with_nan[517] = f32::NAN;
            type R32 = unsafe extern "C" fn(*const f32, i64, f32, *mut f32, *const f32);
            type R3264 = unsafe extern "C" fn(*const f32, i64, f64, *mut f64, *const f32);
            type R64 = unsafe extern "C" fn(*const f64, i64, f64, *mut f64, *const f64);
            type S32 = fn(f32, f32, f32) -> f32;
            type S64 = fn(f64, f64, f64) -> f64;
            type S3264 = fn(f64, f32, f64) -> f64;
            let steps32: [(R32, S32); 5] = [
                (reduce_max_f32, |a, x, _| max32(a, x)),
                (reduce_min_f32, |a, x, _| min32(a, x)),
                (reduce_sum_f32, |a, x, _| a + x),
                (reduce_sumsq_f32, |a, x, c| (x - c).mul_add(x - c, a)),
                (reduce_sumexp_f32, |a, x, c| a + super::super::exp(x - c)),
            ];
            let steps64: [(R64, S64); 5] = [
                (reduce_max_f64, |a, x, _| max64(a, x)),
                (reduce_min_f64, |a, x, _| min64(a, x)),
                (reduce_sum_f64, |a, x, _| a + x),
                (reduce_sumsq_f64, |a, x, c| (x - c).mul_add(x - c, a)),
                (reduce_sumexp_f64, |a, x, c| {
                    a + super::super::float64::exp(x - c)
                }),
            ];
            let steps3264: [(R3264, S3264); 2] = [
                (reduce_sum_f32_f64, |a, x, _| a + f64::from(x)),
                (reduce_sumsq_f32_f64, |a, x, c| {
                    (f64::from(x) - c).mul_add(f64::from(x) - c, a)
                }),
            ];
            for row in [&xs, &with_nan] {
                for n in [1usize, 16, 31, 1000] {
                    let row = &row[..n];
                    // (a row to prefetch, or none: the results are the same)
                    let next32 = if n % 2 == 0 {
                        xs.as_ptr()
                    } else {
                        std::ptr::null()
                    };
                    let start: [f32; 16] = std::array::from_fn(|j| j as f32 - 3.0);
                    for (f, step) in steps32 {
                        let mut want = start;
                        for (i, &x) in row.iter().enumerate() {
                            want[i % 16] = step(want[i % 16], x, 1.5);
                        }
                        let mut got = start;
                        // SAFETY: a live row of `n` and an array of 16.
                        unsafe { f(row.as_ptr(), n as i64, 1.5, got.as_mut_ptr(), next32) };
                        assert_eq!(got.map(f32::to_bits), want.map(f32::to_bits), "n {n}");
                    }
                    let start64 = start.map(f64::from);
                    let row64: Vec<f64> = row.iter().map(|&x| f64::from(x) * 1.1).collect();
                    let next64 = if n % 2 == 0 {
                        row64.as_ptr()
                    } else {
                        std::ptr::null()
                    };
                    for (f, step) in steps64 {
                        let mut want = start64;
                        for (i, &x) in row64.iter().enumerate() {
                            want[i % 16] = step(want[i % 16], x, 1.5);
                        }
                        let mut got = start64;
                        // SAFETY: as above.
                        unsafe { f(row64.as_ptr(), n as i64, 1.5, got.as_mut_ptr(), next64) };
                        assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "n {n}");
                    }
                    {
                        let mut want = start64;
                        for (i, &x) in row.iter().enumerate() {
                            let d = x - 1.5f32;
                            want[i % 16] += f64::from(d * d);
                        }
                        let mut got = start64;
                        // SAFETY: as above.
                        unsafe {
                            reduce_sumsq_f32_widened(
                                row.as_ptr(),
                                n as i64,
                                1.5,
                                got.as_mut_ptr(),
                                next32,
                            )
                        };
                        assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "n {n}");
                    }
                    for (f, step) in steps3264 {
                        let mut want = start64;
                        for (i, &x) in row.iter().enumerate() {
                            want[i % 16] = step(want[i % 16], x, 1.5);
                        }
                        let mut got = start64;
                        // SAFETY: as above.
                        unsafe { f(row.as_ptr(), n as i64, 1.5, got.as_mut_ptr(), next32) };
                        assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "n {n}");
                    }
                }
            }
            // Rows whose extremes are signed zeros spread over every block
            // (and NaN in one late block): which zero each accumulator keeps
            // is the first one of its lane, whichever block holds it.
            for n in [
                48usize,
                64,
                1000,
                1024,
                2048 + 48 + 7,
                4096 + 16 + 5,
                8192 + 80 + 3,
            ] {
                let zeros = |sign: f32| -> Vec<f32> {
                    (0..n)
                        .map(|i| match (i * 7919) % 13 {
                            0..=3 => sign * 0.5 * (i % 5) as f32,
                            4..=7 => 0.0,
                            _ => -0.0,
                        })
                        .collect()
                };
                let below = zeros(-1.0);
                let above = zeros(1.0);
                let mut late_nan = below.clone();
                late_nan[n - n / 5] = f32::NAN;
                let (max, min) = (f32::NEG_INFINITY, f32::INFINITY);
                type Step = fn(f32, f32) -> f32;
                let cases: [(R32, Step, f32, &[f32]); 6] = [
                    (reduce_max_cached_f32, max32, max, &below),
                    (reduce_min_cached_f32, min32, min, &above),
                    (reduce_max_cached_f32, max32, max, &late_nan),
                    (reduce_max_f32, max32, max, &below),
                    (reduce_min_f32, min32, min, &above),
                    (reduce_max_f32, max32, max, &late_nan),
                ];
                for (f, step, from, row) in cases {
                    let start = [from; 16];
                    let mut want = start;
                    for (i, &x) in row.iter().enumerate() {
                        want[i % 16] = step(want[i % 16], x);
                    }
                    let mut got = start;
                    // SAFETY: a live row of `n` and an array of 16.
                    unsafe { f(row.as_ptr(), n as i64, 0.0, got.as_mut_ptr(), row.as_ptr()) };
                    assert_eq!(got.map(f32::to_bits), want.map(f32::to_bits), "n {n}");
                    let row64: Vec<f64> = row.iter().map(|&x| f64::from(x)).collect();
                    let (f64_, step64): (R64, fn(f64, f64) -> f64) = if from == max {
                        (reduce_max_cached_f64, max64)
                    } else {
                        (reduce_min_cached_f64, min64)
                    };
                    let start64 = start.map(f64::from);
                    let mut want = start64;
                    for (i, &x) in row64.iter().enumerate() {
                        want[i % 16] = step64(want[i % 16], x);
                    }
                    let mut got = start64;
                    // SAFETY: as above.
                    unsafe {
                        f64_(
                            row64.as_ptr(),
                            n as i64,
                            0.0,
                            got.as_mut_ptr(),
                            std::ptr::null(),
                        )
                    };
                    assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "n {n}");
                }
            }
            // A NaN accumulator (with a payload, or negative) stays NaN, the
            // canonical one as the step gives it, over rows with and without
            // a NaN of their own.
            let odd_nan = f32::from_bits(0xFFC0_1234);
            for row in [&xs, &with_nan] {
                for n in [5usize, 16, 1000] {
                    let row = &row[..n];
                    let mut start: [f32; 16] = std::array::from_fn(|j| j as f32 - 3.0);
                    start[3] = odd_nan;
                    start[7] = f32::NAN;
                    let row64: Vec<f64> = row.iter().map(|&x| f64::from(x)).collect();
                    let start64 = start.map(f64::from);
                    for (f, step) in [
                        (reduce_max_f32 as R32, max32 as fn(_, _) -> _),
                        (reduce_min_f32, min32),
                    ] {
                        assert_steps(f, step, row, start, f32::to_bits);
                    }
                    for (f, step) in [
                        (reduce_max_f64 as R64, max64 as fn(_, _) -> _),
                        (reduce_min_f64, min64),
                    ] {
                        assert_steps(f, step, &row64, start64, f64::to_bits);
                    }
                }
            }
            // The max and min: NaN wins, and -0 / +0 keep the earlier one.
            assert!(max32(1.0, f32::NAN).is_nan() && min32(f32::NAN, 1.0).is_nan());
            assert_eq!(max32(-0.0, 0.0).to_bits(), (-0.0f32).to_bits());
            assert_eq!(min32(0.0, -0.0).to_bits(), 0.0f32.to_bits());
        });
    }

    /// `f` over `row` from `start` against `step` applied one element at a
    /// time, bit for bit (`bits`).
    fn assert_steps<T: Copy, B: PartialEq + std::fmt::Debug>(
        f: unsafe extern "C" fn(*const T, i64, T, *mut T, *const T),
        step: fn(T, T) -> T,
        row: &[T],
        start: [T; 16],
        bits: fn(T) -> B,
    ) {
        let mut want = start;
        for (i, &x) in row.iter().enumerate() {
            want[i % 16] = step(want[i % 16], x);
        }
        let mut got = start;
        // SAFETY: a live row of its length and an array of 16; the shift is
        // unused by the extrema.
        unsafe {
            f(
                row.as_ptr(),
                row.len() as i64,
                start[0],
                got.as_mut_ptr(),
                std::ptr::null(),
            )
        };
        assert_eq!(got.map(bits), want.map(bits), "n {}", row.len());
    }
}
