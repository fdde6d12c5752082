//! Next-row hints: the routines of a reduction kernel fetch the kernel's next
//! row while they work through the current one.
//!
//! A reduction kernel's first phase reads its row from memory; the later
//! phases reread it from the cache and compute while the memory system idles
//! (the hardware's own prefetcher only follows misses, and the rereads make
//! none). The kernel hands one routine per row the address of its next row of
//! the same input (`next`, null: none), and that routine asks for the next
//! row's lines as it goes, which overlaps the fetch with the computing:
//!
//! - a transcendental row routine of a later phase (softmax's `exp(x - max)`,
//!   `rows.rs`, `erf_table.rs`) takes it where the kernel has one: its work is
//!   the longest of the row, and one line of the next row per line it writes
//!   spreads the fetch over all of it ([`lines`]);
//! - else the first phase's reduction routine (a layer norm's mean,
//!   `reductions.rs`) takes it, one block of lines at a time ([`blocks`]).
//!
//! Only one routine per row asks: a second would find the lines on their way
//! and only spend its hints. (Measured: softmax's max routine asking for the
//! whole next row at once stalled on the fetch it started; its exp routine
//! asking line by line overlaps it.)
//!
//! An elementwise kernel with output runs asks for its inputs' lines a few
//! runs ahead itself, once per run and input ([`lf_prefetch_lines`]): while
//! a run's routine computes, no load of the kernel's goes to memory, and the
//! hardware's prefetchers, which follow the loads, idle with it.
//!
//! A direct run's routine (one call over a kernel's whole row, reading the
//! input itself: `x.log()`) asks for its source's lines [`AHEAD`] bytes
//! ahead as it goes, one line per line it reads ([`ahead`]). Its loads do
//! follow the row, but with a transcendental's work between two lines the
//! hardware's prefetchers run too few lines ahead to cover the memory's
//! latency. (Measured on `x.log()`: the hints took a third off its time;
//! 1 KiB ahead gained less, 4 KiB no more, a level-2 hint less.)

/// Bytes of a row a reduction routine works through between two requests of
/// the next row's matching bytes: sixteen lines at a time, so the hints spread
/// over the routine's loop instead of stalling it in one burst.
pub(super) const BLOCK: usize = 1024;

/// The blocks of `0..n` of [`BLOCK`] bytes of `T` each (a multiple of 16
/// elements: a block never splits the sixteen accumulators' cycle); yielding a
/// block first asks for the block's bytes of the row at `next` (null: no row).
/// An iterator rather than a closure: the loop body stays in the routine's own
/// function, compiled with its vector features.
pub(super) struct Blocks<T> {
    start: usize,
    n: usize,
    next: *const T,
}

/// The [`Blocks`] of a row of `n` elements whose next row is `next`.
#[inline(always)]
pub(super) fn blocks<T>(n: usize, next: *const T) -> Blocks<T> {
    Blocks { start: 0, n, next }
}

impl<T> Iterator for Blocks<T> {
    type Item = std::ops::Range<usize>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.start >= self.n {
            return None;
        }
        let size = std::mem::size_of::<T>();
        let end = self.n.min(self.start + BLOCK / size);
        lines::<true, T>(self.next, self.start, end - self.start);
        let r = self.start..end;
        self.start = end;
        Some(r)
    }
}

/// Asks for the cache lines of the `len` elements at `next[start..]` (null
/// `next`: nothing) to be brought into the level-1 cache (`L1`, a reduction
/// routine's [`Blocks`]) or the level-2 cache only (a row routine, with the
/// sixteen elements it is about to compute, one or two lines). (The level-2
/// cache for a row routine: the row is read a phase later, and the level-1
/// cache holds the row being computed and its output; measured on float32
/// softmax rows of 1–16 KiB, a level-1 hint was slower than none, a level-2
/// hint faster.)
#[inline(always)]
pub(super) fn lines<const L1: bool, T>(next: *const T, start: usize, len: usize) {
    if next.is_null() {
        return;
    }
    let from = next.wrapping_add(start).cast::<u8>();
    for line in (0..len * std::mem::size_of::<T>()).step_by(64) {
        line_hint::<L1>(from.wrapping_add(line));
    }
}

