//! W1 in float16 and bfloat16 written by hand with 512-bit vectors (rows
//! `W1_f16_hand`, `W1_bf16_hand`): how close the processor lets any code come
//! to the memory floor that the rows `W1_f16` and `W1_bf16` divide by.
//!
//! PyTorch's eager ops (and lazyfuse, which matches them) round each op's
//! float32 result to the dtype, so W1's five ops take a conversion there and
//! back each, and the float32 `tanh` comes on top. This loop does exactly that
//! work and nothing more: per sixteen lanes the three codes widened in
//! registers, every op rounded in registers, the values parked in a tile of 256
//! points, lazyfuse's own float32 `tanh` run over the tile (the fast-math
//! routine the kernels call), and the tile narrowed into the output. Its codes
//! are lazyfuse's bit for bit ([`hand_w1`] checks that before timing), so its
//! time is the compute floor of the same semantics: where it stays well short
//! of the memory floor, no code generator reaches that floor either.
//!
//! Row `W1_f16_native` ([`native_w1`]) is the way past that floor where the
//! processor computes in float16 itself (AVX512-FP16): the five ops in
//! float16 lanes, thirty-two at a time (`vmulph`, `vaddph`, `vmaxph`: an
//! operation on two float16 values rounded once is the float32 operation
//! rounded to float16, since float32 holds twice float16's precision and two
//! bits more), only `tanh` in float32, and each input's line 2 KiB ahead asked
//! for. Its codes are lazyfuse's too. Rust 1.95 has no stable float16
//! intrinsics, so the ops are single instructions in `asm!`.

use super::{inputs, two_threads, typed, typed_floor, w1_graph, Unit, Workload};
use lazyfuse::half::{bf16, f16};
use lazyfuse::DType;
use std::hint::black_box;

/// Points per tile (the tile programs' own size).
const TILE: usize = 256;

/// The float32 run routine's signature (`lf_run_<op>_f32`).
type RunFn = unsafe extern "C" fn(*mut f32, *const f32, i64);

/// The row of W1 by hand at `dtype` (float16 or bfloat16) over `n` elements
/// (a multiple of two tiles), beside W1_f16's floor: `None` where the
/// processor lacks AVX-512F or lazyfuse's fast-math `tanh` is not there.
///
/// # Panics
/// Where the loop's codes differ from lazyfuse's W1 on the same inputs: the
/// row would then time other work than W1's.
pub fn hand_w1(n: usize, dtype: DType) -> Option<Workload> {
    assert!(n.is_multiple_of(2 * TILE), "whole tiles per thread");
    let tanh = tanh_routine()?;
    let bf = dtype == DType::BF16;
    checked_row(
        n,
        dtype,
        if bf { "W1_bf16_hand" } else { "W1_f16_hand" },
        format!("W1 {dtype} by hand (AVX-512)"),
        "(none): the compute floor of W1's rounding",
        // SAFETY: `tanh_routine` found AVX-512F; each thread's slices hold
        // the same number of codes, a multiple of the tile.
        move |o, a, b, c| unsafe { wide::w1(o, a, b, c, bf, tanh) },
    )
}

/// A row of W1 by hand at `dtype` over `n` elements: the inputs' codes,
/// `w1` run over each thread's part of them (the output's part and the
/// inputs' matching parts), beside W1's floor at `dtype`.
///
/// # Panics
/// Where `w1`'s codes differ from lazyfuse's W1 on the same inputs: the row
/// would then time other work than W1's.
fn checked_row(
    n: usize,
    dtype: DType,
    id: &'static str,
    what: String,
    target: &'static str,
    w1: impl Fn(&mut [u16], &[u16], &[u16], &[u16]) + Sync + 'static,
) -> Option<Workload> {
    let codes = |seed: f32| -> Vec<u16> {
        let v = inputs(n, seed);
        match dtype {
            DType::F16 => v.into_iter().map(|x| f16::from_f32(x).to_bits()).collect(),
            _ => v.into_iter().map(|x| bf16::from_f32(x).to_bits()).collect(),
        }
    };
    let (a, b, c) = (codes(0.1), codes(0.2), codes(0.3));
    let mut out = vec![0u16; n];
    let pass = move |o: &mut [u16], s: usize, a: &[u16], b: &[u16], c: &[u16]| {
        let m = o.len();
        w1(o, &a[s..s + m], &b[s..s + m], &c[s..s + m]);
    };
    let want = lazyfuse_w1(&a, &b, &c, dtype)?;
    two_threads(&mut out, |s, o| pass(o, s, &a, &b, &c));
    assert!(out == want, "{id} gives other codes than lazyfuse's W1");
    Some(Workload {
        id,
        what,
        unit: Unit::Bytes(4.0 * 2.0 * n as f64),
        run: Box::new(move || {
            two_threads(&mut out, |s, o| pass(o, s, &a, &b, &c));
            black_box(&out);
        }),
        baseline: Some(typed_floor(n, dtype, 3)),
        target,
        min_ratio: None,
        max_secs: None,
    })
}

