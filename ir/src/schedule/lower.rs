//! Lowering of composite ops into kernel expressions, with the interpreter's
//! numerics (`runtime/src/interp/reduce.rs`, `reduce_special.rs`):
//! - float16/bfloat16 reduce in float32, float32 sums/means/var in float64 (the
//!   interpreter's accumulation types), each result rounded once to the node dtype;
//! - mean = sum / n; var/std two-pass (a mean phase, then a squared-deviation
//!   phase), divisor `max(0, n - correction)`;
//! - nansum/nanmean drop NaN with `where`; any/all/count_nonzero test `x != 0`;
//! - logsumexp: a max phase, then `log(sum(exp(x - m))) + m` with an infinite `m`
//!   replaced by 0; norm per order (0: count, ±inf: max/min, 1, 2, general `p`);
//! - softmax/log_softmax: one kernel of three phases (max, sum of exps, stores);
//! - cumsum and the scans (cumprod, cummax/cummin values and indices,
//!   logcumsumexp): one kernel of one phase over the scanned axis, an
//!   [`Expr::Scan`] of the inlined prologue stored at every point of the row.
//!
//! Also the kernels of the ops with their own shape: softmax, matmul (when the
//! schedule asks for matmul kernels: a reduction over the contracted dim), cat (one
//! kernel per input, each writing its slice) and write_view (a copy of the base, then the values
//! stored through the layout).
//!
//! With `gen.rs` this is one recursive descent: `Builder::gen` calls [`reduce`] and
//! [`indexing`] here for a composite node, and they generate their operands through
//! `Builder::gen`. The imports run one way (`gen` → `lower` → `builder`); the
//! recursion goes through the `Builder` methods.

use crate::dtype::DType;
use crate::graph::NodeId;
use crate::kernel::{Accum, Const, DynIndex, Expr, ExprId, IndexError, MathMode, ScanAccum};
use crate::op::{ArgReduceOp, BinaryOp, Op, ReduceOp, ScanOp, UnaryOp};
use crate::schedule::{canonical, flat, Affine, Builder, Ctx, Fail, Reason};

/// The interpreter's accumulation type of a float dtype (`FloatStore::A`).
fn acc(d: DType) -> DType {
    match d {
        DType::F16 | DType::BF16 => DType::F32,
        _ => DType::F64,
    }
}

/// The interpreter's compute type of a float dtype (`FloatStore::C`).
fn compute(d: DType) -> DType {
    match d {
        DType::F64 => DType::F64,
        _ => DType::F32,
    }
}

/// The output dtype the lowering produces for a reduction of an `input` dtype
/// (`None`: not lowered). The scheduler makes a node whose dtype differs extern.
pub(crate) fn reduce_output_dtype(op: ReduceOp, input: DType) -> Option<DType> {
    Some(match op {
        ReduceOp::Any | ReduceOp::All => {
            if input == DType::U8 {
                DType::U8
            } else {
                DType::Bool
            }
        }
        ReduceOp::CountNonzero => DType::I64,
        ReduceOp::RunningMean => return None,
        _ => input,
    })
}

/// A constant of any numeric dtype, made as `float64` (or `int64`) and cast, so
/// that the conversion is the interpreter's.
fn num(b: &mut Builder, v: f64, dtype: DType, phase: Option<u32>) -> Result<ExprId, Fail> {
    if dtype.is_integer() {
        let c = b.constant(Const::Int(v as i128), DType::I64);
        return b.cast(c, dtype, phase);
    }
    let c = b.constant(Const::Float(v), DType::F64);
    b.cast(c, dtype, phase)
}

fn bin(
    b: &mut Builder,
    op: BinaryOp,
    x: ExprId,
    y: ExprId,
    dtype: DType,
    phase: Option<u32>,
) -> Result<ExprId, Fail> {
    b.emit(Expr::Binary { op, a: x, b: y }, dtype, phase)
}

