//! float16 and bfloat16 lanes in the mixed vector tier: rounding an `f32x4` to
//! the narrow dtype (what every op of that dtype does after computing in float32,
//! as the scalar code's `round` does) and packing lanes into the 16-bit codes a
//! store writes.
//!
//! Both are `half`'s conversions bit for bit: round to nearest even, overflow to
//! ±inf, float16 subnormals on their 2^-24 grid, signed zeros kept, and a NaN
//! keeping its upper payload bits with the quiet bit set. bfloat16 rounds on the
//! bit pattern: adding `0x7FFF` plus the kept part's lowest bit, then clearing
//! the dropped bits, rounds the magnitude to nearest even, a carry moving into
//! the exponent as it should. float16 rounds with a float32 addition: a
//! power of two chosen from the magnitude's exponent leaves float32 exactly
//! float16's grid there (subnormals included), so `(a + m) - m` is the rounded
//! magnitude, a dozen instructions where the bit-pattern form took twice that.
//!
//! A value that only stores read is not rounded where it is computed: the
//! float16 store's packing rounds on its own (the same steps on the way to the
//! code), and a bfloat16 store rounds before it packs, so each such value is
//! rounded once instead of rounded and then re-encoded.

use super::vaffine_run::STREAM_BYTES;
use super::Lower;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::types::{F32X4, I16, I32, I32X4, I64X2};
use cranelift_codegen::ir::{InstBuilder, Value};
use lazyfuse_ir::kernel::{Expr, LoopKernel};
use lazyfuse_ir::{BinaryOp, DType, UnaryOp};

/// Fewest bytes of codes a streamed narrowing writes per call: measured on
/// float16 softmax rows of a 32 MiB output, rows of 1 KiB streamed were slower
/// than plain stores and rows of 2 KiB and more faster (a short burst of
/// streamed lines waits for them to leave before the kernel goes on).
const STREAM_BURST_BYTES: usize = 2048;

