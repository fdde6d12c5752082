//! Routines called from reduction phases. Reduction runs: a reduction phase
//! whose only work is one reduction of a
//! contiguous row calls a precompiled routine over the row
//! (`lazyfuse_runtime::vector_runs`' `lf_reduce_<kind>`, 16 or 8 lanes where
//! the processor has them) instead of running Cranelift's 128-bit loop:
//! softmax's row max (of a float16 or bfloat16 row too, widened a block at a
//! time by the routine), a layer norm's sum (of the row widened to float64)
//! and its sum of squared deviations from the mean (of a narrow row too), a
//! log-softmax's sum of
//! `exp(x - max)` (which nothing stores).
//!
//! Rows shorter than [`MIN_ROUTINE_ROW`] keep the loop (a sum of exps takes
//! its routine from one step of the loop, a float16 row's reduction from
//! 128): the call and the handover cost them more than the wide vectors save.
//!
//! The routine steps the sixteen accumulators of the vector loop (four
//! unrolled copies of four lanes), position `i` into accumulator `i % 16`,
//! with the loop's own arithmetic, so the result has its bits; the kernel
//! hands the accumulators over in a stack slot and takes them back before
//! combining them and running the scalar tail as before. Fast math with FMA
//! only (the squared deviation is the loop's contracted `d * d + acc`).
//!
//! The phase runs of `vrun` (a stored op, softmax's `exp(x - max)`) hand their
//! sum over the same way ([`Lower::through_sixteen`]).
//!
//! One routine per row fetches the kernel's next row of the same input
//! ([`Lower::next_row_address`]) where the kernel has more than one phase: the
//! phases after the first reread the row from the cache, and the fetch overlaps
//! them (a kernel of one phase streams its rows, and a prefetch a row ahead
//! only competes with the hardware's). A direct phase run after the first
//! phase does (its transcendental is the row's longest work: softmax's exps,
//! of the output or of a kept row: a float16 softmax's exps over its codes),
//! else the reduction routine (`lazyfuse_runtime`'s `vector_runs/prefetch.rs`).
//! Where the run fetches, the next row's max or min finds its row in the cache
//! and takes the routine that steps blocks of it side by side
//! (`lf_reduce_<max|min>_cached`, the same bits).

use super::vreduce::{parts_of, phase_vectorizes, VAcc, GROUP, UNROLL};
use super::vrun::{phase_computes_only, row_load, widened_row};
use super::{Lower, R};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{InstBuilder, StackSlotData, StackSlotKind, Value};
use lazyfuse_ir::kernel::{Accum, Expr, ExprId, LoopKernel, MathMode, Stage};
use lazyfuse_ir::{BinaryOp, DType, UnaryOp};

/// Longest row whose next row a reduction routine prefetches: the row, its
/// output row and the next one must share the core's 48 KiB L1 (measured:
/// float64 softmax rows of 32 KiB were slower with the prefetch).
const PREFETCH_ROW_BYTES: usize = 16 << 10;

/// Longest row whose next row a phase run's routine prefetches (into the
/// level-2 cache, a line per line it computes). Measured on softmax: float64
/// rows of 32 KiB gain; float32 rows of 64 KiB lose (their exps are too short
/// to hide the fetch of as many lines).
const RUN_PREFETCH_ROW_BYTES: usize = 32 << 10;

/// Shortest row a reduction run (but a sum of exps), or an affine run that
/// stores no float16, takes a routine for (see [`short_row`]). A shorter row
/// runs faster in the kernel's own loop: the call, the handover of the sixteen
/// accumulators through the stack slot and the routine's setup cost more than
/// its wider vectors save. Measured on rows of 16 to 1024 points: the loop is
/// faster below 256 for every reduction and scaling (by half and more at 64,
/// an attention block's width), the routines from 256 on for a layer norm's
/// float64 sums and from 512 for the rest.
/// Softmax's exps keep their phase run at every length, as do a log-softmax's
/// sum of exps (the loop's exp is the slower) and an affine run that rounds to
/// float16, which the loop does in a dozen integer steps per vector.
pub(super) const MIN_ROUTINE_ROW: i64 = 256;

/// [`MIN_ROUTINE_ROW`] for a reduction of a float16 row, which the routine
/// widens with the processor's conversions and the loop in integer steps:
/// measured even at 128 and in the routine's favour above.
const MIN_F16_ROUTINE_ROW: i64 = 128;

