//! Vectorized reduction phases (MathMode::Fast only).
//!
//! A phase whose one reduction dim is contiguous (stride 1, or 0 for broadcast
//! loads) runs its body over [`GROUP`] consecutive positions at once, unrolled
//! [`UNROLL`] times with one set of vector accumulators per unrolled copy, so
//! that the adds of consecutive iterations do not wait on each other. The
//! accumulators are combined after the loop and handed to the scalar loop, which
//! does the last `n % (GROUP·UNROLL)` positions. Reordering a float sum is what
//! Fast mode allows; Exact mode never comes here.
//!
//! A value that a later phase would compute again (softmax's `exp(x - max)`:
//! summed in one phase, scaled and stored in the next) is kept from the earlier
//! phase's vector loop in a stack slot per row and read back ([`phase_reuses`]).
//!
//! Values are held as *parts*: a float32 value of [`GROUP`] positions is one
//! `f32x4`, a float64 value two `f64x2` (low positions first), so that the
//! float32 → float64 casts of the row kernels (softmax, layernorm compute in
//! float64) are lane-exact promotions and demotions. The elementwise ops go
//! through the elementwise vector path's [`Lower::vunary`]/[`Lower::vbinary`] and
//! its predicates [`vector_unary_ok`]/[`vector_binary_ok`].

use super::{unsupported, vector_binary_ok, vector_unary_ok, Lower, R};
use crate::cpu::phase_reuse::{includes_expensive, same_value};
use crate::semantics::{self, Start};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32, F32X4, F64, F64X2, I64, I8X16};
use cranelift_codegen::ir::{
    ConstantData, Endianness, Immediate, InstBuilder, MemFlagsData, Type, Value,
};
use cranelift_frontend::Variable;
use lazyfuse_ir::kernel::{Accum, Expr, ExprId, LoopKernel, MathMode, Stage};
use lazyfuse_ir::{BinaryOp, DType};

/// Positions per vector step: one `f32x4`, or two `f64x2`.
pub(super) const GROUP: i64 = 4;
/// Independent copies of the body (and of the accumulators) per loop iteration.
pub(super) const UNROLL: i64 = 4;

/// The vector parts of a value of `dt`: their type and count.
pub(super) fn parts_of(dt: DType) -> (Type, usize) {
    if dt == DType::F64 {
        (F64X2, 2)
    } else {
        (F32X4, 1)
    }
}

