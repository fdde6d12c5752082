//! Affine runs: a reduction kernel's phase that only maps a contiguous row
//! through `((x - shift) ∘ scale) · w + b` — `∘` a multiply or divide by an
//! outer value, the shift, weight row and bias row each optional — calls the
//! precompiled routine `lazyfuse_runtime::vector_runs`' `lf_row_affine_<f32|f64>`
//! (16 or 8 lanes where the processor has them) over the row instead of
//! Cranelift's 128-bit loop; a float16 or bfloat16 row widened to float32 and
//! rounded at its store, with rows of weight and bias of its dtype, takes
//! `lf_row_affine_<f16|bf16>`, which widens and rounds a block at a time. A
//! layer norm's output phase (`(x - mean) / std · weight + bias`, or `· rstd`
//! in `nn`'s form) and softmax's last phase (its exps times `1 / sum`, read
//! back from the output: in place) are the two it exists for.
//!
//! A row shorter than `vreduce_run`'s [`MIN_ROUTINE_ROW`] keeps the loop,
//! unless its store rounds to float16 (which the loop does in a dozen integer
//! steps per vector).
//!
//! An output row apart from its source, of an output far larger than the
//! caches ([`STREAM_BYTES`]), is streamed out past them (`AFFINE_STREAM`).
//!
//! The routine computes what the vector loop would, bit for bit: the same
//! operations in the same order, and a product that an add takes fused as
//! `vector`'s `contract` fuses it (`y · w + b` is one FMA; with no weight,
//! `d · scale + b` is). Forms the routine does not have (a bias subtracted, a
//! scale on the left of a divide) keep the loop.

use super::vreduce_run::{routine_phase, short_row, MIN_ROUTINE_ROW};
use super::vrun::{phase_computes_only, row_load, widened_row};
use super::{Lower, R};
use cranelift_codegen::ir::types::I64;
use lazyfuse_ir::fast_math::{AFFINE_BIAS, AFFINE_DIVIDE, AFFINE_STREAM, AFFINE_WEIGHT};
use lazyfuse_ir::kernel::{Expr, ExprId, LoopKernel, MathMode, Stage};
use lazyfuse_ir::{BinaryOp, DType};

/// Smallest output, in bytes, whose rows an affine run streams past the
/// caches (`AFFINE_STREAM`): well past the last-level cache's share of a
/// core, so that nothing reads it back from there anyway (W5's output is 64
/// MiB).
pub(super) const STREAM_BYTES: usize = 16 << 20;

/// A phase's affine run (see the module doc).
#[derive(Clone, Copy)]
pub(super) struct AffineRun {
    /// the store (index into the kernel's stores)
    pub(super) store: usize,
    /// the contiguous load of `x`
    pub(super) load: ExprId,
    /// the outer value subtracted first
    pub(super) shift: Option<ExprId>,
    /// the outer value the row is multiplied or divided by
    pub(super) scale: ExprId,
    /// the contiguous load of the weight row
    pub(super) weight: Option<ExprId>,
    /// the contiguous load of the bias row
    pub(super) bias: Option<ExprId>,
    /// the routine's `form` bits (`lazyfuse_ir::fast_math::AFFINE_*`)
    pub(super) form: i64,
    /// the routine's symbol
    pub(super) symbol: &'static str,
    /// the earlier phase's expression whose row slot holds `x` (`load` is the
    /// expression that reads it back, see `vreduce::phase_reuses`): the
    /// routine reads the slot (`None`: `load` is a load)
    pub(super) slot: Option<usize>,
    /// a float16 or bfloat16 store of the float32 value: the routine rewrites
    /// the slot in place and `lf_narrow_<dtype>` (or its streamed form,
    /// `Lower::narrow_routine`) rounds it into the output
    pub(super) narrow: Option<DType>,
    /// the rows (`x`, the weight and bias) are float16 or bfloat16 codes
    /// widened to float32, and so is the store: the routine of that dtype
    /// (`lf_row_affine_<f16|bf16>`) reads and writes the codes
    pub(super) codes: bool,
}

