//! An extern product's epilogue ([`EpilogueOp`]: a bias added, a ReLU) applied
//! to each block of the result as the chunk that computed it finishes, while the
//! block is in cache: the elementwise kernel that would read the stored product
//! back is gone. Each element gets the product's `+ 0` first (a `-0` sum becomes
//! PyTorch's `+0`, see [`OutPtr::plus_zero`]), then the ops in order, in the
//! product's dtype: the values of the kernels they replace, bit for bit.

use crate::blas::{GemmElement, OutPtr};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use lazyfuse_ir::kernel::EpilogueOp;
use std::sync::Arc;

/// One op over a block, its operand resolved.
enum Step<'a, T> {
    /// adds `src[offset + strides · (b, m, n)]`
    Add {
        src: &'a [T],
        offset: usize,
        strides: [usize; 3],
    },
    /// `x < 0 ? 0 : x`
    Relu,
}

/// The ops of an epilogue over a `[b, m, n]` product of `T` (none: the `+ 0`
/// alone).
pub(crate) struct Epilogue<'a, T> {
    steps: Vec<Step<'a, T>>,
    /// the product's `[b, m, n]`, for which the operands were checked
    shape: [usize; 3],
}

impl<'a, T: GemmElement + PartialOrd> Epilogue<'a, T> {
    /// No ops over a product of `shape`: [`Epilogue::apply`] adds the `+ 0`
    /// alone.
    pub(crate) fn none(shape: [usize; 3]) -> Self {
        Epilogue {
            steps: Vec::new(),
            shape,
        }
    }

    /// `ops` over a product of `shape`, their operands in `inputs` (by slot), or
    /// `None` where an operand is missing, of another dtype, or shorter than the
    /// largest index the op reads.
    pub(crate) fn new(
        ops: &[EpilogueOp],
        inputs: &'a [Arc<Buffer>],
        shape: [usize; 3],
    ) -> Option<Self> {
        let steps = ops
            .iter()
            .map(|o| match o {
                EpilogueOp::Relu => Some(Step::Relu),
                EpilogueOp::Add {
                    slot,
                    offset,
                    strides,
                } => {
                    let src = T::slice(inputs.get(*slot)?)?;
                    let inside = o.last_index(&shape).is_none_or(|last| last < src.len());
                    inside.then_some(Step::Add {
                        src,
                        offset: *offset,
                        strides: *strides,
                    })
                }
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Epilogue { steps, shape })
    }

    /// The product's `[b, m, n]` the epilogue was made for.
    pub(crate) fn shape(&self) -> [usize; 3] {
        self.shape
    }

    /// Whether the epilogue has no ops.
    pub(crate) fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// [`Epilogue::apply`] to the whole product `out` (which this caller alone
    /// holds); `false`, with nothing done, where `out` is not of the product's
    /// size.
    pub(crate) fn apply_all(&self, out: &mut [T]) -> bool {
        let [b, m, n] = self.shape;
        if out.len() != b * m * n {
            return false;
        }
        let dst = OutPtr(out.as_mut_ptr());
        for bi in 0..b {
            // SAFETY: batch `bi`'s `m × n` block lies inside `out` (`b·m·n`
            // elements, checked above), which the `&mut` borrow makes this
            // caller's alone.
            unsafe { self.apply(dst, bi, (0, m), (0, n)) };
        }
        true
    }

    /// Applies `+ 0` and the ops to rows `r0..r1` × columns `c0..c1` of batch
    /// `bi` of the product at `dst` (of the shape given to [`Epilogue::new`]).
    ///
    /// # Safety
    /// The block lies inside the allocation of the product, and no other thread
    /// reads or writes it meanwhile.
    pub(crate) unsafe fn apply(
        &self,
        dst: OutPtr<T>,
        bi: usize,
        (r0, r1): (usize, usize),
        (c0, c1): (usize, usize),
    ) {
        let [_, m, n] = self.shape;
        for r in r0..r1 {
            // SAFETY: row `r`, columns `c0..c1` of batch `bi` lie inside the
            // allocation and are this caller's alone (the function's contract).
            let row = unsafe {
                std::slice::from_raw_parts_mut(dst.get().add((bi * m + r) * n + c0), c1 - c0)
            };
            for v in row.iter_mut() {
                *v = *v + T::ZERO;
            }
            for s in &self.steps {
                match s {
                    Step::Add {
                        src,
                        offset,
                        strides,
                    } => {
                        let at = offset + strides[0] * bi + strides[1] * r + strides[2] * c0;
                        match strides[2] {
                            // a bias per row: one value
                            0 => {
                                let b = src[at];
                                row.iter_mut().for_each(|v| *v = *v + b);
                            }
                            1 => {
                                let len = row.len();
                                for (v, &b) in row.iter_mut().zip(&src[at..at + len]) {
                                    *v = *v + b;
                                }
                            }
                            st => {
                                for (j, v) in row.iter_mut().enumerate() {
                                    *v = *v + src[at + j * st];
                                }
                            }
                        }
                    }
                    Step::Relu => {
                        for v in row.iter_mut() {
                            if *v < T::ZERO {
                                *v = T::ZERO;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `ops` applied to the whole `[b, m, n]` product `out` (a product that another
/// routine computed), their operands in `inputs`.
pub(crate) fn apply_to_buffer(
    out: Arc<Buffer>,
    ops: &[EpilogueOp],
    inputs: &[Arc<Buffer>],
    shape: [usize; 3],
) -> Result<Arc<Buffer>> {
    fn run<T: GemmElement + PartialOrd>(
        mut v: Vec<T>,
        ops: &[EpilogueOp],
        inputs: &[Arc<Buffer>],
        shape: [usize; 3],
    ) -> Option<Buffer> {
        Epilogue::<T>::new(ops, inputs, shape)?
            .apply_all(&mut v)
            .then(|| Buffer::from_vec(v))
    }
    if ops.is_empty() {
        return Ok(out);
    }
    let dtype = out.dtype();
    let owned = Arc::try_unwrap(out).unwrap_or_else(|shared| (*shared).clone());
    let done = match owned {
        Buffer::F32(v) => run(v, ops, inputs, shape),
        Buffer::F64(v) => run(v, ops, inputs, shape),
        _ => None,
    };
    done.map(Arc::new).ok_or_else(|| {
        Error::Malformed(format!(
            "a matmul epilogue on a {dtype} result of shape {shape:?} whose operands do not fit"
        ))
    })
}
