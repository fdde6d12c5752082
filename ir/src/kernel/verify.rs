//! The verifier: the invariants every loop kernel and schedule holds, checked
//! before codegen. A kernel that passes cannot read or write outside its buffers.
//!
//! A loop kernel ([`LoopKernel::verify`]):
//! 1. `n_parallel` is at most the number of dims.
//! 2. Every operand names an earlier expression, of a stage its reader may use: an
//!    `Outer(k)` expression reads `Outer(j ≤ k)`; an `Inner(k)` one reads `Inner(k)`
//!    or `Outer(j ≤ k)`; a reduction is `Outer(k + 1)` of an `Inner(k)` operand;
//!    a scan is `Inner(k)` of an `Inner(k)` operand.
//! 3. Every load and store names a present param and has one stride per dim; over
//!    its whole iteration space (the parallel dims alone for an `Outer` access,
//!    which must not depend on a reduction dim) its index, plus the span of a
//!    data-dependent term, stays in `[0, len)` of that param.
//! 4. A load has its param's dtype; a data-dependent index is an integer whose size
//!    fits in `i64` (size 0: the load never happens).
//! 5. A loop index names a dim, is an integer, and an `Outer` expression reads only
//!    parallel ones.
//! 6. Binary operands share a dtype and the result has the op's dtype (bool for a
//!    comparison); `where` takes a bool condition and two values of its own dtype.
//! 7. A reduction has its operand's dtype (`int64` for `ArgMax`/`ArgMin`; `Any`
//!    and `All` reduce bools); a scan has its accumulator's output dtype for its
//!    operand.
//! 8. No expression is complex.
//! 9. A store writes a present value into a param that `writes`, of the value's
//!    dtype, and an `Outer` value's store does not depend on a reduction dim.
//!
//! A schedule ([`Schedule::verify`]): every loop kernel verifies; every param and
//! extern buffer is declared with the param's dtype and length; only outputs,
//! temporaries and donated inputs are written; an extern step has one view and one
//! shape per input, each view inside its buffer (a zero-padded one with exact
//! coordinates), an output buffer of its dtype and element count, and an
//! epilogue only on a matmul, each `Add` reading its own input (after the op's,
//! in order) of the step's dtype inside its buffer.

use super::{
    Accum, Affine, BufId, BufKind, Expr, ExprId, LoopKernel, ParamId, Schedule, Stage, Step,
};
use crate::dtype::DType;

