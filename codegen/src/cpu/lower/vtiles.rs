//! Tile programs: a float16 or bfloat16 elementwise kernel whose values are
//! all of its one narrow dtype runs each run of a row as a sequence of calls
//! over float32 tiles on its stack (`lazyfuse_runtime::vector_runs`'
//! `lf_tile_*`, 16 or 8 lanes where the processor has them), one call per
//! load, op and store.
//!
//! Cranelift's vectors have four float32 lanes and no half-precision
//! conversion: inline, each float16 load takes a dozen integer steps to widen
//! and each op as many to round, several times the op itself. A tile program widens each input's
//! run into a tile (`lf_tile_widen_<dtype>`), computes each op from its
//! operands' tiles into its own, rounded to the dtype (`lf_tile_<op>_<dtype>`;
//! a transcendental takes its float32 run routine and `lf_tile_round_<dtype>`),
//! and narrows each stored tile into the output (`lf_narrow_<dtype>`).
//! Constants fill their tiles once per call of the kernel.
//!
//! The values are the inline code's and the interpreter's bit for bit: each op
//! computed in float32 from its operands' float32 values and rounded to the
//! dtype, in either math mode (the transcendentals' routines, which are
//! `vmath`'s fast forms, only in fast math where FMA exists, as output runs).

use super::vrun::run_symbol;
use super::{Lower, R};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::F32X4;
use cranelift_codegen::ir::{InstBuilder, Value};
use lazyfuse_ir::kernel::{Expr, LoopKernel, MathMode};
use lazyfuse_ir::{BinaryOp, DType, UnaryOp};

/// Points per tile: 1 KiB of float32. A program of a dozen tiles stays in L1
/// between its calls, and a call's fixed cost spreads over enough points.
pub(super) const TILE_POINTS: i64 = 256;

/// Shortest row (points along the last dim) a tile program takes: a row's
/// calls cost more than the inline code of a few points.
const MIN_TILE_ROW: usize = 32;

/// Most tiles of a program (one per needed expression): 32 KiB of stack.
const MAX_TILES: usize = 32;

/// A kernel's tile program (see the module doc).
#[derive(Clone, Debug)]
pub(super) struct TileProgram {
    /// the kernel's one dtype (float16 or bfloat16)
    pub(super) dtype: DType,
    /// each expression's tile (`None`: not needed)
    pub(super) tile: Vec<Option<u32>>,
    /// number of tiles
    pub(super) tiles: u32,
}

/// The symbol suffix of a narrow dtype.
pub(super) fn suffix(dt: DType) -> &'static str {
    if dt == DType::F16 {
        "f16"
    } else {
        "bf16"
    }
}

/// The tile op of a unary op (`relu`, `neg`, `abs`).
fn unary_name(op: UnaryOp) -> Option<&'static str> {
    Some(match op {
        UnaryOp::Relu => "relu",
        UnaryOp::Neg => "neg",
        UnaryOp::Abs => "abs",
        _ => return None,
    })
}

/// The tile op of a binary op.
fn binary_name(op: BinaryOp) -> Option<&'static str> {
    Some(match op {
        BinaryOp::Add => "add",
        BinaryOp::Sub => "sub",
        BinaryOp::Mul => "mul",
        BinaryOp::Div => "div",
        BinaryOp::Maximum => "max",
        BinaryOp::Minimum => "min",
        _ => return None,
    })
}

/// The tile program of `k`, where it has one: an elementwise kernel with rows
/// of at least [`MIN_TILE_ROW`] points whose needed expressions are all of one
/// dtype, float16 or bfloat16: loads contiguous along the row (static, of a
/// buffer the kernel does not write), constants, the ops of [`unary_name`] and
/// [`binary_name`], and (in fast math with FMA) transcendentals with a float32
/// run routine; its stores of that dtype, contiguous along the row; at least
/// one op.
pub(super) fn tile_program(
    k: &LoopKernel,
    needed: &[bool],
    math: MathMode,
    fma: bool,
) -> Option<TileProgram> {
    let np = k.n_parallel;
    if np == 0 || np != k.dims.len() || k.phases() > 0 || k.dims[np - 1] < MIN_TILE_ROW {
        return None;
    }
    let dt = k.params[k.stores.first()?.param.index()].dtype;
    if !matches!(dt, DType::F16 | DType::BF16) {
        return None;
    }
    let written = k.written_bufs();
    let routines = math == MathMode::Fast && fma;
    let mut tile = vec![None; k.exprs.len()];
    let mut tiles = 0u32;
    let mut ops = 0;
    // (every needed expression is of `dt`, so every operand is: an operand of
    // a needed expression is needed)
    for (i, e) in k.exprs.iter().enumerate() {
        if !needed[i] {
            continue;
        }
        if e.dtype != dt {
            return None;
        }
        let ok = match &e.expr {
            Expr::Load { .. } => {
                k.vector_load(&e.expr, np - 1, &written)
                    .is_some_and(|(p, index)| {
                        index.strides[np - 1] == 1 && k.params[p.index()].dtype == dt
                    })
            }
            Expr::Const(_) => true,
            Expr::Unary { op, .. } => {
                unary_name(*op).is_some() || (routines && run_symbol(&e.expr, DType::F32).is_some())
            }
            Expr::UnaryParam { .. } => routines && run_symbol(&e.expr, DType::F32).is_some(),
            Expr::Binary { op, .. } => binary_name(*op).is_some(),
            _ => false,
        };
        if !ok {
            return None;
        }
        ops += usize::from(!matches!(e.expr, Expr::Load { .. } | Expr::Const(_)));
        tile[i] = Some(tiles);
        tiles += 1;
    }
    let stores_ok = k.stores.iter().all(|s| {
        k.params[s.param.index()].dtype == dt
            && k.exprs[s.value.0 as usize].dtype == dt
            && s.index.strides[np - 1] == 1
    });
    (stores_ok && ops > 0 && (tiles as usize) <= MAX_TILES).then_some(TileProgram {
        dtype: dt,
        tile,
        tiles,
    })
}

