//! Output runs: an elementwise float32 or float64 kernel whose stored value is
//! one transcendental (`exp`, `log`, `tanh`, `sigmoid`, `silu`, the tanh form of
//! `gelu`; in float32 also `log2`, `log10`, `expm1`, `log1p`, `sin`, `cos`,
//! `tan`, `atan`, `sinh`, `cosh`, `erf`, the exact `gelu`, `mish`, the
//! default `softplus` and the plain `elu`) of the rest of its expression
//! stores that argument instead, and a precompiled routine
//! (`lazyfuse_runtime::vector_runs`, 16 or 8 lanes where the processor has
//! them) applies the op in place over each run of the output the vector tiers
//! wrote.
//!
//! Cranelift's vectors are 128 bits wide; a kernel whose work is one
//! transcendental per element is bound by that width, not by memory. The row
//! is cut into runs of [`RUN_POINTS`] (512 bytes of float32, still in L1 when
//! the routine reads them back; [`RESIDENT_RUN_POINTS`] where the whole kernel
//! fits in L1); the vector tiers fill a run with the op's argument (and
//! scalar points the row's last few, fewer than a vector), the routine
//! finishes it. Rows shorter than [`MIN_RUN_ROW`] take no run. The routine's
//! arithmetic is `vmath`'s, operation for operation, so it gives the bits of
//! the inline code (of kernels without a run, and of such short rows).
//!
//! An elementwise kernel's transcendentals inside its expression take
//! passes over the run, each followed by its routine ([`super::vchain`]);
//! the stored op is the chain's last.
//!
//! A float16 or bfloat16 elementwise kernel (the mixed tier, which computes
//! each op in float32 lanes and rounds it) parks its run in a float32 tile on
//! its stack instead ([`OutputRun::tile`]): the vector tiers store the rounded
//! argument there, the op's float32 routine rewrites the tile, and
//! `lf_narrow_<dtype>` rounds the results into the output's codes, which is
//! the inline code's op and rounding, bit for bit. A chain's cuts are read
//! back from the tile and rounded there (so a pass runs between two routines
//! back to back, to round the first one's results).
//!
//! A reduction phase runs over whole rows ([`phase_run`]) with a row routine
//! (`lf_row_<op>`), which also subtracts a shift and keeps the phase's sum in
//! the vector loop's sixteen accumulators: softmax's exp-sum phase is one call
//! per row that reads `x`, subtracts the max, and stores and sums `exp(x -
//! max)` ([`direct_source`]); a phase that computes more stores the argument
//! from its vector loop and the routine runs in place.
//!
//! Only in fast math, where FMA exists (the routines are `vmath`'s FMA forms),
//! for one store whose value nothing else reads, contiguous along the row; the
//! kernel reads no buffer it writes ([`vector_type`](super::vector_type)), so
//! the argument parked in the output is seen by no load.

use super::vchain::Pass;
use super::{Lower, R};
use cranelift_codegen::ir::types::{F32X4, F64X2, I64};
use cranelift_codegen::ir::{InstBuilder, Value};
use lazyfuse_ir::kernel::{Expr, ExprId, LoopKernel, MathMode, Stage};
use lazyfuse_ir::{BinaryOp, DType, UnaryOp, UnaryParamOp};

/// Points per run: a multiple of every vector tier's width, 512 bytes of
/// float32. Short runs keep the kernel's loads streaming: while a routine works
/// on a run in L1 no load goes to memory, and a gap of 128 points is shorter than
/// the prefetchers' lead (W1 over 16M float32: 0.345 ns per point with runs of
/// 1024, 0.24 with 128; the routine calls cost more than that below 64).
pub(super) const RUN_POINTS: i64 = 128;

/// Points per run of a kernel whose buffers fit the core's L1 together
/// ([`RESIDENT_BYTES`]): nothing streams from memory, so a longer run only
/// saves routine calls (three per run in W9's chain: its 1000 points took
/// eight runs of 128).
pub(super) const RESIDENT_RUN_POINTS: i64 = 1024;

