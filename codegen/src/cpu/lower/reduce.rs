//! Reductions and scans: accumulator types and identities, the update rules (ties
//! of argmax/argmin, NaN propagation, Neumaier-compensated sums) and the running
//! values of scans.

use super::CodegenError;
use super::{reg, rep, unsupported, Acc, Lower, Rep, ScanState, R};
use crate::semantics::{self, Replace, Start};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F64, I64};
use cranelift_codegen::ir::{InstBuilder, Type, Value};
use cranelift_frontend::Variable;
use lazyfuse_ir::kernel::{Accum, Expr, ExprId, ScanAccum, Stage};
use lazyfuse_ir::{BinaryOp, DType};

impl Lower<'_, '_> {
    /// The accumulation type of a reduction of `dt` ([`semantics::accumulator`]).
    pub(super) fn acc_type(op: Accum, dt: DType) -> R<Type> {
        match semantics::accumulator(op, dt) {
            Some(acc) => Ok(reg(rep(acc)?)),
            None => Err(unsupported(format!("reduce {op:?}"), dt)),
        }
    }

    /// A starting value as a constant of type `ty`.
    fn start(&mut self, s: Start, ty: Type) -> Value {
        match s {
            Start::Float(x) if ty == F64 => self.b.ins().f64const(x),
            Start::Float(x) => self.b.ins().f32const(x as f32),
            Start::Bool(b) => self.iconst(ty, i64::from(b)),
            Start::Int(v) => {
                // The bit pattern of `v` in `ty`'s width, sign-extended as
                // Cranelift's immediates are.
                let shift = 64 - ty.bits();
                self.iconst(ty, ((v as i64) << shift) >> shift)
            }
        }
    }

    pub(super) fn init_accs(&mut self, phase: u32) -> R<()> {
        for (i, op, x) in self.k.phase_reductions(phase) {
            if !self.needed[i] {
                continue;
            }
            let xdt = self.dtype(x);
            let ty = Self::acc_type(op, xdt)?;
            let v = self.start(semantics::identity(op, xdt), ty);
            let var = self.b.declare_var(ty);
            self.b.def_var(var, v);
            let idx = if matches!(op, Accum::ArgMax | Accum::ArgMin) {
                let iv = self.b.declare_var(I64);
                let z = self.iconst(I64, 0);
                self.b.def_var(iv, z);
                Some(iv)
            } else {
                None
            };
            let comp = semantics::compensated(op, xdt, self.math).then(|| {
                let c = self.b.declare_var(ty);
                self.b.def_var(c, v);
                c
            });
            self.accs.insert(i, Acc { op, var, idx, comp });
        }
        Ok(())
    }

    /// Folds the current reduction point into phase `phase`'s accumulators.
    pub(super) fn fold_accs(&mut self, phase: u32) -> R<()> {
        let mut ids: Vec<usize> = self.accs.keys().copied().collect();
        ids.sort_unstable();
        for i in ids {
            if self.k.exprs[i].stage != Stage::Outer(phase + 1) {
                continue;
            }
            let Expr::Reduce { x, .. } = self.k.exprs[i].expr else {
                continue;
            };
            let xdt = self.dtype(x);
            let r = rep(xdt)?;
            let v = self.val(x);
            let (op, var, idx, comp) = {
                let a = &self.accs[&i];
                (a.op, a.var, a.idx, a.comp)
            };
            let acc = self.b.use_var(var);
            let float = matches!(r, Rep::F32 | Rep::F64);
            let signed = matches!(r, Rep::Int { signed: true, .. });
            let next = match op {
                Accum::Sum if r == Rep::Bool => self.b.ins().bor(acc, v),
                Accum::Prod if r == Rep::Bool => self.b.ins().band(acc, v),
                Accum::Any => self.b.ins().bor(acc, v),
                Accum::All => self.b.ins().band(acc, v),
                Accum::Sum if float => {
                    let w = if xdt == DType::F32 {
                        self.b.ins().fpromote(F64, v)
                    } else {
                        v
                    };
                    let s = self.b.ins().fadd(acc, w);
                    if let Some(c) = comp {
                        self.compensate(c, acc, w, s);
                    }
                    self.round(s, xdt)?
                }
                Accum::Prod if float => {
                    let p = self.b.ins().fmul(acc, v);
                    self.round(p, xdt)?
                }
                Accum::Sum => self.b.ins().iadd(acc, v),
                Accum::Prod => self.b.ins().imul(acc, v),
                Accum::Max | Accum::Min if float => self.binary(
                    if op == Accum::Max {
                        BinaryOp::Maximum
                    } else {
                        BinaryOp::Minimum
                    },
                    acc,
                    v,
                    xdt,
                )?,
                Accum::Max if r == Rep::Bool => self.b.ins().bor(acc, v),
                Accum::Min if r == Rep::Bool => self.b.ins().band(acc, v),
                Accum::Max if signed => self.b.ins().smax(acc, v),
                Accum::Max => self.b.ins().umax(acc, v),
                Accum::Min if signed => self.b.ins().smin(acc, v),
                Accum::Min => self.b.ins().umin(acc, v),
                Accum::ArgMax | Accum::ArgMin => {
                    let pos = self.b.use_var(self.pos);
                    let first = self.b.ins().icmp_imm_s(IntCC::Equal, pos, 0);
                    let rule = semantics::arg_reduce_rule(op);
                    let better = self.replaces(rule, v, acc, float, signed);
                    let take = self.b.ins().bor(first, better);
                    let iv = idx.expect("arg reductions keep an index");
                    let bi = self.b.use_var(iv);
                    let ni = self.b.ins().select(take, pos, bi);
                    self.b.def_var(iv, ni);
                    self.b.ins().select(take, v, acc)
                }
            };
            self.b.def_var(var, next);
        }
        Ok(())
    }

