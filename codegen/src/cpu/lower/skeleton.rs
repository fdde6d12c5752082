//! The loop skeleton of a lowered kernel: the parallel points (split into tiers:
//! vector groups, then scalar points), the odometer that advances the multi-index,
//! and the row loop of a vectorized kernel with its hoisted row values; each
//! point's stages and phases are the shared lowering's ([`emitter::point`]).

use super::{
    interleaves, mixed_vector, vector_type, Lower, Tier, INTERLEAVED, MIXED_COPIES, MIXED_LANES, R,
};
use crate::emitter;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I64, I8};
use cranelift_codegen::ir::{
    Block, InstBuilder, StackSlot, StackSlotData, StackSlotKind, Type, Value,
};
use cranelift_frontend::Variable;
use lazyfuse_ir::kernel::{Expr, ExprId, LoopKernel};

/// Shortest row (points along the last parallel dim) whose routine chain passes
/// take the interleaved tier.
const INTERLEAVED_PASS_ROW: usize = 256;

/// Fewest points, and shortest row, of an elementwise kernel of cheap ops that
/// takes the interleaved tier: its single-vector loop spends most of its
/// instructions on indices and the branch, which caps it below the memory
/// system's fastest, while the tier's compile time is paid once for a kernel
/// that runs tens of microseconds or more.
const INTERLEAVED_POINTS: usize = 1 << 16;
const INTERLEAVED_ROW: usize = 64;

impl Lower<'_, '_> {
    /// The vector tiers `body` tries for this kernel, in order (see `rows`).
    pub(super) fn tiers(&self) -> Vec<(i64, Tier)> {
        // Elementwise kernels: `vt` vectors of one dtype, or several dtypes that
        // all fit 4 lanes (`vector_point_mixed` reads its lane types per
        // expression); column reductions: chunks of `super::vcolumns::CHUNKS` points where
        // they fit, then blocks of `super::vcolumns::COLUMNS`; tried in this order, each
        // falling through to the next.
        let mut tiers: Vec<(i64, Tier)> = Vec::new();
        if let Some(vt) = vector_type(self.k, self.math) {
            // (a routine chain's pass over long rows interleaves too: its loop
            // applies a few cheap ops per vector between the routines, and the
            // loop's own index and branch instructions are most of its work
            // otherwise; a short row would run the tier a few times at most,
            // for half again the kernel's compile time)
            // (the row: the last parallel dim's points, none without one)
            let row = self.k.parallel_dims().last().copied().unwrap_or(0);
            let long_pass = self.run_target.is_some() && row >= INTERLEAVED_PASS_ROW;
            let long_loop =
                row >= INTERLEAVED_ROW && self.k.parallel_points() >= INTERLEAVED_POINTS;
            if interleaves(self.k, &self.needed, &self.hoisted) || long_pass || long_loop {
                let lanes = i64::from(vt.lane_count()) * INTERLEAVED as i64;
                tiers.push((lanes, Tier::Interleaved(vt)));
            }
            tiers.push((i64::from(vt.lane_count()), Tier::Single(vt)));
        } else if mixed_vector(self.k, self.math) {
            let lanes = i64::from(MIXED_LANES.lane_count());
            tiers.push((lanes * MIXED_COPIES as i64, Tier::Mixed(MIXED_COPIES)));
            tiers.push((lanes, Tier::Mixed(1)));
        } else if super::vcolumns::columns_vectorize(self.k, &self.needed, self.math) {
            if super::vcolumns::chunk_vectorize(self.k, &self.needed) {
                let columns = self.k.dims[self.k.n_parallel - 1] as i64;
                for width in super::vcolumns::CHUNKS
                    .into_iter()
                    .filter(|&w| w <= columns)
                {
                    tiers.push((width, Tier::ColumnChunk(width)));
                }
            }
            tiers.push((super::vcolumns::COLUMNS, Tier::Columns));
        }
        tiers
    }

