//! The process-wide settings a realize reads, and [`Settings`], their snapshot taken
//! once per realize: the CPU backend (`LAZYFUSE_CPU_BACKEND`), the math
//! mode (`LAZYFUSE_MATH`), fusion (`LAZYFUSE_NOFUSE`), the graph passes, the graph
//! verifier, and the inspection switches (`LAZYFUSE_DEBUG`, `LAZYFUSE_DUMP_IR`).

use crate::error::{Error, Result};
use crate::Device;
use lazyfuse_compile::KernelCompiler;
use lazyfuse_ir::kernel::MathMode;
use lazyfuse_runtime::resident;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::LazyLock;

/// Whether `LAZYFUSE_DUMP_IR` (or [`set_dump_ir`]) asks for IR dumps.
static DUMP_IR: LazyLock<AtomicBool> = LazyLock::new(|| {
    AtomicBool::new(std::env::var_os("LAZYFUSE_DUMP_IR").is_some_and(|v| v != "0"))
});

/// Turns printing of the IR at every realize on or off (to standard error); the
/// environment variable `LAZYFUSE_DUMP_IR` sets the initial value.
///
/// ```
/// lazyfuse::set_dump_ir(true); // the next realize prints its graph to stderr
/// let t = lazyfuse::Tensor::scalar(2).mul(3).unwrap();
/// assert_eq!(t.to_vec::<i64>().unwrap(), vec![6]);
/// lazyfuse::set_dump_ir(false);
/// ```
pub fn set_dump_ir(on: bool) {
    DUMP_IR.store(on, Ordering::Relaxed);
}

pub(crate) fn dump_ir_enabled() -> bool {
    DUMP_IR.load(Ordering::Relaxed)
}

/// Whether `realize` runs the graph passes (`lazyfuse_ir::passes`) before executing;
/// `LAZYFUSE_PASSES=0` (or [`set_passes`]) turns them off.
static PASSES: LazyLock<AtomicBool> =
    LazyLock::new(|| AtomicBool::new(std::env::var_os("LAZYFUSE_PASSES").is_none_or(|v| v != "0")));

/// Turns the graph passes (dead-node removal, common-subexpression elimination,
/// removal of same-dtype casts, folding of view chains and of views of constants)
/// on or off for every realize from now on. They are on by default;
/// `LAZYFUSE_PASSES=0` sets the initial value to off. Turning them off is for
/// bisecting a wrong result: the values are the same either way.
///
/// ```
/// use lazyfuse::{DType, Tensor};
/// let x = Tensor::arange(0.0, 4.0, 1.0, DType::F32).unwrap();
/// lazyfuse::set_passes(false);
/// let off = x.exp().unwrap().add(&x.exp().unwrap()).unwrap().to_vec::<f32>().unwrap();
/// lazyfuse::set_passes(true);
/// let on = x.exp().unwrap().add(&x.exp().unwrap()).unwrap().to_vec::<f32>().unwrap();
/// assert_eq!(off, on);
/// ```
pub fn set_passes(on: bool) {
    PASSES.store(on, Ordering::Relaxed);
}

pub(crate) fn passes_enabled() -> bool {
    PASSES.load(Ordering::Relaxed)
}

/// Whether every recorded node is checked by the graph verifier: always in debug
/// builds; in release builds when `LAZYFUSE_VERIFY` is set or [`set_verify`] asks.
pub(crate) static VERIFY: LazyLock<AtomicBool> = LazyLock::new(|| {
    AtomicBool::new(
        cfg!(debug_assertions) || std::env::var_os("LAZYFUSE_VERIFY").is_some_and(|v| v != "0"),
    )
});

/// Turns the graph verifier on or off for every node recorded from now on (the test
/// suites turn it on in release builds). A node that breaks an invariant of
/// `lazyfuse_ir::graph` is a lazyfuse bug, reported by a panic naming the invariant.
///
/// ```
/// lazyfuse::set_verify(true);
/// let t = lazyfuse::Tensor::zeros(&[2], lazyfuse::DType::F32).exp().unwrap();
/// assert_eq!(t.numel(), 2);
/// ```
pub fn set_verify(on: bool) {
    VERIFY.store(on, Ordering::Relaxed);
}

/// Which CPU backend realizes CPU tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuBackend {
    /// Fused loop kernels compiled to native code with Cranelift (the default).
    Jit,
    /// The reference interpreter: one node at a time, the semantics' oracle.
    Interp,
    /// The fused kernels' CUDA C (the GPU backend's code), compiled for the host by
    /// the system C++ compiler and run on the CPU: checks the CUDA code generator's
    /// semantics where no GPU exists. Slow to compile; for tests.
    CudaHost,
    /// The fused kernels' CUDA C compiled by NVRTC and run on `cuda:0`, each kernel's
    /// buffers copied to the GPU and back (tensors stay on the CPU): checks the GPU
    /// backend on whole workloads until tensors live on the device. Without a GPU,
    /// realizes fail with "CUDA driver not found: …".
    Cuda,
}

