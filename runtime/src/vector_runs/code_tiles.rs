//! Code tiles: the steps of a float16 or bfloat16 elementwise kernel over runs
//! of the dtype's own 16-bit codes, each op widening its operands, computing
//! in float32 and rounding to a code in one pass, 32, 16 or 8 lanes at a time.
//!
//! A kernel whose values are all of one narrow dtype (`lazyfuse_codegen`'s
//! tile programs) reads its inputs' codes where they lie, computes each op
//! from its operands' codes into a tile of codes on its stack (or straight
//! into its output's run, for the op it stores), and calls one of these per
//! op. Every value of such a kernel is a code of its dtype, so nothing is
//! lost by keeping codes: the tiles are half the bytes of float32 tiles, and
//! no pass only widens or only rounds.
//!
//! Names, each `unsafe extern "C"`, `n` points (`n ≤ 0`: nothing), `dst`
//! disjoint from the operands, and last the `count` input runs at `hints`
//! whose lines the op asks for [`prefetch::AHEAD`](super::prefetch::AHEAD)
//! bytes ahead as it computes (`count ≤ 0` or null: none):
//! - `lf_ctile_<add|sub|mul|div|max|min>_<f16|bf16>(dst: *mut u16, a: *const
//!   u16, b: *const u16, n, hints, count)`: the float32 op of the codes'
//!   values, rounded, a NaN operand's payload the first NaN operand's (as the
//!   processor's instruction gives it);
//! - `lf_ctile_<relu|neg|abs>_<f16|bf16>(dst, x, n, hints, count)`: the op, on
//!   the codes' bits (the float32 op and its rounding give those bits: a NaN
//!   comes back quieted);
//! - `lf_ctile_<op>_<f16|bf16>(dst, x, n, hints, count)` for each float32 run
//!   routine's op (`exp`, `log`, `log2`, `log10`, `tanh`, `sigmoid`, `silu`,
//!   `erf`, `gelu`, `gelu_tanh`, `expm1`, `log1p`, `softplus`, `elu`, `mish`,
//!   `sin`, `cos`, `tan`, `atan`, `sinh`, `cosh`): the codes widened, the op's
//!   float32 form and the rounding, in registers where the run routine is
//!   `vector_runs`' compiled scalar function, through the routine over a
//!   float32 buffer where it is vector code of its own; the routine's bits
//!   either way;
//! - `lf_ctile_copy(dst, src, n)`: the codes as they are (a store of a loaded
//!   value or of a value stored twice).
//!
//! Widening and rounding take explicit vector code where the processor has
//! it (`half_hw.rs`: float16's conversion instructions, bfloat16's codes as
//! the halves of 32-bit lanes), and float16's add, sub, mul and div take the
//! processor's float16 arithmetic where it has that (`half_arith.rs`, the
//! same bits); elsewhere the compiler vectorizes the arithmetic forms. Every
//! step gives the bits of the kernels' inline code and the interpreter: the
//! float32 op of the codes' values, rounded to the dtype.

use super::half_arith::{self, HalfOp};
use super::half_hw::{code_binary_hw, code_hw};
use super::narrow::{bf16_code, f16_code};
use super::prefetch::ahead_all;
use super::widen::{widen_bf16, widen_f16};
// (the ops' float32 forms, for the maps)
use super::activations::{cosh, elu, expm1, log1p, mish, sinh, softplus};
use super::trig::{atan, cos, sin, tan};
use super::{log, log10, log2, tanh};
// (the ops through their run routines, and the conversions around them)
use super::erf_table::{run_erf, run_gelu};
use super::narrow::{narrow_bf16, narrow_f16};
use super::widen::{widen_bf16_run, widen_f16_run};
use super::{run_exp, run_gelu_tanh, run_sigmoid, run_silu};

/// float16's largest finite magnitude's code plus one (infinity), and its
/// quiet bit.
const F16_INF: u16 = 0x7C00;
const F16_QUIET: u16 = 0x0200;
/// bfloat16's infinity code and quiet bit.
const BF16_INF: u16 = 0x7F80;
const BF16_QUIET: u16 = 0x0040;

