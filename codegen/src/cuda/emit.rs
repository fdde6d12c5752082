//! The emitter of one kernel's CUDA C function: the grid-stride loop over the
//! parallel points (vector groups or one block per point where those apply), each
//! point's stages and phases, accumulators, scans and stores.

use super::{
    binary, block_reduces, cast, combine, constant, index, lane_value, load, reg, rep, round,
    start, storage, stored_bits, unary, unary_param, unsupported, vectorizes, Rep, BLOCK_THREADS,
    LANES,
};
use crate::semantics;
use crate::CodegenError;
use lazyfuse_ir::kernel::{Accum, Expr, LoopKernel, MathMode, ScanAccum, Stage, Status};
use lazyfuse_ir::DType;
use std::fmt::Write as _;

pub(super) struct Emit<'a> {
    pub(super) k: &'a LoopKernel,
    pub(super) math: MathMode,
    /// whether indices need 64-bit arithmetic (see [`fits_i32`](super::fits_i32))
    pub(super) wide: bool,
    /// in a vectorized kernel ([`vectorizes`]), the lane being emitted: expression
    /// `i` of lane `l` is `v{i}_{l}`
    pub(super) lane: Option<usize>,
    /// a block-per-point kernel ([`block_reduces`]): outer-stage stores are thread 0's
    pub(super) block: bool,
    pub(super) needed: Vec<bool>,
    pub(super) out: String,
    pub(super) depth: usize,
}