/// lazyfuse's W1 codes on the inputs' codes `a`, `b`, `c` at `dtype`: what
/// a hand loop must give before it is timed (`None`: the realize failed).
fn lazyfuse_w1(a: &[u16], b: &[u16], c: &[u16], dtype: DType) -> Option<Vec<u16>> {
    let n = a.len();
    let t = |v: &[u16]| {
        let x: Vec<f32> = v
            .iter()
            .map(|&h| match dtype {
                DType::F16 => f16::from_bits(h).to_f32(),
                _ => bf16::from_bits(h).to_f32(),
            })
            .collect();
        typed(x, &[n], dtype)
    };
    let y = w1_graph(&t(a), &t(b), &t(c)).realize().ok()?;
    Some(match dtype {
        DType::F16 => y
            .to_vec::<f16>()
            .ok()?
            .iter()
            .map(|v| v.to_bits())
            .collect(),
        _ => y
            .to_vec::<bf16>()
            .ok()?
            .iter()
            .map(|v| v.to_bits())
            .collect(),
    })
}

/// Row `W1_f16_native`: W1 in float16 by hand with the processor's float16
/// arithmetic (see the module doc), beside W1_f16's floor: `None` where the
/// processor lacks AVX512-FP16.
///
/// # Panics
/// Where the loop's codes differ from lazyfuse's W1 on the same inputs.
pub fn native_w1(n: usize) -> Option<Workload> {
    assert!(n.is_multiple_of(64), "whole vectors per thread");
    if !float16_arithmetic() {
        return None;
    }
    checked_row(
        n,
        DType::F16,
        "W1_f16_native",
        "W1 float16 by hand (AVX512-FP16)".into(),
        "(none): W1_f16 with float16 arithmetic",
        // SAFETY: the processor has AVX512-FP16 (and with it AVX-512F, BW and
        // DQ); each thread's slices hold the same number of codes, a
        // multiple of 32.
        |o, a, b, c| unsafe { wide::w1_native(o, a, b, c) },
    )
}

/// Whether the processor computes in float16 (AVX512-FP16).
fn float16_arithmetic() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx512fp16");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// lazyfuse's fast-math float32 `tanh` run, where the processor has AVX-512F.
fn tanh_routine() -> Option<RunFn> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        let f = lazyfuse_runtime::jit_symbols::lookup("lf_run_tanh_f32")?;
        // SAFETY: `lf_run_tanh_f32` is a run routine of this signature
        // (`lazyfuse_runtime::vector_runs`).
        return Some(unsafe { std::mem::transmute::<*const u8, RunFn>(f) });
    }
    None
}

#[cfg(target_arch = "x86_64")]
mod wide {
    use super::{RunFn, TILE};
    use std::arch::x86_64::*;

    /// Round to nearest even, exceptions suppressed.
    const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