/// Whether kernel `k`'s rows are shorter than `min` points (a reduction or
/// affine run's [`MIN_ROUTINE_ROW`]), which the kernel's own loop runs faster.
pub(super) fn short_row(k: &LoopKernel, min: i64) -> bool {
    k.dims.last().is_some_and(|&n| (n as i64) < min)
}

/// Whether phase `ph` may hand its row to a routine: fast math, one reduction
/// dim after the parallel ones, rows of at least one step of the vector loop,
/// the phase vectorizes, and it keeps and reuses no row (`reuses`).
pub(super) fn routine_phase(
    k: &LoopKernel,
    ph: u32,
    needed: &[bool],
    reuses: &[(usize, usize)],
    math: MathMode,
) -> bool {
    let nd = k.dims.len();
    let in_phase = |i: usize| k.exprs[i].stage == Stage::Inner(ph);
    math == MathMode::Fast
        && nd == k.n_parallel + 1
        && k.dims[nd - 1] as i64 >= GROUP * UNROLL
        && !reuses.iter().any(|&(a, b)| in_phase(a) || in_phase(b))
        && phase_vectorizes(k, ph, needed, math)
}

/// A phase's reduction run (see the module doc).
#[derive(Clone, Copy)]
pub(super) struct ReduceRun {
    /// the contiguous load the routine reads
    pub(super) load: ExprId,
    /// the squared deviations' center (an outer value)
    pub(super) shift: Option<ExprId>,
    /// the routine's symbol
    pub(super) symbol: &'static str,
    /// its accumulators' element type (the phase's vector accumulator must
    /// hold it: float32 lanes, or float64 parts)
    pub(super) acc: DType,
}

