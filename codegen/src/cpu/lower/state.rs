//! The state of one kernel's translation ([`Lower`]): the function under
//! construction, its imports, loop variables, values, accumulators and scans, and
//! the vector tier a block of points runs in.

use cranelift_codegen::ir::{FuncRef, StackSlot, Type, Value};
use cranelift_frontend::{FunctionBuilder, Variable};
use cranelift_jit::JITModule;
use lazyfuse_ir::kernel::{Accum, LoopKernel, MathMode};
use std::collections::HashMap;

/// An accumulator of a `Reduce`.
pub(super) struct Acc {
    pub(super) op: Accum,
    /// the value (in the accumulation type)
    pub(super) var: Variable,
    /// ArgMax/ArgMin: the best index so far
    pub(super) idx: Option<Variable>,
    /// An exact-math float sum: the running compensation of Neumaier's summation,
    /// the interpreter's (`interp::reduce::sum`), so the bits agree.
    pub(super) comp: Option<Variable>,
}

/// The running value of a `Scan` (declared before its phase's loop).
pub(super) struct ScanState {
    /// the running value (in the scan's accumulation type)
    pub(super) var: Variable,
    /// ArgMax/ArgMin: the running extremum's position
    pub(super) idx: Option<Variable>,
}

/// How `body` runs a block of consecutive parallel points (see its comment).
#[derive(Clone, Copy)]
pub(super) enum Tier {
    /// one vector of a single dtype per expression
    Single(Type),
    /// `INTERLEAVED` vectors of a single dtype per expression, computed
    /// expression by expression (`vector_points`): chains of expensive ops,
    /// routine chains' passes over long rows, long loops of cheap ops
    /// (`Lower::tiers`)
    Interleaved(Type),
    /// blocks (this many) of 4 lanes of several dtypes
    Mixed(usize),
    /// a chunk of column-reduction points (its width), rows outermost
    ColumnChunk(i64),
    /// a block of column-reduction points in vector lanes
    Columns,
}

pub(super) struct Lower<'a, 'b> {
    pub(super) module: &'a mut JITModule,
    pub(super) k: &'a LoopKernel,
    pub(super) b: FunctionBuilder<'b>,
    pub(super) imports: HashMap<String, FuncRef>,
    pub(super) names: Vec<String>,
    pub(super) bases: Vec<Value>,
    pub(super) status: Value,
    /// one i64 loop variable per dim
    pub(super) idx: Vec<Variable>,
    /// the position in the current phase's reduction loop (row-major)
    pub(super) pos: Variable,
    pub(super) vals: Vec<Option<Value>>,
    pub(super) accs: HashMap<usize, Acc>,
    pub(super) scans: HashMap<usize, ScanState>,
    pub(super) needed: Vec<bool>,
    /// whether float math may be approximated and reordered (Fast: inline vector
    /// transcendentals from `vmath`, also for scalars; the reduction phases of
    /// `vreduce` run with several vector accumulators)
    pub(super) math: MathMode,
    /// values a vector phase keeps for a later one (`vreduce::phase_reuses`)
    pub(super) reuses: Vec<(usize, usize)>,
    /// the stack slot of each kept value's row
    pub(super) row_slots: HashMap<usize, StackSlot>,
    /// expressions of an elementwise kernel that only the outer dims move
    /// (`row_invariant`): computed once per row into `vals`, splat in the vector
    /// loop
    pub(super) hoisted: Vec<bool>,
    /// the splat vectors of the hoisted values that non-hoisted vector code reads,
    /// computed in the row's first block (see `Lower::row_loop_values`)
    pub(super) row_vectors: Vec<Option<Value>>,
    /// float16/bfloat16 expressions that only stores read: the vector tiers
    /// leave them in float32 and the store rounds them (`vnarrow::store_rounded`)
    pub(super) store_rounds: Vec<bool>,
    /// the kernel's output run, if it has one (`vrun::output_run`)
    pub(super) run: Option<super::vrun::OutputRun>,
    /// what the run's store writes while the code being emitted is a run's
    /// vector tiers (the run's argument, `Lower::enter_run`, or a chain pass's
    /// target); `None` elsewhere
    pub(super) run_target: Option<lazyfuse_ir::kernel::ExprId>,
    /// the cut a chain pass being emitted reads back from its run
    /// (`vchain`)
    pub(super) readback: Option<usize>,
    /// while a narrow output run's passes are emitted ([`OutputRun::tile`]):
    /// its tile's address and the last dim's index at the run's start
    ///
    /// [`OutputRun::tile`]: super::vrun::OutputRun::tile
    pub(super) tile: Option<(Value, Value)>,
    /// an elementwise output run's passes (`vchain::passes`)
    pub(super) passes: Vec<super::vchain::Pass>,
    /// the kernel's tile program and its tiles' address, if it has one
    /// (`vtiles::tile_program`): its rows run through it instead of the tiers
    pub(super) tiles: Option<(super::vtiles::TileProgram, Value)>,
    /// whether the module's ISA has fused multiply-add (`vmath::isa_has_fma`,
    /// read once: it looks the flag up by name)
    pub(super) fma: bool,
}
