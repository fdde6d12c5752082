//! Inline vector transcendentals for [`MathMode::Fast`](lazyfuse_ir::kernel::MathMode).
//!
//! Every function works on `f32x4` or `f64x2` (scalars use the same code on a splat
//! and take lane 0, so a tensor's tail gets exactly its vector body's values). The
//! methods are the classical ones, written from their textbook descriptions:
//! - `exp`, `exp2`, `expm1`: `x = n ln2 + r` with `n` rounded by the "shifter" trick
//!   (adding `1.5·2^mant` rounds to an integer held in the low mantissa bits, so no
//!   float→int conversion is needed), a Cody–Waite split of `ln2` so `r` is exact,
//!   a Taylor polynomial of `e^r - 1` on `|r| ≤ ln2/2` (degree 7 for f32, 13 for f64:
//!   the truncation error is below 0.3 ulp), and `2^n` built from exponent bits in
//!   two halves so results that overflow or become subnormal round once.
//! - `log`, `log2`, `log10`, `log1p`: `x = 2^k m` with `m ∈ [√½, √2)`, `f = m - 1`,
//!   `s = f/(2+f)` and the odd series of `2 atanh(s)` in fdlibm's cancellation-free
//!   arrangement `f - (f²/2 - s(f²/2 + R(s²)))`; subnormals are scaled first;
//!   `log1p` adds the rounding of `1 + x` back as `(x - (u - 1))/u`.
//! - `tanh = expm1(2x) / (expm1(2x) + 2)` (no cancellation near 0), `x` clamped where
//!   tanh rounds to ±1; `sigmoid = 1/(1 + e^-x)`, `silu = x/(1 + e^-x)`,
//!   `mish = x tanh(log1p(e^x))` with the interpreter's formulas.
//! - `erf` (float32 only): a degree-5 polynomial on each of sixteen intervals of
//!   `|x|` a quarter wide (a table of coefficients, `scripts/fit_erf.py`, ≤ 2.2
//!   ulp), `±1` from 3.9375; the exact GELU is the interpreter's
//!   `x · ½ · (1 + erf(x · √½))` on it.
//!
//! `lazyfuse_runtime::vector_runs` repeats the float32 FMA forms of the ops that
//! output runs hand to it (`lower::vrun`), operation for operation, compiled for
//! wider vectors; `tests/output_runs.rs` compares the two bit for bit, so a change
//! here is made there too.
//!
//! Special values follow libm: NaN propagates, `exp(-inf) = 0`, `exp(+inf) = inf`,
//! `log(0) = -inf`, `log(<0) = NaN`, `tanh(±inf) = ±1`, `±0` keeps its sign where libm
//! does. Clamps and selects compare with `fcmp` + `bitselect` so NaN passes through
//! (Cranelift's vector `fmin`/`fmax` are slow on x64). `fma` is used only when the
//! host ISA has it: without FMA Cranelift would turn it into per-lane libcalls.

use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32, F32X4, F64, F64X2, I32, I32X4, I64, I64X2};
use cranelift_codegen::ir::{AbiParam, BlockArg, Endianness, InstBuilder, MemFlagsData, Signature};
use cranelift_codegen::ir::{Type, Value};
use cranelift_frontend::FunctionBuilder;
use lazyfuse_ir::fast_math::{Trig, COS_TAYLOR, PIO2, SIN_TAYLOR, SIN_TINY, TRIG_BOUND};
use lazyfuse_ir::fast_math::{ATAN_T38, ATAN_T8, ATAN_TAYLOR, SINH_TAYLOR};
use lazyfuse_ir::fast_math::{ERF_COEFFS, ERF_STEP, ERF_T2, LN_2_TAIL, LOG10_2_TAIL};
use lazyfuse_ir::fast_math::{TANH_CLAMP, TANH_CLAMP_FMA, TANH_P, TANH_Q, TANH_TINY};
use lazyfuse_ir::{UnaryOp, UnaryParamOp};

/// Whether [`emit_unary`] computes `op` on float32 lanes, or float64 ones when
/// `wide` (`erf` has a float32 fit only).
pub(super) fn has_unary(op: UnaryOp, wide: bool) -> bool {
    use UnaryOp::*;
    match op {
        Exp | Exp2 | Expm1 | Log | Log2 | Log10 | Log1p | Tanh | Sigmoid | Silu | Mish => true,
        Erf | Sin | Cos | Tan | Atan | Sinh | Cosh => !wide,
        _ => false,
    }
}

/// The vector type whose lane 0 computes a scalar of type `ty` (`f32` or `f64`).
pub(super) fn vector_of(ty: Type) -> Type {
    if ty == F64 {
        F64X2
    } else {
        F32X4
    }
}

