//! Tile programs: a float16 or bfloat16 elementwise kernel whose values are
//! all of its one narrow dtype runs each run of a row as a sequence of calls,
//! one per op, over the dtype's own 16-bit codes (`lazyfuse_runtime::
//! vector_runs`' `lf_ctile_*`, 32, 16 or 8 lanes where the processor has
//! them).
//!
//! Cranelift's vectors have four float32 lanes and no half-precision
//! conversion: inline, each float16 load takes a dozen integer steps to widen
//! and each op as many to round, several times the op itself. A tile program
//! reads each input's codes where they lie, computes each op from its
//! operands' codes into a tile of codes on its stack (`lf_ctile_<op>_<dtype>`:
//! widened, computed in float32, rounded, in registers; float16's add, sub,
//! mul and div as the processor's float16 instructions where it has them),
//! and computes the op that a store alone reads straight into the output's
//! run. Every value of such a kernel is a code of its dtype (its constants
//! too: each is folded to the dtype when the kernel is built), so the tiles
//! lose nothing. Constants fill their tiles once per call of the kernel.
//!
//! The values are the inline code's and the interpreter's bit for bit: each op
//! computed in float32 from its operands' values and rounded to the dtype, in
//! either math mode (the transcendentals' routines, which are `vmath`'s fast
//! forms, only in fast math where FMA exists, as output runs). In a kernel
//! that streams, one op per run (the first transcendental, or the first op)
//! asks for the inputs' lines ahead as it computes.

use super::vrun::{run_symbol, streams};
use super::{Lower, R};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I16, I16X8, I64};
use cranelift_codegen::ir::{InstBuilder, Value};
use lazyfuse_ir::kernel::{Const, Expr, ExprId, LoopKernel, MathMode};
use lazyfuse_ir::{BinaryOp, DType, UnaryOp};

/// Points per tile: 1 KiB of codes. A program of a dozen tiles stays in L1
/// between its calls, and a call's fixed cost spreads over enough points.
const TILE_POINTS: i64 = 512;

/// Bytes per tile.
const TILE_BYTES: i64 = TILE_POINTS * 2;

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

/// The dtype's code of constant `c`, where its value (`c as f32`, the
/// kernels' value of it) is on the dtype's grid: a constant folded to the
/// dtype (a NaN's payload included).
fn grid_code(c: Const, dt: DType) -> Option<u16> {
    let Const::Float(x) = c else { return None };
    let x = x as f32;
    let (code, back) = if dt == DType::F16 {
        let h = half::f16::from_f32(x);
        (h.to_bits(), h.to_f32())
    } else {
        let h = half::bf16::from_f32(x);
        (h.to_bits(), h.to_f32())
    };
    (back.to_bits() == x.to_bits()).then_some(code)
}

/// Most input runs a tile program's op asks ahead for.
const MAX_HINTS: usize = 8;