/// Phase `ph`'s reduction run, if it has one: the phase vectorizes, stores
/// nothing, keeps and reuses no row (`reuses`), and its needed expressions are
/// one reduction and the chain it reduces, one of: `max`/`min`/`sum` of a
/// contiguous float32 or float64 load; `max`/`min` of a contiguous float16 or
/// bfloat16 load, or of one widened to float32; `sum` of a float32 load (or a
/// float16 or bfloat16 one widened to float32) widened to float64; `sum` of
/// `d * d` with `d` such a value (loaded or widened) minus an outer value;
/// `sum` of `d * d` computed in float32 (`d` from a float32 row or a narrow
/// one widened) and widened; `sum` of
/// `exp(v)` or `exp(v - s)`, `v` a contiguous load of the exp's dtype or a
/// float16/bfloat16 one widened to float32, `s` an outer value.
pub(super) fn reduce_run(
    k: &LoopKernel,
    ph: u32,
    needed: &[bool],
    reuses: &[(usize, usize)],
    math: MathMode,
    fma: bool,
) -> Option<ReduceRun> {
    let stage = Stage::Inner(ph);
    let stores = k
        .stores
        .iter()
        .any(|s| k.exprs[s.value.0 as usize].stage == stage);
    if !fma || stores || !routine_phase(k, ph, needed, reuses, math) {
        return None;
    }
    let reductions: Vec<_> = k
        .phase_reductions(ph)
        .into_iter()
        .filter(|r| needed[r.0])
        .collect();
    let [(_, op, x)] = reductions.as_slice() else {
        return None;
    };
    let expr = |id: ExprId| &k.exprs[id.0 as usize];
    let contiguous =
        |id: ExprId| matches!(expr(id).dtype, DType::F32 | DType::F64) && row_load(k, id);
    // A contiguous load, or a float32 one widened: the load and whether widened.
    let value = |id: ExprId| match expr(id).expr {
        _ if contiguous(id) => Some((id, false)),
        Expr::Cast { x } if contiguous(x) && expr(x).dtype == DType::F32 => {
            (expr(id).dtype == DType::F64).then_some((x, true))
        }
        _ => None,
    };
    let name = |load: ExprId, widened: bool| match (expr(load).dtype, widened) {
        (DType::F32, true) => "f32_f64",
        (DType::F32, false) => "f32",
        (DType::F16, _) => "f16",
        (DType::BF16, _) => "bf16",
        _ => "f64",
    };
    // A float16 or bfloat16 row load (an extremum of one is one of its
    // float32 lanes)
    let narrow = |id: ExprId| matches!(expr(id).dtype, DType::F16 | DType::BF16) && row_load(k, id);
    let extremum = if *op == Accum::Max { "max" } else { "min" };
    let narrow_widened = widened_row(k, *x);
    let (kind, load, widened, shift, chain) = match (*op, &expr(*x).expr) {
        (Accum::Max | Accum::Min, _) if contiguous(*x) || narrow(*x) => {
            (extremum, *x, false, None, vec![*x])
        }
        // the row widened to float32 first (softmax's max of a float16 input)
        (Accum::Max | Accum::Min, _) if narrow_widened.is_some() => {
            let load = narrow_widened?;
            (extremum, load, false, None, vec![*x, load])
        }
        // `exp(v - s)` or `exp(v)`, `v` a row (or a narrow one widened to
        // float32) and `s` an outer value: a log-softmax's sum of exps
        (
            Accum::Sum,
            &Expr::Unary {
                op: UnaryOp::Exp,
                x: arg,
            },
        ) => {
            let (v, s) = match expr(arg).expr {
                Expr::Binary {
                    op: BinaryOp::Sub,
                    a,
                    b,
                } if !matches!(expr(b).stage, Stage::Inner(_)) => (a, Some(b)),
                _ => (arg, None),
            };
            let same = expr(v).dtype == expr(*x).dtype;
            let load = match widened_row(k, v) {
                _ if same && contiguous(v) => v,
                Some(l) => l,
                None => return None,
            };
            ("sumexp", load, false, s, vec![*x, arg, v, load])
        }
        (Accum::Sum, _) if value(*x).is_some() => {
            let (load, widened) = value(*x)?;
            ("sum", load, widened, None, vec![*x, load])
        }
        // a float16 or bfloat16 row widened to float32, then to float64 (a
        // layer norm's mean of a narrow input)
        (Accum::Sum, &Expr::Cast { x: f })
            if expr(*x).dtype == DType::F64 && widened_row(k, f).is_some() =>
        {
            let load = widened_row(k, f)?;
            ("sum", load, true, None, vec![*x, f, load])
        }
        // `d · d` squared in float32 and widened (`nn::functional`'s layer norm)
        (Accum::Sum, &Expr::Cast { x: sq }) if expr(*x).dtype == DType::F64 => {
            let Expr::Binary {
                op: BinaryOp::Mul,
                a: d,
                b: d2,
            } = expr(sq).expr
            else {
                return None;
            };
            let Expr::Binary {
                op: BinaryOp::Sub,
                a: c,
                b: s,
            } = expr(d).expr
            else {
                return None;
            };
            let f32_chain = [sq, d, c, s].iter().all(|&e| expr(e).dtype == DType::F32);
            if d != d2 || !f32_chain || matches!(expr(s).stage, Stage::Inner(_)) {
                return None;
            }
            // (the deviations of a row, or of a narrow one widened to float32)
            match widened_row(k, c) {
                _ if contiguous(c) => ("sumsq_widened", c, false, Some(s), vec![*x, sq, d, c]),
                Some(load) => (
                    "sumsq_widened",
                    load,
                    false,
                    Some(s),
                    vec![*x, sq, d, c, load],
                ),
                None => return None,
            }
        }
        (
            Accum::Sum,
            &Expr::Binary {
                op: BinaryOp::Mul,
                a,
                b,
            },
        ) if a == b => {
            let Expr::Binary {
                op: BinaryOp::Sub,
                a: c,
                b: s,
            } = expr(a).expr
            else {
                return None;
            };
            let (load, widened) = value(c)?;
            if matches!(expr(s).stage, Stage::Inner(_)) {
                return None;
            }
            ("sumsq", load, widened, Some(s), vec![*x, a, c, load])
        }
        _ => return None,
    };
    // (a short row keeps the loop, but for a sum of exps, the loop's exp being
    // the slower, and float16 rows of 128 or more, which the loop widens in a
    // dozen integer steps per vector)
    let min_row = if expr(load).dtype == DType::F16 {
        MIN_F16_ROUTINE_ROW
    } else {
        MIN_ROUTINE_ROW
    };
    if kind != "sumexp" && short_row(k, min_row) {
        return None;
    }
    let chain: Vec<usize> = chain.iter().map(|c| c.0 as usize).collect();
    if !phase_computes_only(k, needed, ph, &chain) {
        return None;
    }
    let symbol = match (kind, name(load, widened)) {
        ("max", "f32") => "lf_reduce_max_f32",
        ("max", "f64") => "lf_reduce_max_f64",
        ("min", "f32") => "lf_reduce_min_f32",
        ("min", "f64") => "lf_reduce_min_f64",
        ("max", "f16") => "lf_reduce_max_f16",
        ("min", "f16") => "lf_reduce_min_f16",
        ("max", "bf16") => "lf_reduce_max_bf16",
        ("min", "bf16") => "lf_reduce_min_bf16",
        ("sum", "f32") => "lf_reduce_sum_f32",
        ("sum", "f64") => "lf_reduce_sum_f64",
        ("sum", "f32_f64") => "lf_reduce_sum_f32_f64",
        ("sumsq", "f32") => "lf_reduce_sumsq_f32",
        ("sumsq", "f64") => "lf_reduce_sumsq_f64",
        ("sumsq", "f32_f64") => "lf_reduce_sumsq_f32_f64",
        ("sumsq_widened", "f32") => "lf_reduce_sumsq_f32_widened",
        ("sum", "f16") if widened => "lf_reduce_sum_f16_f64",
        ("sum", "bf16") if widened => "lf_reduce_sum_bf16_f64",
        ("sumsq_widened", "f16") => "lf_reduce_sumsq_f16_widened",
        ("sumsq_widened", "bf16") => "lf_reduce_sumsq_bf16_widened",
        ("sumexp", "f32") => "lf_reduce_sumexp_f32",
        ("sumexp", "f64") => "lf_reduce_sumexp_f64",
        ("sumexp", "f16") => "lf_reduce_sumexp_f16",
        ("sumexp", "bf16") => "lf_reduce_sumexp_bf16",
        _ => return None,
    };
    let acc = match expr(load).dtype {
        _ if widened || kind == "sumsq_widened" => DType::F64,
        // (a narrow row's extremum steps float32 lanes)
        DType::F16 | DType::BF16 => DType::F32,
        dt => dt,
    };
    Some(ReduceRun {
        load,
        shift,
        symbol,
        acc,
    })
}