/// Emits `op` (one [`has_unary`] accepts) on the float vector `x` of type `vt`
/// (`f32x4` or `f64x2`); `fma` says whether the ISA has a fused multiply-add.
pub(super) fn emit_unary(
    b: &mut FunctionBuilder<'_>,
    fma: bool,
    op: UnaryOp,
    x: Value,
    vt: Type,
) -> Value {
    let mut m = VMath { b, vt, fma };
    use UnaryOp::*;
    match op {
        Exp => m.exp(x),
        Exp2 => m.exp2(x),
        Expm1 => m.expm1(x),
        Log => m.log_kind(x, LogKind::Ln),
        Log2 => m.log_kind(x, LogKind::Log2),
        Log10 => m.log_kind(x, LogKind::Log10),
        Log1p => m.log1p(x),
        Tanh if !m.f64() => m.tanh_rational(x),
        Erf if !m.f64() => m.erf(x),
        Sin if !m.f64() => m.trig(x, Trig::Sin),
        Cos if !m.f64() => m.trig(x, Trig::Cos),
        Tan if !m.f64() => m.trig(x, Trig::Tan),
        Atan if !m.f64() => m.atan(x),
        Sinh if !m.f64() => m.hyperbolic(x, false),
        Cosh if !m.f64() => m.hyperbolic(x, true),
        Tanh => m.tanh(x),
        Sigmoid => {
            let one = m.c(1.0);
            let d = m.one_plus_exp_neg(x);
            m.b.ins().fdiv(one, d)
        }
        Silu => {
            let d = m.one_plus_exp_neg(x);
            m.b.ins().fdiv(x, d)
        }
        Mish => {
            let e = m.exp(x);
            let l = m.log1p(e);
            let t = m.tanh(l);
            m.b.ins().fmul(x, t)
        }
        _ => unreachable!("has_unary admits only the ops above"),
    }
}

/// Whether [`emit_param`] computes `op` on float32 and float64 lanes: the
/// activations built from compares, products and this module's `exp`/`expm1`/
/// `log1p`, the exact GELU on float32 lanes from this module's `erf` (`wide`:
/// float64 lanes), and the tanh form of GELU. The exact form's `1 + erf(·)`
/// cancels for x < -2, but there the interpreter's own libm `erf` rounds no
/// closer, and the result stays within the tolerances
/// (`runtime/tests/vmath_table.rs`). The tanh form's `1 + tanh(u)` cancels the
/// same way, and a vector tanh of a few ulp would move the result past them
/// (by `½|x|` times its error near 1); it is computed as `2 / (1 + e^(-2u))`
/// instead, which does not cancel. Hardtanh with a NaN bound stays scalar
/// (the interpreter returns NaN for every element then).
pub(super) fn has_param(op: UnaryParamOp, wide: bool) -> bool {
    match op {
        UnaryParamOp::Gelu { tanh: false } => !wide,
        UnaryParamOp::Gelu { tanh: true } => true,
        UnaryParamOp::Softplus { .. } | UnaryParamOp::Elu { .. } => true,
        UnaryParamOp::LeakyRelu { .. } => true,
        UnaryParamOp::Hardtanh { min_val, max_val } => !min_val.is_nan() && !max_val.is_nan(),
        _ => false,
    }
}

/// Emits `op` (one [`has_param`] accepts) on the float vector `x` of type `vt`, with
/// the interpreter's formulas (`runtime/src/interp/pointwise.rs`), its branches
/// turned into compare + bitselect whose false side carries NaN like the
/// interpreter's `else`.
pub(super) fn emit_param(
    b: &mut FunctionBuilder<'_>,
    fma: bool,
    op: UnaryParamOp,
    x: Value,
    vt: Type,
) -> Value {
    let mut m = VMath { b, vt, fma };
    match op {
        UnaryParamOp::Gelu { tanh: true } => {
            // ½ x (1 + tanh(u)), u = β (x + 0.044715 x³), β = √(2/π), with u
            // as the interpreter computes it, and ½ (1 + tanh(u)) as
            // 1 / (1 + e^(-2u)), which does not cancel (see `has_param`). At
            // x = -inf, e^(+inf) is inf and -inf / inf NaN: the interpreter's
            // `-inf · 0`.
            let beta = m.c(std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5);
            let k = m.c(0.044715);
            let x2 = m.b.ins().fmul(x, x);
            let x3 = m.b.ins().fmul(x2, x);
            let kx3 = m.b.ins().fmul(k, x3);
            let s = m.b.ins().fadd(x, kx3);
            let inner = m.b.ins().fmul(beta, s);
            let two_u = m.b.ins().fadd(inner, inner);
            let d = m.one_plus_exp_neg(two_u);
            m.b.ins().fdiv(x, d)
        }
        UnaryParamOp::Softplus { beta, threshold } => {
            // z > threshold ? x : log1p(e^z) / beta  (NaN: the compare is false).
            let bv = m.c(beta);
            let z = m.b.ins().fmul(x, bv);
            let e = m.exp(z);
            let l = m.log1p(e);
            let soft = m.b.ins().fdiv(l, bv);
            let th = m.c(threshold);
            m.sel(FloatCC::GreaterThan, z, th, x, soft)
        }
        UnaryParamOp::Elu {
            alpha,
            scale,
            input_scale,
        } => {
            // x > 0 ? x·scale : expm1(x·input_scale)·(alpha·scale); NaN takes the
            // positive side, as the interpreter's `a <= 0` is false for it.
            let is = m.c(input_scale);
            let xs = m.b.ins().fmul(x, is);
            let e = m.expm1(xs);
            let a = m.c(alpha * scale);
            let neg = m.b.ins().fmul(e, a);
            let s = m.c(scale);
            let pos = m.b.ins().fmul(x, s);
            let z = m.c(0.0);
            m.sel(FloatCC::LessThanOrEqual, x, z, neg, pos)
        }
        UnaryParamOp::Gelu { tanh: false } => {
            // The interpreter's `x · ½ · (1 + erf(x · √½))`, op for op.
            let half = m.c(0.5);
            let h = m.b.ins().fmul(x, half);
            let r = m.c(std::f64::consts::FRAC_1_SQRT_2);
            let u = m.b.ins().fmul(x, r);
            let e = m.erf(u);
            let one = m.c(1.0);
            let s = m.b.ins().fadd(one, e);
            m.b.ins().fmul(h, s)
        }
        UnaryParamOp::LeakyRelu { negative_slope } => {
            let sl = m.c(negative_slope);
            let neg = m.b.ins().fmul(x, sl);
            let z = m.c(0.0);
            m.sel(FloatCC::GreaterThan, x, z, x, neg)
        }
        UnaryParamOp::Hardtanh { min_val, max_val } => {
            // nan_min(nan_max(x, lo), hi) with finite-or-infinite bounds: NaN x
            // fails both compares and stays NaN.
            let lo = m.c(min_val);
            let hi = m.c(max_val);
            let t = m.sel(FloatCC::LessThan, x, lo, lo, x);
            m.sel(FloatCC::LessThan, hi, t, hi, t)
        }
        _ => unreachable!("has_param admits only the ops above"),
    }
}

