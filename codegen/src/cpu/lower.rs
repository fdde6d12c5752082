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

use super::CodegenError;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F64, I16, I32, I64, I8};
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, FuncRef, Function, InstBuilder, MemFlagsData, StackSlot,
    StackSlotData, StackSlotKind, Type, Value,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{Linkage, Module};
use lazyfuse_ir::kernel::{
    Accum, Const, Expr, ExprId, LoopKernel, MathMode, ScanAccum, Stage, Status, StoreOp,
};
use lazyfuse_ir::op::Op;
use lazyfuse_ir::schedule::{cheap_binary, cheap_unary};
use lazyfuse_ir::{BinaryOp, DType, UnaryOp, UnaryParamOp};
use std::collections::HashMap;

#[path = "vreduce.rs"]
mod vreduce;
#[path = "vtranspose.rs"]
mod vtranspose;

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

impl Lower<'_, '_> {
    fn iconst(&mut self, ty: Type, v: i64) -> Value {
        self.b.ins().iconst(ty, v)
    }

    /// The vector tiers `body` tries for this kernel, in order (see `rows`).
    fn tiers(&self) -> Vec<(i64, Tier)> {
        // Elementwise kernels: `vt` vectors of one dtype, or several dtypes that
        // all fit 4 lanes (`vector_point_mixed` reads its lane types per
        // expression); column reductions: chunks of `vreduce::CHUNKS` points where
        // they fit, then blocks of `vreduce::COLUMNS`; tried in this order, each
        // falling through to the next.
        let mut tiers: Vec<(i64, Tier)> = Vec::new();
        if let Some(vt) = vector_type(self.k, self.math) {
            if interleaves(self.k, &self.needed, &self.hoisted) {
                let lanes = i64::from(vt.lane_count()) * INTERLEAVED as i64;
                tiers.push((lanes, Tier::Interleaved(vt)));
            }
            tiers.push((i64::from(vt.lane_count()), Tier::Single(vt)));
        } else if mixed_vector(self.k, self.math) {
            tiers.push((i64::from(MIXED_LANES.lane_count()), Tier::Mixed));
        } else if vreduce::columns_vectorize(self.k, &self.needed, self.math) {
            if vreduce::chunk_vectorize(self.k, &self.needed) {
                let columns = self.k.dims[self.k.n_parallel - 1] as i64;
                for width in vreduce::CHUNKS.into_iter().filter(|&w| w <= columns) {
                    tiers.push((width, Tier::ColumnChunk(width)));
                }
            }
            tiers.push((vreduce::COLUMNS, Tier::Columns));
        }
        tiers
    }

    /// One block of `lanes` consecutive points of the last parallel dim.
    fn tier_point(&mut self, tier: Tier) -> R<()> {
        match tier {
            Tier::Single(vt) => self.vector_points(vt, 1),
            Tier::Interleaved(vt) => self.vector_points(vt, INTERLEAVED),
            Tier::Mixed => self.vector_point_mixed(),
            Tier::ColumnChunk(width) => self.vector_column_chunk(width),
            Tier::Columns => self.vector_columns(),
        }
    }