impl CpuBackend {
    /// What compiles the loop kernels of this backend (`None`: the interpreter).
    pub(crate) fn compiler(self) -> Option<KernelCompiler> {
        match self {
            CpuBackend::Jit => Some(KernelCompiler::Cranelift),
            CpuBackend::CudaHost => Some(KernelCompiler::CudaHost),
            CpuBackend::Cuda => Some(KernelCompiler::Cuda(0)),
            CpuBackend::Interp => None,
        }
    }
}

impl std::str::FromStr for CpuBackend {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "jit" => Ok(CpuBackend::Jit),
            "interp" => Ok(CpuBackend::Interp),
            "cuda-host" => Ok(CpuBackend::CudaHost),
            "cuda" => Ok(CpuBackend::Cuda),
            other => Err(Error::Config(format!(
                "unknown CPU backend '{other}': expected 'jit', 'interp', 'cuda-host' or 'cuda'"
            ))),
        }
    }
}

/// 0: not chosen yet (read the environment), 1: jit, 2: interp, 3: cuda-host, 4: cuda.
static BACKEND: AtomicU8 = AtomicU8::new(0);

/// Selects the CPU backend for every realize from now on; `LAZYFUSE_CPU_BACKEND`
/// (`jit`, `interp`, `cuda-host` or `cuda`) sets the initial choice, the JIT by default.
///
/// ```
/// use lazyfuse::{CpuBackend, Tensor};
/// lazyfuse::set_cpu_backend(CpuBackend::Interp);
/// let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap().exp().unwrap();
/// let on_interp = x.to_vec::<f32>().unwrap();
/// lazyfuse::set_cpu_backend(CpuBackend::Jit);
/// assert_eq!(lazyfuse::cpu_backend().unwrap(), CpuBackend::Jit);
/// let y = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap().exp().unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), on_interp);
/// ```
pub fn set_cpu_backend(backend: CpuBackend) {
    BACKEND.store(backend_code(backend), Ordering::Relaxed);
}

/// `backend`'s code in [`BACKEND`].
fn backend_code(backend: CpuBackend) -> u8 {
    match backend {
        CpuBackend::Jit => 1,
        CpuBackend::Interp => 2,
        CpuBackend::CudaHost => 3,
        CpuBackend::Cuda => 4,
    }
}

/// The CPU backend realizes use; an `Err` when `LAZYFUSE_CPU_BACKEND` names none.
///
/// ```
/// assert!(lazyfuse::cpu_backend().is_ok());
/// ```
pub fn cpu_backend() -> Result<CpuBackend> {
    match BACKEND.load(Ordering::Relaxed) {
        1 => Ok(CpuBackend::Jit),
        2 => Ok(CpuBackend::Interp),
        3 => Ok(CpuBackend::CudaHost),
        4 => Ok(CpuBackend::Cuda),
        _ => {
            let backend = match std::env::var("LAZYFUSE_CPU_BACKEND") {
                Ok(v) => v.parse()?,
                Err(_) => CpuBackend::Jit,
            };
            // The environment is read once (a realize asks every time); a choice
            // made meanwhile by `set_cpu_backend` wins.
            let code = backend_code(backend);
            let _ = BACKEND.compare_exchange(0, code, Ordering::Relaxed, Ordering::Relaxed);
            cpu_backend()
        }
    }
}

/// 0: not chosen yet (read the environment), 1: fast, 2: exact.
static MATH: AtomicU8 = AtomicU8::new(0);

/// Selects how JIT kernels compute float math from now on: [`MathMode::Fast`] (the
/// default: inline vector approximations, reordered reductions and `a*b + c` as one
/// fused multiply-add, within the conformance tolerances) or [`MathMode::Exact`]
/// (bit for bit the reference interpreter's values). `LAZYFUSE_MATH` (`fast` or `exact`) sets the initial
/// choice.
///
/// ```
/// use lazyfuse::{MathMode, Tensor};
/// lazyfuse::set_math_mode(MathMode::Exact);
/// assert_eq!(lazyfuse::math_mode().unwrap(), MathMode::Exact);
/// let x = Tensor::from_vec(vec![0.5f32, 2.0], &[2]).unwrap();
/// assert_eq!(x.exp().unwrap().to_vec::<f32>().unwrap(), vec![0.5f32.exp(), 2.0f32.exp()]);
/// lazyfuse::set_math_mode(MathMode::Fast);
/// ```
pub fn set_math_mode(mode: MathMode) {
    MATH.store(math_code(mode), Ordering::Relaxed);
}

