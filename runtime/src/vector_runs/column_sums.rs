//! Column sums: a block of `cols` consecutive columns of a strided matrix
//! summed down its `rows` rows into float64 accumulators, for the column
//! chunks of `lazyfuse_codegen`'s column reductions (`x.sum(0)`, a bias
//! gradient) in fast math.
//!
//! `lf_column_sum_<f32|f64>(acc, src, row_stride, rows, cols)`: row `r`
//! starts `r · row_stride` bytes past `src`; `acc[c]` (float64) gets column
//! `c`'s sum added. Rows go in groups of `lazyfuse_ir::fast_math::
//! COLUMN_SUM_ROWS`: a float32 group is summed in float32 in row order and
//! its sum widened and added; float64 rows are added one by one, and so are
//! the float32 rows of `lf_column_sum_widened_f32` (a kernel that widens
//! each value before it sums, as a mean does), each widened. The rows after
//! the last whole group are each widened and added. That is the
//! chunk's own arithmetic, lane for lane, so the accumulators get its bits.
//!
//! The whole groups of whole 16-column blocks run as explicit AVX-512 or AVX2
//! code (the compiler's own vectors of the scalar loops kept the group's
//! partial sums on the stack), the rest as scalar code; each column still
//! takes its rows in order.

use lazyfuse_ir::fast_math::COLUMN_SUM_ROWS as GROUP;

/// One element type's arithmetic: how a group's rows reach the accumulator.
trait Element: Copy {
    /// `acc + (x₀ + x₁ + …)` for float32 (the group summed in float32, then
    /// widened); `((acc + x₀) + x₁) + …` for float64.
    fn add_group(acc: f64, xs: impl Iterator<Item = Self>) -> f64;
    /// `acc + x`, widened.
    fn add_one(acc: f64, x: Self) -> f64;
}

impl Element for f32 {
    fn add_group(acc: f64, mut xs: impl Iterator<Item = f32>) -> f64 {
        let first = xs.next().expect("a group has rows");
        acc + f64::from(xs.fold(first, |p, x| p + x))
    }
    fn add_one(acc: f64, x: f32) -> f64 {
        acc + f64::from(x)
    }
}

/// A float32 value that the kernel widens before it sums it.
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Widened(f32);

impl Element for Widened {
    fn add_group(acc: f64, xs: impl Iterator<Item = Widened>) -> f64 {
        xs.fold(acc, |a, x| a + f64::from(x.0))
    }
    fn add_one(acc: f64, x: Widened) -> f64 {
        acc + f64::from(x.0)
    }
}

impl Element for f64 {
    fn add_group(acc: f64, xs: impl Iterator<Item = f64>) -> f64 {
        xs.fold(acc, |a, x| a + x)
    }
    fn add_one(acc: f64, x: f64) -> f64 {
        acc + x
    }
}