    /// Sixteen codes at `p` widened to float32.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn widen(p: *const u16, bf: bool) -> __m512 {
        // SAFETY: the caller's: sixteen codes at `p`.
        let h = unsafe { _mm256_loadu_si256(p.cast()) };
        if bf {
            _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(h)))
        } else {
            _mm512_cvtph_ps(h)
        }
    }

    /// `v` rounded to the dtype's grid, as float32 bits (bfloat16: to nearest
    /// even on the bits, a NaN quieted; float16: the processor's conversion
    /// there and back).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn round_bits(v: __m512, bf: bool) -> __m512i {
        if !bf {
            return _mm512_castps_si512(_mm512_cvtph_ps(_mm512_cvtps_ph::<NEAREST>(v)));
        }
        let bits = _mm512_castps_si512(v);
        let lsb = _mm512_and_si512(_mm512_srli_epi32::<16>(bits), _mm512_set1_epi32(1));
        let up = _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7FFF)), lsb);
        let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
        let quiet = _mm512_or_si512(bits, _mm512_set1_epi32(0x0040_0000));
        let r = _mm512_mask_mov_epi32(up, nan, quiet);
        _mm512_and_si512(r, _mm512_set1_epi32(0xFFFF_0000_u32 as i32))
    }

    /// `v` rounded to the dtype and back.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn round(v: __m512, bf: bool) -> __m512 {
        _mm512_castsi512_ps(round_bits(v, bf))
    }

    /// W1 over `o.len()` points (whole tiles): `tanh(((a*b + c).relu() * 0.5
    /// + a))` with every op but `relu` (which returns its operand) rounded.
    ///
    /// # Safety
    /// The processor has AVX-512F; `a`, `b`, `c` hold at least `o.len()`
    /// codes, a multiple of [`TILE`].
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn w1(o: &mut [u16], a: &[u16], b: &[u16], c: &[u16], bf: bool, tanh: RunFn) {
        let mut tile = [0f32; TILE];
        let (zero, half) = (_mm512_setzero_ps(), _mm512_set1_ps(0.5));
        for s in (0..o.len()).step_by(TILE) {
            for k in (0..TILE).step_by(16) {
                let i = s + k;
                // SAFETY: `i + 16 <= o.len()` codes of each input (whole tiles).
                let (va, vb, vc) = unsafe {
                    (
                        widen(a.as_ptr().add(i), bf),
                        widen(b.as_ptr().add(i), bf),
                        widen(c.as_ptr().add(i), bf),
                    )
                };
                let m = round(_mm512_mul_ps(va, vb), bf);
                let m = round(_mm512_add_ps(m, vc), bf);
                // `x < 0 ? 0 : x` (a NaN stays): vmaxps returns its second
                // operand where either is NaN
                let m = _mm512_max_ps(zero, m);
                let m = round(_mm512_mul_ps(m, half), bf);
                let m = round(_mm512_add_ps(m, va), bf);
                // SAFETY: 16 lanes of the tile from `k`.
                unsafe { _mm512_storeu_ps(tile.as_mut_ptr().add(k), m) };
            }
            // SAFETY: the routine's contract: the tile, in place, 256 points.
            unsafe { tanh(tile.as_mut_ptr(), tile.as_ptr(), TILE as i64) };
            for k in (0..TILE).step_by(16) {
                // SAFETY: 16 lanes of the tile and 16 codes of the output.
                unsafe {
                    let v = _mm512_loadu_ps(tile.as_ptr().add(k));
                    let codes = if bf {
                        _mm512_cvtepi32_epi16(_mm512_srli_epi32::<16>(round_bits(v, true)))
                    } else {
                        _mm512_cvtps_ph::<NEAREST>(v)
                    };
                    _mm256_storeu_si256(o.as_mut_ptr().add(s + k).cast(), codes);
                }
            }
        }
    }

    /// One AVX512-FP16 instruction `$op` on the 32 float16 lanes of `$a` and
    /// `$b`: `$a op $b` (where either is NaN, `vmaxph` gives `$b`).
    macro_rules! ph {
        ($op:literal, $a:expr, $b:expr) => {{
            let r: __m512i;
            // SAFETY: one register-to-register float16 operation; the
            // caller's function runs only where the processor has
            // AVX512-FP16 (`w1_native`'s contract).
            unsafe {
                std::arch::asm!(
                    concat!($op, " {r}, {a}, {b}"),
                    r = lateout(zmm_reg) r,
                    a = in(zmm_reg) $a,
                    b = in(zmm_reg) $b,
                    options(pure, nomem, nostack),
                )
            };
            r
        }};
    }

    /// lazyfuse's fast-math float32 `tanh` (`vector_runs`' `tanh`, `vmath`'s
    /// form) of sixteen lanes: the argument clamped, `x·P(x²) / Q(x²)` with
    /// one FMA per Horner step, `x` itself below `TANH_TINY`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn tanh16(x: __m512) -> __m512 {
        use lazyfuse_ir::fast_math::{TANH_CLAMP_FMA, TANH_P, TANH_Q, TANH_TINY};
        let bound = TANH_CLAMP_FMA as f32;
        // (`x < lo ? lo : x`, then `hi < x ? hi : x`: vmaxps/vminps give
        // their second operand where either is NaN, so a NaN stays)
        let xc = _mm512_max_ps(_mm512_set1_ps(-bound), x);
        let xc = _mm512_min_ps(_mm512_set1_ps(bound), xc);
        let x2 = _mm512_mul_ps(xc, xc);
        let horner = |cs: &[f64]| {
            let (last, rest) = cs.split_last().expect("coefficients");
            rest.iter()
                .rev()
                .fold(_mm512_set1_ps(*last as f32), |acc, &c| {
                    _mm512_fmadd_ps(acc, x2, _mm512_set1_ps(c as f32))
                })
        };
        let p = _mm512_mul_ps(horner(&TANH_P), xc);
        let t = _mm512_div_ps(p, horner(&TANH_Q));
        let tiny = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(
            _mm512_andnot_ps(_mm512_set1_ps(-0.0), x),
            _mm512_set1_ps(TANH_TINY as f32),
        );
        _mm512_mask_blend_ps(tiny, t, x)
    }

    /// W1 over `o.len()` points with float16 arithmetic, all in registers:
    /// per 32 lanes `((a*b + c).relu() * 0.5 + a)` in float16 (each op
    /// rounded once, as the float32 op rounded to float16), then widened, the
    /// float32 `tanh` ([`tanh16`]) and the rounding to float16; each input's
    /// line 2 KiB ahead asked for once per line read.
    ///
    /// # Safety
    /// The processor has AVX512-FP16 (with AVX-512F, BW and DQ); `a`, `b`,
    /// `c` hold at least `o.len()` codes, a multiple of 32.
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,fma")]
    pub(super) unsafe fn w1_native(o: &mut [u16], a: &[u16], b: &[u16], c: &[u16]) {
        let zero = _mm512_setzero_si512();
        let half = _mm512_set1_epi16(0x3800); // 0.5 in float16
        for i in (0..o.len()).step_by(32) {
            for x in [a, b, c] {
                // (a hint: no read happens, at any address)
                _mm_prefetch::<_MM_HINT_T0>(x.as_ptr().wrapping_add(i + 1024).cast());
            }
            // SAFETY: `i + 32 <= o.len()` codes of each input.
            let (va, vb, vc) = unsafe {
                (
                    _mm512_loadu_si512(a.as_ptr().add(i).cast()),
                    _mm512_loadu_si512(b.as_ptr().add(i).cast()),
                    _mm512_loadu_si512(c.as_ptr().add(i).cast()),
                )
            };
            let m = ph!("vmulph", va, vb);
            let m = ph!("vaddph", m, vc);
            // `x < 0 ? 0 : x` (a NaN stays): the NaN is the second operand
            let m = ph!("vmaxph", zero, m);
            let m = ph!("vmulph", m, half);
            let m = ph!("vaddph", m, va);
            let lo = tanh16(_mm512_cvtph_ps(_mm512_castsi512_si256(m)));
            let hi = tanh16(_mm512_cvtph_ps(_mm512_extracti64x4_epi64::<1>(m)));
            // SAFETY: 32 codes of the output from `i`.
            unsafe {
                let out = o.as_mut_ptr().add(i);
                _mm256_storeu_si256(out.cast(), _mm512_cvtps_ph::<NEAREST>(lo));
                _mm256_storeu_si256(out.add(16).cast(), _mm512_cvtps_ph::<NEAREST>(hi));
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod wide {
    use super::RunFn;

    /// Not reached: [`super::tanh_routine`] gives `None` off x86-64.
    pub(super) unsafe fn w1(_: &mut [u16], _: &[u16], _: &[u16], _: &[u16], _: bool, _: RunFn) {
        unreachable!("no AVX-512 off x86-64")
    }

    /// Not reached, as [`w1`].
    pub(super) unsafe fn w1_native(_: &mut [u16], _: &[u16], _: &[u16], _: &[u16]) {
        unreachable!("no AVX-512 off x86-64")
    }
}
