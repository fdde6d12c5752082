//! The scalar ops with the interpreter's semantics: unary, parameterised unary,
//! binary (integer division by zero sets the status), and casts.

use super::{fsuffix, reg, rep, unsupported, vector_param_ok, Lower, Rep, R};
use crate::semantics::{self, IntClamp};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F64, I16, I32, I64, I8};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value};
use lazyfuse_ir::kernel::param_code;
use lazyfuse_ir::kernel::{MathMode, Status};
use lazyfuse_ir::op::Op;
use lazyfuse_ir::{BinaryOp, DType, UnaryOp, UnaryParamOp};

impl Lower<'_, '_> {
    pub(super) fn unary(&mut self, op: UnaryOp, v: Value, dt: DType) -> R<Value> {
        use UnaryOp::*;
        let r = rep(dt)?;
        let name = Op::Unary(op).name();
        match r {
            Rep::Bool => Ok(match op {
                Sign | Sgn | Relu | Floor | Ceil | Round | Trunc => v,
                LogicalNot | BitwiseNot => self.b.ins().bxor_imm_s(v, 1),
                IsNan | IsInf | IsPosInf | IsNegInf | Signbit => self.iconst(I8, 0),
                IsFinite | IsReal => self.iconst(I8, 1),
                _ => return Err(unsupported(name, dt)),
            }),
            Rep::Int { ty, signed } => Ok(match op {
                Neg => self.b.ins().ineg(v),
                Abs if signed => {
                    let n = self.b.ins().ineg(v);
                    let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0);
                    self.b.ins().select(neg, n, v)
                }
                Abs => v,
                Sign | Sgn => {
                    let one = self.iconst(ty, 1);
                    let zero = self.iconst(ty, 0);
                    let pos = self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0);
                    let s = self.b.ins().select(pos, one, zero);
                    if signed {
                        let m1 = self.iconst(ty, -1);
                        let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0);
                        self.b.ins().select(neg, m1, s)
                    } else {
                        s
                    }
                }
                Relu if signed => {
                    let zero = self.iconst(ty, 0);
                    let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0);
                    self.b.ins().select(neg, zero, v)
                }
                Relu | Floor | Ceil | Round | Trunc => v,
                LogicalNot => self.b.ins().icmp_imm_s(IntCC::Equal, v, 0),
                BitwiseNot => self.b.ins().bnot(v),
                Square => self.b.ins().imul(v, v),
                IsNan | IsInf | IsPosInf | IsNegInf => self.iconst(I8, 0),
                IsFinite | IsReal => self.iconst(I8, 1),
                Signbit if signed => self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0),
                Signbit => self.iconst(I8, 0),
                _ => return Err(unsupported(name, dt)),
            }),
            Rep::F32 | Rep::F64 => {
                let fty = reg(r);
                let out = match op {
                    Neg => self.b.ins().fneg(v),
                    Abs => self.b.ins().fabs(v),
                    Sqrt => self.b.ins().sqrt(v),
                    Rsqrt => {
                        let s = self.b.ins().sqrt(v);
                        let one = self.fconst(r, 1.0);
                        self.b.ins().fdiv(one, s)
                    }
                    Reciprocal => {
                        let one = self.fconst(r, 1.0);
                        self.b.ins().fdiv(one, v)
                    }
                    Floor => self.b.ins().floor(v),
                    Ceil => self.b.ins().ceil(v),
                    Trunc => self.b.ins().trunc(v),
                    Round => self.b.ins().nearest(v),
                    Frac => {
                        let t = self.b.ins().trunc(v);
                        self.b.ins().fsub(v, t)
                    }
                    Square => self.b.ins().fmul(v, v),
                    Relu => {
                        let z = self.zero(r);
                        let lt = self.b.ins().fcmp(FloatCC::LessThan, v, z);
                        self.b.ins().select(lt, z, v)
                    }
                    Sign | Sgn => {
                        let z = self.zero(r);
                        let one = self.fconst(r, 1.0);
                        let m1 = self.fconst(r, -1.0);
                        let lt = self.b.ins().fcmp(FloatCC::LessThan, v, z);
                        let gt = self.b.ins().fcmp(FloatCC::GreaterThan, v, z);
                        let s = self.b.ins().select(lt, m1, z);
                        self.b.ins().select(gt, one, s)
                    }
                    LogicalNot => {
                        let z = self.zero(r);
                        return Ok(self.b.ins().fcmp(FloatCC::Equal, v, z));
                    }
                    IsNan => return Ok(self.b.ins().fcmp(FloatCC::Unordered, v, v)),
                    IsInf | IsFinite => {
                        let a = self.b.ins().fabs(v);
                        let inf = self.fconst(r, f64::INFINITY);
                        let cc = if op == IsInf {
                            FloatCC::Equal
                        } else {
                            FloatCC::LessThan
                        };
                        return Ok(self.b.ins().fcmp(cc, a, inf));
                    }
                    IsPosInf | IsNegInf => {
                        let x = if op == IsPosInf {
                            f64::INFINITY
                        } else {
                            f64::NEG_INFINITY
                        };
                        let inf = self.fconst(r, x);
                        return Ok(self.b.ins().fcmp(FloatCC::Equal, v, inf));
                    }
                    IsReal => return Ok(self.iconst(I8, 1)),
                    Signbit => {
                        let ity = if r == Rep::F64 { I64 } else { I32 };
                        let bits = self.b.ins().bitcast(ity, MemFlagsData::new(), v);
                        return Ok(self.b.ins().icmp_imm_s(IntCC::SignedLessThan, bits, 0));
                    }
                    BitwiseNot => return Err(unsupported(name, dt)),
                    _ if self.math == MathMode::Fast
                        && crate::cpu::vmath::has_unary(op, fty == F64) =>
                    {
                        // The vector code on a splat, lane 0: the same values as the
                        // vector body (tails, and kernels that are not vectorized).
                        let vt = crate::cpu::vmath::vector_of(fty);
                        let s = self.b.ins().splat(vt, v);
                        let fma = self.fma;
                        let o = crate::cpu::vmath::emit_unary(&mut self.b, fma, op, s, vt);
                        self.b.ins().extractlane(o, 0)
                    }
                    Exp | Log | Sin | Cos | Tanh | Sigmoid | Exp2 | Expm1 | Log2 | Log10
                    | Log1p | Tan | Asin | Acos | Atan | Sinh | Cosh | Asinh | Acosh | Atanh
                    | Erf | Erfc | Erfinv | Silu | Mish | Hardsigmoid | Hardswish => {
                        let sym = format!("lf_{name}_{}", fsuffix(r));
                        self.call(&sym, &[v], fty)?
                    }
                    // complex values never enter loop kernels
                    RealPart | ImagPart | Conj => return Err(unsupported(name, dt)),
                };
                self.round(out, dt)
            }
            Rep::F8 => Err(unsupported(name, dt)),
        }
    }

    pub(super) fn unary_param(&mut self, op: UnaryParamOp, v: Value, dt: DType) -> R<Value> {
        let r = rep(dt)?;
        match (r, op) {
            (Rep::Bool | Rep::Int { .. }, UnaryParamOp::NanToNum { .. }) => Ok(v),
            (Rep::Bool | Rep::Int { .. }, UnaryParamOp::Hardtanh { min_val, max_val }) => {
                let ty = reg(r);
                let (lt, gt) = if matches!(r, Rep::Int { signed: true, .. }) {
                    (IntCC::SignedLessThan, IntCC::SignedGreaterThan)
                } else {
                    (IntCC::UnsignedLessThan, IntCC::UnsignedGreaterThan)
                };
                Ok(match semantics::int_hardtanh(min_val, max_val, dt) {
                    IntClamp::Keep => v,
                    IntClamp::Const(c) => self.iconst(ty, c as i64),
                    IntClamp::Bounds { below, above } => {
                        let mut x = v;
                        if let Some(lo) = below {
                            let c = self.iconst(ty, lo as i64);
                            let under = self.b.ins().icmp(lt, x, c);
                            x = self.b.ins().select(under, c, x);
                        }
                        if let Some(hi) = above {
                            let c = self.iconst(ty, hi as i64);
                            let over = self.b.ins().icmp(gt, x, c);
                            x = self.b.ins().select(over, c, x);
                        }
                        x
                    }
                })
            }
            (
                Rep::F32 | Rep::F64,
                UnaryParamOp::NanToNum {
                    nan,
                    posinf,
                    neginf,
                },
            ) => {
                let sym = format!("lf_nan_to_num_{}", dt.as_str());
                let (a, b, c) = (
                    self.b.ins().f64const(nan),
                    self.b.ins().f64const(posinf),
                    self.b.ins().f64const(neginf),
                );
                self.call(&sym, &[v, a, b, c], reg(r))
            }
            (Rep::F32 | Rep::F64, _) if vector_param_ok(op, dt, self.math) => {
                // The vector code on a splat, lane 0: tails get the body's values.
                let vt = crate::cpu::vmath::vector_of(reg(r));
                let s = self.b.ins().splat(vt, v);
                let fma = self.fma;
                let o = crate::cpu::vmath::emit_param(&mut self.b, fma, op, s, vt);
                let out = self.b.ins().extractlane(o, 0);
                self.round(out, dt)
            }
            (Rep::F32 | Rep::F64, _) => {
                let (kind, p) = param_code(op);
                let kind = self.iconst(I32, kind);
                let mut args = vec![kind];
                for x in p {
                    args.push(self.b.ins().f64const(x));
                }
                args.push(v);
                let sym = format!("lf_unary_param_{}", fsuffix(r));
                let out = self.call(&sym, &args, reg(r))?;
                self.round(out, dt)
            }
            _ => Err(unsupported(op.name(), dt)),
        }
    }

    pub(super) fn binary(&mut self, op: BinaryOp, x: Value, y: Value, dt: DType) -> R<Value> {
        use BinaryOp::*;
        let r = rep(dt)?;
        let name = Op::Binary(op).name();
        match r {
            Rep::Bool => Ok(match op {
                Add | Maximum | LogicalOr | BitwiseOr | Fmax => self.b.ins().bor(x, y),
                Mul | Minimum | LogicalAnd | BitwiseAnd | Fmin => self.b.ins().band(x, y),
                Eq => self.b.ins().icmp(IntCC::Equal, x, y),
                Ne | LogicalXor | BitwiseXor => self.b.ins().bxor(x, y),
                Lt => self.b.ins().icmp(IntCC::UnsignedLessThan, x, y),
                Le => self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, x, y),
                Gt => self.b.ins().icmp(IntCC::UnsignedGreaterThan, x, y),
                Ge => self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, x, y),
                _ => return Err(unsupported(name, dt)),
            }),
            Rep::Int { ty, signed } => {
                let cc = |s: IntCC, u: IntCC| if signed { s } else { u };
                Ok(match op {
                    Add => self.b.ins().iadd(x, y),
                    Sub => self.b.ins().isub(x, y),
                    Mul => self.b.ins().imul(x, y),
                    DivFloor | DivTrunc | Remainder | Fmod => self.int_div(op, x, y, ty, signed),
                    Maximum | Fmax => {
                        if signed {
                            self.b.ins().smax(x, y)
                        } else {
                            self.b.ins().umax(x, y)
                        }
                    }
                    Minimum | Fmin => {
                        if signed {
                            self.b.ins().smin(x, y)
                        } else {
                            self.b.ins().umin(x, y)
                        }
                    }
                    Eq => self.b.ins().icmp(IntCC::Equal, x, y),
                    Ne => self.b.ins().icmp(IntCC::NotEqual, x, y),
                    Lt => {
                        self.b
                            .ins()
                            .icmp(cc(IntCC::SignedLessThan, IntCC::UnsignedLessThan), x, y)
                    }
                    Le => self.b.ins().icmp(
                        cc(IntCC::SignedLessThanOrEqual, IntCC::UnsignedLessThanOrEqual),
                        x,
                        y,
                    ),
                    Gt => self.b.ins().icmp(
                        cc(IntCC::SignedGreaterThan, IntCC::UnsignedGreaterThan),
                        x,
                        y,
                    ),
                    Ge => self.b.ins().icmp(
                        cc(
                            IntCC::SignedGreaterThanOrEqual,
                            IntCC::UnsignedGreaterThanOrEqual,
                        ),
                        x,
                        y,
                    ),
                    LogicalAnd | LogicalOr | LogicalXor => {
                        let a = self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0);
                        let b = self.b.ins().icmp_imm_s(IntCC::NotEqual, y, 0);
                        match op {
                            LogicalAnd => self.b.ins().band(a, b),
                            LogicalOr => self.b.ins().bor(a, b),
                            _ => self.b.ins().bxor(a, b),
                        }
                    }
                    BitwiseAnd => self.b.ins().band(x, y),
                    BitwiseOr => self.b.ins().bor(x, y),
                    BitwiseXor => self.b.ins().bxor(x, y),
                    Pow | BitwiseLeftShift | BitwiseRightShift | Gcd | Lcm => {
                        let sym = format!("lf_{name}_{}", dt.as_str());
                        let a = self.widen_int(x, dt)?;
                        let b = self.widen_int(y, dt)?;
                        let out = self.call(&sym, &[a, b], I64)?;
                        if ty == I64 {
                            out
                        } else {
                            self.b.ins().ireduce(ty, out)
                        }
                    }
                    _ => return Err(unsupported(name, dt)),
                })
            }
            Rep::F32 | Rep::F64 => {
                let fty = reg(r);
                if matches!(dt, DType::F32 | DType::F64) {
                    if let Some(v) = self.contract(op, x, y) {
                        return Ok(v);
                    }
                }
                let out = match op {
                    Add => self.b.ins().fadd(x, y),
                    Sub => self.b.ins().fsub(x, y),
                    Mul => self.b.ins().fmul(x, y),
                    Div => self.b.ins().fdiv(x, y),
                    DivTrunc => {
                        let q = self.b.ins().fdiv(x, y);
                        self.b.ins().trunc(q)
                    }
                    Maximum | Minimum => {
                        // a < b ? b : a (max) or b < a ? b : a (min); NaN if either is.
                        let lt = if op == Maximum {
                            self.b.ins().fcmp(FloatCC::LessThan, x, y)
                        } else {
                            self.b.ins().fcmp(FloatCC::LessThan, y, x)
                        };
                        let m = self.b.ins().select(lt, y, x);
                        let uno = self.b.ins().fcmp(FloatCC::Unordered, x, y);
                        let nan = self.fconst(r, f64::NAN);
                        self.b.ins().select(uno, nan, m)
                    }
                    Eq | Ne | Lt | Le | Gt | Ge => {
                        let cc = float_cc(op).expect("a comparison");
                        return Ok(self.b.ins().fcmp(cc, x, y));
                    }
                    LogicalAnd | LogicalOr | LogicalXor => {
                        let a = self.ftruthy(x, r);
                        let b = self.ftruthy(y, r);
                        let v = match op {
                            LogicalAnd => self.b.ins().band(a, b),
                            LogicalOr => self.b.ins().bor(a, b),
                            _ => self.b.ins().bxor(a, b),
                        };
                        return Ok(self.bool_of(v));
                    }
                    Nextafter => {
                        // On the stored type's bits: one function per dtype.
                        let sym = format!("lf_nextafter_{}", dt.as_str());
                        return self.call(&sym, &[x, y], fty);
                    }
                    DivFloor | Remainder | Fmod | Pow | Atan2 | Fmax | Fmin | Hypot | Copysign
                    | Logaddexp | Logaddexp2 | Xlogy => {
                        let sym = format!("lf_{name}_{}", fsuffix(r));
                        self.call(&sym, &[x, y], fty)?
                    }
                    _ => return Err(unsupported(name, dt)),
                };
                self.round(out, dt)
            }
            Rep::F8 => Err(unsupported(name, dt)),
        }
    }

    /// Integer division and remainder: a zero divisor sets status 1 in a cold block;
    /// `MIN / -1` divides by 1 instead (same wrapped result, no trap).
    pub(super) fn int_div(
        &mut self,
        op: BinaryOp,
        x: Value,
        y: Value,
        ty: Type,
        signed: bool,
    ) -> Value {
        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
        let bad = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().brif(zero, bad, &[], cont, &[]);
        self.b.switch_to_block(bad);
        self.b.set_cold_block(bad);
        let z = self.iconst(I64, 0);
        self.set_status(Status::ZeroDivision as i64, [z, z, z], cont, &[]);
        self.b.switch_to_block(cont);
        let one = self.iconst(ty, 1);
        let mut unsafe_div = zero;
        if signed {
            let min = match ty {
                I8 => i8::MIN as i64,
                I16 => i16::MIN as i64,
                I32 => i32::MIN as i64,
                _ => i64::MIN,
            };
            let is_min = self.b.ins().icmp_imm_s(IntCC::Equal, x, min);
            let is_m1 = self.b.ins().icmp_imm_s(IntCC::Equal, y, -1);
            let both = self.b.ins().band(is_min, is_m1);
            unsafe_div = self.b.ins().bor(zero, both);
        }
        let d = self.b.ins().select(unsafe_div, one, y);
        if !signed {
            return match op {
                BinaryOp::DivFloor | BinaryOp::DivTrunc => self.b.ins().udiv(x, d),
                _ => self.b.ins().urem(x, d),
            };
        }
        let q = self.b.ins().sdiv(x, d);
        let rem = self.b.ins().srem(x, d);
        let xn = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
        let yn = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, y, 0);
        let rn = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, rem, 0);
        let rnz = self.b.ins().icmp_imm_s(IntCC::NotEqual, rem, 0);
        match op {
            BinaryOp::DivTrunc => q,
            BinaryOp::Fmod => rem,
            BinaryOp::DivFloor => {
                let differ = self.b.ins().bxor(xn, yn);
                let adj = self.b.ins().band(differ, rnz);
                let q1 = self.b.ins().iadd_imm_s(q, -1);
                self.b.ins().select(adj, q1, q)
            }
            _ => {
                let differ = self.b.ins().bxor(rn, yn);
                let adj = self.b.ins().band(differ, rnz);
                let r1 = self.b.ins().iadd(rem, y);
                self.b.ins().select(adj, r1, rem)
            }
        }
    }

    /// Converts `v` of `from` to `to` with the interpreter's cast rules.
    pub(super) fn cast(&mut self, v: Value, from: DType, to: DType) -> R<Value> {
        let (fr, tr) = (rep(from)?, rep(to)?);
        if from == to {
            return Ok(v);
        }
        // Float8 sources decode exactly to f32 and convert on as a float.
        if fr == Rep::F8 {
            let code = self.b.ins().uextend(I32, v);
            let f = self.call(&format!("lf_decode_{}", from.as_str()), &[code], F32)?;
            return self.cast(f, DType::F32, to);
        }
        Ok(match tr {
            Rep::Bool => match fr {
                Rep::Bool => v,
                Rep::Int { .. } => self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0),
                _ => self.ftruthy(v, fr),
            },
            Rep::Int { ty, .. } => {
                let wide = match fr {
                    Rep::Bool | Rep::Int { .. } => self.widen_int(v, from)?,
                    Rep::F32 | Rep::F64 => {
                        if to == DType::U64 {
                            // Values at or above 2^63 take the unsigned path.
                            let big = self.fconst(fr, 9_223_372_036_854_775_808.0);
                            let ge = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, v, big);
                            let u = self.b.ins().fcvt_to_uint_sat(I64, v);
                            let s = self.b.ins().fcvt_to_sint_sat(I64, v);
                            self.b.ins().select(ge, u, s)
                        } else {
                            self.b.ins().fcvt_to_sint_sat(I64, v)
                        }
                    }
                    Rep::F8 => unreachable!("decoded above"),
                };
                if ty == I64 {
                    wide
                } else {
                    self.b.ins().ireduce(ty, wide)
                }
            }
            Rep::F32 | Rep::F64 | Rep::F8 => {
                let target = if tr == Rep::F64 { F64 } else { F32 };
                let f = match fr {
                    Rep::Bool | Rep::Int { signed: false, .. } => {
                        let w = self.widen_int(v, from)?;
                        self.b.ins().fcvt_from_uint(target, w)
                    }
                    Rep::Int { .. } => {
                        let w = self.widen_int(v, from)?;
                        self.b.ins().fcvt_from_sint(target, w)
                    }
                    Rep::F32 if target == F64 => self.b.ins().fpromote(F64, v),
                    Rep::F64 if target == F32 => self.b.ins().fdemote(F32, v),
                    _ => v,
                };
                if tr == Rep::F8 {
                    let code = self.call(&format!("lf_encode_{}", to.as_str()), &[f], I32)?;
                    self.b.ins().ireduce(I8, code)
                } else {
                    self.round(f, to)?
                }
            }
        })
    }
}

/// The float condition of a comparison op (IEEE: a NaN compares unequal and
/// unordered), shared by the scalar and the vector code; `None` for other ops.
pub(super) fn float_cc(op: BinaryOp) -> Option<FloatCC> {
    use BinaryOp::*;
    Some(match op {
        Eq => FloatCC::Equal,
        Ne => FloatCC::NotEqual,
        Lt => FloatCC::LessThan,
        Le => FloatCC::LessThanOrEqual,
        Gt => FloatCC::GreaterThan,
        Ge => FloatCC::GreaterThanOrEqual,
        _ => return None,
    })
}
