//! Which kernels take the wider forms (four-lane vector groups, a block per point
//! for long reductions, column-like kernels), and the helpers those forms share.

use super::{round, Rep};
use lazyfuse_ir::kernel::{Accum, Affine, Expr, LoopKernel, MathMode, Stage};
use lazyfuse_ir::DType;

/// Threads per block the launcher uses (the kernels declare it as their launch bound).
pub const BLOCK_THREADS: u32 = 256;

/// Points per group of a vectorized kernel (one 4-element vector per contiguous
/// param: 16 bytes of float32).
pub(super) const LANES: usize = 4;

/// Whether `k` runs vectorized ([`Emit::vector_function`](super::Emit::vector_function)): an elementwise kernel (no
/// reduction phase, no data-dependent load) whose last parallel dim is a multiple of
/// [`LANES`], every access contiguous (stride 1) or broadcast (stride 0, loads only)
/// along it, every contiguous access starting at a multiple of [`LANES`] elements
/// (with the other strides, so each vector is aligned when the buffer is), and no
/// buffer both read and written (a group loads before it stores, but another
/// thread's group might not have).
pub(super) fn vectorizes(k: &LoopKernel) -> bool {
    let np = k.n_parallel;
    if np == 0 || k.phases() > 0 || k.dims.len() != np || !k.dims[np - 1].is_multiple_of(LANES) {
        return false;
    }
    let last = np - 1;
    let aligned = |a: &Affine| {
        a.offset % LANES as i64 == 0 && a.strides[..last].iter().all(|s| s % LANES as i64 == 0)
    };
    let written = k.written_bufs();
    let loads_ok = k.exprs.iter().all(|e| match &e.expr {
        Expr::Load { .. } => k
            .vector_load(&e.expr, last, &written)
            .is_some_and(|(_, index)| index.strides[last] == 0 || aligned(index)),
        Expr::Reduce { .. } | Expr::Scan { .. } => false,
        _ => true,
    });
    loads_ok
        && k.stores
            .iter()
            .all(|s| s.index.strides[last] == 1 && aligned(&s.index))
}

/// Reduction points per parallel point from which a block shares them (below, one
/// thread per point keeps more points in flight).
pub(super) const BLOCK_REDUCE_MIN: usize = 64;

/// Whether `k` runs one block per parallel point ([`Emit::block_function`](super::Emit::block_function)): a
/// reducing kernel in fast math (the partials combine in a tree, not in the
/// interpreter's order; exact math keeps each point on one thread) whose every
/// reduction has an identity for threads without points and combines associatively
/// (sum, prod, max, min, any, all: not the arg reductions), without scans (a running
/// value is sequential), over at least [`BLOCK_REDUCE_MIN`] points, and not along
/// columns ([`column_like`]).
pub(super) fn block_reduces(k: &LoopKernel, math: MathMode) -> bool {
    math == MathMode::Fast
        && k.phases() > 0
        && k.reduce_dims().iter().product::<usize>() >= BLOCK_REDUCE_MIN
        && !column_like(k)
        && k.exprs.iter().all(|e| match e.expr {
            Expr::Scan { .. } => false,
            Expr::Reduce { op, .. } => !matches!(op, Accum::ArgMax | Accum::ArgMin),
            _ => true,
        })
}

/// Whether `k` reduces along columns: many parallel points, and a reduction-phase
/// load contiguous along the last parallel dim. There one thread per point is the
/// better layout: neighbouring threads read neighbouring elements (coalesced), where
/// a block per point would read one element per column stride.
pub(super) fn column_like(k: &LoopKernel) -> bool {
    let np = k.n_parallel;
    np > 0
        && k.parallel_points() >= 1024
        && k.exprs.iter().any(|e| {
            matches!(e.stage, Stage::Inner(_))
                && matches!(&e.expr, Expr::Load { index, .. } if index.strides[np - 1] == 1)
        })
}

/// A register value of `dt` as the bits it is stored as.
pub(super) fn stored_bits(v: &str, dt: DType) -> String {
    match dt {
        DType::Bool => format!("(u8){v}"),
        DType::F16 => format!("lf_f16_bits({v})"),
        DType::BF16 => format!("lf_bf16_bits({v})"),
        _ => v.to_string(),
    }
}

/// The register value of a stored element `raw` of `dt`.
pub(super) fn lane_value(raw: &str, dt: DType) -> String {
    match dt {
        DType::Bool => format!("({raw} != 0)"),
        DType::F16 => format!("lf_f16_load({raw})"),
        DType::BF16 => format!("lf_bf16_load({raw})"),
        _ => raw.to_string(),
    }
}

/// The accumulator `a` combined with `v` by `op` on values of `xdt` (held as `r`):
/// one step of a reduction's loop, or of `lf_block_reduce`'s tree. `None` for the arg
/// reductions (which also keep an index) and rules `xdt` has none of.
pub(super) fn combine(op: Accum, r: Rep, xdt: DType, a: &str, v: &str) -> Option<String> {
    let float = matches!(r, Rep::F32 | Rep::F64);
    Some(match (op, r) {
        (Accum::Sum | Accum::Any | Accum::Max, Rep::Bool) => format!("({a} || {v})"),
        (Accum::Prod | Accum::All | Accum::Min, Rep::Bool) => format!("({a} && {v})"),
        (Accum::Sum, _) if float => round(format!("({a} + {v})"), xdt),
        (Accum::Prod, _) if float => round(format!("({a} * {v})"), xdt),
        (Accum::Sum, Rep::Int { c, .. }) => format!("({c})((u64){a} + (u64){v})"),
        (Accum::Prod, Rep::Int { c, .. }) => format!("({c})((u64){a} * (u64){v})"),
        (Accum::Max, _) if float => format!("lf_maximum({a}, {v})"),
        (Accum::Min, _) if float => format!("lf_minimum({a}, {v})"),
        (Accum::Max, Rep::Int { .. }) => format!("({a} < {v} ? {v} : {a})"),
        (Accum::Min, Rep::Int { .. }) => format!("({v} < {a} ? {v} : {a})"),
        _ => return None,
    })
}
