//! A slow, simple reference evaluator of the kernel IR ([`lazyfuse_ir::kernel`]): the
//! oracle the scheduler is tested against, and a second opinion for codegen.
//!
//! Every scalar op is computed by the interpreter's own buffer kernels (the same
//! functions `interp::execute` calls for a node), so the two cannot drift apart.
//! A loop kernel is evaluated expression by expression over all its points at once:
//! an outer (`Stage::Outer`) value is a buffer with one element per parallel point,
//! an inner (`Stage::Inner`) value one element per (parallel point, reduction point)
//! in row-major order. Elementwise ops are elementwise, so this is the same as
//! running the points one by one; a `Reduce` reduces each parallel point's row with
//! the interpreter's reduction (`Sum` of `float32` accumulates in `float64`, rounded
//! once, as the kernel IR specifies; `Max`/`Min` propagate NaN; `ArgMax`/`ArgMin`
//! take the first extremum). A `Scan` runs the interpreter's own `cumsum`/scan
//! routine along each parallel point's row. Stores run after the kernel's expressions, in order,
//! each over its points in row-major order (the last write wins); loads see the
//! buffers as they were before the kernel (the scheduler never makes a kernel read
//! what it writes).
//!
//! Status codes are the interpreter's errors: integer division by zero is
//! `Error::ZeroDivision` and a `DynIndex` value out of range `Error::IndexOutOfRange`
//! worded by its load's `IndexError`, as the executor does. Extern steps run
//! the interpreter's single-node routine ([`crate::interp::eval_node`]).

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::interp::kernels;
use lazyfuse_ir::kernel::{
    Accum, BufKind, Const, Expr, LoopKernel, ScanAccum, Schedule, Stage, Step,
};
use lazyfuse_ir::{ArgReduceOp, DType, Graph, InputId, Node, Op, ReduceOp, ScanOp};
use std::collections::HashMap;
use std::sync::Arc;