    fn body(&mut self, begin: Value, end: Value) -> R<()> {
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
            let head = self.b.create_block();
            let bodyb = self.b.create_block();
            self.b.ins().jump(head, &[]);
            self.b.switch_to_block(head);
            let pv = self.b.use_var(p);
            let more = self.b.ins().icmp(IntCC::UnsignedLessThan, pv, end);
            self.b.ins().brif(more, bodyb, &[], exit, &[]);
            self.b.switch_to_block(bodyb);
            if let Some(lanes) = vtranspose::transpose_block(self.k, &self.needed) {
                self.transpose_step(p, end, lanes, head)?;
            } else if np == 0 {
                // The one point of a kernel without parallel dims.
                self.point()?;
                let pv = self.b.use_var(p);
                let pn = self.b.ins().iadd_imm_s(pv, 1);
                self.b.def_var(p, pn);
                self.b.ins().jump(head, &[]);
            } else {
                self.row(p, end, pdims[np - 1], head)?;
            }
        }
        self.b.switch_to_block(exit);
        self.b.ins().return_(&[]);
        Ok(())
    }

    /// The points of the current row (the last parallel dim from its current
    /// index) that lie in the range (`p` up to `end`) as tight loops: whole blocks
    /// of each vector tier while they fit, then single points; only the last
    /// parallel dim's variable moves inside the row, so the address terms of the
    /// outer dims are loop invariant (Cranelift hoists them). Then advances `p` and
    /// the outer dims' odometer, and jumps back to `head`.
    fn row(&mut self, p: Variable, end: Value, n_last: i64, head: Block) -> R<()> {
        let np = self.k.n_parallel;
        let last = self.idx[np - 1];
        let i0 = self.b.use_var(last);
        let pv = self.b.use_var(p);
        // Row end (exclusive, in the last dim): the row's end or the range's,
        // whichever comes first (`end - p` ≥ 1 here).
        let room_row = self.iconst(I64, n_last);
        let room_row = self.b.ins().isub(room_row, i0);
        let room_range = self.b.ins().isub(end, pv);
        let n = self.b.ins().umin(room_row, room_range);
        let re = self.b.ins().iadd(i0, n);
        let tiers = self.tiers();
        // (a kernel has at most one single-dtype tier)
        if let Some(vt) = tiers.iter().find_map(|&(_, t)| match t {
            Tier::Single(vt) => Some(vt),
            _ => None,
        }) {
            self.hoist_row_values()?;
            self.row_loop_values(vt);
        }
        for (lanes, tier) in tiers {
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
        // The scalar points below compute every value themselves.
        self.vals.iter_mut().for_each(|v| *v = None);
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

    /// Computes the row's [`row_invariant`] values once (scalar code, in the
    /// row's first block, which dominates its vector loops) into `vals`.
    /// The scalar code's values are the vector lanes' (a kernel vectorizes only
    /// with ops whose vector form gives the scalar result).
    fn hoist_row_values(&mut self) -> R<()> {
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
    fn row_loop_values(&mut self, vt: Type) {
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

    /// Makes vector `v` the operand of a store to a stack slot of its own (never
    /// read) here, so that Cranelift's optimizer, which places a pure op at its
    /// first use, computes it here (see `row_loop_values` and `vector_points`).
    /// One slot per anchor: of several stores to one slot, the optimizer kept
    /// only some (measured), and the others' values moved to their later uses.
    fn anchor(&mut self, v: Value) {
        let data = StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 4);
        let slot = self.b.create_sized_stack_slot(data);
        self.b.ins().stack_store(I64, v, slot, 0);
    }

    /// Adds `carry` (a bool) to the last of `dims` and carries into the others.
    fn carry(&mut self, dims: std::ops::Range<usize>, carry: Value) {
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
    fn odometer(&mut self, dims: std::ops::Range<usize>) {
        self.odometer_by(dims, 1);
    }

    /// Advances the last of `dims` by `step` (which must not pass its size) and
    /// carries into the others.
    fn odometer_by(&mut self, dims: std::ops::Range<usize>, step: i64) {
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

    /// `copies` blocks of `lanes` consecutive points of the last parallel dim at
    /// once (only for kernels [`vector_type`] accepts: one dtype, no reductions,
    /// contiguous or broadcast accesses along that dim, no param both read and
    /// written).
    ///
    /// Several copies (the [`Tier::Interleaved`] tier) compute each expression for
    /// every block before the next expression, and anchor each expensive op's
    /// vectors where they are computed ([`Lower::anchor`]). Cranelift's optimizer
    /// places a pure op at its first use, and the stores use the blocks in order:
    /// without the anchors it would place one block's whole chain of
    /// transcendentals before the next block's, and the out-of-order core, whose
    /// scheduler one chain of dependent ops fills, would still run one chain at a
    /// time. Interleaved, it overlaps `copies` chains.
    fn vector_points(&mut self, vt: Type, copies: usize) -> R<()> {
        let np = self.k.n_parallel;
        let lanes = i64::from(vt.lane_count());
        let mut vv: Vec<Vec<Option<Value>>> = vec![vec![None; self.k.exprs.len()]; copies];
        for i in 0..self.k.exprs.len() {
            if !self.needed[i] {
                continue;
            }
            if self.hoisted[i] {
                let v = match self.row_vectors[i] {
                    Some(v) => v,
                    None => {
                        let x = self.val(ExprId(i as u32));
                        self.b.ins().splat(vt, x)
                    }
                };
                vv.iter_mut().for_each(|block| block[i] = Some(v));
                continue;
            }
            let e = self.k.exprs[i].expr.clone();
            let anchored = copies > 1 && expensive_op(&e);
            for (c, block) in vv.iter_mut().enumerate() {
                let get = |id: ExprId| block[id.0 as usize].expect("operands come first");
                let v = match &e {
                    Expr::Load { param, index, .. } => {
                        if index.strides[np - 1] == 0 {
                            let addr = self.address(*param, &index.offset, &index.strides, None)?;
                            let x = self.b.ins().load(vt.lane_type(), flags(), addr, 0);
                            self.b.ins().splat(vt, x)
                        } else {
                            let shift = c as i64 * lanes;
                            let addr =
                                self.shifted_address(*param, &index.offset, &index.strides, shift)?;
                            self.b.ins().load(vt, flags(), addr, 0)
                        }
                    }
                    Expr::Const(c) => {
                        let x = self.constant(*c, self.k.exprs[i].dtype)?;
                        self.b.ins().splat(vt, x)
                    }
                    Expr::Unary { op, x } => self.vunary(*op, get(*x), vt),
                    Expr::UnaryParam { op, x } => self.vparam(*op, get(*x), vt),
                    Expr::Binary { op, a, b } => self.vbinary(*op, get(*a), get(*b), vt),
                    _ => return Err(CodegenError::Backend("not a vector expression".into())),
                };
                if anchored {
                    self.anchor(v);
                }
                block[i] = Some(v);
            }
        }
        for (c, block) in vv.iter().enumerate() {
            self.vector_stores(block, c as i64 * lanes)?;
        }
        Ok(())
    }

    /// Four consecutive points of a kernel [`mixed_vector`] accepts: each expression
    /// in the 4-lane vector of its register representation (float32, and float16 and
    /// bfloat16 widened exactly as the scalar loads do, in `f32x4`; int32 in `i32x4`),
    /// with the casts between them done lane-wise with the scalar code's results.
    fn vector_point_mixed(&mut self) -> R<()> {
        use cranelift_codegen::ir::types::{F32X4, I32X4};
        let np = self.k.n_parallel;
        let mut vv: Vec<Option<Value>> = vec![None; self.k.exprs.len()];
        let mut consts: Vec<Option<Value>> = vec![None; self.k.exprs.len()];
        for i in 0..self.k.exprs.len() {
            if !self.needed[i] {
                continue;
            }
            let e = self.k.exprs[i].clone();
            if let (Expr::Const(c), None) = (&e.expr, mixed_lane_type(e.dtype)) {
                // A constant of another dtype (a float64 scalar operand) only feeds
                // casts, which convert it as scalars below.
                consts[i] = Some(self.constant(*c, e.dtype)?);
                continue;
            }
            if let (Expr::Load { param, index, .. }, None) = (&e.expr, mixed_lane_type(e.dtype)) {
                // Likewise a broadcast load of another dtype (a 0-d float64 tensor
                // operand): one scalar per vector, cast below.
                let addr = self.address(*param, &index.offset, &index.strides, None)?;
                consts[i] = Some(self.load(addr, e.dtype)?);
                continue;
            }
            let vt = mixed_lane_type(e.dtype).expect("mixed_vector checked the dtypes");
            let get = |id: ExprId| vv[id.0 as usize].expect("operands come first");
            let v = match e.expr {
                Expr::Load { param, index, .. } => {
                    let addr = self.address(param, &index.offset, &index.strides, None)?;
                    let splat = index.strides[np - 1] == 0;
                    match e.dtype {
                        DType::F16 | DType::BF16 => {
                            let bits = if splat {
                                let h = self.b.ins().load(I16, flags(), addr, 0);
                                let w = self.b.ins().uextend(I32, h);
                                self.b.ins().splat(I32X4, w)
                            } else {
                                self.b.ins().uload16x4(flags(), addr, 0)
                            };
                            if e.dtype == DType::F16 {
                                self.vf16_to_f32(bits)
                            } else {
                                // bfloat16 is the upper half of a float32.
                                let sixteen = self.iconst(I32, 16);
                                let w = self.b.ins().ishl(bits, sixteen);
                                self.vbitcast(F32X4, w)
                            }
                        }
                        _ if splat => {
                            let x = self.b.ins().load(vt.lane_type(), flags(), addr, 0);
                            self.b.ins().splat(vt, x)
                        }
                        _ => self.b.ins().load(vt, flags(), addr, 0),
                    }
                }
                Expr::Const(c) => {
                    let x = self.constant(c, e.dtype)?;
                    consts[i] = Some(x);
                    self.b.ins().splat(vt, x)
                }
                Expr::Cast { x } if consts[x.0 as usize].is_some() => {
                    let c = consts[x.0 as usize].expect("checked");
                    let from = self.dtype(x);
                    let c = self.cast(c, from, e.dtype)?;
                    self.b.ins().splat(vt, c)
                }
                Expr::Cast { x } => match self.dtype(x) {
                    // cvtdq2ps rounds to nearest even, as the scalar i64 → f32 does
                    // (an int32 is exact in the i64 it widens to).
                    DType::I32 => self.b.ins().fcvt_from_sint(F32X4, get(x)),
                    // float16/bfloat16 values are already their exact float32.
                    _ => get(x),
                },
                Expr::Unary { op, x } => self.vunary(op, get(x), vt),
                Expr::UnaryParam { op, x } => self.vparam(op, get(x), vt),
                Expr::Binary { op, a, b } => self.vbinary(op, get(a), get(b), vt),
                _ => return Err(CodegenError::Backend("not a vector expression".into())),
            };
            vv[i] = Some(v);
        }
        self.vector_stores(&vv, 0)
    }

    /// Stores the vector values `vv` of one block of points (every vector tier),
    /// the block `shift` points along the last dim from the current point.
    fn vector_stores(&mut self, vv: &[Option<Value>], shift: i64) -> R<()> {
        for s in &self.k.stores {
            let v = vv[s.value.0 as usize].expect("stored values are computed");
            let addr = self.shifted_address(s.param, &s.index.offset, &s.index.strides, shift)?;
            self.b.ins().store(flags(), v, addr, 0);
        }
        Ok(())
    }

    /// A bit-for-bit reinterpretation between vector types.
    fn vbitcast(&mut self, to: Type, v: Value) -> Value {
        let f = MemFlagsData::new().with_endianness(cranelift_codegen::ir::Endianness::Little);
        self.b.ins().bitcast(to, f, v)
    }

    /// `i32x4` lanes holding float16 bits (zero-extended) → their exact `f32x4`
    /// values, as `lf_f16_to_f32` (`half`) gives them: normals and subnormals by
    /// shifting the exponent and mantissa into place and scaling by 2^112 (exact: the
    /// product is a float32 normal), ±inf as ±inf, a NaN with its payload and the
    /// quiet bit set.
    fn vf16_to_f32(&mut self, h: Value) -> Value {
        use cranelift_codegen::ir::types::{F32X4, I32X4};
        let c = |l: &mut Self, x: i64| {
            let s = l.iconst(I32, x);
            l.b.ins().splat(I32X4, s)
        };
        let (m8000, m7fff, m3ff) = (c(self, 0x8000), c(self, 0x7fff), c(self, 0x3ff));
        let (inf16, inf32, quiet) = (c(self, 0x7c00), c(self, 0x7f80_0000), c(self, 0x0040_0000));
        let zero = c(self, 0);
        let (n13, n16) = (self.iconst(I32, 13), self.iconst(I32, 16));
        let sign = self.b.ins().band(h, m8000);
        let sign = self.b.ins().ishl(sign, n16);
        let em = self.b.ins().band(h, m7fff);
        let sh = self.b.ins().ishl(em, n13);
        let f = self.vbitcast(F32X4, sh);
        let scale = self.b.ins().f32const(2f32.powi(112));
        let scale = self.b.ins().splat(F32X4, scale);
        let f = self.b.ins().fmul(f, scale);
        let finite = self.vbitcast(I32X4, f);
        let special = self
            .b
            .ins()
            .icmp(IntCC::SignedGreaterThanOrEqual, em, inf16);
        let man = self.b.ins().band(h, m3ff);
        let nan = self.b.ins().icmp(IntCC::NotEqual, man, zero);
        let q = self.b.ins().band(nan, quiet);
        let sp = self.b.ins().bor(sh, inf32);
        let sp = self.b.ins().bor(sp, q);
        let r = self.b.ins().bitselect(special, sp, finite);
        let r = self.b.ins().bor(r, sign);
        self.vbitcast(F32X4, r)
    }

    /// A vector mask (from a compare) as the operand type, for `bitselect`.
    fn vmask(&mut self, m: Value, vt: Type) -> Value {
        if vt.lane_type().is_float() {
            self.vbitcast(vt, m)
        } else {
            m
        }
    }

    fn vunary(&mut self, op: UnaryOp, v: Value, vt: Type) -> Value {
        use UnaryOp::*;
        let float = vt.lane_type().is_float();
        match op {
            Neg if float => self.b.ins().fneg(v),
            Neg => self.b.ins().ineg(v),
            Abs if float => self.b.ins().fabs(v),
            Abs => self.b.ins().iabs(v),
            Sqrt => self.b.ins().sqrt(v),
            Floor => self.b.ins().floor(v),
            Ceil => self.b.ins().ceil(v),
            Trunc => self.b.ins().trunc(v),
            Round => self.b.ins().nearest(v),
            Square if float => self.b.ins().fmul(v, v),
            Square => self.b.ins().imul(v, v),
            BitwiseNot => self.b.ins().bnot(v),
            Relu => {
                let z = self.zero(if vt.lane_type() == F64 {
                    Rep::F64
                } else {
                    Rep::F32
                });
                let z = self.b.ins().splat(vt, z);
                let lt = self.b.ins().fcmp(FloatCC::LessThan, v, z);
                let m = self.vmask(lt, vt);
                self.b.ins().bitselect(m, z, v)
            }
            _ if float && super::vmath::has_unary(op) => {
                let fma = super::vmath::isa_has_fma(self.module);
                super::vmath::emit_unary(&mut self.b, fma, op, v, vt)
            }
            _ => unreachable!("vector_type admits only the ops above"),
        }
    }

    /// A parameterised activation on float vectors (see [`vector_param_ok`]).
    fn vparam(&mut self, op: UnaryParamOp, v: Value, vt: Type) -> Value {
        let fma = super::vmath::isa_has_fma(self.module);
        super::vmath::emit_param(&mut self.b, fma, op, v, vt)
    }

    fn vbinary(&mut self, op: BinaryOp, x: Value, y: Value, vt: Type) -> Value {
        use BinaryOp::*;
        let float = vt.lane_type().is_float();
        if let Some(v) = self.contract(op, x, y) {
            return v;
        }
        match op {
            Add if float => self.b.ins().fadd(x, y),
            Sub if float => self.b.ins().fsub(x, y),
            Mul if float => self.b.ins().fmul(x, y),
            Div => self.b.ins().fdiv(x, y),
            Add => self.b.ins().iadd(x, y),
            Sub => self.b.ins().isub(x, y),
            Mul => self.b.ins().imul(x, y),
            Maximum | Minimum if float => {
                // As the scalar code: a < b ? b : a (max), b < a ? b : a (min), NaN
                // if either is NaN.
                let lt = if op == Maximum {
                    self.b.ins().fcmp(FloatCC::LessThan, x, y)
                } else {
                    self.b.ins().fcmp(FloatCC::LessThan, y, x)
                };
                let lt = self.vmask(lt, vt);
                let m = self.b.ins().bitselect(lt, y, x);
                let uno = self.b.ins().fcmp(FloatCC::Unordered, x, y);
                let uno = self.vmask(uno, vt);
                let nan = self.fconst(
                    if vt.lane_type() == F64 {
                        Rep::F64
                    } else {
                        Rep::F32
                    },
                    f64::NAN,
                );
                let nan = self.b.ins().splat(vt, nan);
                self.b.ins().bitselect(uno, nan, m)
            }
            Maximum => self.b.ins().smax(x, y),
            Minimum => self.b.ins().smin(x, y),
            BitwiseAnd => self.b.ins().band(x, y),
            BitwiseOr => self.b.ins().bor(x, y),
            BitwiseXor => self.b.ins().bxor(x, y),
            _ => unreachable!("vector_type admits only the ops above"),
        }
    }

    /// Fast math's contraction of a float product into the add or subtract
    /// that takes it, `a*b + c` → `fma(a, b, c)` (one rounding instead of
    /// two, as C compilers' `-ffp-contract=fast`; a W1 chain has two): the
    /// `fma` of `x + y` or `x - y` where `x` or `y` is an `fmul`'s result, for
    /// float32/float64 values (float16/bfloat16 products are rounded before
    /// they are added, so they are never an `fmul`'s result here). `None` in
    /// exact math, on hosts without FMA (where `fma` would be a libm call), and
    /// for other ops; the scalar and vector code contract alike, and so do the
    /// vector sums of `vreduce` (`acc + a*b`, a layernorm's variance, a dot).
    pub(super) fn contract(&mut self, op: BinaryOp, x: Value, y: Value) -> Option<Value> {
        use cranelift_codegen::ir::{Opcode, ValueDef};
        if self.math != MathMode::Fast
            || !matches!(op, BinaryOp::Add | BinaryOp::Sub)
            || !super::vmath::isa_has_fma(self.module)
        {
            return None;
        }
        let dfg = &self.b.func.dfg;
        let product = |v: Value| match dfg.value_def(v) {
            ValueDef::Result(inst, 0) if dfg.insts[inst].opcode() == Opcode::Fmul => {
                let args = dfg.inst_args(inst);
                Some((args[0], args[1]))
            }
            _ => None,
        };
        match (product(x), product(y), op) {
            // a*b ± y
            (Some((a, b)), _, BinaryOp::Add) => Some(self.b.ins().fma(a, b, y)),
            (Some((a, b)), _, _) => {
                let ny = self.b.ins().fneg(y);
                Some(self.b.ins().fma(a, b, ny))
            }
            // x + a*b, x - a*b = x + (-a)*b
            (None, Some((a, b)), BinaryOp::Add) => Some(self.b.ins().fma(a, b, x)),
            (None, Some((a, b)), _) => {
                let na = self.b.ins().fneg(a);
                Some(self.b.ins().fma(na, b, x))
            }
            (None, None, _) => None,
        }
    }

    /// One parallel point with all its phases.
    fn point(&mut self) -> R<()> {
        let nd = self.k.dims.len();
        let rdims: Vec<usize> = self.k.reduce_dims().to_vec();
        let total: usize = rdims.iter().product();
        self.stage(Stage::Outer(0))?;
        for ph in 0..self.k.phases() {
            self.init_accs(ph)?;
            self.init_scans(ph)?;
            if total > 0 {
                // Fast mode: whole vectors first where the phase allows it, then
                // the scalar loop below does the rest from `start`.
                let start = self.vector_phase(ph)?;
                let zero = self.iconst(I64, 0);
                for d in self.k.n_parallel..nd {
                    self.b.def_var(self.idx[d], zero);
                }
                if start > 0 {
                    // (one reduction dim: `vector_phase` requires it)
                    let s = self.iconst(I64, start);
                    self.b.def_var(self.idx[nd - 1], s);
                    self.b.def_var(self.pos, s);
                } else {
                    self.b.def_var(self.pos, zero);
                }
                let head = self.b.create_block();
                let bodyb = self.b.create_block();
                let after = self.b.create_block();
                self.b.ins().jump(head, &[]);
                self.b.switch_to_block(head);
                let pv = self.b.use_var(self.pos);
                let more = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::SignedLessThan, pv, total as i64);
                self.b.ins().brif(more, bodyb, &[], after, &[]);
                self.b.switch_to_block(bodyb);
                self.stage(Stage::Inner(ph))?;
                self.update_accs(ph)?;
                self.odometer(self.k.n_parallel..nd);
                let pv = self.b.use_var(self.pos);
                let pn = self.b.ins().iadd_imm_s(pv, 1);
                self.b.def_var(self.pos, pn);
                self.b.ins().jump(head, &[]);
                self.b.switch_to_block(after);
            }
            // Inner values die with the loop.
            for (i, e) in self.k.exprs.iter().enumerate() {
                if e.stage == Stage::Inner(ph) {
                    self.vals[i] = None;
                }
            }
            self.stage(Stage::Outer(ph + 1))?;
        }
        // Outer stages past the last phase (nothing reduces there, but the verifier
        // allows them) still run, in order.
        let last = self
            .k
            .exprs
            .iter()
            .filter_map(|e| match e.stage {
                Stage::Outer(k) => Some(k),
                Stage::Inner(_) => None,
            })
            .max()
            .unwrap_or(0);
        for k in self.k.phases() + 1..=last {
            self.stage(Stage::Outer(k))?;
        }
        for v in self.vals.iter_mut() {
            *v = None;
        }
        Ok(())
    }

    /// Evaluates the needed expressions of `stage` and does its stores.
    fn stage(&mut self, stage: Stage) -> R<()> {
        for i in 0..self.k.exprs.len() {
            if self.k.exprs[i].stage == stage && self.needed[i] {
                let v = self.expr(i)?;
                self.vals[i] = Some(v);
            }
        }
        let stores: Vec<StoreOp> = self
            .k
            .stores
            .iter()
            .filter(|s| self.k.exprs[s.value.0 as usize].stage == stage)
            .cloned()
            .collect();
        for s in stores {
            let v = self.val(s.value);
            let dt = self.k.params[s.param].dtype;
            let addr = self.address(s.param, &s.index.offset, &s.index.strides, None)?;
            let stored = self.storage_bits(v, dt)?;
            self.b.ins().store(flags(), stored, addr, 0);
        }
        Ok(())
    }

    fn val(&self, id: ExprId) -> Value {
        self.vals[id.0 as usize].expect("operands are evaluated before their users")
    }

    fn dtype(&self, id: ExprId) -> DType {
        self.k.exprs[id.0 as usize].dtype
    }

    /// `base + (offset + Σ strides·i_d + extra) · size`
    fn address(
        &mut self,
        param: usize,
        offset: &i64,
        strides: &[i64],
        extra: Option<Value>,
    ) -> R<Value> {
        let mut ix = self.iconst(I64, *offset);
        for (d, &s) in strides.iter().enumerate() {
            if s != 0 {
                let v = self.b.use_var(self.idx[d]);
                let t = self.b.ins().imul_imm_s(v, s);
                ix = self.b.ins().iadd(ix, t);
            }
        }
        if let Some(e) = extra {
            ix = self.b.ins().iadd(ix, e);
        }
        let size = self.k.params[param].dtype.size_in_bytes() as i64;
        let off = self.b.ins().imul_imm_s(ix, size);
        Ok(self.b.ins().iadd(self.bases[param], off))
    }

    /// [`Lower::address`] of the point `shift` points along the last dim.
    fn shifted_address(
        &mut self,
        param: usize,
        offset: &i64,
        strides: &[i64],
        shift: i64,
    ) -> R<Value> {
        let last = strides[self.k.n_parallel - 1];
        let extra = (shift != 0).then(|| self.iconst(I64, shift * last));
        self.address(param, offset, strides, extra)
    }

    /// Calls runtime function `name` (declared on first use).
    fn call(&mut self, name: &str, args: &[Value], ret: Type) -> R<Value> {
        let f = match self.imports.get(name) {
            Some(f) => *f,
            None => {
                let mut sig = self.module.make_signature();
                for &a in args {
                    sig.params
                        .push(AbiParam::new(self.b.func.dfg.value_type(a)));
                }
                sig.returns.push(AbiParam::new(ret));
                let id = self
                    .module
                    .declare_function(name, Linkage::Import, &sig)
                    .map_err(|e| CodegenError::Backend(format!("import {name}: {e}")))?;
                let f = self.module.declare_func_in_func(id, self.b.func);
                self.imports.insert(name.to_string(), f);
                self.names.push(name.to_string());
                f
            }
        };
        let inst = self.b.ins().call(f, args);
        Ok(self.b.inst_results(inst)[0])
    }

    /// Sets the status (code and details) unless one is already set; emitted in a
    /// cold block the caller branches to, ending with a jump to `cont`. The code is
    /// claimed with a compare-and-swap, so that of threads sharing one status block
    /// exactly one writes its details.
    fn set_status(
        &mut self,
        code: i64,
        details: [Value; 3],
        cont: cranelift_codegen::ir::Block,
        args: &[BlockArg],
    ) {
        let write = self.b.create_block();
        self.b.set_cold_block(write);
        let zero = self.iconst(I64, 0);
        let c = self.iconst(I64, code);
        // The status block is an aligned `[u64; STATUS_SLOTS]`.
        let old = self
            .b
            .ins()
            .atomic_cas(MemFlagsData::trusted(), self.status, zero, c);
        self.b.ins().brif(old, cont, args, write, &[]);
        self.b.switch_to_block(write);
        for (slot, d) in details.into_iter().enumerate() {
            self.b
                .ins()
                .store(flags(), d, self.status, 8 * (slot as i32 + 1));
        }
        self.b.ins().jump(cont, args);
    }

    /// Rounds an f32 register to `dt` when `dt` is float16/bfloat16.
    fn round(&mut self, v: Value, dt: DType) -> R<Value> {
        match dt {
            DType::F16 => self.call("lf_round_f16", &[v], F32),
            DType::BF16 => Ok(self.round_bf16(v)),
            _ => Ok(v),
        }
    }

    /// `half::bf16::from_f32(v).to_f32()` inline: round to nearest even on the
    /// upper 16 bits; a NaN keeps its upper bits and gets the quiet bit.
    fn round_bf16(&mut self, v: Value) -> Value {
        let x = self.b.ins().bitcast(I32, MemFlagsData::new(), v);
        let abs = self.b.ins().band_imm_s(x, 0x7FFF_FFFF);
        let nan = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThan, abs, 0x7F80_0000);
        let hi = self.b.ins().ushr_imm_s(x, 16);
        let quiet = self.b.ins().bor_imm_s(hi, 0x40);
        let half = self.b.ins().band_imm_s(x, 0x8000);
        let half = self.b.ins().icmp_imm_s(IntCC::NotEqual, half, 0);
        // Above the tie, or a tie with an odd upper part: round up.
        let rest = self.b.ins().band_imm_s(x, 3 * 0x8000 - 1);
        let rest = self.b.ins().icmp_imm_s(IntCC::NotEqual, rest, 0);
        let up = self.b.ins().band(half, rest);
        let up = self.b.ins().uextend(I32, up);
        let r = self.b.ins().iadd(hi, up);
        let r = self.b.ins().select(nan, quiet, r);
        let bits = self.b.ins().ishl_imm_s(r, 16);
        self.b.ins().bitcast(F32, MemFlagsData::new(), bits)
    }

    fn expr(&mut self, i: usize) -> R<Value> {
        let e = self.k.exprs[i].clone();
        let dt = e.dtype;
        let r = rep(dt)?;
        match e.expr {
            Expr::Load {
                param,
                index,
                dynamic,
            } => {
                let Some(d) = dynamic else {
                    let addr = self.address(param, &index.offset, &index.strides, None)?;
                    return self.load(addr, dt);
                };
                let vdt = self.dtype(d.value);
                let v = self.val(d.value);
                let w = self.widen_int(v, vdt)?;
                // Only signed values wrap from the end (a uint64 above 2^63 is
                // large, not negative), and only where the op wraps; unwrapped, a
                // negative value is huge as unsigned and fails the check below.
                let wrapped = if !d.wrap || vdt.is_unsigned() || vdt == DType::Bool {
                    w
                } else {
                    let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, w, 0);
                    let plus = self.b.ins().iadd_imm_s(w, d.size as i64);
                    self.b.ins().select(neg, plus, w)
                };
                let ok = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedLessThan, wrapped, d.size as i64);
                let good = self.b.create_block();
                let bad = self.b.create_block();
                let merge = self.b.create_block();
                let out = self.b.append_block_param(merge, reg(r));
                self.b.ins().brif(ok, good, &[], bad, &[]);
                self.b.switch_to_block(good);
                let extra = self.b.ins().imul_imm_s(wrapped, d.stride);
                let addr = self.address(param, &index.offset, &index.strides, Some(extra))?;
                let x = self.load(addr, dt)?;
                self.b.ins().jump(merge, &[BlockArg::Value(x)]);
                self.b.switch_to_block(bad);
                self.b.set_cold_block(bad);
                let z = self.zero(r);
                let size = self.iconst(I64, d.size as i64);
                // slot 3: which load failed, so that the executor words its op's error
                let id = self.iconst(I64, i as i64);
                self.set_status(
                    Status::IndexOutOfRange as i64,
                    [w, size, id],
                    merge,
                    &[BlockArg::Value(z)],
                );
                self.b.switch_to_block(merge);
                Ok(out)
            }
            Expr::Const(c) => self.constant(c, dt),
            Expr::LoopIndex { dim } => {
                let v = self.b.use_var(self.idx[dim]);
                self.index_value(v, r)
            }
            Expr::Unary { op, x } => {
                let xdt = self.dtype(x);
                let v = self.val(x);
                self.unary(op, v, xdt)
            }
            Expr::UnaryParam { op, x } => {
                let v = self.val(x);
                self.unary_param(op, v, dt)
            }
            Expr::Binary { op, a, b } => {
                let adt = self.dtype(a);
                let (x, y) = (self.val(a), self.val(b));
                self.binary(op, x, y, adt)
            }
            Expr::Where { cond, a, b } => {
                let c = self.val(cond);
                let (x, y) = (self.val(a), self.val(b));
                Ok(self.b.ins().select(c, x, y))
            }
            Expr::Cast { x } => {
                let from = self.dtype(x);
                let v = self.val(x);
                self.cast(v, from, dt)
            }
            Expr::Reduce { .. } => self.finish_acc(i),
            Expr::Scan { op, x } => self.scan_step(i, op, x),
        }
    }

    fn zero(&mut self, r: Rep) -> Value {
        match r {
            Rep::F32 => self.b.ins().f32const(0.0),
            Rep::F64 => self.b.ins().f64const(0.0),
            other => self.iconst(reg(other), 0),
        }
    }

    fn load(&mut self, addr: Value, dt: DType) -> R<Value> {
        Ok(match dt {
            DType::F16 => {
                let bits = self.b.ins().load(I16, flags(), addr, 0);
                let w = self.b.ins().uextend(I32, bits);
                self.call("lf_f16_to_f32", &[w], F32)?
            }
            // bfloat16 is the upper half of a float32.
            DType::BF16 => {
                let bits = self.b.ins().load(I16, flags(), addr, 0);
                let w = self.b.ins().uextend(I32, bits);
                let w = self.b.ins().ishl_imm_s(w, 16);
                self.b.ins().bitcast(F32, MemFlagsData::new(), w)
            }
            _ => self.b.ins().load(reg(rep(dt)?), flags(), addr, 0),
        })
    }

    /// The register value of `dt` as stored bits.
    fn storage_bits(&mut self, v: Value, dt: DType) -> R<Value> {
        Ok(match dt {
            DType::F16 => {
                let bits = self.call("lf_f32_to_f16", &[v], I32)?;
                self.b.ins().ireduce(I16, bits)
            }
            // Values of bfloat16 exprs are already rounded: their low half is zero.
            DType::BF16 => {
                let x = self.b.ins().bitcast(I32, MemFlagsData::new(), v);
                let hi = self.b.ins().ushr_imm_s(x, 16);
                self.b.ins().ireduce(I16, hi)
            }
            _ => v,
        })
    }

    fn constant(&mut self, c: Const, dt: DType) -> R<Value> {
        let r = rep(dt)?;
        Ok(match (r, c) {
            (Rep::Bool, Const::Bool(b)) => self.iconst(I8, b as i64),
            (Rep::Int { ty, .. }, Const::Int(i)) => self.iconst(ty, i as i64),
            (Rep::F32, Const::Float(f)) => self.b.ins().f32const(f as f32),
            (Rep::F64, Const::Float(f)) => self.b.ins().f64const(f),
            _ => return Err(CodegenError::Malformed(format!("constant {c} of {dt}"))),
        })
    }

    /// An i64 as a value of representation `r` (loop indices).
    fn index_value(&mut self, v: Value, r: Rep) -> R<Value> {
        Ok(match r {
            Rep::Int { ty: I64, .. } => v,
            Rep::Int { ty, .. } => self.b.ins().ireduce(ty, v),
            _ => return Err(CodegenError::Malformed("a non-integer loop index".into())),
        })
    }

    /// An integer (or bool) value widened to i64 by its signedness.
    fn widen_int(&mut self, v: Value, dt: DType) -> R<Value> {
        Ok(match rep(dt)? {
            Rep::Int { ty: I64, .. } => v,
            Rep::Int { signed: true, .. } => self.b.ins().sextend(I64, v),
            Rep::Int { signed: false, .. } | Rep::Bool => self.b.ins().uextend(I64, v),
            _ => return Err(unsupported("an integer view", dt)),
        })
    }

    fn bool_of(&mut self, c: Value) -> Value {
        // icmp/fcmp already give i8 0/1.
        c
    }

    fn ftruthy(&mut self, v: Value, r: Rep) -> Value {
        let z = self.zero(r);
        self.b.ins().fcmp(FloatCC::NotEqual, v, z)
    }

    fn fconst(&mut self, r: Rep, x: f64) -> Value {
        if r == Rep::F64 {
            self.b.ins().f64const(x)
        } else {
            self.b.ins().f32const(x as f32)
        }
    }

    fn unary(&mut self, op: UnaryOp, v: Value, dt: DType) -> R<Value> {
        use UnaryOp::*;
        let r = rep(dt)?;
        let name = Op::Unary(op).name();
        match r {
            Rep::Bool => Ok(match op {
                Sign | Sgn | Relu | Floor | Ceil | Round | Trunc => v,
                LogicalNot | BitwiseNot => self.b.ins().bxor_imm_s(v, 1),
                IsNan | IsInf | IsPosInf | IsNegInf | Signbit => self.iconst(I8, 0),
                IsFinite | IsReal => self.iconst(I8, 1),
                _ => return Err(unsupported(name, dt)),
            }),
            Rep::Int { ty, signed } => Ok(match op {
                Neg => self.b.ins().ineg(v),
                Abs if signed => {
                    let n = self.b.ins().ineg(v);
                    let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0);
                    self.b.ins().select(neg, n, v)
                }
                Abs => v,
                Sign | Sgn => {
                    let one = self.iconst(ty, 1);
                    let zero = self.iconst(ty, 0);
                    let pos = self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0);
                    let s = self.b.ins().select(pos, one, zero);
                    if signed {
                        let m1 = self.iconst(ty, -1);
                        let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0);
                        self.b.ins().select(neg, m1, s)
                    } else {
                        s
                    }
                }
                Relu if signed => {
                    let zero = self.iconst(ty, 0);
                    let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0);
                    self.b.ins().select(neg, zero, v)
                }
                Relu | Floor | Ceil | Round | Trunc => v,
                LogicalNot => self.b.ins().icmp_imm_s(IntCC::Equal, v, 0),
                BitwiseNot => self.b.ins().bnot(v),
                Square => self.b.ins().imul(v, v),
                IsNan | IsInf | IsPosInf | IsNegInf => self.iconst(I8, 0),
                IsFinite | IsReal => self.iconst(I8, 1),
                Signbit if signed => self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0),
                Signbit => self.iconst(I8, 0),
                _ => return Err(unsupported(name, dt)),
            }),
            Rep::F32 | Rep::F64 => {
                let fty = reg(r);
                let out = match op {
                    Neg => self.b.ins().fneg(v),
                    Abs => self.b.ins().fabs(v),
                    Sqrt => self.b.ins().sqrt(v),
                    Rsqrt => {
                        let s = self.b.ins().sqrt(v);
                        let one = self.fconst(r, 1.0);
                        self.b.ins().fdiv(one, s)
                    }
                    Reciprocal => {
                        let one = self.fconst(r, 1.0);
                        self.b.ins().fdiv(one, v)
                    }
                    Floor => self.b.ins().floor(v),
                    Ceil => self.b.ins().ceil(v),
                    Trunc => self.b.ins().trunc(v),
                    Round => self.b.ins().nearest(v),
                    Frac => {
                        let t = self.b.ins().trunc(v);
                        self.b.ins().fsub(v, t)
                    }
                    Square => self.b.ins().fmul(v, v),
                    Relu => {
                        let z = self.zero(r);
                        let lt = self.b.ins().fcmp(FloatCC::LessThan, v, z);
                        self.b.ins().select(lt, z, v)
                    }
                    Sign | Sgn => {
                        let z = self.zero(r);
                        let one = self.fconst(r, 1.0);
                        let m1 = self.fconst(r, -1.0);
                        let lt = self.b.ins().fcmp(FloatCC::LessThan, v, z);
                        let gt = self.b.ins().fcmp(FloatCC::GreaterThan, v, z);
                        let s = self.b.ins().select(lt, m1, z);
                        self.b.ins().select(gt, one, s)
                    }
                    LogicalNot => {
                        let z = self.zero(r);
                        return Ok(self.b.ins().fcmp(FloatCC::Equal, v, z));
                    }
                    IsNan => return Ok(self.b.ins().fcmp(FloatCC::Unordered, v, v)),
                    IsInf | IsFinite => {
                        let a = self.b.ins().fabs(v);
                        let inf = self.fconst(r, f64::INFINITY);
                        let cc = if op == IsInf {
                            FloatCC::Equal
                        } else {
                            FloatCC::LessThan
                        };
                        return Ok(self.b.ins().fcmp(cc, a, inf));
                    }
                    IsPosInf | IsNegInf => {
                        let x = if op == IsPosInf {
                            f64::INFINITY
                        } else {
                            f64::NEG_INFINITY
                        };
                        let inf = self.fconst(r, x);
                        return Ok(self.b.ins().fcmp(FloatCC::Equal, v, inf));
                    }
                    IsReal => return Ok(self.iconst(I8, 1)),
                    Signbit => {
                        let ity = if r == Rep::F64 { I64 } else { I32 };
                        let bits = self.b.ins().bitcast(ity, MemFlagsData::new(), v);
                        return Ok(self.b.ins().icmp_imm_s(IntCC::SignedLessThan, bits, 0));
                    }
                    BitwiseNot => return Err(unsupported(name, dt)),
                    _ if self.math == MathMode::Fast && super::vmath::has_unary(op) => {
                        // The vector code on a splat, lane 0: the same values as the
                        // vector body (tails, and kernels that are not vectorized).
                        let vt = super::vmath::vector_of(fty);
                        let s = self.b.ins().splat(vt, v);
                        let fma = super::vmath::isa_has_fma(self.module);
                        let o = super::vmath::emit_unary(&mut self.b, fma, op, s, vt);
                        self.b.ins().extractlane(o, 0)
                    }
                    Exp | Log | Sin | Cos | Tanh | Sigmoid | Exp2 | Expm1 | Log2 | Log10
                    | Log1p | Tan | Asin | Acos | Atan | Sinh | Cosh | Asinh | Acosh | Atanh
                    | Erf | Erfc | Erfinv | Silu | Mish | Hardsigmoid | Hardswish => {
                        let sym = format!("lf_{name}_{}", fsuffix(r));
                        self.call(&sym, &[v], fty)?
                    }
                    // complex values never enter loop kernels
                    RealPart | ImagPart | Conj => return Err(unsupported(name, dt)),
                };
                self.round(out, dt)
            }
            Rep::F8 => Err(unsupported(name, dt)),
        }
    }

    fn unary_param(&mut self, op: UnaryParamOp, v: Value, dt: DType) -> R<Value> {
        let r = rep(dt)?;
        match (r, op) {
            (Rep::Bool | Rep::Int { .. }, UnaryParamOp::NanToNum { .. }) => Ok(v),
            (Rep::Bool | Rep::Int { .. }, UnaryParamOp::Hardtanh { min_val, max_val }) => {
                let (lo, hi) = (min_val as i128, max_val as i128);
                let (tmin, tmax) = if dt == DType::Bool {
                    (0, 1)
                } else {
                    dt.integer_range().unwrap_or((0, 0))
                };
                let signed = matches!(r, Rep::Int { signed: true, .. });
                let ty = reg(r);
                // The interpreter: clamp in i128, keep `a` where the result does
                // not fit the dtype.
                if lo > hi {
                    return Ok(if (tmin..=tmax).contains(&hi) {
                        self.iconst(ty, hi as i64)
                    } else {
                        v
                    });
                }
                if lo > tmax || hi < tmin {
                    return Ok(v);
                }
                let (lt, gt) = if signed {
                    (IntCC::SignedLessThan, IntCC::SignedGreaterThan)
                } else {
                    (IntCC::UnsignedLessThan, IntCC::UnsignedGreaterThan)
                };
                let mut x = v;
                if lo > tmin {
                    let c = self.iconst(ty, lo as i64);
                    let below = self.b.ins().icmp(lt, x, c);
                    x = self.b.ins().select(below, c, x);
                }
                if hi < tmax {
                    let c = self.iconst(ty, hi as i64);
                    let above = self.b.ins().icmp(gt, x, c);
                    x = self.b.ins().select(above, c, x);
                }
                Ok(x)
            }
            (
                Rep::F32 | Rep::F64,
                UnaryParamOp::NanToNum {
                    nan,
                    posinf,
                    neginf,
                },
            ) => {
                let sym = format!("lf_nan_to_num_{}", dt.as_str());
                let (a, b, c) = (
                    self.b.ins().f64const(nan),
                    self.b.ins().f64const(posinf),
                    self.b.ins().f64const(neginf),
                );
                self.call(&sym, &[v, a, b, c], reg(r))
            }
            (Rep::F32 | Rep::F64, _) if vector_param_ok(op, true, self.math) => {
                // The vector code on a splat, lane 0: tails get the body's values.
                let vt = super::vmath::vector_of(reg(r));
                let s = self.b.ins().splat(vt, v);
                let fma = super::vmath::isa_has_fma(self.module);
                let o = super::vmath::emit_param(&mut self.b, fma, op, s, vt);
                let out = self.b.ins().extractlane(o, 0);
                self.round(out, dt)
            }
            (Rep::F32 | Rep::F64, _) => {
                let (kind, p) = param_code(op);
                let kind = self.iconst(I32, kind);
                let mut args = vec![kind];
                for x in p {
                    args.push(self.b.ins().f64const(x));
                }
                args.push(v);
                let sym = format!("lf_unary_param_{}", fsuffix(r));
                let out = self.call(&sym, &args, reg(r))?;
                self.round(out, dt)
            }
            _ => Err(unsupported(op.name(), dt)),
        }
    }

    fn binary(&mut self, op: BinaryOp, x: Value, y: Value, dt: DType) -> R<Value> {
        use BinaryOp::*;
        let r = rep(dt)?;
        let name = Op::Binary(op).name();
        match r {
            Rep::Bool => Ok(match op {
                Add | Maximum | LogicalOr | BitwiseOr | Fmax => self.b.ins().bor(x, y),
                Mul | Minimum | LogicalAnd | BitwiseAnd | Fmin => self.b.ins().band(x, y),
                Eq => self.b.ins().icmp(IntCC::Equal, x, y),
                Ne | LogicalXor | BitwiseXor => self.b.ins().bxor(x, y),
                Lt => self.b.ins().icmp(IntCC::UnsignedLessThan, x, y),
                Le => self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, x, y),
                Gt => self.b.ins().icmp(IntCC::UnsignedGreaterThan, x, y),
                Ge => self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, x, y),
                _ => return Err(unsupported(name, dt)),
            }),
            Rep::Int { ty, signed } => {
                let cc = |s: IntCC, u: IntCC| if signed { s } else { u };
                Ok(match op {
                    Add => self.b.ins().iadd(x, y),
                    Sub => self.b.ins().isub(x, y),
                    Mul => self.b.ins().imul(x, y),
                    DivFloor | DivTrunc | Remainder | Fmod => self.int_div(op, x, y, ty, signed),
                    Maximum | Fmax => {
                        if signed {
                            self.b.ins().smax(x, y)
                        } else {
                            self.b.ins().umax(x, y)
                        }
                    }
                    Minimum | Fmin => {
                        if signed {
                            self.b.ins().smin(x, y)
                        } else {
                            self.b.ins().umin(x, y)
                        }
                    }
                    Eq => self.b.ins().icmp(IntCC::Equal, x, y),
                    Ne => self.b.ins().icmp(IntCC::NotEqual, x, y),
                    Lt => {
                        self.b
                            .ins()
                            .icmp(cc(IntCC::SignedLessThan, IntCC::UnsignedLessThan), x, y)
                    }
                    Le => self.b.ins().icmp(
                        cc(IntCC::SignedLessThanOrEqual, IntCC::UnsignedLessThanOrEqual),
                        x,
                        y,
                    ),
                    Gt => self.b.ins().icmp(
                        cc(IntCC::SignedGreaterThan, IntCC::UnsignedGreaterThan),
                        x,
                        y,
                    ),
                    Ge => self.b.ins().icmp(
                        cc(
                            IntCC::SignedGreaterThanOrEqual,
                            IntCC::UnsignedGreaterThanOrEqual,
                        ),
                        x,
                        y,
                    ),
                    LogicalAnd | LogicalOr | LogicalXor => {
                        let a = self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0);
                        let b = self.b.ins().icmp_imm_s(IntCC::NotEqual, y, 0);
                        match op {
                            LogicalAnd => self.b.ins().band(a, b),
                            LogicalOr => self.b.ins().bor(a, b),
                            _ => self.b.ins().bxor(a, b),
                        }
                    }
                    BitwiseAnd => self.b.ins().band(x, y),
                    BitwiseOr => self.b.ins().bor(x, y),
                    BitwiseXor => self.b.ins().bxor(x, y),
                    Pow | BitwiseLeftShift | BitwiseRightShift | Gcd | Lcm => {
                        let sym = format!("lf_{name}_{}", dt.as_str());
                        let a = self.widen_int(x, dt)?;
                        let b = self.widen_int(y, dt)?;
                        let out = self.call(&sym, &[a, b], I64)?;
                        if ty == I64 {
                            out
                        } else {
                            self.b.ins().ireduce(ty, out)
                        }
                    }
                    _ => return Err(unsupported(name, dt)),
                })
            }
            Rep::F32 | Rep::F64 => {
                let fty = reg(r);
                if matches!(dt, DType::F32 | DType::F64) {
                    if let Some(v) = self.contract(op, x, y) {
                        return Ok(v);
                    }
                }
                let out = match op {
                    Add => self.b.ins().fadd(x, y),
                    Sub => self.b.ins().fsub(x, y),
                    Mul => self.b.ins().fmul(x, y),
                    Div => self.b.ins().fdiv(x, y),
                    DivTrunc => {
                        let q = self.b.ins().fdiv(x, y);
                        self.b.ins().trunc(q)
                    }
                    Maximum | Minimum => {
                        // a < b ? b : a (max) or b < a ? b : a (min); NaN if either is.
                        let lt = if op == Maximum {
                            self.b.ins().fcmp(FloatCC::LessThan, x, y)
                        } else {
                            self.b.ins().fcmp(FloatCC::LessThan, y, x)
                        };
                        let m = self.b.ins().select(lt, y, x);
                        let uno = self.b.ins().fcmp(FloatCC::Unordered, x, y);
                        let nan = self.fconst(r, f64::NAN);
                        self.b.ins().select(uno, nan, m)
                    }
                    Eq | Ne | Lt | Le | Gt | Ge => {
                        let cc = match op {
                            Eq => FloatCC::Equal,
                            Ne => FloatCC::NotEqual,
                            Lt => FloatCC::LessThan,
                            Le => FloatCC::LessThanOrEqual,
                            Gt => FloatCC::GreaterThan,
                            _ => FloatCC::GreaterThanOrEqual,
                        };
                        return Ok(self.b.ins().fcmp(cc, x, y));
                    }
                    LogicalAnd | LogicalOr | LogicalXor => {
                        let a = self.ftruthy(x, r);
                        let b = self.ftruthy(y, r);
                        let v = match op {
                            LogicalAnd => self.b.ins().band(a, b),
                            LogicalOr => self.b.ins().bor(a, b),
                            _ => self.b.ins().bxor(a, b),
                        };
                        return Ok(self.bool_of(v));
                    }
                    Nextafter => {
                        // On the stored type's bits: one function per dtype.
                        let sym = format!("lf_nextafter_{}", dt.as_str());
                        return self.call(&sym, &[x, y], fty);
                    }
                    DivFloor | Remainder | Fmod | Pow | Atan2 | Fmax | Fmin | Hypot | Copysign
                    | Logaddexp | Logaddexp2 | Xlogy => {
                        let sym = format!("lf_{name}_{}", fsuffix(r));
                        self.call(&sym, &[x, y], fty)?
                    }
                    _ => return Err(unsupported(name, dt)),
                };
                self.round(out, dt)
            }
            Rep::F8 => Err(unsupported(name, dt)),
        }
    }

    /// Integer division and remainder: a zero divisor sets status 1 in a cold block;
    /// `MIN / -1` divides by 1 instead (same wrapped result, no trap).
    fn int_div(&mut self, op: BinaryOp, x: Value, y: Value, ty: Type, signed: bool) -> Value {
        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
        let bad = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().brif(zero, bad, &[], cont, &[]);
        self.b.switch_to_block(bad);
        self.b.set_cold_block(bad);
        let z = self.iconst(I64, 0);
        self.set_status(Status::ZeroDivision as i64, [z, z, z], cont, &[]);
        self.b.switch_to_block(cont);
        let one = self.iconst(ty, 1);
        let mut unsafe_div = zero;
        if signed {
            let min = match ty {
                I8 => i8::MIN as i64,
                I16 => i16::MIN as i64,
                I32 => i32::MIN as i64,
                _ => i64::MIN,
            };
            let is_min = self.b.ins().icmp_imm_s(IntCC::Equal, x, min);
            let is_m1 = self.b.ins().icmp_imm_s(IntCC::Equal, y, -1);
            let both = self.b.ins().band(is_min, is_m1);
            unsafe_div = self.b.ins().bor(zero, both);
        }
        let d = self.b.ins().select(unsafe_div, one, y);
        if !signed {
            return match op {
                BinaryOp::DivFloor | BinaryOp::DivTrunc => self.b.ins().udiv(x, d),
                _ => self.b.ins().urem(x, d),
            };
        }
        let q = self.b.ins().sdiv(x, d);
        let rem = self.b.ins().srem(x, d);
        let xn = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
        let yn = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, y, 0);
        let rn = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, rem, 0);
        let rnz = self.b.ins().icmp_imm_s(IntCC::NotEqual, rem, 0);
        match op {
            BinaryOp::DivTrunc => q,
            BinaryOp::Fmod => rem,
            BinaryOp::DivFloor => {
                let differ = self.b.ins().bxor(xn, yn);
                let adj = self.b.ins().band(differ, rnz);
                let q1 = self.b.ins().iadd_imm_s(q, -1);
                self.b.ins().select(adj, q1, q)
            }
            _ => {
                let differ = self.b.ins().bxor(rn, yn);
                let adj = self.b.ins().band(differ, rnz);
                let r1 = self.b.ins().iadd(rem, y);
                self.b.ins().select(adj, r1, rem)
            }
        }
    }

    /// Converts `v` of `from` to `to` with the interpreter's cast rules.
    fn cast(&mut self, v: Value, from: DType, to: DType) -> R<Value> {
        let (fr, tr) = (rep(from)?, rep(to)?);
        if from == to {
            return Ok(v);
        }
        // Float8 sources decode exactly to f32 and convert on as a float.
        if fr == Rep::F8 {
            let code = self.b.ins().uextend(I32, v);
            let f = self.call(&format!("lf_decode_{}", from.as_str()), &[code], F32)?;
            return self.cast(f, DType::F32, to);
        }
        Ok(match tr {
            Rep::Bool => match fr {
                Rep::Bool => v,
                Rep::Int { .. } => self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0),
                _ => self.ftruthy(v, fr),
            },
            Rep::Int { ty, .. } => {
                let wide = match fr {
                    Rep::Bool | Rep::Int { .. } => self.widen_int(v, from)?,
                    Rep::F32 | Rep::F64 => {
                        if to == DType::U64 {
                            // Values at or above 2^63 take the unsigned path.
                            let big = self.fconst(fr, 9_223_372_036_854_775_808.0);
                            let ge = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, v, big);
                            let u = self.b.ins().fcvt_to_uint_sat(I64, v);
                            let s = self.b.ins().fcvt_to_sint_sat(I64, v);
                            self.b.ins().select(ge, u, s)
                        } else {
                            self.b.ins().fcvt_to_sint_sat(I64, v)
                        }
                    }
                    Rep::F8 => unreachable!("decoded above"),
                };
                if ty == I64 {
                    wide
                } else {
                    self.b.ins().ireduce(ty, wide)
                }
            }
            Rep::F32 | Rep::F64 | Rep::F8 => {
                let target = if tr == Rep::F64 { F64 } else { F32 };
                let f = match fr {
                    Rep::Bool | Rep::Int { signed: false, .. } => {
                        let w = self.widen_int(v, from)?;
                        self.b.ins().fcvt_from_uint(target, w)
                    }
                    Rep::Int { .. } => {
                        let w = self.widen_int(v, from)?;
                        self.b.ins().fcvt_from_sint(target, w)
                    }
                    Rep::F32 if target == F64 => self.b.ins().fpromote(F64, v),
                    Rep::F64 if target == F32 => self.b.ins().fdemote(F32, v),
                    _ => v,
                };
                if tr == Rep::F8 {
                    let code = self.call(&format!("lf_encode_{}", to.as_str()), &[f], I32)?;
                    self.b.ins().ireduce(I8, code)
                } else {
                    self.round(f, to)?
                }
            }
        })
    }

    /// The accumulation type of a reduction of `dt`.
    fn acc_type(op: Accum, dt: DType) -> R<Type> {
        Ok(match op {
            Accum::Sum if dt == DType::F32 => F64,
            _ => reg(rep(dt)?),
        })
    }

    fn init_accs(&mut self, phase: u32) -> R<()> {
        for (i, op, x) in self.k.phase_reductions(phase) {
            if !self.needed[i] {
                continue;
            }
            let xdt = self.dtype(x);
            let r = rep(xdt)?;
            if r == Rep::F8 || (matches!(op, Accum::Any | Accum::All) && r != Rep::Bool) {
                return Err(unsupported(format!("reduce {op:?}"), xdt));
            }
            let ty = Self::acc_type(op, xdt)?;
            let float = ty == F32 || ty == F64;
            let signed = matches!(r, Rep::Int { signed: true, .. });
            let init = match op {
                Accum::Sum | Accum::Any => 0.0,
                Accum::Prod | Accum::All => 1.0,
                Accum::Max => f64::NEG_INFINITY,
                Accum::Min => f64::INFINITY,
                Accum::ArgMax | Accum::ArgMin => 0.0,
            };
            let v = if float {
                if ty == F64 {
                    self.b.ins().f64const(init)
                } else {
                    self.b.ins().f32const(init as f32)
                }
            } else {
                let bits = ty.bits();
                let iv: i64 = match op {
                    Accum::Max if r == Rep::Bool => 0,
                    Accum::Min if r == Rep::Bool => 1,
                    Accum::Max if signed => -(1i64 << (bits - 1).min(63)),
                    Accum::Max => 0,
                    Accum::Min if signed => ((1u64 << (bits - 1)) - 1) as i64,
                    Accum::Min => -1,
                    _ => init as i64,
                };
                self.iconst(ty, iv)
            };
            let var = self.b.declare_var(ty);
            self.b.def_var(var, v);
            let idx = if matches!(op, Accum::ArgMax | Accum::ArgMin) {
                let iv = self.b.declare_var(I64);
                let z = self.iconst(I64, 0);
                self.b.def_var(iv, z);
                Some(iv)
            } else {
                None
            };
            // Compensation only where no per-step rounding intervenes (float32 and
            // float64 values; narrower floats reach reductions widened).
            let comp = (op == Accum::Sum
                && self.math == MathMode::Exact
                && matches!(xdt, DType::F32 | DType::F64))
            .then(|| {
                let c = self.b.declare_var(ty);
                self.b.def_var(c, v);
                c
            });
            self.accs.insert(i, Acc { op, var, idx, comp });
        }
        Ok(())
    }

    fn update_accs(&mut self, phase: u32) -> R<()> {
        let mut ids: Vec<usize> = self.accs.keys().copied().collect();
        ids.sort_unstable();
        for i in ids {
            if self.k.exprs[i].stage != Stage::Outer(phase + 1) {
                continue;
            }
            let Expr::Reduce { x, .. } = self.k.exprs[i].expr else {
                continue;
            };
            let xdt = self.dtype(x);
            let r = rep(xdt)?;
            let v = self.val(x);
            let (op, var, idx, comp) = {
                let a = &self.accs[&i];
                (a.op, a.var, a.idx, a.comp)
            };
            let acc = self.b.use_var(var);
            let float = matches!(r, Rep::F32 | Rep::F64);
            let signed = matches!(r, Rep::Int { signed: true, .. });
            let next = match op {
                Accum::Sum if r == Rep::Bool => self.b.ins().bor(acc, v),
                Accum::Prod if r == Rep::Bool => self.b.ins().band(acc, v),
                Accum::Any => self.b.ins().bor(acc, v),
                Accum::All => self.b.ins().band(acc, v),
                Accum::Sum if float => {
                    let w = if xdt == DType::F32 {
                        self.b.ins().fpromote(F64, v)
                    } else {
                        v
                    };
                    let s = self.b.ins().fadd(acc, w);
                    if let Some(c) = comp {
                        self.compensate(c, acc, w, s);
                    }
                    self.round(s, xdt)?
                }
                Accum::Prod if float => {
                    let p = self.b.ins().fmul(acc, v);
                    self.round(p, xdt)?
                }
                Accum::Sum => self.b.ins().iadd(acc, v),
                Accum::Prod => self.b.ins().imul(acc, v),
                Accum::Max | Accum::Min if float => self.binary(
                    if op == Accum::Max {
                        BinaryOp::Maximum
                    } else {
                        BinaryOp::Minimum
                    },
                    acc,
                    v,
                    xdt,
                )?,
                Accum::Max if r == Rep::Bool => self.b.ins().bor(acc, v),
                Accum::Min if r == Rep::Bool => self.b.ins().band(acc, v),
                Accum::Max if signed => self.b.ins().smax(acc, v),
                Accum::Max => self.b.ins().umax(acc, v),
                Accum::Min if signed => self.b.ins().smin(acc, v),
                Accum::Min => self.b.ins().umin(acc, v),
                Accum::ArgMax | Accum::ArgMin => {
                    // take = first || (!nan(best) && (nan(x) || x better than best))
                    let pos = self.b.use_var(self.pos);
                    let first = self.b.ins().icmp_imm_s(IntCC::Equal, pos, 0);
                    let better = if float {
                        let cc = if op == Accum::ArgMax {
                            FloatCC::GreaterThan
                        } else {
                            FloatCC::LessThan
                        };
                        let b = self.b.ins().fcmp(cc, v, acc);
                        let xnan = self.b.ins().fcmp(FloatCC::Unordered, v, v);
                        let bnan = self.b.ins().fcmp(FloatCC::Unordered, acc, acc);
                        let t = self.b.ins().bor(b, xnan);
                        let bok = self.b.ins().bxor_imm_s(bnan, 1);
                        self.b.ins().band(t, bok)
                    } else {
                        let cc = match (op == Accum::ArgMax, signed) {
                            (true, true) => IntCC::SignedGreaterThan,
                            (true, false) => IntCC::UnsignedGreaterThan,
                            (false, true) => IntCC::SignedLessThan,
                            (false, false) => IntCC::UnsignedLessThan,
                        };
                        self.b.ins().icmp(cc, v, acc)
                    };
                    let take = self.b.ins().bor(first, better);
                    let iv = idx.expect("arg reductions keep an index");
                    let bi = self.b.use_var(iv);
                    let ni = self.b.ins().select(take, pos, bi);
                    self.b.def_var(iv, ni);
                    self.b.ins().select(take, v, acc)
                }
            };
            self.b.def_var(var, next);
        }
        Ok(())
    }

    /// One step of Neumaier's summation: `t = s + x` was just computed; the
    /// rounding error of that add joins the compensation `c`, taken from the
    /// operand of larger magnitude as the interpreter does.
    fn compensate(&mut self, c: Variable, s: Value, x: Value, t: Value) {
        let s_abs = self.b.ins().fabs(s);
        let x_abs = self.b.ins().fabs(x);
        let s_big = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, s_abs, x_abs);
        let big = self.b.ins().select(s_big, s, x);
        let small = self.b.ins().select(s_big, x, s);
        let lost = self.b.ins().fsub(big, t);
        let lost = self.b.ins().fadd(lost, small);
        let cv = self.b.use_var(c);
        let next = self.b.ins().fadd(cv, lost);
        self.b.def_var(c, next);
    }

    /// The reduction's result after its phase's loop.
    fn finish_acc(&mut self, i: usize) -> R<Value> {
        let a = self
            .accs
            .remove(&i)
            .ok_or_else(|| CodegenError::Malformed(format!("v{i}: reduction without a loop")))?;
        if let Some(iv) = a.idx {
            return Ok(self.b.use_var(iv));
        }
        let mut v = self.b.use_var(a.var);
        if let Some(c) = a.comp {
            // s + c, except where that is NaN from an infinite s (no meaningful
            // compensation): then s.
            let c = self.b.use_var(c);
            let total = self.b.ins().fadd(v, c);
            let total_nan = self.b.ins().fcmp(FloatCC::Unordered, total, total);
            let s_ok = self.b.ins().fcmp(FloatCC::Ordered, v, v);
            let keep_s = self.b.ins().band(total_nan, s_ok);
            v = self.b.ins().select(keep_s, v, total);
        }
        let dt = self.k.exprs[i].dtype;
        Ok(if a.op == Accum::Sum && dt == DType::F32 {
            self.b.ins().fdemote(F32, v)
        } else {
            v
        })
    }
}

