//! lazyfuse-compile: the compile stage. It makes a schedule's loop kernels into the
//! code the runtime calls, a [`CompiledSchedule`]: Cranelift machine code (the CPU
//! backend), the generated CUDA C built for the host (a check of the GPU code
//! generator on the CPU), or the same CUDA C compiled by NVRTC and loaded on a GPU.
//!
//! It sits between the code generators (`lazyfuse-codegen`, which translate a kernel
//! and load its code) and the runtime (`lazyfuse-runtime`, which runs loaded code and
//! compiles nothing), so neither depends on the other. Compiled kernels are kept in
//! one process-wide cache ([`kernel_cache`]), keyed by a kernel's structure: equal
//! kernels of different realizes compile once.
//!
//! ```
//! use lazyfuse_ir::kernel::{MathMode, Schedule};
//! let empty = Schedule { buffers: vec![], steps: vec![], outputs: vec![], notes: vec![] };
//! let (compiled, stats) = lazyfuse_compile::compile(&empty, MathMode::Exact)?;
//! assert_eq!((compiled.loop_kernels(), stats.compiled), (0, 0));
//! # Ok::<(), lazyfuse_runtime::Error>(())
//! ```
#![deny(missing_docs)]

mod device;
pub mod kernel_cache;

use lazyfuse_ir::kernel::{LoopKernel, MathMode, Schedule};
use lazyfuse_ir::InputId;
use lazyfuse_runtime::exec::{self, CompiledSchedule, RunStats};
use lazyfuse_runtime::{resident, Buffer, Error, Result};
use std::collections::HashMap;
use std::sync::Arc;

pub use device::launch_dims;
pub use kernel_cache::{cached_kernels, KERNEL_CACHE_CAPACITY};

/// What turns loop kernels into the code the executors call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KernelCompiler {
    /// Cranelift machine code (the CPU backend)
    #[default]
    Cranelift,
    /// the generated CUDA C compiled for the host by the system C++ compiler
    /// (`lazyfuse_codegen::cuda::host`): checks the GPU code generator on the CPU
    CudaHost,
    /// the same CUDA C compiled by NVRTC for the GPU of this ordinal (`cuda:N`) and
    /// loaded there: run with buffers copied there and back by the CPU executor
    /// (`lazyfuse_runtime::cuda::mirror`), or on device-resident buffers
    /// (`lazyfuse_runtime::resident`)
    Cuda(usize),
}

/// What compiles the kernels of `cuda:ordinal`: NVRTC for the GPU, or under the
/// runtime's host emulation the host build of the same CUDA C. Pass it to
/// [`compile_using`] for a schedule that `lazyfuse_runtime::resident::run` runs there.
///
/// ```
/// use lazyfuse_compile::{kernel_compiler, KernelCompiler};
/// lazyfuse_runtime::resident::set_emulation(false);
/// assert_eq!(kernel_compiler(1), KernelCompiler::Cuda(1));
/// ```
pub fn kernel_compiler(ordinal: usize) -> KernelCompiler {
    if resident::emulated() {
        KernelCompiler::CudaHost
    } else {
        KernelCompiler::Cuda(ordinal)
    }
}

/// Compiles `schedule`'s loop kernels with Cranelift and `math`: the ones the kernel
/// cache lacks in one batch (one Cranelift module), the others from the cache. The
/// stats say how many of each and how long it took.
pub fn compile(schedule: &Schedule, math: MathMode) -> Result<(CompiledSchedule, RunStats)> {
    compile_using(schedule, math, KernelCompiler::Cranelift)
}

/// [`compile`] with the kernels made by `compiler`.
pub fn compile_using(
    schedule: &Schedule,
    math: MathMode,
    compiler: KernelCompiler,
) -> Result<(CompiledSchedule, RunStats)> {
    let mut stats = RunStats::default();
    let entries = kernel_cache::compile_all(schedule, math, compiler, &mut stats)?;
    Ok((CompiledSchedule::new(entries, math), stats))
}

