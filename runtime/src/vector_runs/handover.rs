//! The sixteen accumulators a kernel hands a routine: read element by
//! element, never by one wide load.
//!
//! A reduction kernel stores its sixteen running accumulators into a stack
//! slot with 128-bit stores just before it calls a routine
//! (`lazyfuse_codegen`'s `through_sixteen`). A load wider than one of those
//! stores spans several, and a load that spans several stores cannot take its
//! data from the store buffer: it waits until they reach the cache, behind
//! every older store (a float16 softmax row's streamed output: the max
//! routine's first load took a fifth of W4_f16's time). A load inside one
//! store is forwarded at once, so the routines read the accumulators one
//! element at a time (volatile, so the compiler does not merge the loads back
//! into one wide load) and build their vectors in registers.

/// The sixteen accumulators at `accs`, read one element at a time.
#[inline(always)]
pub(super) fn sixteen<T: Copy>(accs: &[T; 16]) -> [T; 16] {
    // SAFETY: each `&accs[i]` is a valid, aligned `T`.
    std::array::from_fn(|i| unsafe { std::ptr::read_volatile(&accs[i]) })
}

#[cfg(target_arch = "x86_64")]
pub(super) use wide::{sixteen_pd, sixteen_ps};

#[cfg(target_arch = "x86_64")]
mod wide {
    use std::arch::x86_64::*;

    /// The sixteen float32 accumulators at `accs` in one vector ([`sixteen`]).
    ///
    /// [`sixteen`]: super::sixteen
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(in crate::vector_runs) fn sixteen_ps(accs: &[f32; 16]) -> __m512 {
        let a = super::sixteen(accs);
        _mm512_setr_ps(
            a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
            a[14], a[15],
        )
    }

    /// The sixteen float64 accumulators at `accs` in two vectors, the first
    /// eight and the last ([`sixteen`]).
    ///
    /// [`sixteen`]: super::sixteen
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(in crate::vector_runs) fn sixteen_pd(accs: &[f64; 16]) -> (__m512d, __m512d) {
        let a = super::sixteen(accs);
        (
            _mm512_setr_pd(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]),
            _mm512_setr_pd(a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]),
        )
    }
}

#[cfg(test)]
mod tests {
    /// The accumulators come back in order, NaN payloads and signed zeros
    /// included, in the vector forms too.
    #[test]
    fn sixteen_reads_every_accumulator_in_order() {
        let f: [f32; 16] = std::array::from_fn(|i| match i {
            3 => -0.0,
            7 => f32::from_bits(0x7fc0_1234),
            _ => i as f32 * 1.5 - 4.0,
        });
        let d: [f64; 16] = std::array::from_fn(|i| f64::from(f[i]) * 3.0);
        let bits32 = |a: [f32; 16]| a.map(f32::to_bits);
        let bits64 = |a: [f64; 16]| a.map(f64::to_bits);
        assert_eq!(bits32(super::sixteen(&f)), bits32(f));
        assert_eq!(bits64(super::sixteen(&d)), bits64(d));
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            use std::arch::x86_64::*;
            let mut out = [0f32; 16];
            let mut lo = [0f64; 8];
            let mut hi = [0f64; 8];
            // SAFETY: the processor has AVX-512F; the arrays hold the lanes.
            unsafe {
                _mm512_storeu_ps(out.as_mut_ptr(), super::sixteen_ps(&f));
                let (l, h) = super::sixteen_pd(&d);
                _mm512_storeu_pd(lo.as_mut_ptr(), l);
                _mm512_storeu_pd(hi.as_mut_ptr(), h);
            }
            assert_eq!(bits32(out), bits32(f));
            assert_eq!(lo.map(f64::to_bits), bits64(d)[..8]);
            assert_eq!(hi.map(f64::to_bits), bits64(d)[8..]);
        }
    }
}