impl Lower<'_, '_> {
    /// The type of a scan's running value over `dt` values: the interpreter's
    /// (`interp::scan`): float32 sums and products in float64, logcumsumexp in
    /// float64, everything else in the register type (float16/bfloat16: float32).
    fn scan_type(op: ScanAccum, dt: DType) -> R<Type> {
        Ok(match op {
            ScanAccum::LogAddExp => F64,
            ScanAccum::Sum | ScanAccum::Prod if dt == DType::F32 => F64,
            _ => reg(rep(dt)?),
        })
    }

    /// Declares the running values of phase `phase`'s scans, before its loop.
    fn init_scans(&mut self, phase: u32) -> R<()> {
        for i in 0..self.k.exprs.len() {
            let e = &self.k.exprs[i];
            let (Expr::Scan { op, x }, Stage::Inner(k)) = (&e.expr, e.stage) else {
                continue;
            };
            if k != phase || !self.needed[i] {
                continue;
            }
            let (op, x, dt) = (*op, *x, e.dtype);
            let xdt = self.dtype(x);
            if op.output_dtype(xdt) != Some(dt) {
                return Err(unsupported(format!("scan {op:?}"), xdt));
            }
            let ty = Self::scan_type(op, xdt)?;
            // Max/Min and their indices take the first element whatever the
            // initial value (see `scan_step`).
            let init = match op {
                ScanAccum::Prod => 1.0,
                ScanAccum::LogAddExp => f64::NEG_INFINITY,
                _ => 0.0,
            };
            let v = if ty == F64 {
                self.b.ins().f64const(init)
            } else if ty == F32 {
                self.b.ins().f32const(init as f32)
            } else {
                self.iconst(ty, init as i64)
            };
            let var = self.b.declare_var(ty);
            self.b.def_var(var, v);
            let idx = if matches!(op, ScanAccum::ArgMax | ScanAccum::ArgMin) {
                let iv = self.b.declare_var(I64);
                let z = self.iconst(I64, 0);
                self.b.def_var(iv, z);
                Some(iv)
            } else {
                None
            };
            self.scans.insert(i, ScanState { var, idx });
        }
        Ok(())
    }

