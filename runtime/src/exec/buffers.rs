//! A run's buffers: allocation (fresh, or a kept buffer for one every point of
//! which is overwritten), the temporaries dead after each step, and the donated
//! inputs a failed run may give back unwritten.

use crate::buffer::{check_allocation, Buffer};
use crate::error::Result;
use lazyfuse_ir::kernel::{BufId, BufKind, Expr, LoopKernel, Schedule, Stage, Step};
use lazyfuse_ir::{InputId, Layout};

/// The donated buffers (slot and input id) that none of the first `steps_run` steps
/// of `schedule` writes: after a failed run, their contents are still the old
/// version, theirs to hand back.
pub(crate) fn unwritten_donations(schedule: &Schedule, steps_run: usize) -> Vec<(usize, InputId)> {
    let ran = &schedule.steps[..steps_run.min(schedule.steps.len())];
    schedule
        .buffers
        .iter()
        .enumerate()
        .filter_map(|(idx, decl)| match decl.kind {
            BufKind::Donated(id) => Some((idx, id)),
            _ => None,
        })
        .filter(|&(idx, _)| {
            let b = BufId(idx as u32);
            !ran.iter().any(|s| match s {
                Step::Loop(k) => k.params.iter().any(|p| p.buf == b && p.writes),
                Step::Extern(e) => e.output == b,
            })
        })
        .collect()
}

/// The temporaries (by slot) that step `i` reads or writes last: dead after it.
pub(crate) fn dead_temps<'a>(
    schedule: &'a Schedule,
    last_use: &'a [usize],
    i: usize,
    step: &'a Step,
) -> impl Iterator<Item = usize> + 'a {
    step_buffers(step)
        .filter(move |b| {
            let idx = b.0 as usize;
            last_use[idx] == i
                && schedule.buffers[idx].kind == BufKind::Temp
                && !schedule.outputs.contains(b)
        })
        .map(|b| b.0 as usize)
}

/// The buffers step `step` reads or writes (a kernel's params, an extern's
/// inputs and output), without collecting them: the executor asks per step.
pub(crate) fn step_buffers(step: &Step) -> impl Iterator<Item = BufId> + '_ {
    let (params, inputs, output) = match step {
        Step::Loop(k) => (&k.params[..], &[][..], None),
        Step::Extern(e) => (&[][..], &e.inputs[..], Some(e.output)),
    };
    params
        .iter()
        .map(|p| p.buf)
        .chain(inputs.iter().copied())
        .chain(output)
}

/// A buffer for `b` (reused memory from the buffer cache when it has some, see
/// `crate::buffer_cache`), refusing sizes the allocator cannot give: zeroed, unless
/// `overwritten` (its writer stores every element before reading any, see
/// [`fully_overwrites`]).
pub(super) fn allocate(schedule: &Schedule, b: BufId, overwritten: bool) -> Result<Buffer> {
    let decl = &schedule.buffers[b.0 as usize];
    if let Some(kept) = crate::buffer_cache::take_kept(decl.dtype, decl.len, overwritten) {
        return Ok(kept);
    }
    check_allocation(&[decl.len], decl.dtype, false)?;
    Ok(Buffer::zeros(decl.dtype, decl.len))
}

/// Whether kernel `k` stores every element of param `i` and never loads its buffer:
/// no `Load` of the param, and a store at offset 0 that reaches every element once
/// (see [`covers_once`]): over all dims when its value is computed inside the
/// reduction loop (a softmax's normalized row runs its store at every point of
/// the row), over the parallel dims when it is computed once per parallel point
/// (its index then steps along no reduction dim). Such a buffer's initial contents
/// are never observed, so it need not be zeroed.
pub(crate) fn fully_overwrites(k: &LoopKernel, i: usize) -> bool {
    let Some(p) = k.params.get(i) else {
        return false;
    };
    // A load through any param naming the same buffer reads it.
    if k.exprs.iter().any(|e| {
        matches!(e.expr, Expr::Load { param, .. }
                if k.params.get(param.index()).is_none_or(|q| q.buf == p.buf))
    }) {
        return false;
    }
    let np = k.n_parallel;
    k.stores.iter().any(|s| {
        if s.param.index() != i || s.index.offset != 0 {
            return false;
        }
        match k.exprs.get(s.value.0 as usize).map(|e| e.stage) {
            Some(Stage::Inner(_)) => {
                k.dims.iter().product::<usize>() == p.len && covers_once(&k.dims, &s.index.strides)
            }
            Some(Stage::Outer(_)) => {
                k.parallel_points() == p.len
                    && s.index.strides[np..].iter().all(|&st| st == 0)
                    && covers_once(k.parallel_dims(), &s.index.strides[..np])
            }
            None => false,
        }
    })
}

/// Whether strides `strides` over `dims` address every element of the row-major
/// range `0..product(dims)` exactly once: PyTorch's non-overlapping-and-dense
/// ([`Layout::is_non_overlapping_and_dense`]) at offset 0, which a plain store
/// and a tiled transpose's (a permutation of its dims) both are.
fn covers_once(dims: &[usize], strides: &[i64]) -> bool {
    Layout {
        shape: lazyfuse_ir::layout::Dims::from_slice(dims),
        strides: strides.iter().map(|&s| s as isize).collect(),
        offset: 0,
    }
    .is_non_overlapping_and_dense()
}