/// The routine of `symbol`'s reduction for a row in the cache, where it has
/// one (`lf_reduce_<max|min>_cached`: blocks of the row side by side).
fn cached_symbol(symbol: &str) -> Option<&'static str> {
    Some(match symbol {
        "lf_reduce_max_f32" => "lf_reduce_max_cached_f32",
        "lf_reduce_min_f32" => "lf_reduce_min_cached_f32",
        "lf_reduce_max_f64" => "lf_reduce_max_cached_f64",
        "lf_reduce_min_f64" => "lf_reduce_min_cached_f64",
        _ => return None,
    })
}

impl Lower<'_, '_> {
    /// Phase `ph`'s reduction run over the row's first `m` positions, into the
    /// one vector accumulator `va` (left for `finish_vacc`).
    pub(super) fn reduce_run_values(&mut self, ph: u32, rr: ReduceRun, m: i64, va: &VAcc) -> R<()> {
        let rd = self.k.dims.len() - 1;
        let zero = self.iconst(I64, 0);
        self.b.def_var(self.idx[rd], zero);
        let src = self.load_address(rr.load)?;
        // (a routine without a shift takes it in the accumulators' type)
        let shift = self.outer_or_zero(rr.shift, rr.acc)?;
        let count = self.iconst(I64, m);
        // (only where a later phase rereads the row: a kernel that reads each
        // row once streams, and the hardware prefetcher follows it)
        let row_bytes = *self.k.dims.last().unwrap_or(&0)
            * self.k.exprs[rr.load.0 as usize].dtype.size_in_bytes();
        // (where the kernel's run, or its sum of exps, fetches the next row,
        // this routine does not, and a max or min finds its row in the cache:
        // it runs in blocks side by side; the sum of exps asks in its phase)
        let sum_fetches = self.prefetching_sum_of_exps();
        let run_fetches = self.prefetching_run().is_some() || sum_fetches.is_some();
        let own_fetch = self.k.phases() > 1 && row_bytes <= PREFETCH_ROW_BYTES && !run_fetches;
        let next = if sum_fetches == Some(ph) || own_fetch {
            self.next_row_address(rr.load)?
        } else {
            self.iconst(I64, 0)
        };
        let symbol = match cached_symbol(rr.symbol).filter(|_| run_fetches) {
            Some(cached) => cached,
            None => rr.symbol,
        };
        self.through_sixteen(va, &mut |l, accs| {
            l.call_void(symbol, &[src, count, shift, accs, next])
        })
    }

