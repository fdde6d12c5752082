//! Running extern steps on the host: the interpreter's node evaluation, the
//! float matmul of Fast math reading strided operands in place, and the gather of
//! an operand view for the routines that need row-major inputs.

use crate::buffer::Buffer;
use crate::epilogue::Epilogue;
use crate::error::{Error, Result};
use lazyfuse_ir::kernel::{ExternStep, ExternView, MathMode, Schedule, ZeroPadded};
use lazyfuse_ir::{Graph, InputId, Op};
use std::collections::HashMap;
use std::sync::Arc;

/// The output of extern step `e` computed on the host from its input buffers (in
/// `e.inputs` order): a float matmul in [`MathMode::Fast`] through [`crate::blas`],
/// anything else with the interpreter's routine for the one node. Checked against the
/// schedule's declaration of the output buffer.
pub(crate) fn extern_on_host(
    schedule: &Schedule,
    e: &ExternStep,
    math: MathMode,
    inputs: Vec<Arc<Buffer>>,
) -> Result<Arc<Buffer>> {
    if inputs.len() != e.inputs.len() || e.input_views.len() != e.inputs.len() {
        return Err(Error::Malformed(format!(
            "extern {} got {} inputs for {}",
            e.op.name(),
            inputs.len(),
            e.inputs.len()
        )));
    }
    if let Some(out) = strided_matmul(e, math, &inputs) {
        return checked_output(schedule, e, out);
    }
    let inputs = row_major_inputs(e, inputs);
    let mut g = Graph::new();
    let mut args = HashMap::new();
    let mut ids = Vec::with_capacity(e.inputs.len());
    for (slot_no, (buf, shape)) in inputs
        .iter()
        .zip(&e.input_shapes)
        .take(e.op_inputs())
        .enumerate()
    {
        let id = ids_input(slot_no);
        ids.push(g.add(Op::Input(id), buf.dtype(), shape.clone(), &[]));
        args.insert(id, buf.clone());
    }
    if ids.len() != e.op_inputs() {
        return Err(Error::Malformed(format!(
            "extern {} got {} inputs for {}",
            e.op.name(),
            ids.len(),
            e.inputs.len()
        )));
    }
    let fast = match (&e.op, e.input_shapes.as_slice()) {
        (Op::Matmul, [a, b]) if math == MathMode::Fast && a.len() == 3 && b.len() == 3 => {
            let d = crate::interp::matmul::Dims {
                b: a[0],
                m: a[1],
                k: a[2],
                n: b[2],
            };
            let ok = a[0] == b[0] && a[2] == b[1] && e.shape == [d.b, d.m, d.n];
            ok.then(|| crate::blas::matmul(&args[&ids_input(0)], &args[&ids_input(1)], d))
                .flatten()
                .map(Arc::new)
        }
        _ => None,
    };
    let out = match fast {
        Some(out) => out,
        None => {
            let node = g.add(e.op.clone(), e.dtype, e.shape.clone(), &ids);
            crate::interp::execute(&g, &args, &[node])?
                .pop()
                .ok_or_else(|| Error::Malformed("extern step produced nothing".into()))?
        }
    };
    // (the epilogue's operands, row-major, are read by slot after the op's)
    let out = with_epilogue(e, out, &inputs)?;
    checked_output(schedule, e, out)
}

/// `out`, the result of extern step `e`'s op computed without its epilogue,
/// with the epilogue applied (`inputs`: the step's inputs, the epilogue's
/// operands after the op's own).
pub(crate) fn with_epilogue(
    e: &ExternStep,
    out: Arc<Buffer>,
    inputs: &[Arc<Buffer>],
) -> Result<Arc<Buffer>> {
    if e.epilogue.is_empty() {
        return Ok(out);
    }
    let shape = <[usize; 3]>::try_from(e.shape.as_slice())
        .map_err(|_| Error::Malformed(format!("an epilogue on a {:?} result", e.shape)))?;
    crate::epilogue::apply_to_buffer(out, &e.epilogue, inputs, shape)
}

