//! Kernel IR → CUDA C: the source that NVRTC compiles for NVIDIA GPUs.
//!
//! Every [`LoopKernel`] becomes one `extern "C" __global__` function over a
//! grid-stride loop: each thread takes parallel points (the row-major flattening of
//! the parallel dims) and runs the point exactly as the CPU backend's scalar code
//! does: the outer stage, then each phase's loop over the reduction dims (row-major,
//! with its accumulators and scans), then the next outer stage, with every store at
//! its value's stage. The scalar semantics are the kernel IR's (the interpreter's):
//! [`PRELUDE`] holds them as device functions (`lf_*`), and the generated code calls
//! them by name, so the per-op text stays one line each.
//!
//! Two layouts refine that one: elementwise kernels with contiguous, aligned accesses
//! take groups of four points per step, with one vector load or store per param
//! ([`CudaKernel::group`]); fast-math reductions along rows give each point a block
//! whose threads share the reduction points and combine their partials
//! ([`CudaKernel::block_per_point`]).
//!
//! ABI: the kernel's parameters are one device pointer per [`LoopKernel::params`]
//! entry (in order, typed by the param's storage dtype: `u16` for float16/bfloat16,
//! `u8` for bool and float8), then `u64* status` (the kernel IR's status block of
//! [`STATUS_SLOTS`](lazyfuse_ir::kernel::STATUS_SLOTS) words, zeroed before the
//! launch). Buffers must be aligned to 32 bytes (four elements of the widest dtype):
//! elementwise kernels whose accesses allow it take groups of four consecutive points
//! per step ([`CudaKernel::group`]) and load and store them as one vector. Any grid and block shape is
//! correct; [`CudaKernel::n_points`] is the number of parallel points.
//!
//! Numerics: float32 sums accumulate in double, float16/bfloat16 values are computed in
//! float and rounded after every op, integers wrap, integer division by zero sets
//! [`Status::ZeroDivision`], gather-like loads out of range set
//! [`Status::IndexOutOfRange`] and read nothing. Transcendentals are CUDA's libdevice
//! functions (within the conformance tolerances of the interpreter's libm, not bit
//! for bit); the source must be compiled with `--fmad=false`, so that `a * b + c`
//! rounds twice as on the CPU.
//!
//! ```
//! use lazyfuse_codegen::cuda::kernel_source;
//! use lazyfuse_ir::kernel::{Affine, Expr, ExprNode, LoopKernel, MathMode, Param, Stage, StoreOp, BufId, ExprId, ParamId};
//! use lazyfuse_ir::{DType, UnaryOp};
//! let load = Expr::Load { param: ParamId(0), index: Affine { offset: 0, strides: vec![1] }, dynamic: None };
//! let k = LoopKernel {
//!     name: "k0_exp".into(),
//!     nodes: vec![],
//!     params: vec![
//!         Param { buf: BufId(0), dtype: DType::F32, len: 8, writes: false },
//!         Param { buf: BufId(1), dtype: DType::F32, len: 8, writes: true },
//!     ],
//!     dims: vec![8],
//!     n_parallel: 1,
//!     exprs: vec![
//!         ExprNode { expr: load, dtype: DType::F32, stage: Stage::Outer(0) },
//!         ExprNode { expr: Expr::Unary { op: UnaryOp::Exp, x: ExprId(0) }, dtype: DType::F32, stage: Stage::Outer(0) },
//!     ],
//!     stores: vec![StoreOp { param: ParamId(1), index: Affine { offset: 0, strides: vec![1] }, value: ExprId(1) }],
//! };
//! let src = kernel_source(&k, MathMode::Fast).unwrap();
//! // contiguous and a multiple of four points: groups of four, one vector load each
//! assert!(src.function.contains("lf_vload4(&p0[i0])"));
//! assert!(src.function.contains("lf_exp(v0_0)"));
//! assert_eq!((src.n_points, src.group), (8, 4));
//! ```
//!
//! # Files
//! `repr` (register and storage types, literals, rounding, float8 layouts),
//! `emit` (the kernel function: its grid-stride loop over the points, vector
//! groups and blocks per point), `emitter` (the shared lowering's rendering:
//! values, stores, phases and their loops), `reduce` (accumulators and scans),
//! `tiers` (vector groups, block-per-point reductions) and `scalar`
//! (indices, loads, constants and the scalar ops); `prelude.cu` holds the `lf_*`
//! device functions they call.
//!
//! [`Status::ZeroDivision`]: lazyfuse_ir::kernel::Status::ZeroDivision
//! [`Status::IndexOutOfRange`]: lazyfuse_ir::kernel::Status::IndexOutOfRange