/// Whether phase `ph` of `k` vectorizes: one reduction dim (the last dim), every
/// needed expression of the phase float32 or float64 (float16 and bfloat16 only
/// loaded, cast from or to float32, or reduced to their max or min, which is one
/// of their float32 lanes exactly), loads static and contiguous or broadcast
/// along it and not of a buffer the kernel writes, only ops the vector path has,
/// casts between float32 and float64, reductions sum, max and min, and stores
/// contiguous of their own dtype.
pub(super) fn phase_vectorizes(k: &LoopKernel, ph: u32, needed: &[bool], math: MathMode) -> bool {
    let nd = k.dims.len();
    if nd != k.n_parallel + 1 {
        return false;
    }
    let float = |dt: DType| matches!(dt, DType::F32 | DType::F64);
    let narrow = |dt: DType| matches!(dt, DType::F16 | DType::BF16);
    let written = k.written_bufs();
    let inner = |id: ExprId| k.exprs[id.0 as usize].stage == Stage::Inner(ph);
    let mut any = false;
    for (i, e) in k.exprs.iter().enumerate() {
        if !needed[i] {
            continue;
        }
        if e.stage == Stage::Outer(ph + 1) {
            if let Expr::Reduce { op, x } = e.expr {
                let xdt = k.exprs[x.0 as usize].dtype;
                // a float16/bfloat16 extremum is one of its float32 lanes, exactly
                let lanes_ok = float(xdt) || (narrow(xdt) && matches!(op, Accum::Max | Accum::Min));
                if !matches!(op, Accum::Sum | Accum::Max | Accum::Min) || !lanes_ok || !inner(x) {
                    return false;
                }
            }
            continue;
        }
        if e.stage != Stage::Inner(ph) {
            continue;
        }
        any = true;
        // float16/bfloat16 only as loads and casts (to and from float32 lanes);
        // their arithmetic would round per op
        let cast_from = match e.expr {
            Expr::Cast { x } => Some(k.exprs[x.0 as usize].dtype),
            _ => None,
        };
        let narrow_ok = match (e.dtype, cast_from) {
            (d, None) => narrow(d) && matches!(e.expr, Expr::Load { .. }),
            (d, Some(f)) => (narrow(d) && f == DType::F32) || (d == DType::F32 && narrow(f)),
        };
        if !float(e.dtype) && !narrow_ok {
            return false;
        }
        // Operands from outer stages are splat: they must be float values too.
        for o in LoopKernel::operands(&e.expr) {
            if !float(k.exprs[o.0 as usize].dtype) && !narrow_ok {
                return false;
            }
        }
        let ok = match &e.expr {
            Expr::Load { .. } => {
                // (a load of the slot its point stores, see `phase_reuse`)
                let own = crate::cpu::phase_reuse::reads_own_slot(k, &e.expr);
                k.vector_load(&e.expr, nd - 1, if own { &[] } else { &written })
                    .is_some_and(|(p, _)| k.params[p.index()].dtype == e.dtype)
            }
            Expr::Const(_) | Expr::Cast { .. } => true,
            Expr::Unary { op, x } => {
                k.exprs[x.0 as usize].dtype == e.dtype && vector_unary_ok(*op, e.dtype, math)
            }
            Expr::Binary { op, a, b } => {
                k.exprs[a.0 as usize].dtype == e.dtype
                    && k.exprs[b.0 as usize].dtype == e.dtype
                    && vector_binary_ok(*op, true)
            }
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    let stores_ok = k.stores.iter().all(|s| {
        let v = &k.exprs[s.value.0 as usize];
        v.stage != Stage::Inner(ph)
            || (s.index.strides[nd - 1] == 1 && k.params[s.param.index()].dtype == v.dtype)
    });
    any && stores_ok
}

/// Most bytes of rows a kernel keeps for later phases (one stack slot per kept
/// expression, [`phase_reuses`]); softmax over rows of 16384 float32 fits.
const ROW_SLOT_BYTES: i64 = 64 << 10;

/// Values a vectorized phase computes that a later vectorized phase would compute
/// again, as pairs `(earlier, later)` of expressions: `later` (of the later phase)
/// applies the same ops to the same loads and outer values as `earlier`, and
/// includes an expensive op (`lazyfuse_ir::schedule::expensive`). Softmax's
/// `exp(x - max)` is the case: its sum phase keeps the row of exps in a stack
/// slot and the store phase reads it back instead of computing exp again. Values
/// of the positions the vector loops do are the same either way (the same code
/// computes them); the scalar tail still computes its own. Only the largest
/// such value is kept (not its operands), and only while the rows fit
/// [`ROW_SLOT_BYTES`]. Fast math only, as the phases' vector loops.
pub(super) fn phase_reuses(k: &LoopKernel, needed: &[bool], math: MathMode) -> Vec<(usize, usize)> {
    let nd = k.dims.len();
    if math != MathMode::Fast || k.phases() < 2 || nd != k.n_parallel + 1 {
        return Vec::new();
    }
    let n = k.dims[nd - 1] as i64;
    if n < GROUP * UNROLL {
        return Vec::new();
    }
    let vectorizes: Vec<bool> = (0..k.phases())
        .map(|ph| phase_vectorizes(k, ph, needed, math))
        .collect();
    let phase_of = |i: usize| match k.exprs[i].stage {
        Stage::Inner(ph) if needed[i] && vectorizes[ph as usize] => Some(ph),
        _ => None,
    };
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for later in 0..k.exprs.len() {
        let Some(ph) = phase_of(later) else { continue };
        if !includes_expensive(k, later, ph) {
            continue;
        }
        let earlier =
            (0..later).find(|&e| phase_of(e).is_some_and(|p| p < ph) && same_value(k, e, later));
        if let Some(earlier) = earlier {
            pairs.push((earlier, later));
        }
    }
    // Keep only the largest: a value that only reused values read is never
    // needed in its phase.
    let laters: Vec<usize> = pairs.iter().map(|p| p.1).collect();
    let still_needed = k.needed_exprs_given(&laters);
    pairs.retain(|&(_, later)| still_needed[later]);
    let mut bytes = 0;
    pairs.retain(|&(earlier, _)| {
        bytes += n * k.exprs[earlier].dtype.size_in_bytes() as i64;
        bytes <= ROW_SLOT_BYTES
    });
    pairs
}

/// A vector accumulator of one reduction: its parts, per unrolled copy.
pub(super) struct VAcc {
    /// the `Reduce` expression
    pub(super) expr: usize,
    pub(super) op: Accum,
    /// float32 max/min stay float32; float64 goes in float64; float32 sums go in
    /// float64, except in the Fast row phases (float32 lanes, see [`Lower::vector_phase`])
    pub(super) ty: Type,
    /// `vars[u]`: the parts of copy `u`
    pub(super) vars: Vec<Vec<Variable>>,
}

impl Lower<'_, '_> {
    /// Emits phase `ph`'s vector loop when Fast mode allows and the phase
    /// vectorizes; leaves each reduction's scalar accumulator holding the
    /// combined value of the positions done and returns how many positions those
    /// are (0: the scalar loop does all).
    pub(super) fn vector_phase(&mut self, ph: u32) -> R<i64> {
        if self.math != MathMode::Fast {
            return Ok(0);
        }
        let nd = self.k.dims.len();
        let step = GROUP * UNROLL;
        let n = *self.k.dims.last().unwrap_or(&0) as i64;
        if n < step || !phase_vectorizes(self.k, ph, &self.needed, self.math) {
            return Ok(0);
        }
        let m = n - n % step;
        let fma = self.fma;
        let arun =
            super::vaffine_run::affine_run(self.k, ph, &self.needed, &self.reuses, self.math, fma);
        if let Some(ar) = arun {
            self.affine_run_values(ar, m)?;
            return Ok(m);
        }
        // Fast: float32 sums in float32 lanes (16 accumulators of 4 lanes each, so
        // each adds only n/64 terms: PyTorch's CPU sums are float32 too), twice
        // the lanes of float64 and no widening of every term; the combined value
        // joins the scalar float64 accumulator for the tail.
        let vaccs = self.init_vaccs(ph, true)?;
        let rrun =
            super::vreduce_run::reduce_run(self.k, ph, &self.needed, &self.reuses, self.math, fma);
        let rrun = rrun.filter(|rr| vaccs.iter().all(|va| va.ty == parts_of(rr.acc).0));
        if let (Some(rr), [va]) = (rrun, vaccs.as_slice()) {
            self.reduce_run_values(ph, rr, m, va)?;
            self.finish_vacc(va)?;
            return Ok(m);
        }
        let rd = nd - 1;
        // Rows kept for a later phase (`keep`: the expressions this phase
        // computes and writes to their row slot) and read back from an earlier
        // one (`reuse`: the expressions this phase loads instead of computing).
        let stage = Stage::Inner(ph);
        let keep = self.kept_rows(ph);
        // A phase run (`vrun::phase_run`, or over a kept row, `vrun::kept_run`):
        // the reductions of the run's op read the row back after the routine,
        // the others accumulate in the loop.
        let run = match self.run {
            Some(r) => Some(r).filter(|r| r.phase == Some(ph)),
            None => super::vrun::kept_run(self.k, ph, &self.needed, &keep, self.math, fma),
        };
        let (run_accs, vaccs): (Vec<VAcc>, Vec<VAcc>) = vaccs.into_iter().partition(|va| {
            run.is_some_and(|r| {
                matches!(self.k.exprs[va.expr].expr, Expr::Reduce { x, .. } if x.0 as usize == r.op)
            })
        });
        for &e in &keep {
            if !self.row_slots.contains_key(&e) {
                let bytes = n * self.k.exprs[e].dtype.size_in_bytes() as i64;
                let slot = self.line_slot(bytes as u32);
                self.row_slots.insert(e, slot);
            }
        }
        if let Some(r) = run.filter(|r| r.direct) {
            // The routine reads the row itself; the phase computes nothing else
            // (`vrun::direct_source`), so there is no vector loop.
            debug_assert!(vaccs.is_empty());
            self.phase_run_values(r, m, &run_accs)?;
            for va in &run_accs {
                self.finish_vacc(va)?;
            }
            return Ok(m);
        }
        let reuse: Vec<(usize, usize)> = self
            .reuses
            .iter()
            .copied()
            .filter(|r| self.k.exprs[r.1].stage == stage)
            .collect();
        let full_needed = self.needed.clone();
        if !reuse.is_empty() {
            // What only a reused value needs is not computed in the vector loop.
            let leaves: Vec<usize> = reuse.iter().map(|r| r.1).collect();
            self.needed = self.k.needed_exprs_given(&leaves);
        }
        let outer = self.outer_parts(stage, &full_needed);
        if let Some(r) = run {
            self.enter_run(r);
        }
        let zero = self.iconst(I64, 0);
        self.b.def_var(self.idx[rd], zero);
        let head = self.b.create_block();
        let bodyb = self.b.create_block();
        let after = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let pv = self.b.use_var(self.idx[rd]);
        let more = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, pv, m);
        self.b.ins().brif(more, bodyb, &[], after, &[]);
        self.b.switch_to_block(bodyb);
        // Addresses of the loads and stores (exprs, then stores) at this
        // iteration's first position, shared by the unrolled copies (which add a
        // constant offset).
        let mut addrs: Vec<Option<Value>> = vec![None; self.k.exprs.len() + self.k.stores.len()];
        let pv = self.b.use_var(self.idx[rd]);
        for u in 0..UNROLL {
            let mut vv = outer.clone();
            for &(earlier, later) in &reuse {
                let parts = self.row_slot_parts(earlier, pv, u, None);
                vv[later] = Some(parts);
            }
            self.veval(stage, u, rd, &mut vv, &mut addrs)?;
            for &e in &keep {
                // (a kept row's run keeps the argument: its routine follows)
                let kept = match run {
                    Some(r) if r.slot == Some(e) => r.arg.0 as usize,
                    _ => e,
                };
                let parts = vv[kept].clone().expect("a kept value is computed");
                self.row_slot_parts(e, pv, u, Some(parts));
            }
            self.vaccumulate(&vaccs, u, &vv);
        }
        self.needed = full_needed;
        let pv = self.b.use_var(self.idx[rd]);
        let pn = self.b.ins().iadd_imm_s(pv, step);
        self.b.def_var(self.idx[rd], pn);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(after);
        if let Some(r) = run {
            self.leave_run(r);
            self.phase_run_values(r, m, &run_accs)?;
        }
        for va in vaccs.iter().chain(&run_accs) {
            self.finish_vacc(va)?;
        }
        Ok(m)
    }

    /// The splat parts of the earlier stages' float values that `stage`'s
    /// `needed` expressions read, made here (before the phase's loop) and
    /// anchored ([`Lower::anchor`]): Cranelift places a pure op at its first use,
    /// which would put a layer norm's `sqrt(var + eps)` or a softmax's `1 / sum`,
    /// and the scalar chain behind it, into the loop body to run at every step.
    fn outer_parts(&mut self, stage: Stage, needed: &[bool]) -> Vec<Option<Vec<Value>>> {
        let mut parts: Vec<Option<Vec<Value>>> = vec![None; self.k.exprs.len()];
        for (i, &need) in needed.iter().enumerate() {
            if !need || self.k.exprs[i].stage != stage {
                continue;
            }
            for o in LoopKernel::operands(&self.k.exprs[i].expr) {
                let oi = o.0 as usize;
                let e = &self.k.exprs[oi];
                let float = matches!(e.dtype, DType::F32 | DType::F64);
                if parts[oi].is_some() || matches!(e.stage, Stage::Inner(_)) || !float {
                    continue;
                }
                let p = self.vparts(o, &parts);
                // (a float64 value's two parts are one splat)
                self.anchor(p[0]);
                parts[oi] = Some(p);
            }
        }
        parts
    }

    /// The expressions phase `ph` computes and keeps in their row slots for a
    /// later phase (`phase_reuses`).
    pub(super) fn kept_rows(&self, ph: u32) -> Vec<usize> {
        self.reuses
            .iter()
            .map(|r| r.0)
            .filter(|&e| self.k.exprs[e].stage == Stage::Inner(ph))
            .collect()
    }

    /// The address of row position `pos` in the row slot that keeps
    /// expression `e` ([`phase_reuses`]).
    pub(super) fn row_slot_address(&mut self, e: usize, pos: Value) -> Value {
        let size = self.k.exprs[e].dtype.size_in_bytes() as i64;
        let base = self.line_address(self.row_slots[&e]);
        let at = self.b.ins().imul_imm_s(pos, size);
        self.b.ins().iadd(base, at)
    }

    /// Copy `u`'s parts of the kept row of expression `e` at row position `pos`:
    /// stores `parts` there when given (and returns them), else loads them.
    fn row_slot_parts(
        &mut self,
        e: usize,
        pos: Value,
        u: i64,
        parts: Option<Vec<Value>>,
    ) -> Vec<Value> {
        let dt = self.k.exprs[e].dtype;
        let (vt, n) = parts_of(dt);
        let size = dt.size_in_bytes() as i64;
        let at = self.row_slot_address(e, pos);
        let off = |p: usize| ((u * GROUP + p as i64 * 2) * size) as i32;
        match parts {
            Some(parts) => {
                for (p, &v) in parts.iter().enumerate() {
                    self.b.ins().store(super::flags(), v, at, off(p));
                }
                parts
            }
            None => (0..n)
                .map(|p| self.b.ins().load(vt, super::flags(), at, off(p)))
                .collect(),
        }
    }

    /// `for i in 0..count { f(i) }` as a Cranelift loop.
    pub(super) fn counted_loop(
        &mut self,
        count: i64,
        f: &mut dyn FnMut(&mut Self, Value) -> R<()>,
    ) -> R<()> {
        let var = self.b.declare_var(I64);
        let z = self.iconst(I64, 0);
        self.b.def_var(var, z);
        let head = self.b.create_block();
        let bodyb = self.b.create_block();
        let after = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let v = self.b.use_var(var);
        let more = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, count);
        self.b.ins().brif(more, bodyb, &[], after, &[]);
        self.b.switch_to_block(bodyb);
        let v = self.b.use_var(var);
        f(self, v)?;
        let v = self.b.use_var(var);
        let vn = self.b.ins().iadd_imm_s(v, 1);
        self.b.def_var(var, vn);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(after);
        Ok(())
    }

    /// Declares the vector accumulators of phase `ph`'s reductions, at their
    /// identity. `narrow`: float32 sums accumulate in float32 lanes (Fast row
    /// phases only; the column paths keep the scalar code's float64 bit for bit).
    pub(super) fn init_vaccs(&mut self, ph: u32, narrow: bool) -> R<Vec<VAcc>> {
        let mut out = Vec::new();
        for (i, op, x) in self.k.phase_reductions(ph) {
            if !self.needed[i] {
                continue;
            }
            let xdt = self.dtype(x);
            let (ty, n) = if op == Accum::Sum && !(narrow && xdt == DType::F32) {
                (F64X2, 2)
            } else {
                parts_of(xdt)
            };
            let Start::Float(init) = semantics::identity(op, xdt) else {
                return Err(unsupported(format!("a vector reduce {op:?}"), xdt));
            };
            let s = if ty == F64X2 {
                self.b.ins().f64const(init)
            } else {
                self.b.ins().f32const(init as f32)
            };
            let v = self.b.ins().splat(ty, s);
            let mut vars = Vec::new();
            for _ in 0..UNROLL {
                let mut parts = Vec::new();
                for _ in 0..n {
                    let var = self.b.declare_var(ty);
                    self.b.def_var(var, v);
                    parts.push(var);
                }
                vars.push(parts);
            }
            out.push(VAcc {
                expr: i,
                op,
                ty,
                vars,
            });
        }
        Ok(out)
    }

    /// Evaluates copy `u` of the needed expressions of `stage` (reductions
    /// excepted: their parts are put in `vv` by the caller) with lanes along dim
    /// `vdim` (positions `idx[vdim] + GROUP·u ..+ GROUP`), and does the stage's
    /// stores. `addrs` caches the addresses at `u = 0` (exprs, then stores).
    pub(super) fn veval(
        &mut self,
        stage: Stage,
        u: i64,
        vdim: usize,
        vv: &mut [Option<Vec<Value>>],
        addrs: &mut [Option<Value>],
    ) -> R<()> {
        for i in 0..self.k.exprs.len() {
            // (values already in `vv` came from elsewhere: a reused row, see
            // `phase_reuses`)
            if !self.needed[i] || self.k.exprs[i].stage != stage || vv[i].is_some() {
                continue;
            }
            let e = self.k.exprs[i].clone();
            let dt = e.dtype;
            let (vt, n) = parts_of(dt);
            let parts: Vec<Value> = match e.expr {
                Expr::Load { param, index, .. } => {
                    let addr = match addrs[i] {
                        Some(a) => a,
                        None => {
                            let a =
                                self.address(param.index(), &index.offset, &index.strides, None)?;
                            addrs[i] = Some(a);
                            a
                        }
                    };
                    if matches!(dt, DType::F16 | DType::BF16) {
                        let splat = index.strides[vdim] == 0;
                        let off = if splat { 0 } else { (u * GROUP * 2) as i32 };
                        vec![self.vload_narrow(addr, off, splat, dt)]
                    } else if index.strides[vdim] == 0 {
                        let x = self.b.ins().load(vt.lane_type(), super::flags(), addr, 0);
                        let s = self.b.ins().splat(vt, x);
                        vec![s; n]
                    } else {
                        let size = dt.size_in_bytes() as i64;
                        (0..n as i64)
                            .map(|p| {
                                let off = ((u * GROUP + p * 2) * size) as i32;
                                self.b.ins().load(vt, super::flags(), addr, off)
                            })
                            .collect()
                    }
                }
                Expr::Const(c) => {
                    let x = self.constant(c, dt)?;
                    let s = self.b.ins().splat(vt, x);
                    vec![s; n]
                }
                Expr::Cast { x } => {
                    let from = self.dtype(x);
                    let xs = self.vparts(x, vv);
                    if self.store_rounds[i] {
                        // float32 to float16/bfloat16, rounded by the store
                        xs
                    } else {
                        self.vcast(xs, from, dt)
                    }
                }
                Expr::Unary { op, x } => {
                    let xs = self.vparts(x, vv);
                    xs.into_iter().map(|p| self.vunary(op, p, vt)).collect()
                }
                Expr::Binary { op, a, b } => {
                    let xs = self.vparts(a, vv);
                    let ys = self.vparts(b, vv);
                    xs.into_iter()
                        .zip(ys)
                        .map(|(x, y)| self.vbinary(op, x, y, vt))
                        .collect()
                }
                Expr::Reduce { .. } => continue,
                _ => unreachable!("the vector predicates admit only the exprs above"),
            };
            vv[i] = Some(parts);
        }
        for (n, s) in self.k.stores.clone().into_iter().enumerate() {
            if self.k.exprs[s.value.0 as usize].stage != stage {
                continue;
            }
            // (a phase run stores the op's argument, `vrun::phase_run`)
            let si = self.run_store_value(n).unwrap_or(s.value).0 as usize;
            let dt = self.dtype(s.value);
            let slot = self.k.exprs.len() + n;
            let addr = match addrs[slot] {
                Some(a) => a,
                None => {
                    let a =
                        self.address(s.param.index(), &s.index.offset, &s.index.strides, None)?;
                    addrs[slot] = Some(a);
                    a
                }
            };
            let size = dt.size_in_bytes() as i64;
            let vals = vv[si].clone().expect("stored values are computed");
            for (p, v) in vals.into_iter().enumerate() {
                let off = ((u * GROUP + p as i64 * 2) * size) as i32;
                if matches!(dt, DType::F16 | DType::BF16) {
                    self.vstore_narrow(v, dt, addr, off, !self.store_rounds[si]);
                } else {
                    self.b.ins().store(super::flags(), v, addr, off);
                }
            }
        }
        Ok(())
    }

    /// Folds copy `u`'s values into its vector accumulators.
    pub(super) fn vaccumulate(&mut self, vaccs: &[VAcc], u: i64, vv: &[Option<Vec<Value>>]) {
        for va in vaccs {
            let Expr::Reduce { x, .. } = self.k.exprs[va.expr].expr else {
                unreachable!("vector accumulators are reductions")
            };
            let xdt = self.dtype(x);
            let mut xs = self.vparts(x, vv);
            if va.ty == F64X2 && xdt == DType::F32 {
                xs = self.vcast(xs, DType::F32, DType::F64);
            }
            for (p, xv) in xs.into_iter().enumerate() {
                let var = va.vars[u as usize][p];
                let acc = self.b.use_var(var);
                let next = self.vcombine(va.op, acc, xv, va.ty);
                self.b.def_var(var, next);
            }
        }
    }

    /// The parts of operand `id`: computed in vector code (`vv`), or else a
    /// scalar of an outer stage, splat.
    pub(super) fn vparts(&mut self, id: ExprId, vv: &[Option<Vec<Value>>]) -> Vec<Value> {
        let i = id.0 as usize;
        if let Some(p) = &vv[i] {
            return p.clone();
        }
        let (vt, n) = parts_of(self.k.exprs[i].dtype);
        let s = self.val(id);
        let v = self.b.ins().splat(vt, s);
        vec![v; n]
    }

    /// Casts parts between float32 and float64 (lane-exact, as the scalar casts),
    /// and from float32 to float16/bfloat16 (rounding; the other way is exact).
    pub(super) fn vcast(&mut self, xs: Vec<Value>, from: DType, to: DType) -> Vec<Value> {
        match (from, to) {
            (DType::F32, DType::F16 | DType::BF16) => {
                xs.into_iter().map(|x| self.vround_narrow(x, to)).collect()
            }
            (DType::F32, DType::F64) => {
                let x = xs[0];
                let lo = self.b.ins().fvpromote_low(x);
                // lanes 2, 3 down to 0, 1
                let mask: Vec<u8> = (8..16).chain(8..16).collect();
                let mask = self.b.func.dfg.immediates.push(ConstantData::from(mask));
                let h = self.shuffle(x, x, mask, F32X4);
                let hi = self.b.ins().fvpromote_low(h);
                vec![lo, hi]
            }
            (DType::F64, DType::F32) => {
                let lo = self.b.ins().fvdemote(xs[0]);
                let hi = self.b.ins().fvdemote(xs[1]);
                // lanes 0, 1 of each
                let mask: Vec<u8> = (0..8).chain(16..24).collect();
                let mask = self.b.func.dfg.immediates.push(ConstantData::from(mask));
                vec![self.shuffle(lo, hi, mask, F32X4)]
            }
            _ => xs,
        }
    }

    /// A byte shuffle of two vectors of type `vt` (Cranelift's `shuffle` takes
    /// `i8x16` operands only).
    fn shuffle(&mut self, a: Value, b: Value, mask: Immediate, vt: Type) -> Value {
        let f = MemFlagsData::new().with_endianness(Endianness::Little);
        let a = self.b.ins().bitcast(I8X16, f, a);
        let b = self.b.ins().bitcast(I8X16, f, b);
        let r = self.b.ins().shuffle(a, b, mask);
        self.b.ins().bitcast(vt, f, r)
    }

    /// One accumulation step on vectors (max/min propagate NaN as the scalar
    /// code does; a sum of products takes one `fma` per step, see `contract`).
    pub(super) fn vcombine(&mut self, op: Accum, acc: Value, x: Value, vt: Type) -> Value {
        match op {
            Accum::Sum => match self.contract(BinaryOp::Add, acc, x) {
                Some(v) => v,
                None => self.b.ins().fadd(acc, x),
            },
            Accum::Max => self.vbinary(BinaryOp::Maximum, acc, x, vt),
            _ => self.vbinary(BinaryOp::Minimum, acc, x, vt),
        }
    }

    /// Folds the copies and lanes of a vector accumulator into the reduction's
    /// scalar accumulator, for the scalar loop to go on from.
    pub(super) fn finish_vacc(&mut self, va: &VAcc) -> R<()> {
        let mut parts: Vec<Value> = va
            .vars
            .iter()
            .flatten()
            .map(|&v| self.b.use_var(v))
            .collect();
        // Pairwise, so that sums add numbers of similar size.
        while parts.len() > 1 {
            let mut next = Vec::new();
            for pair in parts.chunks(2) {
                next.push(if pair.len() == 2 {
                    self.vcombine(va.op, pair[0], pair[1], va.ty)
                } else {
                    pair[0]
                });
            }
            parts = next;
        }
        let v = parts[0];
        let lanes = va.ty.lane_count();
        let lane_ty = va.ty.lane_type();
        let mut s = self.b.ins().extractlane(v, 0);
        for l in 1..lanes {
            let x = self.b.ins().extractlane(v, l as u8);
            s = match va.op {
                Accum::Sum => self.b.ins().fadd(s, x),
                op => {
                    let dt = if lane_ty == F64 {
                        DType::F64
                    } else {
                        DType::F32
                    };
                    let bop = if op == Accum::Max {
                        BinaryOp::Maximum
                    } else {
                        BinaryOp::Minimum
                    };
                    self.binary(bop, s, x, dt)?
                }
            };
        }
        if va.op == Accum::Sum && lane_ty == F32 {
            // the scalar accumulator of a float32 sum is float64
            s = self.b.ins().fpromote(F64, s);
        }
        let a = self.accs.get(&va.expr).ok_or_else(|| {
            super::CodegenError::Malformed(format!("v{}: reduction without a loop", va.expr))
        })?;
        self.b.def_var(a.var, s);
        Ok(())
    }
}
