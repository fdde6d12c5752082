//! A caching allocator for large buffers: freed buffers of at least
//! [`MIN_CACHED_BYTES`] are kept (keyed by dtype and element count) and handed out
//! again, so that a loop realizing the same computation repeatedly reuses memory
//! whose pages are already mapped instead of paying the page faults of fresh memory
//! (milliseconds per fresh large buffer), and a writer that stores every element
//! skips the zeroing that a fresh zeroed allocation of reused heap memory costs (a
//! training step's weight-sized buffers).
//!
//! # Bound
//! The cache holds at most [`BufferCache::max_bytes`] bytes (default
//! [`DEFAULT_MAX_BYTES`], 1 GiB; `LAZYFUSE_BUFFER_CACHE_MB` sets it, `0` turns the
//! cache off) and at most [`MAX_CACHED_BUFFERS`] buffers; keeping one more evicts
//! the oldest kept buffers first. [`release_cached_buffers`] frees everything kept
//! (call it to give memory back, e.g. before a phase that needs a lot of it).
//! Buffers from [`MIN_SMALL_BYTES`] up to [`MIN_CACHED_BYTES`] go to a pool of
//! their own, at most [`MAX_SMALL_BUFFERS`] (the newest kept), outside the byte
//! bound but off with the cache: the system allocator keeps such sizes out of
//! its per-thread caches, so a loop that realizes a small result and drops it
//! paid a zeroed allocation and a free of several KiB per realize (W9's
//! output). Smaller buffers are not kept: the allocator's caches reuse them.
//!
//! # Soundness
//! A reused buffer is zeroed before it is handed out ([`BufferCache::take_zeroed`]),
//! exactly what a fresh allocation gives: no kernel can observe a previous
//! tensor's values. The one exception, [`BufferCache::take_for_overwrite`], is for a
//! writer that stores every element and reads none first (the executor checks
//! that on the kernel's IR: no reduction dims, no load of the param, a store
//! that reaches every element once), so the old values are never observable.

use crate::buffer::Buffer;
use lazyfuse_ir::DType;
use std::collections::VecDeque;
use std::sync::{LazyLock, Mutex, MutexGuard};

/// Buffers smaller than this are not kept with the large ones (64 KiB): see
/// [`MIN_SMALL_BYTES`].
pub const MIN_CACHED_BYTES: usize = 1 << 16;

/// Buffers smaller than this are never kept (1 KiB); from this size up to
/// [`MIN_CACHED_BYTES`] they go to the small pool.
pub const MIN_SMALL_BYTES: usize = 1 << 10;

/// Most buffers the small pool keeps.
pub const MAX_SMALL_BUFFERS: usize = 32;

/// Default bound on the bytes kept (1 GiB).
pub const DEFAULT_MAX_BYTES: usize = 1 << 30;

/// Most buffers kept at once.
pub const MAX_CACHED_BUFFERS: usize = 64;

/// Counters of a [`BufferCache`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// allocations served by a kept buffer
    pub hits: u64,
    /// allocations of cacheable size that found none and allocated fresh memory
    pub misses: u64,
    /// buffers kept now
    pub kept: usize,
    /// bytes kept now
    pub kept_bytes: usize,
    /// buffers dropped to stay within the bound
    pub evicted: u64,
}

/// Freed large buffers, oldest first, with their byte sizes, and the small
/// pool.
#[derive(Debug)]
pub struct BufferCache {
    kept: VecDeque<(Buffer, usize)>,
    /// buffers of [`MIN_SMALL_BYTES`] up to [`MIN_CACHED_BYTES`], oldest first
    small: VecDeque<Buffer>,
    max_bytes: usize,
    stats: CacheStats,
}

fn bytes_of(dtype: DType, len: usize) -> usize {
    len.saturating_mul(dtype.size_in_bytes())
}