impl Emit<'_> {
    pub(super) fn line(&mut self, s: impl AsRef<str>) {
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    pub(super) fn open(&mut self, s: impl AsRef<str>) {
        let s = s.as_ref();
        self.line(if s.is_empty() {
            "{".to_string()
        } else {
            format!("{s} {{")
        });
        self.depth += 1;
    }

    pub(super) fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
    }

    /// The C type of the loop indices.
    pub(super) fn index_type(&self) -> &'static str {
        if self.wide {
            "i64"
        } else {
            "i32"
        }
    }

    /// The suffix of index constants.
    pub(super) fn suffix(&self) -> &'static str {
        if self.wide {
            "ll"
        } else {
            ""
        }
    }

    pub(super) fn dtype(&self, i: usize) -> DType {
        self.k.exprs[i].dtype
    }

    /// The variable holding expression `i` (of the current lane).
    pub(super) fn var(&self, i: usize) -> String {
        match self.lane {
            Some(l) => format!("v{i}_{l}"),
            None => format!("v{i}"),
        }
    }

    pub(super) fn function(&mut self, symbol: &str) -> Result<(), CodegenError> {
        let k = self.k;
        let mut args = Vec::new();
        for (i, p) in k.params.iter().enumerate() {
            let t = storage(p.dtype)?;
            args.push(if p.writes {
                format!("{t}* __restrict__ p{i}")
            } else {
                format!("const {t}* __restrict__ p{i}")
            });
        }
        args.push("u64* __restrict__ status".into());
        let _ = writeln!(
            self.out,
            "// {} ({} params, dims {:?}, {} parallel)",
            k.name,
            k.params.len(),
            k.dims,
            k.n_parallel
        );
        self.line(format!(
            "extern \"C\" __global__ void __launch_bounds__({BLOCK_THREADS}) {symbol}({})",
            args.join(", ")
        ));
        self.open("");
        if k.parallel_points() == 0 {
            // No point exists: nothing to do (and no dim to divide by).
            self.line("// no parallel point");
            self.close();
            return Ok(());
        }
        if vectorizes(k) {
            return self.vector_function();
        }
        if block_reduces(k, self.math) {
            self.block = true;
            return self.block_function();
        }
        self.line(format!("const i64 n_points = {}ll;", k.parallel_points()));
        self.open("for (i64 pt = LF_GRID_FIRST; pt < LF_GRID_END(n_points); pt += LF_GRID_STRIDE)");
        // The multi-index of the point, innermost dim fastest; in 32-bit arithmetic
        // where every index fits (`Emit::wide`): a 64-bit division is many
        // instructions on a GPU.
        self.point_indices("pt", 1);
        self.point()?;
        self.close();
        self.close();
        Ok(())
    }

    /// Declares the multi-index of step `var` of the grid-stride loop, innermost dim
    /// fastest (each step takes `group` consecutive points of the last parallel dim),
    /// in 32-bit arithmetic where every index fits (`Emit::wide`: a 64-bit division
    /// is many instructions on a GPU); the reduction dims' indices start at 0.
    pub(super) fn point_indices(&mut self, var: &str, group: usize) {
        let k = self.k;
        let np = k.n_parallel;
        let (it, sfx) = (self.index_type(), self.suffix());
        let mut rest = if self.wide {
            var.to_string()
        } else {
            format!("(i32){var}")
        };
        for d in (0..np).rev() {
            let (n, scale) = if d + 1 == np && group > 1 {
                (k.dims[d] / group, format!(" * {group}"))
            } else {
                (k.dims[d], String::new())
            };
            if d == 0 {
                self.line(format!("const {it} i{d} = {rest}{scale};"));
            } else {
                self.line(format!("const {it} i{d} = {rest} % {n}{sfx}{scale};"));
                self.line(format!("const {it} q{d} = {rest} / {n}{sfx};"));
                rest = format!("q{d}");
            }
        }
        if np == 0 {
            self.line(format!("(void){var};"));
        }
        for d in np..k.dims.len() {
            self.line(format!("{it} i{d} = 0;"));
        }
    }

    /// A kernel whose reductions the threads of a block share ([`block_reduces`]):
    /// each block takes parallel points in turn; its threads split each phase's
    /// reduction points (thread `t` takes `t`, `t + blockDim.x`, …), keep partial
    /// accumulators, and combine them with `lf_block_reduce` (warp shuffles, then
    /// shared memory), which also gives every thread the result for the later
    /// stages. Outer-stage stores are thread 0's. Any block size that is 1 or a
    /// multiple of 32 is correct.
    pub(super) fn block_function(&mut self) -> Result<(), CodegenError> {
        let k = self.k;
        let np = k.n_parallel;
        let nd = k.dims.len();
        let it = self.index_type();
        self.line(format!(
            "const i64 n_points = {}ll; // one block per point",
            k.parallel_points()
        ));
        self.open(
            "for (i64 pt = LF_BLOCK_FIRST; pt < LF_GRID_END(n_points); pt += LF_BLOCK_STRIDE)",
        );
        self.point_indices("pt", 1);
        let total: usize = k.reduce_dims().iter().product();
        self.stage(Stage::Outer(0))?;
        for ph in 0..k.phases() {
            self.init_accs(ph)?;
            // Thread 0's outer-stage stores are visible before the phase reads.
            self.line("__syncthreads();");
            if total > 0 {
                self.open(format!(
                    "for (i64 r = threadIdx.x; r < {total}ll; r += blockDim.x)"
                ));
                let mut rest = "r".to_string();
                for d in (np..nd).rev() {
                    if d == np {
                        self.line(format!("i{d} = ({it}){rest};"));
                    } else {
                        self.line(format!("i{d} = ({it})({rest} % {}ll);", k.dims[d]));
                        self.line(format!("const i64 r{d} = {rest} / {}ll;", k.dims[d]));
                        rest = format!("r{d}");
                    }
                }
                self.stage(Stage::Inner(ph))?;
                self.update_accs(ph)?;
                self.close();
                for d in np..nd {
                    self.line(format!("i{d} = 0;"));
                }
            }
            // What this phase's threads stored is visible to the whole block before
            // anything later reads it (`lf_block_reduce` synchronizes too, but a
            // phase may reduce nothing).
            self.line("__syncthreads();");
            self.combine_accs(ph)?;
            self.stage(Stage::Outer(ph + 1))?;
        }
        self.close();
        self.close();
        Ok(())
    }

    /// Combines the block's partial accumulators of phase `phase`'s reductions.
    pub(super) fn combine_accs(&mut self, phase: u32) -> Result<(), CodegenError> {
        for (i, op, x) in self.k.phase_reductions(phase) {
            if !self.needed[i] {
                continue;
            }
            let xdt = self.dtype(x.0 as usize);
            let ty = Self::acc_type(op, xdt)?;
            let r = rep(xdt)?;
            let f = combine(op, r, xdt, "x", "y")
                .ok_or_else(|| unsupported(format!("a block reduction {op:?}"), xdt))?;
            self.line(format!("__shared__ {ty} sm{i}[32];"));
            self.line(format!(
                "a{i} = lf_block_reduce(a{i}, []({ty} x, {ty} y) {{ return ({ty}){f}; }}, sm{i});"
            ));
        }
        Ok(())
    }

    /// The body of a vectorized elementwise kernel: each step of the grid-stride loop
    /// takes a group of [`LANES`] consecutive points of the last parallel dim, loads
    /// each contiguous param once as a vector, computes the lanes, and stores each
    /// contiguous output as a vector.
    pub(super) fn vector_function(&mut self) -> Result<(), CodegenError> {
        let k = self.k;
        let np = k.n_parallel;
        let sfx = self.suffix();
        let groups = k.parallel_points() / LANES;
        self.line(format!(
            "const i64 n_groups = {groups}ll; // of {LANES} points"
        ));
        self.open("for (i64 g = LF_GRID_FIRST; g < LF_GRID_END(n_groups); g += LF_GRID_STRIDE)");
        self.point_indices("g", LANES);
        // The contiguous loads, one vector each (loads depend on indices only).
        for i in 0..k.exprs.len() {
            if let (
                true,
                Expr::Load {
                    param, index: ix, ..
                },
            ) = (self.needed[i], &k.exprs[i].expr)
            {
                if ix.strides[np - 1] == 1 {
                    let t = storage(k.params[param.index()].dtype)?;
                    let at = index(ix, sfx);
                    self.line(format!(
                        "const lf_v4<{t}> L{i} = lf_vload4(&{param}[{at}]);"
                    ));
                }
            }
        }
        for l in 0..LANES {
            self.lane = Some(l);
            for i in 0..k.exprs.len() {
                if self.needed[i] {
                    self.expr(i)?;
                }
            }
        }
        self.lane = None;
        for st in &k.stores {
            let dt = k.params[st.param.index()].dtype;
            let t = storage(dt)?;
            let lanes: Vec<String> = (0..LANES)
                .map(|l| stored_bits(&format!("v{}_{l}", st.value.0), dt))
                .collect();
            let at = index(&st.index, sfx);
            self.line(format!(
                "lf_vstore4(&{}[{at}], lf_v4<{t}>{{{{{}}}}});",
                st.param,
                lanes.join(", ")
            ));
        }
        self.close();
        self.close();
        Ok(())
    }

    pub(super) fn point(&mut self) -> Result<(), CodegenError> {
        let k = self.k;
        let nd = k.dims.len();
        let np = k.n_parallel;
        self.stage(Stage::Outer(0))?;
        for ph in 0..k.phases() {
            self.init_accs(ph)?;
            self.init_scans(ph)?;
            let total: usize = k.reduce_dims().iter().product();
            if total > 0 {
                self.open("");
                self.line("i64 pos = 0;");
                for d in np..nd {
                    self.open(format!(
                        "for (i{d} = 0; i{d} < {}{}; ++i{d})",
                        k.dims[d],
                        self.suffix()
                    ));
                }
                self.stage(Stage::Inner(ph))?;
                self.update_accs(ph)?;
                self.line("++pos;");
                for _ in np..nd {
                    self.close();
                }
                for d in np..nd {
                    self.line(format!("i{d} = 0;"));
                }
                self.line("(void)pos;");
                self.close();
            }
            self.stage(Stage::Outer(ph + 1))?;
        }
        for s in k.phases() + 1..=k.last_outer_stage() {
            self.stage(Stage::Outer(s))?;
        }
        Ok(())
    }

    pub(super) fn stage(&mut self, stage: Stage) -> Result<(), CodegenError> {
        for i in 0..self.k.exprs.len() {
            if self.k.exprs[i].stage == stage && self.needed[i] {
                self.expr(i)?;
            }
        }
        let stores = self.k.stage_stores(stage);
        let guard = if self.block && matches!(stage, Stage::Outer(_)) {
            "if (threadIdx.x == 0) "
        } else {
            ""
        };
        for s in stores {
            let dt = self.k.params[s.param.index()].dtype;
            let bits = stored_bits(&format!("v{}", s.value.0), dt);
            let idx = index(&s.index, self.suffix());
            self.line(format!("{guard}{}[{idx}] = {bits};", s.param));
        }
        Ok(())
    }

    pub(super) fn expr(&mut self, i: usize) -> Result<(), CodegenError> {
        let e = self.k.exprs[i].clone();
        let dt = e.dtype;
        let r = rep(dt)?;
        let ty = reg(r);
        let value = match e.expr {
            Expr::Load {
                param,
                index: ix,
                dynamic,
            } => {
                let base = index(&ix, self.suffix());
                let Some(d) = dynamic else {
                    let v = match self.lane {
                        // A contiguous load: lane `l` of the group's vector load.
                        Some(l) if ix.strides[self.k.n_parallel - 1] == 1 => {
                            lane_value(&format!("L{i}.v[{l}]"), dt)
                        }
                        _ => load(param.index(), &base, dt),
                    };
                    let name = self.var(i);
                    self.line(format!("const {ty} {name} = {v};"));
                    return Ok(());
                };
                let vdt = self.dtype(d.value.0 as usize);
                let x = format!("v{}", d.value.0);
                let w = match rep(vdt)? {
                    Rep::Int { signed: true, .. } => format!("(i64){x}"),
                    Rep::Int { .. } | Rep::Bool => format!("(i64)(u64){x}"),
                    _ => return Err(unsupported("an index", vdt)),
                };
                let wrap = d.wrap && !vdt.is_unsigned() && vdt != DType::Bool;
                self.line(format!("const i64 w{i} = {w};"));
                if wrap {
                    self.line(format!(
                        "const i64 x{i} = w{i} < 0 ? w{i} + {}ll : w{i};",
                        d.size
                    ));
                } else {
                    self.line(format!("const i64 x{i} = w{i};"));
                }
                self.line(format!("{ty} v{i};"));
                self.open(format!("if ((u64)x{i} < {}ull)", d.size));
                let at = format!("{base} + x{i} * {}ll", d.stride);
                let v = load(param.index(), &at, dt);
                self.line(format!("v{i} = {v};"));
                self.depth -= 1;
                self.open("} else");
                self.line(format!("v{i} = ({ty})0;"));
                self.line(format!(
                    "lf_set_status(status, {}ull, (u64)w{i}, {}ull, {i}ull);",
                    Status::IndexOutOfRange as u64,
                    d.size
                ));
                self.close();
                return Ok(());
            }
            Expr::Const(c) => constant(c, dt)?,
            Expr::LoopIndex { dim } => match (r, self.lane) {
                (Rep::Int { c, .. }, Some(l)) if dim + 1 == self.k.n_parallel => {
                    format!("({c})(i{dim} + {l})")
                }
                (Rep::Int { c, .. }, _) => format!("({c})i{dim}"),
                _ => return Err(CodegenError::Malformed("a non-integer loop index".into())),
            },
            Expr::Unary { op, x } => {
                let xdt = self.dtype(x.0 as usize);
                unary(op, &self.var(x.0 as usize), xdt)?
            }
            Expr::UnaryParam { op, x } => unary_param(op, &self.var(x.0 as usize), dt)?,
            Expr::Binary { op, a, b } => {
                let adt = self.dtype(a.0 as usize);
                let (x, y) = (self.var(a.0 as usize), self.var(b.0 as usize));
                binary(op, &x, &y, adt)?
            }
            Expr::Where { cond, a, b } => format!(
                "({} ? {} : {})",
                self.var(cond.0 as usize),
                self.var(a.0 as usize),
                self.var(b.0 as usize)
            ),
            Expr::Cast { x } => {
                let from = self.dtype(x.0 as usize);
                cast(&self.var(x.0 as usize), from, dt)?
            }
            Expr::Reduce { op, x } => self.finish_acc(i, op, x.0 as usize)?,
            Expr::Scan { op, x } => {
                self.scan_step(i, op, x.0 as usize)?;
                return Ok(());
            }
        };
        let name = self.var(i);
        self.line(format!("const {ty} {name} = {value};"));
        Ok(())
    }

    /// The C type a reduction of `xdt` values accumulates in.
    pub(super) fn acc_type(op: Accum, xdt: DType) -> Result<&'static str, CodegenError> {
        match semantics::accumulator(op, xdt) {
            Some(acc) => Ok(reg(rep(acc)?)),
            None => Err(unsupported(format!("reduce {op:?}"), xdt)),
        }
    }

    pub(super) fn init_accs(&mut self, phase: u32) -> Result<(), CodegenError> {
        for (i, op, x) in self.k.phase_reductions(phase) {
            if !self.needed[i] {
                continue;
            }
            let xdt = self.dtype(x.0 as usize);
            let ty = Self::acc_type(op, xdt)?;
            let init = start(semantics::identity(op, xdt), ty);
            self.line(format!("{ty} a{i} = {init};"));
            if self.compensated(op, xdt) {
                self.line(format!("{ty} c{i} = ({ty})0;"));
            }
            if matches!(op, Accum::ArgMax | Accum::ArgMin) {
                self.line(format!("i64 ai{i} = 0;"));
            }
        }
        Ok(())
    }

    pub(super) fn compensated(&self, op: Accum, xdt: DType) -> bool {
        semantics::compensated(op, xdt, self.math)
    }

    pub(super) fn update_accs(&mut self, phase: u32) -> Result<(), CodegenError> {
        for (i, op, x) in self.k.phase_reductions(phase) {
            if !self.needed[i] {
                continue;
            }
            let xi = x.0 as usize;
            let xdt = self.dtype(xi);
            let r = rep(xdt)?;
            let v = format!("v{xi}");
            let a = format!("a{i}");
            let float = matches!(r, Rep::F32 | Rep::F64);
            let next = match (op, r) {
                (Accum::Sum, _) if float => {
                    let w = if xdt == DType::F32 {
                        format!("(double){v}")
                    } else {
                        v.clone()
                    };
                    if self.compensated(op, xdt) {
                        // Neumaier: the add's rounding error joins c, taken from the
                        // operand of larger magnitude (interp::reduce::sum).
                        let ty = Self::acc_type(op, xdt)?;
                        self.open("");
                        self.line(format!("const {ty} x = {w};"));
                        self.line(format!("const {ty} t = {a} + x;"));
                        self.line(format!(
                            "c{i} += lf_fabs({a}) >= lf_fabs(x) ? ({a} - t) + x : (x - t) + {a};"
                        ));
                        self.line(format!("{a} = t;"));
                        self.close();
                        continue;
                    }
                    // (float32 values widened into the double accumulator)
                    combine(op, r, xdt, &a, &w).expect("float sums combine")
                }
                (Accum::ArgMax | Accum::ArgMin, _) => {
                    let better = replaces(semantics::arg_reduce_rule(op), &v, &a, float);
                    self.open("");
                    self.line(format!("const bool take = pos == 0 || {better};"));
                    self.line(format!("if (take) {{ {a} = {v}; ai{i} = pos; }}"));
                    self.close();
                    continue;
                }
                _ => combine(op, r, xdt, &a, &v)
                    .ok_or_else(|| unsupported(format!("reduce {op:?}"), xdt))?,
            };
            self.line(format!("{a} = {next};"));
        }
        Ok(())
    }

    /// The reduction's value after its loop (the expression's value in its dtype).
    pub(super) fn finish_acc(
        &mut self,
        i: usize,
        op: Accum,
        xi: usize,
    ) -> Result<String, CodegenError> {
        let xdt = self.dtype(xi);
        if matches!(op, Accum::ArgMax | Accum::ArgMin) {
            return Ok(format!("ai{i}"));
        }
        let mut v = format!("a{i}");
        if self.compensated(op, xdt) {
            // s + c, except where that is NaN from an infinite s: then s.
            let ty = Self::acc_type(op, xdt)?;
            self.line(format!("const {ty} s{i} = a{i} + c{i};"));
            v = format!("((s{i} != s{i} && a{i} == a{i}) ? a{i} : s{i})");
        }
        Ok(if op == Accum::Sum && self.dtype(i) == DType::F32 {
            format!("(float){v}")
        } else {
            v
        })
    }

    /// The C type of a scan's running value over `xdt` values
    /// ([`semantics::scan_state`]).
    pub(super) fn scan_type(op: ScanAccum, xdt: DType) -> Result<&'static str, CodegenError> {
        Ok(reg(rep(semantics::scan_state(op, xdt))?))
    }

    pub(super) fn init_scans(&mut self, phase: u32) -> Result<(), CodegenError> {
        for (i, op, x) in self.k.phase_scans(phase) {
            if !self.needed[i] {
                continue;
            }
            let (xdt, dt) = (self.dtype(x.0 as usize), self.dtype(i));
            if op.output_dtype(xdt) != Some(dt) {
                return Err(unsupported(format!("scan {op:?}"), xdt));
            }
            let ty = Self::scan_type(op, xdt)?;
            let init = start(semantics::scan_start(op, xdt), ty);
            self.line(format!("{ty} a{i} = {init};"));
            if matches!(op, ScanAccum::ArgMax | ScanAccum::ArgMin) {
                self.line(format!("i64 ai{i} = 0;"));
            }
        }
        Ok(())
    }

    pub(super) fn scan_step(
        &mut self,
        i: usize,
        op: ScanAccum,
        xi: usize,
    ) -> Result<(), CodegenError> {
        let xdt = self.dtype(xi);
        let dt = self.dtype(i);
        let r = rep(xdt)?;
        let v = format!("v{xi}");
        let a = format!("a{i}");
        let float = matches!(r, Rep::F32 | Rep::F64);
        let out_ty = reg(rep(dt)?);
        match op {
            ScanAccum::Sum | ScanAccum::Prod => {
                let sym = if op == ScanAccum::Sum { "+" } else { "*" };
                let next = if float {
                    let w = if xdt == DType::F32 {
                        format!("(double){v}")
                    } else {
                        v.clone()
                    };
                    format!("{a} {sym} {w}")
                } else if let Rep::Int { c, .. } = r {
                    format!("({c})((u64){a} {sym} (u64){v})")
                } else {
                    return Err(unsupported(format!("scan {op:?}"), xdt));
                };
                self.line(format!("{a} = {next};"));
                let out = if xdt == DType::F32 {
                    format!("(float){a}")
                } else {
                    round(a.clone(), xdt)
                };
                self.line(format!("const {out_ty} v{i} = {out};"));
            }
            ScanAccum::Max | ScanAccum::Min | ScanAccum::ArgMax | ScanAccum::ArgMin => {
                let wins = replaces(semantics::scan_rule(op), &v, &a, float);
                self.line(format!("const bool t{i} = pos == 0 || {wins};"));
                self.line(format!("if (t{i}) {a} = {v};"));
                if matches!(op, ScanAccum::ArgMax | ScanAccum::ArgMin) {
                    self.line(format!("if (t{i}) ai{i} = pos;"));
                    self.line(format!("const i64 v{i} = ai{i};"));
                } else {
                    self.line(format!("const {out_ty} v{i} = {a};"));
                }
            }
            ScanAccum::LogAddExp => {
                let w = if r == Rep::F64 {
                    v.clone()
                } else {
                    format!("(double){v}")
                };
                self.line(format!("{a} = lf_scan_log_add_exp({w}, {a});"));
                let out = if r == Rep::F64 {
                    a.clone()
                } else {
                    round(format!("(float){a}"), xdt)
                };
                self.line(format!("const {out_ty} v{i} = {out};"));
            }
        }
        Ok(())
    }
}

/// Whether candidate `x` replaces the running `best` under `rule` (the first
/// position aside), as a C condition. Floats: `x` beats `best` (`>`, or `>=` where
/// ties replace) or `x` is NaN, and, where a NaN best stays, `best` is not NaN (an
/// ordered compare with a NaN is false). Integers and bools: the compare alone.
fn replaces(rule: semantics::Replace, x: &str, best: &str, float: bool) -> String {
    let cmp = match (rule.max, rule.ties) {
        (true, false) => ">",
        (true, true) => ">=",
        (false, false) => "<",
        (false, true) => "<=",
    };
    match (float, rule.nan_stays) {
        (false, _) => format!("({x} {cmp} {best})"),
        (true, false) => format!("({x} {cmp} {best} || {x} != {x})"),
        (true, true) => format!("(({x} {cmp} {best} || {x} != {x}) && {best} == {best})"),
    }
}