/// The op of a tile program that asks for the inputs' lines ahead: its first
/// transcendental, whose computing spreads the hints the most, or else its
/// first op.
fn hinting_op(k: &LoopKernel, prog: &TileProgram) -> Option<usize> {
    let ops = (0..k.exprs.len())
        .filter(|&i| prog.tile[i].is_some())
        .filter(|&i| !matches!(k.exprs[i].expr, Expr::Load { .. } | Expr::Const(_)));
    let heavy = |i: &usize| match k.exprs[*i].expr {
        Expr::Unary { op, .. } => unary_name(op).is_none(),
        Expr::UnaryParam { .. } => true,
        _ => false,
    };
    ops.clone().find(heavy).or_else(|| ops.clone().next())
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
/// buffer the kernel does not write), constants on the dtype's grid, the ops
/// of [`unary_name`] and
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
            Expr::Const(c) => grid_code(*c, dt).is_some(),
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
    /// The program's tiles: one stack slot of [`TILE_POINTS`] codes per tile,
    /// on a cache line ([`Lower::line_slot`]), its constants' tiles filled
    /// (here, in the function's entry block, which dominates every row).
    /// Returns the tiles' address.
    pub(super) fn tile_slot(&mut self, prog: &TileProgram) -> R<Value> {
        let slot = self.line_slot(TILE_BYTES as u32 * prog.tiles);
        let base = self.line_address(slot);
        for (i, e) in self.k.exprs.iter().enumerate() {
            let (Expr::Const(c), Some(t)) = (&e.expr, prog.tile[i]) else {
                continue;
            };
            let code = grid_code(*c, e.dtype).expect("tile_program admits the constant");
            let v = self.iconst(I16, i64::from(code));
            let v = self.b.ins().splat(I16X8, v);
            let at = self.b.ins().iadd_imm_s(base, i64::from(t) * TILE_BYTES);
            self.counted_loop(TILE_BYTES / 16, &mut |s, j| {
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
        self.tile_run(prog, base, n)?;
        self.b.def_var(last, ce);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(after);
        Ok(())
    }

    /// The runs of a tile program's inputs, for the lines ahead (`at`: each
    /// expression's run): their addresses stored in a stack slot, and how
    /// many (none where the kernel does not stream: its inputs stay in the
    /// caches).
    fn tile_hints(&mut self, prog: &TileProgram, at: &[Option<Value>]) -> R<(Value, Value)> {
        let k = self.k;
        let loads: Vec<Value> = (0..k.exprs.len())
            .filter(|&i| prog.tile[i].is_some() && matches!(k.exprs[i].expr, Expr::Load { .. }))
            .filter_map(|i| at[i])
            .take(MAX_HINTS)
            .collect();
        if loads.is_empty() || !streams(k) {
            let zero = self.iconst(I64, 0);
            return Ok((zero, zero));
        }
        let slot = self.line_slot(8 * MAX_HINTS as u32);
        let base = self.line_address(slot);
        for (j, &v) in loads.iter().enumerate() {
            self.b.ins().store(super::flags(), v, base, 8 * j as i32);
        }
        let count = self.iconst(I64, loads.len() as i64);
        Ok((base, count))
    }

    /// One run of a tile program (`n` points at the index): each op's codes
    /// from its operands' where they lie (an input's run, a tile, the output's
    /// run), the op that a store alone reads (of an output no other store
    /// writes) straight into the output, the other stores copied.
    fn tile_run(&mut self, prog: &TileProgram, base: Value, n: Value) -> R<()> {
        let sfx = suffix(prog.dtype);
        let k = self.k;
        let mut at: Vec<Option<Value>> = vec![None; k.exprs.len()];
        let mut copies = Vec::new();
        for (si, s) in k.stores.iter().enumerate() {
            let addr = self.address(s.param.index(), &s.index.offset, &s.index.strides, None)?;
            let v = s.value.0 as usize;
            let sole = |f: &dyn Fn(&lazyfuse_ir::kernel::StoreOp) -> bool| {
                k.stores.iter().filter(|&o| f(o)).count() == 1
            };
            let op = !matches!(k.exprs[v].expr, Expr::Load { .. } | Expr::Const(_));
            if op
                && at[v].is_none()
                && sole(&|o| o.param == s.param)
                && sole(&|o| o.value == s.value)
            {
                at[v] = Some(addr);
            } else {
                copies.push((si, addr));
            }
        }
        for (i, e) in k.exprs.iter().enumerate() {
            let Some(t) = prog.tile[i] else { continue };
            if at[i].is_none() {
                at[i] = Some(match &e.expr {
                    Expr::Load { param, index, .. } => {
                        self.address(param.index(), &index.offset, &index.strides, None)?
                    }
                    _ => self.b.ins().iadd_imm_s(base, i64::from(t) * TILE_BYTES),
                });
            }
        }
        let of = |id: ExprId| at[id.0 as usize].expect("needed operands have runs");
        let (hints, count) = self.tile_hints(prog, &at)?;
        let hinting = hinting_op(k, prog);
        let zero = self.iconst(I64, 0);
        for (i, (e, dst)) in k.exprs.iter().zip(&at).enumerate() {
            let Some(dst) = *dst else { continue };
            let (h, c) = if hinting == Some(i) {
                (hints, count)
            } else {
                (zero, zero)
            };
            match &e.expr {
                Expr::Load { .. } | Expr::Const(_) => {}
                Expr::Binary { op, a, b } => {
                    let name = binary_name(*op).expect("tile_program admits the op");
                    let args = [dst, of(*a), of(*b), n, h, c];
                    self.call_void(&format!("lf_ctile_{name}_{sfx}"), &args)?;
                }
                Expr::Unary { op, x } if unary_name(*op).is_some() => {
                    let name = unary_name(*op).expect("checked");
                    self.call_void(&format!("lf_ctile_{name}_{sfx}"), &[dst, of(*x), n, h, c])?;
                }
                other => {
                    let (routine, x) =
                        run_symbol(other, DType::F32).expect("tile_program admits the op");
                    let name = routine.strip_suffix("_f32").unwrap_or(routine);
                    self.call_void(&format!("lf_ctile_{name}_{sfx}"), &[dst, of(x), n, h, c])?;
                }
            }
        }
        for (si, addr) in copies {
            let src = of(k.stores[si].value);
            self.call_void("lf_ctile_copy", &[addr, src, n])?;
        }
        Ok(())
    }
}
