//! The exponential's AVX-512 runs (float32 and float64: the runs of `exp`,
//! softmax's rows of `exp(x - max)` and log-softmax's sums of them; float32:
//! the runs of the ops of the form `x / (1 + e^-y)`, sigmoid, SiLU and the
//! tanh-form GELU) with `exp`'s last step, the scaling by `2^n`, as one
//! `vscalefps`/`vscalefpd`.
//!
//! The portable `exp` scales `1 + p` by `2^n` in two normal factors
//! (`scale2`, so that neither factor overflows): `fma(p, 2^n1, 2^n1) * 2^n2`.
//! The first step computes `2^n1 (1 + p)` exactly and rounds it once; over
//! the clamped range that product stays normal, where scaling by a power of
//! two commutes with rounding, so it is `1 + p` rounded, times `2^n1`
//! exactly. The whole is therefore `1 + p` rounded, then scaled by
//! `2^(n1 + n2) = 2^n` with one rounding (to a subnormal, zero or infinity
//! where it lands there): what `vscalef` computes from `1 + p` and `n`, which
//! the reduction's shifter step already holds as a float. Six integer and
//! float steps of the vector become two; every lane keeps the portable
//! function's bits (the tests run each level against it), so a run taking
//! this path gives the inline code's values.
//!
//! A run's last few elements (fewer than a vector) go as one masked vector,
//! the same lanes' bits: a masked load reads, and faults on, no lane past the
//! run. One at a time, the portable `exp` made runs of a slice's short rows
//! (8 to 40 points) two to four times slower than the vectors. (A row's or a
//! sum's tail stays in the kernel, which hands the routines whole vectors.)

#[cfg(target_arch = "x86_64")]
pub(super) use wide::{
    row_f32, row_f32_of_codes, row_f64, run_f32, run_f64, run_gelu_tanh_f32, run_sigmoid_f32,
    run_silu_f32, sum_f32, sum_f64,
};

#[cfg(target_arch = "x86_64")]
mod wide {
    use super::super::prefetch;
    use super::super::{exp, float64, neg_ln2_split, taylor, EXP_RANGE, SHIFTER};
    use std::arch::x86_64::*;

