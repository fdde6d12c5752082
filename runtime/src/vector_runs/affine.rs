//! Affine row routines: a phase that only maps a row through
//! `((x - shift) ∘ scale) · w + b`, with `∘` a multiply or a divide by an outer
//! value and `w`, `b` optional rows (a layer norm's output: `(x - mean) / std ·
//! weight + bias`; softmax's last phase, `exp · (1 / sum)`, is the bare scale).
//!
//! `lf_row_affine_<f32|f64|f16|bf16>(dst, src, n, shift, scale, w, b, form)`
//! (float16 and bfloat16 rows computed in float32 a block at a time, see
//! `narrow_affine`; their `shift` and `scale` are float32): `form`'s
//! bits say which parts are there (`lazyfuse_ir::fast_math`'s `AFFINE_*`; `w`
//! and `b` are null where their bit is clear; `shift` is `0` where the kernel
//! subtracts none: `x - 0` is `x`, signed zeros included), and whether a row
//! apart from its source is streamed out past the caches (`AFFINE_STREAM`,
//! `super::stream`). The arithmetic is the
//! kernel's own in fast math with FMA: a product that an add takes is
//! contracted into one fused multiply-add, as `lower::vector`'s `contract`
//! does (`y · w + b` is `fma(y, w, b)`; with no weight, `d · scale + b` is
//! `fma(d, scale, b)`), so the routine's values are the vector loop's bits.

use super::narrow_rows::CODES;
use super::prefetch::blocks;
use lazyfuse_ir::fast_math::{
    AFFINE_BIAS as BIAS, AFFINE_DIVIDE as DIVIDE, AFFINE_STREAM as STREAM, AFFINE_WEIGHT as WEIGHT,
};

/// The part `a..z` of an optional row.
fn part<T>(row: Option<&[T]>, a: usize, z: usize) -> Option<&[T]> {
    row.map(|r| &r[a..z])
}

/// One affine row function per element type (see the module doc).
macro_rules! affine_fn {
    ($name:ident, $t:ty, $streamed:ident) => {
        /// Writes `((src[i] - shift) ∘ scale) · w[i] + b[i]` to `dst[i]` for
        /// the `n` elements, the parts `form` names, a product that the add
        /// takes fused (`n ≤ 0`: nothing); `dst == src` works in place.
        ///
        /// # Safety
        /// `src` must be valid for reads and `dst` for writes of `n` aligned
        /// elements, the same run or disjoint; `w` (where `form` has
        /// `WEIGHT`) and `b` (where it has `BIAS`) valid for reads of `n`
        /// aligned elements that `dst` does not overlap; no one else writes
        /// them during the call (the JIT kernel passes its own output row and
        /// rows of inputs it does not write).
        pub(crate) unsafe extern "C" fn $name(
            dst: *mut $t,
            src: *const $t,
            n: i64,
            shift: $t,
            scale: $t,
            w: *const $t,
            b: *const $t,
            form: i64,
        ) {
            if n <= 0 {
                return;
            }
            let n = n as usize;
            // SAFETY: the caller's contract above: `dst`/`src` valid runs of `n`,
            // the same or disjoint; `w` and `b` valid for `n` where their bit
            // is set, and not written while these slices live.
            let (dst, src, w, b) = unsafe {
                let (dst, src) = super::run_slices(dst, src, n);
                let w = (form & WEIGHT != 0).then(|| std::slice::from_raw_parts(w, n));
                let b = (form & BIAS != 0).then(|| std::slice::from_raw_parts(b, n));
                (dst, src, w, b)
            };
            let divide = form & DIVIDE != 0;
            let compute = |dst: &mut [$t], src: Option<&[$t]>, w: Option<&[$t]>, b: Option<&[$t]>| {
            by_level!(fn apply(
                dst: &mut [$t],
                src: Option<&[$t]>,
                shift: $t,
                scale: $t,
                divide: bool,
                w: Option<&[$t]>,
                b: Option<&[$t]>,
            ) {
                // Each form is its own loop over slices of one length, so the
                // compiler vectorizes each with no test or bounds check inside.
                let n = dst.len();
                let (w, b) = (w.map(|w| &w[..n]), b.map(|b| &b[..n]));
                macro_rules! each {
                    (|$d:ident, $i:ident| $e:expr) => {
                        match src {
                            Some(s) => {
                                let s = &s[..n];
                                for $i in 0..n {
                                    let $d = s[$i] - shift;
                                    dst[$i] = $e;
                                }
                            }
                            None => {
                                for $i in 0..n {
                                    let $d = dst[$i] - shift;
                                    dst[$i] = $e;
                                }
                            }
                        }
                    };
                }
                match (divide, w, b) {
                    (false, None, None) => each!(|d, i| d * scale),
                    (true, None, None) => each!(|d, i| d / scale),
                    (false, Some(w), None) => each!(|d, i| (d * scale) * w[i]),
                    (true, Some(w), None) => each!(|d, i| (d / scale) * w[i]),
                    (false, None, Some(b)) => each!(|d, i| d.mul_add(scale, b[i])),
                    (true, None, Some(b)) => each!(|d, i| d / scale + b[i]),
                    (false, Some(w), Some(b)) => each!(|d, i| (d * scale).mul_add(w[i], b[i])),
                    (true, Some(w), Some(b)) => each!(|d, i| (d / scale).mul_add(w[i], b[i])),
                }
            }, (dst, src, shift, scale, divide, w, b))
            };
            match src {
                // (a row computed in place is in the cache already)
                Some(src) if form & STREAM != 0 => {
                    // The row's whole cache lines streamed, the rest plainly.
                    let affine = super::stream::Affine { shift, scale, form };
                    let (from, to) = super::stream::$streamed(dst, src, affine, w, b);
                    compute(&mut dst[..from], Some(&src[..from]), part(w, 0, from), part(b, 0, from));
                    compute(&mut dst[to..], Some(&src[to..]), part(w, to, n), part(b, to, n));
                }
                _ => compute(dst, src, w, b),
            }
        }
    };
}

