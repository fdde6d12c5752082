//! The elementwise kernels' building blocks: a function mapped over one buffer's
//! elements or two buffers' pairs (or a fallible one, for integer division), and the
//! error for an op the builder should have refused for a dtype.

use crate::buffer::{Buffer, Element};
use crate::error::{Error, Result};
use lazyfuse_ir::DType;

/// The error for an op the builder should have refused for a dtype.
pub(crate) fn not_for(op: impl std::fmt::Debug, dtype: DType) -> Error {
    Error::Malformed(format!("{op:?} is not defined for {dtype} inputs"))
}

/// `f` of each element.
pub(crate) fn map<T: Copy, U: Element>(x: &[T], f: impl Fn(T) -> U) -> Buffer {
    Buffer::from_vec(x.iter().map(|&a| f(a)).collect::<Vec<U>>())
}

/// `f` of each pair of elements.
pub(crate) fn map2<T: Copy, U: Element>(x: &[T], y: &[T], f: impl Fn(T, T) -> U) -> Buffer {
    Buffer::from_vec(x.iter().zip(y).map(|(&a, &b)| f(a, b)).collect::<Vec<U>>())
}

/// Like [`map2`] for kernels that can fail on data (integer division by zero).
pub(crate) fn try_map2<T: Copy, U: Element>(
    x: &[T],
    y: &[T],
    f: impl Fn(T, T) -> Result<U>,
) -> Result<Buffer> {
    let out: Result<Vec<U>> = x.iter().zip(y).map(|(&a, &b)| f(a, b)).collect();
    Ok(Buffer::from_vec(out?))
}