/// Which logarithm [`VMath::log_kind`] returns.
#[derive(Clone, Copy, PartialEq)]
enum LogKind {
    Ln,
    Log2,
    Log10,
}

/// The emitter: a builder, the vector type and whether `fma` is native.
struct VMath<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    vt: Type,
    fma: bool,
}

impl VMath<'_, '_> {
    fn f64(&self) -> bool {
        self.vt.lane_type() == F64
    }

    /// The integer vector type of the same width.
    fn ivt(&self) -> Type {
        if self.f64() {
            I64X2
        } else {
            I32X4
        }
    }

    /// Mantissa bits and exponent bias of the lane type.
    fn mant(&self) -> (i64, i64) {
        if self.f64() {
            (52, 1023)
        } else {
            (23, 127)
        }
    }

    /// A splatted float constant (rounded to the lane type).
    fn c(&mut self, x: f64) -> Value {
        let s = if self.f64() {
            self.b.ins().f64const(x)
        } else {
            self.b.ins().f32const(x as f32)
        };
        self.b.ins().splat(self.vt, s)
    }

    /// A splatted integer constant of the lane width.
    fn ci(&mut self, x: i64) -> Value {
        let (ty, vt) = if self.f64() {
            (I64, I64X2)
        } else {
            (I32, I32X4)
        };
        let s = self.b.ins().iconst(ty, x);
        self.b.ins().splat(vt, s)
    }

    fn bits(&mut self, x: Value) -> Value {
        let f = MemFlagsData::new().with_endianness(Endianness::Little);
        let ivt = self.ivt();
        self.b.ins().bitcast(ivt, f, x)
    }

    fn float(&mut self, i: Value) -> Value {
        let f = MemFlagsData::new().with_endianness(Endianness::Little);
        self.b.ins().bitcast(self.vt, f, i)
    }

    /// The bit pattern of the lane-typed `x`.
    fn bits_of(&self, x: f64) -> i64 {
        if self.f64() {
            x.to_bits() as i64
        } else {
            i64::from((x as f32).to_bits() as i32)
        }
    }

    /// `a * b + c`, fused where the ISA has FMA.
    fn madd(&mut self, a: Value, b: Value, c: Value) -> Value {
        if self.fma {
            self.b.ins().fma(a, b, c)
        } else {
            let p = self.b.ins().fmul(a, b);
            self.b.ins().fadd(p, c)
        }
    }

    /// `cond(a, b) ? t : f` lane-wise.
    fn sel(&mut self, cc: FloatCC, a: Value, b: Value, t: Value, f: Value) -> Value {
        let m = self.b.ins().fcmp(cc, a, b);
        let fl = MemFlagsData::new().with_endianness(Endianness::Little);
        let m = self.b.ins().bitcast(self.vt, fl, m);
        self.b.ins().bitselect(m, t, f)
    }

    /// `x` clamped to `[lo, hi]`; NaN stays NaN (the compares are false).
    fn clamp(&mut self, x: Value, lo: f64, hi: f64) -> Value {
        let l = self.c(lo);
        let h = self.c(hi);
        let x = self.sel(FloatCC::LessThan, x, l, l, x);
        // (h < x ? h : x rather than x > h ? h : x: the same lanes, NaN included,
        // in the operand order that Cranelift lowers to one `minps`)
        self.sel(FloatCC::LessThan, h, x, h, x)
    }

    /// Horner: `c[0] + x (c[1] + x (c[2] + …))`.
    fn horner(&mut self, x: Value, cs: &[f64]) -> Value {
        let mut acc = self.c(*cs.last().expect("coefficients"));
        for &k in cs.iter().rev().skip(1) {
            let kk = self.c(k);
            acc = self.madd(acc, x, kk);
        }
        acc
    }

    /// A constant `v + tail` (`tail`: what the f64 `v` misses of the true value)
    /// split as `hi + lo` with `hi` short enough that `n · hi` is exact for every
    /// `n` an exponent can take.
    fn split(&self, v: f64, tail: f64) -> (f64, f64) {
        if self.f64() {
            let hi = f64::from_bits(v.to_bits() & !((1u64 << 21) - 1));
            (hi, (v - hi) + tail)
        } else {
            let h = f32::from_bits((v as f32).to_bits() & !((1u32 << 12) - 1));
            (f64::from(h), v - f64::from(h))
        }
    }