/// `x < 0 ? 0 : x` on a code (`inf`, `quiet`: its dtype's): a NaN quieted, a
/// negative value (not −0) to +0.
#[inline(always)]
fn relu_code(c: u16, inf: u16, quiet: u16) -> u16 {
    let mag = c & 0x7FFF;
    if mag > inf {
        c | quiet
    } else if c & 0x8000 != 0 && mag != 0 {
        0
    } else {
        c
    }
}

/// `-x` on a code: the sign flipped, a NaN's too, and a NaN quieted.
#[inline(always)]
fn neg_code(c: u16, inf: u16, quiet: u16) -> u16 {
    let n = c ^ 0x8000;
    if c & 0x7FFF > inf {
        n | quiet
    } else {
        n
    }
}

/// `|x|` on a code: the sign cleared, a NaN quieted.
#[inline(always)]
fn abs_code(c: u16, inf: u16, quiet: u16) -> u16 {
    let mag = c & 0x7FFF;
    if mag > inf {
        mag | quiet
    } else {
        mag
    }
}

/// The `n` codes at `dst` as a mutable slice and those at `a` and `b` as
/// shared ones.
///
/// # Safety
/// `a` and `b` must be valid for reads and `dst` for writes of `n` codes,
/// `dst` disjoint from both, written by no one else while the slices live.
unsafe fn code_slices<'a>(
    dst: *mut u16,
    a: *const u16,
    b: *const u16,
    n: usize,
) -> (&'a mut [u16], &'a [u16], &'a [u16]) {
    // SAFETY: the caller's contract above.
    unsafe {
        (
            std::slice::from_raw_parts_mut(dst, n),
            std::slice::from_raw_parts(a, n),
            std::slice::from_raw_parts(b, n),
        )
    }
}

/// The runs an op asks ahead for: its `hints` and `count` arguments as a
/// slice (none where `count ≤ 0` or `hints` is null).
///
/// # Safety
/// Where `count > 0`, a non-null `hints` must be valid for reads of `count`
/// pointers (which the hints only ask for lines from, never read).
unsafe fn hint_runs<'a>(hints: *const *const u16, count: i64) -> &'a [*const u16] {
    if count <= 0 || hints.is_null() {
        return &[];
    }
    // SAFETY: the caller's contract above.
    unsafe { std::slice::from_raw_parts(hints, count as usize) }
}

/// Codes per cache line.
const LINE: usize = 32;

/// `dst[i] = f(a[i], b[i])` a line at a time (fixed-size arrays, which the
/// compiler vectorizes whole), asking for the lines
/// [`prefetch::AHEAD`](super::prefetch::AHEAD) bytes on in the runs `hints`
/// before each.
#[inline(always)]
fn by_lines(
    dst: &mut [u16],
    a: &[u16],
    b: &[u16],
    hints: &[*const u16],
    f: impl Fn(u16, u16) -> u16,
) {
    let n = dst.len().min(a.len()).min(b.len());
    let full = n - n % LINE;
    for c in (0..full).step_by(LINE) {
        ahead_all(hints, c);
        let xs: &[u16; LINE] = a[c..c + LINE].try_into().expect("a line");
        let ys: &[u16; LINE] = b[c..c + LINE].try_into().expect("a line");
        let ds: &mut [u16; LINE] = (&mut dst[c..c + LINE]).try_into().expect("a line");
        for ((d, &x), &y) in ds.iter_mut().zip(xs).zip(ys) {
            *d = f(x, y);
        }
    }
    for i in full..n {
        dst[i] = f(a[i], b[i]);
    }
}

/// `a < b ? b : a`, float32's default NaN where either is NaN (`vector`'s
/// `Maximum`). (Selects, not branches, as for [`first_nan`].)
#[inline(always)]
fn maximum(a: f32, b: f32) -> f32 {
    let m = if a < b { b } else { a };
    if a.is_nan() | b.is_nan() {
        f32::from_bits(0x7FC0_0000)
    } else {
        m
    }
}

/// `b < a ? b : a`, float32's default NaN where either is NaN.
#[inline(always)]
fn minimum(a: f32, b: f32) -> f32 {
    let m = if b < a { b } else { a };
    if a.is_nan() | b.is_nan() {
        f32::from_bits(0x7FC0_0000)
    } else {
        m
    }
}

