//! lazyfuse: a lazy tensor library with PyTorch's semantics.
//!
//! Build a computation with a PyTorch-shaped API; nothing runs until
//! [`Tensor::realize`] or a read such as [`Tensor::to_vec`]. Type promotion,
//! broadcasting and view layouts are decided while the graph is built, exactly as
//! PyTorch decides them, and errors surface then, as values.
//!
//! ```
//! use lazyfuse::{DType, Tensor};
//! let x = Tensor::arange(0.0, 6.0, 1.0, DType::F32)?.view(&[2, 3])?;
//! let y = x.mul(0.5)?.add(&x.sum(&[1], true)?)?; // [2, 3] + [2, 1]
//! assert_eq!(y.to_vec::<f32>()?, vec![3.0, 3.5, 4.0, 13.5, 14.0, 14.5]);
//! # Ok::<(), lazyfuse::Error>(())
//! ```
//!
//! The crates behind this facade, in processing order: `lazyfuse-ir` (dtypes,
//! promotion, views, the graph), `lazyfuse-codegen` (Cranelift and CUDA C code generation) and
//! `lazyfuse-runtime` (buffers, executors and the reference interpreter).
#![deny(missing_docs)]

pub mod autograd;
mod constant_pool;
mod cuda_check;
mod device;
mod display;
mod error;
pub mod io;
mod layout;
mod memory_format;
pub mod nn;
mod operand;
mod ops;
pub mod optim;
mod reading;
mod realize;
mod realize_all;
mod settings;
mod store;
mod tensor;

pub use autograd::{is_grad_enabled, no_grad, set_grad_enabled};
pub use cuda_check::{
    cuda_compile_check, cuda_compile_check_counts, set_cuda_compile_check, CHECK_ARCH,
};
pub use device::{
    cuda_emulation, get_default_device, set_cuda_emulation, set_default_device, Device,
    DeviceGuard, DeviceType, IntoDevice,
};
pub use error::{Error, Result};
pub use layout::Layout;
pub use lazyfuse_ir::kernel::MathMode;
pub use lazyfuse_ir::Layout as StridedLayout;
pub use lazyfuse_ir::ScatterReduce;
pub use lazyfuse_ir::{BinaryOp, DType, Scalar};
pub use lazyfuse_runtime::{half, Complex, Element};
pub use memory_format::MemoryFormat;
pub use operand::Operand;
pub use ops::activation::GeluApproximate;
pub use ops::creation::{initial_seed, manual_seed};
pub use ops::elementwise::RoundingMode;
pub use realize::{last_realize_stats, RealizeStats};
pub use realize_all::realize_all;
pub use settings::{
    cpu_backend, math_mode, set_cpu_backend, set_dump_ir, set_math_mode, set_passes, set_verify,
    CpuBackend,
};
pub use store::{live_buffers, live_grad_records, live_graph_nodes};
pub use tensor::Tensor;

use std::sync::atomic::{AtomicU8, Ordering};

static DEFAULT_DTYPE: AtomicU8 = AtomicU8::new(DType::F32 as u8);

/// The default floating dtype (`float32` unless changed): what a Python float
/// literal, integer true division and `Tensor::scalar(1.5)` produce.
///
/// ```
/// use lazyfuse::{default_dtype, DType, Tensor};
/// assert_eq!(default_dtype(), DType::F32);
/// assert_eq!(Tensor::scalar(1.5).dtype(), default_dtype());
/// assert_eq!(Tensor::scalar(3).div(2).unwrap().dtype(), default_dtype());
/// ```
pub fn default_dtype() -> DType {
    let index = DEFAULT_DTYPE.load(Ordering::Relaxed);
    DType::ALL
        .into_iter()
        .find(|d| *d as u8 == index)
        .unwrap_or(DType::F32)
}

/// Sets the default floating dtype; only floating dtypes are accepted (as PyTorch).
///
/// ```
/// use lazyfuse::{set_default_dtype, DType};
/// assert!(set_default_dtype(DType::I32).is_err());
/// ```
pub fn set_default_dtype(dtype: DType) -> Result<()> {
    if !matches!(dtype, DType::F16 | DType::BF16 | DType::F32 | DType::F64) {
        return Err(lazyfuse_ir::Error::invalid(
            "set_default_dtype",
            format!("only floating-point types are supported as the default type, got {dtype}"),
        )
        .into());
    }
    DEFAULT_DTYPE.store(dtype as u8, Ordering::Relaxed);
    Ok(())
}

/// The dtype PyTorch's `torch.result_type` gives for these operands (tensors and
/// host scalars), with the priorities dimensioned tensor > zero-dim tensor > scalar.
///
/// ```
/// use lazyfuse::{result_type, DType, Tensor};
/// let a = Tensor::zeros(&[2], DType::I32);
/// let z = Tensor::zeros(&[], DType::F64);
/// assert_eq!(result_type(&[(&a).into(), (&z).into()]).unwrap(), DType::F64);
/// assert_eq!(result_type(&[(&a).into(), 7i64.into()]).unwrap(), DType::I32);
/// ```
pub fn result_type(operands: &[Operand]) -> Result<DType> {
    let types: Vec<_> = operands.iter().map(Operand::operand_type).collect();
    Ok(lazyfuse_ir::promote::result_type(&types, default_dtype())?)
}

/// PyTorch's `torch.promote_types`: the dtype two dtypes promote to (re-exported from
/// `lazyfuse_ir::promote` beside [`result_type`]).
///
/// ```
/// use lazyfuse::{promote_types, DType};
/// assert_eq!(promote_types(DType::I32, DType::F16).unwrap(), DType::F16);
/// assert!(promote_types(DType::U64, DType::I8).is_err()); // PyTorch refuses it
/// ```
pub use lazyfuse_ir::promote::promote_types;

/// PyTorch's `torch.can_cast`: whether an in-place op may write `from` values into a
/// `to` tensor (re-exported from `lazyfuse_ir::promote`).
///
/// ```
/// use lazyfuse::{can_cast, DType};
/// assert!(can_cast(DType::I64, DType::F32));
/// assert!(!can_cast(DType::F32, DType::I64));
/// ```
pub use lazyfuse_ir::promote::can_cast;
