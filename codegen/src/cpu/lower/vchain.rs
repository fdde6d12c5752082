//! Routine chains: an elementwise kernel with an output run ([`super::vrun`])
//! computes each run of its output in passes, one per transcendental with a
//! routine, wherever that op sits in the expression.
//!
//! The stored value's transcendental is the last op of the chain; the others
//! are *cuts*. A pass's vector tiers compute the expressions between the
//! previous cut and the next (the previous cut's value read back from the
//! output run, where its routine left it) and store the next cut's argument
//! into the run; the cut's routine then rewrites the run in place. W9's chain
//! `tanh(exp(max(log(...), 0.1) / 3))` is one pass up to `log`'s argument, the
//! `log` routine, a pass from `log` to `exp`'s argument, the `exp` and `tanh`
//! routines back to back: every transcendental 16 lanes wide instead of
//! Cranelift's 4, the run staying in L1 between the passes.
//!
//! A cut splits the expression in two: the pass after it may read nothing the
//! pass before computes but the cut itself, loads, constants and row-invariant
//! values (which are recomputed, reloaded or already hoisted), so no pass
//! repeats another's work. The routines' arithmetic is the vector code's
//! (`vmath`, op for op), and the run holds the cut's exact value between
//! passes, so the chain gives the bits of the inline code; the scalar points
//! of a row's tail take the same passes. A float16 or bfloat16 kernel's run is
//! a float32 tile (`vrun`'s `OutputRun::tile`): its readback rounds the
//! routine's results to the dtype, as the inline op does.

use super::vrun::run_symbol;
use super::{Lower, R};
use cranelift_codegen::ir::types::F32;
use cranelift_codegen::ir::{InstBuilder, Value};
use lazyfuse_ir::kernel::{Expr, ExprId, LoopKernel};
use lazyfuse_ir::DType;

/// Most cuts one chain makes (each pass is another copy of the vector tiers).
const MAX_CUTS: usize = 6;

/// Shortest row (points along the last dim) whose kernel makes cuts: every
/// pass runs per row, and a row of a few vectors would pay a routine call per
/// pass for as little work as the inline code does.
const MIN_CUT_ROW: usize = 64;