/// The bfloat16 code `c`'s value as it is, a signaling NaN unquieted: the
/// binary ops' operands, whose NaN the rounding to a code quiets anyway
/// (`bf16_code`), which saves a compare and a blend per vector.
#[inline(always)]
fn bf16_value(c: u16) -> f32 {
    f32::from_bits(u32::from(c) << 16)
}

/// `r`, the result of an arithmetic op on `a` and `b`, with the NaN the
/// processor's instruction gives where an operand is a NaN: the first one's
/// (which the kernels' inline code and float16's instructions give; a
/// compiled `a * b` may have its operands swapped).
#[inline(always)]
fn first_nan(a: f32, b: f32, r: f32) -> f32 {
    // (two selects, not an `else if` chain: the compiler keeps a chain as
    // branches per lane in a 16-lane block, and vectorizes the selects)
    let r = if b.is_nan() { b } else { r };
    if a.is_nan() {
        a
    } else {
        r
    }
}

/// One binary op of one dtype: `$bf` bfloat16, `$native` the float16
/// instruction that computes it where there is one.
macro_rules! code_binary {
    ($name:ident, $bf:literal, $native:expr, |$a:ident, $b:ident| $body:expr) => {
        /// Writes the code of the op of each of the `n` code pairs at `a` and
        /// `b` to `dst`, asking for the lines ahead of the `count` runs at
        /// `hints` (its kernel's inputs') as it goes.
        ///
        /// # Safety
        /// `a` and `b` must be valid for reads and `dst` for writes of `n`
        /// codes, `dst` disjoint from both (which may be the same), written by
        /// no one else during the call (the JIT kernel passes its stack tiles,
        /// runs of inputs it does not write and a run of its own output range);
        /// `hints` as for [`hint_runs`].
        unsafe extern "C" fn $name(
            dst: *mut u16,
            a: *const u16,
            b: *const u16,
            n: i64,
            hints: *const *const u16,
            count: i64,
        ) {
            if n <= 0 {
                return;
            }
            // SAFETY: the caller's contract above.
            let (dst, a, b) = unsafe { code_slices(dst, a, b, n as usize) };
            // SAFETY: as above.
            let ahead = unsafe { hint_runs(hints, count) };
            let native: Option<HalfOp> = $native;
            let done = match native {
                Some(op) if !$bf => half_arith::binary(op, dst, a, b, ahead),
                _ => 0,
            };
            let (dst, a, b) = (&mut dst[done..], &a[done..], &b[done..]);
            // (the part of a vector the float16 instructions leave counts its
            // positions from 0: it would ask again for the run's first lines)
            let ahead = if done > 0 { &[][..] } else { ahead };
            if code_hw($bf) {
                return code_binary_hw::<$bf>(dst, a, b, ahead, |$a, $b| $body);
            }
            by_level!(
                fn apply(dst: &mut [u16], a: &[u16], b: &[u16], ahead: &[*const u16]) {
                    #[allow(unused_imports)]
                    use super::{
                        bf16_code, bf16_value, by_lines, f16_code, first_nan, maximum, minimum,
                        widen_f16,
                    };
                    by_lines(dst, a, b, ahead, |x, y| {
                        if $bf {
                            let ($a, $b) = (bf16_value(x), bf16_value(y));
                            bf16_code($body)
                        } else {
                            let ($a, $b) = (widen_f16(x), widen_f16(y));
                            f16_code($body)
                        }
                    });
                },
                (dst, a, b, ahead)
            )
        }
    };
}

/// Whether the ops on codes' bits take 512-bit integer code (AVX-512BW's 32
/// lanes of 16 bits, with their compares into masks): at the AVX-512 level on
/// a processor with AVX-512BW. (AVX-512F alone has no 16-bit lanes, and its
/// code splits each vector in two halves of AVX2.)
#[cfg(target_arch = "x86_64")]
fn bits_512() -> bool {
    super::level() == 3 && std::arch::is_x86_feature_detected!("avx512bw")
}

/// `dst[i] = op(src[i])` compiled with AVX-512BW (see [`bits_512`]), asking
/// for the lines ahead of the runs `hints`.
///
/// # Safety
/// The processor has AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
unsafe fn unary_bw(dst: &mut [u16], src: &[u16], hints: &[*const u16], op: impl Fn(u16) -> u16) {
    by_lines(dst, src, src, hints, |c, _| op(c));
}