impl LoopKernel {
    /// Checks the kernel: operands name earlier expressions of compatible stages and
    /// dtypes, params and dims are consistent, and every load and store stays inside
    /// its buffer over the whole iteration space.
    ///
    /// ```
    /// use lazyfuse_ir::kernel::*;
    /// use lazyfuse_ir::DType;
    /// let k = LoopKernel {
    ///     name: "copy".into(),
    ///     nodes: vec![],
    ///     params: vec![
    ///         Param { buf: BufId(0), dtype: DType::F32, len: 6, writes: false },
    ///         Param { buf: BufId(1), dtype: DType::F32, len: 6, writes: true },
    ///     ],
    ///     dims: vec![2, 3],
    ///     n_parallel: 2,
    ///     exprs: vec![ExprNode {
    ///         expr: Expr::Load { param: ParamId(0), index: Affine { offset: 0, strides: vec![1, 2] }, dynamic: None },
    ///         dtype: DType::F32,
    ///         stage: Stage::Outer(0),
    ///     }],
    ///     stores: vec![StoreOp { param: ParamId(1), index: Affine { offset: 0, strides: vec![3, 1] }, value: ExprId(0) }],
    /// };
    /// assert!(k.verify().is_ok());
    /// let mut bad = k.clone();
    /// bad.params[0].len = 5;
    /// assert!(bad.verify().unwrap_err().contains("out of bounds"));
    /// ```
    pub fn verify(&self) -> Result<(), String> {
        let name = &self.name;
        if self.n_parallel > self.dims.len() {
            return Err(format!("kernel {name}: n_parallel exceeds the dims"));
        }
        let nd = self.dims.len();
        // Outer stages run once per parallel point, whatever the reduction dims
        // (even when those are empty): their accesses range over the parallel
        // space only (they ignore the reduction dims, checked below).
        let outer_dims: Vec<usize> = self
            .dims
            .iter()
            .enumerate()
            .map(|(d, &n)| if d < self.n_parallel { n } else { 1 })
            .collect();
        let space = |stage: Stage, index: &Affine| match stage {
            Stage::Outer(_) if index.ignores_from(self.n_parallel) => &outer_dims[..],
            _ => &self.dims[..],
        };
        let check_index = |what: &str,
                           p: ParamId,
                           index: &Affine,
                           stage: Stage,
                           extra: Option<Option<(i128, i128)>>| {
            let param = self
                .params
                .get(p.index())
                .ok_or_else(|| format!("kernel {name}: {what} names param {p}, which is absent"))?;
            if index.strides.len() != nd {
                return Err(format!(
                    "kernel {name}: {what} of {p} has {} strides for {nd} dims",
                    index.strides.len()
                ));
            }
            if let (Some((lo, hi)), Some(extra)) = (index.range(space(stage, index)), extra) {
                let (dlo, dhi) = extra.unwrap_or((0, 0));
                if lo + dlo < 0 || hi + dhi >= param.len as i128 {
                    return Err(format!(
                        "kernel {name}: {what} of {p} reaches [{}, {}], out of bounds of its {} elements",
                        lo + dlo,
                        hi + dhi,
                        param.len
                    ));
                }
            }
            Ok(param)
        };
        for (i, e) in self.exprs.iter().enumerate() {
            let here = || format!("kernel {name}: v{i}");
            for op in Self::operands(&e.expr) {
                if op.0 as usize >= i {
                    return Err(format!("{}: operand {op} is not earlier", here()));
                }
                let o = self.expr(op);
                let ok = match (&e.expr, e.stage) {
                    (Expr::Reduce { .. }, Stage::Outer(k)) => {
                        k >= 1 && o.stage == Stage::Inner(k - 1)
                    }
                    (Expr::Reduce { .. }, Stage::Inner(_)) => false,
                    (Expr::Scan { .. }, Stage::Inner(k)) => o.stage == Stage::Inner(k),
                    (Expr::Scan { .. }, Stage::Outer(_)) => false,
                    (_, Stage::Outer(k)) => matches!(o.stage, Stage::Outer(j) if j <= k),
                    (_, Stage::Inner(k)) => {
                        o.stage == Stage::Inner(k) || matches!(o.stage, Stage::Outer(j) if j <= k)
                    }
                };
                if !ok {
                    return Err(format!(
                        "{}: at stage {} cannot use {op} of stage {}",
                        here(),
                        e.stage,
                        o.stage
                    ));
                }
            }
            let dt = |x: &ExprId| self.expr(*x).dtype;
            match &e.expr {
                Expr::Load {
                    param,
                    index,
                    dynamic,
                } => {
                    if matches!(e.stage, Stage::Outer(_)) && !index.ignores_from(self.n_parallel) {
                        return Err(format!(
                            "{}: an outer load depends on a reduction dim",
                            here()
                        ));
                    }
                    // `None`: no access can happen (a dynamic index into an empty dim)
                    let extra = match dynamic {
                        None => Some(None),
                        Some(d) => {
                            if !dt(&d.value).is_integer() {
                                return Err(format!(
                                    "{}: a dynamic index is not an integer",
                                    here()
                                ));
                            }
                            if d.size > i64::MAX as u64 {
                                return Err(format!("{}: a dynamic index size overflows", here()));
                            }
                            // Wrapped or not, a value that passes the check is in
                            // `[0, size)`; with `size == 0` no value passes and the
                            // load never happens.
                            if d.size == 0 {
                                None
                            } else {
                                let span = d.stride as i128 * (d.size as i128 - 1);
                                Some(Some((span.min(0), span.max(0))))
                            }
                        }
                    };
                    let p = check_index("load", *param, index, e.stage, extra)?;
                    if p.dtype != e.dtype {
                        return Err(format!(
                            "{}: loads {} from a {} param",
                            here(),
                            e.dtype,
                            p.dtype
                        ));
                    }
                }
                Expr::LoopIndex { dim } => {
                    if *dim >= nd || !e.dtype.is_integer() {
                        return Err(format!("{}: bad loop index", here()));
                    }
                    if *dim >= self.n_parallel && matches!(e.stage, Stage::Outer(_)) {
                        return Err(format!("{}: an outer expr reads a reduction index", here()));
                    }
                }
                Expr::Binary { op, a, b } => {
                    if dt(a) != dt(b) {
                        return Err(format!("{}: {op:?} of {} and {}", here(), dt(a), dt(b)));
                    }
                    let want = if op.is_predicate() {
                        DType::Bool
                    } else {
                        dt(a)
                    };
                    if e.dtype != want {
                        return Err(format!(
                            "{}: {op:?} gives {}, not {}",
                            here(),
                            want,
                            e.dtype
                        ));
                    }
                }
                Expr::Where { cond, a, b } => {
                    if dt(cond) != DType::Bool || dt(a) != e.dtype || dt(b) != e.dtype {
                        return Err(format!("{}: where with mismatched dtypes", here()));
                    }
                }
                Expr::Reduce { op, x } => {
                    let want = match op {
                        Accum::ArgMax | Accum::ArgMin => DType::I64,
                        _ => dt(x),
                    };
                    if e.dtype != want {
                        return Err(format!("{}: {op:?} gives {want}, not {}", here(), e.dtype));
                    }
                    if matches!(op, Accum::Any | Accum::All) && want != DType::Bool {
                        return Err(format!("{}: {op:?} of a non-bool value", here()));
                    }
                }
                Expr::Scan { op, x } => {
                    if op.output_dtype(dt(x)) != Some(e.dtype) {
                        return Err(format!(
                            "{}: scan {op:?} of {} cannot give {}",
                            here(),
                            dt(x),
                            e.dtype
                        ));
                    }
                }
                Expr::Unary { .. }
                | Expr::UnaryParam { .. }
                | Expr::Cast { .. }
                | Expr::Const(_) => {}
            }
            if e.dtype.is_complex() {
                return Err(format!(
                    "{}: complex values do not enter loop kernels",
                    here()
                ));
            }
        }
        for (j, s) in self.stores.iter().enumerate() {
            let v = self
                .exprs
                .get(s.value.0 as usize)
                .ok_or_else(|| format!("kernel {name}: store {j} of an absent value"))?;
            let p = check_index("store", s.param, &s.index, v.stage, Some(None))?;
            if !p.writes {
                return Err(format!(
                    "kernel {name}: store {j} into read-only {}",
                    s.param
                ));
            }
            if p.dtype != v.dtype {
                return Err(format!(
                    "kernel {name}: store {j} of {} into {}",
                    v.dtype, p.dtype
                ));
            }
            if matches!(v.stage, Stage::Outer(_)) && !s.index.ignores_from(self.n_parallel) {
                return Err(format!(
                    "kernel {name}: outer store {j} depends on a reduction dim"
                ));
            }
        }
        Ok(())
    }
}

