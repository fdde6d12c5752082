//! What a realize did: [`RealizeStats`] for the calling thread, and the
//! `LAZYFUSE_DEBUG` lines.

use lazyfuse_ir::kernel::{BufKind, Schedule};
use lazyfuse_runtime::exec::RunStats;

/// Records a JIT realize's figures for [`last_realize_stats`] and prints them as
/// `LAZYFUSE_DEBUG` asks.
pub(super) fn report(
    stats: &RunStats,
    sched: &Schedule,
    schedule_time: std::time::Duration,
    scheduled: bool,
    reused: bool,
    debug: u8,
) {
    LAST.with(|l| {
        l.set(RealizeStats {
            kernels: stats.kernels,
            compiled: stats.compiled,
            kernel_cache_hits: stats.cache_hits,
            scheduled,
            in_place: stats.in_place,
            reused,
            outputs: sched.outputs.len(),
            temporaries: sched
                .buffers
                .iter()
                .filter(|b| matches!(b.kind, BufKind::Temp))
                .count(),
        })
    });
    if debug >= 1 {
        eprintln!(
            "realize: {} kernels ({} compiled, {} cache hits), compile {:.3} ms, run {:.3} ms",
            stats.kernels,
            stats.compiled,
            stats.cache_hits,
            (stats.compile + schedule_time).as_secs_f64() * 1e3,
            stats.run.as_secs_f64() * 1e3
        );
    }
    if debug >= 2 {
        for s in &stats.steps {
            let secs = s.time.as_secs_f64();
            let gbs = if secs > 0.0 {
                s.bytes as f64 / secs / 1e9
            } else {
                0.0
            };
            eprintln!(
                "  kernel {}: {:.3} ms, {} bytes, {:.2} GB/s",
                s.name,
                secs * 1e3,
                s.bytes,
                gbs
            );
        }
    }
    if debug >= 3 {
        for n in &sched.notes {
            eprintln!("  materialized: {n}");
        }
    }
}

/// What the last JIT realize of the calling thread did (see [`last_realize_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RealizeStats {
    /// steps run: loop kernels and extern steps
    pub kernels: usize,
    /// loop kernels compiled
    pub compiled: usize,
    /// loop kernels found in the kernel cache
    pub kernel_cache_hits: usize,
    /// whether the graph was scheduled (`false`: the schedule cache had it)
    pub scheduled: bool,
    /// storages written in place: in-place writes that stored into the storage's
    /// own buffer instead of copying it (see `Store::plan` for when)
    pub in_place: usize,
    /// whether the realize cache had the graph's structure: the realize ran its
    /// recorded schedule without the graph passes, the schedule cache or kernel
    /// lookups (rebuilding and realizing the same computation takes this path)
    pub reused: bool,
    /// values the realize stored for the caller: its targets (one for
    /// [`crate::Tensor::realize`] and every read, one per distinct unrealized tensor
    /// for [`crate::realize_all`])
    pub outputs: usize,
    /// values stored for the realize's own kernels and dropped after it (what fusion
    /// decided to materialize: see `LAZYFUSE_DEBUG=3`)
    pub temporaries: usize,
}

thread_local! {
    static LAST: std::cell::Cell<RealizeStats> = const {
        std::cell::Cell::new(RealizeStats { kernels: 0, compiled: 0, kernel_cache_hits: 0, scheduled: false, in_place: 0, reused: false, outputs: 0, temporaries: 0 })
    };
}

/// What the calling thread's last realize on the JIT did: how many kernels ran, how
/// many were compiled or came from the kernel cache, and whether the schedule came
/// from the schedule cache. Rebuilding and realizing the same computation compiles
/// and schedules nothing new:
///
/// ```
/// use lazyfuse::{DType, Tensor};
/// let x = Tensor::arange(0.0, 8.0, 1.0, DType::F32).unwrap();
/// x.realize().unwrap();
/// let build = || x.mul(3.0).unwrap().sin().unwrap().add(&x).unwrap();
/// build().realize().unwrap();
/// build().realize().unwrap();
/// let s = lazyfuse::last_realize_stats();
/// assert_eq!((s.kernels, s.compiled, s.scheduled, s.reused), (1, 0, false, true));
/// ```
pub fn last_realize_stats() -> RealizeStats {
    LAST.with(|l| l.get())
}
