//! The lowering both code generators share: the order in which one parallel point
//! of a [`LoopKernel`] is computed, and the dispatch of each expression to the
//! [`Emitter`] that renders it (Cranelift in [`crate::cpu`], CUDA C in
//! [`crate::cuda`]).
//!
//! A point runs its `Outer(0)` stage; then, per phase, the phase's accumulators and
//! scans start, a loop over the phase's reduction points runs its `Inner` stage and
//! folds each point into the accumulators, and the next `Outer` stage reads the
//! results; outer stages past the last phase (which the verifier allows) run in
//! order after it. A stage computes its needed expressions in index order (operands
//! precede their users, one of the verifier's invariants), then does its stores.
//!
//! What the emitters decide is how a loop, a value and a store are written, and the
//! layouts each adds around this skeleton (Cranelift's vector tiers and vector
//! phases, CUDA's vector groups and block-per-point reductions). The rules a value
//! follows (accumulator dtypes, identities, tie and NaN rules, compensation, scan
//! states) are [`semantics`](crate::semantics)'.

use crate::CodegenError;
use lazyfuse_ir::kernel::{
    Accum, Affine, Const, DynIndex, Expr, ExprId, LoopKernel, ParamId, ScanAccum, Stage, StoreOp,
};
use lazyfuse_ir::{BinaryOp, DType, UnaryOp, UnaryParamOp};

type R<T> = Result<T, CodegenError>;

/// A code generator's rendering of the shared lowering. Operands arrive as
/// [`ExprId`]s of expressions already computed (at an earlier stage, or earlier in
/// this one); each `emit_*` method renders expression `i`'s op and returns its value,
/// which [`define`](Emitter::define) then binds to `i`.
pub(crate) trait Emitter<'k> {
    /// A computed value, as the generator holds it.
    type Value;

    /// The kernel being rendered.
    fn kernel(&self) -> &'k LoopKernel;
    /// Whether expression `i` is needed (its value reaches a store).
    fn needed(&self, i: usize) -> bool;
    /// Fails where the generator has no register representation for `dt` (checked
    /// before each expression is rendered).
    fn represent(&self, dt: DType) -> R<()>;

    /// Expression `i`: a load of `param` at `index` (plus a checked dynamic term).
    fn emit_load(
        &mut self,
        i: usize,
        param: ParamId,
        index: &Affine,
        dynamic: Option<&DynIndex>,
    ) -> R<Self::Value>;
    /// Expression `i`: constant `c`.
    fn emit_const(&mut self, i: usize, c: Const) -> R<Self::Value>;
    /// Expression `i`: the loop index of `dim`.
    fn emit_loop_index(&mut self, i: usize, dim: usize) -> R<Self::Value>;
    /// Expression `i`: `op` of `x`.
    fn emit_unary(&mut self, i: usize, op: UnaryOp, x: ExprId) -> R<Self::Value>;
    /// Expression `i`: the parametrized `op` of `x`.
    fn emit_unary_param(&mut self, i: usize, op: UnaryParamOp, x: ExprId) -> R<Self::Value>;
    /// Expression `i`: `op` of `a` and `b`.
    fn emit_binary(&mut self, i: usize, op: BinaryOp, a: ExprId, b: ExprId) -> R<Self::Value>;
    /// Expression `i`: `a` where `cond`, else `b`.
    fn emit_where(&mut self, i: usize, cond: ExprId, a: ExprId, b: ExprId) -> R<Self::Value>;
    /// Expression `i`: `x` converted to `i`'s dtype.
    fn emit_cast(&mut self, i: usize, x: ExprId) -> R<Self::Value>;
    /// Expression `i`: reduction `op`'s result after its phase's loop.
    fn emit_reduce(&mut self, i: usize, op: Accum, x: ExprId) -> R<Self::Value>;
    /// Expression `i`: scan `op`'s running value after folding in this point's `x`.
    fn emit_scan(&mut self, i: usize, op: ScanAccum, x: ExprId) -> R<Self::Value>;
    /// Binds `v` as expression `i`'s value for its users.
    fn define(&mut self, i: usize, v: Self::Value) -> R<()>;
    /// Writes store `s` (of a value computed at `stage`).
    fn store(&mut self, s: &StoreOp, stage: Stage) -> R<()>;

    /// Starts phase `phase`'s accumulators and scans.
    fn begin_phase(&mut self, phase: u32) -> R<()>;
    /// The loop over phase `phase`'s `points` reduction points (at least one),
    /// running `body` at each with the reduction dims' indices and the position
    /// set (`body` may be rendered once per point where the loop is unrolled).
    fn reduction_loop(
        &mut self,
        phase: u32,
        points: usize,
        body: impl FnMut(&mut Self) -> R<()>,
    ) -> R<()>;
    /// Folds the current reduction point into phase `phase`'s accumulators.
    fn update_accs(&mut self, phase: u32) -> R<()>;
    /// Ends phase `phase`, after its loop and before the stage that reads its
    /// results.
    fn end_phase(&mut self, phase: u32) -> R<()>;
}

/// One parallel point with all its stages and phases.
pub(crate) fn point<'k, E: Emitter<'k>>(e: &mut E) -> R<()> {
    let k = e.kernel();
    let reduction_points: usize = k.reduce_dims().iter().product();
    stage(e, Stage::Outer(0))?;
    for ph in 0..k.phases() {
        e.begin_phase(ph)?;
        if reduction_points > 0 {
            e.reduction_loop(ph, reduction_points, |e| {
                stage(e, Stage::Inner(ph))?;
                e.update_accs(ph)
            })?;
        }
        e.end_phase(ph)?;
        stage(e, Stage::Outer(ph + 1))?;
    }
    for s in k.phases() + 1..=k.last_outer_stage() {
        stage(e, Stage::Outer(s))?;
    }
    Ok(())
}

/// Computes the needed expressions of `stage`, then does its stores.
pub(crate) fn stage<'k, E: Emitter<'k>>(e: &mut E, stage: Stage) -> R<()> {
    let k = e.kernel();
    for (i, node) in k.exprs.iter().enumerate() {
        if node.stage == stage && e.needed(i) {
            let v = value(e, i)?;
            e.define(i, v)?;
        }
    }
    for s in k.stage_stores(stage) {
        e.store(&s, stage)?;
    }
    Ok(())
}

/// Expression `i`'s value, rendered by the emitter method of its kind.
pub(crate) fn value<'k, E: Emitter<'k>>(e: &mut E, i: usize) -> R<E::Value> {
    let node = &e.kernel().exprs[i];
    e.represent(node.dtype)?;
    match &node.expr {
        Expr::Load {
            param,
            index,
            dynamic,
        } => e.emit_load(i, *param, index, dynamic.as_ref()),
        Expr::Const(c) => e.emit_const(i, *c),
        Expr::LoopIndex { dim } => e.emit_loop_index(i, *dim),
        Expr::Unary { op, x } => e.emit_unary(i, *op, *x),
        Expr::UnaryParam { op, x } => e.emit_unary_param(i, *op, *x),
        Expr::Binary { op, a, b } => e.emit_binary(i, *op, *a, *b),
        Expr::Where { cond, a, b } => e.emit_where(i, *cond, *a, *b),
        Expr::Cast { x } => e.emit_cast(i, *x),
        Expr::Reduce { op, x } => e.emit_reduce(i, *op, *x),
        Expr::Scan { op, x } => e.emit_scan(i, *op, *x),
    }
}