impl BufferCache {
    /// An empty cache keeping at most `max_bytes` bytes (`0`: keeps nothing).
    ///
    /// ```
    /// use lazyfuse_runtime::buffer_cache::BufferCache;
    /// use lazyfuse_runtime::Buffer;
    /// use lazyfuse_ir::DType;
    /// let mut cache = BufferCache::new(64 << 20);
    /// cache.recycle(Buffer::from_vec(vec![1.0f32; 1 << 20]));
    /// let b = cache.take_zeroed(DType::F32, 1 << 20);
    /// assert!(b.as_slice::<f32>().unwrap().iter().all(|&v| v == 0.0));
    /// assert_eq!(cache.stats().hits, 1);
    /// ```
    pub fn new(max_bytes: usize) -> BufferCache {
        BufferCache {
            kept: VecDeque::new(),
            small: VecDeque::new(),
            max_bytes,
            stats: CacheStats::default(),
        }
    }

    /// The bound on the bytes kept.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The counters.
    pub fn stats(&self) -> CacheStats {
        let small: usize = self
            .small
            .iter()
            .map(|b| bytes_of(b.dtype(), b.len()))
            .sum();
        CacheStats {
            kept: self.kept.len() + self.small.len(),
            kept_bytes: self.kept.iter().map(|(_, b)| b).sum::<usize>() + small,
            ..self.stats
        }
    }

    /// Keeps `buf` for reuse if it is large enough and fits the bound (evicting the
    /// oldest kept buffers to make room), or in the small pool; drops it
    /// otherwise.
    pub fn recycle(&mut self, buf: Buffer) {
        let bytes = bytes_of(buf.dtype(), buf.len());
        if bytes < MIN_SMALL_BYTES || bytes > self.max_bytes {
            return;
        }
        if bytes < MIN_CACHED_BYTES {
            if self.small.len() >= MAX_SMALL_BUFFERS {
                self.small.pop_front();
                self.stats.evicted += 1;
            }
            self.small.push_back(buf);
            return;
        }
        let mut held: usize = self.kept.iter().map(|(_, b)| b).sum();
        while !self.kept.is_empty()
            && (held + bytes > self.max_bytes || self.kept.len() >= MAX_CACHED_BUFFERS)
        {
            if let Some((_, b)) = self.kept.pop_front() {
                held -= b;
                self.stats.evicted += 1;
            }
        }
        self.kept.push_back((buf, bytes));
    }

    /// A kept buffer of exactly `dtype` and `len`, if there is one (newest first:
    /// its pages are the likeliest to be in cache), its contents unspecified.
    fn take(&mut self, dtype: DType, len: usize) -> Option<Buffer> {
        if bytes_of(dtype, len) < MIN_CACHED_BYTES {
            let at = self
                .small
                .iter()
                .rposition(|b| b.dtype() == dtype && b.len() == len)?;
            return self.small.remove(at);
        }
        let at = self
            .kept
            .iter()
            .rposition(|(b, _)| b.dtype() == dtype && b.len() == len)?;
        self.kept.remove(at).map(|(b, _)| b)
    }

    /// [`BufferCache::take`], counted: a hit, or a miss of a size the cache
    /// keeps.
    fn take_counted(&mut self, dtype: DType, len: usize) -> Option<Buffer> {
        let taken = self.take(dtype, len);
        if taken.is_some() {
            self.stats.hits += 1;
        } else if bytes_of(dtype, len) >= MIN_SMALL_BYTES {
            self.stats.misses += 1;
        }
        taken
    }

    /// A buffer of `len` zeros of `dtype`: a kept one (zeroed here) when there is
    /// one, else a fresh [`Buffer::zeros`].
    pub fn take_zeroed(&mut self, dtype: DType, len: usize) -> Buffer {
        match self.take_counted(dtype, len) {
            Some(mut b) => {
                b.fill_zero();
                b
            }
            None => Buffer::zeros(dtype, len),
        }
    }

    /// A buffer of `len` elements of `dtype` whose every element the caller
    /// overwrites before anything reads it: a kept one as it is (no zeroing), else a
    /// fresh [`Buffer::zeros`]. Its contents are a freed buffer's values: only for a
    /// writer that provably stores every element and reads none first.
    pub fn take_for_overwrite(&mut self, dtype: DType, len: usize) -> Buffer {
        self.take_counted(dtype, len)
            .unwrap_or_else(|| Buffer::zeros(dtype, len))
    }

    /// Whether a buffer of `dtype` and `len` is kept (so taking one allocates
    /// nothing).
    pub fn has(&self, dtype: DType, len: usize) -> bool {
        self.kept
            .iter()
            .map(|(b, _)| b)
            .chain(&self.small)
            .any(|b| b.dtype() == dtype && b.len() == len)
    }

