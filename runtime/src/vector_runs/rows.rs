//! Row routines: a reduction phase's op over a whole row, `dst[i] = op(src[i] -
//! shift)`, with the values also summed into sixteen running sums, `sums[i % 16]
//! += dst[i]` in the row's order (`lazyfuse_codegen`'s phase runs: softmax's
//! `exp(x - max)` stored and summed in one pass).
//!
//! Sixteen sums because the kernel's own vector loop keeps sixteen: four
//! unrolled copies of a four-lane vector, so that position `i` of the row goes
//! to accumulator `i % 16` (`vreduce`'s copies and parts). Adding in that order
//! lane by lane gives the kernel's bits; the kernel reads the sixteen back and
//! combines them as before. `shift` is subtracted first (`0` where the kernel
//! stored the argument itself: `x - 0` is `x`, signed zeros included).
//!
//! Each also takes the kernel's `next` row of the input to prefetch while it
//! computes (null: none; `prefetch.rs`).

/// One row function per op and element type (see the module doc).
macro_rules! row_fn {
    ($name:ident, $($f:ident)::+, $t:ty $(, wide $($w:ident)::+)?) => {
        /// Writes `op(src[i] - shift)` to `dst[i]` for the `n` elements and adds
        /// each to `sums[i % 16]` (`n ≤ 0`: nothing; `sums` null: no sums),
        /// asking for the lines of the row at `next` as it goes (null: none);
        /// `dst == src` works in place.
        ///
        /// # Safety
        /// `src` must be valid for reads and `dst` for writes of `n` elements,
        /// both aligned, the same run or disjoint; `sums` null or valid for reads
        /// and writes of 16 elements apart from both; no one else writes them
        /// during the call (the JIT kernel passes its own output row, an input
        /// it does not write and a stack slot). `next` may be any address: it
        /// is only a hint.
        pub(crate) unsafe extern "C" fn $name(
            dst: *mut $t,
            src: *const $t,
            n: i64,
            shift: $t,
            sums: *mut $t,
            next: *const $t,
        ) {
            if n <= 0 {
                return;
            }
            let mut none = [0.0; 16];
            // SAFETY: the caller's contract above: valid runs of `n`, the same or
            // disjoint, and `sums` null or 16 valid elements apart from both.
            let (dst, src, sums) = unsafe {
                let (dst, src) = super::run_slices(dst, src, n as usize);
                let sums = if sums.is_null() {
                    &mut none
                } else {
                    &mut *sums.cast::<[$t; 16]>()
                };
                (dst, src, sums)
            };
            by_level!(fn apply(
                dst: &mut [$t],
                src: Option<&[$t]>,
                shift: $t,
                sums: &mut [$t; 16],
                next: *const $t,
            ) {
                use super::super::$($f)::+ as f;
                let mut acc = super::super::handover::sixteen(sums);
                let full = dst.len() - dst.len() % 16;
                for c in (0..full).step_by(16) {
                    super::super::prefetch::lines::<false, _>(next, c, 16);
                    let xs: [$t; 16] = match src {
                        Some(s) => s[c..c + 16].try_into().expect("16 elements"),
                        None => dst[c..c + 16].try_into().expect("16 elements"),
                    };
                    // (a plain loop: `array::from_fn` is not always inlined,
                    // and out of line it runs without the level's features)
                    let mut ys: [$t; 16] = [0.0; 16];
                    for (y, x) in ys.iter_mut().zip(xs) {
                        *y = f(x - shift);
                    }
                    dst[c..c + 16].copy_from_slice(&ys);
                    for (a, y) in acc.iter_mut().zip(ys) {
                        *a += y;
                    }
                }
                for i in full..dst.len() {
                    let x = src.map_or(dst[i], |s| s[i]);
                    let y = f(x - shift);
                    dst[i] = y;
                    acc[i % 16] += y;
                }
                *sums = acc;
            }, (dst, src, shift, sums, next) $(, avx512 super::$($w)::+)?)
        }
    };
}