/// Bytes ahead of the element it reads at which a direct run's routine asks
/// for its source's lines ([`ahead`]).
pub(super) const AHEAD: usize = 2048;

/// Asks for the line [`AHEAD`] bytes past `src[at]` to be brought into the
/// level-1 cache, where that is still in `src` (`None`, a run in place,
/// whose lines the kernel has just written: nothing). A routine calls it
/// once per 64 bytes of the source it reads.
#[inline(always)]
pub(super) fn ahead<T>(src: Option<&[T]>, at: usize) {
    if let Some(src) = src {
        if let Some(i) = ahead_index::<T>(src.len(), at) {
            line_hint::<true>(src.as_ptr().wrapping_add(i).cast());
        }
    }
}

/// Asks for the line [`AHEAD`] bytes past element `at` of each of the runs
/// `hints` to be brought into the level-1 cache: a code tile op asks so for
/// its kernel's input runs, once per 64 bytes it computes (each input
/// continues past the run; the hint reads nothing, so one past an input's
/// end costs only the hint).
#[inline(always)]
pub(super) fn ahead_all<T>(hints: &[*const T], at: usize) {
    for &p in hints {
        line_hint::<true>(p.wrapping_add(at).cast::<u8>().wrapping_add(AHEAD));
    }
}

/// The element [`ahead`] asks for in a source of `len` elements of `T` read
/// at `at` (`None`: past the source's end).
#[inline(always)]
fn ahead_index<T>(len: usize, at: usize) -> Option<usize> {
    let i = at + AHEAD / std::mem::size_of::<T>();
    (i < len).then_some(i)
}

/// Asks for the cache lines of the `bytes` bytes at `p` (`bytes ≤ 0`:
/// nothing) to be brought into the level-1 cache: `lf_prefetch_lines`, which
/// an elementwise kernel with output runs calls once per input and run for a
/// run a few ahead (`lazyfuse_codegen`'s output runs).
///
/// A hint only: it reads nothing architecturally, at any address, so it is
/// a safe function (the kernels pass parts of their own rows).
pub(super) extern "C" fn lf_prefetch_lines(p: *const u8, bytes: i64) {
    if bytes <= 0 {
        return;
    }
    // Every line that holds one of the bytes: from the first one's line start.
    let first = p.wrapping_sub(p as usize % 64);
    let span = (p as usize % 64).saturating_add(bytes as usize);
    lines::<true, u8>(first, 0, span);
}

/// A hint to load the cache line at `p` into the level-1 cache (`L1`) or
/// the level-2 cache only.
#[inline(always)]
fn line_hint<const L1: bool>(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing architecturally and never faults, at
    // any address (the kernels pass rows of their own buffers).
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0, _MM_HINT_T1};
        if L1 {
            _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>())
        } else {
            _mm_prefetch::<_MM_HINT_T1>(p.cast::<i8>())
        }
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::ahead_index;

    /// A direct run asks for the line 2 KiB on from the element it reads,
    /// inside its source only: 512 float32 or 256 float64 on, none past the
    /// end.
    #[test]
    fn ahead_asks_inside_the_source_only() {
        assert_eq!(ahead_index::<f32>(1000, 0), Some(512));
        assert_eq!(ahead_index::<f32>(1000, 487), Some(999));
        assert_eq!(ahead_index::<f32>(1000, 488), None);
        assert_eq!(ahead_index::<f64>(1000, 16), Some(272));
        assert_eq!(ahead_index::<f64>(256, 0), None);
        assert_eq!(ahead_index::<f32>(128, 0), None);
    }
}