/// Most bytes, all its buffers together, of a kernel whose runs are
/// [`RESIDENT_RUN_POINTS`] long.
const RESIDENT_BYTES: usize = 32 << 10;

/// The points per run of kernel `k`: [`RESIDENT_RUN_POINTS`] where its buffers
/// fit in L1 together, [`RUN_POINTS`] where it streams.
pub(super) fn run_points(k: &LoopKernel) -> i64 {
    if streams(k) {
        RUN_POINTS
    } else {
        RESIDENT_RUN_POINTS
    }
}

/// Whether kernel `k`'s buffers together pass [`RESIDENT_BYTES`]: it streams
/// them from beyond L1.
pub(super) fn streams(k: &LoopKernel) -> bool {
    let bytes: usize = k
        .params
        .iter()
        .map(|p| p.len.saturating_mul(p.dtype.size_in_bytes()))
        .fold(0, usize::saturating_add);
    bytes > RESIDENT_BYTES
}

/// How far ahead of a streaming run (in bytes of each input) the kernel asks
/// for its inputs' lines, one run's worth per input, before it computes the
/// run ([`Lower::prefetch_inputs`]): while the run's routine works in L1 no
/// load goes to memory and the hardware prefetchers, which follow the loads,
/// stop with it; the hint keeps the memory busy through the routine.
pub(super) const PREFETCH_AHEAD_BYTES: i64 = 2048;

/// Most inputs a run asks ahead for (one call each per run).
const PREFETCH_MAX_INPUTS: usize = 4;

/// Shortest row (points along the last dim) an elementwise kernel takes a run
/// for: each row calls the routines at least once, which costs more than the
/// inline code of a few points.
pub(super) const MIN_RUN_ROW: usize = 4;

/// A kernel's output run (see the module doc).
#[derive(Clone, Copy)]
pub(super) struct OutputRun {
    /// the store (index into the kernel's stores) the run writes
    pub(super) store: usize,
    /// the stored op's expression, which the vector code leaves to the routine
    /// (an elementwise chain's last routine op, see [`super::vchain`])
    pub(super) op: usize,
    /// its argument, which the vector code stores instead
    pub(super) arg: ExprId,
    /// the routine's op and element type (`exp_f32`, see [`run_symbol`])
    pub(super) routine: &'static str,
    /// the reduction phase the store is in (`None`: an elementwise kernel)
    pub(super) phase: Option<u32>,
    /// the argument is a load of the op's dtype contiguous along the row (in
    /// a phase, also a float16 or bfloat16 one widened to float32:
    /// [`widened_row`]), or (a phase run's) such a value minus
    /// [`OutputRun::shift`], and the kernel (the phase) computes nothing else:
    /// the routine reads the input itself (a narrow row's codes by
    /// `lf_row_exp_<dtype>`, or widened into its own row first), and the
    /// vector code does not run
    pub(super) direct: bool,
    /// a direct phase run's outer value the routine subtracts from the load
    /// (softmax's row max)
    pub(super) shift: Option<ExprId>,
    /// a float16 or bfloat16 output: the run is parked in a float32 tile on
    /// the stack ([`tile_bytes`]), the float32 routine rewrites the tile and
    /// `lf_narrow_<dtype>` writes its codes into the output (`None`: the run is
    /// the output itself)
    pub(super) tile: Option<DType>,
    /// a kept row's run ([`kept_run`]): the row slot of this expression holds
    /// the run (`None`: the output, or its tile, does)
    pub(super) slot: Option<usize>,
}

/// Bytes of a narrow output run's float32 tile in kernel `k`: a run's values
/// ([`run_points`]).
pub(super) fn tile_bytes(k: &LoopKernel) -> u32 {
    run_points(k) as u32 * 4
}

