//! Which vector code the routines run: the widest the processor has
//! (AVX-512F, AVX2 with FMA, or portable, probed once), and on Intel
//! processors AVX2 inside a short kernel ([`for_work`]). Every level gives
//! the same bits; the choice only moves the speed.

use std::cell::Cell;
use std::sync::atomic::{AtomicU8, Ordering};

/// The widest vector code this processor runs, in the low two bits: 0 not yet
/// probed, then 1 portable, 2 AVX2 with FMA, 3 AVX-512F (with AVX2 and FMA);
/// and [`LICENSED`] where 512-bit code runs under a frequency licence.
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The flag of [`LEVEL`] that says 512-bit code costs this processor a
/// frequency licence: Intel cores run it at a lower clock, granted hundreds of
/// microseconds after wide code starts and dropped soon after it stops. Until
/// the grant, wide instructions run throttled; after it, the whole core runs
/// slower, the host code between kernels included. (AMD's cores split 512-bit
/// instructions in two at their full clock.)
const LICENSED: u8 = 4;

/// Kernels with less work than this many elements run the routines' 256-bit
/// code on a processor whose 512-bit code runs under a frequency licence
/// (Intel's, see [`for_work`]): a short kernel gains less from the wide
/// vectors than the licence costs, and one this long runs long enough to
/// repay it.
pub const WIDE_MIN_WORK: usize = 1 << 17;

thread_local! {
    /// Whether the kernel this thread runs now is shorter than
    /// [`WIDE_MIN_WORK`].
    static SHORT_WORK: Cell<bool> = const { Cell::new(false) };
}

/// The level this thread's routines run at now: the processor's widest,
/// except AVX2 for a short kernel where 512-bit code is [`LICENSED`] (every
/// level gives the same bits).
#[inline]
pub(crate) fn level() -> u8 {
    let probed = match LEVEL.load(Ordering::Relaxed) {
        0 => {
            let p = probe();
            LEVEL.store(p, Ordering::Relaxed);
            p
        }
        p => p,
    };
    at_width(probed, SHORT_WORK.with(Cell::get))
}

/// The level for the probed `LEVEL` word `probed`, in a kernel that is
/// `short` or not.
fn at_width(probed: u8, short: bool) -> u8 {
    if probed & LICENSED != 0 && short {
        2
    } else {
        probed & 3
    }
}

/// Runs `f`, one chunk of a kernel whose whole work is `work` elements, with
/// its routines at the width that work repays (see [`WIDE_MIN_WORK`]), and
/// returns what `f` returns.
///
/// ```
/// use lazyfuse_runtime::vector_runs::{for_work, WIDE_MIN_WORK};
/// assert_eq!(for_work(WIDE_MIN_WORK - 1, || 7), 7);
/// ```
pub fn for_work<R>(work: usize, f: impl FnOnce() -> R) -> R {
    /// Puts the thread's previous choice back, however `f` ends.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SHORT_WORK.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SHORT_WORK.with(|s| s.replace(work < WIDE_MIN_WORK)));
    f()
}

#[cfg(target_arch = "x86_64")]
fn probe() -> u8 {
    let fma = std::arch::is_x86_feature_detected!("fma");
    let avx2 = fma && std::arch::is_x86_feature_detected!("avx2");
    if avx2 && std::arch::is_x86_feature_detected!("avx512f") {
        3 | if intel() { LICENSED } else { 0 }
    } else if avx2 {
        2
    } else {
        1
    }
}

/// Whether the processor's vendor string is Intel's.
#[cfg(target_arch = "x86_64")]
fn intel() -> bool {
    // CPUID leaf 0 exists on every x86-64 processor; it returns the vendor
    // string in EBX, EDX, ECX.
    let id = std::arch::x86_64::__cpuid(0);
    [id.ebx, id.edx, id.ecx]
        .iter()
        .flat_map(|r| r.to_le_bytes())
        .eq(*b"GenuineIntel")
}

#[cfg(not(target_arch = "x86_64"))]
fn probe() -> u8 {
    1
}

/// Runs `f` once at each level this processor has (portable, then AVX2, then
/// AVX-512), the routines dispatching to that level, and lets [`level`] probe
/// again after. Tests running meanwhile see a forced level, which is sound:
/// every level gives the same bits.
#[cfg(test)]
pub(crate) fn each_level(f: impl Fn()) {
    for l in 1..=probe() & 3 {
        LEVEL.store(l, Ordering::Relaxed);
        f();
    }
    LEVEL.store(0, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_kernels_take_256_bit_code_where_wide_code_is_licensed() {
        assert_eq!(at_width(3 | LICENSED, true), 2);
        assert_eq!(at_width(3 | LICENSED, false), 3);
        for (probed, want) in [(3, 3), (2, 2), (1, 1)] {
            assert_eq!(at_width(probed, true), want);
            assert_eq!(at_width(probed, false), want);
        }
        let short = || SHORT_WORK.with(Cell::get);
        assert!(!short());
        for_work(WIDE_MIN_WORK - 1, || {
            assert!(short());
            // a long kernel inside a short one, and back
            for_work(WIDE_MIN_WORK, || assert!(!short()));
            assert!(short());
        });
        assert!(!short());
    }
}
