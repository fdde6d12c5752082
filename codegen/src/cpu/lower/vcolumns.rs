//! Vectorized column reductions: a reduction whose dim is strided while the last
//! parallel dim is contiguous (`x.sum(0)`, a softmax over dim 0) runs
//! [`COLUMNS`] consecutive output points at once, one vector lane per output,
//! each reduced in the scalar code's order (so the values are the scalar code's
//! bit for bit, in either math mode). Wide enough thread ranges run in chunks of
//! [`CHUNKS`] points whose accumulators live in a stack slot, so that each input
//! row is read as one run. The lane values go through the row phases' machinery
//! (`vreduce`: parts, accumulators, expression evaluation). A chunk that only
//! sums a load (`x.sum(0)`, a mean, a bias gradient) hands its rows to the
//! runtime's `lf_column_sum_*` instead, which adds them as the chunk's loops
//! do, 16 or 8 lanes wide ([`column_sum_run`]).

use super::vreduce::{VAcc, GROUP, UNROLL};
use super::vrun::phase_computes_only;
use super::{vector_binary_ok, vector_unary_ok, Lower, R};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F64X2, I64};
use cranelift_codegen::ir::{InstBuilder, StackSlotData, StackSlotKind, Value};
use lazyfuse_ir::fast_math::COLUMN_SUM_ROWS;
use lazyfuse_ir::kernel::{Accum, Expr, ExprId, LoopKernel, MathMode, Stage};
use lazyfuse_ir::DType;

/// Points of the last parallel dim a column reduction does at once.
pub(super) const COLUMNS: i64 = GROUP * UNROLL;
/// Points of the last parallel dim a chunked column reduction does at once,
/// widest first: its accumulators live in a stack slot, and each input row is
/// read as one run of that many values (a walk down 16 columns touches a new page
/// per row). The executor gives such a kernel one range per thread
/// (`LoopKernel::reads_columns`); the narrower chunks serve narrower ranges (a
/// [2048, 2048] column sum on two threads: two ranges of 1024 columns).
pub(super) const CHUNKS: [i64; 3] = [4096, 1024, 256];

