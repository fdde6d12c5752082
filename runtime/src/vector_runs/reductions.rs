//! Reduction runs: a reduction phase whose only work is one reduction of a
//! contiguous row (`lazyfuse_codegen`'s reduction runs: softmax's max, a
//! layer norm's mean and squared deviations) over sixteen running
//! accumulators, `acc[i % 16] = step(acc[i % 16], src[i])` in the row's order.
//!
//! Sixteen because the kernel's own vector loop keeps sixteen (four unrolled
//! copies of four lanes; see `rows.rs`): stepping each in that order gives the
//! kernel's bits, and the kernel reads them back and combines them as before.
//! Each step is the vector loop's, operation for operation: the max and min of
//! `vbinary` (`a < b ? b : a`, NaN if either is NaN), adds, lane-exact float32
//! → float64 widening, and the squared deviation `d * d + acc` as the one fused
//! multiply-add the loop contracts it to (or, squared in float32 and widened,
//! as a product and an add).
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

/// One reduction function per step: `$s` the row's element type, `$a` the
/// accumulators', `$c` the shift's (the accumulators' unless given), `$step`
/// the step `(acc, x, shift) -> acc`.
macro_rules! reduce_fn {
    ($name:ident, $s:ty, $a:ty, $step:expr) => {
        reduce_fn!($name, $s, $a, $a, $step);
    };
    ($name:ident, $s:ty, $a:ty, $c:ty, $step:expr) => {
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
            if n <= 0 {
                return;
            }
            // SAFETY: the caller's contract above.
            let (src, accs) = unsafe {
                (
                    std::slice::from_raw_parts(src, n as usize),
                    &mut *accs.cast::<[$a; 16]>(),
                )
            };
            by_level!(
                fn apply(src: &[$s], shift: $c, accs: &mut [$a; 16], next: *const $s) {
                    // (the steps name this module's max and min)
                    #[allow(unused_imports)]
                    use super::*;
                    let step: fn($a, $s, $c) -> $a = $step;
                    let mut acc = *accs;
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
            )
        }
    };
}

reduce_fn!(reduce_max_f32, f32, f32, |a, x, _| max32(a, x));
reduce_fn!(reduce_min_f32, f32, f32, |a, x, _| min32(a, x));
reduce_fn!(reduce_sum_f32, f32, f32, |a, x, _| a + x);
reduce_fn!(reduce_max_f64, f64, f64, |a, x, _| max64(a, x));
reduce_fn!(reduce_min_f64, f64, f64, |a, x, _| min64(a, x));
reduce_fn!(reduce_sum_f64, f64, f64, |a, x, _| a + x);
reduce_fn!(reduce_sum_f32_f64, f32, f64, |a, x, _| a + f64::from(x));
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
pub(super) fn symbols() -> [(&'static str, *const u8); 11] {
    [
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
            let steps32: [(R32, S32); 4] = [
                (reduce_max_f32, |a, x, _| max32(a, x)),
                (reduce_min_f32, |a, x, _| min32(a, x)),
                (reduce_sum_f32, |a, x, _| a + x),
                (reduce_sumsq_f32, |a, x, c| (x - c).mul_add(x - c, a)),
            ];
            let steps64: [(R64, S64); 4] = [
                (reduce_max_f64, |a, x, _| max64(a, x)),
                (reduce_min_f64, |a, x, _| min64(a, x)),
                (reduce_sum_f64, |a, x, _| a + x),
                (reduce_sumsq_f64, |a, x, c| (x - c).mul_add(x - c, a)),
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
            // The max and min: NaN wins, and -0 / +0 keep the earlier one.
            assert!(max32(1.0, f32::NAN).is_nan() && min32(f32::NAN, 1.0).is_nan());
            assert_eq!(max32(-0.0, 0.0).to_bits(), (-0.0f32).to_bits());
            assert_eq!(min32(0.0, -0.0).to_bits(), 0.0f32.to_bits());
        });
    }
}