    /// Folds this iteration's `x` into scan `i`'s running value; returns the
    /// scan's value here (rounded to its dtype from the wide running value).
    fn scan_step(&mut self, i: usize, op: ScanAccum, x: ExprId) -> R<Value> {
        let xdt = self.dtype(x);
        let r = rep(xdt)?;
        let v = self.val(x);
        let (var, idx) = {
            let s = self
                .scans
                .get(&i)
                .ok_or_else(|| CodegenError::Malformed(format!("v{i}: scan outside its loop")))?;
            (s.var, s.idx)
        };
        let acc = self.b.use_var(var);
        let float = matches!(r, Rep::F32 | Rep::F64);
        let signed = matches!(r, Rep::Int { signed: true, .. });
        match op {
            ScanAccum::Sum | ScanAccum::Prod => {
                let sum = op == ScanAccum::Sum;
                let next = if float {
                    let w = if xdt == DType::F32 {
                        self.b.ins().fpromote(F64, v)
                    } else {
                        v
                    };
                    if sum {
                        self.b.ins().fadd(acc, w)
                    } else {
                        self.b.ins().fmul(acc, w)
                    }
                } else if sum {
                    self.b.ins().iadd(acc, v)
                } else {
                    self.b.ins().imul(acc, v)
                };
                self.b.def_var(var, next);
                if xdt == DType::F32 {
                    Ok(self.b.ins().fdemote(F32, next))
                } else {
                    self.round(next, xdt)
                }
            }
            ScanAccum::Max | ScanAccum::Min | ScanAccum::ArgMax | ScanAccum::ArgMin => {
                let max = matches!(op, ScanAccum::Max | ScanAccum::ArgMax);
                // take = first || nan(x) || (!nan(best) && x >= best) (<= for min):
                // ties move to the later element, each NaN takes over, as in
                // the interpreter's `extremes_of`. An ordered compare is false
                // when either side is NaN, which covers `!nan(best)`.
                let pos = self.b.use_var(self.pos);
                let first = self.b.ins().icmp_imm_s(IntCC::Equal, pos, 0);
                let wins = if float {
                    let cc = if max {
                        FloatCC::GreaterThanOrEqual
                    } else {
                        FloatCC::LessThanOrEqual
                    };
                    let ge = self.b.ins().fcmp(cc, v, acc);
                    let xnan = self.b.ins().fcmp(FloatCC::Unordered, v, v);
                    self.b.ins().bor(ge, xnan)
                } else {
                    // bool values are 0/1 bytes: unsigned order
                    let cc = match (max, signed) {
                        (true, true) => IntCC::SignedGreaterThanOrEqual,
                        (true, false) => IntCC::UnsignedGreaterThanOrEqual,
                        (false, true) => IntCC::SignedLessThanOrEqual,
                        (false, false) => IntCC::UnsignedLessThanOrEqual,
                    };
                    self.b.ins().icmp(cc, v, acc)
                };
                let take = self.b.ins().bor(first, wins);
                let next = self.b.ins().select(take, v, acc);
                self.b.def_var(var, next);
                match idx {
                    Some(iv) => {
                        let bi = self.b.use_var(iv);
                        let ni = self.b.ins().select(take, pos, bi);
                        self.b.def_var(iv, ni);
                        Ok(ni)
                    }
                    None => Ok(next),
                }
            }
            ScanAccum::LogAddExp => {
                let w = if r == Rep::F64 {
                    v
                } else {
                    self.b.ins().fpromote(F64, v)
                };
                let next = self.call("lf_scan_log_add_exp", &[w, acc], F64)?;
                self.b.def_var(var, next);
                if r == Rep::F64 {
                    Ok(next)
                } else {
                    // float64 → the accumulation type (float32) → the dtype, as the
                    // interpreter rounds (`S::from_acc(A::from_f64(a))`)
                    let f = self.b.ins().fdemote(F32, next);
                    self.round(f, xdt)
                }
            }
        }
    }
}