/// Phase `ph`'s affine run, if it has one: fast math, the phase vectorizes,
/// reduces nothing, keeps and reuses no row (`reuses`), and its needed
/// expressions are exactly one store's value, float32 or float64, stored
/// contiguously, of the module doc's form. A fused product needs FMA (`fma`).
/// The weight and bias rows are of other buffers than the store's, and `x`
/// is too unless it reads the store's own slots (the routine then runs in
/// place).
pub(super) fn affine_run(
    k: &LoopKernel,
    ph: u32,
    needed: &[bool],
    reuses: &[(usize, usize)],
    math: MathMode,
    fma: bool,
) -> Option<AffineRun> {
    let nd = k.dims.len();
    let in_phase = |i: usize| k.exprs[i].stage == Stage::Inner(ph);
    let reduces = k.phase_reductions(ph).iter().any(|r| needed[r.0]);
    // (a row kept by an earlier phase and read back here alone, see
    // `reused_row`)
    let (here, others): (Vec<_>, Vec<_>) = reuses
        .iter()
        .copied()
        .partition(|&(a, b)| in_phase(a) || in_phase(b));
    if reduces || !routine_phase(k, ph, needed, &others, math) {
        return None;
    }
    let stores: Vec<usize> = (0..k.stores.len())
        .filter(|&s| in_phase(k.stores[s].value.0 as usize))
        .collect();
    let [si] = stores.as_slice() else {
        return None;
    };
    let st = &k.stores[*si];
    let stored = k.exprs[st.value.0 as usize].dtype;
    // A float16 or bfloat16 store of a float32 value (the mixed tier's cast,
    // one rounding) takes the float32 routine and the narrowing.
    let (value, dt, narrow) = match k.exprs[st.value.0 as usize].expr {
        Expr::Cast { x }
            if matches!(stored, DType::F16 | DType::BF16)
                && k.exprs[x.0 as usize].dtype == DType::F32 =>
        {
            (x, DType::F32, Some(stored))
        }
        _ => (st.value, stored, None),
    };
    // (a short row keeps the loop, unless the loop would round to float16)
    if short_row(k, MIN_ROUTINE_ROW) && narrow != Some(DType::F16) {
        return None;
    }
    // (a narrow store of narrow rows widened, and no row kept: the codes'
    // own routine)
    let codes = narrow.is_some() && here.is_empty();
    let symbol = match (dt, narrow) {
        (DType::F32, Some(DType::F16)) if codes => "lf_row_affine_f16",
        (DType::F32, Some(_)) if codes => "lf_row_affine_bf16",
        (DType::F32, _) => "lf_row_affine_f32",
        (DType::F64, _) => "lf_row_affine_f64",
        _ => return None,
    };
    let slot = reused_row(k, &here, reuses);
    let reused = |id: ExprId| slot.is_some_and(|(_, later)| later == id.0 as usize);
    let mut form = Form::of(k, value, dt, &reused, narrow.filter(|_| codes))?;
    let fused = form.bias.is_some() && (form.weight.is_some() || !form.divide);
    if fused && !fma {
        return None;
    }
    // The reused row is the routine's `x` or nothing is; a narrow store works
    // in that row's slot, and takes no fused product (the mixed tier's own
    // contraction is not the float32 loop's), or over the codes.
    let slot = slot.filter(|&(_, later)| later == form.load.0 as usize);
    let slot_narrow_ok = codes || narrow.is_none() || (slot.is_some() && !fused);
    if slot.is_none() != here.is_empty() || !slot_narrow_ok {
        return None;
    }
    // (what only the reused row needs is not the phase's work)
    let given = slot.map(|(_, later)| vec![later]).unwrap_or_default();
    let needed_here = k.needed_exprs_given(&given);
    let needed: Vec<bool> = needed
        .iter()
        .zip(&needed_here)
        .map(|(a, b)| *a && *b)
        .collect();
    if narrow.is_some() {
        form.chain.push(st.value);
    }
    let out = &k.params[st.param.index()];
    let buf_of = |id: ExprId| match k.exprs[id.0 as usize].expr {
        Expr::Load { param, .. } => Some(k.params[param.index()].buf),
        _ => None,
    };
    let rows_apart = [form.weight, form.bias]
        .iter()
        .flatten()
        .all(|&r| buf_of(r) != Some(out.buf));
    let x_in_out = buf_of(form.load) == Some(out.buf);
    let x_in_place_or_apart = match k.exprs[form.load.0 as usize].expr {
        Expr::Load { ref index, .. } if x_in_out => index == &st.index,
        _ => true,
    };
    let own: Vec<usize> = form.chain.iter().map(|e| e.0 as usize).collect();
    let alone = phase_computes_only(k, &needed, ph, &own);
    let stored_ok = st.index.strides[nd - 1] == 1 && out.dtype == stored;
    // (a row computed in place, or in the slot a narrow store rounds from, is
    // in the cache already)
    let in_place = slot.is_none() && x_in_out;
    let stream = narrow.is_none()
        && !in_place
        && out.len.saturating_mul(stored.size_in_bytes()) >= STREAM_BYTES;
    (alone && stored_ok && rows_apart && x_in_place_or_apart).then(|| AffineRun {
        store: *si,
        load: form.load,
        shift: form.shift,
        scale: form.scale,
        weight: form.weight,
        bias: form.bias,
        form: (form.divide as i64 * AFFINE_DIVIDE)
            | (form.weight.is_some() as i64 * AFFINE_WEIGHT)
            | (form.bias.is_some() as i64 * AFFINE_BIAS)
            | (stream as i64 * AFFINE_STREAM),
        symbol,
        slot: slot.map(|(earlier, _)| earlier),
        narrow: narrow.filter(|_| !codes),
        codes,
    })
}