/// `mode`'s code in [`MATH`].
fn math_code(mode: MathMode) -> u8 {
    match mode {
        MathMode::Fast => 1,
        MathMode::Exact => 2,
    }
}

/// The math mode JIT kernels are compiled with; an `Err` when `LAZYFUSE_MATH` names
/// none.
///
/// ```
/// assert!(lazyfuse::math_mode().is_ok());
/// ```
pub fn math_mode() -> Result<MathMode> {
    match MATH.load(Ordering::Relaxed) {
        1 => Ok(MathMode::Fast),
        2 => Ok(MathMode::Exact),
        _ => {
            let mode = match std::env::var("LAZYFUSE_MATH") {
                Ok(v) => v.parse().map_err(Error::Config)?,
                Err(_) => MathMode::Fast,
            };
            // Read once, as the backend is (see `cpu_backend`).
            let _ = MATH.compare_exchange(0, math_code(mode), Ordering::Relaxed, Ordering::Relaxed);
            math_mode()
        }
    }
}

/// `LAZYFUSE_DEBUG`: 0 (off), 1 (one line per realize), 2 (and one per kernel),
/// 3 (and why each materialized value was not fused).
pub(crate) static DEBUG: LazyLock<u8> = LazyLock::new(|| {
    std::env::var("LAZYFUSE_DEBUG")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
});

/// `LAZYFUSE_NOFUSE=1`: one kernel per node.
pub(crate) static NOFUSE: LazyLock<bool> =
    LazyLock::new(|| std::env::var_os("LAZYFUSE_NOFUSE").is_some_and(|v| v != "0"));

/// Whether fusion is on (`LAZYFUSE_NOFUSE` unset).
pub(crate) fn fuse_enabled() -> bool {
    !*NOFUSE
}

/// `LAZYFUSE_REALIZE_CACHE=0` turns the realize cache off (for bisecting and for
/// measuring what it saves; the values are the same either way).
static REALIZE_CACHE: LazyLock<bool> =
    LazyLock::new(|| std::env::var_os("LAZYFUSE_REALIZE_CACHE").is_none_or(|v| v != "0"));

/// What one realize runs with: the switches above, read once when the realize is
/// planned and passed down every stage, so that a switch another thread flips
/// meanwhile changes the next realize and never half of this one. The inspection
/// methods (`Tensor::schedule_text` and its kin) take one too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
    /// where the realize runs: the device of the storages it realizes
    pub(crate) device: Device,
    /// what compiles its loop kernels (`None`: the reference interpreter runs the
    /// graph node by node)
    pub(crate) compiler: Option<KernelCompiler>,
    /// the math mode of its kernels
    pub(crate) math: MathMode,
    /// fusion (off: one kernel per node)
    pub(crate) fuse: bool,
    /// the graph passes (off: dead nodes are dropped, nothing else)
    pub(crate) passes: bool,
    /// the graph verifier after the passes
    pub(crate) verify: bool,
    /// `LAZYFUSE_DUMP_IR`: print every stage
    pub(crate) dump: bool,
    /// `LAZYFUSE_DEBUG`'s level
    pub(crate) debug: u8,
    /// the CUDA compile check of every new schedule (`crate::cuda_check`)
    pub(crate) cuda_check: bool,
    /// whether `device` is the host emulation of a GPU
    pub(crate) emulated: bool,
    /// whether the realize cache may serve or record the realize
    pub(crate) realize_cache: bool,
}

impl Settings {
    /// The settings of a realize on `device` now. `Err` names a malformed
    /// environment variable (`LAZYFUSE_CPU_BACKEND`, `LAZYFUSE_MATH`).
    pub(crate) fn current(device: Device) -> Result<Settings> {
        let emulated = device != Device::CPU && resident::emulated();
        Ok(Settings {
            device,
            compiler: match device.ordinal() {
                None => cpu_backend()?.compiler(),
                Some(ordinal) => Some(lazyfuse_compile::kernel_compiler(ordinal)),
            },
            math: math_mode()?,
            fuse: fuse_enabled(),
            passes: passes_enabled(),
            verify: VERIFY.load(Ordering::Relaxed),
            dump: dump_ir_enabled(),
            debug: *DEBUG,
            cuda_check: crate::cuda_check::cuda_compile_check(),
            emulated,
            realize_cache: *REALIZE_CACHE,
        })
    }

    /// Whether the realize runs on a GPU's arrays (its schedule then takes the
    /// device's forms: matmul kernels, split reductions).
    pub(crate) fn on_gpu(&self) -> bool {
        self.device != Device::CPU
    }
}