affine_fn!(row_affine_f32, f32, affine_f32);
affine_fn!(row_affine_f64, f64, affine_f64);

/// The widening of a dtype's codes and the narrowing into them.
type Widen = unsafe extern "C" fn(*mut f32, *const u16, i64);
type Narrow = unsafe extern "C" fn(*mut u16, *const f32, i64);

/// A float16 or bfloat16 row through the float32 affine map, a block at a
/// time: the block of `src` (and of `w`, `b` where `form` has them) widened
/// into float32 tiles, `row_affine_f32` in place over the `x` tile, its
/// values rounded into `dst`'s codes. The kernel's own loop widens, computes
/// in float32 lanes and rounds at the store, the same steps (never streamed:
/// `AFFINE_STREAM` is ignored).
///
/// # Safety
/// As `lf_row_affine_f32`'s contract, with `src`, `w`, `b` and `dst` runs of
/// `n` codes, `dst` apart from the three.
#[allow(clippy::too_many_arguments)]
unsafe fn narrow_affine(
    dst: *mut u16,
    src: *const u16,
    n: i64,
    shift: f32,
    scale: f32,
    (w, b): (*const u16, *const u16),
    form: i64,
    (widen, narrow): (Widen, Narrow),
) {
    let n = usize::try_from(n).unwrap_or(0);
    let form = form & !STREAM;
    let (mut x, mut wt, mut bt) = ([0f32; CODES], [0f32; CODES], [0f32; CODES]);
    // (the narrow reductions' blocks of `CODES` codes; no next row to ask for)
    for r in blocks(n, std::ptr::null::<u16>()) {
        let (start, len) = (r.start, r.len());
        // SAFETY: the caller's contract: each run holds `n` codes, so the
        // block lies in them (`w` and `b` only where `form` names them); the
        // tiles hold `len ≤ CODES` values and are this frame's own.
        unsafe {
            widen(x.as_mut_ptr(), src.add(start), len as i64);
            if form & WEIGHT != 0 {
                widen(wt.as_mut_ptr(), w.add(start), len as i64);
            }
            if form & BIAS != 0 {
                widen(bt.as_mut_ptr(), b.add(start), len as i64);
            }
            let x = x.as_mut_ptr();
            row_affine_f32(
                x,
                x,
                len as i64,
                shift,
                scale,
                wt.as_ptr(),
                bt.as_ptr(),
                form,
            );
            narrow(dst.add(start), x, len as i64);
        }
    }
}