/// The routine's op and element type (`exp_f32`: `lf_run_exp_f32` and
/// `lf_row_exp_f32`) over `dt` (float32 or float64) of the op that computes `e`,
/// if it has one, and the op's argument.
pub(super) fn run_symbol(e: &Expr, dt: DType) -> Option<(&'static str, ExprId)> {
    let f64 = match dt {
        DType::F32 => false,
        DType::F64 => true,
        _ => return None,
    };
    let (symbol, x) = match *e {
        Expr::Unary { op, x } => (
            match (op, f64) {
                (UnaryOp::Exp, false) => "exp_f32",
                (UnaryOp::Log, false) => "log_f32",
                (UnaryOp::Log2, false) => "log2_f32",
                (UnaryOp::Log10, false) => "log10_f32",
                (UnaryOp::Tanh, false) => "tanh_f32",
                (UnaryOp::Sigmoid, false) => "sigmoid_f32",
                (UnaryOp::Silu, false) => "silu_f32",
                (UnaryOp::Erf, false) => "erf_f32",
                (UnaryOp::Expm1, false) => "expm1_f32",
                (UnaryOp::Log1p, false) => "log1p_f32",
                (UnaryOp::Mish, false) => "mish_f32",
                (UnaryOp::Sin, false) => "sin_f32",
                (UnaryOp::Cos, false) => "cos_f32",
                (UnaryOp::Tan, false) => "tan_f32",
                (UnaryOp::Atan, false) => "atan_f32",
                (UnaryOp::Sinh, false) => "sinh_f32",
                (UnaryOp::Cosh, false) => "cosh_f32",
                (UnaryOp::Exp, true) => "exp_f64",
                (UnaryOp::Log, true) => "log_f64",
                (UnaryOp::Tanh, true) => "tanh_f64",
                (UnaryOp::Sigmoid, true) => "sigmoid_f64",
                (UnaryOp::Silu, true) => "silu_f64",
                _ => return None,
            },
            x,
        ),
        Expr::UnaryParam {
            op: UnaryParamOp::Gelu { tanh: false },
            x,
        } if !f64 => ("gelu_f32", x),
        Expr::UnaryParam {
            op: UnaryParamOp::Gelu { tanh: true },
            x,
        } => (
            if f64 {
                "gelu_tanh_f64"
            } else {
                "gelu_tanh_f32"
            },
            x,
        ),
        // (the routines take no parameters: PyTorch's default softplus and
        // the plain elu, whose constants they hold)
        Expr::UnaryParam {
            op: UnaryParamOp::Softplus { beta, threshold },
            x,
        } if !f64 && beta == 1.0 && threshold == 20.0 => ("softplus_f32", x),
        Expr::UnaryParam {
            op:
                UnaryParamOp::Elu {
                    alpha,
                    scale,
                    input_scale,
                },
            x,
        } if !f64 && alpha == 1.0 && scale == 1.0 && input_scale == 1.0 => ("elu_f32", x),
        _ => return None,
    };
    Some((symbol, x))
}

/// The output run of `k` and, for an elementwise kernel, its passes
/// ([`super::vchain`]), or `None`: an elementwise kernel's (its vector type
/// `f32x4` or `f64x2`) or a reduction phase's ([`phase_run`], no passes).
pub(super) fn output_run(
    k: &LoopKernel,
    needed: &[bool],
    hoisted: &[bool],
    reuses: &[(usize, usize)],
    math: MathMode,
    fma: bool,
) -> Option<(OutputRun, Vec<Pass>)> {
    if math != MathMode::Fast || !fma {
        return None;
    }
    if k.phases() > 0 {
        return phase_run(k, needed, reuses, math).map(|r| (r, Vec::new()));
    }
    let [store] = k.stores.as_slice() else {
        return None;
    };
    let stored = k.params[store.param.index()].dtype;
    let dt = match super::vector_type(k, math) {
        Some(F32X4) => DType::F32,
        Some(F64X2) => DType::F64,
        // (the mixed tier computes float16 and bfloat16 ops in float32 lanes,
        // each rounded: a float32 routine and the rounding of its result are
        // the op)
        None if matches!(stored, DType::F16 | DType::BF16) && super::mixed_vector(k, math) => {
            stored
        }
        _ => return None,
    };
    if k.dims[k.n_parallel - 1] < MIN_RUN_ROW {
        return None;
    }
    if stored != dt || hoisted[store.value.0 as usize] {
        return None;
    }
    let tile = matches!(dt, DType::F16 | DType::BF16).then_some(dt);
    let passes = super::vchain::passes(k, hoisted, dt, store.value)?;
    // (the run's op is the chain's last: the one a single pass reads directly)
    let (p, (op, routine)) = passes.iter().rev().find_map(|p| Some((p, p.then?)))?;
    let arg = p.target;
    let np = k.n_parallel;
    let direct = passes.len() == 1
        && tile.is_none()
        && matches!(k.exprs[arg.0 as usize].expr, Expr::Load { ref index, .. }
            if index.strides[np - 1] == 1 && k.exprs[arg.0 as usize].dtype == dt);
    Some((
        OutputRun {
            store: 0,
            op,
            arg,
            routine,
            phase: None,
            direct,
            shift: None,
            tile,
            slot: None,
        },
        passes,
    ))
}

