//! Translation of one [`LoopKernel`] into a Cranelift function.
//!
//! Shape of the generated code: a loop over the parallel points `begin..end` whose
//! multi-index is computed once with div/rem and then advanced like an odometer;
//! per point the `Outer(0)` expressions, then per phase a flat loop over the
//! reduction dims (again an odometer) with the phase's `Inner` expressions,
//! accumulator updates and stores, then the next `Outer` stage.
//!
//! Values live in registers by *representation*: bool and 8-bit codes as `i8`
//! (0/1 for bool), integers in their width, `float16`/`bfloat16`/`float32` as `f32`
//! (a float16 value is held as the `f32` it widens to, and every op of that dtype is
//! rounded back with a runtime call, as the interpreter rounds per node), `float64`
//! as `f64`. Scalar semantics are the interpreter's; what is cheap and exact is
//! inline, the long tail is a call into `lazyfuse_runtime::jit_symbols`.
//!
//! # Files
//! `skeleton` (the parallel points, rows, odometers, stages and phases), `vector`
//! (which kernels vectorize and their vector code), `vreduce` and `vtranspose` (the
//! vector reduction and transpose tiers), `scalar` (values, loads, constants, calls,
//! status), `ops` (unary, binary, casts), `reduce` (accumulators and scans),
//! `params` (`UnaryParamOp` codes for runtime calls).

use super::CodegenError;
use cranelift_codegen::ir::types::{F32, F64, I16, I32, I64, I8};
use cranelift_codegen::ir::{FuncRef, Function, InstBuilder, MemFlagsData, StackSlot, Type, Value};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::Module;
use lazyfuse_ir::kernel::{Accum, LoopKernel, MathMode};
use lazyfuse_ir::DType;
use std::collections::HashMap;

mod ops;
mod reduce;
mod scalar;
mod skeleton;
mod vector;
mod vreduce;
mod vtranspose;

use vector::{
    interleaves, mixed_vector, row_invariant, vector_binary_ok, vector_param_ok, vector_type,
    vector_unary_ok, INTERLEAVED, MIXED_LANES,
};

type R<T> = Result<T, CodegenError>;

/// How a dtype's values sit in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rep {
    Bool,
    Int {
        ty: Type,
        signed: bool,
    },
    /// f16, bf16 and f32
    F32,
    F64,
    /// a float8 code
    F8,
}

fn rep(dt: DType) -> R<Rep> {
    Ok(match dt {
        DType::Bool => Rep::Bool,
        DType::U8 => Rep::Int {
            ty: I8,
            signed: false,
        },
        DType::I8 => Rep::Int {
            ty: I8,
            signed: true,
        },
        DType::I16 => Rep::Int {
            ty: I16,
            signed: true,
        },
        DType::U16 => Rep::Int {
            ty: I16,
            signed: false,
        },
        DType::I32 => Rep::Int {
            ty: I32,
            signed: true,
        },
        DType::U32 => Rep::Int {
            ty: I32,
            signed: false,
        },
        DType::I64 => Rep::Int {
            ty: I64,
            signed: true,
        },
        DType::U64 => Rep::Int {
            ty: I64,
            signed: false,
        },
        DType::F16 | DType::BF16 | DType::F32 => Rep::F32,
        DType::F64 => Rep::F64,
        d if d.is_float8() => Rep::F8,
        d => {
            return Err(CodegenError::Unsupported(format!(
                "{d} values in a loop kernel"
            )))
        }
    })
}

fn reg(r: Rep) -> Type {
    match r {
        Rep::Bool | Rep::F8 => I8,
        Rep::Int { ty, .. } => ty,
        Rep::F32 => F32,
        Rep::F64 => F64,
    }
}

/// The suffix of the runtime functions for a float compute type.
fn fsuffix(r: Rep) -> &'static str {
    if r == Rep::F64 {
        "f64"
    } else {
        "f32"
    }
}

fn unsupported(what: impl std::fmt::Display, dt: DType) -> CodegenError {
    CodegenError::Unsupported(format!("{what} on {dt}"))
}

