//! Guarded allocations for the kernel-soundness tests (Linux): a copy of a byte
//! buffer placed in an anonymous mapping between two inaccessible (`PROT_NONE`)
//! pages, either with its last byte right before the trailing guard page (an
//! overrun faults at once) or with its first byte right after the leading guard
//! page (an underrun faults at once). A zero-length buffer gets a pointer at the
//! boundary between the two guard pages, so that any access through it faults.
//!
//! A fault kills the test process; [`report_faults`] installs a handler that first
//! says on stderr that a guard page was hit. Included with `#[path]`.
#![allow(dead_code)]

use std::ptr;
use std::sync::Once;

/// Where the bytes sit between the guard pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// the last byte is the last one before the trailing guard page (catches overruns)
    AgainstEnd,
    /// the first byte is the first one after the leading guard page (catches underruns)
    AgainstStart,
}

/// A buffer between two guard pages; unmapped on drop.
pub struct Guarded {
    map: *mut u8,
    map_len: usize,
    ptr: *mut u8,
    len: usize,
}

/// The system's page size.
pub fn page_size() -> usize {
    // SAFETY: `sysconf` reads a configuration value; it has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    assert!(p > 0, "sysconf(_SC_PAGESIZE) failed");
    p as usize
}

impl Guarded {
    /// A guarded copy of `bytes`, placed as `placement` says.
    pub fn new(bytes: &[u8], placement: Placement) -> Guarded {
        let page = page_size();
        let data_pages = bytes.len().div_ceil(page);
        let map_len = (data_pages + 2) * page;
        // SAFETY: a fresh private anonymous mapping at an address the kernel picks; it
        // aliases no memory of this process.
        let map = unsafe {
            libc::mmap(
                ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert!(map != libc::MAP_FAILED, "mmap of {map_len} bytes failed");
        let map = map as *mut u8;
        let trailing = map.wrapping_add((data_pages + 1) * page);
        // SAFETY: both ranges are whole, page-aligned pages inside the mapping made
        // above, which nothing else references yet.
        let (a, b) = unsafe {
            (
                libc::mprotect(map.cast(), page, libc::PROT_NONE),
                libc::mprotect(trailing.cast(), page, libc::PROT_NONE),
            )
        };
        assert!(a == 0 && b == 0, "mprotect of the guard pages failed");
        let data = map.wrapping_add(page);
        let ptr = match placement {
            Placement::AgainstStart => data,
            Placement::AgainstEnd => data.wrapping_add(data_pages * page - bytes.len()),
        };
        // SAFETY: `ptr..ptr + len` lies in the read-write pages between the guards
        // (`len <= data_pages * page`), and `bytes` is a separate allocation.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len()) };
        Guarded {
            map,
            map_len,
            ptr,
            len: bytes.len(),
        }
    }

    /// The address of the first byte (for a zero-length buffer: the guard boundary).
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The first address past the buffer.
    pub fn end(&self) -> *mut u8 {
        self.ptr.wrapping_add(self.len)
    }

    /// A copy of the buffer's bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        if self.len == 0 {
            return Vec::new();
        }
        // SAFETY: `ptr..ptr + len` is readable, initialized memory of this mapping
        // (written in `new`, since then only by kernels through `ptr`), alive until
        // `self` drops, and no one writes it during this borrow of `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }.to_vec()
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: `map..map + map_len` is exactly the mapping made in `new`, and no
        // pointer into it outlives `self` (kernel calls end before the drop).
        let r = unsafe { libc::munmap(self.map.cast(), self.map_len) };
        debug_assert_eq!(r, 0, "munmap failed");
    }
}

const MESSAGE: &[u8] =
    b"\n*** guard page hit: a compiled kernel (or the harness) touched memory outside \
its buffer. Rerun with GUARD_PAGES_TRACE=1 to print every kernel before it runs. ***\n";

extern "C" fn on_fault(_signal: libc::c_int) {
    // SAFETY: `write` is async-signal-safe; MESSAGE is a static byte string.
    unsafe { libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len()) };
    // Returning re-runs the faulting access under the default action (SA_RESETHAND):
    // the process dies of the original signal.
}

/// Installs (once) a SIGSEGV/SIGBUS handler that says a guard page was hit before
/// the process dies of the signal.
pub fn report_faults() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        for signal in [libc::SIGSEGV, libc::SIGBUS] {
            // SAFETY: a zeroed `sigaction` is a valid "no flags, empty mask" value;
            // the handler only calls the async-signal-safe `write`, and SA_RESETHAND
            // restores the default action so that the fault still kills the process.
            let r = unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fault as *const () as libc::sighandler_t;
                action.sa_flags = libc::SA_RESETHAND | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, ptr::null_mut())
            };
            assert_eq!(r, 0, "sigaction failed");
        }
    });
}