impl Schedule {
    /// Verifies every loop kernel ([`LoopKernel::verify`]) and that params and
    /// extern steps agree with the buffer table. Only outputs, temporaries and
    /// donated inputs are written; plain inputs are read-only.
    pub fn verify(&self) -> Result<(), String> {
        let decl = |b: BufId| {
            self.buffers
                .get(b.0 as usize)
                .ok_or_else(|| format!("buffer {b} is not declared"))
        };
        for s in &self.steps {
            match s {
                Step::Loop(k) => {
                    k.verify()?;
                    for p in &k.params {
                        let d = decl(p.buf)?;
                        if d.dtype != p.dtype || d.len != p.len {
                            return Err(format!(
                                "kernel {}: param {} is {}[{}], the buffer is {}[{}]",
                                k.name, p.buf, p.dtype, p.len, d.dtype, d.len
                            ));
                        }
                        if p.writes && matches!(d.kind, BufKind::Input(_)) {
                            return Err(format!(
                                "kernel {}: writes input buffer {}",
                                k.name, p.buf
                            ));
                        }
                    }
                }
                Step::Extern(e) => {
                    for b in e.inputs.iter().chain([&e.output]) {
                        decl(*b)?;
                    }
                    if e.input_views.len() != e.inputs.len()
                        || e.input_shapes.len() != e.inputs.len()
                    {
                        return Err(format!("extern {}: inputs mismatch", e.op.name()));
                    }
                    for ((b, shape), v) in e.inputs.iter().zip(&e.input_shapes).zip(&e.input_views)
                    {
                        let len = decl(*b)?.len;
                        let inside = match v {
                            None => crate::shape::numel(shape) == len,
                            Some(v) => v.groups(shape).is_some() && v.reads_within(shape, len),
                        };
                        if !inside {
                            return Err(format!(
                                "extern {}: input {b} does not fit its buffer",
                                e.op.name()
                            ));
                        }
                    }
                    verify_epilogue(e, &self.buffers)?;
                    let out = decl(e.output)?;
                    // saturating, as `Node::numel`: a huge shape must not wrap or panic
                    let n = crate::shape::numel(&e.shape);
                    if out.dtype != e.dtype || out.len != n {
                        return Err(format!("extern {}: output buffer mismatch", e.op.name()));
                    }
                }
            }
        }
        for b in &self.outputs {
            decl(*b)?;
        }
        Ok(())
    }
}

/// An extern step's epilogue: on a matmul of a `[b, m, n]` result only; each
/// `Add` reads its own input, the ones after the op's in order, of the result's
/// dtype, every index it reads inside that buffer.
fn verify_epilogue(e: &super::ExternStep, buffers: &[super::BufDecl]) -> Result<(), String> {
    if e.epilogue.is_empty() {
        return Ok(());
    }
    let name = e.op.name();
    let shape = <[usize; 3]>::try_from(e.shape.as_slice()).map_err(|_| {
        format!(
            "extern {name}: an epilogue on a result of rank {}",
            e.shape.len()
        )
    })?;
    if !matches!(e.op, crate::op::Op::Matmul) || e.op_inputs() != 2 {
        return Err(format!(
            "extern {name}: an epilogue on another op than matmul"
        ));
    }
    let mut next = e.op_inputs();
    for o in &e.epilogue {
        let Some(slot) = o.slot() else { continue };
        if slot != next {
            return Err(format!(
                "extern {name}: epilogue operand in{slot} out of order"
            ));
        }
        next += 1;
        let b = e
            .inputs
            .get(slot)
            .and_then(|b| buffers.get(b.0 as usize))
            .ok_or_else(|| format!("extern {name}: epilogue operand in{slot} has no buffer"))?;
        let inside = o.last_index(&shape).is_none_or(|last| last < b.len);
        if b.dtype != e.dtype || !inside || e.input_views[slot].is_some() {
            return Err(format!(
                "extern {name}: epilogue operand in{slot} does not fit its buffer"
            ));
        }
    }
    Ok(())
}