/// Longest row a phase run takes, in bytes: the phase's vector loop
/// writes the row's arguments, the routine rewrites them and the reductions read
/// them back, so the row should stay in the core's caches between the three.
const PHASE_RUN_ROW_BYTES: usize = 64 << 10;

/// The load a direct run's routine reads (`None`: the run is not direct, and
/// its routine reads the values the vector loop stored).
pub(super) fn direct_load(k: &LoopKernel, r: OutputRun) -> Option<ExprId> {
    if !r.direct {
        return None;
    }
    let value = match (r.shift, &k.exprs[r.arg.0 as usize].expr) {
        (Some(_), Expr::Binary { a, .. }) => *a,
        _ => r.arg,
    };
    Some(widened_row(k, value).unwrap_or(value))
}

/// The float16 or bfloat16 load contiguous along the row that `id` widens to
/// float32 (`cast(load)`), if it is one: a direct run's routine reads the row
/// widened into its own (the output's, or the kept row's) first.
pub(super) fn widened_row(k: &LoopKernel, id: ExprId) -> Option<ExprId> {
    let e = &k.exprs[id.0 as usize];
    match e.expr {
        Expr::Cast { x }
            if e.dtype == DType::F32
                && matches!(k.exprs[x.0 as usize].dtype, DType::F16 | DType::BF16)
                && row_load(k, x) =>
        {
            Some(x)
        }
        _ => None,
    }
}