impl Lower<'_, '_> {
    /// The routine that rounds float32 values into the float16 or bfloat16
    /// (`dt`) codes of the kernel's parameter `param`, `burst` of them per
    /// call at most: `lf_narrow_<dt>_stream` (the same codes, whole lines
    /// stored past the caches) for an output far larger than the caches
    /// (`vaffine_run::STREAM_BYTES`), which nothing reads back soon, written
    /// in bursts of at least [`STREAM_BURST_BYTES`]; else `lf_narrow_<dt>`.
    pub(super) fn narrow_routine(&self, param: usize, dt: DType, burst: usize) -> &'static str {
        let out = &self.k.params[param];
        let size = dt.size_in_bytes();
        let stream = out.len.saturating_mul(size) >= STREAM_BYTES
            && burst.saturating_mul(size) >= STREAM_BURST_BYTES;
        match (dt, stream) {
            (DType::F16, false) => "lf_narrow_f16",
            (DType::F16, true) => "lf_narrow_f16_stream",
            (_, false) => "lf_narrow_bf16",
            (_, true) => "lf_narrow_bf16_stream",
        }
    }

    /// A splat of the 32-bit pattern `v`.
    fn bits32(&mut self, v: u32) -> Value {
        let s = self.iconst(I32, i64::from(v as i32));
        self.b.ins().splat(I32X4, s)
    }

    /// A splat of the float32 `v`.
    fn f32x4(&mut self, v: f32) -> Value {
        let s = self.b.ins().f32const(v);
        self.b.ins().splat(F32X4, s)
    }

    /// `f32x4` lanes rounded to `dt` (float16 or bfloat16; others unchanged), as
    /// `half::{f16, bf16}::from_f32(x).to_f32()`.
    pub(super) fn vround_narrow(&mut self, x: Value, dt: DType) -> Value {
        match dt {
            DType::F16 => {
                let (magnitude, sign) = self.vround_f16_magnitude(x);
                let r = self.b.ins().bor(magnitude, sign);
                // a NaN keeps the top ten bits of its payload (a rounded finite
                // lane or an infinity has none of the dropped bits set)
                let keep = self.bits32(!0x1FFF);
                let r = self.b.ins().band(r, keep);
                self.vbitcast(F32X4, r)
            }
            DType::BF16 => {
                let bits = self.vbitcast(I32X4, x);
                let lsb = self.b.ins().ushr_imm_s(bits, 16);
                let one = self.bits32(1);
                let lsb = self.b.ins().band(lsb, one);
                let bias = self.bits32(0x7FFF);
                let mask = self.bits32(0xFFFF_0000);
                let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
                let quiet = self.bits32(0x0040_0000);
                let q = self.b.ins().bor(bits, quiet);
                let q = self.b.ins().band(q, mask);
                let r = self.b.ins().iadd(bits, bias);
                let r = self.b.ins().iadd(r, lsb);
                let r = self.b.ins().band(r, mask);
                let r = self.b.ins().bitselect(nan, q, r);
                self.vbitcast(F32X4, r)
            }
            _ => x,
        }
    }

    /// The magnitudes of `x`'s lanes rounded to float16 (as `i32x4` float32
    /// bits: an infinity past 65504, a NaN quieted with its whole payload) and
    /// the lanes' sign bits.
    ///
    /// Adding `m = 2^(e+13)` to a magnitude of exponent `e` leaves float32 a
    /// grid of `2^(e-10)`, float16's spacing at that exponent, so the addition
    /// rounds to nearest even on float16's grid and subtracting `m` again is
    /// exact; below float16's smallest normal `m` stays `2^-1`, whose grid of
    /// `2^-24` is that of its subnormals. A carry into the next binade comes out
    /// as it should. Magnitudes from 65520 (the tie between 65504 and 2^16,
    /// rounding to even: up) become infinity; that compare also keeps the
    /// exponents that `m` would overflow away from the result. A NaN passes the
    /// addition quieted (x86 keeps the first operand's payload), as
    /// `half::f16::from_f32` quiets it.
    fn vround_f16_magnitude(&mut self, x: Value) -> (Value, Value) {
        let bits = self.vbitcast(I32X4, x);
        let absm = self.bits32(0x7FFF_FFFF);
        let abits = self.b.ins().band(bits, absm);
        let sign = self.b.ins().bxor(bits, abits);
        let a = self.vbitcast(F32X4, abits);
        let expm = self.bits32(0x7F80_0000);
        let e = self.b.ins().band(abits, expm);
        let min_e = self.bits32(113 << 23);
        let e = self.b.ins().umax(e, min_e);
        let shift = self.bits32(13 << 23);
        let m = self.b.ins().iadd(e, shift);
        let m = self.vbitcast(F32X4, m);
        let s = self.b.ins().fadd(a, m);
        let r = self.b.ins().fsub(s, m);
        let r = self.vbitcast(I32X4, r);
        let tie = self.f32x4(65520.0);
        let big = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, a, tie);
        let r = self.b.ins().bitselect(big, expm, r);
        (r, sign)
    }

    /// Expression `i`'s `f32x4` value `x` rounded to its dtype, or left for its
    /// stores to round where only stores read it ([`store_rounded`]), or as it
    /// is where the op returns one of its operands' values ([`returns_operand`]).
    pub(super) fn vround_unless_stored(&mut self, i: usize, x: Value) -> Value {
        if self.store_rounds[i] || returns_operand(self.k, i) {
            x
        } else {
            self.vround_narrow(x, self.k.exprs[i].dtype)
        }
    }

    /// Four float16 or bfloat16 codes at `addr + off` (or one, splat) as the
    /// `f32x4` of their exact values.
    pub(super) fn vload_narrow(&mut self, addr: Value, off: i32, splat: bool, dt: DType) -> Value {
        let bits = if splat {
            let h = self.b.ins().load(I16, super::flags(), addr, off);
            let w = self.b.ins().uextend(I32, h);
            self.b.ins().splat(I32X4, w)
        } else {
            self.b.ins().uload16x4(super::flags(), addr, off)
        };
        if dt == DType::F16 {
            self.vf16_to_f32(bits)
        } else {
            // bfloat16 is the upper half of a float32.
            let w = self.b.ins().ishl_imm_s(bits, 16);
            self.vbitcast(F32X4, w)
        }
    }

    /// Stores `x` (float16 or bfloat16 lanes; `rounded`: already rounded to `dt`,
    /// else float32 values the store rounds) as four 16-bit codes at `addr`.
    pub(super) fn vstore_narrow(
        &mut self,
        x: Value,
        dt: DType,
        addr: Value,
        off: i32,
        rounded: bool,
    ) {
        let x = if rounded || dt == DType::F16 {
            x
        } else {
            self.vround_narrow(x, dt)
        };
        let codes = self.vcodes_narrow(x, dt);
        let packed = self.b.ins().unarrow(codes, codes);
        let packed = self.vbitcast(I64X2, packed);
        let lo = self.b.ins().extractlane(packed, 0);
        self.b.ins().store(super::flags(), lo, addr, off);
    }

    /// The scalar `v` (rounded to float16) as its 16-bit code, in an `i32` (the
    /// vector code on a splat, lane 0).
    pub(super) fn f16_code(&mut self, v: Value) -> Value {
        let s = self.b.ins().splat(F32X4, v);
        let c = self.vcodes_narrow(s, DType::F16);
        self.b.ins().extractlane(c, 0)
    }

    /// The 16-bit codes (in `i32x4` lanes) of `x`: for bfloat16 its lanes are
    /// rounded already; float16 rounds any float32 lanes itself (to nearest even,
    /// `vround_narrow` and the exact encoding in one: a rounded lane is kept).
    fn vcodes_narrow(&mut self, x: Value, dt: DType) -> Value {
        let bits = self.vbitcast(I32X4, x);
        if dt == DType::BF16 {
            self.b.ins().ushr_imm_s(bits, 16)
        } else {
            // a rounded magnitude times 2^-112 puts float16's exponent range
            // onto float32's from its subnormals up (exactly: a float16
            // subnormal's multiple of 2^-24 lands on float32's 2^-149 grid), so
            // its bits shifted right by 13 are the code; an infinity or NaN
            // comes out 0x38000 past its code (0x3FC00 for 0x7C00), which the
            // wrapping difference picks where it is the smaller
            let (magnitude, sign) = self.vround_f16_magnitude(x);
            let a = self.vbitcast(F32X4, magnitude);
            let scale = self.f32x4(2f32.powi(-112));
            let a = self.b.ins().fmul(a, scale);
            let a = self.vbitcast(I32X4, a);
            let code = self.b.ins().ushr_imm_s(a, 13);
            let off = self.bits32(0x38000);
            let special = self.b.ins().isub(code, off);
            let code = self.b.ins().umin(code, special);
            let sign = self.b.ins().ushr_imm_s(sign, 16);
            self.b.ins().bor(code, sign)
        }
    }
}