    /// One step of Neumaier's summation: `t = s + x` was just computed; the
    /// rounding error of that add joins the compensation `c`, taken from the
    /// operand of larger magnitude as the interpreter does.
    pub(super) fn compensate(&mut self, c: Variable, s: Value, x: Value, t: Value) {
        let s_abs = self.b.ins().fabs(s);
        let x_abs = self.b.ins().fabs(x);
        let s_big = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, s_abs, x_abs);
        let big = self.b.ins().select(s_big, s, x);
        let small = self.b.ins().select(s_big, x, s);
        let lost = self.b.ins().fsub(big, t);
        let lost = self.b.ins().fadd(lost, small);
        let cv = self.b.use_var(c);
        let next = self.b.ins().fadd(cv, lost);
        self.b.def_var(c, next);
    }

    /// Whether candidate `x` replaces the running `best` under `rule` (the first
    /// position aside). Floats: `x` beats `best` (`>`, or `>=` where ties
    /// replace) or `x` is NaN, and, where a NaN best stays, `best` is not NaN (an
    /// ordered compare with a NaN is false). Integers and bools (0/1 bytes,
    /// unsigned order): the compare alone.
    fn replaces(
        &mut self,
        rule: Replace,
        x: Value,
        best: Value,
        float: bool,
        signed: bool,
    ) -> Value {
        if float {
            let cc = match (rule.max, rule.ties) {
                (true, false) => FloatCC::GreaterThan,
                (true, true) => FloatCC::GreaterThanOrEqual,
                (false, false) => FloatCC::LessThan,
                (false, true) => FloatCC::LessThanOrEqual,
            };
            let beats = self.b.ins().fcmp(cc, x, best);
            let xnan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
            let takes = self.b.ins().bor(beats, xnan);
            if !rule.nan_stays {
                return takes;
            }
            let bnan = self.b.ins().fcmp(FloatCC::Unordered, best, best);
            let bok = self.b.ins().bxor_imm_s(bnan, 1);
            return self.b.ins().band(takes, bok);
        }
        let cc = match (rule.max, rule.ties, signed) {
            (true, false, true) => IntCC::SignedGreaterThan,
            (true, false, false) => IntCC::UnsignedGreaterThan,
            (true, true, true) => IntCC::SignedGreaterThanOrEqual,
            (true, true, false) => IntCC::UnsignedGreaterThanOrEqual,
            (false, false, true) => IntCC::SignedLessThan,
            (false, false, false) => IntCC::UnsignedLessThan,
            (false, true, true) => IntCC::SignedLessThanOrEqual,
            (false, true, false) => IntCC::UnsignedLessThanOrEqual,
        };
        self.b.ins().icmp(cc, x, best)
    }

    /// The reduction's result after its phase's loop.
    pub(super) fn finish_acc(&mut self, i: usize) -> R<Value> {
        let a = self
            .accs
            .remove(&i)
            .ok_or_else(|| CodegenError::Malformed(format!("v{i}: reduction without a loop")))?;
        if let Some(iv) = a.idx {
            return Ok(self.b.use_var(iv));
        }
        let mut v = self.b.use_var(a.var);
        if let Some(c) = a.comp {
            // s + c, except where that is NaN from an infinite s (no meaningful
            // compensation): then s.
            let c = self.b.use_var(c);
            let total = self.b.ins().fadd(v, c);
            let total_nan = self.b.ins().fcmp(FloatCC::Unordered, total, total);
            let s_ok = self.b.ins().fcmp(FloatCC::Ordered, v, v);
            let keep_s = self.b.ins().band(total_nan, s_ok);
            v = self.b.ins().select(keep_s, v, total);
        }
        let dt = self.k.exprs[i].dtype;
        Ok(if a.op == Accum::Sum && dt == DType::F32 {
            self.b.ins().fdemote(F32, v)
        } else {
            v
        })
    }
}