/// A matmul step with a strided operand, read in place by the float product of
/// Fast math (an operand of grouped dims, a convolution's windows, through
/// [`crate::tiled_gemm`]); `None` for any other step (or dtype), which reads
/// row-major inputs.
pub(super) fn strided_matmul(
    e: &ExternStep,
    math: MathMode,
    inputs: &[Arc<Buffer>],
) -> Option<Arc<Buffer>> {
    let (Op::Matmul, [a, b, ..], [x, y, ..]) = (&e.op, e.input_shapes.as_slice(), inputs) else {
        return None;
    };
    let views = &e.input_views[..2];
    if math != MathMode::Fast
        || e.op_inputs() != 2
        || (views.iter().all(Option::is_none) && e.epilogue.is_empty())
    {
        return None;
    }
    let [batch, m, k] = <[usize; 3]>::try_from(a.as_slice()).ok()?;
    let [b2, k2, n] = <[usize; 3]>::try_from(b.as_slice()).ok()?;
    if batch != b2 || k != k2 || e.shape != [batch, m, n] {
        return None;
    }
    let d = crate::interp::matmul::Dims { b: batch, m, k, n };
    let shape = [batch, m, n];
    if views
        .iter()
        .any(|v| v.as_ref().is_some_and(|v| v.dims.is_some()))
    {
        let xo = grouped(&views[0], a)?;
        let yo = grouped(&views[1], b)?;
        return match (&**x, &**y) {
            (Buffer::F32(x), Buffer::F32(y)) => {
                let epi = Epilogue::new(&e.epilogue, inputs, shape)?;
                crate::tiled_gemm::product(x, &xo, y, &yo, d, &epi)
                    .map(|v| Arc::new(Buffer::from_vec(v)))
            }
            (Buffer::F64(x), Buffer::F64(y)) => {
                let epi = Epilogue::new(&e.epilogue, inputs, shape)?;
                crate::tiled_gemm::product(x, &xo, y, &yo, d, &epi)
                    .map(|v| Arc::new(Buffer::from_vec(v)))
            }
            _ => None,
        };
    }
    let strided = |v: &Option<ExternView>, rows: usize, cols: usize| match v {
        None => Some(crate::blas::Strided::row_major(rows, cols)),
        Some(v) => match v.strides.as_slice() {
            &[batch, row, col] => Some(crate::blas::Strided {
                offset: v.offset,
                batch,
                row,
                col,
            }),
            _ => None,
        },
    };
    let xs = strided(&views[0], m, k)?;
    let ys = strided(&views[1], k, n)?;
    crate::blas::matmul_strided_then(x, &xs, y, &ys, d, (&e.epilogue, inputs)).map(Arc::new)
}

/// A `[b, rows, cols]` operand of `shape` read through view `v` (row-major
/// without one) as runs of `(size, stride)` dims.
fn grouped(v: &Option<ExternView>, shape: &[usize]) -> Option<crate::tiled_gemm::Grouped> {
    let row_major = ExternView {
        offset: 0,
        strides: vec![shape[1] * shape[2], shape[2], 1],
        dims: None,
        padded: None,
    };
    let v = v.as_ref().unwrap_or(&row_major);
    let runs = v.groups(shape)?;
    let dims = v.dims.as_deref().unwrap_or(shape);
    let run = |g: usize| -> Vec<(usize, usize)> {
        runs[g].clone().map(|d| (dims[d], v.strides[d])).collect()
    };
    Some(crate::tiled_gemm::Grouped {
        offset: v.offset,
        groups: [run(0), run(1), run(2)],
        padded: v.padded.clone(),
    })
}

/// The inputs of extern step `e` as row-major buffers: a strided one gathered.
pub(crate) fn row_major_inputs(e: &ExternStep, inputs: Vec<Arc<Buffer>>) -> Vec<Arc<Buffer>> {
    inputs
        .into_iter()
        .zip(e.input_views.iter().zip(&e.input_shapes))
        .map(|(b, (v, shape))| match v {
            None => b,
            Some(v) => {
                let layout = lazyfuse_ir::Layout {
                    shape: v.dims.clone().unwrap_or_else(|| shape.clone()).into(),
                    strides: v.strides.iter().map(|&s| s as isize).collect(),
                    offset: v.offset,
                };
                Arc::new(match &v.padded {
                    None => b.gather(&layout),
                    Some(p) => gather_padded(&b, &layout, p),
                })
            }
        })
        .collect()
}

/// The elements of `layout` over the zero-padded buffer `p` whose interior `b`
/// holds (the verifier has checked that every one lies inside `p`'s buffer).
fn gather_padded(b: &Buffer, layout: &lazyfuse_ir::Layout, p: &ZeroPadded) -> Buffer {
    let index = |o: usize| p.coords(o).and_then(|c| p.source_index(&c));
    crate::with_buffer!(b, v => Buffer::from_vec(
        layout
            .offsets()
            .map(|o| index(o).map_or_else(Default::default, |s| v[s]))
            .collect::<Vec<_>>(),
    ), raw => {
        let Buffer::Raw { dtype, bytes } = b else { unreachable!() };
        let size = dtype.size_in_bytes();
        let mut out = Vec::with_capacity(layout.numel() * size);
        for o in layout.offsets() {
            match index(o) {
                Some(s) => out.extend_from_slice(&bytes[s * size..(s + 1) * size]),
                None => out.resize(out.len() + size, 0),
            }
        }
        Buffer::Raw { dtype: *dtype, bytes: out }
    })
}

/// `out` checked against the schedule's declaration of `e`'s output buffer.
pub(super) fn checked_output(
    schedule: &Schedule,
    e: &ExternStep,
    out: Arc<Buffer>,
) -> Result<Arc<Buffer>> {
    let decl = &schedule.buffers[e.output.0 as usize];
    if out.dtype() != decl.dtype || out.len() != decl.len {
        return Err(Error::Malformed(format!(
            "extern {} produced {}[{}] for {}[{}]",
            e.op.name(),
            out.dtype(),
            out.len(),
            decl.dtype,
            decl.len
        )));
    }
    Ok(out)
}

/// The id under which [`run_extern`] passes its input slot `i` to the interpreter.
pub(super) fn ids_input(i: usize) -> InputId {
    InputId(i as u64)
}