/// The device functions and typedefs every generated kernel uses (the scalar
/// semantics of the kernel IR); compiled once per translation unit, before the
/// kernels.
pub const PRELUDE: &str = include_str!("prelude.cu");

use crate::CodegenError;
use lazyfuse_ir::kernel::{LoopKernel, MathMode};

mod emit;
mod emitter;
pub mod host;
mod reduce;
mod repr;
mod scalar;
#[cfg(test)]
mod tests;
mod tiers;

pub use tiers::BLOCK_THREADS;

use emit::Emit;
use repr::{f8_decode, f8_encode, flit, ilit, reg, rep, round, start, storage, unsupported, Rep};
use scalar::{binary, cast, constant, fits_i32, index, load, unary, unary_param};
use tiers::{block_reduces, combine, lane_value, stored_bits, vectorizes, LANES};

/// One loop kernel as CUDA C.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaKernel {
    /// the `extern "C"` symbol (the kernel's name, made a C identifier)
    pub symbol: String,
    /// the `__global__` function, without [`PRELUDE`]
    pub function: String,
    /// parallel points the kernel computes
    pub n_points: u64,
    /// points each step of the grid-stride loop takes (a vectorized kernel's groups
    /// of 4, else 1): a launch needs `n_points / group` threads to give each one step
    pub group: u64,
    /// device pointers the kernel takes before the status pointer
    pub n_params: usize,
    /// whether the threads of a block share each point's reductions (launch many
    /// threads per block, one block per point up to the grid's size); otherwise each
    /// thread takes its own steps of the grid-stride loop
    pub block_per_point: bool,
}

impl CudaKernel {
    /// A complete translation unit: [`PRELUDE`] and this kernel.
    pub fn translation_unit(&self) -> String {
        translation_unit(std::slice::from_ref(self))
    }
}

/// One translation unit holding [`PRELUDE`] once and every kernel of `kernels`
/// (compile the kernels of one realize together).
pub fn translation_unit(kernels: &[CudaKernel]) -> String {
    let mut out = String::with_capacity(PRELUDE.len() + kernels.len() * 2048);
    out.push_str(PRELUDE);
    for k in kernels {
        out.push('\n');
        out.push_str(&k.function);
    }
    out
}

/// Translates `k` to CUDA C. `math` is the CPU's math mode: exact math also
/// compensates float sums as the interpreter does (the transcendentals are
/// CUDA's in both modes).
pub fn kernel_source(k: &LoopKernel, math: MathMode) -> Result<CudaKernel, CodegenError> {
    kernel_source_as(k, math, &k.name)
}

/// [`kernel_source`] under the symbol `name` (made a C identifier): kernels of one
/// translation unit need distinct symbols.
pub fn kernel_source_as(
    k: &LoopKernel,
    math: MathMode,
    name: &str,
) -> Result<CudaKernel, CodegenError> {
    k.verify()
        .map_err(|e| CodegenError::Malformed(e.to_string()))?;
    let symbol: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let symbol = if symbol.starts_with(|c: char| c.is_ascii_digit()) || symbol.is_empty() {
        format!("k_{symbol}")
    } else {
        symbol
    };
    let needed = k.needed_exprs();
    let mut e = Emit {
        k,
        math,
        wide: !fits_i32(k),
        lane: None,
        block: false,
        needed,
        out: String::new(),
        depth: 0,
    };
    e.function(&symbol)?;
    Ok(CudaKernel {
        symbol,
        function: e.out,
        n_points: k.parallel_points() as u64,
        group: if vectorizes(k) && k.parallel_points() > 0 {
            LANES as u64
        } else {
            1
        },
        n_params: k.params.len(),
        block_per_point: block_reduces(k, math) && !vectorizes(k),
    })
}