fn un(
    b: &mut Builder,
    op: UnaryOp,
    x: ExprId,
    dtype: DType,
    phase: Option<u32>,
) -> Result<ExprId, Fail> {
    b.emit(Expr::Unary { op, x }, dtype, phase)
}

/// The reduction of `x` (made inner if it does not depend on the reduction dims,
/// e.g. a broadcast read, so that the loop still visits every element).
fn red(b: &mut Builder, op: Accum, x: ExprId, k: u32) -> Result<ExprId, Fail> {
    let x = b.lift(x, k)?;
    let dt = match op {
        Accum::ArgMax | Accum::ArgMin => DType::I64,
        _ => b.dtype_of(x),
    };
    b.emit(Expr::Reduce { op, x }, dt, None)
}

/// `x != 0` as bool (bool values are their own truth).
fn truth(b: &mut Builder, x: ExprId, phase: Option<u32>) -> Result<ExprId, Fail> {
    let dt = b.dtype_of(x);
    if dt == DType::Bool {
        return Ok(x);
    }
    let z = num(b, 0.0, dt, phase)?;
    bin(b, BinaryOp::Ne, x, z, DType::Bool, phase)
}

/// The value of reduction node `n` (a `Reduce` or `ArgReduce`) at output `coords`,
/// inlined into the kernel `b` builds.
pub(crate) fn reduce(
    b: &mut Builder,
    ctx: &Ctx,
    n: NodeId,
    coords: &[Affine],
    phase: Option<u32>,
) -> Result<ExprId, Fail> {
    let g = ctx.graph;
    let node = g.node(n);
    let is_root = b.roots.contains(&n);
    if phase.is_some() {
        return Err(Fail::Materialize(n, Reason::ReductionInReduction));
    }
    let x = g.inputs(n)[0];
    let xnode = g.node(x);
    let xshape = if xnode.shape.is_empty() {
        vec![1]
    } else {
        xnode.shape.to_vec()
    };
    let (axes, keepdim): (Vec<usize>, bool) = match &node.op {
        Op::Reduce { axes, keepdim, .. } => (axes.clone(), *keepdim),
        Op::ArgReduce {
            axis: Some(a),
            keepdim,
            ..
        } => (vec![*a], *keepdim),
        Op::ArgReduce { axis: None, .. } => ((0..xshape.len()).collect(), false),
        _ => return Err(Fail::Error("reduce of a non-reduction".into())),
    };
    let sizes: Vec<usize> = axes.iter().map(|&a| xshape[a]).collect();
    let count: usize = sizes.iter().product();
    if !is_root && !b.once_per_point(coords) {
        return Err(match b.row_dims(coords, &canonical(&sizes)) {
            Some(dims) => Fail::Rows { reduction: n, dims },
            None => Fail::Materialize(n, Reason::BroadcastReduction),
        });
    }
    if !b.set_red(canonical(&sizes)) {
        return Err(if is_root {
            Fail::Merge
        } else {
            Fail::Materialize(n, Reason::ReductionOverOtherDims)
        });
    }
    let np = b.parallel.len();
    // The input's coordinates: kept dims from the output, reduced dims from loops.
    let mut xc = Vec::with_capacity(xshape.len());
    let (mut next_red, mut next_out) = (np, 0usize);
    for (d, &s) in xshape.iter().enumerate() {
        if axes.contains(&d) {
            if s == 1 {
                xc.push(Affine::constant(0));
            } else {
                xc.push(Affine::var(next_red));
                next_red += 1;
            }
            if keepdim {
                next_out += 1;
            }
        } else {
            let c = if matches!(node.op, Op::ArgReduce { axis: None, .. }) {
                Affine::constant(0)
            } else {
                coords.get(next_out).cloned().unwrap_or(Affine::constant(0))
            };
            xc.push(c);
            next_out += 1;
        }
    }
    if xnode.shape.is_empty() {
        xc.clear();
    }
    let k = b.level(ctx, x);
    let xt = xnode.dtype;
    let out = node.dtype;
    let load = |b: &mut Builder, k: u32| b.gen(ctx, x, &xc, Some(k));
    match &node.op {
        Op::ArgReduce { op, .. } => {
            let v = load(b, k)?;
            let a = if *op == ArgReduceOp::ArgMax {
                Accum::ArgMax
            } else {
                Accum::ArgMin
            };
            red(b, a, v, k)
        }
        Op::Reduce { op, .. } => {
            let op = *op;
            let float = xt.is_floating_point();
            match op {
                ReduceOp::Sum | ReduceOp::NanSum if !float => {
                    let v = load(b, k)?;
                    red(b, Accum::Sum, v, k)
                }
                ReduceOp::Sum => {
                    let v = load(b, k)?;
                    let v = b.cast(v, compute(xt), Some(k))?;
                    let s = red(b, Accum::Sum, v, k)?;
                    b.cast(s, out, None)
                }
                ReduceOp::Prod => {
                    let v = load(b, k)?;
                    red(b, Accum::Prod, v, k)
                }
                ReduceOp::Amax | ReduceOp::Amin => {
                    let v = load(b, k)?;
                    red(
                        b,
                        if op == ReduceOp::Amax {
                            Accum::Max
                        } else {
                            Accum::Min
                        },
                        v,
                        k,
                    )
                }
                ReduceOp::Mean => {
                    let a = acc(xt);
                    let v = load(b, k)?;
                    let v = b.cast(v, a, Some(k))?;
                    let s = red(b, Accum::Sum, v, k)?;
                    let nn = num(b, count as f64, a, None)?;
                    let m = bin(b, BinaryOp::Div, s, nn, a, None)?;
                    b.cast(m, out, None)
                }
                ReduceOp::Var { correction } | ReduceOp::Std { correction } => {
                    let a = acc(xt);
                    let v = load(b, k)?;
                    let v = b.cast(v, a, Some(k))?;
                    let s = red(b, Accum::Sum, v, k)?;
                    let nn = num(b, count as f64, a, None)?;
                    let m = bin(b, BinaryOp::Div, s, nn, a, None)?;
                    let v2 = load(b, k + 1)?;
                    let v2 = b.cast(v2, a, Some(k + 1))?;
                    let d = bin(b, BinaryOp::Sub, v2, m, a, Some(k + 1))?;
                    let d2 = bin(b, BinaryOp::Mul, d, d, a, Some(k + 1))?;
                    let m2 = red(b, Accum::Sum, d2, k + 1)?;
                    let div = ((count as i128 - correction as i128).max(0)) as f64;
                    let dv = num(b, div, a, None)?;
                    let mut r = bin(b, BinaryOp::Div, m2, dv, a, None)?;
                    if matches!(op, ReduceOp::Std { .. }) {
                        r = un(b, UnaryOp::Sqrt, r, a, None)?;
                    }
                    b.cast(r, out, None)
                }
                ReduceOp::NanSum | ReduceOp::NanMean => {
                    let c = compute(xt);
                    let v = load(b, k)?;
                    let v = b.cast(v, c, Some(k))?;
                    let nan = un(b, UnaryOp::IsNan, v, DType::Bool, Some(k))?;
                    let z = num(b, 0.0, c, None)?;
                    let w = b.emit(
                        Expr::Where {
                            cond: nan,
                            a: z,
                            b: v,
                        },
                        c,
                        Some(k),
                    )?;
                    let s = red(b, Accum::Sum, w, k)?;
                    if op == ReduceOp::NanSum {
                        return b.cast(s, out, None);
                    }
                    let kept = un(b, UnaryOp::LogicalNot, nan, DType::Bool, Some(k))?;
                    let kept = b.cast(kept, c, Some(k))?;
                    let cnt = red(b, Accum::Sum, kept, k)?;
                    let m = bin(b, BinaryOp::Div, s, cnt, c, None)?;
                    b.cast(m, out, None)
                }
                ReduceOp::Any | ReduceOp::All | ReduceOp::CountNonzero => {
                    let v = load(b, k)?;
                    let t = truth(b, v, Some(k))?;
                    match op {
                        ReduceOp::CountNonzero => {
                            let i = b.cast(t, DType::I64, Some(k))?;
                            red(b, Accum::Sum, i, k)
                        }
                        _ => {
                            let r = red(
                                b,
                                if op == ReduceOp::Any {
                                    Accum::Any
                                } else {
                                    Accum::All
                                },
                                t,
                                k,
                            )?;
                            b.cast(r, out, None)
                        }
                    }
                }
                ReduceOp::LogSumExp => {
                    let c = compute(xt);
                    let v = load(b, k)?;
                    let v = b.cast(v, c, Some(k))?;
                    let m = red(b, Accum::Max, v, k)?;
                    let am = un(b, UnaryOp::Abs, m, c, None)?;
                    let inf = num(b, f64::INFINITY, c, None)?;
                    let isinf = bin(b, BinaryOp::Eq, am, inf, DType::Bool, None)?;
                    let z = num(b, 0.0, c, None)?;
                    let m = b.emit(
                        Expr::Where {
                            cond: isinf,
                            a: z,
                            b: m,
                        },
                        c,
                        None,
                    )?;
                    let v2 = load(b, k + 1)?;
                    let v2 = b.cast(v2, c, Some(k + 1))?;
                    let d = bin(b, BinaryOp::Sub, v2, m, c, Some(k + 1))?;
                    let e = un(b, UnaryOp::Exp, d, c, Some(k + 1))?;
                    let s = red(b, Accum::Sum, e, k + 1)?;
                    let l = un(b, UnaryOp::Log, s, c, None)?;
                    let r = bin(b, BinaryOp::Add, l, m, c, None)?;
                    b.cast(r, out, None)
                }
                ReduceOp::Norm { ord } => {
                    let c = compute(xt);
                    let p = ord.value();
                    if count == 0 {
                        return num(b, 0.0, out, None);
                    }
                    let v = load(b, k)?;
                    let v = b.cast(v, c, Some(k))?;
                    let a = un(b, UnaryOp::Abs, v, c, Some(k))?;
                    let r = if count == 1 && p != 0.0 {
                        red(b, Accum::Sum, a, k)?
                    } else if p == 0.0 {
                        let t = truth(b, a, Some(k))?;
                        let t = b.cast(t, c, Some(k))?;
                        red(b, Accum::Sum, t, k)?
                    } else if p == f64::INFINITY {
                        red(b, Accum::Max, a, k)?
                    } else if p == f64::NEG_INFINITY {
                        red(b, Accum::Min, a, k)?
                    } else if p == 1.0 {
                        red(b, Accum::Sum, a, k)?
                    } else if p == 2.0 {
                        let a2 = bin(b, BinaryOp::Mul, a, a, c, Some(k))?;
                        let s = red(b, Accum::Sum, a2, k)?;
                        un(b, UnaryOp::Sqrt, s, c, None)?
                    } else {
                        let pc = num(b, p, c, None)?;
                        let ap = bin(b, BinaryOp::Pow, a, pc, c, Some(k))?;
                        let s = red(b, Accum::Sum, ap, k)?;
                        let one = num(b, 1.0, c, None)?;
                        let inv = bin(b, BinaryOp::Div, one, pc, c, None)?;
                        bin(b, BinaryOp::Pow, s, inv, c, None)?
                    };
                    b.cast(r, out, None)
                }
                ReduceOp::RunningMean => Err(Fail::Error("running_mean is extern".into())),
            }
        }
        _ => Err(Fail::Error("reduce of a non-reduction".into())),
    }
}