    /// `2^k` for integer lanes `k` within the normal exponent range.
    fn pow2i(&mut self, k: Value) -> Value {
        let (mb, bias) = self.mant();
        let bias = self.ci(bias);
        let e = self.b.ins().iadd(k, bias);
        let e = self.b.ins().ishl_imm_s(e, mb);
        self.float(e)
    }

    /// `e^r - 1` for `|r| ≤ ln2/2` (Taylor; `r · (1 + r (1/2 + …))` keeps `-0`).
    fn expm1_poly(&mut self, r: Value) -> Value {
        let deg = if self.f64() { 13 } else { 7 };
        let mut cs = Vec::with_capacity(deg);
        let mut f = 1.0f64;
        for k in 1..=deg {
            f *= k as f64;
            cs.push(1.0 / f);
        }
        let q = self.horner(r, &cs);
        self.b.ins().fmul(r, q)
    }

    /// For `t = y + shifter` (`y` already rounded to an integer by it): the float
    /// `n` and the integer lanes `n`.
    fn shifted(&mut self, t: Value) -> (Value, Value) {
        let (mb, _) = self.mant();
        let sh = 1.5 * (mb as f64).exp2();
        let shv = self.c(sh);
        let nf = self.b.ins().fsub(t, shv);
        let tb = self.bits(t);
        let shb = self.bits_of(sh);
        let shb = self.ci(shb);
        let ni = self.b.ins().isub(tb, shb);
        (nf, ni)
    }

    /// `x = n ln2 + r`: returns `(e^r - 1, n as integer lanes)`; `x` must keep `n`
    /// within ±(2·bias) (callers clamp).
    fn exp_core(&mut self, x: Value) -> (Value, Value) {
        let (mb, _) = self.mant();
        let sh = self.c(1.5 * (mb as f64).exp2());
        let l2e = self.c(std::f64::consts::LOG2_E);
        let t = self.madd(x, l2e, sh);
        let (nf, ni) = self.shifted(t);
        let (hi, lo) = self.split(std::f64::consts::LN_2, LN_2_TAIL);
        let nhi = self.c(-hi);
        let nlo = self.c(-lo);
        let r = self.madd(nf, nhi, x);
        let r = self.madd(nf, nlo, r);
        (self.expm1_poly(r), ni)
    }

    /// `2^n` as two factors `(2^(n>>1), 2^(n - n>>1))`, each a normal number.
    fn scale2(&mut self, ni: Value) -> (Value, Value) {
        let n1 = self.b.ins().sshr_imm_s(ni, 1);
        let n2 = self.b.ins().isub(ni, n1);
        (self.pow2i(n1), self.pow2i(n2))
    }

    /// `(1 + p) · 2^n`, rounding once even when the result overflows or is subnormal.
    fn ldexp1p(&mut self, p: Value, ni: Value) -> Value {
        let (s1, s2) = self.scale2(ni);
        let y = self.madd(p, s1, s1);
        self.b.ins().fmul(y, s2)
    }

    fn exp(&mut self, x: Value) -> Value {
        // Beyond these e^x is inf or 0 in the lane type; inside them n fits scale2.
        let (lo, hi) = if self.f64() {
            (-746.0, 710.0)
        } else {
            (-104.0, 89.0)
        };
        let xc = self.clamp(x, lo, hi);
        let (p, ni) = self.exp_core(xc);
        self.ldexp1p(p, ni)
    }

    fn exp2(&mut self, x: Value) -> Value {
        let (lo, hi) = if self.f64() {
            (-1076.0, 1025.0)
        } else {
            (-151.0, 129.0)
        };
        let xc = self.clamp(x, lo, hi);
        let (mb, _) = self.mant();
        let shv = self.c(1.5 * (mb as f64).exp2());
        let t = self.b.ins().fadd(xc, shv);
        let (nf, ni) = self.shifted(t);
        // `xc - n` is exact; `· ln2` in two parts keeps `r` accurate.
        let f = self.b.ins().fsub(xc, nf);
        let (hi, lo) = self.split(std::f64::consts::LN_2, LN_2_TAIL);
        let h = self.c(hi);
        let l = self.c(lo);
        let rl = self.b.ins().fmul(f, l);
        let r = self.madd(f, h, rl);
        let p = self.expm1_poly(r);
        self.ldexp1p(p, ni)
    }

    /// `|x| < t ? x : y` (tiny arguments where `f(x)` rounds to `x`; keeps `-0`).
    fn tiny(&mut self, x: Value, t: f64, y: Value) -> Value {
        let a = self.b.ins().fabs(x);
        let tv = self.c(t);
        self.sel(FloatCC::LessThan, a, tv, x, y)
    }

    fn expm1(&mut self, x: Value) -> Value {
        // Below `lo` e^x - 1 rounds to -1; above `big` the `- 1` is below half an ulp.
        let (lo, big, hi, tiny) = if self.f64() {
            (-40.0, 40.0, 710.0, 1e-17)
        } else {
            (-20.0, 20.0, 89.0, 1e-8)
        };
        let xc = self.clamp(x, lo, hi);
        let (p, ni) = self.exp_core(xc);
        let (s1, s2) = self.scale2(ni);
        let s = self.b.ins().fmul(s1, s2);
        let one = self.c(1.0);
        let sm1 = self.b.ins().fsub(s, one);
        let small = self.madd(p, s, sm1);
        let y = self.madd(p, s1, s1);
        let large = self.b.ins().fmul(y, s2);
        let bigv = self.c(big);
        let r = self.sel(FloatCC::GreaterThan, x, bigv, large, small);
        self.tiny(x, tiny, r)
    }