/// The output run of a reduction phase (softmax's after `phase_reuse`: `exp(x -
/// max)` stored into the output and summed): a float32 or float64 store in a
/// phase that vectorizes ([`phase_vectorizes`](super::vreduce::phase_vectorizes)), of an
/// op with a routine that only reductions read besides the store, no other
/// store to its buffer and no load of it in that phase, no row kept in a stack slot (`reuses`,
/// [`phase_reuses`](super::vreduce::phase_reuses)), rows of at most
/// [`PHASE_RUN_ROW_BYTES`]. The phase's vector loop stores the argument (or,
/// [`direct_source`], does not run), the row routine runs over the row's vector
/// positions and keeps a single sum of the op in the vector loop's order;
/// other reductions of the op are folded in by a second loop that reads the
/// values back in the order the first would have (so the sums keep their
/// bits).
fn phase_run(
    k: &LoopKernel,
    needed: &[bool],
    reuses: &[(usize, usize)],
    math: MathMode,
) -> Option<OutputRun> {
    let nd = k.dims.len();
    if nd != k.n_parallel + 1 {
        return None;
    }
    let n = k.dims[nd - 1];
    let step = (super::vreduce::GROUP * super::vreduce::UNROLL) as usize;
    if n < step || n * 4 > PHASE_RUN_ROW_BYTES || !reuses.is_empty() {
        return None;
    }
    k.stores.iter().enumerate().find_map(|(si, st)| {
        let op = st.value.0 as usize;
        let e = &k.exprs[op];
        let Stage::Inner(ph) = e.stage else {
            return None;
        };
        let (symbol, x) = run_symbol(&e.expr, e.dtype)?;
        let buf = k.params[st.param.index()].buf;
        let only_reduced = only_reduced(k, needed, st.value);
        // (another store to the buffer in the phase could land on the run
        // before the routine; a later phase's store, softmax's scaled value, is
        // the kernel's result)
        let stores_it = k
            .stores
            .iter()
            .filter(|o| {
                k.params[o.param.index()].buf == buf && k.exprs[o.value.0 as usize].stage == e.stage
            })
            .count();
        let loads_it = k.exprs.iter().any(|l| {
            l.stage == e.stage
                && matches!(l.expr, Expr::Load { param, .. } if k.params[param.index()].buf == buf)
        });
        let ok = k.params[st.param.index()].dtype == e.dtype
            && n * e.dtype.size_in_bytes() <= PHASE_RUN_ROW_BYTES
            && st.index.strides[nd - 1] == 1
            && only_reduced
            && stores_it == 1
            && !loads_it
            && super::vreduce::phase_vectorizes(k, ph, needed, math);
        let (direct, shift) = match direct_source(k, needed, ph, op, x) {
            Some(shift) => (true, shift),
            None => (false, None),
        };
        ok.then_some(OutputRun {
            store: si,
            op,
            arg: x,
            routine: symbol,
            phase: Some(ph),
            direct,
            shift,
            tile: None,
            slot: None,
        })
    })
}

/// The run of a row that phase `ph` keeps for a later one (`keep`, see
/// `vreduce::phase_reuses`: a float16 softmax's float32 `exp(x - max)`, which
/// its last phase reads back): an expression with a routine ([`run_symbol`],
/// float32 or float64) whose argument the phase computes, that only
/// reductions read and no store writes. The phase's vector loop stores the
/// argument into the row slot instead, and the row routine rewrites the slot
/// in place and keeps the phase's sum, as a phase run does in the output
/// ([`phase_run`]); the slot then holds the values the vector loop would have
/// kept, bit for bit. Fast math with FMA only, as every run.
pub(super) fn kept_run(
    k: &LoopKernel,
    ph: u32,
    needed: &[bool],
    keep: &[usize],
    math: MathMode,
    fma: bool,
) -> Option<OutputRun> {
    if math != MathMode::Fast || !fma {
        return None;
    }
    keep.iter().find_map(|&op| {
        let e = &k.exprs[op];
        let (symbol, x) = run_symbol(&e.expr, e.dtype)?;
        let id = ExprId(op as u32);
        let stored = k.stores.iter().any(|st| st.value == id);
        let ok = e.stage == Stage::Inner(ph)
            && k.exprs[x.0 as usize].stage == Stage::Inner(ph)
            && only_reduced(k, needed, id)
            && !stored;
        let (direct, shift) = match direct_source(k, needed, ph, op, x) {
            Some(shift) => (true, shift),
            None => (false, None),
        };
        ok.then_some(OutputRun {
            store: usize::MAX,
            op,
            arg: x,
            routine: symbol,
            phase: Some(ph),
            direct,
            shift,
            tile: None,
            slot: Some(op),
        })
    })
}

/// Whether every needed expression that reads `id` is a reduction (a run's op
/// that its routine leaves only to the phase's sums).
fn only_reduced(k: &LoopKernel, needed: &[bool], id: ExprId) -> bool {
    k.exprs.iter().enumerate().all(|(i, r)| {
        !needed[i]
            || !LoopKernel::operands(&r.expr).contains(&id)
            || matches!(r.expr, Expr::Reduce { .. })
    })
}