impl Lower<'_, '_> {
    /// The program's tiles: one stack slot of [`TILE_POINTS`] float32 per
    /// tile, on a cache line ([`Lower::line_slot`]), its constants' tiles
    /// filled (here, in the function's entry block, which dominates every
    /// row). Returns the tiles' address.
    pub(super) fn tile_slot(&mut self, prog: &TileProgram) -> R<Value> {
        let slot = self.line_slot(TILE_POINTS as u32 * 4 * prog.tiles);
        let base = self.line_address(slot);
        for (i, e) in self.k.exprs.iter().enumerate() {
            let (Expr::Const(c), Some(t)) = (&e.expr, prog.tile[i]) else {
                continue;
            };
            let v = self.constant(*c, e.dtype)?;
            let v = self.b.ins().splat(F32X4, v);
            let at = self
                .b
                .ins()
                .iadd_imm_s(base, i64::from(t) * TILE_POINTS * 4);
            self.counted_loop(TILE_POINTS / 4, &mut |s, j| {
                let off = s.b.ins().imul_imm_s(j, 16);
                let addr = s.b.ins().iadd(at, off);
                s.b.ins().store(super::flags(), v, addr, 0);
                Ok(())
            })?;
        }
        Ok(base)
    }

    /// The current row's points from the last dim's index up to `re`, a run of
    /// at most [`TILE_POINTS`] at a time through the program (`base`: its
    /// tiles, [`Lower::tile_slot`]).
    pub(super) fn tile_runs(&mut self, prog: &TileProgram, base: Value, re: Value) -> R<()> {
        let last = self.idx[self.k.n_parallel - 1];
        let sfx = suffix(prog.dtype);
        let head = self.b.create_block();
        let body = self.b.create_block();
        let after = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let iv = self.b.use_var(last);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, iv, re);
        self.b.ins().brif(more, body, &[], after, &[]);
        self.b.switch_to_block(body);
        let iv = self.b.use_var(last);
        let full = self.b.ins().iadd_imm_s(iv, TILE_POINTS);
        let ce = self.b.ins().smin(full, re);
        let n = self.b.ins().isub(ce, iv);
        let tile_at = |s: &mut Self, id: usize| -> Value {
            let t = prog.tile[id].expect("needed expressions have tiles");
            s.b.ins().iadd_imm_s(base, i64::from(t) * TILE_POINTS * 4)
        };
        for i in 0..self.k.exprs.len() {
            if prog.tile[i].is_none() {
                continue;
            }
            let e = self.k.exprs[i].clone();
            let dst = tile_at(self, i);
            // (a value that only stores read is rounded by its store's
            // narrowing, `vnarrow::store_rounded`; an op that gives one of its
            // operands' values is on the dtype's grid already,
            // `vnarrow::returns_operand`)
            let rounded = self.store_rounds[i] || super::vnarrow::returns_operand(self.k, i);
            let op_sfx = if rounded { "f32" } else { sfx };
            match e.expr {
                Expr::Load { param, index, .. } => {
                    let src = self.address(param.index(), &index.offset, &index.strides, None)?;
                    self.call_void(&format!("lf_tile_widen_{sfx}"), &[dst, src, n])?;
                }
                Expr::Const(_) => {}
                Expr::Binary { op, a, b } => {
                    let name = binary_name(op).expect("tile_program admits the op");
                    let (a, b) = (tile_at(self, a.0 as usize), tile_at(self, b.0 as usize));
                    self.call_void(&format!("lf_tile_{name}_{op_sfx}"), &[dst, a, b, n])?;
                }
                Expr::Unary { op, x } if unary_name(op).is_some() => {
                    let name = unary_name(op).expect("checked");
                    let x = tile_at(self, x.0 as usize);
                    self.call_void(&format!("lf_tile_{name}_{op_sfx}"), &[dst, x, n])?;
                }
                ref other => {
                    // a transcendental: its float32 routine, then the rounding
                    let (routine, x) =
                        run_symbol(other, DType::F32).expect("tile_program admits the op");
                    let x = tile_at(self, x.0 as usize);
                    self.call_void(&format!("lf_run_{routine}"), &[dst, x, n])?;
                    if !self.store_rounds[i] {
                        self.call_void(&format!("lf_tile_round_{sfx}"), &[dst, dst, n])?;
                    }
                }
            }
        }
        for s in self.k.stores.clone() {
            let addr = self.address(s.param.index(), &s.index.offset, &s.index.strides, None)?;
            let src = tile_at(self, s.value.0 as usize);
            let dt = self.k.params[s.param.index()].dtype;
            let symbol = self.narrow_routine(s.param.index(), dt, TILE_POINTS as usize);
            self.call_void(symbol, &[addr, src, n])?;
        }
        self.b.def_var(last, ce);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(after);
        Ok(())
    }
}