/// The scalar steps: whole groups of the columns from `from` on, then the
/// rows after the last whole group for every column.
///
/// # Safety
/// As the column-sum functions': `acc` holds `acc.len()` columns apart from
/// the rows, each of the `rows` rows that many readable elements.
unsafe fn scalar<T: Element>(
    acc: &mut [f64],
    src: *const u8,
    row_stride: isize,
    rows: usize,
    from: usize,
) {
    // SAFETY: the caller's contract: row `r < rows`, column `c < acc.len()`.
    let at = |r: usize, c: usize| unsafe {
        src.offset(r as isize * row_stride)
            .cast::<T>()
            .add(c)
            .read()
    };
    let whole = rows - rows % GROUP;
    for (c, a) in acc.iter_mut().enumerate().skip(from) {
        for g in (0..whole).step_by(GROUP) {
            *a = T::add_group(*a, (g..g + GROUP).map(|r| at(r, c)));
        }
    }
    for r in whole..rows {
        for (c, a) in acc.iter_mut().enumerate() {
            *a = T::add_one(*a, at(r, c));
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod wide {
    //! The whole groups of whole 16-column blocks, 16 (AVX-512) or 8 (AVX2)
    //! lanes at a time.
    use super::GROUP;
    use std::arch::x86_64::*;

    /// Row `r` of the matrix from column `c` on.
    ///
    /// # Safety
    /// Row `r` must exist (it is read only where its elements are).
    #[inline(always)]
    unsafe fn row<T>(src: *const u8, row_stride: isize, r: usize, c: usize) -> *const T {
        // SAFETY: the caller's contract: an address inside row `r`.
        unsafe { src.offset(r as isize * row_stride).cast::<T>().add(c) }
    }

    /// Float32 groups with AVX-512: sixteen columns summed over the group in
    /// float32 lanes, widened in two halves and added to their accumulators.
    ///
    /// # Safety
    /// The column-sum contract for `blocks · 16` columns and `groups ·
    /// GROUP` rows; AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn f32_512(
        acc: *mut f64,
        src: *const u8,
        stride: isize,
        groups: usize,
        blocks: usize,
    ) {
        for g in (0..groups * GROUP).step_by(GROUP) {
            for c in (0..blocks * 16).step_by(16) {
                // SAFETY: rows g..g + GROUP and columns c..c + 16 lie in the
                // matrix, the accumulators c..c + 16 in `acc`.
                unsafe {
                    let mut p = _mm512_loadu_ps(row(src, stride, g, c));
                    for r in g + 1..g + GROUP {
                        p = _mm512_add_ps(p, _mm512_loadu_ps(row(src, stride, r, c)));
                    }
                    let lo = _mm512_cvtps_pd(_mm512_castps512_ps256(p));
                    let hi = _mm512_extractf64x4_pd::<1>(_mm512_castps_pd(p));
                    let hi = _mm512_cvtps_pd(_mm256_castpd_ps(hi));
                    let a = acc.add(c);
                    _mm512_storeu_pd(a, _mm512_add_pd(_mm512_loadu_pd(a), lo));
                    _mm512_storeu_pd(a.add(8), _mm512_add_pd(_mm512_loadu_pd(a.add(8)), hi));
                }
            }
        }
    }

    /// Float32 groups with AVX2: eight columns at a time.
    ///
    /// # Safety
    /// As [`f32_512`]'s, with AVX.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn f32_256(
        acc: *mut f64,
        src: *const u8,
        stride: isize,
        groups: usize,
        blocks: usize,
    ) {
        for g in (0..groups * GROUP).step_by(GROUP) {
            for c in (0..blocks * 16).step_by(8) {
                // SAFETY: as in `f32_512`.
                unsafe {
                    let mut p = _mm256_loadu_ps(row(src, stride, g, c));
                    for r in g + 1..g + GROUP {
                        p = _mm256_add_ps(p, _mm256_loadu_ps(row(src, stride, r, c)));
                    }
                    let lo = _mm256_cvtps_pd(_mm256_castps256_ps128(p));
                    let hi = _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(p));
                    let a = acc.add(c);
                    _mm256_storeu_pd(a, _mm256_add_pd(_mm256_loadu_pd(a), lo));
                    _mm256_storeu_pd(a.add(4), _mm256_add_pd(_mm256_loadu_pd(a.add(4)), hi));
                }
            }
        }
    }

    /// The row-by-row functions (float64, and float32 widened first): the
    /// accumulators of one vector of columns held in a register over the
    /// group's rows, each row's values loaded (and widened) and added.
    macro_rules! row_by_row_fn {
        ($name:ident, $feature:literal, $lanes:expr, $load_acc:ident, $add:ident, $store:ident,
         |$p:ident| $load:expr, $what:literal) => {
            #[doc = $what]
            ///
            /// # Safety
            /// As [`f32_512`]'s, with the function's features.
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn $name(
                acc: *mut f64,
                src: *const u8,
                stride: isize,
                groups: usize,
                blocks: usize,
            ) {
                for g in (0..groups * GROUP).step_by(GROUP) {
                    for c in (0..blocks * 16).step_by($lanes) {
                        // SAFETY: as in `f32_512`.
                        unsafe {
                            let a = acc.add(c);
                            let mut s = $load_acc(a);
                            for r in g..g + GROUP {
                                let $p = row(src, stride, r, c);
                                s = $add(s, $load);
                            }
                            $store(a, s);
                        }
                    }
                }
            }
        };
    }

    row_by_row_fn!(
        f64_512,
        "avx512f",
        8,
        _mm512_loadu_pd,
        _mm512_add_pd,
        _mm512_storeu_pd,
        |p| _mm512_loadu_pd(p),
        "Float64 groups with AVX-512, eight columns at a time."
    );
    row_by_row_fn!(
        widened_512,
        "avx512f",
        8,
        _mm512_loadu_pd,
        _mm512_add_pd,
        _mm512_storeu_pd,
        |p| _mm512_cvtps_pd(_mm256_loadu_ps(p)),
        "Widened float32 groups with AVX-512."
    );
    row_by_row_fn!(
        f64_256,
        "avx2",
        4,
        _mm256_loadu_pd,
        _mm256_add_pd,
        _mm256_storeu_pd,
        |p| _mm256_loadu_pd(p),
        "Float64 groups with AVX2, four columns at a time."
    );
    row_by_row_fn!(
        widened_256,
        "avx2",
        4,
        _mm256_loadu_pd,
        _mm256_add_pd,
        _mm256_storeu_pd,
        |p| _mm256_cvtps_pd(_mm_loadu_ps(p)),
        "Widened float32 groups with AVX2."
    );
}

