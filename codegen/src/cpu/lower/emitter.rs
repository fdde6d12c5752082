//! Cranelift's rendering of the shared lowering ([`Emitter`]): values are SSA
//! values kept in `Lower::vals`; a phase's reduction loop is a flat loop over its
//! points (an odometer over the reduction dims) that Fast mode's vector phase may
//! start part way.

use super::{flags, reg, rep, Lower, R};
use crate::emitter::Emitter;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{BlockArg, InstBuilder, Value};
use lazyfuse_ir::kernel::{
    Accum, Affine, Const, DynIndex, ExprId, LoopKernel, ParamId, ScanAccum, Stage, Status, StoreOp,
};
use lazyfuse_ir::{BinaryOp, DType, UnaryOp, UnaryParamOp};

/// Reductions over at most this many points run as straight-line code rather
/// than a loop (in kernels of `SMALL_BLOCK_MIN_POINTS` points or more: in smaller
/// ones the loop's compile time is what counts).
const SMALL_REDUCTION: usize = 8;

impl<'k> Emitter<'k> for Lower<'k, '_> {
    type Value = Value;

    fn kernel(&self) -> &'k LoopKernel {
        self.k
    }

    fn needed(&self, i: usize) -> bool {
        self.needed[i]
    }

    fn represent(&self, dt: DType) -> R<()> {
        rep(dt).map(|_| ())
    }

    fn emit_load(
        &mut self,
        i: usize,
        param: ParamId,
        index: &Affine,
        dynamic: Option<&DynIndex>,
    ) -> R<Value> {
        let dt = self.k.exprs[i].dtype;
        let Some(d) = dynamic else {
            let addr = self.address(param.index(), &index.offset, &index.strides, None)?;
            return self.load(addr, dt);
        };
        let vdt = self.dtype(d.value);
        let v = self.val(d.value);
        let w = self.widen_int(v, vdt)?;
        // Only signed values wrap from the end (a uint64 above 2^63 is large, not
        // negative), and only where the op wraps; unwrapped, a negative value is
        // huge as unsigned and fails the check below.
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
        let r = rep(dt)?;
        let out = self.b.append_block_param(merge, reg(r));
        self.b.ins().brif(ok, good, &[], bad, &[]);
        self.b.switch_to_block(good);
        let extra = self.b.ins().imul_imm_s(wrapped, d.stride);
        let addr = self.address(param.index(), &index.offset, &index.strides, Some(extra))?;
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

    fn emit_const(&mut self, i: usize, c: Const) -> R<Value> {
        self.constant(c, self.k.exprs[i].dtype)
    }

    fn emit_loop_index(&mut self, i: usize, dim: usize) -> R<Value> {
        let v = self.b.use_var(self.idx[dim]);
        self.index_value(v, rep(self.k.exprs[i].dtype)?)
    }

    fn emit_unary(&mut self, i: usize, op: UnaryOp, x: ExprId) -> R<Value> {
        if let Some(v) = self.readback_scalar(i)? {
            return Ok(v);
        }
        let xdt = self.dtype(x);
        let v = self.val(x);
        self.unary(op, v, xdt)
    }

    fn emit_unary_param(&mut self, i: usize, op: UnaryParamOp, x: ExprId) -> R<Value> {
        if let Some(v) = self.readback_scalar(i)? {
            return Ok(v);
        }
        let v = self.val(x);
        self.unary_param(op, v, self.k.exprs[i].dtype)
    }

    fn emit_binary(&mut self, _: usize, op: BinaryOp, a: ExprId, b: ExprId) -> R<Value> {
        let adt = self.dtype(a);
        let (x, y) = (self.val(a), self.val(b));
        self.binary(op, x, y, adt)
    }

    fn emit_where(&mut self, _: usize, cond: ExprId, a: ExprId, b: ExprId) -> R<Value> {
        let c = self.val(cond);
        let (x, y) = (self.val(a), self.val(b));
        Ok(self.b.ins().select(c, x, y))
    }

    fn emit_cast(&mut self, i: usize, x: ExprId) -> R<Value> {
        let from = self.dtype(x);
        let v = self.val(x);
        self.cast(v, from, self.k.exprs[i].dtype)
    }

    fn emit_reduce(&mut self, i: usize, _: Accum, _: ExprId) -> R<Value> {
        self.finish_acc(i)
    }

    fn emit_scan(&mut self, i: usize, op: ScanAccum, x: ExprId) -> R<Value> {
        self.scan_step(i, op, x)
    }

    fn define(&mut self, i: usize, v: Value) -> R<()> {
        self.vals[i] = Some(v);
        Ok(())
    }

    fn store(&mut self, s: &StoreOp, _: Stage) -> R<()> {
        // (a row's tail in a chain pass writes the pass's target into the run)
        let value = match self.run {
            Some(r) if self.k.stores[r.store] == *s => self.run_target.unwrap_or(s.value),
            _ => s.value,
        };
        let v = self.val(value);
        let tile = match self.run {
            Some(r) if self.k.stores[r.store] == *s => self.tile_address(r.store, 0),
            _ => None,
        };
        if let Some(addr) = tile {
            // (a narrow run's argument: the float32 value, rounded)
            self.b.ins().store(flags(), v, addr, 0);
            return Ok(());
        }
        let dt = self.k.params[s.param.index()].dtype;
        let addr = self.address(s.param.index(), &s.index.offset, &s.index.strides, None)?;
        let stored = self.storage_bits(v, dt)?;
        self.b.ins().store(flags(), stored, addr, 0);
        Ok(())
    }

    fn begin_phase(&mut self, phase: u32) -> R<()> {
        self.init_accs(phase)?;
        self.init_scans(phase)
    }

    fn reduction_loop(
        &mut self,
        phase: u32,
        points: usize,
        mut body: impl FnMut(&mut Self) -> R<()>,
    ) -> R<()> {
        let nd = self.k.dims.len();
        // Fast mode: whole vectors first where the phase allows it, then the
        // scalar loop below does the rest from `start`.
        let start = self.vector_phase(phase)?;
        let zero = self.iconst(I64, 0);
        for d in self.k.n_parallel..nd {
            self.b.def_var(self.idx[d], zero);
        }
        let parallel: usize = self.k.dims[..self.k.n_parallel].iter().product();
        if start == 0
            && points <= SMALL_REDUCTION
            && parallel * points >= super::skeleton::SMALL_BLOCK_MIN_POINTS
        {
            // Straight-line points in order, indices as constants: the same
            // values in the same order as the loop, without its bounds and
            // odometer, which cost more than a few points (a pooling window).
            for j in 0..points {
                self.set_index_constant(self.k.n_parallel..nd, j);
                let at = self.iconst(I64, j as i64);
                self.b.def_var(self.pos, at);
                body(self)?;
            }
            for d in self.k.n_parallel..nd {
                self.b.def_var(self.idx[d], zero);
            }
            return Ok(());
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
            .icmp_imm_s(IntCC::SignedLessThan, pv, points as i64);
        self.b.ins().brif(more, bodyb, &[], after, &[]);
        self.b.switch_to_block(bodyb);
        body(self)?;
        self.odometer(self.k.n_parallel..nd);
        let pv = self.b.use_var(self.pos);
        let pn = self.b.ins().iadd_imm_s(pv, 1);
        self.b.def_var(self.pos, pn);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(after);
        Ok(())
    }

    fn update_accs(&mut self, phase: u32) -> R<()> {
        self.fold_accs(phase)
    }

    fn end_phase(&mut self, phase: u32) -> R<()> {
        // Inner values die with the loop.
        for (i, e) in self.k.exprs.iter().enumerate() {
            if e.stage == Stage::Inner(phase) {
                self.vals[i] = None;
            }
        }
        Ok(())
    }
}
