//! CUDA C's rendering of the shared lowering ([`Emitter`]).

use super::emit::Emit;
use super::{
    binary, cast, constant, index, lane_value, load, reg, rep, stored_bits, unary, unary_param,
    unsupported, Rep,
};
use crate::emitter::Emitter;
use crate::CodegenError;
use lazyfuse_ir::kernel::{
    Accum, Affine, Const, DynIndex, ExprId, LoopKernel, ParamId, ScanAccum, Stage, Status, StoreOp,
};
use lazyfuse_ir::{BinaryOp, DType, UnaryOp, UnaryParamOp};

/// CUDA C's rendering of the shared lowering: a value is the text of a C
/// expression, which [`Emitter::define`] declares as a `const` variable (`None`:
/// the method declared the variable itself, as a checked load's branches and a
/// scan's running state do). A phase's reduction loop is nested `for` loops over
/// the reduction dims, or, in a block-per-point kernel, a loop that strides over
/// the points by the block's threads and combines their partials after it.
impl<'k> Emitter<'k> for Emit<'k> {
    type Value = Option<String>;

    fn kernel(&self) -> &'k LoopKernel {
        self.k
    }

    fn needed(&self, i: usize) -> bool {
        self.needed[i]
    }

    fn represent(&self, dt: DType) -> Result<(), CodegenError> {
        rep(dt).map(|_| ())
    }

    fn emit_load(
        &mut self,
        i: usize,
        param: ParamId,
        ix: &Affine,
        dynamic: Option<&DynIndex>,
    ) -> Result<Option<String>, CodegenError> {
        let dt = self.dtype(i);
        let ty = reg(rep(dt)?);
        let base = index(ix, self.suffix());
        let Some(d) = dynamic else {
            return Ok(Some(match self.lane {
                // A contiguous load: lane `l` of the group's vector load.
                Some(l) if ix.strides[self.k.n_parallel - 1] == 1 => {
                    lane_value(&format!("L{i}.v[{l}]"), dt)
                }
                _ => load(param.index(), &base, dt),
            }));
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
        Ok(None)
    }

    fn emit_const(&mut self, i: usize, c: Const) -> Result<Option<String>, CodegenError> {
        constant(c, self.dtype(i)).map(Some)
    }

    fn emit_loop_index(&mut self, i: usize, dim: usize) -> Result<Option<String>, CodegenError> {
        Ok(Some(match (rep(self.dtype(i))?, self.lane) {
            (Rep::Int { c, .. }, Some(l)) if dim + 1 == self.k.n_parallel => {
                format!("({c})(i{dim} + {l})")
            }
            (Rep::Int { c, .. }, _) => format!("({c})i{dim}"),
            _ => return Err(CodegenError::Malformed("a non-integer loop index".into())),
        }))
    }

    fn emit_unary(
        &mut self,
        _: usize,
        op: UnaryOp,
        x: ExprId,
    ) -> Result<Option<String>, CodegenError> {
        let xdt = self.dtype(x.0 as usize);
        unary(op, &self.var(x.0 as usize), xdt).map(Some)
    }

    fn emit_unary_param(
        &mut self,
        i: usize,
        op: UnaryParamOp,
        x: ExprId,
    ) -> Result<Option<String>, CodegenError> {
        unary_param(op, &self.var(x.0 as usize), self.dtype(i)).map(Some)
    }

    fn emit_binary(
        &mut self,
        _: usize,
        op: BinaryOp,
        a: ExprId,
        b: ExprId,
    ) -> Result<Option<String>, CodegenError> {
        let adt = self.dtype(a.0 as usize);
        let (x, y) = (self.var(a.0 as usize), self.var(b.0 as usize));
        binary(op, &x, &y, adt).map(Some)
    }

    fn emit_where(
        &mut self,
        _: usize,
        cond: ExprId,
        a: ExprId,
        b: ExprId,
    ) -> Result<Option<String>, CodegenError> {
        Ok(Some(format!(
            "({} ? {} : {})",
            self.var(cond.0 as usize),
            self.var(a.0 as usize),
            self.var(b.0 as usize)
        )))
    }

    fn emit_cast(&mut self, i: usize, x: ExprId) -> Result<Option<String>, CodegenError> {
        let from = self.dtype(x.0 as usize);
        cast(&self.var(x.0 as usize), from, self.dtype(i)).map(Some)
    }

    fn emit_reduce(
        &mut self,
        i: usize,
        op: Accum,
        x: ExprId,
    ) -> Result<Option<String>, CodegenError> {
        self.finish_acc(i, op, x.0 as usize).map(Some)
    }

    fn emit_scan(
        &mut self,
        i: usize,
        op: ScanAccum,
        x: ExprId,
    ) -> Result<Option<String>, CodegenError> {
        self.scan_step(i, op, x.0 as usize)?;
        Ok(None)
    }

    fn define(&mut self, i: usize, v: Option<String>) -> Result<(), CodegenError> {
        if let Some(v) = v {
            let ty = reg(rep(self.dtype(i))?);
            let name = self.var(i);
            self.line(format!("const {ty} {name} = {v};"));
        }
        Ok(())
    }

    fn store(&mut self, s: &StoreOp, stage: Stage) -> Result<(), CodegenError> {
        // In a block-per-point kernel, outer-stage values are every thread's;
        // thread 0 stores them.
        let guard = if self.block && matches!(stage, Stage::Outer(_)) {
            "if (threadIdx.x == 0) "
        } else {
            ""
        };
        let dt = self.k.params[s.param.index()].dtype;
        let bits = stored_bits(&format!("v{}", s.value.0), dt);
        let idx = index(&s.index, self.suffix());
        self.line(format!("{guard}{}[{idx}] = {bits};", s.param));
        Ok(())
    }

    fn begin_phase(&mut self, phase: u32) -> Result<(), CodegenError> {
        self.init_accs(phase)?;
        self.init_scans(phase)?;
        if self.block {
            // Thread 0's outer-stage stores are visible before the phase reads.
            self.line("__syncthreads();");
        }
        Ok(())
    }

    fn reduction_loop(
        &mut self,
        _: u32,
        points: usize,
        mut body: impl FnMut(&mut Self) -> Result<(), CodegenError>,
    ) -> Result<(), CodegenError> {
        let k = self.k;
        let (np, nd) = (k.n_parallel, k.dims.len());
        if self.block {
            // Thread `t` takes points `t`, `t + blockDim.x`, …
            let it = self.index_type();
            self.open(format!(
                "for (i64 r = threadIdx.x; r < {points}ll; r += blockDim.x)"
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
            body(self)?;
            self.close();
            for d in np..nd {
                self.line(format!("i{d} = 0;"));
            }
            return Ok(());
        }
        self.open("");
        self.line("i64 pos = 0;");
        for d in np..nd {
            self.open(format!(
                "for (i{d} = 0; i{d} < {}{}; ++i{d})",
                k.dims[d],
                self.suffix()
            ));
        }
        body(self)?;
        self.line("++pos;");
        for _ in np..nd {
            self.close();
        }
        for d in np..nd {
            self.line(format!("i{d} = 0;"));
        }
        self.line("(void)pos;");
        self.close();
        Ok(())
    }

    fn update_accs(&mut self, phase: u32) -> Result<(), CodegenError> {
        self.fold_accs(phase)
    }

    fn end_phase(&mut self, phase: u32) -> Result<(), CodegenError> {
        if self.block {
            // What this phase's threads stored is visible to the whole block
            // before anything later reads it (`lf_block_reduce` synchronizes too,
            // but a phase may reduce nothing).
            self.line("__syncthreads();");
            self.combine_accs(phase)?;
        }
        Ok(())
    }
}