/// The entry of an op of one run of codes, `$name(dst, src, n, hints,
/// count)`: `$body` runs with the run `src`, the run `dst` and the hinted
/// runs `ahead` as slices (nothing where `n ≤ 0`).
macro_rules! unary_entry {
    ($name:ident, |$dst:ident, $src:ident, $ahead:ident| $body:block) => {
        /// Writes the op of each of the `n` codes at `src` to `dst`, asking
        /// for the lines ahead of the `count` runs at `hints`.
        ///
        /// # Safety
        /// `src` must be valid for reads and `dst` for writes of `n` codes,
        /// disjoint, written by no one else during the call (as for the
        /// binary ops); `hints` as for [`hint_runs`].
        unsafe extern "C" fn $name(
            dst: *mut u16,
            src: *const u16,
            n: i64,
            hints: *const *const u16,
            count: i64,
        ) {
            if n <= 0 {
                return;
            }
            // SAFETY: the caller's contract above.
            let ($dst, $src, _) = unsafe { code_slices(dst, src, src, n as usize) };
            // SAFETY: as above.
            let $ahead = unsafe { hint_runs(hints, count) };
            $body
        }
    };
}

/// One unary op of one dtype on the codes' bits (`$op`: [`relu_code`],
/// [`neg_code`] or [`abs_code`]; `$inf`, `$quiet`: the dtype's).
macro_rules! code_unary {
    ($name:ident, $op:ident, $inf:ident, $quiet:ident) => {
        unary_entry!($name, |dst, src, ahead| {
            #[cfg(target_arch = "x86_64")]
            if bits_512() {
                // SAFETY: `bits_512` says the processor has AVX-512F and BW.
                return unsafe { unary_bw(dst, src, ahead, |c| $op(c, $inf, $quiet)) };
            }
            by_level!(
                fn apply(dst: &mut [u16], src: &[u16], ahead: &[*const u16]) {
                    use super::{by_lines, $inf, $op as op, $quiet};
                    by_lines(dst, src, src, ahead, |c, _| op(c, $inf, $quiet));
                },
                (dst, src, ahead)
            )
        });
    };
}

/// One float32 op (`$f`, an `f32 -> f32` function of this module's scope) of
/// one dtype's codes (`$bf` bfloat16).
macro_rules! code_map {
    ($name:ident, $bf:literal, $f:ident) => {
        unary_entry!($name, |dst, src, ahead| {
            if code_hw($bf) {
                // (the run as both operands: the same codes widened)
                return code_binary_hw::<$bf>(dst, src, src, ahead, |x, _| $f(x));
            }
            by_level!(
                fn apply(dst: &mut [u16], src: &[u16], ahead: &[*const u16]) {
                    use super::{bf16_code, by_lines, f16_code, widen_bf16, widen_f16, $f as f};
                    by_lines(dst, src, src, ahead, |c, _| {
                        if $bf {
                            bf16_code(f(widen_bf16(c)))
                        } else {
                            f16_code(f(widen_f16(c)))
                        }
                    });
                },
                (dst, src, ahead)
            )
        });
    };
}

/// Points a [`code_via`] op widens into its float32 buffer at a time.
const VIA_POINTS: usize = 256;

/// One float32 op of one dtype's codes through its float32 run routine
/// (`$run`): the codes widened into a buffer, the routine over it in place,
/// the buffer narrowed. For the ops whose routines are vector code of their
/// own (`exp_scalef.rs`' AVX-512 forms, `erf_table.rs`), whose bits a
/// compiled scalar form gives only up to a NaN's sign.
macro_rules! code_via {
    ($name:ident, $bf:literal, $run:path) => {
        unary_entry!($name, |dst, src, ahead| {
            let mut buf = [0f32; VIA_POINTS];
            let chunks = dst.chunks_mut(VIA_POINTS).zip(src.chunks(VIA_POINTS));
            for (c, (d, s)) in chunks.enumerate() {
                for at in (0..s.len()).step_by(LINE) {
                    ahead_all(ahead, c * VIA_POINTS + at);
                }
                let (m, t) = (s.len() as i64, buf.as_mut_ptr());
                // SAFETY: `s` holds `m` codes, `buf` room for `m` float32 and
                // `d` for `m` codes, the three disjoint (the routine runs in
                // place over the buffer).
                unsafe {
                    if $bf {
                        widen_bf16_run(t, s.as_ptr(), m);
                        $run(t, t, m);
                        narrow_bf16(d.as_mut_ptr(), t, m);
                    } else {
                        widen_f16_run(t, s.as_ptr(), m);
                        $run(t, t, m);
                        narrow_f16(d.as_mut_ptr(), t, m);
                    }
                }
            }
        });
    };
}