/// One column-sum function per element type (see the module doc).
macro_rules! column_sum_fn {
    ($name:ident, $t:ty, $e:ty, $w512:ident, $w256:ident) => {
        /// Adds the sums of the `cols` columns of the `rows` rows at `src`
        /// (row `r` at `src + r · row_stride` bytes) to `acc` (see the module
        /// doc); nothing where `rows` or `cols` is not positive.
        ///
        /// # Safety
        /// `acc` must be valid for reads and writes of `cols` float64 and
        /// every row for reads of `cols` elements, all aligned to their type,
        /// the accumulators apart from the rows and written by no one else
        /// during the call (the JIT kernel passes a stack slot of its own and
        /// an input it does not write).
        pub(super) unsafe extern "C" fn $name(
            acc: *mut f64,
            src: *const $t,
            row_stride: i64,
            rows: i64,
            cols: i64,
        ) {
            if rows <= 0 || cols <= 0 {
                return;
            }
            let (rows, cols) = (rows as usize, cols as usize);
            let (src, stride) = (src.cast::<u8>(), row_stride as isize);
            let (groups, blocks) = (rows / GROUP, cols / 16);
            let done = match super::level() {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: level 3 means AVX-512F; the caller's contract covers
                // the groups' rows and the blocks' columns.
                3 => unsafe {
                    wide::$w512(acc, src, stride, groups, blocks);
                    blocks * 16
                },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: level 2 means AVX2; as above.
                2 => unsafe {
                    wide::$w256(acc, src, stride, groups, blocks);
                    blocks * 16
                },
                _ => 0,
            };
            // SAFETY: the caller's contract: `cols` accumulators apart from
            // the rows, each row `cols` readable elements.
            unsafe {
                let acc = std::slice::from_raw_parts_mut(acc, cols);
                scalar::<$e>(acc, src, stride, rows, done);
            }
        }
    };
}

column_sum_fn!(column_sum_f32, f32, f32, f32_512, f32_256);
column_sum_fn!(
    column_sum_widened_f32,
    f32,
    Widened,
    widened_512,
    widened_256
);
column_sum_fn!(column_sum_f64, f64, f64, f64_512, f64_256);

/// The column-sum functions: symbol and address, for [`crate::jit_symbols`].
pub(super) fn symbols() -> [(&'static str, *const u8); 3] {
    [
        ("lf_column_sum_f32", column_sum_f32 as *const u8),
        (
            "lf_column_sum_widened_f32",
            column_sum_widened_f32 as *const u8,
        ),
        ("lf_column_sum_f64", column_sum_f64 as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every level against the chunk's arithmetic written out per column:
    /// float32 in groups of rows then one by one, float64 and widened
    /// float32 row by row; row
    /// counts below, at and past a group, column counts off the 16 lanes,
    /// a row stride wider than the block; accumulators that start non-zero.
    #[test]
    fn columns_match_the_chunk_order() {
        super::super::each_level(|| {
            let (stride, max_rows) = (53usize, 21usize);
            let xs: Vec<f32> = (0..stride * max_rows)
                .map(|i| ((i as f32) * 0.731).sin() * 1e3)
                .collect();
            let x64: Vec<f64> = xs.iter().map(|&x| f64::from(x) * 1.1).collect();
            for rows in [1usize, 7, 8, 9, 16, 21] {
                for cols in [1usize, 15, 16, 17, 48] {
                    let start: Vec<f64> = (0..cols).map(|c| c as f64 * 0.5 - 3.0).collect();
                    let mut want32 = start.clone();
                    let mut want64 = start.clone();
                    let mut wanted = start.clone();
                    for (c, (w32, w64)) in want32.iter_mut().zip(&mut want64).enumerate() {
                        let at = |r: usize| r * stride + c;
                        let whole = rows - rows % GROUP;
                        for g in (0..whole).step_by(GROUP) {
                            let mut p = xs[at(g)];
                            for r in g + 1..g + GROUP {
                                p += xs[at(r)];
                            }
                            *w32 += f64::from(p);
                        }
                        for r in whole..rows {
                            *w32 += f64::from(xs[at(r)]);
                        }
                        for r in 0..rows {
                            *w64 += x64[at(r)];
                            wanted[c] += f64::from(xs[at(r)]);
                        }
                    }
                    let (mut got32, mut got64) = (start.clone(), start.clone());
                    let mut gotw = start.clone();
                    // SAFETY: `cols` accumulators each; every row of `cols`
                    // elements lies in the live Vecs.
                    unsafe {
                        column_sum_f32(
                            got32.as_mut_ptr(),
                            xs.as_ptr(),
                            (stride * 4) as i64,
                            rows as i64,
                            cols as i64,
                        );
                        column_sum_widened_f32(
                            gotw.as_mut_ptr(),
                            xs.as_ptr(),
                            (stride * 4) as i64,
                            rows as i64,
                            cols as i64,
                        );
                        column_sum_f64(
                            got64.as_mut_ptr(),
                            x64.as_ptr(),
                            (stride * 8) as i64,
                            rows as i64,
                            cols as i64,
                        );
                    }
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got32), bits(&want32), "f32 {rows}x{cols}");
                    assert_eq!(bits(&got64), bits(&want64), "f64 {rows}x{cols}");
                    assert_eq!(bits(&gotw), bits(&wanted), "widened {rows}x{cols}");
                }
            }
        });
    }
}
