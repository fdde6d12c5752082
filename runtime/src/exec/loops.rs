//! Running one loop kernel: its parallel points cut into chunks on the pool (each
//! call sound as the module doc's *Soundness of the kernel calls* says), and the
//! status a kernel sets turned into the op's error.

use super::{allocate, fully_overwrites, Code, Slots};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::pool;
use crate::vector_runs;
use lazyfuse_ir::kernel::STATUS_SLOTS;
use lazyfuse_ir::kernel::{BufId, Expr, KernelCode, KernelFn, LoopKernel, Schedule, Status};
use smallvec::SmallVec;
use std::sync::Arc;

/// Parallel points per chunk: at least this many elements of work per chunk keeps
/// the pool's overhead (a few microseconds per job) small.
pub(super) const MIN_WORK_PER_CHUNK: usize = 1 << 15;

/// How many chunks a loop of `points` parallel points, each `work_per_point`
/// elements of work, is split into on `threads` threads. Below
/// `2 * MIN_WORK_PER_CHUNK` elements of work it is one chunk, which
/// [`pool::parallel_for`] runs on the calling thread: waking a worker costs more
/// than a small kernel runs.
pub(super) fn chunk_count(points: usize, work_per_point: usize, threads: usize) -> usize {
    let total_work = points.saturating_mul(work_per_point);
    if total_work < 2 * MIN_WORK_PER_CHUNK || threads == 1 {
        1
    } else {
        (total_work / MIN_WORK_PER_CHUNK)
            .min(threads * 4)
            .min(points)
    }
}

pub(super) fn run_loop(
    schedule: &Schedule,
    k: &LoopKernel,
    code: &Code,
    slots: &mut Slots<Buffer>,
) -> Result<u64> {
    // Writable params first: each gets a buffer this step owns uniquely.
    for (i, p) in k.params.iter().enumerate().filter(|(_, p)| p.writes) {
        let idx = p.buf.0 as usize;
        let slot = &mut slots[idx];
        match slot {
            None => {
                let overwritten = fully_overwrites(k, i);
                *slot = Some(Arc::new(allocate(schedule, p.buf, overwritten)?))
            }
            Some(arc) => {
                // A buffer written by an earlier step and shared since (a target read
                // back by the store, say) is copied rather than written under a reader.
                Arc::make_mut(arc);
            }
        }
    }
    // (inline for the usual few params: a small realize allocates nothing here)
    let mut ptrs: SmallVec<[*mut u8; 8]> = SmallVec::with_capacity(k.params.len());
    let mut bytes = 0u64;
    let mut seen: SmallVec<[BufId; 8]> = SmallVec::new();
    for p in &k.params {
        let idx = p.buf.0 as usize;
        let buf = match &mut slots[idx] {
            Some(arc) => arc,
            None => {
                return Err(Error::Malformed(format!(
                    "kernel {} reads {} before it was written",
                    k.name, p.buf
                )))
            }
        };
        if buf.dtype() != p.dtype || buf.len() != p.len {
            return Err(Error::Malformed(format!(
                "kernel {} expects {}[{}] in {}, found {}[{}]",
                k.name,
                p.dtype,
                p.len,
                p.buf,
                buf.dtype(),
                buf.len()
            )));
        }
        if !seen.contains(&p.buf) {
            seen.push(p.buf);
            bytes += (p.len * p.dtype.size_in_bytes()) as u64;
        }
        ptrs.push(if p.writes {
            Arc::get_mut(buf)
                .ok_or_else(|| Error::Malformed(format!("{} is shared while written", p.buf)))?
                .as_mut_ptr()
        } else {
            buf.as_ptr() as *mut u8
        });
    }
    let points = k.parallel_points();
    if points == 0 {
        return Ok(bytes);
    }
    let entry = match code {
        Code::Native(code, j) => native_entry(k, code.as_ref(), *j)?,
        Code::Device(kernels, j) => {
            let mut status = [0u64; STATUS_SLOTS];
            // SAFETY: `ptrs` holds each param's buffer, checked above to have exactly
            // the param's dtype and length, written ones owned by this step alone
            // (`Arc::get_mut`).
            unsafe { kernels.run(*j, k, &ptrs, &mut status)? };
            if status[0] != 0 {
                return Err(status_error(k, &status));
            }
            return Ok(bytes);
        }
    };
    let work_per_point = k.reduce_dims().iter().product::<usize>().max(1);
    let threads = pool::threads();
    let total_work = points.saturating_mul(work_per_point);
    let mut chunks = chunk_count(points, work_per_point, threads);
    if chunks > threads && k.reads_columns() {
        // One range of the last parallel dim per thread: each input row is read
        // in runs that long (a column sum over [8192, 8192]: 16 KiB runs rather
        // than 4 KiB ones, which the prefetchers stream better).
        chunks = chunks.min(threads);
    }
    let mut statuses: SmallVec<[[u64; STATUS_SLOTS]; 4]> =
        SmallVec::from_elem([0u64; STATUS_SLOTS], chunks);
    let status_ptr = SendPtr(statuses.as_mut_ptr());
    let params = SendPtr(ptrs.as_mut_ptr());
    let body = |c: usize| {
        let begin = points * c / chunks;
        let end = points * (c + 1) / chunks;
        // The routines the kernel calls run at the vector width its whole work
        // repays, whichever thread runs this chunk.
        vector_runs::for_work(total_work, || {
            // SAFETY: see the module doc: the code stays inside params of exactly
            // these dtypes and lengths (its signature admits `k`; the buffers were
            // checked against `k` above) for points up to `points`, the pointers stay
            // valid for the whole call (the buffers live in `slots`, which this
            // function borrows mutably, so nothing else touches them), chunks write
            // disjoint parallel points, and each chunk has its own status block.
            unsafe {
                entry(
                    params.get() as *const *mut u8,
                    status_ptr.get().add(c) as *mut u64,
                    begin as u64,
                    end as u64,
                )
            }
        });
    };
    pool::parallel_for(chunks, &body);
    for s in &statuses {
        if s[0] != 0 {
            return Err(status_error(k, s));
        }
    }
    Ok(bytes)
}

