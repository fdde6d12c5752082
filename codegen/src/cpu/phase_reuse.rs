//! Reuse of a value across reduction phases (CPU kernels).
//!
//! A softmax row runs three phases: the row's max, then the sum of
//! `exp(x − max)`, then `exp(x − max) / sum` stored. The fused kernel computes
//! the same `exp(x − max)` in the second and third phases, and the exponential is
//! most of the kernel's work. Here the CPU code keeps the earlier phase's value
//! in the kernel's own output element (the slot the last phase overwrites) and
//! the last phase loads it back instead of computing it again: one exponential
//! per element instead of two, with the row's values still in cache.
//!
//! The rewrite is exact: the last phase reads the very bits the earlier phase
//! computed, which are the bits it would have computed itself (the same
//! expression of the same loads and outer values). It applies only where that is
//! provable on the kernel:
//! - one store into the output buffer, contiguous along the kernel's single
//!   reduction dim (the last), at an index that no two points share, so each point
//!   reads back only the slot it wrote;
//! - no load of the output buffer, and no load of any buffer the kernel writes,
//!   so equal loads in two phases read equal values;
//! - the reused value has the output's dtype (kept without rounding) and includes
//!   an expensive op ([`includes_expensive`]); cheap ones are not worth a store
//!   and a load.
//!
//! Fast math's vectorized phases can also keep such a value in a stack slot for
//! the next phase (`lower::vreduce`'s `phase_reuses`, rows up to 64 KiB). The
//! output slot serves both math modes, the scalar tail and rows of any length,
//! and adds no memory that the last phase does not write anyway; the stack slot
//! keeps what the rewrite leaves (a float16 softmax's float32 exps). Both match
//! values with [`same_value`].
//!
//! The CUDA kernels keep the recomputation: their phases split a row over the
//! threads of a block, and this rewrite is measured only on the CPU.

use lazyfuse_ir::kernel::{Affine, Expr, ExprId, LoopKernel, Stage, StoreOp};

/// `k` with its last phase's recomputation of an earlier phase's expensive value
/// replaced by a load of the value kept in the output (see the module doc), or
/// `None` where the rewrite does not apply.
pub(crate) fn reuse_phase_values(k: &LoopKernel) -> Option<LoopKernel> {
    let nd = k.dims.len();
    if k.phases() < 2 || nd != k.n_parallel + 1 {
        return None;
    }
    let written = k.written_bufs();
    let [store] = k.stores.as_slice() else {
        return None;
    };
    let out = &k.params[store.param.index()];
    let Stage::Inner(last) = k.exprs[store.value.0 as usize].stage else {
        return None;
    };
    let loads_written = k.exprs.iter().any(|e| match &e.expr {
        Expr::Load { param, .. } => written.contains(&k.params[param.index()].buf),
        _ => false,
    });
    if loads_written || store.index.strides[nd - 1] != 1 || !injective(&k.dims, &store.index) {
        return None;
    }
    let needed = k.needed_exprs();
    // The latest (so the largest) expression of the last phase that an earlier
    // phase computes too.
    let (reused, first) = (0..k.exprs.len()).rev().find_map(|later| {
        let e = &k.exprs[later];
        if !needed[later] || e.dtype != out.dtype || !includes_expensive(k, later, last) {
            return None;
        }
        let earlier = (0..later).find(|&i| {
            matches!(k.exprs[i].stage, Stage::Inner(ph) if ph < last) && same_value(k, i, later)
        })?;
        Some((later, earlier))
    })?;
    let mut r = k.clone();
    r.stores.insert(
        0,
        StoreOp {
            param: store.param,
            index: store.index.clone(),
            value: ExprId(first as u32),
        },
    );
    r.exprs[reused].expr = Expr::Load {
        param: store.param,
        index: store.index.clone(),
        dynamic: None,
    };
    Some(r)
}