    /// One block of `lanes` consecutive points of the last parallel dim.
    pub(super) fn tier_point(&mut self, tier: Tier) -> R<()> {
        match tier {
            Tier::Single(vt) => self.vector_points(vt, 1),
            Tier::Interleaved(vt) => self.vector_points(vt, INTERLEAVED),
            Tier::Mixed(copies) => self.vector_point_mixed(copies),
            Tier::ColumnChunk(width) => self.vector_column_chunk(width),
            Tier::Columns => self.vector_columns(),
        }
    }

    pub(super) fn body(&mut self, begin: Value, end: Value) -> R<()> {
        let np = self.k.n_parallel;
        let pdims: Vec<i64> = self.k.parallel_dims().iter().map(|&d| d as i64).collect();
        let exit = self.b.create_block();
        if pdims.contains(&0) {
            // No point exists: nothing to do (and nothing to divide by).
            self.b.ins().jump(exit, &[]);
        } else {
            // Start multi-index of `begin`, once.
            let mut inner: i64 = 1;
            for d in (0..np).rev() {
                let q = if inner == 1 {
                    begin
                } else {
                    self.b.ins().udiv_imm_s(begin, inner)
                };
                let r = if d == 0 {
                    q
                } else {
                    self.b.ins().urem_imm_s(q, pdims[d])
                };
                self.b.def_var(self.idx[d], r);
                inner = inner.saturating_mul(pdims[d]);
            }
            let p = self.b.declare_var(I64);
            self.b.def_var(p, begin);
            if np == 1 && super::vtranspose::transpose_block(self.k, &self.needed).is_none() {
                // One parallel dim: the range is one row (from `begin`, which
                // may equal `end`), without the loop over rows around it (and
                // rows of at most `SMALL_ROW` points have too few points for
                // `small_block`).
                self.row(p, end, pdims[0], exit)?;
                self.b.switch_to_block(exit);
                self.b.ins().return_(&[]);
                return Ok(());
            }
            let head = self.b.create_block();
            let bodyb = self.b.create_block();
            self.b.ins().jump(head, &[]);
            self.b.switch_to_block(head);
            let pv = self.b.use_var(p);
            let more = self.b.ins().icmp(IntCC::UnsignedLessThan, pv, end);
            self.b.ins().brif(more, bodyb, &[], exit, &[]);
            self.b.switch_to_block(bodyb);
            if let Some(lanes) = super::vtranspose::transpose_block(self.k, &self.needed) {
                self.transpose_step(p, end, lanes, head)?;
            } else if np == 0 {
                // The one point of a kernel without parallel dims.
                self.point()?;
                let pv = self.b.use_var(p);
                let pn = self.b.ins().iadd_imm_s(pv, 1);
                self.b.def_var(p, pn);
                self.b.ins().jump(head, &[]);
            } else if let Some(u) = small_block(self.k) {
                self.block_or_row(p, end, u, head)?;
            } else {
                self.row(p, end, pdims[np - 1], head)?;
            }
        }
        self.b.switch_to_block(exit);
        self.b.ins().return_(&[]);
        Ok(())
    }