/// Runs a schedule made from `graph`, returning one buffer per target (in the
/// order of `schedule.outputs`). `inputs` holds every input buffer it reads.
///
/// ```
/// use lazyfuse_ir::schedule::{schedule, ScheduleOptions};
/// use lazyfuse_ir::{BinaryOp, DType, Graph, InputId, Op};
/// use lazyfuse_runtime::{kernel_eval::run_schedule, Buffer};
/// use std::{collections::HashMap, sync::Arc};
/// let mut g = Graph::new();
/// let x = g.add(Op::Input(InputId(0)), DType::I32, vec![3], &[]);
/// let y = g.add(Op::Binary(BinaryOp::Mul), DType::I32, vec![3], &[x, x]);
/// let s = schedule(&g, &[y], &ScheduleOptions { fuse: true, ..Default::default() }).unwrap();
/// let inputs = HashMap::from([(InputId(0), Arc::new(Buffer::from_vec(vec![1i32, -2, 3])))]);
/// let out = run_schedule(&s, &g, &inputs).unwrap();
/// assert_eq!(*out[0], Buffer::from_vec(vec![1i32, 4, 9]));
/// ```
pub fn run_schedule(
    schedule: &Schedule,
    graph: &Graph,
    inputs: &HashMap<InputId, Arc<Buffer>>,
) -> Result<Vec<Arc<Buffer>>> {
    schedule.verify().map_err(Error::Malformed)?;
    let mut bufs: Vec<Option<Arc<Buffer>>> = Vec::with_capacity(schedule.buffers.len());
    for decl in &schedule.buffers {
        bufs.push(match decl.kind {
            BufKind::Input(id) | BufKind::Donated(id) => {
                let b = inputs
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| Error::Malformed(format!("input {id} was not provided")))?;
                if b.dtype() != decl.dtype || b.len() != decl.len {
                    return Err(Error::Malformed(format!(
                        "input {id} does not match its declaration"
                    )));
                }
                Some(b)
            }
            _ => None,
        });
    }
    for step in &schedule.steps {
        match step {
            Step::Loop(k) => {
                // The interpreter checks every node's allocation before computing it
                // (size overflow, refused allocations): the same errors here, for the
                // nodes this kernel computes (stored or inlined).
                for &n in &k.nodes {
                    if graph.contains(n) {
                        let node = graph.node(n);
                        let creation = matches!(
                            node.op,
                            Op::Full(_)
                                | Op::Arange { .. }
                                | Op::Random { .. }
                                | Op::Linspace { .. }
                        );
                        if !matches!(node.op, Op::Input(_)) {
                            crate::buffer::check_allocation(&node.shape, node.dtype, creation)?;
                        }
                    }
                }
                run_kernel(k, &mut bufs)?
            }
            Step::Extern(e) => {
                if !graph.contains(e.node) {
                    return Err(Error::Malformed(format!(
                        "extern node {} is not in the graph",
                        e.node
                    )));
                }
                let node = graph.node(e.node);
                let arg_nodes: Vec<&Node> = graph
                    .inputs(e.node)
                    .iter()
                    .map(|&i| graph.node(i))
                    .collect();
                let args = e
                    .inputs
                    .iter()
                    .map(|b| match &bufs[b.0 as usize] {
                        Some(x) => Ok(x.clone()),
                        // An empty buffer needs no writer (a `cat` of empty tensors
                        // has no step), as in the executor.
                        None if schedule.buffers[b.0 as usize].len == 0 => Ok(Arc::new(
                            Buffer::zeros(schedule.buffers[b.0 as usize].dtype, 0),
                        )),
                        None => Err(Error::Malformed(format!(
                            "extern reads {b} before it is written"
                        ))),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let args = crate::exec::row_major_inputs(e, args);
                let own = &args[..e.op_inputs().min(args.len())];
                let out = crate::interp::eval_node(node, own, &arg_nodes, inputs)?;
                let out = crate::exec::with_epilogue(e, out, &args)?;
                bufs[e.output.0 as usize] = Some(out);
            }
        }
    }
    schedule
        .outputs
        .iter()
        .map(|b| {
            let decl = &schedule.buffers[b.0 as usize];
            match &bufs[b.0 as usize] {
                Some(x) => Ok(x.clone()),
                // A buffer no step wrote is empty (its kernels had no points).
                None if decl.len == 0 => Ok(Arc::new(Buffer::zeros(decl.dtype, 0))),
                None => Err(Error::Malformed(format!("output {b} was never written"))),
            }
        })
        .collect()
}

/// The row-major coordinates of every point of `dims`.
fn points(dims: &[usize]) -> Vec<Vec<i64>> {
    let n: usize = dims.iter().product();
    (0..n)
        .map(|mut i| {
            let mut c = vec![0i64; dims.len()];
            for d in (0..dims.len()).rev() {
                c[d] = (i % dims[d]) as i64;
                i /= dims[d];
            }
            c
        })
        .collect()
}

/// One kernel, all points.
fn run_kernel(k: &LoopKernel, bufs: &mut [Option<Arc<Buffer>>]) -> Result<()> {
    let np = k.n_parallel;
    let par = points(k.parallel_dims());
    let red = points(k.reduce_dims());
    let (p_n, r_n) = (par.len(), red.len());
    // The writers' buffers start from their current contents (zeros when new).
    let mut outs: HashMap<usize, Buffer> = HashMap::new();
    for (i, p) in k.params.iter().enumerate() {
        if p.writes {
            let cur = match &bufs[p.buf.0 as usize] {
                Some(b) => (**b).clone(),
                None => Buffer::zeros(p.dtype, p.len),
            };
            outs.insert(i, cur);
        }
    }
    let index = |a: &lazyfuse_ir::kernel::Affine, inner: bool| -> Vec<i128> {
        let mut out = Vec::with_capacity(if inner { p_n * r_n } else { p_n });
        for pc in &par {
            let base = a.offset as i128
                + (0..np)
                    .map(|d| a.strides[d] as i128 * pc[d] as i128)
                    .sum::<i128>();
            if inner {
                for rc in &red {
                    out.push(
                        base + rc
                            .iter()
                            .enumerate()
                            .map(|(j, &r)| a.strides[np + j] as i128 * r as i128)
                            .sum::<i128>(),
                    );
                }
            } else {
                out.push(base);
            }
        }
        out
    };
    let mut vals: Vec<Buffer> = Vec::with_capacity(k.exprs.len());
    let inner_of = |s: Stage| matches!(s, Stage::Inner(_));
    for e in &k.exprs {
        let inner = inner_of(e.stage);
        let size = if inner { p_n * r_n } else { p_n };
        // An operand at the expression's width (outer values repeat along the row).
        let arg = |vals: &Vec<Buffer>, x: lazyfuse_ir::kernel::ExprId| -> Result<Buffer> {
            let v = &vals[x.0 as usize];
            if inner && !inner_of(k.expr(x).stage) {
                let offs: Vec<usize> = (0..size).map(|i| i / r_n.max(1)).collect();
                v.take_offsets(&offs)
            } else {
                Ok(v.clone())
            }
        };
        let v = match &e.expr {
            Expr::Load {
                param,
                index: idx,
                dynamic,
            } => {
                let p = &k.params[param.index()];
                let src = match &bufs[p.buf.0 as usize] {
                    Some(b) => b.clone(),
                    None => Arc::new(Buffer::zeros(p.dtype, p.len)),
                };
                let mut offs = index(idx, inner);
                if let Some(d) = dynamic {
                    let dv = ints(&arg(&vals, d.value)?)?;
                    for (o, &v) in offs.iter_mut().zip(&dv) {
                        let size = d.size as i128;
                        let w = if d.wrap && (-size..0).contains(&v) {
                            v + size
                        } else {
                            v
                        };
                        if !(0..size).contains(&w) {
                            // the value as the status block's `u64` slot holds it
                            return Err(Error::IndexOutOfRange(d.error.message(v as i64, d.size)));
                        }
                        *o += w * d.stride as i128;
                    }
                }
                let offs = offs
                    .into_iter()
                    .map(|o| {
                        usize::try_from(o).map_err(|_| {
                            Error::Malformed(format!("kernel {} loads at {o}", k.name))
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                src.take_offsets(&offs)?
            }
            Expr::Const(c) => {
                let one = constant(*c, e.dtype)?;
                one.take_offsets(&vec![0; size])?
            }
            Expr::LoopIndex { dim } => {
                let mut v = Vec::with_capacity(size);
                for pc in &par {
                    if inner {
                        for rc in &red {
                            v.push(if *dim < np { pc[*dim] } else { rc[*dim - np] });
                        }
                    } else {
                        v.push(pc[*dim]);
                    }
                }
                kernels::cast(&Buffer::from_vec(v), e.dtype)?
            }
            Expr::Unary { op, x } => kernels::unary(*op, &arg(&vals, *x)?)?,
            Expr::UnaryParam { op, x } => kernels::unary_param(*op, &arg(&vals, *x)?)?,
            Expr::Binary { op, a, b } => kernels::binary(*op, &arg(&vals, *a)?, &arg(&vals, *b)?)?,
            Expr::Where { cond, a, b } => {
                kernels::where_(&arg(&vals, *cond)?, &arg(&vals, *a)?, &arg(&vals, *b)?)?
            }
            Expr::Cast { x } => kernels::cast(&arg(&vals, *x)?, e.dtype)?,
            Expr::Reduce { op, x } => {
                let x = &vals[x.0 as usize];
                let shape = [p_n, r_n];
                let plain = |r: ReduceOp| kernels::reduce(r, x, &shape, &[1]);
                match op {
                    Accum::Sum => plain(ReduceOp::Sum)?,
                    Accum::Prod => plain(ReduceOp::Prod)?,
                    Accum::Max => plain(ReduceOp::Amax)?,
                    Accum::Min => plain(ReduceOp::Amin)?,
                    Accum::Any => plain(ReduceOp::Any)?,
                    Accum::All => plain(ReduceOp::All)?,
                    Accum::ArgMax => kernels::arg_reduce(ArgReduceOp::ArgMax, x, &shape, Some(1))?,
                    Accum::ArgMin => kernels::arg_reduce(ArgReduceOp::ArgMin, x, &shape, Some(1))?,
                }
            }
            Expr::Scan { op, x } => {
                // The operand is inner (the verifier checked): one row per point.
                let x = &vals[x.0 as usize];
                let shape = [p_n, r_n];
                let scan = |s: ScanOp| kernels::scan(s, x, &shape, 1);
                match op {
                    ScanAccum::Sum => kernels::cumsum(x, &shape, 1)?,
                    ScanAccum::Prod => scan(ScanOp::Cumprod)?,
                    ScanAccum::Max => scan(ScanOp::Cummax)?,
                    ScanAccum::Min => scan(ScanOp::Cummin)?,
                    ScanAccum::ArgMax => scan(ScanOp::CummaxIndices)?,
                    ScanAccum::ArgMin => scan(ScanOp::CumminIndices)?,
                    ScanAccum::LogAddExp => scan(ScanOp::LogCumSumExp)?,
                }
            }
        };
        if v.dtype() != e.dtype || v.len() != size {
            return Err(Error::Malformed(format!(
                "kernel {}: v{} computed {} x {}, declared {} x {size}",
                k.name,
                vals.len(),
                v.dtype(),
                v.len(),
                e.dtype
            )));
        }
        vals.push(v);
    }
    for s in &k.stores {
        let inner = inner_of(k.expr(s.value).stage);
        let offs = index(&s.index, inner)
            .into_iter()
            .map(|o| {
                usize::try_from(o)
                    .map_err(|_| Error::Malformed(format!("kernel {} stores at {o}", k.name)))
            })
            .collect::<Result<Vec<_>>>()?;
        let dst = outs.get_mut(&s.param.index()).ok_or_else(|| {
            Error::Malformed(format!("kernel {}: store into a read param", k.name))
        })?;
        scatter(dst, &offs, &vals[s.value.0 as usize])?;
    }
    for (i, b) in outs {
        bufs[k.params[i].buf.0 as usize] = Some(Arc::new(b));
    }
    Ok(())
}

/// A one-element buffer holding a constant of `dtype`.
fn constant(c: Const, dtype: DType) -> Result<Buffer> {
    let bad = || Error::Malformed(format!("constant {c} of {dtype}"));
    Ok(match c {
        Const::Bool(b) if dtype == DType::Bool => Buffer::from_vec(vec![b]),
        Const::Int(i) if dtype.is_integer() => {
            let (lo, hi) = dtype.integer_range().ok_or_else(bad)?;
            if i < lo || i > hi {
                return Err(bad());
            }
            if dtype == DType::U64 {
                kernels::cast(&Buffer::from_vec(vec![i as u64]), dtype)?
            } else {
                kernels::cast(&Buffer::from_vec(vec![i as i64]), dtype)?
            }
        }
        Const::Float(x) if dtype.is_floating_point() => {
            let v = kernels::cast(&Buffer::from_vec(vec![x]), dtype)?;
            // The kernel IR promises exact constants; a rounded one is a scheduler bug.
            let back = kernels::cast(&v, DType::F64)?;
            if back
                .as_slice::<f64>()
                .map(|s| s[0].to_bits() == x.to_bits() || (x.is_nan() && s[0].is_nan()))
                != Some(true)
            {
                return Err(bad());
            }
            v
        }
        _ => return Err(bad()),
    })
}

/// The integer values of a buffer.
fn ints(b: &Buffer) -> Result<Vec<i128>> {
    fn of<T: Copy + Into<i128>>(v: &[T]) -> Vec<i128> {
        v.iter().map(|&x| x.into()).collect()
    }
    Ok(match b {
        Buffer::U8(v) => of(v),
        Buffer::I8(v) => of(v),
        Buffer::I16(v) => of(v),
        Buffer::I32(v) => of(v),
        Buffer::I64(v) => of(v),
        Buffer::U16(v) => of(v),
        Buffer::U32(v) => of(v),
        Buffer::U64(v) => of(v),
        other => {
            return Err(Error::Malformed(format!(
                "a dynamic index of {}",
                other.dtype()
            )))
        }
    })
}

/// `dst[offs[i]] = src[i]` for every `i`, in order.
fn scatter(dst: &mut Buffer, offs: &[usize], src: &Buffer) -> Result<()> {
    if offs.len() != src.len() || offs.iter().any(|&o| o >= dst.len()) {
        return Err(Error::Malformed("a store outside its buffer".into()));
    }
    macro_rules! typed {
        ($($v:ident),*) => {
            match (dst, src) {
                $((Buffer::$v(d), Buffer::$v(s)) => {
                    for (i, &o) in offs.iter().enumerate() {
                        d[o] = s[i];
                    }
                })*
                (Buffer::Raw { dtype, bytes }, Buffer::Raw { dtype: sd, bytes: sb }) if dtype == sd => {
                    let n = dtype.size_in_bytes();
                    for (i, &o) in offs.iter().enumerate() {
                        bytes[o * n..(o + 1) * n].copy_from_slice(&sb[i * n..(i + 1) * n]);
                    }
                }
                _ => return Err(Error::Malformed("a store of another dtype".into())),
            }
        };
    }
    typed!(Bool, U8, I8, I16, I32, I64, U16, U32, U64, F16, BF16, F32, F64, C64, C128);
    Ok(())
}