/// One float16 or bfloat16 affine function per dtype (see [`narrow_affine`]).
macro_rules! narrow_affine_fn {
    ($name:ident, $widen:path, $narrow:path) => {
        /// Writes the codes of `((src[i] - shift) ∘ scale) · w[i] + b[i]`,
        /// computed in float32 from the widened codes, to `dst[i]` for the
        /// `n` elements, the parts `form` names (`n ≤ 0`: nothing).
        ///
        /// # Safety
        /// `src` must be valid for reads and `dst` for writes of `n` aligned
        /// codes, disjoint; `w` (where `form` has `WEIGHT`) and `b` (where it
        /// has `BIAS`) valid for reads of `n` aligned codes apart from `dst`;
        /// no one else writes them during the call (the JIT kernel passes a
        /// row of its output and rows of inputs it does not write).
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe extern "C" fn $name(
            dst: *mut u16,
            src: *const u16,
            n: i64,
            shift: f32,
            scale: f32,
            w: *const u16,
            b: *const u16,
            form: i64,
        ) {
            // SAFETY: the caller's contract above is `narrow_affine`'s.
            unsafe { narrow_affine(dst, src, n, shift, scale, (w, b), form, ($widen, $narrow)) }
        }
    };
}

narrow_affine_fn!(
    row_affine_f16,
    super::widen::widen_f16_run,
    super::narrow::narrow_f16
);
narrow_affine_fn!(
    row_affine_bf16,
    super::widen::widen_bf16_run,
    super::narrow::narrow_bf16
);