    fn tanh(&mut self, x: Value) -> Value {
        // Beyond ±hi tanh rounds to ±1; inside, e^(2x) stays far from overflow so one
        // scale factor suffices.
        let (hi, tiny) = if self.f64() {
            (20.0, 1e-9)
        } else {
            (10.0, 1e-4)
        };
        let xc = self.clamp(x, -hi, hi);
        let y = self.b.ins().fadd(xc, xc);
        let (p, ni) = self.exp_core(y);
        let s = self.pow2i(ni);
        let one = self.c(1.0);
        let sm1 = self.b.ins().fsub(s, one);
        let em = self.madd(p, s, sm1);
        let two = self.c(2.0);
        let d = self.b.ins().fadd(em, two);
        let t = self.b.ins().fdiv(em, d);
        self.tiny(x, tiny, t)
    }

    /// float32 tanh as one rational function (the odd degree-13 over even degree-6
    /// minimax fit that Eigen and XLA publish for float32): about a third of the
    /// instructions of the `expm1` form, which makes W1 memory-bound instead of
    /// compute-bound. The fit reaches ±1 at the clamp (FMA and mul+add clamp at
    /// slightly different points, FACTS.md); `|x| < 4e-4` returns `x` (and keeps
    /// -0); NaN stays NaN through the clamp. Measured ≤ 5 ulp against libm
    /// (`runtime/tests/vmath_table.rs`).
    fn tanh_rational(&mut self, x: Value) -> Value {
        let clamp = if self.fma { TANH_CLAMP_FMA } else { TANH_CLAMP };
        let xc = self.clamp(x, -clamp, clamp);
        let x2 = self.b.ins().fmul(xc, xc);
        let p = self.horner(x2, &TANH_P);
        let p = self.b.ins().fmul(p, xc);
        let q = self.horner(x2, &TANH_Q);
        let t = self.b.ins().fdiv(p, q);
        self.tiny(x, TANH_TINY, t)
    }

    /// float32 `erf` from the interval table `ERF_COEFFS` (`scripts/fit_erf.py`,
    /// ≤ 2.2 ulp): `a = |x|`, interval `i = trunc(min(4a, 15))`, `t = a - i/4`
    /// (exact), `±P_i(t)` below 3.9375 and `±1` beyond. Each lane's coefficients
    /// are four scalar loads from the table (Cranelift has no gather); the
    /// runtime's routines pick the same ones with vector permutes. NaN reaches
    /// `t` and stays NaN (its interval is 0); `-0` stays `-0`.
    fn erf(&mut self, x: Value) -> Value {
        let a = self.b.ins().fabs(x);
        let inv = self.c(1.0 / ERF_STEP);
        let f = self.b.ins().fmul(a, inv);
        let last = self.c((ERF_COEFFS[0].len() - 1) as f64);
        // (15 < f ? 15 : f: NaN stays NaN, and converts to interval 0)
        let f = self.sel(FloatCC::LessThan, last, f, last, f);
        let i = self.b.ins().fcvt_to_sint_sat(I32X4, f);
        // (the mask changes nothing: it keeps every load inside the table)
        let mask = self.ci(ERF_COEFFS[0].len() as i64 - 1);
        let i = self.b.ins().band(i, mask);
        let fi = self.b.ins().fcvt_from_sint(F32X4, i);
        let step = self.c(ERF_STEP);
        let lo = self.b.ins().fmul(fi, step);
        let t = self.b.ins().fsub(a, lo);
        // Each lane's byte offset into a table row.
        let base = self.b.ins().iconst(I64, ERF_COEFFS.as_ptr() as i64);
        let rows: [Value; 4] = std::array::from_fn(|lane| {
            let k = self.b.ins().extractlane(i, lane as u8);
            let k = self.b.ins().uextend(I64, k);
            let k = self.b.ins().ishl_imm_u(k, 2);
            self.b.ins().iadd(base, k)
        });
        let row_bytes = std::mem::size_of_val(&ERF_COEFFS[0]) as i32;
        let coeff = |m: &mut Self, k: usize| {
            let flags = MemFlagsData::new().with_notrap().with_readonly();
            let off = row_bytes * k as i32;
            let v0 = m.b.ins().load(F32, flags, rows[0], off);
            let mut v = m.b.ins().scalar_to_vector(F32X4, v0);
            for (lane, &r) in rows.iter().enumerate().skip(1) {
                let s = m.b.ins().load(F32, flags, r, off);
                v = m.b.ins().insertlane(v, s, lane as u8);
            }
            v
        };
        let degree = ERF_COEFFS.len() - 1;
        let mut p = coeff(self, degree);
        for k in (0..degree).rev() {
            let c = coeff(self, k);
            p = self.madd(p, t, c);
        }
        let one = self.c(1.0);
        let t2 = self.c(ERF_T2);
        let p = self.sel(FloatCC::GreaterThanOrEqual, a, t2, one, p);
        // ±: the sign bit of `x` on the positive `p`.
        self.signed_as(p, x)
    }