/// Whether `id` is a load contiguous along the row (stride 1 in the last dim)
/// from a buffer of its own dtype: a row a routine reads as a slice.
pub(super) fn row_load(k: &LoopKernel, id: ExprId) -> bool {
    let nd = k.dims.len();
    let e = &k.exprs[id.0 as usize];
    matches!(e.expr, Expr::Load { param, ref index, .. }
        if index.strides[nd - 1] == 1 && k.params[param.index()].dtype == e.dtype)
}

/// Whether phase `ph` computes nothing but `own`: every needed expression of
/// its stage is one of them (a routine then does the phase's whole work).
pub(super) fn phase_computes_only(k: &LoopKernel, needed: &[bool], ph: u32, own: &[usize]) -> bool {
    let stage = Stage::Inner(ph);
    (0..k.exprs.len()).all(|i| !needed[i] || k.exprs[i].stage != stage || own.contains(&i))
}

/// Whether phase `ph`'s run of op `op` (argument `x`) reads its input itself:
/// `x` is a contiguous load of the op's dtype or such a load minus a value of an
/// outer stage (returned: the shift), and the phase computes nothing else (its
/// needed expressions are the load, the subtraction and the op; its reductions
/// all reduce the op). `None`: the vector loop stores the argument.
fn direct_source(
    k: &LoopKernel,
    needed: &[bool],
    ph: u32,
    op: usize,
    x: ExprId,
) -> Option<Option<ExprId>> {
    let dt = k.exprs[op].dtype;
    // a row of the op's dtype, or a float16/bfloat16 one widened to float32
    let contiguous = |id: ExprId| {
        (k.exprs[id.0 as usize].dtype == dt && row_load(k, id)) || widened_row(k, id).is_some()
    };
    let (value, shift) = match k.exprs[x.0 as usize].expr {
        _ if contiguous(x) => (x, None),
        Expr::Binary {
            op: BinaryOp::Sub,
            a,
            b,
        } if contiguous(a) && !matches!(k.exprs[b.0 as usize].stage, Stage::Inner(_)) => {
            (a, Some(b))
        }
        _ => return None,
    };
    let load = widened_row(k, value).unwrap_or(value);
    let only_op = k
        .phase_reductions(ph)
        .iter()
        .all(|r| !needed[r.0] || r.2 .0 as usize == op);
    let own = [op, x.0 as usize, value.0 as usize, load.0 as usize];
    let alone = phase_computes_only(k, needed, ph, &own);
    (only_op && alone).then_some(shift)
}

impl Lower<'_, '_> {
    /// Whether the vector tiers now write the run's argument (between
    /// [`Lower::enter_run`] and [`Lower::leave_run`]).
    pub(super) fn run_store_value(&self, store: usize) -> Option<ExprId> {
        match self.run {
            Some(r) if r.store == store => self.run_target,
            _ => None,
        }
    }

    /// The vector tiers from here on leave the op to the routine.
    pub(super) fn enter_run(&mut self, r: OutputRun) {
        self.needed[r.op] = false;
        self.run_target = Some(r.arg);
    }

    /// The code from here on computes the op itself (the scalar tail).
    pub(super) fn leave_run(&mut self, r: OutputRun) {
        self.needed[r.op] = true;
        self.run_target = None;
    }

    /// The address in a narrow run's tile of the point `shift` points along the
    /// last dim from the current one, where store `store` is the run's and its
    /// passes are being emitted; `None` elsewhere (the store writes its
    /// buffer).
    pub(super) fn tile_address(&mut self, store: usize, shift: i64) -> Option<Value> {
        let (base, start) = self.tile?;
        if self.run?.store != store {
            return None;
        }
        let iv = self.b.use_var(self.idx[self.k.n_parallel - 1]);
        let at = self.b.ins().isub(iv, start);
        let at = self.b.ins().iadd_imm_s(at, shift);
        let bytes = self.b.ins().imul_imm_s(at, 4);
        Some(self.b.ins().iadd(base, bytes))
    }

    /// The address of the run's store at the current point (of its row slot's
    /// point, for a kept row's run).
    pub(super) fn run_address(&mut self, r: OutputRun) -> R<Value> {
        let Some(e) = r.slot else {
            return self.store_address(r.store);
        };
        let pos = self.b.use_var(self.idx[self.k.dims.len() - 1]);
        Ok(self.row_slot_address(e, pos))
    }