/// The affine functions: symbol and address, for [`crate::jit_symbols`].
pub(super) fn symbols() -> [(&'static str, *const u8); 4] {
    [
        ("lf_row_affine_f32", row_affine_f32 as *const u8),
        ("lf_row_affine_f64", row_affine_f64 as *const u8),
        ("lf_row_affine_f16", row_affine_f16 as *const u8),
        ("lf_row_affine_bf16", row_affine_bf16 as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scalar steps `form` names, in the kernel's order with its
    /// contraction: the reference each level must match bit for bit.
    fn reference(x: f64, shift: f64, scale: f64, w: f64, b: f64, form: i64) -> (f32, f64) {
        macro_rules! steps {
            ($x:expr, $shift:expr, $scale:expr, $w:expr, $b:expr) => {{
                let (x, shift, scale, w, b) = ($x, $shift, $scale, $w, $b);
                let d = if shift == 0.0 { x } else { x - shift };
                let y = if form & DIVIDE != 0 {
                    d / scale
                } else {
                    d * scale
                };
                match (form & WEIGHT != 0, form & BIAS != 0, form & DIVIDE != 0) {
                    (true, true, _) => y.mul_add(w, b),
                    (true, false, _) => y * w,
                    (false, true, false) => d.mul_add(scale, b),
                    (false, true, true) => y + b,
                    (false, false, _) => y,
                }
            }};
        }
        let f = |v: f64| v as f32;
        (
            steps!(f(x), f(shift), f(scale), f(w), f(b)),
            steps!(x, shift, scale, w, b),
        )
    }

    /// A streamed row (`STREAM`) at every level and form, at every alignment of
    /// its output and of lengths around the cache lines: the plain row's bits,
    /// and nothing written outside it.
    #[test]
    fn streamed_rows_are_the_plain_rows() {
        super::super::each_level(|| {
            let n = 700;
            let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.731).sin() * 1e3).collect();
            let ws: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).cos()).collect();
            let bs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).sin() * 3.0).collect();
            let x32: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
            let w32: Vec<f32> = ws.iter().map(|&v| v as f32).collect();
            let b32: Vec<f32> = bs.iter().map(|&v| v as f32).collect();
            for form in 0..8 {
                for offset in 0..17 {
                    for len in [0, 1, 15, 16, 17, 31, 33, 64, 100, 640] {
                        let mut plain = vec![0.0f32; len];
                        let mut streamed = vec![-7.0f32; len + 40];
                        let mut plain64 = vec![0.0f64; len];
                        let mut streamed64 = vec![-7.0f64; len + 40];
                        // SAFETY: live Vecs: the outputs hold `offset + len`
                        // elements or more, apart from the inputs of `n ≥ len`.
                        unsafe {
                            let args32 = (x32.as_ptr(), len as i64, 0.625f32, 0.37f32);
                            let (x, l, sh, sc) = args32;
                            let (w, b) = (w32.as_ptr(), b32.as_ptr());
                            row_affine_f32(plain.as_mut_ptr(), x, l, sh, sc, w, b, form);
                            let out = streamed.as_mut_ptr().add(offset);
                            row_affine_f32(out, x, l, sh, sc, w, b, form | STREAM);
                            let (x, w, b) = (xs.as_ptr(), ws.as_ptr(), bs.as_ptr());
                            row_affine_f64(plain64.as_mut_ptr(), x, l, 0.625, 0.37, w, b, form);
                            let out = streamed64.as_mut_ptr().add(offset);
                            row_affine_f64(out, x, l, 0.625, 0.37, w, b, form | STREAM);
                        }
                        let what = format!("form {form} offset {offset} len {len}");
                        let bits32: Vec<u32> = plain.iter().map(|v| v.to_bits()).collect();
                        let got32: Vec<u32> = streamed[offset..offset + len]
                            .iter()
                            .map(|v| v.to_bits())
                            .collect();
                        assert_eq!(bits32, got32, "{what}");
                        let bits64: Vec<u64> = plain64.iter().map(|v| v.to_bits()).collect();
                        let got64: Vec<u64> = streamed64[offset..offset + len]
                            .iter()
                            .map(|v| v.to_bits())
                            .collect();
                        assert_eq!(bits64, got64, "{what}");
                        let outside = |v: &[f32]| v.iter().all(|&v| v == -7.0);
                        assert!(outside(&streamed[..offset]), "{what}");
                        assert!(outside(&streamed[offset + len..]), "{what}");
                        let outside64 = |v: &[f64]| v.iter().all(|&v| v == -7.0);
                        assert!(outside64(&streamed64[..offset]), "{what}");
                        assert!(outside64(&streamed64[offset + len..]), "{what}");
                    }
                }
            }
        });
    }

    /// Every form at every level, in place and from a source, on rows of
    /// lengths that are and are not multiples of the vector width, against the
    /// scalar steps bit for bit (NaN, infinities and signed zeros included).
    #[test]
    fn every_form_matches_the_scalar_steps() {
        super::super::each_level(|| {
            let n = 1037;
            let mut xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.731).sin() * 1e3).collect();
            xs[5] = f64::NAN;
            xs[6] = f64::INFINITY;
            xs[7] = -0.0;
            let ws: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).cos()).collect();
            let bs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).sin() * 3.0).collect();
            let scale = 0.37;
            for form in 0..8 {
                for (len, shift) in [
                    (1, 0.625),
                    (15, 0.0),
                    (16, 0.625),
                    (17, 0.0),
                    (n, 0.625),
                    (n, 0.0),
                ] {
                    let x32: Vec<f32> = xs[..len].iter().map(|&v| v as f32).collect();
                    let w32: Vec<f32> = ws[..len].iter().map(|&v| v as f32).collect();
                    let b32: Vec<f32> = bs[..len].iter().map(|&v| v as f32).collect();
                    let want: Vec<(f32, f64)> = (0..len)
                        .map(|i| reference(xs[i], shift, scale, ws[i], bs[i], form))
                        .collect();
                    let mut got = x32.clone();
                    let mut into = vec![0.0f32; len];
                    let mut into64 = vec![0.0f64; len];
                    // SAFETY: live Vecs of length `len`: `got` in place, the
                    // others disjoint from their sources and from `w`, `b`.
                    unsafe {
                        row_affine_f32(
                            got.as_mut_ptr(),
                            got.as_ptr(),
                            len as i64,
                            shift as f32,
                            scale as f32,
                            w32.as_ptr(),
                            b32.as_ptr(),
                            form,
                        );
                        row_affine_f32(
                            into.as_mut_ptr(),
                            x32.as_ptr(),
                            len as i64,
                            shift as f32,
                            scale as f32,
                            w32.as_ptr(),
                            b32.as_ptr(),
                            form,
                        );
                        row_affine_f64(
                            into64.as_mut_ptr(),
                            xs.as_ptr(),
                            len as i64,
                            shift,
                            scale,
                            ws.as_ptr(),
                            bs.as_ptr(),
                            form,
                        );
                    }
                    let same32 =
                        |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
                    let same64 =
                        |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
                    for i in 0..len {
                        assert!(same32(got[i], want[i].0), "form {form} len {len} at {i}");
                        assert!(same32(into[i], want[i].0), "form {form} len {len} at {i}");
                        assert!(same64(into64[i], want[i].1), "form {form} len {len} at {i}");
                    }
                }
            }
        });
    }
}