/// The one row an earlier phase keeps that phase `ph` reads back (`here`: the
/// reuses touching `ph`), as `(earlier, later)`, where nothing else reads that
/// slot: the routine may then rewrite it in place.
fn reused_row(
    k: &LoopKernel,
    here: &[(usize, usize)],
    reuses: &[(usize, usize)],
) -> Option<(usize, usize)> {
    let [(earlier, later)] = here else {
        return None;
    };
    let read_once = reuses.iter().filter(|r| r.0 == *earlier).count() == 1;
    let from_before = k.exprs[*earlier].stage != k.exprs[*later].stage;
    (read_once && from_before).then_some((*earlier, *later))
}

/// A stored value taken apart into the routine's parts.
struct Form {
    load: ExprId,
    shift: Option<ExprId>,
    scale: ExprId,
    divide: bool,
    weight: Option<ExprId>,
    bias: Option<ExprId>,
    /// every expression of the value (the phase must compute nothing else)
    chain: Vec<ExprId>,
}

impl Form {
    /// `value` as `((x - shift) ∘ scale) · w + b`, every part of dtype `dt`;
    /// `x` is a contiguous load or a row read back from a slot (`reused`).
    /// Where `codes` names a float16 or bfloat16 dtype, the rows are instead
    /// contiguous loads of it widened to float32, and the form names the loads.
    fn of(
        k: &LoopKernel,
        value: ExprId,
        dt: DType,
        reused: &dyn Fn(ExprId) -> bool,
        codes: Option<DType>,
    ) -> Option<Form> {
        let mut f = Self::of_rows(k, value, dt, reused, codes)?;
        if codes.is_some() {
            // (each row's load, under its widening)
            for r in [Some(&mut f.load), f.weight.as_mut(), f.bias.as_mut()]
                .into_iter()
                .flatten()
            {
                *r = widened_row(k, *r)?;
                f.chain.push(*r);
            }
        }
        Some(f)
    }