/// Whether `k` runs [`UNROLL`]·[`GROUP`] consecutive points of its last parallel
/// dim at once (column reductions: the reduction dim is strided, the last
/// parallel dim contiguous): one reduction dim, every needed expression float32
/// or float64 (float16 and bfloat16 as the row phases admit them) and of the
/// kinds [`phase_vectorizes`](super::vreduce::phase_vectorizes) admits, in every
/// stage, loads and stores contiguous (stores) or broadcast (loads) along that
/// parallel dim.
/// Each lane is one output point reduced in the scalar code's order, so the
/// values are the scalar code's bit for bit, in either math mode.
pub(super) fn columns_vectorize(k: &LoopKernel, needed: &[bool], math: MathMode) -> bool {
    let np = k.n_parallel;
    let nd = k.dims.len();
    if np == 0 || nd != np + 1 || k.phases() == 0 || (k.dims[np - 1] as i64) < GROUP * UNROLL {
        return false;
    }
    let vdim = np - 1;
    let float = |dt: DType| matches!(dt, DType::F32 | DType::F64);
    let narrow = |dt: DType| matches!(dt, DType::F16 | DType::BF16);
    let written = k.written_bufs();
    for (i, e) in k.exprs.iter().enumerate() {
        if !needed[i] {
            continue;
        }
        if matches!(e.stage, Stage::Outer(s) if s > k.phases()) {
            return false;
        }
        // float16/bfloat16 values sit in float32 lanes: loads, casts from and to
        // float32 and extrema (one of their lanes, exactly), no arithmetic,
        // which would round per op
        let x_dtype = |x: &ExprId| k.exprs[x.0 as usize].dtype;
        let narrow_ok = narrow(e.dtype)
            && match &e.expr {
                Expr::Load { .. } => true,
                Expr::Cast { x } => x_dtype(x) == DType::F32,
                Expr::Reduce { op, x } => {
                    matches!(op, Accum::Max | Accum::Min) && x_dtype(x) == e.dtype
                }
                _ => false,
            };
        if !float(e.dtype) && !narrow_ok {
            return false;
        }
        let ok = match &e.expr {
            Expr::Load {
                param,
                index,
                dynamic,
            } => {
                dynamic.is_none()
                    && (0..=1).contains(&index.strides[vdim])
                    && k.params[param.index()].dtype == e.dtype
                    && !written.contains(&k.params[param.index()].buf)
            }
            Expr::Const(_) => true,
            Expr::Cast { x } => {
                float(k.exprs[x.0 as usize].dtype)
                    || (narrow(k.exprs[x.0 as usize].dtype) && e.dtype == DType::F32)
            }
            Expr::Unary { op, x } => {
                k.exprs[x.0 as usize].dtype == e.dtype && vector_unary_ok(*op, e.dtype, math)
            }
            Expr::Binary { op, a, b } => {
                k.exprs[a.0 as usize].dtype == e.dtype
                    && k.exprs[b.0 as usize].dtype == e.dtype
                    && vector_binary_ok(*op, true)
            }
            // Exact float sums are compensated (Neumaier, the interpreter's order):
            // the scalar path's accumulator pair.
            Expr::Reduce { op, x } => {
                (matches!(op, Accum::Max | Accum::Min)
                    || (*op == Accum::Sum && math == MathMode::Fast))
                    && (float(k.exprs[x.0 as usize].dtype) || narrow_ok)
            }
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    k.stores.iter().all(|s| {
        s.index.strides[vdim] == 1
            && k.params[s.param.index()].dtype == k.exprs[s.value.0 as usize].dtype
    })
}

/// Whether `k` (which [`columns_vectorize`] admits) runs in chunks of [`CHUNKS`]
/// points: one phase, whose expressions use only the phase's own values and
/// constants (nothing of the outer stage is held across the row loop).
pub(super) fn chunk_vectorize(k: &LoopKernel, needed: &[bool]) -> bool {
    let np = k.n_parallel;
    if k.phases() != 1 || (k.dims[np - 1] as i64) < CHUNKS[CHUNKS.len() - 1] {
        return false;
    }
    k.exprs.iter().enumerate().all(|(i, e)| {
        !needed[i]
            || e.stage != Stage::Inner(0)
            || LoopKernel::operands(&e.expr).iter().all(|o| {
                let x = &k.exprs[o.0 as usize];
                x.stage == Stage::Inner(0) || matches!(x.expr, Expr::Const(_))
            })
    })
}

/// The runtime's column sum (`lf_column_sum_<f32|f64>`, or
/// `lf_column_sum_widened_f32`) that adds a chunk's rows into its
/// accumulators, where it can: the chunk's one accumulator is a float64 sum
/// of a float32 or float64 load contiguous along the columns (or of a float32
/// one widened), and the phase computes nothing else. Returns the load, the
/// routine's symbol and the load's row stride in bytes.
fn column_sum_run(
    k: &LoopKernel,
    needed: &[bool],
    vaccs: &[VAcc],
) -> Option<(ExprId, &'static str, i64)> {
    let [va] = vaccs else { return None };
    let Expr::Reduce { op: Accum::Sum, x } = k.exprs[va.expr].expr else {
        return None;
    };
    let mut own = vec![va.expr, x.0 as usize];
    let (load, symbol) = match (&k.exprs[x.0 as usize].expr, k.exprs[x.0 as usize].dtype) {
        (Expr::Load { .. }, DType::F32) => (x, "lf_column_sum_f32"),
        (Expr::Load { .. }, DType::F64) => (x, "lf_column_sum_f64"),
        (Expr::Cast { x: l }, DType::F64) if k.exprs[l.0 as usize].dtype == DType::F32 => {
            own.push(l.0 as usize);
            (*l, "lf_column_sum_widened_f32")
        }
        _ => return None,
    };
    let Expr::Load {
        param,
        ref index,
        dynamic: None,
    } = k.exprs[load.0 as usize].expr
    else {
        return None;
    };
    let dtype = k.exprs[load.0 as usize].dtype;
    let (vdim, rd) = (k.n_parallel - 1, k.dims.len() - 1);
    let ok = va.ty == F64X2
        && index.strides[vdim] == 1
        && k.params[param.index()].dtype == dtype
        && phase_computes_only(k, needed, 0, &own);
    ok.then(|| {
        (
            load,
            symbol,
            index.strides[rd] * dtype.size_in_bytes() as i64,
        )
    })
}

impl Lower<'_, '_> {
    /// [`UNROLL`]·[`GROUP`] consecutive points of the last parallel dim (see
    /// [`columns_vectorize`]): every stage in vector parts, the reduction loops
    /// scalar over positions with one vector accumulator per copy and lane.
    pub(super) fn vector_columns(&mut self) -> R<()> {
        let np = self.k.n_parallel;
        let nd = self.k.dims.len();
        let (vdim, rd) = (np - 1, nd - 1);
        let n = self.k.dims[rd] as i64;
        let ne = self.k.exprs.len();
        let slots = ne + self.k.stores.len();
        let mut vvs: Vec<Vec<Option<Vec<Value>>>> = (0..UNROLL).map(|_| vec![None; ne]).collect();
        let mut addrs = vec![None; slots];
        for u in 0..UNROLL {
            self.veval(Stage::Outer(0), u, vdim, &mut vvs[u as usize], &mut addrs)?;
        }
        for ph in 0..self.k.phases() {
            let vaccs = self.init_vaccs(ph, false)?;
            let zero = self.iconst(I64, 0);
            self.b.def_var(self.idx[rd], zero);
            let head = self.b.create_block();
            let bodyb = self.b.create_block();
            let after = self.b.create_block();
            self.b.ins().jump(head, &[]);
            self.b.switch_to_block(head);
            let pv = self.b.use_var(self.idx[rd]);
            let more = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, pv, n);
            self.b.ins().brif(more, bodyb, &[], after, &[]);
            self.b.switch_to_block(bodyb);
            let mut inner_addrs = vec![None; slots];
            for u in 0..UNROLL {
                let vv = &mut vvs[u as usize];
                self.veval(Stage::Inner(ph), u, vdim, vv, &mut inner_addrs)?;
                let vv = vvs[u as usize].clone();
                self.vaccumulate(&vaccs, u, &vv);
            }
            let pv = self.b.use_var(self.idx[rd]);
            let pn = self.b.ins().iadd_imm_s(pv, 1);
            self.b.def_var(self.idx[rd], pn);
            self.b.ins().jump(head, &[]);
            self.b.switch_to_block(after);
            for (u, vv) in vvs.iter_mut().enumerate() {
                // The loop body's values do not reach past the loop.
                for (i, e) in self.k.exprs.iter().enumerate() {
                    if e.stage == Stage::Inner(ph) {
                        vv[i] = None;
                    }
                }
                for va in &vaccs {
                    let mut parts: Vec<Value> =
                        va.vars[u].iter().map(|&v| self.b.use_var(v)).collect();
                    if va.ty == F64X2 && self.k.exprs[va.expr].dtype == DType::F32 {
                        parts = self.vcast(parts, DType::F64, DType::F32);
                    }
                    vv[va.expr] = Some(parts);
                }
            }
            for u in 0..UNROLL {
                let mut a = vec![None; slots];
                self.veval(Stage::Outer(ph + 1), u, vdim, &mut vvs[u as usize], &mut a)?;
            }
        }
        Ok(())
    }

    /// A chunk of `width` (one of [`CHUNKS`]) points of the last parallel dim (see
    /// [`chunk_vectorize`]): rows outer, blocks of [`COLUMNS`] inner, the vector
    /// accumulators in a stack slot; each lane still reduces one point in the
    /// scalar order.
    pub(super) fn vector_column_chunk(&mut self, width: i64) -> R<()> {
        let np = self.k.n_parallel;
        let nd = self.k.dims.len();
        let (vdim, rd) = (np - 1, nd - 1);
        let n = self.k.dims[rd] as i64;
        let ne = self.k.exprs.len();
        let slots = ne + self.k.stores.len();
        // Constants the phase uses are splat from their scalar values.
        for i in 0..ne {
            let e = &self.k.exprs[i];
            if self.needed[i] && e.stage == Stage::Outer(0) && matches!(e.expr, Expr::Const(_)) {
                let v = self.expr(i)?;
                self.vals[i] = Some(v);
            }
        }
        let vaccs = self.init_vaccs(0, false)?;
        // Slot layout per block: per accumulator, per copy, per part, 16 bytes.
        let mut offs = Vec::new();
        let mut gbytes = 0i64;
        for va in &vaccs {
            offs.push(gbytes);
            gbytes += UNROLL * va.vars[0].len() as i64 * 16;
        }
        let groups = width / COLUMNS;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (groups * gbytes) as u32,
            4,
        ));
        let sbase = self.b.ins().stack_addr(I64, slot, 0);
        let col0 = self.b.use_var(self.idx[vdim]);
        let acc_off = |a: usize, u: i64, p: usize, nparts: usize| {
            (offs[a] + (u * nparts as i64 + p as i64) * 16) as i32
        };
        let inits: Vec<Value> = vaccs
            .iter()
            .map(|va| self.b.use_var(va.vars[0][0]))
            .collect();
        self.counted_loop(groups, &mut |s, g| {
            let at = s.b.ins().imul_imm_s(g, gbytes);
            let at = s.b.ins().iadd(sbase, at);
            for (a, va) in vaccs.iter().enumerate() {
                let np = va.vars[0].len();
                for u in 0..UNROLL {
                    for p in 0..np {
                        s.b.ins()
                            .store(super::flags(), inits[a], at, acc_off(a, u, p, np));
                    }
                }
            }
            Ok(())
        })?;
        // A plain column sum is one call of the runtime's routine, which adds
        // the rows as the loops below do (16 or 8 lanes wide).
        let routine = column_sum_run(self.k, &self.needed, &vaccs);
        if let Some((load, symbol, row_bytes)) = routine {
            let zero = self.iconst(I64, 0);
            self.b.def_var(self.idx[rd], zero);
            let src = self.load_address(load)?;
            let args = [row_bytes, n, width].map(|v| self.iconst(I64, v));
            self.call_void(symbol, &[sbase, src, args[0], args[1], args[2]])?;
        }
        // Rows go ROWS at a time (several pages streamed at once, and one load
        // and store of each accumulator per ROWS rows), then one at a time;
        // each lane still adds its rows in order.
        const ROWS: i64 = COLUMN_SUM_ROWS as i64;
        let main = n - n % ROWS;
        for (first, count, rows) in [(0, main / ROWS, ROWS), (main, n - main, 1)] {
            // (where the routine ran, it added every row)
            if count == 0 || routine.is_some() {
                continue;
            }
            self.counted_loop(count, &mut |s, it| {
                let r0 = s.b.ins().imul_imm_s(it, rows);
                let r0 = s.b.ins().iadd_imm_s(r0, first);
                s.counted_loop(groups, &mut |s, g| {
                    let c = s.b.ins().imul_imm_s(g, COLUMNS);
                    let c = s.b.ins().iadd(col0, c);
                    s.b.def_var(s.idx[vdim], c);
                    let at = s.b.ins().imul_imm_s(g, gbytes);
                    let at = s.b.ins().iadd(sbase, at);
                    for u in 0..UNROLL {
                        // this copy's accumulators, loaded once for the rows
                        let mut accs: Vec<Vec<Value>> = Vec::new();
                        for (a, va) in vaccs.iter().enumerate() {
                            let np = va.vars[0].len();
                            accs.push(
                                (0..np)
                                    .map(|p| {
                                        let off = acc_off(a, u, p, np);
                                        s.b.ins().load(va.ty, super::flags(), at, off)
                                    })
                                    .collect(),
                            );
                        }
                        // In Fast math a float32 sum adds the block's rows in
                        // float32 lanes first and widens that partial once: one
                        // conversion per ROWS rows instead of per row (the
                        // accumulator across blocks stays float64).
                        let mut partials: Vec<Option<Value>> = vec![None; vaccs.len()];
                        for j in 0..rows {
                            let r = s.b.ins().iadd_imm_s(r0, j);
                            s.b.def_var(s.idx[rd], r);
                            let mut addrs = vec![None; slots];
                            let mut vv: Vec<Option<Vec<Value>>> = vec![None; ne];
                            s.veval(Stage::Inner(0), u, vdim, &mut vv, &mut addrs)?;
                            for (a, va) in vaccs.iter().enumerate() {
                                let Expr::Reduce { x, .. } = s.k.exprs[va.expr].expr else {
                                    unreachable!("vector accumulators are reductions")
                                };
                                let xdt = s.dtype(x);
                                let mut xs = s.vparts(x, &vv);
                                if va.ty == F64X2 && xdt == DType::F32 {
                                    if s.math == MathMode::Fast && va.op == Accum::Sum {
                                        let x = xs[0];
                                        partials[a] = Some(match partials[a] {
                                            Some(acc) => s.b.ins().fadd(acc, x),
                                            None => x,
                                        });
                                        continue;
                                    }
                                    xs = s.vcast(xs, DType::F32, DType::F64);
                                }
                                for (p, xv) in xs.into_iter().enumerate() {
                                    accs[a][p] = s.vcombine(va.op, accs[a][p], xv, va.ty);
                                }
                            }
                        }
                        for (a, va) in vaccs.iter().enumerate() {
                            if let Some(partial) = partials[a] {
                                let xs = s.vcast(vec![partial], DType::F32, DType::F64);
                                for (p, xv) in xs.into_iter().enumerate() {
                                    accs[a][p] = s.vcombine(va.op, accs[a][p], xv, va.ty);
                                }
                            }
                        }
                        for (a, va) in vaccs.iter().enumerate() {
                            let np = va.vars[0].len();
                            for (p, &v) in accs[a].iter().enumerate() {
                                let off = acc_off(a, u, p, np);
                                s.b.ins().store(super::flags(), v, at, off);
                            }
                        }
                    }
                    Ok(())
                })
            })?;
        }
        self.counted_loop(groups, &mut |s, g| {
            let c = s.b.ins().imul_imm_s(g, COLUMNS);
            let c = s.b.ins().iadd(col0, c);
            s.b.def_var(s.idx[vdim], c);
            let at = s.b.ins().imul_imm_s(g, gbytes);
            let at = s.b.ins().iadd(sbase, at);
            let mut addrs = vec![None; slots];
            let mut addrs1 = vec![None; slots];
            for u in 0..UNROLL {
                let mut vv: Vec<Option<Vec<Value>>> = vec![None; ne];
                s.veval(Stage::Outer(0), u, vdim, &mut vv, &mut addrs)?;
                for (a, va) in vaccs.iter().enumerate() {
                    let np = va.vars[0].len();
                    let mut parts: Vec<Value> = (0..np)
                        .map(|p| {
                            s.b.ins()
                                .load(va.ty, super::flags(), at, acc_off(a, u, p, np))
                        })
                        .collect();
                    if va.ty == F64X2 && s.k.exprs[va.expr].dtype == DType::F32 {
                        parts = s.vcast(parts, DType::F64, DType::F32);
                    }
                    vv[va.expr] = Some(parts);
                }
                s.veval(Stage::Outer(1), u, vdim, &mut vv, &mut addrs1)?;
            }
            Ok(())
        })?;
        self.b.def_var(self.idx[vdim], col0);
        for v in self.vals.iter_mut() {
            *v = None;
        }
        Ok(())
    }
}
