//! The calling convention between compiled loop kernels and their callers: the
//! signature of a compiled CPU kernel ([`KernelFn`]), which the Cranelift backend
//! emits and the host build of the CUDA C wraps, and the codes of a
//! [`UnaryParamOp`] passed to the runtime's `lf_unary_param_*` functions.
//!
//! Loaded code is handed to the runtime as a [`KernelCode`]: an entry point per
//! kernel and the [`KernelSignature`] it was compiled for, which the executors match
//! against the step they run before every call.
//!
//! Code generation and the runtime both depend on this crate and not on each other,
//! so the contract between them lives here.

use super::LoopKernel;
use crate::{DType, UnaryParamOp};

/// A compiled kernel: runs the parallel points `begin..end` (row-major over the
/// parallel dims), each with all its phases.
///
/// `params[i]` points at element 0 of param `i`'s buffer; `status` at
/// `[u64; STATUS_SLOTS]`, zero on entry.
///
/// # Safety
/// Every param pointer must point at a live buffer of at least the param's `len`
/// elements of its dtype (written ones exclusively, for the points given), `status`
/// at [`STATUS_SLOTS`](super::STATUS_SLOTS) writable words,
/// `begin <= end <= parallel_points()`, and the code that made the function must
/// still be loaded.
pub type KernelFn =
    unsafe extern "C" fn(params: *const *mut u8, status: *mut u64, begin: u64, end: u64);

/// What a compiled kernel may be called with: each param's dtype, element count and
/// whether it is written, and the number of parallel points. Two kernels of equal
/// structure share code, so the buffers a param names are not part of it.
///
/// ```
/// use lazyfuse_ir::kernel::{BufId, KernelSignature, LoopKernel, Param};
/// use lazyfuse_ir::DType;
/// let mut k = LoopKernel {
///     name: "k".into(), nodes: vec![], dims: vec![4, 3], n_parallel: 1, exprs: vec![], stores: vec![],
///     params: vec![Param { buf: BufId(0), dtype: DType::F32, len: 12, writes: true }],
/// };
/// let sig = KernelSignature::of(&k);
/// k.params[0].buf = BufId(5);
/// assert!(sig.admits(&k));
/// k.params[0].len = 11;
/// assert!(!sig.admits(&k));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelSignature {
    params: Vec<(DType, usize, bool)>,
    points: usize,
}

impl KernelSignature {
    /// The signature of `k`.
    pub fn of(k: &LoopKernel) -> Self {
        KernelSignature {
            params: k
                .params
                .iter()
                .map(|p| (p.dtype, p.len, p.writes))
                .collect(),
            points: k.parallel_points(),
        }
    }

    /// Whether code compiled for this signature may run the kernel `k`: the same
    /// params in order (dtype, length, written or not) and parallel points.
    pub fn admits(&self, k: &LoopKernel) -> bool {
        self.points == k.parallel_points()
            && self.params.len() == k.params.len()
            && self
                .params
                .iter()
                .zip(&k.params)
                .all(|(&(dtype, len, writes), p)| {
                    (dtype, len, writes) == (p.dtype, p.len, p.writes)
                })
    }
}

/// Loaded host code of a batch of loop kernels: the Cranelift module, or the host
/// build of the CUDA C. Holding it keeps the code alive.
///
/// # Safety
/// An implementation promises, for every `j` below [`KernelCode::kernels`], that
/// `kernel(j)` returns a function and a signature such that the function, called as
/// [`KernelFn`]'s contract says with params matching the signature and
/// `begin <= end <= points`, reads and writes only inside those params and the status
/// block, for as long as `self` lives: the code of a kernel that passed
/// [`LoopKernel::verify`], with the signature taken from that kernel. The executors
/// check a step's buffers against its kernel, and the kernel against the signature,
/// and rely on this for the rest.
pub unsafe trait KernelCode: Send + Sync {
    /// Number of kernels in the batch.
    fn kernels(&self) -> usize;
    /// Kernel `j`'s entry point and the signature it was compiled for (`None` past
    /// the end of the batch).
    fn kernel(&self, j: usize) -> Option<(KernelFn, &KernelSignature)>;
}

/// The kind code and the three f64 parameters of a [`UnaryParamOp`] for
/// `lf_unary_param_*` (decoded by [`param_op`] in the runtime's `lf_unary_param_*`).
///
/// ```
/// use lazyfuse_ir::kernel::{param_code, param_op};
/// use lazyfuse_ir::UnaryParamOp;
/// let op = UnaryParamOp::Hardtanh { min_val: -1.0, max_val: 2.0 };
/// let (kind, p) = param_code(op);
/// assert_eq!(param_op(kind, p), Some(op));
/// ```
pub fn param_code(op: UnaryParamOp) -> (i64, [f64; 3]) {
    match op {
        UnaryParamOp::NanToNum {
            nan,
            posinf,
            neginf,
        } => (0, [nan, posinf, neginf]),
        UnaryParamOp::Logit { eps } => (1, [eps.unwrap_or(f64::NAN), 0.0, 0.0]),
        UnaryParamOp::RoundDecimals { decimals } => (2, [decimals as f64, 0.0, 0.0]),
        UnaryParamOp::Gelu { tanh } => (3, [tanh as u8 as f64, 0.0, 0.0]),
        UnaryParamOp::Softplus { beta, threshold } => (4, [beta, threshold, 0.0]),
        UnaryParamOp::Elu {
            alpha,
            scale,
            input_scale,
        } => (5, [alpha, scale, input_scale]),
        UnaryParamOp::LeakyRelu { negative_slope } => (6, [negative_slope, 0.0, 0.0]),
        UnaryParamOp::Hardtanh { min_val, max_val } => (7, [min_val, max_val, 0.0]),
    }
}

/// The inverse of [`param_code`]: the op of a kind code and its parameters, `None`
/// for an unknown code.
pub fn param_op(kind: i64, p: [f64; 3]) -> Option<UnaryParamOp> {
    Some(match kind {
        0 => UnaryParamOp::NanToNum {
            nan: p[0],
            posinf: p[1],
            neginf: p[2],
        },
        1 => UnaryParamOp::Logit {
            eps: if p[0].is_nan() { None } else { Some(p[0]) },
        },
        2 => UnaryParamOp::RoundDecimals {
            decimals: p[0] as i64,
        },
        3 => UnaryParamOp::Gelu { tanh: p[0] != 0.0 },
        4 => UnaryParamOp::Softplus {
            beta: p[0],
            threshold: p[1],
        },
        5 => UnaryParamOp::Elu {
            alpha: p[0],
            scale: p[1],
            input_scale: p[2],
        },
        6 => UnaryParamOp::LeakyRelu {
            negative_slope: p[0],
        },
        7 => UnaryParamOp::Hardtanh {
            min_val: p[0],
            max_val: p[1],
        },
        _ => return None,
    })
}