/// The vector type a kernel's innermost parallel dim runs in, or `None` for scalar
/// code: every expression of one dtype (float32 → f32x4, float64 → f64x2, int32 →
/// i32x4), only loads, constants and the ops with exact lane-wise instructions (in
/// [`MathMode::Fast`] also `vmath`'s transcendentals on floats), no
/// reduction, every access contiguous (stride 1) or broadcast (stride 0, loads
/// only) along that dim, and no buffer both read and written (lanes load before
/// they store).
fn vector_type(k: &LoopKernel, math: MathMode) -> Option<Type> {
    use cranelift_codegen::ir::types::{F32X4, F64X2, I32X4};
    let np = k.n_parallel;
    if np == 0 || k.phases() > 0 || k.exprs.is_empty() {
        return None;
    }
    let dt = k.exprs[0].dtype;
    let vt = match dt {
        DType::F32 => F32X4,
        DType::F64 => F64X2,
        DType::I32 => I32X4,
        _ => return None,
    };
    let float = dt != DType::I32;
    let written = k.written_bufs();
    for e in &k.exprs {
        if e.dtype != dt || e.stage != Stage::Outer(0) {
            return None;
        }
        let ok = match &e.expr {
            Expr::Load {
                param,
                index,
                dynamic,
            } => {
                dynamic.is_none()
                    && index.strides[np - 1] <= 1
                    && index.strides[np - 1] >= 0
                    && !written.contains(&k.params[*param].buf)
            }
            Expr::Const(_) => true,
            Expr::Unary { op, .. } => vector_unary_ok(*op, float, math),
            Expr::UnaryParam { op, .. } => vector_param_ok(*op, float, math),
            Expr::Binary { op, .. } => vector_binary_ok(*op, float),
            _ => false,
        };
        if !ok {
            return None;
        }
    }
    if k.stores.iter().all(|s| s.index.strides[np - 1] == 1) {
        Some(vt)
    } else {
        None
    }
}