    /// Before a run of `points` from the current point (the row ends at
    /// `re`) in a kernel that [`streams`]: asks for the lines of the run
    /// [`PREFETCH_AHEAD_BYTES`] ahead in each input that the kernel loads
    /// contiguously along the row (`lf_prefetch_lines`), up to the row's end.
    pub(super) fn prefetch_inputs(&mut self, re: Value, points: i64) -> R<()> {
        if !streams(self.k) {
            return Ok(());
        }
        let np = self.k.n_parallel;
        let mut inputs: Vec<(usize, i64, Vec<i64>)> = Vec::new();
        for e in &self.k.exprs {
            let Expr::Load {
                param,
                ref index,
                dynamic: None,
            } = e.expr
            else {
                continue;
            };
            let p = param.index();
            let contiguous = np > 0 && index.strides.get(np - 1) == Some(&1);
            let key = (p, index.offset, index.strides.clone());
            if contiguous && !self.k.params[p].writes && !inputs.contains(&key) {
                inputs.push(key);
            }
        }
        if inputs.is_empty() {
            return Ok(());
        }
        // The points asked for, the same in every input: the run's, but none
        // past the row's end (zero or less near it asks for nothing).
        let ahead = |size: i64| PREFETCH_AHEAD_BYTES / size;
        let iv = self.b.use_var(self.idx[np - 1]);
        let left = self.b.ins().isub(re, iv);
        let run = self.iconst(I64, points);
        for (p, offset, strides) in inputs.into_iter().take(PREFETCH_MAX_INPUTS) {
            let size = self.k.params[p].dtype.size_in_bytes() as i64;
            let rest = self.b.ins().iadd_imm_s(left, -ahead(size));
            let count = self.b.ins().smin(rest, run);
            let bytes = self.b.ins().imul_imm_s(count, size);
            let here = self.address(p, &offset, &strides, None)?;
            let at = self.b.ins().iadd_imm_s(here, ahead(size) * size);
            self.call_void("lf_prefetch_lines", &[at, bytes])?;
        }
        Ok(())
    }

    /// The address of store `store` (an index into the kernel's stores) at the
    /// current point.
    pub(super) fn store_address(&mut self, store: usize) -> R<Value> {
        let s = &self.k.stores[store];
        let (param, offset, strides) = (s.param.index(), s.index.offset, s.index.strides.clone());
        self.address(param, &offset, &strides, None)
    }

    /// Calls the routine over the `count` points from `start` (an address): in
    /// place, or from `src` (the address of the argument's load).
    pub(super) fn run_routine(
        &mut self,
        r: OutputRun,
        start: Value,
        src: Option<Value>,
        count: Value,
    ) -> R<()> {
        debug_assert_eq!(self.b.func.dfg.value_type(count), I64);
        let symbol = format!("lf_run_{}", r.routine);
        self.call_void(&symbol, &[start, src.unwrap_or(start), count])
    }

    /// The address of the argument's load at the current point, where the run
    /// reads it straight from memory ([`OutputRun::direct`]).
    pub(super) fn run_source(&mut self, r: OutputRun) -> R<Option<Value>> {
        match direct_load(self.k, r) {
            Some(load) => self.load_address(load).map(Some),
            None => Ok(None),
        }
    }

    /// The address of load `load` at the current point.
    pub(super) fn load_address(&mut self, load: ExprId) -> R<Value> {
        let Expr::Load {
            param, ref index, ..
        } = self.k.exprs[load.0 as usize].expr
        else {
            let dt = self.k.exprs[load.0 as usize].dtype;
            return Err(super::unsupported(
                "a run reading a value that is not a load",
                dt,
            ));
        };
        let (offset, strides) = (index.offset, index.strides.clone());
        self.address(param.index(), &offset, &strides, None)
    }
}
