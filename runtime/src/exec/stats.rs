//! What one run of a schedule did: its steps' timings and traffic, its compiles and
//! kernel cache hits, and its in-place writes (`LAZYFUSE_DEBUG`, `RealizeStats`).

use std::time::Duration;

/// Timing of one step, for `LAZYFUSE_DEBUG=2`.
#[derive(Clone, Debug, PartialEq)]
pub struct StepTiming {
    /// the kernel's name (loop kernels) or `extern <op>`
    pub name: String,
    /// wall time of the step
    pub time: Duration,
    /// bytes of its params (each buffer once): the traffic a perfect kernel moves
    pub bytes: u64,
}

/// What one run of a schedule did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStats {
    /// steps run (loop kernels and extern steps)
    pub kernels: usize,
    /// loop kernels compiled by this run
    pub compiled: usize,
    /// loop kernels found in the kernel cache
    pub cache_hits: usize,
    /// time spent compiling
    pub compile: Duration,
    /// time spent running steps (measured where `timed`)
    pub run: Duration,
    /// one entry per step (where `timed`)
    pub steps: Vec<StepTiming>,
    /// donated input buffers the run wrote in place (no copy of the storage)
    pub in_place: usize,
    /// set by the caller: whether the run reads the clock for its time and its
    /// steps' (`LAZYFUSE_DEBUG`); the clock reads and a name per step are a
    /// noticeable part of a small realize that nobody prints
    pub timed: bool,
}
