//! Node → expression generation: the value of one element of a node inside a
//! kernel, inlined from its producers unless they are materialized, with constant
//! casts folded as the interpreter computes them.

use super::{
    flat, fold_cast, may_fail_from, unravel, Affine, Builder, Ctx, Fail, Reason, MAX_DEPTH,
    MAX_EXPRS,
};
use crate::dtype::DType;
use crate::graph::NodeId;
use crate::kernel::{Const, Expr, ExprId};
use crate::op::{BinaryOp, Op};
use crate::scalar::Scalar;

impl Builder {
    /// The value of element `coords` of node `n` (inlined unless materialized).
    pub(crate) fn gen(
        &mut self,
        ctx: &Ctx,
        n: NodeId,
        coords: &[Affine],
        phase: Option<u32>,
    ) -> Result<ExprId, Fail> {
        crate::work::add(1);
        let inner = coords.iter().any(|c| self.is_inner(c)) || self.empty_reduction();
        let key_phase = if inner { phase } else { None };
        let key = (n, coords.to_vec(), key_phase);
        if let Some(&e) = self.memo.get(&key) {
            return Ok(e);
        }
        let node = ctx.graph.node(n);
        let v = if matches!(node.op, Op::Input(_)) || ctx.materialized.contains_key(&n) {
            if self.roots.contains(&n) {
                // A root of this kernel read at other coordinates than its own.
                return Err(Fail::Merge);
            }
            let idx = flat(&node.shape, coords);
            self.load(ctx, ctx.buf_of[&n], idx, key_phase)?
        } else if self.depth > MAX_DEPTH {
            // Inlining recurses once per producer: a deep chain is cut into kernels
            // (each restart stores one more value) instead of overflowing the stack.
            return Err(Fail::Materialize(n, Reason::DeeperThan(MAX_DEPTH)));
        } else if self.exprs.len() > MAX_EXPRS {
            // Recomputing through many index maps can grow a kernel without bound:
            // past this size, values are stored and loaded instead.
            return Err(Fail::Materialize(n, Reason::MoreExpressionsThan(MAX_EXPRS)));
        } else {
            self.note_node(ctx, n);
            self.depth += 1;
            let v = self.gen_by_op(ctx, n, coords, key_phase);
            self.depth -= 1;
            v?
        };
        self.memo.insert(key, v);
        Ok(v)
    }