/// Copies the `n` codes at `src` to `dst`.
///
/// # Safety
/// As for the unary ops: `src` valid for reads and `dst` for writes of `n`
/// codes, disjoint.
unsafe extern "C" fn copy_codes(dst: *mut u16, src: *const u16, n: i64) {
    if n <= 0 {
        return;
    }
    // SAFETY: the caller's contract above.
    let (dst, src, _) = unsafe { code_slices(dst, src, src, n as usize) };
    dst.copy_from_slice(src);
}

/// The binary, unary and float32 ops of one dtype, and their symbols (each
/// function in a block of its own, so that its name `run` shadows nothing).
macro_rules! dtype_code_ops {
    ($fn_name:ident, $bf:literal, $sfx:literal, $inf:ident, $quiet:ident) => {
        /// The dtype's code tile ops: symbol and address.
        fn $fn_name() -> Vec<(String, *const u8)> {
            let sym = |op: &str| format!("lf_ctile_{op}_{}", $sfx);
            let mut all: Vec<(String, *const u8)> = vec![
                (sym("add"), { code_binary!(run, $bf, Some(HalfOp::Add), |a, b| first_nan(a, b, a + b)); run as *const u8 }),
                (sym("sub"), { code_binary!(run, $bf, Some(HalfOp::Sub), |a, b| first_nan(a, b, a - b)); run as *const u8 }),
                (sym("mul"), { code_binary!(run, $bf, Some(HalfOp::Mul), |a, b| first_nan(a, b, a * b)); run as *const u8 }),
                (sym("div"), { code_binary!(run, $bf, Some(HalfOp::Div), |a, b| first_nan(a, b, a / b)); run as *const u8 }),
                (sym("max"), { code_binary!(run, $bf, None, |a, b| maximum(a, b)); run as *const u8 }),
                (sym("min"), { code_binary!(run, $bf, None, |a, b| minimum(a, b)); run as *const u8 }),
                (sym("relu"), { code_unary!(run, relu_code, $inf, $quiet); run as *const u8 }),
                (sym("neg"), { code_unary!(run, neg_code, $inf, $quiet); run as *const u8 }),
                (sym("abs"), { code_unary!(run, abs_code, $inf, $quiet); run as *const u8 }),
            ];
            dtype_code_ops!(@maps all, sym, $bf; log, log2, log10, tanh, expm1, log1p,
                softplus, elu, mish, sin, cos, tan, atan, sinh, cosh);
            dtype_code_ops!(@via all, sym, $bf; exp run_exp, sigmoid run_sigmoid,
                silu run_silu, gelu_tanh run_gelu_tanh, erf run_erf, gelu run_gelu);
            all
        }
    };
    (@maps $all:ident, $sym:ident, $bf:literal; $($f:ident),*) => {
        $($all.push(($sym(stringify!($f)), { code_map!(run, $bf, $f); run as *const u8 }));)*
    };
    (@via $all:ident, $sym:ident, $bf:literal; $($f:ident $run:ident),*) => {
        $($all.push(($sym(stringify!($f)), { code_via!(run, $bf, $run); run as *const u8 }));)*
    };
}

dtype_code_ops!(f16_ops, false, "f16", F16_INF, F16_QUIET);
dtype_code_ops!(bf16_ops, true, "bf16", BF16_INF, BF16_QUIET);