/// One pass over a run (see the module doc).
pub(super) struct Pass {
    /// the expressions the pass computes
    pub(super) needed: Vec<bool>,
    /// the cut whose value the pass reads back from the run (`None`: the first
    /// pass)
    pub(super) readback: Option<usize>,
    /// the value the pass stores into the run (the readback itself: the pass
    /// has nothing to compute, only its routine runs)
    pub(super) target: ExprId,
    /// the op whose routine (`exp_f32`, see [`run_symbol`]) then rewrites the
    /// run in place (`None`: the pass stores the kernel's result)
    pub(super) then: Option<(usize, &'static str)>,
}

/// The passes of an elementwise kernel whose one store writes `store` (the
/// kernel's dtype `dt`: float32 or float64, or float16 or bfloat16, whose ops
/// take the float32 routines), first pass first, or `None` where no routine
/// applies. One pass with a routine is the plain output run.
pub(super) fn passes(
    k: &LoopKernel,
    hoisted: &[bool],
    dt: DType,
    store: ExprId,
) -> Option<Vec<Pass>> {
    // (a float16 or bfloat16 op computes in float32 and rounds the result)
    let element = match dt {
        DType::F16 | DType::BF16 => DType::F32,
        _ => dt,
    };
    let routine = |i: usize| -> Option<((usize, &'static str), ExprId)> {
        let e = &k.exprs[i];
        if e.dtype != dt || hoisted[i] {
            return None;
        }
        run_symbol(&e.expr, element).map(|(symbol, x)| ((i, symbol), x))
    };
    let cheap =
        |i: usize| hoisted[i] || matches!(k.exprs[i].expr, Expr::Load { .. } | Expr::Const(_));
    let short = k.dims[k.n_parallel - 1] < MIN_CUT_ROW;
    let mut passes = Vec::new();
    let (mut target, mut then) = match routine(store.0 as usize) {
        Some((symbol, x)) => (x, Some(symbol)),
        None => (store, None),
    };
    loop {
        let whole = cone(k, target, None);
        let cut = (0..k.exprs.len())
            .rev()
            .filter(|&i| whole[i])
            .take_while(|_| !short && passes.len() < MAX_CUTS)
            .find_map(|i| {
                let (symbol, x) = routine(i)?;
                let after = cone(k, target, Some(i));
                let before = cone(k, x, None);
                let shared =
                    (0..k.exprs.len()).any(|j| j != i && after[j] && before[j] && !cheap(j));
                (!shared).then_some((i, symbol, x, after))
            });
        match cut {
            Some((i, symbol, x, after)) => {
                passes.push(Pass {
                    needed: after,
                    readback: Some(i),
                    target,
                    then,
                });
                (target, then) = (x, Some(symbol));
            }
            None => {
                passes.push(Pass {
                    needed: whole,
                    readback: None,
                    target,
                    then,
                });
                break;
            }
        }
    }
    passes.reverse();
    passes.iter().any(|p| p.then.is_some()).then_some(passes)
}

/// The expressions `root` is computed from, itself included, not looking
/// past `stop` (which is included).
fn cone(k: &LoopKernel, root: ExprId, stop: Option<usize>) -> Vec<bool> {
    let mut mark = vec![false; k.exprs.len()];
    mark[root.0 as usize] = true;
    for i in (0..=root.0 as usize).rev() {
        if mark[i] && Some(i) != stop {
            for o in LoopKernel::operands(&k.exprs[i].expr) {
                mark[o.0 as usize] = true;
            }
        }
    }
    mark
}

impl Lower<'_, '_> {
    /// The passes over one run of the current row, from point `iv` (the last
    /// dim's index) up to `ce`, whose output starts at address `start`: each
    /// pass's vector tiers from `iv`, then its scalar points up to `ce` (the
    /// row's tail, fewer than a vector, in its last run), then its routine over
    /// the run. The tail takes the routines rather than an inline copy of every
    /// op, which would be most of a small kernel's instructions and so of its
    /// compile time. Leaves the last dim's index at `ce`.
    pub(super) fn chain_passes(&mut self, start: Value, iv: Value, ce: Value) -> R<()> {
        let last = self.idx[self.k.n_parallel - 1];
        let passes = std::mem::take(&mut self.passes);
        let needed = self.needed.clone();
        let n = self.b.ins().isub(ce, iv);
        for p in &passes {
            // A first pass that only loads its routine's argument, contiguous
            // along the row in the run's dtype (`exp` of `x.exp().tanh()`),
            // is no pass: the routine reads the input itself.
            let src = match p.then {
                Some((op, _))
                    if p.readback.is_none()
                        && self.tile.is_none()
                        && self.k.exprs[p.target.0 as usize].dtype == self.k.exprs[op].dtype
                        && super::vrun::row_load(self.k, p.target) =>
                {
                    self.b.def_var(last, iv);
                    Some(self.load_address(p.target)?)
                }
                _ => None,
            };
            // (a pass with nothing to compute still runs over a narrow run's
            // tile: its readback rounds the routine's results to the dtype)
            if src.is_none() && (p.readback != Some(p.target.0 as usize) || self.tile.is_some()) {
                self.b.def_var(last, iv);
                self.needed.clone_from(&p.needed);
                self.readback = p.readback;
                self.run_target = Some(p.target);
                let tiers = self.tiers();
                self.tier_loops(&tiers, ce)?;
                // (the scalar points compute every value themselves; the row's
                // values stay for the next run's vector tiers)
                let row_values = std::mem::replace(&mut self.vals, vec![None; self.k.exprs.len()]);
                self.scalar_points(ce)?;
                self.vals = row_values;
            }
            if let Some((_, routine)) = p.then {
                let from = src.unwrap_or(start);
                self.call_void(&format!("lf_run_{routine}"), &[start, from, n])?;
            }
        }
        self.b.def_var(last, ce);
        self.needed = needed;
        self.readback = None;
        self.run_target = None;
        self.passes = passes;
        Ok(())
    }

    /// The run's readback value at the current point (a scalar load of the
    /// output run), or `None` where `i` is not it.
    pub(super) fn readback_scalar(&mut self, i: usize) -> R<Option<Value>> {
        if self.readback != Some(i) {
            return Ok(None);
        }
        let r = self.run.expect("a readback belongs to a run");
        let dt = self.k.exprs[i].dtype;
        if let Some(addr) = self.tile_address(r.store, 0) {
            // (a narrow run's tile holds the routine's float32 results: the
            // op's rounding is still to come)
            let v = self.b.ins().load(F32, super::flags(), addr, 0);
            return self.round(v, dt).map(Some);
        }
        let addr = self.run_address(r)?;
        self.load(addr, dt).map(Some)
    }

    /// The vectors of the run's readback value (the output run at the current
    /// point, `copies` blocks of `lanes`), or `None` where `i` is not it.
    pub(super) fn readback_vectors(
        &mut self,
        i: usize,
        vt: cranelift_codegen::ir::Type,
        copies: usize,
    ) -> R<Option<Vec<Value>>> {
        if self.readback != Some(i) {
            return Ok(None);
        }
        let r = self.run.expect("a readback belongs to a run");
        let dt = self.k.exprs[i].dtype;
        let lanes = i64::from(vt.lane_count());
        if self.tile.is_some() {
            // (as `readback_scalar`: the float32 results, rounded here)
            let mut out = Vec::with_capacity(copies);
            for c in 0..copies {
                let addr = self
                    .tile_address(r.store, c as i64 * lanes)
                    .expect("a tile run's store");
                let v = self.b.ins().load(vt, super::flags(), addr, 0);
                out.push(self.vround_narrow(v, dt));
            }
            return Ok(Some(out));
        }
        let s = &self.k.stores[r.store];
        let (param, index) = (s.param, s.index.clone());
        (0..copies)
            .map(|c| self.vload(param, &index, c as i64 * lanes, vt, dt))
            .collect::<R<Vec<_>>>()
            .map(Some)
    }
}
