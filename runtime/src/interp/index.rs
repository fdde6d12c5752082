//! The data-dependent indexing nodes: `gather`, `index_select`, `take`, `scatter`
//! (with its reductions) and the static `flip`.
//!
//! Each node first turns its index input into storage positions, checking every
//! index value against the size it addresses: an index out of range is reported as
//! [`Error::IndexOutOfRange`] with PyTorch's message, never read or written. The
//! loads themselves are one generic copy by positions (which also moves the raw bytes
//! of the storage-only dtypes); only `scatter`'s reductions compute, per dtype class.
//!
//! Numerics follow PyTorch's CPU kernels: a reduced-precision float (`float16`,
//! `bfloat16`) destination accumulates every contribution in `float32` and rounds
//! once; integers wrap; `amax`/`amin` propagate NaN; the integer mean divides with
//! floor rounding after the (wrapping) sum; `mean` rounds the sum to the dtype and
//! then divides.

use super::num::{cadd, cmul, complex_div, Int};
use crate::buffer::{Buffer, Element};
use crate::error::{Error, Result};
use half::{bf16, f16};
use lazyfuse_ir::kernel::IndexError;
use lazyfuse_ir::shape::{contiguous_strides, numel};
use lazyfuse_ir::{Layout, Node, Op, ScatterReduce};
use num_complex::Complex;
use std::sync::Arc;

