//! float16 and bfloat16 lanes in the mixed vector tier: rounding an `f32x4` to
//! the narrow dtype (what every op of that dtype does after computing in float32,
//! as the scalar code's `round` does) and packing lanes into the 16-bit codes a
//! store writes.
//!
//! Both are `half`'s conversions bit for bit: round to nearest even, overflow to
//! ±inf, float16 subnormals on their 2^-24 grid, signed zeros kept, and a NaN
//! keeping its upper payload bits with the quiet bit set. The rounding works on
//! the bit pattern: adding `0x0FFF` (bfloat16: `0x7FFF`) plus the kept part's
//! lowest bit, then clearing the dropped bits, rounds the magnitude to nearest
//! even, a carry moving into the exponent as it should; float16 subnormals take
//! `(a + ½) - ½` instead, whose float32 addition rounds to the 2^-24 grid.
//!
//! A value that only stores read is not rounded where it is computed: the
//! float16 store's packing rounds on its own (the same steps on the way to the
//! code), and a bfloat16 store rounds before it packs, so each such value is
//! rounded once instead of rounded and then re-encoded.

use super::Lower;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, I16, I32, I32X4, I64X2};
use cranelift_codegen::ir::{InstBuilder, Value};
use lazyfuse_ir::kernel::LoopKernel;
use lazyfuse_ir::DType;

/// The smallest normal float16, `2^-14`.
const F16_MIN_NORMAL: f32 = 6.103_515_6e-5;

impl Lower<'_, '_> {
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
        let keep = match dt {
            DType::F16 => 13,
            DType::BF16 => 16,
            _ => return x,
        };
        let bits = self.vbitcast(I32X4, x);
        let lsb = self.b.ins().ushr_imm_s(bits, keep);
        let one = self.bits32(1);
        let lsb = self.b.ins().band(lsb, one);
        let bias = self.bits32((1 << (keep - 1)) - 1);
        let mask = self.bits32(!((1u32 << keep) - 1));
        let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let quiet = self.bits32(0x0040_0000);
        let q = self.b.ins().bor(bits, quiet);
        let q = self.b.ins().band(q, mask);
        let r = if dt == DType::BF16 {
            let r = self.b.ins().iadd(bits, bias);
            let r = self.b.ins().iadd(r, lsb);
            self.b.ins().band(r, mask)
        } else {
            let signm = self.bits32(0x8000_0000);
            let sign = self.b.ins().band(bits, signm);
            let absm = self.bits32(0x7FFF_FFFF);
            let abits = self.b.ins().band(bits, absm);
            let a = self.vbitcast(F32X4, abits);
            let r = self.b.ins().iadd(abits, bias);
            let r = self.b.ins().iadd(r, lsb);
            let normal = self.b.ins().band(r, mask);
            let half = self.f32x4(0.5);
            let s = self.b.ins().fadd(a, half);
            let s = self.b.ins().fsub(s, half);
            let s = self.vbitcast(I32X4, s);
            let min = self.f32x4(F16_MIN_NORMAL);
            let small = self.b.ins().fcmp(FloatCC::LessThan, a, min);
            let r = self.b.ins().bitselect(small, s, normal);
            let rf = self.vbitcast(F32X4, r);
            let max = self.f32x4(65504.0);
            let big = self.b.ins().fcmp(FloatCC::GreaterThan, rf, max);
            let inf = self.bits32(0x7F80_0000);
            let r = self.b.ins().bitselect(big, inf, r);
            self.b.ins().bor(r, sign)
        };
        let r = self.b.ins().bitselect(nan, q, r);
        self.vbitcast(F32X4, r)
    }

    /// Expression `i`'s `f32x4` value `x` rounded to its dtype, or left for its
    /// stores to round where only stores read it ([`store_rounded`]).
    pub(super) fn vround_unless_stored(&mut self, i: usize, x: Value) -> Value {
        if self.store_rounds[i] {
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
            let signm = self.bits32(0x8000_0000);
            let sign = self.b.ins().band(bits, signm);
            let sign = self.b.ins().ushr_imm_s(sign, 16);
            let absm = self.bits32(0x7FFF_FFFF);
            let abits = self.b.ins().band(bits, absm);
            let a = self.vbitcast(F32X4, abits);
            // normals: the magnitude rounded on its bits (a carry moves into the
            // exponent), the exponent rebiased from 127 to 15; past 65504 the
            // code reaches or passes 0x7C00 and is held at ±inf
            let shifted = self.b.ins().ushr_imm_s(abits, 13);
            let one = self.bits32(1);
            let lsb = self.b.ins().band(shifted, one);
            let bias = self.bits32(0x0FFF);
            let r = self.b.ins().iadd(abits, bias);
            let r = self.b.ins().iadd(r, lsb);
            let r = self.b.ins().ushr_imm_s(r, 13);
            let rebias = self.bits32((127 - 15) << 10);
            let normal = self.b.ins().isub(r, rebias);
            let inf16 = self.bits32(0x7C00);
            let normal = self.b.ins().umin(normal, inf16);
            // subnormals: ½ + a rounds a to the 2^-24 grid in its low bits (a
            // value rounding up to 2^-14 becomes the smallest normal's code)
            let half = self.f32x4(0.5);
            let s = self.b.ins().fadd(a, half);
            let s = self.vbitcast(I32X4, s);
            let half_bits = self.bits32(0.5f32.to_bits());
            let sub = self.b.ins().isub(s, half_bits);
            // inf and NaN: all exponent bits; a NaN keeps its payload's top 10
            // bits with the quiet bit set
            let quiet = self.bits32(0x200);
            let payload = self.b.ins().bor(shifted, quiet);
            let man = self.bits32(0x3FF);
            let payload = self.b.ins().band(payload, man);
            let nan = self.b.ins().bor(payload, inf16);
            let min = self.f32x4(F16_MIN_NORMAL);
            let small = self.b.ins().fcmp(FloatCC::LessThan, a, min);
            let infb = self.bits32(0x7F80_0000);
            let is_nan = self.b.ins().icmp(IntCC::SignedGreaterThan, abits, infb);
            let h = self.b.ins().bitselect(small, sub, normal);
            let h = self.b.ins().bitselect(is_nan, nan, h);
            self.b.ins().bor(h, sign)
        }
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