    /// The kernel's phase run that fetches the next row while its routine
    /// computes (see the module doc), as its op's expression and the load it
    /// reads: a direct run's, of the output or of a kept row (a float16
    /// softmax's exps), in a phase after the first, over rows of at most
    /// [`RUN_PREFETCH_ROW_BYTES`].
    fn prefetching_run(&self) -> Option<(usize, ExprId)> {
        let r = match self.run {
            Some(r) => r,
            None => (1..self.k.phases()).find_map(|ph| {
                let keep = self.kept_rows(ph);
                super::vrun::kept_run(self.k, ph, &self.needed, &keep, self.math, self.fma)
            })?,
        };
        if r.phase.is_none_or(|ph| ph == 0) {
            return None;
        }
        let load = super::vrun::direct_load(self.k, r)?;
        let row_bytes = *self.k.dims.last()? * self.k.exprs[load.0 as usize].dtype.size_in_bytes();
        (row_bytes <= RUN_PREFETCH_ROW_BYTES).then_some((r.op, load))
    }

    /// The phase whose sum of exps (a reduction run, `lf_reduce_sumexp`)
    /// fetches the next row while it computes, as a direct phase run's
    /// routine does ([`Lower::prefetching_run`]): a log-softmax's, in a phase
    /// after the first, over rows of at most [`RUN_PREFETCH_ROW_BYTES`], where
    /// the kernel has no such phase run.
    fn prefetching_sum_of_exps(&self) -> Option<u32> {
        if self.run.is_some() {
            return None;
        }
        (1..self.k.phases()).find(|&ph| {
            let fma = self.fma;
            reduce_run(self.k, ph, &self.needed, &self.reuses, self.math, fma).is_some_and(|rr| {
                let row = *self.k.dims.last().unwrap_or(&0)
                    * self.k.exprs[rr.load.0 as usize].dtype.size_in_bytes();
                rr.symbol.starts_with("lf_reduce_sumexp_") && row <= RUN_PREFETCH_ROW_BYTES
            })
        })
    }

    /// Outer value `v` (a routine's shift), or a zero of `dt` where there is
    /// none: `x - 0` is `x`, signed zeros included.
    pub(super) fn outer_or_zero(&mut self, v: Option<ExprId>, dt: DType) -> R<Value> {
        Ok(match v {
            Some(v) => self.val(v),
            None => {
                let r = super::rep(dt)?;
                self.zero(r)
            }
        })
    }

