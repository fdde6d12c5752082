//! The vector tiers: which kernels vectorize (lane types, the ops with a vector
//! form, the interleaved tier for chains of expensive ops, mixed-dtype lanes), and
//! the vector code of a group of points.

use super::CodegenError;
use super::{flags, rep, Lower, Rep, R};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F64, I32};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value};
use lazyfuse_ir::kernel::{Affine, Expr, ExprId, LoopKernel, MathMode, ParamId, Stage};
use lazyfuse_ir::schedule::expensive;
use lazyfuse_ir::{BinaryOp, DType, UnaryOp, UnaryParamOp};

impl Lower<'_, '_> {
    /// `copies` blocks of `lanes` consecutive points of the last parallel dim at
    /// once (only for kernels [`vector_type`] accepts: one dtype, no reductions,
    /// contiguous or broadcast accesses along that dim, no param both read and
    /// written).
    ///
    /// Several copies (the [`Tier::Interleaved`](super::Tier::Interleaved) tier) compute each expression for
    /// every block before the next expression, and anchor each expensive op's
    /// vectors where they are computed ([`Lower::anchor`]). Cranelift's optimizer
    /// places a pure op at its first use, and the stores use the blocks in order:
    /// without the anchors it would place one block's whole chain of
    /// transcendentals before the next block's, and the out-of-order core, whose
    /// scheduler one chain of dependent ops fills, would still run one chain at a
    /// time. Interleaved, it overlaps `copies` chains.
    pub(super) fn vector_points(&mut self, vt: Type, copies: usize) -> R<()> {
        let lanes = i64::from(vt.lane_count());
        let mut vv: Vec<Vec<Option<Value>>> = vec![vec![None; self.k.exprs.len()]; copies];
        for i in 0..self.k.exprs.len() {
            if !self.needed[i] {
                continue;
            }
            if let Some(back) = self.readback_vectors(i, vt, copies)? {
                vv.iter_mut()
                    .zip(back)
                    .for_each(|(block, v)| block[i] = Some(v));
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
            let anchored = copies > 1 && expensive(&e);
            for (c, block) in vv.iter_mut().enumerate() {
                let get = |id: ExprId| block[id.0 as usize].expect("operands come first");
                let v = match &e {
                    Expr::Load { param, index, .. } => {
                        let dt = self.k.exprs[i].dtype;
                        self.vload(*param, index, c as i64 * lanes, vt, dt)?
                    }
                    Expr::Const(c) => {
                        let x = self.constant(*c, self.k.exprs[i].dtype)?;
                        self.b.ins().splat(vt, x)
                    }
                    Expr::Unary { op, x } => self.vunary(*op, get(*x), vt),
                    Expr::UnaryParam { op, x } => self.vparam(*op, get(*x), vt),
                    Expr::Binary { op, a, b } if self.k.exprs[i].dtype == DType::Bool => {
                        self.vcompare(*op, get(*a), get(*b), vt)
                    }
                    Expr::Binary { op, a, b } => self.vbinary(*op, get(*a), get(*b), vt),
                    Expr::Where { cond, a, b } => {
                        self.b.ins().bitselect(get(*cond), get(*a), get(*b))
                    }
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

    /// `copies` blocks of four consecutive points of a kernel [`mixed_vector`]
    /// accepts: each expression in the 4-lane vector of its register representation
    /// (float32, and float16 and bfloat16 widened exactly as the scalar loads do, in
    /// `f32x4`; int32 in `i32x4`), with the casts between them done lane-wise with
    /// the scalar code's results; constants are made once for all copies.
    pub(super) fn vector_point_mixed(&mut self, copies: usize) -> R<()> {
        use cranelift_codegen::ir::types::F32X4;
        let lanes = i64::from(MIXED_LANES.lane_count());
        let mut vv: Vec<Vec<Option<Value>>> = vec![vec![None; self.k.exprs.len()]; copies];
        let mut consts: Vec<Option<Value>> = vec![None; self.k.exprs.len()];
        for i in 0..self.k.exprs.len() {
            if !self.needed[i] {
                continue;
            }
            if let Some(back) = self.readback_vectors(i, MIXED_LANES, copies)? {
                vv.iter_mut()
                    .zip(back)
                    .for_each(|(block, v)| block[i] = Some(v));
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
                let addr = self.address(param.index(), &index.offset, &index.strides, None)?;
                consts[i] = Some(self.load(addr, e.dtype)?);
                continue;
            }
            let vt = mixed_lane_type(e.dtype).expect("mixed_vector checked the dtypes");
            // Values the same in every copy: computed once.
            let shared = match &e.expr {
                Expr::Const(c) => {
                    let x = self.constant(*c, e.dtype)?;
                    consts[i] = Some(x);
                    Some(self.b.ins().splat(vt, x))
                }
                Expr::Cast { x } if consts[x.0 as usize].is_some() => {
                    let c = consts[x.0 as usize].expect("checked");
                    let from = self.dtype(*x);
                    let c = self.cast(c, from, e.dtype)?;
                    Some(self.b.ins().splat(vt, c))
                }
                _ => None,
            };
            if let Some(v) = shared {
                vv.iter_mut().for_each(|block| block[i] = Some(v));
                continue;
            }
            for (c, block) in vv.iter_mut().enumerate() {
                let get = |id: ExprId| block[id.0 as usize].expect("operands come first");
                let v = match e.expr {
                    Expr::Load {
                        param, ref index, ..
                    } => self.vload(param, index, c as i64 * lanes, vt, e.dtype)?,
                    Expr::Cast { x } => match self.dtype(x) {
                        // cvtdq2ps rounds to nearest even, as the scalar i64 → f32
                        // does (an int32 is exact in the i64 it widens to).
                        DType::I32 => self.b.ins().fcvt_from_sint(F32X4, get(x)),
                        // float16/bfloat16 values are already their exact float32;
                        // a cast to one of them rounds.
                        _ => self.vround_unless_stored(i, get(x)),
                    },
                    Expr::Unary { op, x } => {
                        let v = self.vunary(op, get(x), vt);
                        self.vround_unless_stored(i, v)
                    }
                    Expr::UnaryParam { op, x } => {
                        let v = self.vparam(op, get(x), vt);
                        self.vround_unless_stored(i, v)
                    }
                    Expr::Binary { op, a, b } => {
                        let v = self.vbinary(op, get(a), get(b), vt);
                        self.vround_unless_stored(i, v)
                    }
                    _ => return Err(CodegenError::Backend("not a vector expression".into())),
                };
                block[i] = Some(v);
            }
        }
        for (c, block) in vv.iter().enumerate() {
            self.vector_stores(block, c as i64 * lanes)?;
        }
        Ok(())
    }

    /// The lanes of load `index` of `param` (of `dt`, in vectors of `vt`) for the
    /// block `shift` points along the last dim: one element splat where the load
    /// does not move along that dim, float16/bfloat16 widened to `f32x4`.
    pub(super) fn vload(
        &mut self,
        param: ParamId,
        index: &Affine,
        shift: i64,
        vt: Type,
        dt: DType,
    ) -> R<Value> {
        let splat = index.strides[self.k.n_parallel - 1] == 0;
        let shift = if splat { 0 } else { shift };
        let addr = self.shifted_address(param.index(), &index.offset, &index.strides, shift)?;
        Ok(match dt {
            DType::F16 | DType::BF16 => self.vload_narrow(addr, 0, splat, dt),
            _ if splat => {
                let x = self.b.ins().load(vt.lane_type(), flags(), addr, 0);
                self.b.ins().splat(vt, x)
            }
            _ => self.b.ins().load(vt, flags(), addr, 0),
        })
    }

    /// Stores the vector values `vv` of one block of points (every vector tier),
    /// the block `shift` points along the last dim from the current point.
    pub(super) fn vector_stores(&mut self, vv: &[Option<Value>], shift: i64) -> R<()> {
        for (i, s) in self.k.stores.iter().enumerate() {
            let value = self.run_store_value(i).unwrap_or(s.value);
            let v = vv[value.0 as usize].expect("stored values are computed");
            if let Some(addr) = self.tile_address(i, shift) {
                // (a narrow run's argument, in float32 lanes, rounded)
                self.b.ins().store(flags(), v, addr, 0);
                continue;
            }
            let addr =
                self.shifted_address(s.param.index(), &s.index.offset, &s.index.strides, shift)?;
            match self.k.params[s.param.index()].dtype {
                // (the mixed tier's float16/bfloat16 lanes)
                dt @ (DType::F16 | DType::BF16) => {
                    let rounded = !self.store_rounds[s.value.0 as usize];
                    self.vstore_narrow(v, dt, addr, 0, rounded)
                }
                _ => {
                    self.b.ins().store(flags(), v, addr, 0);
                }
            }
        }
        Ok(())
    }

    /// A bit-for-bit reinterpretation between vector types.
    pub(super) fn vbitcast(&mut self, to: Type, v: Value) -> Value {
        let f = MemFlagsData::new().with_endianness(cranelift_codegen::ir::Endianness::Little);
        self.b.ins().bitcast(to, f, v)
    }

    /// `i32x4` lanes holding float16 bits (zero-extended) → their exact `f32x4`
    /// values, as `lf_f16_to_f32` (`half`) gives them: normals and subnormals by
    /// shifting the exponent and mantissa into place and scaling by 2^112 (exact: the
    /// product is a float32 normal), ±inf as ±inf, a NaN with its payload and the
    /// quiet bit set.
    pub(super) fn vf16_to_f32(&mut self, h: Value) -> Value {
        use cranelift_codegen::ir::types::{F32X4, I32X4};
        let c = |l: &mut Self, x: i64| {
            let s = l.iconst(I32, x);
            l.b.ins().splat(I32X4, s)
        };
        let (m8000, m7fff) = (c(self, 0x8000), c(self, 0x7fff));
        let (max_finite, inf16) = (c(self, 0x7bff), c(self, 0x7c00));
        let (inf32, quiet) = (c(self, 0x7f80_0000), c(self, 0x0040_0000));
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
        // Exponent and mantissa as one number: above the largest finite code the
        // lane is an infinity or a NaN, above the infinity's code a NaN (one
        // `pcmpgtd` each; `em` is at most 0x7fff, so signed compares are exact).
        let special = self.b.ins().icmp(IntCC::SignedGreaterThan, em, max_finite);
        let nan = self.b.ins().icmp(IntCC::SignedGreaterThan, em, inf16);
        let q = self.b.ins().band(nan, quiet);
        let sp = self.b.ins().bor(sh, inf32);
        let sp = self.b.ins().bor(sp, q);
        let r = self.b.ins().bitselect(special, sp, finite);
        let r = self.b.ins().bor(r, sign);
        self.vbitcast(F32X4, r)
    }

    /// A vector mask (from a compare) as the operand type, for `bitselect`.
    /// A comparison of two lane vectors as a lane mask of `vt` (all ones where
    /// it holds), the scalar comparison's result per lane (a NaN compares
    /// unequal and unordered, as IEEE and the scalar code do).
    pub(super) fn vcompare(&mut self, op: BinaryOp, x: Value, y: Value, vt: Type) -> Value {
        let m = match vector_compare(op, vt.lane_type().is_float()) {
            Some(Ok(cc)) => self.b.ins().fcmp(cc, x, y),
            Some(Err(cc)) => self.b.ins().icmp(cc, x, y),
            None => unreachable!("vector_type admits only comparisons"),
        };
        self.vmask(m, vt)
    }

    pub(super) fn vmask(&mut self, m: Value, vt: Type) -> Value {
        if vt.lane_type().is_float() {
            self.vbitcast(vt, m)
        } else {
            m
        }
    }

    pub(super) fn vunary(&mut self, op: UnaryOp, v: Value, vt: Type) -> Value {
        use UnaryOp::*;
        let float = vt.lane_type().is_float();
        match op {
            Neg if float => self.b.ins().fneg(v),
            Neg => self.b.ins().ineg(v),
            Abs if float => self.b.ins().fabs(v),
            Abs => self.b.ins().iabs(v),
            Sqrt => self.b.ins().sqrt(v),
            // 1/x and 1/sqrt(x) with the scalar code's correctly rounded ops
            Reciprocal | Rsqrt => {
                let x = if op == Rsqrt { self.b.ins().sqrt(v) } else { v };
                let one = self.vsplat(vt, 1.0);
                self.b.ins().fdiv(one, x)
            }
            Floor => self.b.ins().floor(v),
            Ceil => self.b.ins().ceil(v),
            Trunc => self.b.ins().trunc(v),
            Round => self.b.ins().nearest(v),
            Square if float => self.b.ins().fmul(v, v),
            Square => self.b.ins().imul(v, v),
            BitwiseNot => self.b.ins().bnot(v),
            Relu => {
                let z = self.vsplat(vt, 0.0);
                let lt = self.b.ins().fcmp(FloatCC::LessThan, v, z);
                let m = self.vmask(lt, vt);
                self.b.ins().bitselect(m, z, v)
            }
            // the interpreter's `a > 0 ? 1 : a < 0 ? -1 : 0` (NaN and -0: +0)
            Sign | Sgn => {
                let (z, one, m1) = (
                    self.vsplat(vt, 0.0),
                    self.vsplat(vt, 1.0),
                    self.vsplat(vt, -1.0),
                );
                let lt = self.b.ins().fcmp(FloatCC::LessThan, v, z);
                let lt = self.vmask(lt, vt);
                let s = self.b.ins().bitselect(lt, m1, z);
                let gt = self.b.ins().fcmp(FloatCC::GreaterThan, v, z);
                let gt = self.vmask(gt, vt);
                self.b.ins().bitselect(gt, one, s)
            }
            Hardsigmoid => self.vhardsigmoid(v, vt),
            Hardswish => {
                let h = self.vhardsigmoid(v, vt);
                self.b.ins().fmul(v, h)
            }
            _ if float && crate::cpu::vmath::has_unary(op, vt.lane_type() == F64) => {
                let fma = self.fma;
                crate::cpu::vmath::emit_unary(&mut self.b, fma, op, v, vt)
            }
            _ => unreachable!("vector_type admits only the ops above"),
        }
    }

    /// A float splat of `x` in the lanes of `vt`.
    fn vsplat(&mut self, vt: Type, x: f64) -> Value {
        let rep = if vt.lane_type() == F64 {
            Rep::F64
        } else {
            Rep::F32
        };
        let c = self.fconst(rep, x);
        self.b.ins().splat(vt, c)
    }

    /// The interpreter's hardsigmoid, `min(max(x + 3, 0), 6) / 6`: its NaN
    /// `x + 3`, which it returns, fails both compares and divides to itself.
    fn vhardsigmoid(&mut self, v: Value, vt: Type) -> Value {
        let (three, z, six) = (
            self.vsplat(vt, 3.0),
            self.vsplat(vt, 0.0),
            self.vsplat(vt, 6.0),
        );
        let t = self.b.ins().fadd(v, three);
        let lt = self.b.ins().fcmp(FloatCC::LessThan, t, z);
        let lt = self.vmask(lt, vt);
        let t = self.b.ins().bitselect(lt, z, t);
        let gt = self.b.ins().fcmp(FloatCC::GreaterThan, t, six);
        let gt = self.vmask(gt, vt);
        let t = self.b.ins().bitselect(gt, six, t);
        self.b.ins().fdiv(t, six)
    }

    /// A parameterised activation on float vectors (see [`vector_param_ok`]).
    pub(super) fn vparam(&mut self, op: UnaryParamOp, v: Value, vt: Type) -> Value {
        let fma = self.fma;
        crate::cpu::vmath::emit_param(&mut self.b, fma, op, v, vt)
    }

    pub(super) fn vbinary(&mut self, op: BinaryOp, x: Value, y: Value, vt: Type) -> Value {
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
                let nan = self.vsplat(vt, f64::NAN);
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
        if self.math != MathMode::Fast || !matches!(op, BinaryOp::Add | BinaryOp::Sub) || !self.fma
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
}

/// The vector type a kernel's innermost parallel dim runs in, or `None` for scalar
/// code: every expression of one dtype (float32 → f32x4, float64 → f64x2, int32 →
/// i32x4), only loads, constants and the ops with exact lane-wise instructions (in
/// [`MathMode::Fast`] also `vmath`'s transcendentals on floats), no
/// reduction, every access contiguous (stride 1) or broadcast (stride 0, loads
/// only) along that dim, and no buffer both read and written (lanes load before
/// they store).
pub(super) fn vector_type(k: &LoopKernel, math: MathMode) -> Option<Type> {
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
        if e.stage != Stage::Outer(0) {
            return None;
        }
        if e.dtype == DType::Bool {
            // A comparison of two lane values, as a lane mask that only `Where`
            // reads (a bool stored, cast or combined stays scalar code).
            let compare = matches!(&e.expr, Expr::Binary { op, a, .. }
                if vector_compare(*op, float).is_some() && k.exprs[a.0 as usize].dtype == dt);
            if !compare {
                return None;
            }
            continue;
        }
        if e.dtype != dt {
            return None;
        }
        let mask = |c: &ExprId| k.exprs[c.0 as usize].dtype == DType::Bool;
        let ok = match &e.expr {
            Expr::Where { cond, a, b } => mask(cond) && !mask(a) && !mask(b),
            Expr::Load { .. } => k.vector_load(&e.expr, np - 1, &written).is_some(),
            Expr::Const(_) => true,
            Expr::Unary { op, .. } => vector_unary_ok(*op, dt, math),
            Expr::UnaryParam { op, .. } => vector_param_ok(*op, dt, math),
            Expr::Binary { op, .. } => vector_binary_ok(*op, float),
            _ => false,
        };
        if !ok {
            return None;
        }
    }
    // Masks are never operands of other ops or stored (checked by dtype: every
    // other op and store takes lane values).
    let masks_only_select = k.exprs.iter().all(|e| match &e.expr {
        Expr::Where { a, b, .. } => [a, b].iter().all(|x| k.exprs[x.0 as usize].dtype == dt),
        Expr::Binary { a, b, .. } if e.dtype == DType::Bool => {
            k.exprs[b.0 as usize].dtype == dt && k.exprs[a.0 as usize].dtype == dt
        }
        other => LoopKernel::operands(other)
            .iter()
            .all(|x| k.exprs[x.0 as usize].dtype == dt),
    }) && k
        .stores
        .iter()
        .all(|s| k.exprs[s.value.0 as usize].dtype == dt);
    if !masks_only_select {
        return None;
    }
    if k.stores.iter().all(|s| s.index.strides[np - 1] == 1) {
        Some(vt)
    } else {
        None
    }
}

/// Vector blocks per step of the [`Tier::Interleaved`](super::Tier::Interleaved) tier.
pub(super) const INTERLEAVED: usize = 4;

/// Whether a [`vector_type`] kernel takes the [`Tier::Interleaved`](super::Tier::Interleaved) tier: its
/// vector loop (the needed expressions not hoisted out of the row) applies at
/// least two expensive ops: interleaving pays on chains of transcendentals, but it
/// doubles a kernel's compile time, which a single transcendental does not repay.
pub(super) fn interleaves(k: &LoopKernel, needed: &[bool], hoisted: &[bool]) -> bool {
    let expensive = k
        .exprs
        .iter()
        .enumerate()
        .filter(|&(i, e)| needed[i] && !hoisted[i] && expensive(&e.expr))
        .count();
    expensive >= 2
}

/// The needed expressions of an elementwise float kernel whose value does not
/// depend on the last dim (loads that broadcast along it, constants, the other
/// dims' indices, and ops of those): a layernorm's `sqrt(var + eps)` per row,
/// W2's column factor. Empty (all false) for other kernels.
pub(super) fn row_invariant(k: &LoopKernel, needed: &[bool]) -> Vec<bool> {
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

/// Blocks of 4 points per step of the [`Tier::Mixed`](super::Tier::Mixed) tier's
/// first form: mixed-dtype kernels are short and bound by instruction count (a
/// float16 load widens in a dozen ops), so two blocks per step halve the loop's
/// own instructions.
pub(super) const MIXED_COPIES: usize = 2;

/// The lane count of [`mixed_vector`] kernels (as a type whose lane count the
/// vector loop reads).
pub(super) const MIXED_LANES: Type = cranelift_codegen::ir::types::F32X4;

/// The 4-lane register vector of `dt` in [`mixed_vector`] kernels.
pub(super) fn mixed_lane_type(dt: DType) -> Option<Type> {
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
pub(super) fn mixed_vector(k: &LoopKernel, math: MathMode) -> bool {
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
                    && k.params[param.index()].dtype == e.dtype
                    && !written.contains(&k.params[param.index()].buf)
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
                    && k.params[param.index()].dtype == e.dtype
                    && !written.contains(&k.params[param.index()].buf)
            }
            Expr::Const(_) => true,
            Expr::Cast { x } => {
                let from = &k.exprs[x.0 as usize];
                (e.dtype == DType::F32
                    && matches!(from.dtype, DType::I32 | DType::F16 | DType::BF16))
                    || (narrow && matches!(from.dtype, DType::F32 | DType::F16 | DType::BF16))
                    || (!narrow && (matches!(from.expr, Expr::Const(_)) || scalar_const(from)))
            }
            // (a float16/bfloat16 op computes in float32 and rounds, as the scalar
            // code does)
            Expr::Unary { op, x } => {
                dt(x) == e.dtype && vector_unary_ok(*op, lane_dtype(e.dtype), math)
            }
            Expr::UnaryParam { op, x } => {
                dt(x) == e.dtype && vector_param_ok(*op, lane_dtype(e.dtype), math)
            }
            Expr::Binary { op, a, b } => {
                dt(a) == e.dtype && dt(b) == e.dtype && vector_binary_ok(*op, float)
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
            && matches!(v, DType::F32 | DType::I32 | DType::F16 | DType::BF16)
            && k.params[s.param.index()].dtype == v
    })
}

/// The dtype whose lanes compute a value of `dt` in the mixed tier (float16 and
/// bfloat16 in float32).
fn lane_dtype(dt: DType) -> DType {
    match dt {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

/// Whether [`Lower::vunary`] emits `op` on vectors of float (or integer) lanes: the
/// one predicate the elementwise vector path and the vectorized reduction phases
/// share, so that an op the vector path learns vectorizes in both. In
/// [`MathMode::Fast`] that includes `vmath`'s transcendentals on floats.
pub(super) fn vector_unary_ok(op: UnaryOp, dt: DType, math: MathMode) -> bool {
    use UnaryOp::*;
    let float = dt.is_floating_point();
    match op {
        Neg | Abs | Square => true,
        Sqrt | Reciprocal | Rsqrt | Floor | Ceil | Trunc | Round | Relu => float,
        // (compares, selects and the interpreter's arithmetic: exact in both modes)
        Sign | Sgn | Hardsigmoid | Hardswish => float,
        BitwiseNot => !float,
        _ => float && math == MathMode::Fast && crate::cpu::vmath::has_unary(op, dt == DType::F64),
    }
}

/// Whether [`Lower::vparam`] emits the parameterised activation `op` on vectors:
/// float lanes in [`MathMode::Fast`] only (Exact keeps the libm-backed scalar call).
pub(super) fn vector_param_ok(op: UnaryParamOp, dt: DType, math: MathMode) -> bool {
    dt.is_floating_point()
        && math == MathMode::Fast
        && crate::cpu::vmath::has_param(op, dt == DType::F64)
}

/// The lane comparison of a comparison op: the scalar code's float condition
/// ([`super::ops::float_cc`], `Ok`) for float lanes, a signed integer one (`Err`)
/// for int32 lanes; `None` for other ops.
pub(super) fn vector_compare(op: BinaryOp, float: bool) -> Option<Result<FloatCC, IntCC>> {
    use BinaryOp::*;
    if float {
        return super::ops::float_cc(op).map(Ok);
    }
    Some(match op {
        Eq => Err(IntCC::Equal),
        Ne => Err(IntCC::NotEqual),
        Lt => Err(IntCC::SignedLessThan),
        Le => Err(IntCC::SignedLessThanOrEqual),
        Gt => Err(IntCC::SignedGreaterThan),
        Ge => Err(IntCC::SignedGreaterThanOrEqual),
        _ => return None,
    })
}

/// Whether [`Lower::vbinary`] emits `op` on vectors (see [`vector_unary_ok`]).
pub(super) fn vector_binary_ok(op: BinaryOp, float: bool) -> bool {
    use BinaryOp::*;
    match op {
        Add | Sub | Mul | Maximum | Minimum => true,
        Div => float,
        BitwiseAnd | BitwiseOr | BitwiseXor => !float,
        _ => false,
    }
}