/// Vector blocks per step of the [`Tier::Interleaved`] tier.
const INTERLEAVED: usize = 4;

/// Whether expression `e` applies an op that the scheduler's cost rule calls
/// expensive (a transcendental, `sqrt`, `pow`, …; `div` is cheap there).
fn expensive_op(e: &Expr) -> bool {
    match e {
        Expr::Unary { op, .. } => !cheap_unary(*op),
        // the ones that take exp or log (NaN replacement, rounding, leaky_relu
        // and hardtanh are a few selects)
        Expr::UnaryParam { op, .. } => matches!(
            op,
            UnaryParamOp::Logit { .. }
                | UnaryParamOp::Gelu { .. }
                | UnaryParamOp::Softplus { .. }
                | UnaryParamOp::Elu { .. }
        ),
        Expr::Binary { op, .. } => !cheap_binary(*op),
        _ => false,
    }
}

/// Whether a [`vector_type`] kernel takes the [`Tier::Interleaved`] tier: its
/// vector loop (the needed expressions not hoisted out of the row) applies at
/// least two expensive ops: interleaving pays on chains of transcendentals, but it
/// doubles a kernel's compile time, which a single transcendental does not repay.
fn interleaves(k: &LoopKernel, needed: &[bool], hoisted: &[bool]) -> bool {
    let expensive = k
        .exprs
        .iter()
        .enumerate()
        .filter(|&(i, e)| needed[i] && !hoisted[i] && expensive_op(&e.expr))
        .count();
    expensive >= 2
}