/// Evaluates an indexing node from its input buffers and nodes.
pub(crate) fn eval(node: &Node, args: &[Arc<Buffer>], arg_nodes: &[&Node]) -> Result<Buffer> {
    let x = &args[0];
    let x_shape = super::axis_shape(&arg_nodes[0].shape);
    if x.len() != numel(&x_shape) {
        return Err(malformed(node, "input length"));
    }
    match &node.op {
        Op::Flip { axes } => flip(x, &arg_nodes[0].shape, axes, node),
        Op::Gather { axis } => {
            let index = index_values(&args[1], arg_nodes[1], node)?;
            let index_shape = super::axis_shape(&arg_nodes[1].shape);
            let pos = axis_positions(index, &index_shape, &x_shape, *axis, node)?;
            select(x, &pos)
        }
        Op::IndexSelect { axis } => {
            let index = index_values(&args[1], arg_nodes[1], node)?;
            let pos = index_select_positions(index, &arg_nodes[0].shape, *axis, node)?;
            select(x, &pos)
        }
        Op::Take => {
            let index = index_values(&args[1], arg_nodes[1], node)?;
            let n = x.len();
            let pos = index
                .iter()
                .map(|&v| {
                    let wrapped = if v < 0 {
                        v as i128 + n as i128
                    } else {
                        v as i128
                    };
                    if (0..n as i128).contains(&wrapped) {
                        Ok(wrapped as usize)
                    } else {
                        Err(Error::IndexOutOfRange(format!(
                            "out of range: tried to access index {v} on a tensor of {n} elements."
                        )))
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            select(x, &pos)
        }
        Op::Scatter {
            axis,
            reduce,
            include_self,
        } => {
            let index = index_values(&args[1], arg_nodes[1], node)?;
            let index_shape = super::axis_shape(&arg_nodes[1].shape);
            let pos = axis_positions(index, &index_shape, &x_shape, *axis, node)?;
            scatter(x, &pos, &args[2], *reduce, *include_self, node)
        }
        _ => Err(malformed(node, "not an indexing op")),
    }
}

fn malformed(node: &Node, what: &str) -> Error {
    Error::Malformed(format!(
        "{}({}): {what}",
        node.op.name(),
        node.op.attributes()
    ))
}

/// The `int64` index values, checked against the index node's element count.
fn index_values<'a>(buffer: &'a Buffer, index: &Node, node: &Node) -> Result<&'a [i64]> {
    match buffer.as_slice::<i64>() {
        Some(v) if v.len() == index.numel() => Ok(v),
        _ => Err(malformed(
            node,
            "index is not an int64 buffer of its node's size",
        )),
    }
}

/// Storage positions of `shape` (row-major) read or written at every position `m` of
/// the index: `m` with `m[axis]` replaced by the index value there (gather/scatter).
fn axis_positions(
    index: &[i64],
    index_shape: &[usize],
    shape: &[usize],
    axis: usize,
    node: &Node,
) -> Result<Vec<usize>> {
    let fits = index_shape.len() == shape.len()
        && axis < shape.len()
        && (index.is_empty() || (0..shape.len()).all(|d| d == axis || index_shape[d] <= shape[d]));
    if !fits {
        return Err(malformed(node, "index shape does not fit the input"));
    }
    let strides: Vec<usize> = contiguous_strides(shape)
        .into_iter()
        .map(|s| s as usize)
        .collect();
    let size = shape[axis];
    let mut m = vec![0usize; shape.len()];
    let mut out = Vec::with_capacity(index.len());
    for &v in index {
        if v < 0 || v as u64 >= size as u64 {
            return Err(Error::IndexOutOfRange(format!(
                "index {v} is out of bounds for dimension {axis} with size {size}"
            )));
        }
        let mut offset = 0;
        for d in 0..shape.len() {
            let i = if d == axis { v as usize } else { m[d] };
            offset += i * strides[d];
        }
        out.push(offset);
        // Advance the index's multi-index, last dim fastest.
        for d in (0..m.len()).rev() {
            m[d] += 1;
            if m[d] < index_shape[d] {
                break;
            }
            m[d] = 0;
        }
    }
    Ok(out)
}

/// Storage positions of `index_select`: slice `index[j]` of `axis` for each `j`.
fn index_select_positions(
    index: &[i64],
    shape: &[usize],
    axis: usize,
    node: &Node,
) -> Result<Vec<usize>> {
    let error = IndexError::index_select(shape, axis);
    let shape = super::axis_shape(shape);
    if axis >= shape.len() {
        return Err(malformed(node, "axis"));
    }
    let (outer, size, inner) = (
        numel(&shape[..axis]),
        shape[axis],
        numel(&shape[axis + 1..]),
    );
    for &v in index {
        if v < 0 || v as u64 >= size as u64 {
            return Err(Error::IndexOutOfRange(error.message(v, size as u64)));
        }
    }
    let mut out = Vec::with_capacity(outer * index.len() * inner);
    for o in 0..outer {
        for &v in index {
            let base = (o * size + v as usize) * inner;
            out.extend(base..base + inner);
        }
    }
    Ok(out)
}

/// The elements of `x` at `positions`, in order (any dtype, raw bytes included).
fn select(x: &Buffer, positions: &[usize]) -> Result<Buffer> {
    let oob = || Error::Malformed("an index position outside its buffer".into());
    match x {
        Buffer::Raw { dtype, bytes } => {
            let size = dtype.size_in_bytes();
            let mut out = Vec::with_capacity(positions.len() * size);
            for &p in positions {
                out.extend_from_slice(bytes.get(p * size..(p + 1) * size).ok_or_else(oob)?);
            }
            Ok(Buffer::Raw {
                dtype: *dtype,
                bytes: out,
            })
        }
        _ => crate::with_buffer!(x, v => {
            let out = positions
                .iter()
                .map(|&p| v.get(p).copied().ok_or_else(oob))
                .collect::<Result<Vec<_>>>()?;
            Ok(Buffer::from_vec(out))
        }, raw => Err(oob())),
    }
}

/// `x` (of `shape`) reversed along `axes`: a read through a layout with negated
/// strides, which only the interpreter builds (graph layouts have none).
fn flip(x: &Buffer, shape: &[usize], axes: &[usize], node: &Node) -> Result<Buffer> {
    if numel(shape) == 0 || shape.is_empty() {
        return Ok(x.clone());
    }
    let mut layout = Layout::contiguous(shape);
    for &a in axes {
        if a >= shape.len() {
            return Err(malformed(node, "axis"));
        }
        layout.offset += (shape[a] - 1) * layout.strides[a] as usize;
        layout.strides[a] = -layout.strides[a];
    }
    let positions: Vec<usize> = layout.offsets().collect();
    select(x, &positions)
}

/// How one dtype combines scatter contributions: `A` is the type it accumulates in.
trait Combine: Element {
    type A: Copy;
    fn acc(self) -> Self::A;
    fn back(a: Self::A) -> Self;
    fn zero() -> Self::A;
    fn add(a: Self::A, b: Self::A) -> Self::A;
    fn mul(a: Self::A, b: Self::A) -> Self::A;
    /// `None` where the dtype has no order (complex; refused at build time).
    fn max(a: Self::A, b: Self::A) -> Option<Self::A>;
    fn min(a: Self::A, b: Self::A) -> Option<Self::A>;
    /// `sum / count` as PyTorch's `div_` (floor for integers); `None` for bool.
    fn mean(sum: Self, count: usize) -> Option<Self>;
}

impl Combine for bool {
    type A = bool;
    fn acc(self) -> bool {
        self
    }
    fn back(a: bool) -> bool {
        a
    }
    fn zero() -> bool {
        false
    }
    fn add(a: bool, b: bool) -> bool {
        a | b
    }
    fn mul(a: bool, b: bool) -> bool {
        a & b
    }
    fn max(a: bool, b: bool) -> Option<bool> {
        Some(a | b)
    }
    fn min(a: bool, b: bool) -> Option<bool> {
        Some(a & b)
    }
    fn mean(_: bool, _: usize) -> Option<bool> {
        None
    }
}

macro_rules! combine_int {
    ($($t:ty),*) => {$(
        impl Combine for $t {
            type A = $t;
            fn acc(self) -> $t {
                self
            }
            fn back(a: $t) -> $t {
                a
            }
            fn zero() -> $t {
                0
            }
            fn add(a: $t, b: $t) -> $t {
                Int::wrapping_add(a, b)
            }
            fn mul(a: $t, b: $t) -> $t {
                Int::wrapping_mul(a, b)
            }
            fn max(a: $t, b: $t) -> Option<$t> {
                Some(a.max(b))
            }
            fn min(a: $t, b: $t) -> Option<$t> {
                Some(a.min(b))
            }
            fn mean(sum: $t, count: usize) -> Option<$t> {
                // the quotient of a value of the type by a count >= 1 fits the type
                Some((sum as i128).div_euclid(count.max(1) as i128) as $t)
            }
        }
    )*};
}
combine_int!(u8, i8, i16, i32, i64, u16, u32, u64);

/// `std::max`/`std::min` as ATen's scatter reductions use them: a NaN source wins,
/// and a NaN already in place stays.
macro_rules! float_order {
    () => {
        fn max(a: Self::A, b: Self::A) -> Option<Self::A> {
            Some(if b.is_nan() || a < b { b } else { a })
        }
        fn min(a: Self::A, b: Self::A) -> Option<Self::A> {
            Some(if b.is_nan() || b < a { b } else { a })
        }
    };
}

macro_rules! combine_float {
    ($t:ty, $a:ty, $to:expr, $from:expr) => {
        impl Combine for $t {
            type A = $a;
            fn acc(self) -> $a {
                let f: fn($t) -> $a = $to;
                f(self)
            }
            fn back(a: $a) -> $t {
                let f: fn($a) -> $t = $from;
                f(a)
            }
            fn zero() -> $a {
                0.0
            }
            fn add(a: $a, b: $a) -> $a {
                a + b
            }
            fn mul(a: $a, b: $a) -> $a {
                a * b
            }
            float_order!();
            fn mean(sum: $t, count: usize) -> Option<$t> {
                Some(Self::back(Self::acc(sum) / count.max(1) as $a))
            }
        }
    };
}
combine_float!(f16, f32, |x| x.to_f32(), f16::from_f32);
combine_float!(bf16, f32, |x| x.to_f32(), bf16::from_f32);
combine_float!(f32, f32, |x| x, |x| x);
combine_float!(f64, f64, |x| x, |x| x);

macro_rules! combine_complex {
    ($t:ty) => {
        impl Combine for Complex<$t> {
            type A = Complex<$t>;
            fn acc(self) -> Self {
                self
            }
            fn back(a: Self) -> Self {
                a
            }
            fn zero() -> Self {
                Complex::new(0.0, 0.0)
            }
            fn add(a: Self, b: Self) -> Self {
                cadd(a, b)
            }
            fn mul(a: Self, b: Self) -> Self {
                cmul(a, b)
            }
            fn max(_: Self, _: Self) -> Option<Self> {
                None
            }
            fn min(_: Self, _: Self) -> Option<Self> {
                None
            }
            fn mean(sum: Self, count: usize) -> Option<Self> {
                Some(complex_div(sum, Complex::new(count.max(1) as $t, 0.0)))
            }
        }
    };
}
combine_complex!(f32);
combine_complex!(f64);

/// `x` with `src[k]` combined into position `pos[k]` for every `k`, in order.
fn scatter(
    x: &Buffer,
    pos: &[usize],
    src: &Buffer,
    reduce: Option<ScatterReduce>,
    include_self: bool,
    node: &Node,
) -> Result<Buffer> {
    if src.len() != pos.len() || src.dtype() != x.dtype() || pos.iter().any(|&p| p >= x.len()) {
        return Err(malformed(node, "source does not match the index"));
    }
    fn typed<T: Combine>(
        x: &[T],
        pos: &[usize],
        src: &Buffer,
        reduce: Option<ScatterReduce>,
        include_self: bool,
    ) -> Option<Buffer> {
        let src = src.as_slice::<T>()?;
        let Some(reduce) = reduce else {
            let mut out = x.to_vec();
            for (&p, &v) in pos.iter().zip(src) {
                out[p] = v;
            }
            return Some(Buffer::from_vec(out));
        };
        let mut acc: Vec<T::A> = x.iter().map(|&v| v.acc()).collect();
        // contributions per position (+1 for the old value when it takes part)
        let mut count = vec![0usize; x.len()];
        for (&p, &v) in pos.iter().zip(src) {
            let v = v.acc();
            acc[p] = if count[p] == 0 && !include_self {
                match reduce {
                    // PyTorch starts these from zero: -0.0 alone sums to +0.0
                    ScatterReduce::Sum | ScatterReduce::Mean => T::add(T::zero(), v),
                    _ => v,
                }
            } else {
                match reduce {
                    ScatterReduce::Sum | ScatterReduce::Mean => T::add(acc[p], v),
                    ScatterReduce::Prod => T::mul(acc[p], v),
                    ScatterReduce::Amax => T::max(acc[p], v)?,
                    ScatterReduce::Amin => T::min(acc[p], v)?,
                }
            };
            count[p] += 1;
        }
        let mut out: Vec<T> = acc.into_iter().map(T::back).collect();
        if reduce == ScatterReduce::Mean {
            for (o, &c) in out.iter_mut().zip(&count) {
                if c > 0 {
                    *o = T::mean(*o, c + include_self as usize)?;
                }
            }
        }
        Some(Buffer::from_vec(out))
    }
    let out = crate::with_buffer!(x, v => typed(v, pos, src, reduce, include_self), raw => None);
    out.ok_or_else(|| {
        Error::Unsupported(format!(
            "scatter {} on {}",
            reduce.map_or("assign", |r| r.name()),
            x.dtype()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lazyfuse_ir::DType;

    fn node(op: Op) -> Node {
        let mut g = lazyfuse_ir::Graph::new();
        let id = g.add(op, DType::F32, vec![], &[]);
        g.node(id).clone()
    }

    #[test]
    fn positions_refuse_out_of_range() {
        let n = node(Op::Gather { axis: 1 });
        let err = axis_positions(&[0, 3], &[1, 2], &[1, 3], 1, &n).unwrap_err();
        assert_eq!(
            err.to_string(),
            "index 3 is out of bounds for dimension 1 with size 3"
        );
        assert_eq!(
            axis_positions(&[2, 0, 1, 1], &[2, 2], &[2, 3], 1, &n).unwrap(),
            vec![2, 0, 4, 4] // row-major positions of [[x02, x00], [x11, x11]]
        );
    }

    #[test]
    fn half_sums_round_once() {
        let x = Buffer::from_vec(vec![f16::from_f32(2048.0)]);
        let src = Buffer::from_vec(vec![f16::ONE, f16::ONE]);
        let n = node(Op::Take);
        let out = scatter(&x, &[0, 0], &src, Some(ScatterReduce::Sum), true, &n).unwrap();
        assert_eq!(out, Buffer::from_vec(vec![f16::from_f32(2050.0)]));
    }

    #[test]
    fn integer_mean_floors() {
        let x = Buffer::from_vec(vec![0i64, 0]);
        let src = Buffer::from_vec(vec![1i64, 2, -1, -2]);
        let n = node(Op::Take);
        let out = scatter(
            &x,
            &[0, 0, 1, 1],
            &src,
            Some(ScatterReduce::Mean),
            false,
            &n,
        )
        .unwrap();
        assert_eq!(out, Buffer::from_vec(vec![1i64, -2]));
    }
}