    /// The non-negative `v` with the sign bit of `x` (its bit or'ed in).
    fn signed_as(&mut self, v: Value, x: Value) -> Value {
        let sign = self.c(-0.0);
        let xs = self.bits(x);
        let sb = self.bits(sign);
        let xs = self.b.ins().band(xs, sb);
        let vb = self.bits(v);
        let vb = self.b.ins().bor(vb, xs);
        self.float(vb)
    }

    /// float32 `sin`, `cos` or `tan`: `x = n·π/2 + r` with `n` rounded by the
    /// shifter and `r` reduced by the three parts of `PIO2` (one FMA each),
    /// then the Taylor series of `sin r` (to `r^9`) and `cos r` (to `r^10`) on
    /// `|r| ≲ π/4` (truncation below 2e-9 relative), picked and signed by `n`'s
    /// quadrant (`cos` is `sin` a quadrant on; `tan` is `sin r / cos r`, or
    /// `-cos r / sin r` in an odd quadrant). Lanes beyond `TRIG_BOUND`, ±inf
    /// and NaN take the interpreter's own function (`Trig::libm`), one call
    /// per lane, on a branch that only such a vector takes. `sin` and `tan`
    /// are `x` itself below `SIN_TINY` (`-0` included).
    fn trig(&mut self, x: Value, kind: Trig) -> Value {
        let sh = self.c(1.5 * 2f64.powi(23));
        let tpi = self.c(std::f64::consts::FRAC_2_PI);
        let t = self.madd(x, tpi, sh);
        let (nf, ni) = self.shifted(t);
        let mut r = x;
        for part in PIO2 {
            let p = self.c(-f64::from(part));
            r = self.madd(nf, p, r);
        }
        let z = self.b.ins().fmul(r, r);
        // sin r = r + r z S(z)
        let sp = self.horner(z, &SIN_TAYLOR);
        let rz = self.b.ins().fmul(r, z);
        let sr = self.madd(rz, sp, r);
        // cos r = (1 - z/2) + z² C(z)
        let cp = self.horner(z, &COS_TAYLOR);
        let half = self.c(0.5);
        let hz = self.b.ins().fmul(half, z);
        let one = self.c(1.0);
        let w = self.b.ins().fsub(one, hz);
        let z2 = self.b.ins().fmul(z, z);
        let cr = self.madd(z2, cp, w);
        // quadrant q = n (+1 for cos): odd → the cosine, q & 2 → negated
        let q = if kind == Trig::Cos {
            let one = self.ci(1);
            self.b.ins().iadd(ni, one)
        } else {
            ni
        };
        let bit0 = self.ci(1);
        let odd = self.b.ins().band(q, bit0);
        let odd = self.b.ins().icmp(IntCC::Equal, odd, bit0);
        let odd = self.float(odd);
        let poly = if kind == Trig::Tan {
            let ncr = self.b.ins().fneg(cr);
            let num = self.b.ins().bitselect(odd, ncr, sr);
            let den = self.b.ins().bitselect(odd, sr, cr);
            self.b.ins().fdiv(num, den)
        } else {
            let v = self.b.ins().bitselect(odd, cr, sr);
            let neg = self.b.ins().ishl_imm_s(q, 30);
            let signbit = self.ci(i64::from(i32::MIN));
            let neg = self.b.ins().band(neg, signbit);
            let vb = self.bits(v);
            let vb = self.b.ins().bxor(vb, neg);
            self.float(vb)
        };
        // (sin x and tan x round to x below 2^-12, and the reduction's sums
        // lose -0)
        let poly = if kind == Trig::Cos {
            poly
        } else {
            self.tiny(x, SIN_TINY.into(), poly)
        };
        // the lanes the reduction does not cover
        let a = self.b.ins().fabs(x);
        let bound = self.c(f64::from(TRIG_BOUND));
        let far = self.b.ins().fcmp(FloatCC::UnorderedOrGreaterThan, a, bound);
        let any = self.b.ins().vany_true(far);
        let slow = self.b.create_block();
        let done = self.b.create_block();
        let out = self.b.append_block_param(done, self.vt);
        self.b
            .ins()
            .brif(any, slow, &[], done, &[BlockArg::Value(poly)]);
        self.b.seal_block(slow);
        self.b.set_cold_block(slow);
        self.b.switch_to_block(slow);
        let f = kind.libm();
        let mut sig = Signature::new(self.b.func.signature.call_conv);
        sig.params.push(AbiParam::new(F32));
        sig.returns.push(AbiParam::new(F32));
        let sig = self.b.import_signature(sig);
        let callee = self.b.ins().iconst(I64, f as usize as i64);
        let mut libm = poly;
        for lane in 0..4u8 {
            let xl = self.b.ins().extractlane(x, lane);
            let call = self.b.ins().call_indirect(sig, callee, &[xl]);
            let y = self.b.inst_results(call)[0];
            libm = self.b.ins().insertlane(libm, y, lane);
        }
        let far = self.float(far);
        let mixed = self.b.ins().bitselect(far, libm, poly);
        self.b.ins().jump(done, &[BlockArg::Value(mixed)]);
        self.b.seal_block(done);
        self.b.switch_to_block(done);
        out
    }