row_fn!(row_exp, exp, f32, wide exp_scalef::row_f32);
row_fn!(row_tanh, tanh, f32);
row_fn!(row_sigmoid, sigmoid, f32);
row_fn!(row_silu, silu, f32);
row_fn!(row_log, log, f32);
row_fn!(row_gelu_tanh, gelu_tanh, f32);
row_fn!(row_log2, log2, f32);
row_fn!(row_log10, log10, f32);
row_fn!(row_expm1, activations::expm1, f32);
row_fn!(row_log1p, activations::log1p, f32);
row_fn!(row_softplus, activations::softplus, f32);
row_fn!(row_elu, activations::elu, f32);
row_fn!(row_mish, activations::mish, f32);
row_fn!(row_sin, trig::sin, f32);
row_fn!(row_cos, trig::cos, f32);
row_fn!(row_tan, trig::tan, f32);
row_fn!(row_atan, trig::atan, f32);
row_fn!(row_sinh, activations::sinh, f32);
row_fn!(row_cosh, activations::cosh, f32);
row_fn!(row_exp64, float64::exp, f64, wide exp_scalef::row_f64);
row_fn!(row_tanh64, float64::tanh, f64);
row_fn!(row_sigmoid64, float64::sigmoid, f64);
row_fn!(row_silu64, float64::silu, f64);
row_fn!(row_log64, float64::log, f64);
row_fn!(row_gelu_tanh64, float64::gelu_tanh, f64);