fn flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// An accumulator of a `Reduce`.
struct Acc {
    op: Accum,
    /// the value (in the accumulation type)
    var: Variable,
    /// ArgMax/ArgMin: the best index so far
    idx: Option<Variable>,
    /// An exact-math float sum: the running compensation of Neumaier's summation,
    /// the interpreter's (`interp::reduce::sum`), so the bits agree.
    comp: Option<Variable>,
}

/// The running value of a `Scan` (declared before its phase's loop).
struct ScanState {
    /// the running value (in the scan's accumulation type)
    var: Variable,
    /// ArgMax/ArgMin: the running extremum's position
    idx: Option<Variable>,
}

/// How `body` runs a block of consecutive parallel points (see its comment).
#[derive(Clone, Copy)]
enum Tier {
    /// one vector of a single dtype per expression
    Single(Type),
    /// [`INTERLEAVED`] vectors of a single dtype per expression, computed
    /// expression by expression (`vector_points`)
    Interleaved(Type),
    /// 4 lanes of several dtypes
    Mixed,
    /// a chunk of column-reduction points (its width), rows outermost
    ColumnChunk(i64),
    /// a block of column-reduction points in vector lanes
    Columns,
}

struct Lower<'a, 'b> {
    module: &'a mut JITModule,
    k: &'a LoopKernel,
    b: FunctionBuilder<'b>,
    imports: HashMap<String, FuncRef>,
    names: Vec<String>,
    bases: Vec<Value>,
    status: Value,
    /// one i64 loop variable per dim
    idx: Vec<Variable>,
    /// the position in the current phase's reduction loop (row-major)
    pos: Variable,
    vals: Vec<Option<Value>>,
    accs: HashMap<usize, Acc>,
    scans: HashMap<usize, ScanState>,
    needed: Vec<bool>,
    /// whether float math may be approximated and reordered (Fast: inline vector
    /// transcendentals from `vmath`, also for scalars; the reduction phases of
    /// `vreduce` run with several vector accumulators)
    math: MathMode,
    /// values a vector phase keeps for a later one (`vreduce::phase_reuses`)
    reuses: Vec<(usize, usize)>,
    /// the stack slot of each kept value's row
    row_slots: HashMap<usize, StackSlot>,
    /// expressions of an elementwise kernel that only the outer dims move
    /// (`row_invariant`): computed once per row into `vals`, splat in the vector
    /// loop
    hoisted: Vec<bool>,
    /// the splat vectors of the hoisted values that non-hoisted vector code reads,
    /// computed in the row's first block (see [`Lower::row_loop_values`])
    row_vectors: Vec<Option<Value>>,
}

/// Builds `func`'s body from `k`; returns the runtime functions it calls, in
/// declaration order.
pub(super) fn lower(
    module: &mut JITModule,
    func: &mut Function,
    k: &LoopKernel,
    math: MathMode,
) -> R<Vec<String>> {
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let ps = b.block_params(entry).to_vec();
    let (params, status, begin, end) = (ps[0], ps[1], ps[2], ps[3]);
    let mut bases = Vec::new();
    for i in 0..k.params.len() {
        bases.push(b.ins().load(I64, flags(), params, (i * 8) as i32));
    }
    let idx: Vec<Variable> = k.dims.iter().map(|_| b.declare_var(I64)).collect();
    let pos = b.declare_var(I64);
    let zero = b.ins().iconst(I64, 0);
    for &v in idx.iter().chain([&pos]) {
        b.def_var(v, zero);
    }
    let needed = k.needed_exprs();
    let mut l = Lower {
        module,
        k,
        b,
        imports: HashMap::new(),
        names: Vec::new(),
        bases,
        status,
        idx,
        pos,
        vals: vec![None; k.exprs.len()],
        accs: HashMap::new(),
        scans: HashMap::new(),
        reuses: vreduce::phase_reuses(k, &needed, math),
        hoisted: row_invariant(k, &needed),
        row_vectors: vec![None; k.exprs.len()],
        needed,
        math,
        row_slots: HashMap::new(),
    };
    l.body(begin, end)?;
    l.b.seal_all_blocks();
    let names = l.names.clone();
    let cfg = l.module.target_config();
    l.b.finalize(cfg);
    Ok(names)
}