    /// `exp` of sixteen float32 lanes (see the module doc).
    #[inline]
    #[target_feature(enable = "avx512f,fma,avx2")]
    fn exp16(x: __m512) -> __m512 {
        // `clamp`: `lo > x ? lo : x`, then `hi < x ? hi : x` (a NaN stays).
        let x = _mm512_max_ps(_mm512_set1_ps(EXP_RANGE.0), x);
        let x = _mm512_min_ps(_mm512_set1_ps(EXP_RANGE.1), x);
        let shifter = _mm512_set1_ps(SHIFTER);
        let log2e = _mm512_set1_ps(std::f64::consts::LOG2_E as f32);
        let nf = _mm512_sub_ps(_mm512_fmadd_ps(x, log2e, shifter), shifter);
        let (nhi, nlo) = neg_ln2_split();
        let r = _mm512_fmadd_ps(nf, _mm512_set1_ps(nhi), x);
        let r = _mm512_fmadd_ps(nf, _mm512_set1_ps(nlo), r);
        let cs = taylor();
        let mut q = _mm512_set1_ps(cs[6]);
        for &c in cs[..6].iter().rev() {
            q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(c));
        }
        let p = _mm512_mul_ps(r, q);
        _mm512_scalef_ps(_mm512_add_ps(p, _mm512_set1_ps(1.0)), nf)
    }

    /// `float64::exp` of eight float64 lanes (see the module doc).
    #[inline]
    #[target_feature(enable = "avx512f,fma,avx2")]
    fn exp8(x: __m512d) -> __m512d {
        let (lo, hi) = float64::EXP_RANGE;
        let x = _mm512_max_pd(_mm512_set1_pd(lo), x);
        let x = _mm512_min_pd(_mm512_set1_pd(hi), x);
        let shifter = _mm512_set1_pd(float64::SHIFTER);
        let log2e = _mm512_set1_pd(std::f64::consts::LOG2_E);
        let nf = _mm512_sub_pd(_mm512_fmadd_pd(x, log2e, shifter), shifter);
        let (ln2_hi, ln2_lo) = float64::ln2_split();
        let r = _mm512_fmadd_pd(nf, _mm512_set1_pd(-ln2_hi), x);
        let r = _mm512_fmadd_pd(nf, _mm512_set1_pd(-ln2_lo), r);
        let cs = float64::exp_taylor();
        let mut q = _mm512_set1_pd(cs[12]);
        for &c in cs[..12].iter().rev() {
            q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(c));
        }
        let p = _mm512_mul_pd(r, q);
        _mm512_scalef_pd(_mm512_add_pd(p, _mm512_set1_pd(1.0)), nf)
    }

    /// Where the run writes, where it reads (the same address in place: both
    /// pointers come from `dst`'s mutable borrow) and its length.
    fn ends<T>(dst: &mut [T], src: Option<&[T]>) -> (*mut T, *const T, usize) {
        let out = dst.as_mut_ptr();
        match src {
            Some(s) => (out, s.as_ptr(), dst.len().min(s.len())),
            None => (out, out.cast_const(), dst.len()),
        }
    }

    /// `dst[i] = op(src[i])` (in place where `src` is `None`) for an op of
    /// sixteen lanes, sixteen at a time, the last few as one masked vector.
    ///
    /// # Safety
    /// The processor has AVX-512F, AVX2 and FMA.
    #[inline]
    #[target_feature(enable = "avx512f,fma,avx2")]
    unsafe fn run16(dst: &mut [f32], src: Option<&[f32]>, op: impl Fn(__m512) -> __m512) {
        let (out, from, n) = ends(dst, src);
        let full = n - n % 16;
        for c in (0..full).step_by(16) {
            prefetch::ahead(src, c);
            // SAFETY: `c + 16 <= n`, within both runs; a source that is the
            // destination is read before its lanes are written.
            unsafe {
                let y = op(_mm512_loadu_ps(from.add(c)));
                _mm512_storeu_ps(out.add(c), y);
            }
        }
        if full < n {
            // The tail as one masked vector: the lanes past `n` are neither
            // read (a masked load does not fault on them) nor written.
            let m: __mmask16 = (1u16 << (n - full)) - 1;
            // SAFETY: the mask keeps the `n - full` lanes inside both runs.
            unsafe {
                let y = op(_mm512_maskz_loadu_ps(m, from.add(full)));
                _mm512_mask_storeu_ps(out.add(full), m, y);
            }
        }
    }

    /// `-x` of sixteen lanes: the sign bit flipped, as Rust's negation.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn neg16(x: __m512) -> __m512 {
        let sign = _mm512_set1_epi32(i32::MIN);
        _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), sign))
    }

    /// `x / (1 + e^-y)` of sixteen lanes (`super::one_plus_exp_neg`'s
    /// steps): `num` 1 for the sigmoid, `x` for SiLU and the tanh-form GELU.
    #[inline]
    #[target_feature(enable = "avx512f,fma,avx2")]
    fn over_one_plus_exp_neg(num: __m512, y: __m512) -> __m512 {
        let one = _mm512_set1_ps(1.0);
        _mm512_div_ps(num, _mm512_add_ps(one, exp16(neg16(y))))
    }

    /// `dst[i] = exp(src[i])` (in place where `src` is `None`), sixteen
    /// lanes at a time, the last few as one masked vector.
    ///
    /// # Safety
    /// The processor has AVX-512F, AVX2 and FMA.
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(crate) unsafe fn run_f32(dst: &mut [f32], src: Option<&[f32]>) {
        // SAFETY: the caller's contract.
        unsafe { run16(dst, src, |x| exp16(x)) }
    }

    /// `super::sigmoid` of each element, [`run_f32`]'s way.
    ///
    /// # Safety
    /// As [`run_f32`].
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(crate) unsafe fn run_sigmoid_f32(dst: &mut [f32], src: Option<&[f32]>) {
        // SAFETY: the caller's contract.
        unsafe { run16(dst, src, |x| over_one_plus_exp_neg(_mm512_set1_ps(1.0), x)) }
    }

    /// `super::silu` of each element, [`run_f32`]'s way.
    ///
    /// # Safety
    /// As [`run_f32`].
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(crate) unsafe fn run_silu_f32(dst: &mut [f32], src: Option<&[f32]>) {
        // SAFETY: the caller's contract.
        unsafe { run16(dst, src, |x| over_one_plus_exp_neg(x, x)) }
    }

    /// `super::gelu_tanh` of each element, [`run_f32`]'s way: the inner
    /// polynomial's products and sums in its order (none fused).
    ///
    /// # Safety
    /// As [`run_f32`].
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(crate) unsafe fn run_gelu_tanh_f32(dst: &mut [f32], src: Option<&[f32]>) {
        let (beta, cubic) = super::super::gelu_tanh_coefficients();
        // SAFETY: the caller's contract.
        unsafe {
            run16(dst, src, |x| {
                let cube = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
                let sum = _mm512_add_ps(x, _mm512_mul_ps(_mm512_set1_ps(cubic), cube));
                let inner = _mm512_mul_ps(_mm512_set1_ps(beta), sum);
                over_one_plus_exp_neg(x, _mm512_add_ps(inner, inner))
            })
        }
    }

    /// [`run_f32`] for float64, eight lanes at a time.
    ///
    /// # Safety
    /// As [`run_f32`].
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(crate) unsafe fn run_f64(dst: &mut [f64], src: Option<&[f64]>) {
        let (out, from, n) = ends(dst, src);
        let full = n - n % 8;
        for c in (0..full).step_by(8) {
            prefetch::ahead(src, c);
            // SAFETY: as in `run_f32`, eight lanes.
            unsafe {
                let y = exp8(_mm512_loadu_pd(from.add(c)));
                _mm512_storeu_pd(out.add(c), y);
            }
        }
        if full < n {
            // (as in `run_f32`)
            let m: __mmask8 = (1u8 << (n - full)) - 1;
            // SAFETY: the mask keeps the `n - full` lanes inside both runs.
            unsafe {
                let y = exp8(_mm512_maskz_loadu_pd(m, from.add(full)));
                _mm512_mask_storeu_pd(out.add(full), m, y);
            }
        }
    }

    /// The row routine's work (`rows.rs`): `dst[i] = exp(src[i] - shift)`,
    /// each added to `sums[i % 16]` in the row's order, the next row's lines
    /// asked for as it goes; sixteen lanes at a time (the sums one vector),
    /// the tail by the portable `exp`.
    ///
    /// # Safety
    /// As [`run_f32`].
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(crate) unsafe fn row_f32(
        dst: &mut [f32],
        src: Option<&[f32]>,
        shift: f32,
        sums: &mut [f32; 16],
        next: *const f32,
    ) {
        let (out, from, n) = ends(dst, src);
        // SAFETY: `out` and `from` hold `n` float32 (`ends`); a source that is
        // the destination is read before its lanes are written.
        unsafe {
            row16(
                out,
                n,
                shift,
                sums,
                next,
                |c| _mm512_loadu_ps(from.add(c)),
                |i| *from.add(i),
            )
        }
    }

    /// [`row_f32`] over a float16 or bfloat16 row (`bf`), its codes widened
    /// in registers (exactly, so the same bits as the widened row's); `dst`
    /// as long as `src`.
    ///
    /// # Safety
    /// As [`run_f32`].
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(crate) unsafe fn row_f32_of_codes(
        dst: &mut [f32],
        src: &[u16],
        bf: bool,
        shift: f32,
        sums: &mut [f32; 16],
        next: *const u16,
    ) {
        let n = dst.len().min(src.len());
        let from = src.as_ptr();
        // SAFETY: `src` and `dst` hold `n` elements each.
        unsafe {
            row16(
                dst.as_mut_ptr(),
                n,
                shift,
                sums,
                next,
                |c| super::super::half_hw::widen16(from.add(c), bf),
                |i| super::super::widen::widen_code(*from.add(i), bf),
            )
        }
    }

    /// The loop of [`row_f32`]: `n` values, sixteen by `load(c)` (`c` a
    /// multiple of 16 with `c + 16 <= n`) and the rest by `at(i)`, `exp(x -
    /// shift)` of each stored at `out` and summed.
    ///
    /// # Safety
    /// `out` valid for writes of `n` float32; `load` and `at` read only the
    /// source's elements at the positions they are given, each before its
    /// lanes of `out` are written.
    #[inline]
    #[target_feature(enable = "avx512f,fma,avx2")]
    unsafe fn row16<T>(
        out: *mut f32,
        n: usize,
        shift: f32,
        sums: &mut [f32; 16],
        next: *const T,
        load: impl Fn(usize) -> __m512,
        at: impl Fn(usize) -> f32,
    ) {
        let full = n - n % 16;
        let by = _mm512_set1_ps(shift);
        let mut acc = super::super::handover::sixteen_ps(sums);
        for c in (0..full).step_by(16) {
            prefetch::lines::<false, _>(next, c, 16);
            let y = exp16(_mm512_sub_ps(load(c), by));
            // SAFETY: `c + 16 <= n` lanes of `out`.
            unsafe { _mm512_storeu_ps(out.add(c), y) };
            acc = _mm512_add_ps(acc, y);
        }
        // SAFETY: as above.
        unsafe { _mm512_storeu_ps(sums.as_mut_ptr(), acc) };
        for i in full..n {
            let y = exp(at(i) - shift);
            // SAFETY: `i < n`.
            unsafe { *out.add(i) = y };
            sums[i % 16] += y;
        }
    }

    /// [`row_f32`] for float64: each sixteen elements as two vectors of
    /// eight, the sums two vectors.
    ///
    /// # Safety
    /// As [`run_f32`].
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(crate) unsafe fn row_f64(
        dst: &mut [f64],
        src: Option<&[f64]>,
        shift: f64,
        sums: &mut [f64; 16],
        next: *const f64,
    ) {
        let (out, from, n) = ends(dst, src);
        let full = n - n % 16;
        let by = _mm512_set1_pd(shift);
        let (mut lo, mut hi) = super::super::handover::sixteen_pd(sums);
        for c in (0..full).step_by(16) {
            prefetch::lines::<false, _>(next, c, 16);
            // SAFETY: as in `run_f32`, sixteen lanes as two vectors.
            unsafe {
                let y0 = exp8(_mm512_sub_pd(_mm512_loadu_pd(from.add(c)), by));
                let y1 = exp8(_mm512_sub_pd(_mm512_loadu_pd(from.add(c + 8)), by));
                _mm512_storeu_pd(out.add(c), y0);
                _mm512_storeu_pd(out.add(c + 8), y1);
                lo = _mm512_add_pd(lo, y0);
                hi = _mm512_add_pd(hi, y1);
            }
        }
        // SAFETY: as above.
        unsafe {
            _mm512_storeu_pd(sums.as_mut_ptr(), lo);
            _mm512_storeu_pd(sums.as_mut_ptr().add(8), hi);
        }
        for i in full..n {
            let y = float64::exp(src.map_or(dst[i], |s| s[i]) - shift);
            dst[i] = y;
            sums[i % 16] += y;
        }
    }

    /// The sum-of-exps reduction's work (`reductions.rs`, a log-softmax's
    /// `sum(exp(x - max))`): `sums[i % 16] += exp(src[i] - shift)` in the
    /// row's order, a block of the row at a time with the next row's matching
    /// block asked for first (`prefetch::blocks`), sixteen lanes at a time
    /// (the sums one vector), a block's last few by the portable `exp`.
    ///
    /// # Safety
    /// As [`run_f32`].
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(crate) unsafe fn sum_f32(src: &[f32], shift: f32, sums: &mut [f32; 16], next: *const f32) {
        let by = _mm512_set1_ps(shift);
        let mut acc = super::super::handover::sixteen_ps(sums);
        for r in prefetch::blocks(src.len(), next) {
            // (blocks start at multiples of 16: lane `i % 16` is position `i`'s)
            let block = &src[r];
            let full = block.len() - block.len() % 16;
            for c in (0..full).step_by(16) {
                // SAFETY: `c + 16 <= block.len()`.
                let x = unsafe { _mm512_loadu_ps(block.as_ptr().add(c)) };
                acc = _mm512_add_ps(acc, exp16(_mm512_sub_ps(x, by)));
            }
            if full < block.len() {
                let mut lanes = [0.0f32; 16];
                // SAFETY: `lanes` holds sixteen float32.
                unsafe { _mm512_storeu_ps(lanes.as_mut_ptr(), acc) };
                for (a, &x) in lanes.iter_mut().zip(&block[full..]) {
                    *a += exp(x - shift);
                }
                // SAFETY: as above.
                acc = unsafe { _mm512_loadu_ps(lanes.as_ptr()) };
            }
        }
        // SAFETY: as above.
        unsafe { _mm512_storeu_ps(sums.as_mut_ptr(), acc) };
    }

    /// [`sum_f32`] for float64: each sixteen elements as two vectors of
    /// eight, the sums two vectors.
    ///
    /// # Safety
    /// As [`run_f32`].
    #[target_feature(enable = "avx512f,fma,avx2")]
    pub(crate) unsafe fn sum_f64(src: &[f64], shift: f64, sums: &mut [f64; 16], next: *const f64) {
        let by = _mm512_set1_pd(shift);
        let mut lanes = super::super::handover::sixteen(sums);
        for r in prefetch::blocks(src.len(), next) {
            let block = &src[r];
            let full = block.len() - block.len() % 16;
            // SAFETY: `lanes` holds sixteen float64.
            let (mut lo, mut hi) = unsafe {
                (
                    _mm512_loadu_pd(lanes.as_ptr()),
                    _mm512_loadu_pd(lanes.as_ptr().add(8)),
                )
            };
            for c in (0..full).step_by(16) {
                // SAFETY: `c + 16 <= block.len()`.
                let (x0, x1) = unsafe {
                    (
                        _mm512_loadu_pd(block.as_ptr().add(c)),
                        _mm512_loadu_pd(block.as_ptr().add(c + 8)),
                    )
                };
                lo = _mm512_add_pd(lo, exp8(_mm512_sub_pd(x0, by)));
                hi = _mm512_add_pd(hi, exp8(_mm512_sub_pd(x1, by)));
            }
            // SAFETY: as above.
            unsafe {
                _mm512_storeu_pd(lanes.as_mut_ptr(), lo);
                _mm512_storeu_pd(lanes.as_mut_ptr().add(8), hi);
            }
            for (a, &x) in lanes.iter_mut().zip(&block[full..]) {
                *a += float64::exp(x - shift);
            }
        }
        *sums = lanes;
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::super::{exp, float64, level};
    use super::*;

    #[test]
    fn float32_runs_and_rows_give_exps_bits() {
        if level() != 3 {
            return;
        }
        // every 1021st float32 pattern (`EXP_SCALEF_STEP=1`: all of them), both
        // ends, the zeros and infinities, in blocks
        let step = std::env::var("EXP_SCALEF_STEP").map_or(1021, |s| s.parse().unwrap());
        let patterns = (0..=u32::MAX).step_by(step).chain([
            0,
            0x8000_0000,
            0x7F80_0000,
            0xFF80_0000,
            u32::MAX,
        ]);
        let mut block = Vec::with_capacity(1 << 16);
        let mut some = Vec::new();
        for bits in patterns {
            block.push(f32::from_bits(bits));
            if block.len() == block.capacity() || bits == u32::MAX {
                let mut got = block.clone();
                // SAFETY: level 3 was checked above.
                unsafe { run_f32(&mut got, None) };
                for (x, y) in block.iter().zip(&got) {
                    assert_eq!(
                        y.to_bits(),
                        exp(*x).to_bits(),
                        "exp({x:e}) {:#x}",
                        x.to_bits()
                    );
                }
                some.extend(block.iter().filter(|x| x.abs() < 200.0).take(64));
                block.clear();
            }
        }
        // rows: shifted, summed sixteen ways, into another run
        let xs = some;
        let mut got = vec![0.0f32; xs.len()];
        let mut sums = [0.25f32; 16];
        // SAFETY: as above; a null next row asks for nothing.
        unsafe { row_f32(&mut got, Some(&xs), 1.5, &mut sums, std::ptr::null()) };
        let mut want_sums = [0.25f32; 16];
        for (i, (x, y)) in xs.iter().zip(&got).enumerate() {
            let want = exp(x - 1.5);
            assert_eq!(y.to_bits(), want.to_bits(), "row exp({x:e} - 1.5)");
            want_sums[i % 16] += want;
        }
        assert_eq!(sums.map(f32::to_bits), want_sums.map(f32::to_bits));
        // the sums alone, over blocks of the row (a next row asked for)
        let mut sums = [0.25f32; 16];
        // SAFETY: as above.
        unsafe { sum_f32(&xs, 1.5, &mut sums, xs.as_ptr()) };
        assert_eq!(sums.map(f32::to_bits), want_sums.map(f32::to_bits));
    }

    #[test]
    fn float64_runs_and_rows_give_exps_bits() {
        if level() != 3 {
            return;
        }
        let xs: Vec<f64> = (0..=u64::MAX)
            .step_by((u64::MAX / 40_009) as usize)
            .chain([0, 1 << 63, 0x7FF0 << 48, 0xFFF0 << 48, u64::MAX])
            .map(f64::from_bits)
            .chain((0..20_000).map(|i| (i as f64) * 0.0731 - 745.5))
            .collect();
        let mut got = xs.clone();
        // SAFETY: level 3 was checked above.
        unsafe { run_f64(&mut got, None) };
        for (x, y) in xs.iter().zip(&got) {
            assert_eq!(y.to_bits(), float64::exp(*x).to_bits(), "exp({x:e})");
        }
        let xs: Vec<f64> = xs.iter().copied().filter(|x| x.abs() < 800.0).collect();
        let mut got = xs.clone();
        let mut sums = [0.5f64; 16];
        // SAFETY: as above, in place.
        unsafe { row_f64(&mut got, None, -2.25, &mut sums, xs.as_ptr()) };
        let mut want_sums = [0.5f64; 16];
        for (i, (x, y)) in xs.iter().zip(&got).enumerate() {
            let want = float64::exp(x + 2.25);
            assert_eq!(y.to_bits(), want.to_bits(), "row exp({x:e} + 2.25)");
            want_sums[i % 16] += want;
        }
        assert_eq!(sums.map(f64::to_bits), want_sums.map(f64::to_bits));
        let mut sums = [0.5f64; 16];
        // SAFETY: as above.
        unsafe { sum_f64(&xs, -2.25, &mut sums, std::ptr::null()) };
        assert_eq!(sums.map(f64::to_bits), want_sums.map(f64::to_bits));
    }
}
