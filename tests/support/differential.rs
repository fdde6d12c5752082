//! The differential harness: a random program of `random_program.rs` realized two
//! ways, every tensor printed (values, dtype, shape, or the error) and compared.
//! A [`Run`] names one way: the CPU backend (interpreter, JIT, CUDA C built for the
//! host, NVRTC kernels), the math mode, the graph passes, and the device the
//! program's tensors live on. The JIT, CUDA-host, device and passes differentials
//! are each one [`compare`] of two runs.
//!
//! The settings are process-wide: [`compare`] holds [`SETTINGS`] while it builds and
//! realizes, and so must every other test of the binary that changes them.

use super::random_program::{build_on, build_with_grad, observe, Step};
use lazyfuse::{CpuBackend, Device, MathMode};
use proptest::prelude::*;
use std::sync::{Mutex, MutexGuard};

/// Held while a test changes the process-wide settings and realizes under them.
pub static SETTINGS: Mutex<()> = Mutex::new(());

/// Takes [`SETTINGS`] (a test that panicked while holding it left nothing half set
/// that the next run does not set again).
pub fn settings_guard() -> MutexGuard<'static, ()> {
    SETTINGS.lock().unwrap_or_else(|p| p.into_inner())
}

/// One way to realize a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// the CPU backend of CPU tensors
    pub backend: CpuBackend,
    /// the math mode of every kernel
    pub math: MathMode,
    /// whether the graph passes run
    pub passes: bool,
    /// where the program's tensors live (`cuda:0`: read back to the CPU to print)
    pub device: Device,
}

impl Run {
    /// Tensors on the CPU realized by `backend`, in exact math (bit-identical
    /// values are its contract), with the passes.
    pub const fn exact(backend: CpuBackend) -> Run {
        Run {
            backend,
            math: MathMode::Exact,
            passes: true,
            device: Device::CPU,
        }
    }

    /// The reference: the interpreter, in exact math.
    #[allow(dead_code)] // the passes differential compares two JIT runs
    pub const fn reference() -> Run {
        Run::exact(CpuBackend::Interp)
    }

    /// This run with the graph passes on or off.
    #[allow(dead_code)] // only the passes differential turns them off
    pub const fn with_passes(self, passes: bool) -> Run {
        Run { passes, ..self }
    }

    /// This run with the program's tensors on `device`.
    #[allow(dead_code)] // only the device tests move tensors
    pub const fn on(self, device: Device) -> Run {
        Run { device, ..self }
    }

    /// Sets the process-wide settings of this run, runs `f`, and sets back the
    /// defaults (the JIT, the passes) and the math mode found.
    fn under<T>(self, f: impl FnOnce() -> T) -> T {
        let math = lazyfuse::math_mode().unwrap_or_default();
        lazyfuse::set_cpu_backend(self.backend);
        lazyfuse::set_math_mode(self.math);
        lazyfuse::set_passes(self.passes);
        let out = f();
        lazyfuse::set_cpu_backend(CpuBackend::Jit);
        lazyfuse::set_math_mode(math);
        lazyfuse::set_passes(true);
        out
    }
}

/// What every tensor of the program prints under `run` (a tensor on a device is
/// realized there and read back; one whose realize fails prints its error).
pub fn realized(sources: &[(usize, usize, u64)], steps: &[Step], run: Run) -> Vec<String> {
    run.under(|| {
        build_on(sources, steps, run.device)
            .iter()
            .map(|t| {
                assert_eq!(t.device(), run.device, "a tensor left {}", run.device);
                if run.device == Device::CPU {
                    return observe(t);
                }
                match t.realize() {
                    Ok(t) => observe(&t.to_device(Device::CPU).unwrap()),
                    Err(_) => observe(t),
                }
            })
            .collect()
    })
}

/// What the leaves' gradients of the program print under `run` (or the backward's
/// error).
#[allow(dead_code)] // only the JIT differential differentiates
pub fn gradients(sources: &[(usize, usize, u64)], steps: &[Step], run: Run) -> Vec<String> {
    run.under(|| match build_with_grad(sources, steps) {
        Ok(grads) => grads
            .iter()
            .map(|g| g.as_ref().map_or("None".to_string(), observe))
            .collect(),
        Err(e) => vec![e],
    })
}

/// Every tensor of the program prints the same under `candidate` as under
/// `reference`, with the graph verifier on.
pub fn compare(
    sources: &[(usize, usize, u64)],
    steps: &[Step],
    reference: Run,
    candidate: Run,
) -> Result<(), TestCaseError> {
    compare_prints(sources, steps, reference, candidate, realized, "tensor")
}

/// The leaves' gradients print the same under `candidate` as under `reference`.
#[allow(dead_code)] // only the JIT differential differentiates
pub fn compare_gradients(
    sources: &[(usize, usize, u64)],
    steps: &[Step],
    reference: Run,
    candidate: Run,
) -> Result<(), TestCaseError> {
    compare_prints(sources, steps, reference, candidate, gradients, "gradient")
}

/// What one side of a comparison prints of a program under a run ([`realized`],
/// [`gradients`]).
type Printer = fn(&[(usize, usize, u64)], &[Step], Run) -> Vec<String>;

/// What `print` shows of the program under `candidate` and under `reference`
/// agrees, line for line, holding [`SETTINGS`] with the graph verifier on.
fn compare_prints(
    sources: &[(usize, usize, u64)],
    steps: &[Step],
    reference: Run,
    candidate: Run,
    print: Printer,
    what: &str,
) -> Result<(), TestCaseError> {
    let _guard = settings_guard();
    lazyfuse::set_verify(true);
    let expected = print(sources, steps, reference);
    let seen = print(sources, steps, candidate);
    prop_assert_eq!(expected.len(), seen.len(), "{} counts differ", what);
    for (i, (a, b)) in expected.iter().zip(&seen).enumerate() {
        prop_assert_eq!(a, b, "{} {} differs under {:?}", what, i, candidate);
    }
    Ok(())
}