    /// float32 `atan`: `a = |x|` reduced to `|t| ≤ tan(π/8)` as `t = -1/a`
    /// (beyond `tan(3π/8)`, adding π/2) or `t = (a - 1)/(a + 1)` (beyond
    /// `tan(π/8)`, adding π/4), then the Taylor series `t + t·z·A(z)`; the
    /// added angle in two parts (its float32 value and the rest), the sign of
    /// `x` put back last (`-0` stays, NaN stays NaN, ±inf gives ±π/2).
    fn atan(&mut self, x: Value) -> Value {
        let a = self.b.ins().fabs(x);
        let one = self.c(1.0);
        let am1 = self.b.ins().fsub(a, one);
        let ap1 = self.b.ins().fadd(a, one);
        let mid = self.b.ins().fdiv(am1, ap1);
        let inv = self.b.ins().fdiv(one, a);
        let ninv = self.b.ins().fneg(inv);
        let t8 = self.c(ATAN_T8);
        let t38 = self.c(ATAN_T38);
        let zero = self.c(0.0);
        let (q_hi, q_lo) = self.angle(std::f64::consts::FRAC_PI_4);
        let (h_hi, h_lo) = self.angle(std::f64::consts::FRAC_PI_2);
        let t = self.sel(FloatCC::GreaterThan, a, t8, mid, a);
        let t = self.sel(FloatCC::GreaterThan, a, t38, ninv, t);
        let hi = self.sel(FloatCC::GreaterThan, a, t8, q_hi, zero);
        let hi = self.sel(FloatCC::GreaterThan, a, t38, h_hi, hi);
        let lo = self.sel(FloatCC::GreaterThan, a, t8, q_lo, zero);
        let lo = self.sel(FloatCC::GreaterThan, a, t38, h_lo, lo);
        let z = self.b.ins().fmul(t, t);
        let p = self.horner(z, &ATAN_TAYLOR);
        let tz = self.b.ins().fmul(t, z);
        let y = self.madd(tz, p, t);
        let y = self.b.ins().fadd(lo, y);
        let y = self.b.ins().fadd(hi, y);
        self.signed_as(y, x)
    }

    /// float32 `sinh` (or `cosh`) of `a = |x|` from `e = e^a`: `(e ∓ 1/e)/2`
    /// up to 9, `(h/2)·h` with `h = e^(a/2)` beyond (where `1/e` is below
    /// half an ulp, and `e^a` alone would overflow before the result does);
    /// `sinh` takes the sign of `x` back, and below 1 its Taylor series
    /// instead (no cancellation; `-0` stays). NaN stays NaN, ±inf gives ±inf
    /// (`cosh`: +inf).
    fn hyperbolic(&mut self, x: Value, cosh: bool) -> Value {
        let a = self.b.ins().fabs(x);
        let e = self.exp(a);
        let one = self.c(1.0);
        let ie = self.b.ins().fdiv(one, e);
        let half = self.c(0.5);
        let sum = if cosh {
            self.b.ins().fadd(e, ie)
        } else {
            self.b.ins().fsub(e, ie)
        };
        let mid = self.b.ins().fmul(half, sum);
        let ha = self.b.ins().fmul(half, a);
        let h = self.exp(ha);
        let hh = self.b.ins().fmul(half, h);
        let large = self.b.ins().fmul(hh, h);
        let nine = self.c(9.0);
        let r = self.sel(FloatCC::GreaterThan, a, nine, large, mid);
        if cosh {
            return r;
        }
        let r = self.signed_as(r, x);
        let z = self.b.ins().fmul(x, x);
        let p = self.horner(z, &SINH_TAYLOR);
        let xz = self.b.ins().fmul(x, z);
        let small = self.madd(xz, p, x);
        self.sel(FloatCC::LessThan, a, one, small, r)
    }

    /// The float32 value of `v` and the rest (`v` minus it), splatted.
    fn angle(&mut self, v: f64) -> (Value, Value) {
        let hi = f64::from(v as f32);
        (self.c(hi), self.c(v - hi))
    }

    /// `1 + e^-x` (the denominator of sigmoid and silu).
    fn one_plus_exp_neg(&mut self, x: Value) -> Value {
        let nx = self.b.ins().fneg(x);
        let e = self.exp(nx);
        let one = self.c(1.0);
        self.b.ins().fadd(one, e)
    }

    /// `x = 2^k m`, `m ∈ [√½, √2)`: returns `(k as float, f = m - 1)`; for positive
    /// finite `x` (subnormals included); other inputs give garbage the callers
    /// replace.
    fn log_reduce(&mut self, x: Value) -> (Value, Value) {
        let (mb, _) = self.mant();
        // Subnormals: scale into the normal range first.
        let (minn, up) = if self.f64() {
            (f64::MIN_POSITIVE, 54)
        } else {
            (f64::from(f32::MIN_POSITIVE), 25)
        };
        let mv = self.c(minn);
        let upv = self.c((up as f64).exp2());
        let xs = self.b.ins().fmul(x, upv);
        let z = self.c(0.0);
        let upf = self.c(-(up as f64));
        let kadj = self.sel(FloatCC::LessThan, x, mv, upf, z);
        let x = self.sel(FloatCC::LessThan, x, mv, xs, x);
        let sq = self.bits_of(std::f64::consts::FRAC_1_SQRT_2);
        let sqv = self.ci(sq);
        let ix = self.bits(x);
        let ix = self.b.ins().isub(ix, sqv);
        let k = self.b.ins().sshr_imm_s(ix, mb);
        let mask = self.ci((1i64 << mb) - 1);
        let mbits = self.b.ins().band(ix, mask);
        let mbits = self.b.ins().iadd(mbits, sqv);
        let m = self.float(mbits);
        let one = self.c(1.0);
        let f = self.b.ins().fsub(m, one);
        // k to float without a vector int→float conversion: k + shifter's bits.
        let shf = 1.5 * (mb as f64).exp2();
        let shb = self.bits_of(shf);
        let shb = self.ci(shb);
        let kb = self.b.ins().iadd(k, shb);
        let kf = self.float(kb);
        let shv = self.c(shf);
        let kf = self.b.ins().fsub(kf, shv);
        let kf = self.b.ins().fadd(kf, kadj);
        (kf, f)
    }