/// The needed expressions of an elementwise float kernel whose value does not
/// depend on the last dim (loads that broadcast along it, constants, the other
/// dims' indices, and ops of those): a layernorm's `sqrt(var + eps)` per row,
/// W2's column factor. Empty (all false) for other kernels.
fn row_invariant(k: &LoopKernel, needed: &[bool]) -> Vec<bool> {
    let nd = k.dims.len();
    let mut hoist = vec![false; k.exprs.len()];
    let float = k
        .exprs
        .iter()
        .all(|e| matches!(e.dtype, DType::F32 | DType::F64));
    if nd == 0 || k.n_parallel != nd || !float {
        return hoist;
    }
    let last = nd - 1;
    let mut invariant = vec![false; k.exprs.len()];
    for (i, e) in k.exprs.iter().enumerate() {
        let of = |id: &ExprId| invariant[id.0 as usize];
        invariant[i] = match &e.expr {
            Expr::Load { index, dynamic, .. } => dynamic.is_none() && index.strides[last] == 0,
            Expr::Const(_) => true,
            Expr::LoopIndex { dim } => *dim != last,
            Expr::Unary { x, .. } | Expr::UnaryParam { x, .. } | Expr::Cast { x } => of(x),
            Expr::Binary { a, b, .. } => of(a) && of(b),
            _ => false,
        };
        hoist[i] = needed[i] && invariant[i];
    }
    hoist
}