/// Kernel `j` of `code`, once its signature admits `k`: only then may it be called
/// with `k`'s buffers (the [`KernelCode`] contract).
pub(crate) fn native_entry(k: &LoopKernel, code: &dyn KernelCode, j: usize) -> Result<KernelFn> {
    match code.kernel(j) {
        Some((f, sig)) if sig.admits(k) => Ok(f),
        Some(_) => Err(Error::Malformed(format!(
            "kernel {} was given code compiled for another signature",
            k.name
        ))),
        None => Err(Error::Malformed(format!(
            "kernel {}: no kernel {j} in its code ({} kernels)",
            k.name,
            code.kernels()
        ))),
    }
}

/// A raw pointer that chunks on other threads may use (each chunk writes only its own
/// status block and its own parallel points).
#[derive(Clone, Copy)]
pub(super) struct SendPtr<T>(*mut T);
// SAFETY: see `run_loop`: the pointee outlives the parallel loop and chunks touch
// disjoint parts of it.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    pub(super) fn get(self) -> *mut T {
        self.0
    }
}

/// The error a kernel's status block reports: the op's error, with the interpreter's
/// message for an index out of range (the failing load's `DynIndex` names the op).
/// Every runner of compiled kernels maps statuses through this one function.
pub fn status_error(k: &LoopKernel, s: &[u64; STATUS_SLOTS]) -> Error {
    match Status::from_code(s[0]) {
        Some(Status::ZeroDivision) => Error::ZeroDivision,
        // Slot 3 names the failing load: its `DynIndex` says whose message it is.
        Some(Status::IndexOutOfRange) => match k.exprs.get(s[3] as usize).map(|e| &e.expr) {
            Some(Expr::Load {
                dynamic: Some(d), ..
            }) => Error::IndexOutOfRange(d.error.message(s[1] as i64, s[2])),
            _ => Error::Malformed(format!(
                "kernel {} reported an index out of range at v{}, not a dynamic load",
                k.name, s[3]
            )),
        },
        Some(Status::Ok) | None => {
            Error::Malformed(format!("kernel {} reported status {}", k.name, s[0]))
        }
    }
}