    /// `ln(1 + f)` for `f ∈ [√½ - 1, √2 - 1]`, plus `c` added at the small end.
    fn log1p_f(&mut self, f: Value) -> Value {
        let terms = if self.f64() { 11 } else { 5 };
        let two = self.c(2.0);
        let d = self.b.ins().fadd(two, f);
        let s = self.b.ins().fdiv(f, d);
        let z = self.b.ins().fmul(s, s);
        let cs: Vec<f64> = (1..=terms).map(|k| 2.0 / (2 * k + 1) as f64).collect();
        let q = self.horner(z, &cs);
        let r = self.b.ins().fmul(z, q);
        let half = self.c(0.5);
        let hf = self.b.ins().fmul(half, f);
        let hfsq = self.b.ins().fmul(hf, f);
        let t = self.b.ins().fadd(hfsq, r);
        let st = self.b.ins().fmul(s, t);
        let u = self.b.ins().fsub(hfsq, st);
        self.b.ins().fsub(f, u)
    }

    /// `k·log_b(2) + lp·log_b(e)` with `k` exact and `c` (a correction of `lp`).
    fn log_combine(&mut self, kind: LogKind, kf: Value, lp: Value) -> Value {
        match kind {
            LogKind::Ln => {
                let (hi, lo) = self.split(std::f64::consts::LN_2, LN_2_TAIL);
                let lov = self.c(lo);
                let hiv = self.c(hi);
                let t = self.madd(kf, lov, lp);
                self.madd(kf, hiv, t)
            }
            LogKind::Log2 => {
                let l2e = self.c(std::f64::consts::LOG2_E);
                self.madd(lp, l2e, kf)
            }
            LogKind::Log10 => {
                let (hi, lo) = self.split(std::f64::consts::LOG10_2, LOG10_2_TAIL);
                let lov = self.c(lo);
                let hiv = self.c(hi);
                let l10e = self.c(std::f64::consts::LOG10_E);
                let t = self.b.ins().fmul(lp, l10e);
                let t = self.madd(kf, lov, t);
                self.madd(kf, hiv, t)
            }
        }
    }

    /// The special values of a logarithm of `u`: `u = 0` → -inf, `u < 0` or NaN →
    /// NaN, `u = +inf` → +inf.
    fn log_specials(&mut self, u: Value, zero_at: f64, r: Value) -> Value {
        let z = self.c(zero_at);
        let ninf = self.c(f64::NEG_INFINITY);
        let inf = self.c(f64::INFINITY);
        let nan = self.c(f64::NAN);
        let r = self.sel(FloatCC::Equal, u, inf, inf, r);
        let r = self.sel(FloatCC::Equal, u, z, ninf, r);
        self.sel(FloatCC::UnorderedOrLessThan, u, z, nan, r)
    }

    fn log_kind(&mut self, x: Value, kind: LogKind) -> Value {
        let (kf, f) = self.log_reduce(x);
        let lp = self.log1p_f(f);
        let r = self.log_combine(kind, kf, lp);
        self.log_specials(x, 0.0, r)
    }

    fn log1p(&mut self, x: Value) -> Value {
        let one = self.c(1.0);
        let u = self.b.ins().fadd(one, x);
        let (kf, f) = self.log_reduce(u);
        let lp = self.log1p_f(f);
        // The rounding of `1 + x`, added back: ln(u + d) ≈ ln u + d/u.
        let um1 = self.b.ins().fsub(u, one);
        let d = self.b.ins().fsub(x, um1);
        let c = self.b.ins().fdiv(d, u);
        let lp = self.b.ins().fadd(lp, c);
        let r = self.log_combine(LogKind::Ln, kf, lp);
        let tiny = if self.f64() { 1e-17 } else { 1e-8 };
        let r = self.tiny(x, tiny, r);
        self.log_specials(x, -1.0, r)
    }
}

/// Whether the module's ISA fuses `fma` into one instruction (x86-64 needs both
/// AVX and FMA; aarch64 always has it).
pub(super) fn isa_has_fma(module: &cranelift_jit::JITModule) -> bool {
    use cranelift_module::Module;
    let isa = module.isa();
    if isa.name() == "aarch64" {
        return true;
    }
    if isa.name() != "x64" {
        return false;
    }
    let flags = isa.isa_flags();
    let on = |n: &str| {
        flags
            .iter()
            .any(|f| f.name == n && f.as_bool() == Some(true))
    };
    on("has_fma") && on("has_avx")
}