    /// The points of the last `u` parallel dims (see [`small_block`]) as one
    /// straight-line block when the multi-index stands at the block's start and
    /// the range holds the whole block: each point with its inner indices as
    /// constants, so its addresses are the block's base plus constant offsets
    /// (Cranelift folds the products and shares the base); otherwise one row of
    /// [`Lower::row`] (a range that starts or ends inside a block). Then back to
    /// `head`.
    pub(super) fn block_or_row(&mut self, p: Variable, end: Value, u: usize, head: Block) -> R<()> {
        let np = self.k.n_parallel;
        let inner = np - u..np;
        let size: usize = self.k.dims[inner.clone()].iter().product();
        let pv = self.b.use_var(p);
        let room = self.b.ins().isub(end, pv);
        let mut whole = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, room, size as i64);
        for d in inner.clone() {
            let v = self.b.use_var(self.idx[d]);
            let at_start = self.b.ins().icmp_imm_s(IntCC::Equal, v, 0);
            whole = self.b.ins().band(whole, at_start);
        }
        let blockb = self.b.create_block();
        let rowb = self.b.create_block();
        self.b.ins().brif(whole, blockb, &[], rowb, &[]);
        self.b.switch_to_block(blockb);
        self.vals.iter_mut().for_each(|v| *v = None);
        for j in 0..size {
            self.set_index_constant(inner.clone(), j);
            self.point()?;
        }
        let z = self.iconst(I64, 0);
        for d in inner {
            self.b.def_var(self.idx[d], z);
        }
        let pv = self.b.use_var(p);
        let pn = self.b.ins().iadd_imm_s(pv, size as i64);
        self.b.def_var(p, pn);
        let wrapped = self.b.ins().iconst(I8, 1);
        self.carry(0..np - u, wrapped);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(rowb);
        let n_last = self.k.dims[np - 1] as i64;
        self.row(p, end, n_last, head)
    }

    /// The points of the current row (the last parallel dim from its current
    /// index) that lie in the range (`p` up to `end`) as tight loops: whole blocks
    /// of each vector tier while they fit, then single points; only the last
    /// parallel dim's variable moves inside the row, so the address terms of the
    /// outer dims are loop invariant (Cranelift hoists them). A kernel with an
    /// output run ([`super::vrun`]) runs its tiers and single points run by run,
    /// each run followed by the routine, or (a plain input) calls the routine
    /// over the row instead. Then
    /// advances `p` and the outer dims' odometer, and jumps back to `head`.
    pub(super) fn row(&mut self, p: Variable, end: Value, n_last: i64, head: Block) -> R<()> {
        let np = self.k.n_parallel;
        let last = self.idx[np - 1];
        let i0 = self.b.use_var(last);
        let pv = self.b.use_var(p);
        // Row end (exclusive, in the last dim): the row's end or the range's,
        // whichever comes first (`end - p` ≥ 1 here, or ≥ 0 where the kernel
        // has one parallel dim: then nothing runs).
        let room_row = self.iconst(I64, n_last);
        let room_row = self.b.ins().isub(room_row, i0);
        let room_range = self.b.ins().isub(end, pv);
        let n = self.b.ins().umin(room_row, room_range);
        let re = self.b.ins().iadd(i0, n);
        if let Some((prog, base)) = self.tiles.clone() {
            self.tile_runs(&prog, base, re)?;
        } else {
            self.row_tiers(re)?;
        }
        let pn = self.b.ins().iadd(pv, n);
        self.b.def_var(p, pn);
        // The row ended (rather than the range): back to its start and carry.
        let wrap = self.b.ins().icmp_imm_s(IntCC::Equal, re, n_last);
        let z = self.iconst(I64, 0);
        let nl = self.b.ins().select(wrap, z, re);
        self.b.def_var(last, nl);
        self.carry(0..np - 1, wrap);
        self.b.ins().jump(head, &[]);
        Ok(())
    }

    /// The current row's points up to `re` through the kernel's vector tiers
    /// and scalar points, or run by run with its output run's routine.
    fn row_tiers(&mut self, re: Value) -> R<()> {
        let last = self.idx[self.k.n_parallel - 1];
        let run = self.run.filter(|r| r.phase.is_none());
        // (a kernel has at most one single-dtype tier; a run that reads its input
        // itself runs no tier)
        let direct = run.is_some_and(|r| r.direct);
        if let Some(r) = run.filter(|r| r.direct) {
            self.enter_run(r);
        }
        let tiers = self.tiers();
        if let Some(vt) = tiers.iter().find_map(|&(_, t)| match t {
            Tier::Single(vt) if !direct => Some(vt),
            _ => None,
        }) {
            self.hoist_row_values()?;
            self.row_loop_values(vt);
        }
        match (run, tiers.last()) {
            (Some(r), Some(_)) => {
                // Runs of at most `run_points` to the row's end: the tiers and
                // the scalar points fill the run with the op's argument, the
                // routine finishes it.
                // (a narrow output's run is a float32 tile, see `OutputRun::tile`)
                let tile = r.tile.map(|_| {
                    let slot = self.line_slot(super::vrun::tile_bytes(self.k));
                    self.line_address(slot)
                });
                let chead = self.b.create_block();
                let cbody = self.b.create_block();
                let after = self.b.create_block();
                self.b.ins().jump(chead, &[]);
                self.b.switch_to_block(chead);
                let iv = self.b.use_var(last);
                let more = self.b.ins().icmp(IntCC::SignedLessThan, iv, re);
                self.b.ins().brif(more, cbody, &[], after, &[]);
                self.b.switch_to_block(cbody);
                let start = self.run_address(r)?;
                let iv = self.b.use_var(last);
                let src = self.run_source(r)?;
                if src.is_some() {
                    // The routine reads the input: the rest of the row at once.
                    let count = self.b.ins().isub(re, iv);
                    self.run_routine(r, start, src, count)?;
                    self.b.def_var(last, re);
                } else {
                    self.prefetch_inputs(re, super::vrun::run_points(self.k))?;
                    let full = self.b.ins().iadd_imm_s(iv, super::vrun::run_points(self.k));
                    let ce = self.b.ins().smin(full, re);
                    match (tile, r.tile) {
                        (Some(base), Some(dt)) => {
                            self.tile = Some((base, iv));
                            self.chain_passes(base, iv, ce)?;
                            self.tile = None;
                            let n = self.b.ins().isub(ce, iv);
                            let param = self.k.stores[r.store].param.index();
                            let points = super::vrun::run_points(self.k) as usize;
                            let symbol = self.narrow_routine(param, dt, points);
                            self.call_void(symbol, &[start, base, n])?;
                        }
                        _ => self.chain_passes(start, iv, ce)?,
                    }
                }
                self.b.ins().jump(chead, &[]);
                self.b.switch_to_block(after);
                if r.direct {
                    self.leave_run(r);
                }
            }
            _ => {
                self.tier_loops(&tiers, re)?;
                self.vals.iter_mut().for_each(|v| *v = None);
                self.scalar_points(re)?;
            }
        }
        Ok(())
    }

    /// The points of the current row from the last dim's index up to `re`, one
    /// at a time; each computes every value itself (`vals` holds none of them
    /// on entry, [`Lower::point`] leaves none behind).
    pub(super) fn scalar_points(&mut self, re: Value) -> R<()> {
        let last = self.idx[self.k.n_parallel - 1];
        let shead = self.b.create_block();
        let sb = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().jump(shead, &[]);
        self.b.switch_to_block(shead);
        let iv = self.b.use_var(last);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, iv, re);
        self.b.ins().brif(more, sb, &[], done, &[]);
        self.b.switch_to_block(sb);
        self.point()?;
        let iv = self.b.use_var(last);
        let inx = self.b.ins().iadd_imm_s(iv, 1);
        self.b.def_var(last, inx);
        self.b.ins().jump(shead, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// The loops of `tiers` over the current row up to `re` (exclusive, in the
    /// last dim): whole blocks of each tier while they fit, in order.
    pub(super) fn tier_loops(&mut self, tiers: &[(i64, Tier)], re: Value) -> R<()> {
        let last = self.idx[self.k.n_parallel - 1];
        for &(lanes, tier) in tiers {
            let vhead = self.b.create_block();
            let vb = self.b.create_block();
            let next = self.b.create_block();
            self.b.ins().jump(vhead, &[]);
            self.b.switch_to_block(vhead);
            let iv = self.b.use_var(last);
            let ie = self.b.ins().iadd_imm_s(iv, lanes);
            let fits = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, ie, re);
            self.b.ins().brif(fits, vb, &[], next, &[]);
            self.b.switch_to_block(vb);
            self.tier_point(tier)?;
            let iv = self.b.use_var(last);
            let inx = self.b.ins().iadd_imm_s(iv, lanes);
            self.b.def_var(last, inx);
            self.b.ins().jump(vhead, &[]);
            self.b.switch_to_block(next);
        }
        Ok(())
    }

    /// Computes the row's [`row_invariant`](super::row_invariant) values once (scalar code, in the
    /// row's first block, which dominates its vector loops) into `vals`.
    /// The scalar code's values are the vector lanes' (a kernel vectorizes only
    /// with ops whose vector form gives the scalar result).
    pub(super) fn hoist_row_values(&mut self) -> R<()> {
        for i in 0..self.k.exprs.len() {
            if self.hoisted[i] {
                let v = self.expr(i)?;
                self.vals[i] = Some(v);
            }
        }
        Ok(())
    }

    /// Splats the hoisted values that the vector loop's other code reads (not
    /// constants, which stay memory operands) to `vt` here, in the row's first
    /// block, for the loop to use, and anchors each here with a store to a stack
    /// slot (once per row, never read). Cranelift's optimizer places a pure op
    /// where its value is first used (in dominator order) and reuses it below:
    /// with its only uses in the loop it would compute it per vector, since it
    /// moves no op of a rematerialized constant out of a loop (nor, as measured,
    /// a splat of a load), and a block param carrying the value is a constant
    /// phi that it removes. So a layernorm's `sqrt(var + eps)` ran per vector;
    /// the store is the first use, so the row block computes it.
    pub(super) fn row_loop_values(&mut self, vt: Type) {
        let mut read = vec![false; self.k.exprs.len()];
        for (i, e) in self.k.exprs.iter().enumerate() {
            if self.needed[i] && !self.hoisted[i] {
                for o in LoopKernel::operands(&e.expr) {
                    read[o.0 as usize] = true;
                }
            }
        }
        for st in &self.k.stores {
            read[st.value.0 as usize] = true;
        }
        for (i, &read) in read.iter().enumerate() {
            if self.hoisted[i] && read && !matches!(self.k.exprs[i].expr, Expr::Const(_)) {
                let x = self.val(ExprId(i as u32));
                let v = self.b.ins().splat(vt, x);
                self.anchor(v);
                self.row_vectors[i] = Some(v);
            }
        }
    }

    /// A fresh stack slot of `bytes` that [`Lower::line_address`] places on
    /// a cache line: 48 bytes more than asked, 16-byte aligned.
    pub(super) fn line_slot(&mut self, bytes: u32) -> StackSlot {
        let data = StackSlotData::new(StackSlotKind::ExplicitSlot, bytes + 48, 4);
        self.b.create_sized_stack_slot(data)
    }

    /// The address of [`Lower::line_slot`] `slot`, rounded up to a cache line.
    /// Cranelift aligns a slot within the frame, whose base is 16-byte aligned
    /// only, so an alignment asked above 16 bytes is not kept; the rounding
    /// happens at run time. The routines read and write such slots (tiles,
    /// kept rows) with 64-byte vectors, and an access that crosses a line
    /// costs two (a float16 softmax's kept row: 7% of W4_f16).
    pub(super) fn line_address(&mut self, slot: StackSlot) -> Value {
        let addr = self.b.ins().stack_addr(I64, slot, 0);
        let up = self.b.ins().iadd_imm_s(addr, 63);
        self.b.ins().band_imm_s(up, -64)
    }

    /// Makes vector `v` the operand of a store to a stack slot of its own (never
    /// read) here, so that Cranelift's optimizer, which places a pure op at its
    /// first use, computes it here (see `row_loop_values` and `vector_points`).
    /// One slot per anchor: of several stores to one slot, the optimizer kept
    /// only some (measured), and the others' values moved to their later uses.
    pub(super) fn anchor(&mut self, v: Value) {
        let data = StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 4);
        let slot = self.b.create_sized_stack_slot(data);
        self.b.ins().stack_store(I64, v, slot, 0);
    }

    /// Sets the loop variables of `dims` to the constant multi-index of their
    /// row-major position `j` (a straight-line block's point).
    pub(super) fn set_index_constant(&mut self, dims: std::ops::Range<usize>, j: usize) {
        let mut rest = j;
        for d in dims.rev() {
            let at = self.iconst(I64, (rest % self.k.dims[d]) as i64);
            self.b.def_var(self.idx[d], at);
            rest /= self.k.dims[d];
        }
    }

    /// Adds `carry` (a bool) to the last of `dims` and carries into the others.
    pub(super) fn carry(&mut self, dims: std::ops::Range<usize>, carry: Value) {
        let mut carry = carry;
        for d in dims.rev() {
            let n = self.k.dims[d] as i64;
            let v = self.b.use_var(self.idx[d]);
            let inc = self.b.ins().uextend(I64, carry);
            let nv = self.b.ins().iadd(v, inc);
            let wrap = self.b.ins().icmp_imm_s(IntCC::Equal, nv, n);
            let z = self.iconst(I64, 0);
            let nv = self.b.ins().select(wrap, z, nv);
            self.b.def_var(self.idx[d], nv);
            carry = wrap;
        }
    }

    /// Advances the loop variables of `dims` (row-major, last fastest) by one.
    pub(super) fn odometer(&mut self, dims: std::ops::Range<usize>) {
        self.odometer_by(dims, 1);
    }

    /// Advances the last of `dims` by `step` (which must not pass its size) and
    /// carries into the others.
    pub(super) fn odometer_by(&mut self, dims: std::ops::Range<usize>, step: i64) {
        let mut carry: Option<Value> = None;
        for d in dims.rev() {
            let n = self.k.dims[d] as i64;
            let v = self.b.use_var(self.idx[d]);
            let inc = match carry {
                None => self.iconst(I64, step),
                Some(c) => self.b.ins().uextend(I64, c),
            };
            let nv = self.b.ins().iadd(v, inc);
            let wrap = self.b.ins().icmp_imm_s(IntCC::Equal, nv, n);
            let z = self.iconst(I64, 0);
            let nv = self.b.ins().select(wrap, z, nv);
            self.b.def_var(self.idx[d], nv);
            carry = Some(wrap);
        }
    }
}