/// Whether load `e` reads, at every point, only the element that every store of
/// its buffer writes at that point (the same param and index: the slot this
/// module's rewrite keeps a value in). Such a load may run a vector of points
/// at a time although the kernel writes its buffer: no point reads another
/// point's element, and each point's own store comes after its load.
pub(crate) fn reads_own_slot(k: &LoopKernel, e: &Expr) -> bool {
    let Expr::Load {
        param,
        index,
        dynamic: None,
    } = e
    else {
        return false;
    };
    let buf = k.params[param.index()].buf;
    k.stores
        .iter()
        .filter(|s| k.params[s.param.index()].buf == buf)
        .all(|s| s.param == *param && s.index == *index)
}

/// Whether `index` gives distinct elements to distinct points of `dims`: sorted
/// by stride, each dim of more than one point steps past all the elements the
/// dims inside it reach.
fn injective(dims: &[usize], index: &Affine) -> bool {
    let mut walked: Vec<(i64, usize)> = index
        .strides
        .iter()
        .zip(dims)
        .filter(|(_, &d)| d > 1)
        .map(|(&s, &d)| (s.abs(), d))
        .collect();
    walked.sort_unstable();
    let mut reach = 0i64;
    for (s, d) in walked {
        if s <= reach {
            return false;
        }
        reach = reach.saturating_add(s.saturating_mul(d as i64 - 1));
    }
    true
}

/// Whether expression `i` (of phase `ph`'s inner stage) includes an expensive op.
pub(crate) fn includes_expensive(k: &LoopKernel, i: usize, ph: u32) -> bool {
    let e = &k.exprs[i];
    if e.stage != Stage::Inner(ph) {
        return false;
    }
    lazyfuse_ir::schedule::expensive(&e.expr)
        || LoopKernel::operands(&e.expr)
            .iter()
            .any(|o| includes_expensive(k, o.0 as usize, ph))
}

/// Whether expressions `a` and `b` compute the same value at every position: the
/// same expression, or inner ones applying the same op to operands of the same
/// values (loads of the same param at the same index, equal constants).
pub(crate) fn same_value(k: &LoopKernel, a: usize, b: usize) -> bool {
    if a == b {
        return true;
    }
    let (x, y) = (&k.exprs[a], &k.exprs[b]);
    if x.dtype != y.dtype
        || !matches!(x.stage, Stage::Inner(_))
        || !matches!(y.stage, Stage::Inner(_))
    {
        return false;
    }
    let same = |p: &ExprId, q: &ExprId| same_value(k, p.0 as usize, q.0 as usize);
    match (&x.expr, &y.expr) {
        (
            Expr::Load {
                param: p,
                index: i,
                dynamic: None,
            },
            Expr::Load {
                param: q,
                index: j,
                dynamic: None,
            },
        ) => p == q && i == j,
        (Expr::Const(c), Expr::Const(d)) => c == d,
        (Expr::Cast { x: p }, Expr::Cast { x: q }) => same(p, q),
        (Expr::Unary { op: f, x: p }, Expr::Unary { op: g, x: q }) => f == g && same(p, q),
        (Expr::Binary { op: f, a: p, b: r }, Expr::Binary { op: g, a: q, b: s }) => {
            f == g && same(p, q) && same(r, s)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lazyfuse_ir::kernel::Affine;

    #[test]
    fn injective_indices() {
        let a = |strides: Vec<i64>| Affine { offset: 0, strides };
        assert!(injective(&[4, 8], &a(vec![8, 1])));
        assert!(injective(&[4, 8], &a(vec![1, 4])));
        assert!(injective(&[4, 8], &a(vec![16, 1])));
        assert!(injective(&[1, 8], &a(vec![0, 1])));
        assert!(!injective(&[4, 8], &a(vec![0, 1])));
        assert!(!injective(&[4, 8], &a(vec![4, 1])));
        assert!(!injective(&[4, 8], &a(vec![8, 2]))); // row 1 starts inside row 0
    }
}