/// Compiles `schedule`'s loop kernels with Cranelift and runs it on the CPU. `inputs` holds the
/// buffers its `BufKind::Input` buffers name; the result holds one buffer per target.
///
/// ```
/// use lazyfuse_ir::kernel::*;
/// use lazyfuse_ir::{DType, InputId};
/// use lazyfuse_runtime::Buffer;
/// use std::{collections::HashMap, sync::Arc};
/// let double = LoopKernel {
///     name: "double".into(),
///     nodes: vec![],
///     params: vec![
///         Param { buf: BufId(0), dtype: DType::I32, len: 3, writes: false },
///         Param { buf: BufId(1), dtype: DType::I32, len: 3, writes: true },
///     ],
///     dims: vec![3],
///     n_parallel: 1,
///     exprs: vec![
///         ExprNode { expr: Expr::Load { param: ParamId(0), index: Affine { offset: 0, strides: vec![1] }, dynamic: None }, dtype: DType::I32, stage: Stage::Outer(0) },
///         ExprNode { expr: Expr::Binary { op: lazyfuse_ir::BinaryOp::Add, a: ExprId(0), b: ExprId(0) }, dtype: DType::I32, stage: Stage::Outer(0) },
///     ],
///     stores: vec![StoreOp { param: ParamId(1), index: Affine { offset: 0, strides: vec![1] }, value: ExprId(1) }],
/// };
/// let schedule = Schedule {
///     buffers: vec![
///         BufDecl { dtype: DType::I32, len: 3, kind: BufKind::Input(InputId(7)) },
///         BufDecl { dtype: DType::I32, len: 3, kind: BufKind::Output(0) },
///     ],
///     steps: vec![Step::Loop(double)],
///     outputs: vec![BufId(1)],
///     notes: vec![],
/// };
/// let inputs = HashMap::from([(InputId(7), Arc::new(Buffer::from_vec(vec![1i32, -2, 3])))]);
/// let (out, stats) = lazyfuse_compile::run(&schedule, &inputs).unwrap();
/// assert_eq!(*out[0], Buffer::from_vec(vec![2i32, -4, 6]));
/// assert_eq!(stats.kernels, 1);
/// ```
pub fn run(
    schedule: &Schedule,
    inputs: &HashMap<InputId, Arc<Buffer>>,
) -> Result<(Vec<Arc<Buffer>>, RunStats)> {
    run_donating(schedule, inputs, &mut HashMap::new())
}

/// [`run`] (kernels compiled with the default [`MathMode`]), where `donated` holds
/// buffers the caller gave up: each
/// [`BufKind::Donated`](lazyfuse_ir::kernel::BufKind::Donated) buffer of the schedule is taken out of the map and written in
/// place when this run owns it alone (an in-place write stores into it, no copy).
/// A donated buffer the map lacks is read from `inputs` and copied before the first
/// write, as any shared buffer; an input the schedule only reads may be in either
/// map. On an error, the donated buffers that no step had
/// written yet go back into the map (a written one is dropped: its old contents
/// are gone); on success the map keeps the buffers the schedule did not take.
///
/// ```
/// use lazyfuse_ir::kernel::*;
/// use lazyfuse_ir::{DType, InputId};
/// use lazyfuse_runtime::Buffer;
/// use std::{collections::HashMap, sync::Arc};
/// let bump = LoopKernel {
///     name: "bump".into(),
///     nodes: vec![],
///     params: vec![Param { buf: BufId(0), dtype: DType::I32, len: 3, writes: true }],
///     dims: vec![],
///     n_parallel: 0,
///     exprs: vec![
///         ExprNode { expr: Expr::Load { param: ParamId(0), index: Affine { offset: 1, strides: vec![] }, dynamic: None }, dtype: DType::I32, stage: Stage::Outer(0) },
///         ExprNode { expr: Expr::Binary { op: lazyfuse_ir::BinaryOp::Add, a: ExprId(0), b: ExprId(0) }, dtype: DType::I32, stage: Stage::Outer(0) },
///     ],
///     stores: vec![StoreOp { param: ParamId(0), index: Affine { offset: 1, strides: vec![] }, value: ExprId(1) }],
/// };
/// let schedule = Schedule {
///     buffers: vec![BufDecl { dtype: DType::I32, len: 3, kind: BufKind::Donated(InputId(0)) }],
///     steps: vec![Step::Loop(bump)],
///     outputs: vec![BufId(0)],
///     notes: vec![],
/// };
/// let x = Arc::new(Buffer::from_vec(vec![1i32, 2, 3]));
/// let at = x.as_ptr();
/// let mut donated = HashMap::from([(InputId(0), x)]);
/// let (out, _) = lazyfuse_compile::run_donating(&schedule, &HashMap::new(), &mut donated).unwrap();
/// assert_eq!(*out[0], Buffer::from_vec(vec![1i32, 4, 3]));
/// assert_eq!(out[0].as_ptr(), at); // written in place
/// assert!(donated.is_empty());
/// ```
pub fn run_donating(
    schedule: &Schedule,
    inputs: &HashMap<InputId, Arc<Buffer>>,
    donated: &mut HashMap<InputId, Arc<Buffer>>,
) -> Result<(Vec<Arc<Buffer>>, RunStats)> {
    let (compiled, stats) = compile(schedule, MathMode::default())?;
    exec::run_compiled(schedule, &compiled, inputs, donated, stats)
}

/// The Cranelift IR of a loop kernel compiled with `math`, for `LAZYFUSE_DUMP_IR`.
pub fn clif_text(kernel: &LoopKernel, math: MathMode) -> Result<String> {
    lazyfuse_codegen::cpu::clif_text(kernel, math)
        .map_err(|e| Error::Unsupported(format!("compiling kernel {}: {e}", kernel.name)))
}

/// The machine code of a loop kernel compiled with `math`, for `LAZYFUSE_DUMP_IR=asm`.
pub fn asm_text(kernel: &LoopKernel, math: MathMode) -> Result<String> {
    lazyfuse_codegen::cpu::asm_text(kernel, math)
        .map_err(|e| Error::Unsupported(format!("compiling kernel {}: {e}", kernel.name)))
}