/// The row functions: symbol and address, for [`crate::jit_symbols`].
pub(super) fn symbols() -> [(&'static str, *const u8); 25] {
    [
        ("lf_row_sinh_f32", row_sinh as *const u8),
        ("lf_row_cosh_f32", row_cosh as *const u8),
        ("lf_row_atan_f32", row_atan as *const u8),
        ("lf_row_tan_f32", row_tan as *const u8),
        ("lf_row_sin_f32", row_sin as *const u8),
        ("lf_row_cos_f32", row_cos as *const u8),
        ("lf_row_expm1_f32", row_expm1 as *const u8),
        ("lf_row_log1p_f32", row_log1p as *const u8),
        ("lf_row_softplus_f32", row_softplus as *const u8),
        ("lf_row_elu_f32", row_elu as *const u8),
        ("lf_row_mish_f32", row_mish as *const u8),
        ("lf_row_log2_f32", row_log2 as *const u8),
        ("lf_row_log10_f32", row_log10 as *const u8),
        ("lf_row_gelu_tanh_f64", row_gelu_tanh64 as *const u8),
        ("lf_row_gelu_tanh_f32", row_gelu_tanh as *const u8),
        ("lf_row_exp_f64", row_exp64 as *const u8),
        ("lf_row_log_f64", row_log64 as *const u8),
        ("lf_row_tanh_f64", row_tanh64 as *const u8),
        ("lf_row_sigmoid_f64", row_sigmoid64 as *const u8),
        ("lf_row_silu_f64", row_silu64 as *const u8),
        ("lf_row_exp_f32", row_exp as *const u8),
        ("lf_row_log_f32", row_log as *const u8),
        ("lf_row_tanh_f32", row_tanh as *const u8),
        ("lf_row_sigmoid_f32", row_sigmoid as *const u8),
        ("lf_row_silu_f32", row_silu as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::{activations, erf_table, float64, trig};
    use super::*;

    /// Each level against the portable op and a plain sixteen-way sum: values,
    /// sums (bit for bit), in place and from a source, with and without shift,
    /// rows of lengths that are and are not multiples of 16.
    #[test]
    fn rows_match_the_op_and_the_sixteen_sums() {
        super::super::each_level(|| {
            let xs: Vec<f32> = (0..4133)
                .map(|i| ((i as f32) * 0.0137 - 20.0) * if i % 5 == 0 { -1.0 } else { 1.0 })
                .collect();
            type Row = unsafe extern "C" fn(*mut f32, *const f32, i64, f32, *mut f32, *const f32);
            for (row, f) in [
                (row_exp as Row, super::super::exp as fn(f32) -> f32),
                (row_tanh, super::super::tanh),
                (row_sigmoid, super::super::sigmoid),
                (row_silu, super::super::silu),
                (row_log, super::super::log),
                (erf_table::row_erf, erf_table::erf),
                (erf_table::row_gelu, erf_table::gelu),
                (row_gelu_tanh, super::super::gelu_tanh),
                (row_log2, super::super::log2),
                (row_log10, super::super::log10),
                (row_expm1, activations::expm1),
                (row_log1p, activations::log1p),
                (row_softplus, activations::softplus),
                (row_elu, activations::elu),
                (row_mish, activations::mish),
                (row_sin, trig::sin),
                (row_cos, trig::cos),
                (row_tan, trig::tan),
                (row_atan, trig::atan),
                (row_sinh, activations::sinh),
                (row_cosh, activations::cosh),
            ] {
                for n in [1usize, 15, 16, 17, 1024, 4133] {
                    for shift in [0.0f32, 3.25] {
                        let want: Vec<f32> = xs[..n].iter().map(|&x| f(x - shift)).collect();
                        let mut want_sums = [0.5f32; 16];
                        for (i, y) in want.iter().enumerate() {
                            want_sums[i % 16] += y;
                        }
                        let mut got = xs[..n].to_vec();
                        let mut into = vec![0.0f32; n];
                        let (mut s1, mut s2) = ([0.5f32; 16], [0.5f32; 16]);
                        // SAFETY: live Vecs of length `n` (the same one, or disjoint
                        // ones) and arrays of 16; the next rows are only hints (one
                        // runs past the Vec's end: a hint there reads nothing).
                        unsafe {
                            row(
                                got.as_mut_ptr(),
                                got.as_ptr(),
                                n as i64,
                                shift,
                                s1.as_mut_ptr(),
                                std::ptr::null(),
                            );
                            row(
                                into.as_mut_ptr(),
                                xs.as_ptr(),
                                n as i64,
                                shift,
                                s2.as_mut_ptr(),
                                xs.as_ptr().wrapping_add(n),
                            );
                        }
                        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(&got), bits(&want), "n {n} shift {shift}");
                        assert_eq!(bits(&into), bits(&want), "n {n} shift {shift}");
                        assert_eq!(bits(&s1), bits(&want_sums), "n {n} shift {shift}");
                        assert_eq!(bits(&s2), bits(&want_sums), "n {n} shift {shift}");
                        // (no sums)
                        let mut none = vec![0.0f32; n];
                        // SAFETY: as above, `sums` null.
                        unsafe {
                            row(
                                none.as_mut_ptr(),
                                xs.as_ptr(),
                                n as i64,
                                shift,
                                std::ptr::null_mut(),
                                std::ptr::null(),
                            )
                        };
                        assert_eq!(bits(&none), bits(&want));
                    }
                }
            }
        });
    }

    #[test]
    fn float64_rows_match_the_op_and_the_sixteen_sums() {
        super::super::each_level(|| {
            let xs: Vec<f64> = (0..2085).map(|i| (i as f64) * 0.041 - 40.0).collect();
            type Row = unsafe extern "C" fn(*mut f64, *const f64, i64, f64, *mut f64, *const f64);
            for (row, f) in [
                (row_exp64 as Row, float64::exp as fn(f64) -> f64),
                (row_tanh64, float64::tanh),
                (row_sigmoid64, float64::sigmoid),
                (row_silu64, float64::silu),
                (row_log64, float64::log),
                (row_gelu_tanh64, float64::gelu_tanh),
            ] {
                for n in [3usize, 16, 2085] {
                    let want: Vec<f64> = xs[..n].iter().map(|&x| f(x - 1.5)).collect();
                    let mut want_sums = [0.0f64; 16];
                    for (i, y) in want.iter().enumerate() {
                        want_sums[i % 16] += y;
                    }
                    let mut got = vec![0.0f64; n];
                    let mut sums = [0.0f64; 16];
                    // SAFETY: disjoint live Vecs of length `n` and an array of 16.
                    unsafe {
                        row(
                            got.as_mut_ptr(),
                            xs.as_ptr(),
                            n as i64,
                            1.5,
                            sums.as_mut_ptr(),
                            xs.as_ptr().wrapping_add(n),
                        )
                    };
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got), bits(&want), "n {n}");
                    assert_eq!(bits(&sums), bits(&want_sums), "n {n}");
                }
            }
        });
    }
}
