//! The bookkeeping of the caching device allocator: freed device blocks are kept by size
//! class and handed out again, because `cuMemAlloc`/`cuMemFree` cost microseconds to
//! milliseconds and synchronize, while a realize loop asks for the same sizes again
//! and again.
//!
//! Generic over the block type so that the policy is tested without a GPU; the device
//! side ([`super::device`]) stores cudarc slices in it.

use std::collections::HashMap;

/// Smallest size class: smaller requests are rounded up to it (cudaMalloc itself
/// aligns to 256 bytes).
pub(crate) const MIN_CLASS: usize = 256;

/// The size class of a request of `bytes`: powers of two up to 4 KiB, then 8 classes
/// per doubling (multiples of a sixteenth of the next power of two, which lie between
/// its half and itself), so a block wastes less than 1/8 of its size on large buffers,
/// and a few classes serve many sizes.
pub(crate) fn size_class(bytes: usize) -> usize {
    let bytes = bytes.max(MIN_CLASS);
    let p = bytes.next_power_of_two();
    if p <= 4096 {
        return p;
    }
    let step = p / 16;
    bytes.div_ceil(step) * step
}

/// Counters of a device's caching allocator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocatorStats {
    /// Allocations served from a kept block.
    pub hits: u64,
    /// Allocations that asked the driver for a new block.
    pub misses: u64,
    /// Bytes kept for reuse now (whole size classes).
    pub cached_bytes: usize,
    /// Blocks kept for reuse now.
    pub cached_blocks: usize,
    /// The bound on `cached_bytes`.
    pub max_cached_bytes: usize,
}

/// Free blocks by size class, at most `max_bytes` in all.
#[derive(Debug)]
pub(crate) struct SizeClassPool<B> {
    free: HashMap<usize, Vec<B>>,
    stats: AllocatorStats,
}

impl<B> SizeClassPool<B> {
    /// An empty pool keeping at most `max_bytes`.
    pub(crate) fn new(max_bytes: usize) -> Self {
        SizeClassPool {
            free: HashMap::new(),
            stats: AllocatorStats {
                max_cached_bytes: max_bytes,
                ..AllocatorStats::default()
            },
        }
    }

    /// A kept block of size class `class`, counted as a hit; `None` (a miss) when
    /// there is none.
    pub(crate) fn take(&mut self, class: usize) -> Option<B> {
        let block = self.free.get_mut(&class).and_then(Vec::pop);
        match block {
            Some(b) => {
                self.stats.hits += 1;
                self.stats.cached_bytes -= class;
                self.stats.cached_blocks -= 1;
                Some(b)
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    /// Keeps a freed block of size class `class`; gives it back (to be really freed)
    /// when keeping it would pass the bound.
    pub(crate) fn put(&mut self, class: usize, block: B) -> Option<B> {
        if self.stats.cached_bytes + class > self.stats.max_cached_bytes {
            return Some(block);
        }
        self.free.entry(class).or_default().push(block);
        self.stats.cached_bytes += class;
        self.stats.cached_blocks += 1;
        None
    }

    /// Every kept block, to be freed (on out-of-memory, or when asked to give memory
    /// back).
    pub(crate) fn drain(&mut self) -> Vec<B> {
        self.stats.cached_bytes = 0;
        self.stats.cached_blocks = 0;
        self.free.drain().flat_map(|(_, v)| v).collect()
    }

    /// Sets the bound, and returns the blocks that no longer fit, to be freed.
    pub(crate) fn set_max_bytes(&mut self, max_bytes: usize) -> Vec<B> {
        self.stats.max_cached_bytes = max_bytes;
        let mut evicted = Vec::new();
        if self.stats.cached_bytes > max_bytes {
            // Largest classes first: they give the most memory back per block.
            let mut classes: Vec<usize> = self.free.keys().copied().collect();
            classes.sort_unstable_by(|a, b| b.cmp(a));
            for class in classes {
                let blocks = self.free.get_mut(&class).expect("listed class");
                while self.stats.cached_bytes > max_bytes {
                    let Some(b) = blocks.pop() else { break };
                    self.stats.cached_bytes -= class;
                    self.stats.cached_blocks -= 1;
                    evicted.push(b);
                }
            }
            self.free.retain(|_, v| !v.is_empty());
        }
        evicted
    }

    /// The counters.
    pub(crate) fn stats(&self) -> AllocatorStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes() {
        assert_eq!(size_class(0), 256);
        assert_eq!(size_class(1), 256);
        assert_eq!(size_class(257), 512);
        assert_eq!(size_class(4096), 4096);
        assert_eq!(size_class(4097), 8192 / 16 * 9); // 4608: sixteenths of 8192
        assert_eq!(size_class(1 << 20), 1 << 20);
        assert_eq!(size_class((1 << 20) + 1), (1 << 20) + (1 << 17));
        for bytes in [1usize, 300, 5000, 100_000, 3 << 20, (1 << 30) + 7] {
            let c = size_class(bytes);
            assert!(c >= bytes, "{bytes} -> {c}");
            assert!(
                bytes < 4096 || c - bytes <= c / 8,
                "{bytes} -> {c} wastes too much"
            );
            assert_eq!(size_class(c), c, "a class is its own class");
        }
    }

    #[test]
    fn reuses_by_class_and_counts() {
        let mut pool = SizeClassPool::new(1 << 20);
        assert_eq!(pool.take(512), None);
        assert_eq!(pool.put(512, "a"), None);
        assert_eq!(pool.take(1024), None);
        assert_eq!(pool.take(512), Some("a"));
        let s = pool.stats();
        assert_eq!(
            (s.hits, s.misses, s.cached_bytes, s.cached_blocks),
            (1, 2, 0, 0)
        );
    }

    #[test]
    fn is_bounded() {
        let mut pool = SizeClassPool::new(1000);
        assert_eq!(pool.put(512, 1), None);
        assert_eq!(
            pool.put(512, 2),
            Some(2),
            "a second block would pass the bound"
        );
        assert_eq!(pool.stats().cached_bytes, 512);
        assert_eq!(pool.drain(), vec![1]);
        assert_eq!(pool.stats().cached_bytes, 0);
    }

    #[test]
    fn lowering_the_bound_evicts_largest_first() {
        let mut pool = SizeClassPool::new(10_000);
        pool.put(256, 'a');
        pool.put(4096, 'b');
        pool.put(1024, 'c');
        let evicted = pool.set_max_bytes(1500);
        assert_eq!(evicted, vec!['b']);
        assert_eq!(pool.stats().cached_bytes, 1280);
        assert_eq!(pool.set_max_bytes(0).len(), 2);
        assert_eq!(pool.stats().cached_blocks, 0);
    }
}