    /// [`Form::of`] with the rows as the values the arithmetic reads.
    fn of_rows(
        k: &LoopKernel,
        value: ExprId,
        dt: DType,
        reused: &dyn Fn(ExprId) -> bool,
        codes: Option<DType>,
    ) -> Option<Form> {
        let expr = |id: ExprId| &k.exprs[id.0 as usize];
        let row = |id: ExprId| match codes {
            None => expr(id).dtype == dt && row_load(k, id),
            Some(c) => widened_row(k, id).is_some_and(|l| expr(l).dtype == c),
        };
        let source = |id: ExprId| row(id) || (expr(id).dtype == dt && reused(id));
        let outer = |id: ExprId| !matches!(expr(id).stage, Stage::Inner(_));
        let binary = |id: ExprId| match expr(id).expr {
            Expr::Binary { op, a, b } if expr(id).dtype == dt => Some((op, a, b)),
            _ => None,
        };
        // `x` or `x - shift`
        let centered = |id: ExprId| -> Option<(ExprId, Option<ExprId>, Vec<ExprId>)> {
            if source(id) {
                return Some((id, None, vec![id]));
            }
            match binary(id)? {
                (BinaryOp::Sub, x, m) if source(x) && outer(m) => Some((x, Some(m), vec![id, x])),
                _ => None,
            }
        };
        // `d · scale`, `scale · d` or `d / scale`
        let scaled = |id: ExprId| -> Option<Form> {
            let (op, a, b) = binary(id)?;
            let (d, scale, divide) = match op {
                BinaryOp::Mul if outer(b) => (a, b, false),
                BinaryOp::Mul if outer(a) => (b, a, false),
                BinaryOp::Div if outer(b) => (a, b, true),
                _ => return None,
            };
            let (load, shift, mut chain) = centered(d)?;
            chain.push(id);
            Some(Form {
                load,
                shift,
                scale,
                divide,
                weight: None,
                bias: None,
                chain,
            })
        };
        // a scaled row, or one times a weight row (either side)
        let weighted = |id: ExprId| -> Option<Form> {
            if let Some(f) = scaled(id) {
                return Some(f);
            }
            let (op, a, b) = binary(id)?;
            let (y, w) = match op {
                BinaryOp::Mul if row(b) => (a, b),
                BinaryOp::Mul if row(a) => (b, a),
                _ => return None,
            };
            let mut f = scaled(y)?;
            f.weight = Some(w);
            f.chain.extend([w, id]);
            Some(f)
        };
        if let Some(f) = weighted(value) {
            return Some(f);
        }
        // ... plus a bias row (either side)
        let (op, a, b) = binary(value)?;
        if op != BinaryOp::Add {
            return None;
        }
        let (core, bias) = if row(b) && weighted(a).is_some() {
            (a, b)
        } else if row(a) {
            (b, a)
        } else {
            return None;
        };
        let mut f = weighted(core)?;
        f.bias = Some(bias);
        f.chain.extend([bias, value]);
        Some(f)
    }
}

impl Lower<'_, '_> {
    /// Phase `ph`'s affine run over the row's first `m` positions.
    pub(super) fn affine_run_values(&mut self, ar: AffineRun, m: i64) -> R<()> {
        let rd = self.k.dims.len() - 1;
        let zero = self.iconst(I64, 0);
        self.b.def_var(self.idx[rd], zero);
        let out = self.store_address(ar.store)?;
        let src = match ar.slot {
            Some(e) => self.row_slot_address(e, zero),
            None => self.load_address(ar.load)?,
        };
        // (a narrow store's values are rounded from the slot afterwards)
        let dst = if ar.narrow.is_some() { src } else { out };
        let scale = self.val(ar.scale);
        // (the codes' routine computes in float32)
        let dt = if ar.codes {
            DType::F32
        } else {
            self.k.exprs[ar.load.0 as usize].dtype
        };
        let shift = self.outer_or_zero(ar.shift, dt)?;
        let row = |l: &mut Self, r: Option<ExprId>| match r {
            Some(r) => l.load_address(r),
            None => Ok(zero),
        };
        let w = row(self, ar.weight)?;
        let b = row(self, ar.bias)?;
        let count = self.iconst(I64, m);
        let form = self.iconst(I64, ar.form);
        self.call_void(ar.symbol, &[dst, src, count, shift, scale, w, b, form])?;
        match ar.narrow {
            Some(dt) => {
                let param = self.k.stores[ar.store].param.index();
                let symbol = self.narrow_routine(param, dt, m as usize);
                self.call_void(symbol, &[out, dst, count])
            }
            None => Ok(()),
        }
    }
}