/// The running combination of a scan node (`Cumsum` or `Scan`), or `None` for
/// other ops.
pub(crate) fn scan_accum(op: &Op) -> Option<(ScanAccum, usize)> {
    Some(match op {
        Op::Cumsum { axis } => (ScanAccum::Sum, *axis),
        Op::Scan { op, axis } => (
            match op {
                ScanOp::Cumprod => ScanAccum::Prod,
                ScanOp::Cummax => ScanAccum::Max,
                ScanOp::Cummin => ScanAccum::Min,
                ScanOp::CummaxIndices => ScanAccum::ArgMax,
                ScanOp::CumminIndices => ScanAccum::ArgMin,
                ScanOp::LogCumSumExp => ScanAccum::LogAddExp,
            },
            *axis,
        ),
        _ => return None,
    })
}

/// A kernel over the rows of `shape` along `axis`: the other non-1 dims are
/// parallel, the axis (when not 1) is the reduction dim. Returns the builder and
/// the coordinates of element `(parallel point, reduction point)` of `shape`.
fn row_kernel(shape: &[usize], axis: usize, n: NodeId) -> (Builder, Vec<Affine>) {
    let others: Vec<usize> = (0..shape.len())
        .filter(|&d| d != axis)
        .map(|d| shape[d])
        .collect();
    let mut b = Builder::new(canonical(&others), vec![n]);
    b.set_red(canonical(&[shape[axis]]));
    let np = b.parallel.len();
    let mut next = 0;
    let xc: Vec<Affine> = shape
        .iter()
        .enumerate()
        .map(|(d, &s)| {
            if s == 1 {
                Affine::constant(0)
            } else if d == axis {
                Affine::var(np)
            } else {
                next += 1;
                Affine::var(next - 1)
            }
        })
        .collect();
    (b, xc)
}