    /// The address of the row that load `load` (contiguous along the row)
    /// reads at the next parallel point, for a reduction routine to prefetch: one
    /// step along the last parallel dim, where that whole row lies in the
    /// buffer; null where it does not (past the buffer's end, a broadcast or
    /// reversed dim). A hint only: the row may belong to another thread's
    /// range, or not be the next point's where the dims wrap.
    pub(super) fn next_row_address(&mut self, load: ExprId) -> R<Value> {
        let Expr::Load {
            param, ref index, ..
        } = self.k.exprs[load.0 as usize].expr
        else {
            return Ok(self.iconst(I64, 0));
        };
        let (param, offset, strides) = (param.index(), index.offset, index.strides.clone());
        let np = self.k.n_parallel;
        let step = if np == 0 { 0 } else { strides[np - 1] };
        let n = *self.k.dims.last().unwrap_or(&0) as i64;
        if step <= 0 {
            return Ok(self.iconst(I64, 0));
        }
        let size = self.k.params[param].dtype.size_in_bytes() as i64;
        let len = self.k.params[param].len as i64;
        let extra = self.iconst(I64, step);
        let next = self.address(param, &offset, &strides, Some(extra))?;
        let from = self.b.ins().isub(next, self.bases[param]);
        let row_end = self.b.ins().iadd_imm_s(from, n * size);
        let inside = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedLessThanOrEqual, row_end, len * size);
        let null = self.iconst(I64, 0);
        Ok(self.b.ins().select(inside, next, null))
    }

    /// After a phase run's vector loop (which stored the op's argument at the
    /// row's first `m` positions, unless the run is direct): the row routine
    /// over them. A single sum of the op of the accumulators' type is kept by
    /// the routine, position `i` into accumulator `i % 16` as the vector loop
    /// would have (its copies' parts in a stack slot, read back after); other
    /// reductions of the op (`accs`) are folded in by a second loop that reads
    /// the values back copy by copy.
    pub(super) fn phase_run_values(
        &mut self,
        r: super::vrun::OutputRun,
        m: i64,
        accs: &[VAcc],
    ) -> R<()> {
        let rd = self.k.dims.len() - 1;
        let zero = self.iconst(I64, 0);
        self.b.def_var(self.idx[rd], zero);
        let start = self.run_address(r)?;
        let mut src = self.run_source(r)?.unwrap_or(start);
        let dt = self.k.exprs[r.op].dtype;
        let (vt, n) = parts_of(dt);
        let size = dt.size_in_bytes() as i64;
        let shift = self.outer_or_zero(r.shift, dt)?;
        let summed = match accs {
            [va] if va.op == Accum::Sum && va.ty == vt => Some(va),
            _ => None,
        };
        let count = self.iconst(I64, m);
        let mut symbol = format!("lf_row_{}", r.routine);
        if let Some(load) = super::vrun::direct_load(self.k, r) {
            let narrow = self.k.exprs[load.0 as usize].dtype;
            if matches!(narrow, DType::F16 | DType::BF16) {
                let sfx = super::vtiles::suffix(narrow);
                if r.routine == "exp_f32" {
                    // (exp reads the codes itself: `lf_row_exp_<dtype>`)
                    symbol = format!("lf_row_exp_{sfx}");
                } else {
                    // (a float16 or bfloat16 row, widened into the run's own
                    // row first: the routine then runs in place)
                    self.call_void(&format!("lf_widen_{sfx}"), &[start, src, count])?;
                    src = start;
                }
            }
        }
        let next = match self.prefetching_run() {
            Some((op, load)) if op == r.op => self.next_row_address(load)?,
            _ => zero,
        };
        if let Some(va) = summed {
            return self.through_sixteen(va, &mut |l, sums| {
                l.call_void(&symbol, &[start, src, count, shift, sums, next])
            });
        }
        self.call_void(&symbol, &[start, src, count, shift, zero, next])?;
        if accs.is_empty() {
            return Ok(());
        }
        self.counted_loop(m / (GROUP * UNROLL), &mut |l, step| {
            let pos = l.b.ins().imul_imm_s(step, GROUP * UNROLL);
            l.b.def_var(l.idx[rd], pos);
            let addr = l.run_address(r)?;
            for u in 0..UNROLL {
                // (as `veval` lays a value's parts out)
                let parts = (0..n as i64)
                    .map(|p| {
                        let off = ((u * GROUP + p * 2) * size) as i32;
                        l.b.ins().load(vt, super::flags(), addr, off)
                    })
                    .collect();
                let mut vv: Vec<Option<Vec<Value>>> = vec![None; l.k.exprs.len()];
                vv[r.op] = Some(parts);
                l.vaccumulate(accs, u, &vv);
            }
            Ok(())
        })
    }

    /// Hands `va`'s sixteen accumulators (its copies' parts, laid out as
    /// `veval` lays a value's: copy `u`, part `p` at position `u * GROUP + 2p`)
    /// to `call` in a stack slot (its address) and takes them back after it.
    pub(super) fn through_sixteen(
        &mut self,
        va: &VAcc,
        call: &mut dyn FnMut(&mut Self, Value) -> R<()>,
    ) -> R<()> {
        let size = i64::from(va.ty.lane_type().bytes());
        let off = |u: usize, p: usize| ((u as i64 * GROUP + p as i64 * 2) * size) as i32;
        let bytes = (GROUP * UNROLL * size) as u32;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            bytes,
            4,
        ));
        let at = self.b.ins().stack_addr(I64, slot, 0);
        for (u, parts) in va.vars.iter().enumerate() {
            for (p, &var) in parts.iter().enumerate() {
                let v = self.b.use_var(var);
                self.b.ins().store(super::flags(), v, at, off(u, p));
            }
        }
        call(self, at)?;
        for (u, parts) in va.vars.iter().enumerate() {
            for (p, &var) in parts.iter().enumerate() {
                let v = self.b.ins().load(va.ty, super::flags(), at, off(u, p));
                self.b.def_var(var, v);
            }
        }
        Ok(())
    }
}
