//! A schedule's compiled loop kernels, as the executors receive them from the
//! compile stage (`lazyfuse-compile`): one [`Code`] per loop step, which holds the
//! loaded code it calls.

use crate::cuda::mirror::DeviceKernels;
use lazyfuse_ir::kernel::{KernelCode, MathMode};
use std::sync::Arc;

/// A compiled kernel: kernel `j` of a batch of loaded code. Cloning it shares the
/// batch, whose code lives while any clone does.
#[derive(Clone)]
pub enum Code {
    /// host code (Cranelift's, or the host build of the CUDA C), run on the CPU
    Native(Arc<dyn KernelCode>, usize),
    /// a kernel loaded on a GPU, launched there
    Device(Arc<DeviceKernels>, usize),
}

/// A schedule's compiled loop kernels, by step index: what
/// [`run_compiled`](super::run_compiled) and [`crate::resident::run`] call. Holding
/// one keeps its kernels' code alive, so a schedule cache can keep it beside its
/// schedule and skip the compile stage on every later realize.
#[derive(Clone)]
pub struct CompiledSchedule {
    entries: Vec<Option<Code>>,
    /// the math mode the kernels were compiled with; extern steps follow it too
    math: MathMode,
}

impl CompiledSchedule {
    /// The code of a schedule's steps, in step order (`None` for an extern step),
    /// compiled with `math`. The executors check each loop step's kernel against the
    /// signature its code was compiled for before they call it.
    pub fn new(entries: Vec<Option<Code>>, math: MathMode) -> Self {
        CompiledSchedule { entries, math }
    }

    /// The compiled kernel of step `i` (`None` for an extern step).
    pub(crate) fn entry(&self, i: usize) -> Option<&Code> {
        self.entries.get(i).and_then(Option::as_ref)
    }

    /// The math mode the kernels were compiled with.
    pub(crate) fn math(&self) -> MathMode {
        self.math
    }

    /// Number of steps (loop kernels and extern steps).
    pub(crate) fn steps(&self) -> usize {
        self.entries.len()
    }

    /// Number of loop kernels.
    pub fn loop_kernels(&self) -> usize {
        self.entries.iter().filter(|e| e.is_some()).count()
    }
}