/// The kernel of a scan node (see the module doc): its prologue inlined into the
/// row loop, the running value stored at every point.
fn scan_kernel(ctx: &Ctx, n: NodeId, op: ScanAccum, axis: usize) -> Result<Builder, Fail> {
    let g = ctx.graph;
    let node = g.node(n);
    let x = g.inputs(n)[0];
    let xnode = g.node(x);
    // A zero-dim input is one element along its only "axis", as in the interpreter.
    let shape = if xnode.shape.is_empty() {
        vec![1]
    } else {
        xnode.shape.to_vec()
    };
    let (mut b, xc) = row_kernel(&shape, axis, n);
    let gen_xc: Vec<Affine> = if xnode.shape.is_empty() {
        vec![]
    } else {
        xc.clone()
    };
    let k = b.level(ctx, x);
    let v = b.gen(ctx, x, &gen_xc, Some(k))?;
    let v = b.lift(v, k)?;
    let s = b.emit(Expr::Scan { op, x: v }, node.dtype, Some(k))?;
    let p = b.param(ctx.buf_of[&n], ctx, true);
    b.store(p, flat(&shape, &xc), s);
    b.note_node(ctx, n);
    Ok(b)
}

/// The value of indexing node `n` (`gather`, `index_select`, `take`) at output
/// `coords`: a load of its input's buffer through the index value there, checked at
/// run time as the interpreter checks it (`runtime/src/interp/index.rs`): gather
/// and index_select refuse negative values, take wraps them from the end.
pub(crate) fn indexing(
    b: &mut Builder,
    ctx: &Ctx,
    n: NodeId,
    coords: &[Affine],
    phase: Option<u32>,
) -> Result<ExprId, Fail> {
    let g = ctx.graph;
    let node = g.node(n);
    let ins = g.inputs(n);
    let (x, ix) = (ins[0], ins[1]);
    let xnode = g.node(x);
    // A zero-dim input is indexed as shape [1] (as the interpreter's `axis_shape`).
    let xs = if xnode.shape.is_empty() {
        vec![1]
    } else {
        xnode.shape.to_vec()
    };
    let (buf, off, mut strides) = b.addressable(ctx, x)?;
    if strides.is_empty() {
        strides.push(0);
    }
    let c: Vec<Affine> = if coords.is_empty() {
        vec![Affine::constant(0)]
    } else {
        coords.to_vec()
    };
    // `off + Σ c[d] · strides[d]` over every dim but `axis`
    let others = |axis: usize| {
        (0..xs.len())
            .filter(|&d| d != axis)
            .fold(Affine::constant(off), |acc, d| {
                c[d].scaled_add(strides[d], &acc)
            })
    };
    match &node.op {
        Op::Gather { axis } => {
            // the index has the output's shape
            let v = b.gen(ctx, ix, coords, phase)?;
            let dynamic = DynIndex {
                value: v,
                size: xs[*axis] as u64,
                stride: strides[*axis],
                wrap: false,
                error: IndexError::Gather { axis: *axis },
            };
            b.load_dyn(ctx, buf, others(*axis), dynamic, phase)
        }
        Op::IndexSelect { axis } => {
            // the (1-D) index runs along the output's `axis`
            let v = b.gen(ctx, ix, &[c[*axis].clone()], phase)?;
            let dynamic = DynIndex {
                value: v,
                size: xs[*axis] as u64,
                stride: strides[*axis],
                wrap: false,
                error: IndexError::index_select(&xnode.shape, *axis),
            };
            b.load_dyn(ctx, buf, others(*axis), dynamic, phase)
        }
        Op::Take => {
            // A flat position into the input: its elements must lie row-major.
            let contiguous = crate::shape::contiguous_strides(&xs);
            let row_major = xs
                .iter()
                .zip(&strides)
                .zip(&contiguous)
                .all(|((&size, &s), &cs)| size == 1 || s == cs as i64);
            if !row_major {
                return Err(Fail::Materialize(x, Reason::TakenByFlatPosition));
            }
            let v = b.gen(ctx, ix, coords, phase)?;
            let dynamic = DynIndex {
                value: v,
                size: xnode.numel() as u64,
                stride: 1,
                wrap: true,
                error: IndexError::Take,
            };
            b.load_dyn(ctx, buf, Affine::constant(off), dynamic, phase)
        }
        other => Err(Fail::Error(format!(
            "{} is not an indexing op",
            other.name()
        ))),
    }
}