/// Rows this short (the last parallel dim's size) run as straight-line blocks
/// rather than loops: a loop's bounds, tiers and carry cost more than such a row's
/// points.
pub(super) const SMALL_ROW: usize = 4;

/// The most points one straight-line block of [`Lower::block_or_row`] holds.
pub(super) const SMALL_BLOCK_POINTS: usize = 16;

/// Kernels with fewer parallel points than this keep their row loops: the
/// straight-line blocks would cost more compile time than they save.
pub(super) const SMALL_BLOCK_MIN_POINTS: usize = 1024;

/// The most expressions one straight-line block renders (points × expressions),
/// which bounds its code size and compile time.
pub(super) const SMALL_BLOCK_EXPRS: usize = 256;

/// How many trailing parallel dims of `k` run as one straight-line block (their
/// points' product at most [`SMALL_BLOCK_POINTS`] and [`SMALL_BLOCK_EXPRS`]
/// expressions), where its rows are at most [`SMALL_ROW`] points long and it has
/// [`SMALL_BLOCK_MIN_POINTS`] points; `None` for other kernels.
pub(super) fn small_block(k: &LoopKernel) -> Option<usize> {
    let np = k.n_parallel;
    if np == 0
        || k.dims[np - 1] > SMALL_ROW
        || k.dims[..np].iter().product::<usize>() < SMALL_BLOCK_MIN_POINTS
    {
        return None;
    }
    let exprs = k.exprs.len().max(1);
    let mut points = 1;
    let mut u = 0;
    while u < np
        && points * k.dims[np - 1 - u] <= SMALL_BLOCK_POINTS
        && points * k.dims[np - 1 - u] * exprs <= SMALL_BLOCK_EXPRS
    {
        points *= k.dims[np - 1 - u];
        u += 1;
    }
    (u > 0).then_some(u)
}

impl Lower<'_, '_> {
    /// One parallel point with all its phases ([`emitter::point`]); no value
    /// outlives it.
    pub(super) fn point(&mut self) -> R<()> {
        emitter::point(self)?;
        for v in self.vals.iter_mut() {
            *v = None;
        }
        Ok(())
    }
}