impl Lower<'_, '_> {
    /// The type of a scan's running value over `dt` values
    /// ([`semantics::scan_state`], in its register type).
    pub(super) fn scan_type(op: ScanAccum, dt: DType) -> R<Type> {
        Ok(reg(rep(semantics::scan_state(op, dt))?))
    }

    /// Declares the running values of phase `phase`'s scans, before its loop.
    pub(super) fn init_scans(&mut self, phase: u32) -> R<()> {
        for (i, op, x) in self.k.phase_scans(phase) {
            if !self.needed[i] {
                continue;
            }
            let dt = self.k.exprs[i].dtype;
            let xdt = self.dtype(x);
            if op.output_dtype(xdt) != Some(dt) {
                return Err(unsupported(format!("scan {op:?}"), xdt));
            }
            let ty = Self::scan_type(op, xdt)?;
            let v = self.start(semantics::scan_start(op, xdt), ty);
            let var = self.b.declare_var(ty);
            self.b.def_var(var, v);
            let idx = if matches!(op, ScanAccum::ArgMax | ScanAccum::ArgMin) {
                let iv = self.b.declare_var(I64);
                let z = self.iconst(I64, 0);
                self.b.def_var(iv, z);
                Some(iv)
            } else {
                None
            };
            self.scans.insert(i, ScanState { var, idx });
        }
        Ok(())
    }

    /// Folds this iteration's `x` into scan `i`'s running value; returns the
    /// scan's value here (rounded to its dtype from the wide running value).
    pub(super) fn scan_step(&mut self, i: usize, op: ScanAccum, x: ExprId) -> R<Value> {
        let xdt = self.dtype(x);
        let r = rep(xdt)?;
        let v = self.val(x);
        let (var, idx) = {
            let s = self
                .scans
                .get(&i)
                .ok_or_else(|| CodegenError::Malformed(format!("v{i}: scan outside its loop")))?;
            (s.var, s.idx)
        };
        let acc = self.b.use_var(var);
        let float = matches!(r, Rep::F32 | Rep::F64);
        let signed = matches!(r, Rep::Int { signed: true, .. });
        match op {
            ScanAccum::Sum | ScanAccum::Prod => {
                let sum = op == ScanAccum::Sum;
                let next = if float {
                    let w = if xdt == DType::F32 {
                        self.b.ins().fpromote(F64, v)
                    } else {
                        v
                    };
                    if sum {
                        self.b.ins().fadd(acc, w)
                    } else {
                        self.b.ins().fmul(acc, w)
                    }
                } else if sum {
                    self.b.ins().iadd(acc, v)
                } else {
                    self.b.ins().imul(acc, v)
                };
                self.b.def_var(var, next);
                if xdt == DType::F32 {
                    Ok(self.b.ins().fdemote(F32, next))
                } else {
                    self.round(next, xdt)
                }
            }
            ScanAccum::Max | ScanAccum::Min | ScanAccum::ArgMax | ScanAccum::ArgMin => {
                let pos = self.b.use_var(self.pos);
                let first = self.b.ins().icmp_imm_s(IntCC::Equal, pos, 0);
                let wins = self.replaces(semantics::scan_rule(op), v, acc, float, signed);
                let take = self.b.ins().bor(first, wins);
                let next = self.b.ins().select(take, v, acc);
                self.b.def_var(var, next);
                match idx {
                    Some(iv) => {
                        let bi = self.b.use_var(iv);
                        let ni = self.b.ins().select(take, pos, bi);
                        self.b.def_var(iv, ni);
                        Ok(ni)
                    }
                    None => Ok(next),
                }
            }
            ScanAccum::LogAddExp => {
                let w = if r == Rep::F64 {
                    v
                } else {
                    self.b.ins().fpromote(F64, v)
                };
                let next = self.call("lf_scan_log_add_exp", &[w, acc], F64)?;
                self.b.def_var(var, next);
                if r == Rep::F64 {
                    Ok(next)
                } else {
                    // float64 → the accumulation type (float32) → the dtype, as the
                    // interpreter rounds (`S::from_acc(A::from_f64(a))`)
                    let f = self.b.ins().fdemote(F32, next);
                    self.round(f, xdt)
                }
            }
        }
    }
}