/// Whether expression `i` of `k` gives one of its operands' values, or its
/// negation, exactly (`relu`, `abs`, `neg`, `maximum`, `minimum` of operands of
/// its own dtype that are not constants): such operands are rounded to the
/// dtype already (loads, casts and every other op round them; a constant is
/// made from its float64 value as it stands, so it is left out), the result
/// is too, and rounding it again would change no bit (a NaN is quiet with its
/// payload in the dtype's bits already). W1 in float16 rounds four values per
/// point instead of five.
pub(super) fn returns_operand(k: &LoopKernel, i: usize) -> bool {
    let e = &k.exprs[i];
    let own = |x: &lazyfuse_ir::kernel::ExprId| {
        let o = &k.exprs[x.0 as usize];
        o.dtype == e.dtype && !matches!(o.expr, Expr::Const(_))
    };
    match &e.expr {
        Expr::Unary { op, x } => {
            matches!(op, UnaryOp::Relu | UnaryOp::Abs | UnaryOp::Neg) && own(x)
        }
        Expr::Binary { op, a, b } => {
            matches!(op, BinaryOp::Maximum | BinaryOp::Minimum) && own(a) && own(b)
        }
        _ => false,
    }
}

/// The float16/bfloat16 expressions of `k` that only stores read (no needed
/// expression takes them as an operand): the vector tiers skip their rounding and
/// their stores round (`vstore_narrow`), which gives the same codes (rounding a
/// rounded value changes nothing) in one pass instead of two.
pub(super) fn store_rounded(k: &LoopKernel, needed: &[bool]) -> Vec<bool> {
    let mut read = vec![false; k.exprs.len()];
    for (i, e) in k.exprs.iter().enumerate() {
        if needed[i] {
            for o in LoopKernel::operands(&e.expr) {
                read[o.0 as usize] = true;
            }
        }
    }
    let mut out = vec![false; k.exprs.len()];
    for s in &k.stores {
        let i = s.value.0 as usize;
        out[i] = matches!(k.exprs[i].dtype, DType::F16 | DType::BF16) && !read[i];
    }
    out
}
