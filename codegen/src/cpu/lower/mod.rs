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
//! `skeleton` (the parallel points, rows and odometers), `emitter` (the shared
//! lowering's rendering: values, stores, phases and their loops), `vector`
//! (which kernels vectorize and their vector code), `vreduce` and `vtranspose` (the
//! vector reduction and transpose tiers), `vrun` (output runs: a stored
//! transcendental applied by a wide-vector routine over runs of the output),
//! `vchain` (routine chains: the transcendentals inside an elementwise
//! expression as passes over the run, each followed by its routine),
//! `vreduce_run` and `vaffine_run` (a phase's reduction or affine map of a row
//! as one routine call), `vnarrow` (float16/bfloat16 lanes:
//! rounding and packing), `vtiles` (tile programs: a float16/bfloat16
//! elementwise kernel as routine calls over float32 tiles), `scalar` (values, loads, constants, calls,
//! status), `ops` (unary, binary, casts), `reduce` (accumulators and scans),
//! `repr` (a dtype's register representation), `state` (the translation's state).

use super::CodegenError;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{Function, InstBuilder};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::Module;
use lazyfuse_ir::kernel::{LoopKernel, MathMode};
use std::collections::HashMap;

mod emitter;
mod ops;
mod reduce;
mod repr;
mod scalar;
mod skeleton;
mod state;
mod vaffine_run;
mod vchain;
mod vcolumns;
mod vector;
mod vnarrow;
mod vreduce;
mod vreduce_run;
mod vrun;
mod vtiles;
mod vtranspose;

use repr::{flags, fsuffix, reg, rep, unsupported, Rep, R};
use state::{Acc, Lower, ScanState, Tier};
use vector::{
    interleaves, mixed_vector, row_invariant, vector_binary_ok, vector_param_ok, vector_type,
    vector_unary_ok, INTERLEAVED, MIXED_COPIES, MIXED_LANES,
};

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
    let hoisted = row_invariant(k, &needed);
    let fma = super::vmath::isa_has_fma(module);
    let reuses = vreduce::phase_reuses(k, &needed, math);
    let program = vtiles::tile_program(k, &needed, math, fma);
    let output_run = match program {
        Some(_) => None,
        None => vrun::output_run(k, &needed, &hoisted, &reuses, math, fma),
    };
    let (run, passes) = match output_run {
        Some((run, passes)) => (Some(run), passes),
        None => (None, Vec::new()),
    };
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
        reuses,
        hoisted,
        row_vectors: vec![None; k.exprs.len()],
        store_rounds: vnarrow::store_rounded(k, &needed),
        needed,
        math,
        row_slots: HashMap::new(),
        run,
        run_target: None,
        readback: None,
        tile: None,
        passes,
        tiles: None,
        fma,
    };
    if let Some(prog) = program {
        let base = l.tile_slot(&prog)?;
        l.tiles = Some((prog, base));
    }
    l.body(begin, end)?;
    l.b.seal_all_blocks();
    let names = l.names.clone();
    let cfg = l.module.target_config();
    l.b.finalize(cfg);
    Ok(names)
}