    /// The value of element `coords` of node `n`, computed from its op.
    pub(super) fn gen_by_op(
        &mut self,
        ctx: &Ctx,
        n: NodeId,
        coords: &[Affine],
        phase: Option<u32>,
    ) -> Result<ExprId, Fail> {
        let node = ctx.graph.node(n);
        let ins = ctx.graph.inputs(n);
        let dt = node.dtype;
        match &node.op {
            Op::Input(_) => Err(Fail::Error("input computed by op".into())),
            Op::Full(s) => {
                let (c, nat) = match *s {
                    Scalar::Bool(b) => (Const::Bool(b), DType::Bool),
                    Scalar::Int(i) => (Const::Int(i as i128), DType::I64),
                    Scalar::Float(f) => (Const::Float(f), DType::F64),
                    Scalar::Complex(..) => {
                        return Err(Fail::Error("complex fill in a loop kernel".into()))
                    }
                };
                if let Some(folded) = fold_cast(c, dt) {
                    // no dead constant of the natural dtype left behind (it would
                    // make the kernel mixed-dtype)
                    return Ok(self.constant(folded, dt));
                }
                let c = self.constant(c, nat);
                self.cast(c, dt, phase)
            }
            Op::Arange { start, step } => {
                let i = self.affine_value(&coords[0], phase)?;
                if dt.is_integer() {
                    // The interpreter: `(start as i64).wrapping_add(i * (step as i64))`.
                    let s = self.constant(Const::Int(*start as i64 as i128), DType::I64);
                    let st = self.constant(Const::Int(*step as i64 as i128), DType::I64);
                    let m = self.emit(
                        Expr::Binary {
                            op: BinaryOp::Mul,
                            a: i,
                            b: st,
                        },
                        DType::I64,
                        phase,
                    )?;
                    let v = self.emit(
                        Expr::Binary {
                            op: BinaryOp::Add,
                            a: s,
                            b: m,
                        },
                        DType::I64,
                        phase,
                    )?;
                    self.cast(v, dt, phase)
                } else {
                    // The interpreter: `start + i as f64 * step` in f64, then converted.
                    let f = self.cast(i, DType::F64, phase)?;
                    let st = self.constant(Const::Float(*step), DType::F64);
                    let s = self.constant(Const::Float(*start), DType::F64);
                    let m = self.emit(
                        Expr::Binary {
                            op: BinaryOp::Mul,
                            a: f,
                            b: st,
                        },
                        DType::F64,
                        phase,
                    )?;
                    let v = self.emit(
                        Expr::Binary {
                            op: BinaryOp::Add,
                            a: s,
                            b: m,
                        },
                        DType::F64,
                        phase,
                    )?;
                    self.cast(v, dt, phase)
                }
            }
            Op::View(layout) => {
                let p = ins[0];
                let pnode = ctx.graph.node(p);
                let f = coords
                    .iter()
                    .zip(&layout.strides)
                    .fold(Affine::constant(layout.offset as i64), |acc, (c, &s)| {
                        c.scaled_add(s as i64, &acc)
                    });
                let here = self.roots.contains(&p);
                if !here && (matches!(pnode.op, Op::Input(_)) || ctx.materialized.contains_key(&p))
                {
                    let k = phase.filter(|_| self.is_inner(&f) || self.empty_reduction());
                    let v = self.load(ctx, ctx.buf_of[&p], f, k)?;
                    return Ok(v);
                }
                match unravel(&f, &pnode.shape, &self.dims()) {
                    // (a root of this kernel is found at its own coordinates, or the
                    // merge fails)
                    Some(pc) if reads_every_element(layout, pnode) => self.gen(ctx, p, &pc, phase),
                    Some(pc) => {
                        // A view of part of its base computes only that part
                        // inline: where the base's ops may fail (an integer
                        // division by zero, an index out of range), a failing
                        // element the view skips must still fail, as the base
                        // computed whole does.
                        let before = self.exprs.len();
                        let v = self.gen(ctx, p, &pc, phase)?;
                        if may_fail_from(&self.exprs, before) {
                            return Err(Fail::Materialize(p, Reason::PartialViewMayFail(n)));
                        }
                        Ok(v)
                    }
                    None if here => Err(Fail::Merge),
                    None => Err(Fail::Materialize(p, Reason::ViewDoesNotDecompose(n))),
                }
            }
            Op::Flip { axes } => {
                let shape = &node.shape;
                let pc: Vec<Affine> = coords
                    .iter()
                    .enumerate()
                    .map(|(d, c)| {
                        if axes.contains(&d) {
                            c.scaled_add(-1, &Affine::constant(shape[d] as i64 - 1))
                        } else {
                            c.clone()
                        }
                    })
                    .collect();
                self.gen(ctx, ins[0], &pc, phase)
            }
            Op::Cast => {
                let x = self.gen(ctx, ins[0], coords, phase)?;
                self.cast(x, dt, phase)
            }
            Op::Unary(op) => {
                let x = self.gen(ctx, ins[0], coords, phase)?;
                self.emit(Expr::Unary { op: *op, x }, dt, phase)
            }
            Op::UnaryParam(op) => {
                let x = self.gen(ctx, ins[0], coords, phase)?;
                self.emit(Expr::UnaryParam { op: *op, x }, dt, phase)
            }
            Op::Binary(op) => {
                let a = self.gen(ctx, ins[0], coords, phase)?;
                let b = self.gen(ctx, ins[1], coords, phase)?;
                self.emit(Expr::Binary { op: *op, a, b }, dt, phase)
            }
            Op::Where => {
                let cond = self.gen(ctx, ins[0], coords, phase)?;
                let a = self.gen(ctx, ins[1], coords, phase)?;
                let b = self.gen(ctx, ins[2], coords, phase)?;
                self.emit(Expr::Where { cond, a, b }, dt, phase)
            }
            Op::Reduce { .. } | Op::ArgReduce { .. } => {
                super::lower::reduce(self, ctx, n, coords, phase)
            }
            Op::Gather { .. } | Op::IndexSelect { .. } | Op::Take => {
                super::lower::indexing(self, ctx, n, coords, phase)
            }
            Op::WriteView(_) => self.folded_write(ctx, n, coords, phase),
            other => Err(Fail::Materialize(n, Reason::OwnStep(other.name()))),
        }
    }
}

/// Whether the view `layout` of `base` reads each of its elements (broadcasts
/// aside): a permutation or reshape of the whole, not a part of it. A view of no
/// element reads none of a base that has some (its empty dim may have stride 0,
/// which is no broadcast).
fn reads_every_element(layout: &crate::layout::Layout, base: &crate::graph::Node) -> bool {
    if layout.shape.contains(&0) {
        return base.shape.contains(&0);
    }
    let mut whole = layout.clone();
    for d in 0..whole.shape.len() {
        if whole.strides[d] == 0 {
            whole.shape[d] = 1;
        }
    }
    whole.offset == 0
        && Some(whole.numel()) == crate::shape::checked_count(&base.shape).ok()
        && whole.is_non_overlapping_and_dense()
}