/// The kernels of a node with its own iteration shape: softmax, cat, write_view.
pub(crate) fn special_kernels(ctx: &Ctx, n: NodeId) -> Result<Vec<Builder>, Fail> {
    let g = ctx.graph;
    let node = g.node(n);
    let ins = g.inputs(n);
    let out_buf = ctx.buf_of[&n];
    match &node.op {
        Op::Softmax { axis, log } => {
            let x = ins[0];
            let xnode = g.node(x);
            let shape = if xnode.shape.is_empty() {
                vec![1]
            } else {
                xnode.shape.to_vec()
            };
            let (mut b, xc) = row_kernel(&shape, *axis, n);
            let gen_xc: Vec<Affine> = if xnode.shape.is_empty() {
                vec![]
            } else {
                xc.clone()
            };
            // Fast: float32/float16/bfloat16 rows in float32 (PyTorch's CPU kernels
            // do; within the conformance tolerances), so the phases run f32x4 and
            // the f32 vector exp. Exact: the interpreter's accumulation type.
            let a = match ctx.math {
                MathMode::Fast if matches!(xnode.dtype, DType::F32 | DType::F16 | DType::BF16) => {
                    DType::F32
                }
                _ => acc(xnode.dtype),
            };
            let k = b.level(ctx, x);
            let val = |b: &mut Builder, k: u32| -> Result<ExprId, Fail> {
                let v = b.gen(ctx, x, &gen_xc, Some(k))?;
                let v = b.cast(v, a, Some(k))?;
                b.lift(v, k)
            };
            let v0 = val(&mut b, k)?;
            let m = red(&mut b, Accum::Max, v0, k)?;
            let v1 = val(&mut b, k + 1)?;
            let d1 = bin(&mut b, BinaryOp::Sub, v1, m, a, Some(k + 1))?;
            let e1 = un(&mut b, UnaryOp::Exp, d1, a, Some(k + 1))?;
            let s = red(&mut b, Accum::Sum, e1, k + 1)?;
            let v2 = val(&mut b, k + 2)?;
            let d2 = bin(&mut b, BinaryOp::Sub, v2, m, a, Some(k + 2))?;
            let r = if *log {
                let ls = un(&mut b, UnaryOp::Log, s, a, None)?;
                bin(&mut b, BinaryOp::Sub, d2, ls, a, Some(k + 2))?
            } else {
                let e2 = un(&mut b, UnaryOp::Exp, d2, a, Some(k + 2))?;
                if ctx.math == MathMode::Fast {
                    // one division per row, a multiply per element (≤ 1 ulp more)
                    let one = b.constant(Const::Float(1.0), a);
                    let inv = bin(&mut b, BinaryOp::Div, one, s, a, None)?;
                    bin(&mut b, BinaryOp::Mul, e2, inv, a, Some(k + 2))?
                } else {
                    bin(&mut b, BinaryOp::Div, e2, s, a, Some(k + 2))?
                }
            };
            let r = b.cast(r, node.dtype, Some(k + 2))?;
            let r = b.lift(r, k + 2)?;
            let p = b.param(out_buf, ctx, true);
            b.store(p, flat(&shape, &xc), r);
            b.note_node(ctx, n);
            Ok(vec![b])
        }
        Op::Matmul => {
            // [B, M, K] @ [B, K, N]: one point per output element, the contracted dim
            // reduced; the interpreter's numerics (integers wrap in their dtype,
            // floats accumulate in its accumulation type and round once). Fast math
            // accumulates float32/float16/bfloat16 in float32, as GPU BLAS does.
            let (x, y) = (ins[0], ins[1]);
            let (xs, ys) = (&g.node(x).shape, &g.node(y).shape);
            let (batch, m, k, cols) = (xs[0], xs[1], xs[2], ys[2]);
            let (mut b, c) = row_kernel(&[batch, m, cols, k], 3, n);
            let a = match (ctx.math, node.dtype) {
                (MathMode::Fast, DType::F32 | DType::F16 | DType::BF16) => DType::F32,
                (_, d) if d.is_floating_point() => acc(d),
                (_, d) => d,
            };
            let level = b.level(ctx, x).max(b.level(ctx, y));
            let xv = b.gen(
                ctx,
                x,
                &[c[0].clone(), c[1].clone(), c[3].clone()],
                Some(level),
            )?;
            let xv = b.cast(xv, a, Some(level))?;
            let yv = b.gen(
                ctx,
                y,
                &[c[0].clone(), c[3].clone(), c[2].clone()],
                Some(level),
            )?;
            let yv = b.cast(yv, a, Some(level))?;
            let product = bin(&mut b, BinaryOp::Mul, xv, yv, a, Some(level))?;
            let sum = red(&mut b, Accum::Sum, product, level)?;
            let r = b.cast(sum, node.dtype, None)?;
            let p = b.param(out_buf, ctx, true);
            let oc = [c[0].clone(), c[1].clone(), c[2].clone()];
            b.store(p, flat(&node.shape, &oc), r);
            b.note_node(ctx, n);
            Ok(vec![b])
        }
        Op::Cat { axis } => {
            let mut kernels = Vec::new();
            let mut start = 0usize;
            for &i in ins {
                let inode = g.node(i);
                let shape = inode.shape.clone();
                let size = shape[*axis];
                if inode.numel() == 0 {
                    probe_empty(ctx, n, i, &shape)?;
                } else {
                    let dims = canonical(&shape);
                    let mut b = Builder::new(dims, vec![n]);
                    let coords = Builder::identity_coords(&shape, 0);
                    let v = b.gen(ctx, i, &coords, None)?;
                    let mut oc = coords.clone();
                    oc[*axis] = oc[*axis].scaled_add(1, &Affine::constant(start as i64));
                    let p = b.param(out_buf, ctx, true);
                    b.store(p, flat(&node.shape, &oc), v);
                    b.note_node(ctx, n);
                    kernels.push(b);
                }
                start += size;
            }
            Ok(kernels)
        }
        Op::WriteView(layout) => {
            let mut kernels = Vec::new();
            // 1: the new version starts as a copy of the base (a fresh buffer, so the
            // base's readers never see the stores), unless the base was computed into
            // this buffer already (nothing else reads it: the write is in place).
            let in_place = ctx.buf_of.get(&ins[0]) == Some(&out_buf);
            let dims = canonical(&node.shape);
            let mut b = Builder::new(dims, vec![n]);
            let coords = Builder::identity_coords(&node.shape, 0);
            let v = b.gen(ctx, ins[0], &coords, None)?;
            let p = b.param(out_buf, ctx, true);
            b.store(p, flat(&node.shape, &coords), v);
            b.note_node(ctx, n);
            if !in_place {
                kernels.push(b);
            }
            // 2: the values, stored through the layout (no internal overlap: checked
            // before, so the order of the stores does not matter).
            if layout.numel() == 0 {
                probe_empty(ctx, n, ins[1], &layout.shape)?;
            } else {
                let dims = canonical(&layout.shape);
                let mut b = Builder::new(dims, vec![n]);
                let coords = Builder::identity_coords(&layout.shape, 0);
                let v = b.gen(ctx, ins[1], &coords, None)?;
                let idx = coords
                    .iter()
                    .zip(&layout.strides)
                    .fold(Affine::constant(layout.offset as i64), |acc, (c, &s)| {
                        c.scaled_add(s as i64, &acc)
                    });
                // Reading the destination is sound only in place, and only where each
                // point reads the element it stores (no point sees another's store).
                if b.reads(out_buf) {
                    if !in_place {
                        return Err(Fail::Error(format!(
                            "write_view {n} reads its own destination"
                        )));
                    }
                    if !b.loads_only_at(out_buf, &idx) {
                        return Err(Fail::Unshare(n));
                    }
                }
                let p = b.param(out_buf, ctx, true);
                b.store(p, idx, v);
                b.note_node(ctx, n);
                kernels.push(b);
            }
            Ok(kernels)
        }
        op => match scan_accum(op) {
            // An empty scan stores nothing. Its kernel would still run its outer
            // phase once per row when only the scanned dim is empty, loading the
            // prologue's row values from empty buffers; the executor starts the
            // empty output ready, as for a cat of empty tensors.
            Some(_) if node.numel() == 0 => Ok(vec![]),
            Some((acc, axis)) => Ok(vec![scan_kernel(ctx, n, acc, axis)?]),
            None => Err(Fail::Error(format!("{} has no special kernel", op.name()))),
        },
    }
}

/// The values of `n` that an empty region of `root` (`shape` has no element)
/// would read: no kernel stores them, but generating their expressions still
/// runs the checks that make a failing op read only in part (an integer division
/// whose result the empty view skips) computed whole, so that it fails as
/// PyTorch's eager ops do. The kernel itself is dropped, and so is any other
/// reason it could not be generated.
fn probe_empty(ctx: &Ctx, root: NodeId, n: NodeId, shape: &[usize]) -> Result<(), Fail> {
    let mut b = Builder::new(canonical(shape), vec![root]);
    let coords = Builder::identity_coords(shape, 0);
    match b.gen(ctx, n, &coords, None) {
        Err(f @ Fail::Materialize(..)) => Err(f),
        _ => Ok(()),
    }
}