/// The code tile ops: symbol and address.
pub(super) fn symbols() -> Vec<(String, *const u8)> {
    let mut all = f16_ops();
    all.extend(bf16_ops());
    all.push(("lf_ctile_copy".to_string(), copy_codes as *const u8));
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    type Binary =
        unsafe extern "C" fn(*mut u16, *const u16, *const u16, i64, *const *const u16, i64);
    type Unary = unsafe extern "C" fn(*mut u16, *const u16, i64, *const *const u16, i64);
    /// The float32 form of a binary and of a unary op.
    type Want2 = fn(f32, f32) -> f32;
    type Want1 = fn(f32) -> f32;

    /// The code tile op named `name`.
    fn op(name: &str) -> *const u8 {
        symbols()
            .into_iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .1
    }

    /// A code's value in `bf16` or float16, and a value's code (`half`'s).
    fn value(c: u16, bf: bool) -> f32 {
        if bf {
            bf16::from_bits(c).to_f32()
        } else {
            f16::from_bits(c).to_f32()
        }
    }
    fn code(x: f32, bf: bool) -> u16 {
        if bf {
            bf16::from_f32(x).to_bits()
        } else {
            f16::from_f32(x).to_bits()
        }
    }

    /// Whether `c` is a NaN code.
    fn nan(c: u16, bf: bool) -> bool {
        c & 0x7FFF > if bf { BF16_INF } else { F16_INF }
    }

    /// Codes of every kind: zeros, subnormals, normals, infinities, quiet and
    /// signaling NaNs of both signs, spread over the whole range.
    fn codes(n: usize, seed: u32) -> Vec<u16> {
        let mut v: Vec<u16> = vec![
            0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
            0x7C01, 0xFE00, 0x7E12, 0x7F80, 0xFF80, 0x7F81, 0xFFC1, 0x0040, 0x3F80,
        ];
        let mut x = seed;
        while v.len() < n {
            // (a 32-bit xorshift: deterministic, all codes reachable)
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            v.push((x >> 7) as u16);
        }
        v
    }

    /// The binary ops give the code of the float32 op of the codes' values,
    /// at every level (float16's add, sub, mul and div by the processor's
    /// float16 arithmetic where it has it), a NaN operand's payload as the
    /// processor keeps it (the first NaN operand's): 1021 pairs, so that
    /// whole vectors of 32, 16 and 8 and a remainder take every path.
    #[test]
    fn binary_ops_give_the_rounded_float32_op() {
        let (a, b) = (codes(1021, 7), codes(1021, 99));
        let n = a.len();
        let cases: [(&str, Want2); 6] = [
            ("add", |x, y| first_nan(x, y, x + y)),
            ("sub", |x, y| first_nan(x, y, x - y)),
            ("mul", |x, y| first_nan(x, y, x * y)),
            ("div", |x, y| first_nan(x, y, x / y)),
            ("max", maximum),
            ("min", minimum),
        ];
        crate::vector_runs::each_level(|| {
            let hints = [a.as_ptr(), b.as_ptr()];
            for (bf, ahead) in [(false, 0), (false, 2), (true, 1), (true, 2)] {
                for (name, f) in cases {
                    let sfx = if bf { "bf16" } else { "f16" };
                    // SAFETY: a code tile op's symbol has the binary signature.
                    let run: Binary =
                        unsafe { std::mem::transmute(op(&format!("lf_ctile_{name}_{sfx}"))) };
                    let mut out = vec![0u16; n];
                    // SAFETY: three runs of `n` codes, `out` disjoint.
                    unsafe {
                        run(
                            out.as_mut_ptr(),
                            a.as_ptr(),
                            b.as_ptr(),
                            n as i64,
                            hints.as_ptr(),
                            ahead,
                        )
                    };
                    for i in 0..n {
                        let want = code(f(value(a[i], bf), value(b[i], bf)), bf);
                        assert_eq!(
                            out[i], want,
                            "{name}_{sfx} {:#06x} {:#06x}: {:#06x} want {want:#06x}",
                            a[i], b[i], out[i]
                        );
                    }
                }
            }
        });
    }

    /// The unary ops on bits are the float32 ops rounded, on every code.
    #[test]
    fn unary_ops_on_bits_are_the_float32_ops() {
        let all: Vec<u16> = (0..=u16::MAX).collect();
        let n = all.len();
        let cases: [(&str, Want1); 3] = [
            ("relu", |x| if x < 0.0 { 0.0 } else { x }),
            ("neg", |x| -x),
            ("abs", f32::abs),
        ];
        crate::vector_runs::each_level(|| {
            let hints = [all.as_ptr()];
            for (bf, ahead) in [(false, 0), (true, 1)] {
                for (name, f) in cases {
                    let sfx = if bf { "bf16" } else { "f16" };
                    // SAFETY: a code tile op's symbol has the unary signature.
                    let run: Unary =
                        unsafe { std::mem::transmute(op(&format!("lf_ctile_{name}_{sfx}"))) };
                    let mut out = vec![0u16; n];
                    // SAFETY: two disjoint runs of `n` codes.
                    unsafe {
                        run(
                            out.as_mut_ptr(),
                            all.as_ptr(),
                            n as i64,
                            hints.as_ptr(),
                            ahead,
                        )
                    };
                    for (&c, &o) in all.iter().zip(&out) {
                        let want = code(f(value(c, bf)), bf);
                        assert_eq!(o, want, "{name}_{sfx} {c:#06x}");
                    }
                }
            }
        });
    }

    /// The maps give the codes of the float32 run routines' results on the
    /// codes' values, bit for bit (a NaN from a NaN: a NaN), on every code,
    /// at every level.
    #[test]
    fn maps_round_the_float32_routines() {
        type Run = unsafe extern "C" fn(*mut f32, *const f32, i64);
        let all: Vec<u16> = (0..=u16::MAX).collect();
        let n = all.len();
        let ops = [
            "exp",
            "log",
            "log2",
            "log10",
            "tanh",
            "sigmoid",
            "silu",
            "erf",
            "gelu",
            "gelu_tanh",
            "expm1",
            "log1p",
            "softplus",
            "elu",
            "mish",
            "sin",
            "cos",
            "tan",
            "atan",
            "sinh",
            "cosh",
        ];
        let routine = |name: &str| -> Run {
            let want = format!("lf_run_{name}_f32");
            let (_, f) = crate::vector_runs::symbols()
                .find(|(n, _)| *n == want)
                .unwrap_or_else(|| panic!("no {want}"));
            // SAFETY: a float32 run routine's symbol has the run signature.
            unsafe { std::mem::transmute::<*const u8, Run>(f) }
        };
        crate::vector_runs::each_level(|| {
            for (bf, ahead) in [(false, 0), (true, 1)] {
                let hints = [all.as_ptr()];
                let values: Vec<f32> = all.iter().map(|&c| value(c, bf)).collect();
                for name in ops {
                    let sfx = if bf { "bf16" } else { "f16" };
                    // SAFETY: a code tile op's symbol has the unary signature.
                    let run: Unary =
                        unsafe { std::mem::transmute(op(&format!("lf_ctile_{name}_{sfx}"))) };
                    let mut out = vec![0u16; n];
                    // SAFETY: two disjoint runs of `n` codes.
                    unsafe {
                        run(
                            out.as_mut_ptr(),
                            all.as_ptr(),
                            n as i64,
                            hints.as_ptr(),
                            ahead,
                        )
                    };
                    let mut want = vec![0f32; n];
                    // SAFETY: two disjoint runs of `n` float32.
                    unsafe { routine(name)(want.as_mut_ptr(), values.as_ptr(), n as i64) };
                    for ((&c, &o), &w) in all.iter().zip(&out).zip(&want) {
                        let w = code(w, bf);
                        // (a NaN operand: which of an op's NaN operands the
                        // compiled scalar code keeps is the compiler's choice,
                        // which it makes apart in the run and in the map)
                        assert!(
                            o == w || (nan(c, bf) && nan(o, bf) && nan(w, bf)),
                            "{name}_{sfx} {c:#06x}: {o:#06x} want {w:#06x}"
                        );
                    }
                }
            }
        });
    }

    /// The copy keeps every code.
    #[test]
    fn copy_keeps_the_codes() {
        let all: Vec<u16> = (0..=u16::MAX).collect();
        let mut out = vec![0u16; all.len()];
        // SAFETY: two disjoint runs of 65536 codes.
        unsafe { copy_codes(out.as_mut_ptr(), all.as_ptr(), all.len() as i64) };
        assert_eq!(out, all);
    }
}
