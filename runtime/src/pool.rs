//! A persistent thread pool for compiled kernels: `available_parallelism() - 1`
//! workers plus the calling thread share the chunks of one parallel loop.
//!
//! Spawning threads per kernel costs tens of microseconds, more than a small kernel
//! runs. The workers here spin for a short while after each job, then sleep on a
//! condition variable: a realize runs its kernels back to back, and waking a
//! sleeping thread (on a virtual machine, a halted virtual CPU) costs as much as a
//! small kernel, so the next job finds the workers awake. The submitter likewise
//! spins briefly for the last chunk before it sleeps. One job runs at a time: a
//! second thread that asks while the pool is busy runs its chunks on itself instead
//! of waiting (two realizes on two threads both make progress).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

/// How long an idle worker watches for the next job before it sleeps, and how long
/// a submitter watches for its job's last chunk: long enough to span the host work
/// between two kernels of one realize, short enough that an idle process gives its
/// cores back at once.
const SPIN: Duration = Duration::from_micros(100);

/// Spins until `ready()` or until [`SPIN`] has passed (the caller checks again
/// under its lock either way).
fn spin_until(ready: impl Fn() -> bool) {
    let start = Instant::now();
    loop {
        // Checking the clock every few rounds keeps the loop tight.
        for _ in 0..64 {
            if ready() {
                return;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= SPIN {
            return;
        }
    }
}

/// One parallel loop: `chunks` calls of `body(chunk)`.
struct Job {
    /// The loop body with its lifetime erased (see the SAFETY comment in
    /// [`parallel_for`]: the submitter waits until every call has returned).
    body: *const (dyn Fn(usize) + Sync),
    chunks: usize,
    next: AtomicUsize,
    finished: AtomicUsize,
}

// SAFETY: `body` points at a `Sync` closure that outlives the job's use (the submitter
// blocks until `finished == chunks`); the counters are atomics.
unsafe impl Send for Job {}
// SAFETY: as above; all shared access goes through atomics or the `Sync` closure.
unsafe impl Sync for Job {}

impl Job {
    /// Runs chunks until none is left; returns after finishing at least zero.
    fn work(&self) {
        loop {
            let chunk = self.next.fetch_add(1, Ordering::Relaxed);
            if chunk >= self.chunks {
                return;
            }
            // SAFETY: the submitter keeps the closure alive until every chunk has
            // finished, and this chunk has not finished yet.
            let body = unsafe { &*self.body };
            body(chunk);
            self.finished.fetch_add(1, Ordering::Release);
        }
    }
}

struct Slot {
    job: Option<Arc<Job>>,
    generation: u64,
}

struct Pool {
    slot: Mutex<Slot>,
    wake: Condvar,
    done: Condvar,
    /// Held by the thread whose job the workers run.
    submit: Mutex<()>,
    /// `slot.generation`, readable without the lock by spinning workers (written
    /// under the lock, after the slot).
    generation: AtomicU64,
    workers: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The pool's state stays consistent at every unlock, so a poisoned lock (a panic
    // elsewhere while holding it) is safe to keep using.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

static POOL: LazyLock<Arc<Pool>> = LazyLock::new(|| {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pool = Arc::new(Pool {
        slot: Mutex::new(Slot {
            job: None,
            generation: 0,
        }),
        wake: Condvar::new(),
        done: Condvar::new(),
        submit: Mutex::new(()),
        generation: AtomicU64::new(0),
        workers: threads.saturating_sub(1),
    });
    for i in 0..pool.workers {
        let p = pool.clone();
        // A pool that cannot start a worker still works: the caller runs every chunk.
        let _ = std::thread::Builder::new()
            .name(format!("lazyfuse-worker-{i}"))
            .spawn(move || worker(p));
    }
    pool
});

fn worker(pool: Arc<Pool>) {
    let mut seen = 0u64;
    loop {
        spin_until(|| pool.generation.load(Ordering::Acquire) != seen);
        let job = {
            let mut slot = lock(&pool.slot);
            while slot.generation == seen {
                slot = pool.wake.wait(slot).unwrap_or_else(|p| p.into_inner());
            }
            seen = slot.generation;
            slot.job.clone()
        };
        if let Some(job) = job {
            job.work();
            if job.finished.load(Ordering::Acquire) == job.chunks {
                let _guard = lock(&pool.slot);
                pool.done.notify_all();
            }
        }
    }
}

/// Number of threads a parallel loop can use (workers plus the caller).
///
/// ```
/// assert!(lazyfuse_runtime::pool::threads() >= 1);
/// ```
pub fn threads() -> usize {
    POOL.workers + 1
}

/// Calls `body(c)` once for every chunk `c` in `0..chunks`, spread over the pool's
/// threads and the caller; returns when every call has returned.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let sum = AtomicUsize::new(0);
/// lazyfuse_runtime::pool::parallel_for(100, &|c| {
///     sum.fetch_add(c, Ordering::Relaxed);
/// });
/// assert_eq!(sum.into_inner(), 4950);
/// ```
pub fn parallel_for(chunks: usize, body: &(dyn Fn(usize) + Sync)) {
    let pool = &*POOL;
    let serial = || (0..chunks).for_each(body);
    if chunks <= 1 || pool.workers == 0 {
        return serial();
    }
    let _submit = match pool.submit.try_lock() {
        Ok(g) => g,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => return serial(),
    };
    // SAFETY: the lifetime of `body` is erased to store it in the job; this function
    // does not return before `finished == chunks`, i.e. before the last call through
    // the pointer has returned, and workers never call it after that (`next` is
    // exhausted). The job is removed from the slot before returning.
    let erased: *const (dyn Fn(usize) + Sync + 'static) = unsafe {
        std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const (dyn Fn(usize) + Sync)>(
            body,
        )
    };
    let job = Arc::new(Job {
        body: erased,
        chunks,
        next: AtomicUsize::new(0),
        finished: AtomicUsize::new(0),
    });
    {
        let mut slot = lock(&pool.slot);
        slot.job = Some(job.clone());
        slot.generation += 1;
        pool.generation.store(slot.generation, Ordering::Release);
        pool.wake.notify_all();
    }
    job.work();
    spin_until(|| job.finished.load(Ordering::Acquire) == chunks);
    let mut slot = lock(&pool.slot);
    while job.finished.load(Ordering::Acquire) < chunks {
        slot = pool.done.wait(slot).unwrap_or_else(|p| p.into_inner());
    }
    slot.job = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_chunk_runs_on_the_calling_thread() {
        let me = std::thread::current().id();
        let ran_on = Mutex::new(Vec::new());
        for _ in 0..10 {
            parallel_for(1, &|_| lock(&ran_on).push(std::thread::current().id()));
        }
        let ran_on = ran_on.into_inner().unwrap();
        assert_eq!(ran_on.len(), 10);
        assert!(ran_on.iter().all(|&t| t == me));
    }

    #[test]
    fn every_chunk_runs_once_even_from_two_threads() {
        let counts: Vec<AtomicUsize> = (0..1000).map(|_| AtomicUsize::new(0)).collect();
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..20 {
                        parallel_for(1000, &|c| {
                            counts[c].fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
            }
        });
        assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 40));
    }
}