    /// Drops every kept buffer.
    pub fn clear(&mut self) {
        self.kept.clear();
        self.small.clear();
    }
}

static CACHE: LazyLock<Mutex<BufferCache>> = LazyLock::new(|| {
    let max = std::env::var("LAZYFUSE_BUFFER_CACHE_MB")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map_or(DEFAULT_MAX_BYTES, |mb| mb.saturating_mul(1 << 20));
    Mutex::new(BufferCache::new(max))
});

fn lock() -> MutexGuard<'static, BufferCache> {
    // Every edit is a whole push or removal: a poisoned lock is consistent.
    CACHE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Gives a buffer nobody else holds back to the process-wide cache (kept if large
/// enough, see the module doc); a shared one is only released by this handle.
///
/// ```
/// use std::sync::Arc;
/// use lazyfuse_runtime::{buffer_cache, Buffer};
/// buffer_cache::recycle(Arc::new(Buffer::from_vec(vec![0u8; 16])));
/// ```
pub fn recycle(buf: std::sync::Arc<Buffer>) {
    if let Ok(b) = std::sync::Arc::try_unwrap(buf) {
        if bytes_of(b.dtype(), b.len()) >= MIN_SMALL_BYTES {
            lock().recycle(b);
        }
    }
}

/// A zeroed buffer from the process-wide cache (see [`BufferCache::take_zeroed`]).
pub fn take_zeroed(dtype: DType, len: usize) -> Buffer {
    if bytes_of(dtype, len) < MIN_SMALL_BYTES {
        return Buffer::zeros(dtype, len);
    }
    lock().take_zeroed(dtype, len)
}

/// A buffer from the process-wide cache for a writer that stores every element
/// before reading any (see [`BufferCache::take_for_overwrite`]).
pub fn take_for_overwrite(dtype: DType, len: usize) -> Buffer {
    if bytes_of(dtype, len) < MIN_SMALL_BYTES {
        return Buffer::zeros(dtype, len);
    }
    lock().take_for_overwrite(dtype, len)
}

/// Whether the process-wide cache holds a buffer of `dtype` and `len`.
pub fn has(dtype: DType, len: usize) -> bool {
    bytes_of(dtype, len) >= MIN_SMALL_BYTES && lock().has(dtype, len)
}

/// A kept buffer of `dtype` and `len` from the process-wide cache, zeroed
/// unless `overwritten` (see [`BufferCache::take_for_overwrite`]), or `None`:
/// one lock where [`has`] and a take were two.
///
/// ```
/// use lazyfuse_ir::DType;
/// assert!(lazyfuse_runtime::buffer_cache::take_kept(DType::F32, 3, true).is_none());
/// ```
pub fn take_kept(dtype: DType, len: usize, overwritten: bool) -> Option<Buffer> {
    if bytes_of(dtype, len) < MIN_SMALL_BYTES {
        return None;
    }
    // (zeroed outside the lock)
    let mut b = lock().take_counted(dtype, len)?;
    if !overwritten {
        b.fill_zero();
    }
    Some(b)
}

/// The process-wide cache's counters.
///
/// ```
/// let s = lazyfuse_runtime::buffer_cache::stats();
/// assert!(s.kept <= lazyfuse_runtime::buffer_cache::MAX_CACHED_BUFFERS);
/// ```
pub fn stats() -> CacheStats {
    lock().stats()
}

/// Frees every buffer the process-wide cache keeps.
///
/// ```
/// lazyfuse_runtime::buffer_cache::release_cached_buffers();
/// assert_eq!(lazyfuse_runtime::buffer_cache::stats().kept, 0);
/// ```
pub fn release_cached_buffers() {
    lock().clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = 1 << 20; // 4 MiB of f32

    #[test]
    fn reused_buffers_come_back_zeroed_and_counted() {
        let mut c = BufferCache::new(64 << 20);
        let a = Buffer::from_vec(vec![7.0f32; N]);
        let at = a.as_ptr();
        c.recycle(a);
        assert_eq!(c.stats().kept, 1);
        // Another dtype or length is a miss, not a reinterpretation.
        let other = c.take_zeroed(DType::I32, N);
        assert_eq!(other.dtype(), DType::I32);
        let shorter = c.take_zeroed(DType::F32, N - 1);
        assert_eq!(shorter.len(), N - 1);
        assert_eq!((c.stats().hits, c.stats().misses), (0, 2));
        let b = c.take_zeroed(DType::F32, N);
        assert_eq!(b.as_ptr(), at, "the kept memory is reused");
        assert!(b.as_slice::<f32>().unwrap().iter().all(|&v| v == 0.0));
        assert_eq!((c.stats().hits, c.stats().kept), (1, 0));
        // For a full overwrite the memory comes back as it is, and is counted.
        let mut b = b;
        if let Buffer::F32(v) = &mut b {
            v.fill(5.0);
        }
        c.recycle(b);
        let again = c.take_for_overwrite(DType::F32, N);
        assert_eq!(again.as_ptr(), at);
        assert_eq!(again.as_slice::<f32>().unwrap()[0], 5.0, "not zeroed");
        assert_eq!(c.stats().hits, 2);
    }

    #[test]
    fn the_bound_holds_and_small_buffers_are_not_kept() {
        let mut c = BufferCache::new(10 << 20);
        c.recycle(Buffer::from_vec(vec![0u8; MIN_SMALL_BYTES - 1]));
        assert_eq!(c.stats().kept, 0);
        for _ in 0..5 {
            c.recycle(Buffer::from_vec(vec![1.0f32; N])); // 4 MiB each
        }
        let s = c.stats();
        assert!(s.kept_bytes <= 10 << 20, "{s:?}");
        assert_eq!((s.kept, s.evicted), (2, 3));
        c.recycle(Buffer::from_vec(vec![0u8; 11 << 20]));
        assert_eq!(c.stats().kept, 2, "larger than the bound: dropped");
        let mut off = BufferCache::new(0);
        off.recycle(Buffer::from_vec(vec![1.0f32; N]));
        assert_eq!(off.stats().kept, 0);
        c.clear();
        assert_eq!(c.stats().kept_bytes, 0);
    }

    #[test]
    fn the_small_pool_reuses_its_newest_and_holds_its_count() {
        let mut c = BufferCache::new(64 << 20);
        let a = Buffer::from_vec(vec![3.0f32; 1000]);
        let at = a.as_ptr();
        c.recycle(a);
        assert!(c.has(DType::F32, 1000) && !c.has(DType::F32, 999));
        let again = c.take_for_overwrite(DType::F32, 1000);
        assert_eq!(again.as_ptr(), at, "the kept memory is reused");
        assert_eq!(again.as_slice::<f32>().unwrap()[0], 3.0, "not zeroed");
        c.recycle(again);
        let zeroed = c.take_zeroed(DType::F32, 1000);
        assert_eq!(zeroed.as_ptr(), at);
        assert!(zeroed.as_slice::<f32>().unwrap().iter().all(|&v| v == 0.0));
        for i in 0..MAX_SMALL_BUFFERS + 5 {
            c.recycle(Buffer::from_vec(vec![i as u8; MIN_SMALL_BYTES]));
        }
        let s = c.stats();
        assert_eq!((s.kept, s.evicted), (MAX_SMALL_BUFFERS, 5));
        // the newest first
        let last = c.take_for_overwrite(DType::U8, MIN_SMALL_BYTES);
        assert_eq!(
            last.as_slice::<u8>().unwrap()[0],
            (MAX_SMALL_BUFFERS + 4) as u8
        );
        // the large buffers' count bound is their own
        c.recycle(Buffer::from_vec(vec![0u8; MIN_CACHED_BYTES]));
        assert_eq!(c.stats().kept, MAX_SMALL_BUFFERS);
        let mut off = BufferCache::new(0);
        off.recycle(Buffer::from_vec(vec![0u8; MIN_SMALL_BYTES]));
        assert_eq!(off.stats().kept, 0, "off with the cache");
        c.clear();
        assert_eq!(c.stats().kept, 0);
    }

    #[test]
    fn the_count_bound_holds() {
        let mut c = BufferCache::new(usize::MAX);
        for _ in 0..MAX_CACHED_BUFFERS + 3 {
            c.recycle(Buffer::from_vec(vec![0u8; MIN_CACHED_BYTES]));
        }
        assert_eq!(c.stats().kept, MAX_CACHED_BUFFERS);
    }
}