/// The lane count of [`mixed_vector`] kernels (as a type whose lane count the
/// vector loop reads).
const MIXED_LANES: Type = cranelift_codegen::ir::types::F32X4;

/// The 4-lane register vector of `dt` in [`mixed_vector`] kernels.
fn mixed_lane_type(dt: DType) -> Option<Type> {
    use cranelift_codegen::ir::types::{F32X4, I32X4};
    match dt {
        DType::F32 | DType::F16 | DType::BF16 => Some(F32X4),
        DType::I32 => Some(I32X4),
        _ => None,
    }
}

/// Whether a kernel [`vector_type`] refuses runs 4 points at a time with
/// [`Lower::vector_point_mixed`]: as there, no reduction, only loads, constants and
/// exact lane-wise ops, contiguous or broadcast loads of buffers it does not write,
/// contiguous stores; but the expressions may have different dtypes, all of 4 lanes:
/// float32 and int32 values, float16/bfloat16 loads (widened exactly, then only cast
/// to float32) and the exact casts int32 → float32 and float16/bfloat16 → float32.
/// Stores are of float32 or int32 (narrowing stores stay scalar: they round).
fn mixed_vector(k: &LoopKernel, math: MathMode) -> bool {
    let np = k.n_parallel;
    if np == 0 || k.phases() > 0 || k.exprs.is_empty() {
        return false;
    }
    let written = k.written_bufs();
    let dt = |id: &ExprId| k.exprs[id.0 as usize].dtype;
    // A scalar of a dtype without 4 lanes: a constant, or a load broadcast along
    // the vector dim (evaluated once per vector as a scalar, then cast and splat).
    let scalar_const = |e: &lazyfuse_ir::kernel::ExprNode| {
        let scalar = match &e.expr {
            Expr::Const(_) => true,
            Expr::Load {
                param,
                index,
                dynamic,
            } => {
                dynamic.is_none()
                    && index.strides[np - 1] == 0
                    && k.params[*param].dtype == e.dtype
                    && !written.contains(&k.params[*param].buf)
            }
            _ => false,
        };
        scalar && rep(e.dtype).is_ok_and(|r| matches!(r, Rep::F64 | Rep::Int { .. } | Rep::Bool))
    };
    for e in &k.exprs {
        if e.stage != Stage::Outer(0) {
            return false;
        }
        if mixed_lane_type(e.dtype).is_none() {
            // Constants of other dtypes may feed casts (evaluated as scalars, then
            // splat); any other user checks its operands' dtypes below.
            if scalar_const(e) {
                continue;
            }
            return false;
        }
        let narrow = matches!(e.dtype, DType::F16 | DType::BF16);
        let float = e.dtype != DType::I32;
        let ok = match &e.expr {
            Expr::Load {
                param,
                index,
                dynamic,
            } => {
                dynamic.is_none()
                    && (0..=1).contains(&index.strides[np - 1])
                    && k.params[*param].dtype == e.dtype
                    && !written.contains(&k.params[*param].buf)
            }
            Expr::Const(_) => !narrow,
            Expr::Cast { x } => {
                let from = &k.exprs[x.0 as usize];
                (e.dtype == DType::F32
                    && matches!(from.dtype, DType::I32 | DType::F16 | DType::BF16))
                    || (!narrow && (matches!(from.expr, Expr::Const(_)) || scalar_const(from)))
            }
            Expr::Unary { op, x } => {
                !narrow && dt(x) == e.dtype && vector_unary_ok(*op, float, math)
            }
            Expr::UnaryParam { op, x } => {
                !narrow && dt(x) == e.dtype && vector_param_ok(*op, float, math)
            }
            Expr::Binary { op, a, b } => {
                !narrow && dt(a) == e.dtype && dt(b) == e.dtype && vector_binary_ok(*op, float)
            }
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    k.stores.iter().all(|s| {
        let v = k.exprs[s.value.0 as usize].dtype;
        s.index.strides[np - 1] == 1
            && matches!(v, DType::F32 | DType::I32)
            && k.params[s.param].dtype == v
    })
}

/// Whether [`Lower::vunary`] emits `op` on vectors of float (or integer) lanes: the
/// one predicate the elementwise vector path and the vectorized reduction phases
/// share, so that an op the vector path learns vectorizes in both. In
/// [`MathMode::Fast`] that includes `vmath`'s transcendentals on floats.
fn vector_unary_ok(op: UnaryOp, float: bool, math: MathMode) -> bool {
    use UnaryOp::*;
    match op {
        Neg | Abs | Square => true,
        Sqrt | Floor | Ceil | Trunc | Round | Relu => float,
        BitwiseNot => !float,
        _ => float && math == MathMode::Fast && super::vmath::has_unary(op),
    }
}

/// Whether [`Lower::vparam`] emits the parameterised activation `op` on vectors:
/// float lanes in [`MathMode::Fast`] only (Exact keeps the libm-backed scalar call).
fn vector_param_ok(op: UnaryParamOp, float: bool, math: MathMode) -> bool {
    float && math == MathMode::Fast && super::vmath::has_param(op)
}

/// Whether [`Lower::vbinary`] emits `op` on vectors (see [`vector_unary_ok`]).
fn vector_binary_ok(op: BinaryOp, float: bool) -> bool {
    use BinaryOp::*;
    match op {
        Add | Sub | Mul | Maximum | Minimum => true,
        Div => float,
        BitwiseAnd | BitwiseOr | BitwiseXor => !float,
        _ => false,
    }
}

/// The kind code and the three f64 parameters of a [`UnaryParamOp`] for
/// `lf_unary_param_*` (decoded by `lazyfuse_runtime::jit_symbols::param_op`).
pub fn param_code(op: UnaryParamOp) -> (i64, [f64; 3]) {
    match op {
        UnaryParamOp::NanToNum {
            nan,
            posinf,
            neginf,
        } => (0, [nan, posinf, neginf]),
        UnaryParamOp::Logit { eps } => (1, [eps.unwrap_or(f64::NAN), 0.0, 0.0]),
        UnaryParamOp::RoundDecimals { decimals } => (2, [decimals as f64, 0.0, 0.0]),
        UnaryParamOp::Gelu { tanh } => (3, [tanh as u8 as f64, 0.0, 0.0]),
        UnaryParamOp::Softplus { beta, threshold } => (4, [beta, threshold, 0.0]),
        UnaryParamOp::Elu {
            alpha,
            scale,
            input_scale,
        } => (5, [alpha, scale, input_scale]),
        UnaryParamOp::LeakyRelu { negative_slope } => (6, [negative_slope, 0.0, 0.0]),
        UnaryParamOp::Hardtanh { min_val, max_val } => (7, [min_val, max_val, 0.0]),
    }
}

/// The inverse of [`param_code`]: the op of a kind code and its parameters, `None`
/// for an unknown code.
pub fn param_op(kind: i64, p: [f64; 3]) -> Option<UnaryParamOp> {
    Some(match kind {
        0 => UnaryParamOp::NanToNum {
            nan: p[0],
            posinf: p[1],
            neginf: p[2],
        },
        1 => UnaryParamOp::Logit {
            eps: if p[0].is_nan() { None } else { Some(p[0]) },
        },
        2 => UnaryParamOp::RoundDecimals {
            decimals: p[0] as i64,
        },
        3 => UnaryParamOp::Gelu { tanh: p[0] != 0.0 },
        4 => UnaryParamOp::Softplus {
            beta: p[0],
            threshold: p[1],
        },
        5 => UnaryParamOp::Elu {
            alpha: p[0],
            scale: p[1],
            input_scale: p[2],
        },
        6 => UnaryParamOp::LeakyRelu {
            negative_slope: p[0],
        },
        7 => UnaryParamOp::Hardtanh {
            min_val: p[0],
            max_val: p[1],
        },
        _ => return None,
    })
}
