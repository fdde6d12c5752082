//! Schedules run on a CUDA device with every buffer resident there: the executor of
//! tensors on `cuda:N`.
//!
//! A [`DeviceArray`] is one storage's elements in device memory. [`run`] executes a
//! schedule whose inputs are device arrays and returns its outputs as device arrays:
//! loop kernels are the generated CUDA C, compiled by NVRTC for the device (by the
//! compile stage, `lazyfuse-compile`) and launched on its stream, one after another; temporaries live only on the
//! device, and nothing crosses to the host but each kernel's status block (read once,
//! after the last launch) and the buffers of extern steps (a sort, a matmul: computed
//! on the host with the interpreter's routine, their inputs downloaded and their
//! output uploaded, until they have device kernels of their own).
//!
//! # Host emulation
//! Where no GPU exists, [`set_emulation`] (or `LAZYFUSE_CUDA_EMULATION=1`) makes
//! `cuda:0` an emulated device, and only then: device arrays are host memory, and the
//! same CUDA C is compiled for the host (`lazyfuse_codegen::cuda::host`) and run there. It is a
//! test instrument, off by default: it runs everything of the device path but the
//! CUDA driver calls (transfers, device-side temporaries, status blocks, extern steps
//! across the boundary), so that this path is tested on machines without a GPU. It
//! never stands in for a GPU silently: with it off, a machine without a driver gets
//! "CUDA driver not found: …".
//!
//! ```
//! use lazyfuse_runtime::{resident, Buffer};
//! resident::set_emulation(true);
//! let x = resident::DeviceArray::upload(0, &Buffer::from_vec(vec![1.5f32, -2.0]))?;
//! assert_eq!(x.to_host()?, Buffer::from_vec(vec![1.5f32, -2.0]));
//! # Ok::<(), lazyfuse_runtime::Error>(())
//! ```

use crate::buffer::{check_allocation, Buffer};
use crate::cuda::mirror::device;
use crate::cuda::DeviceBuffer;
use crate::env_switch::EnvSwitch;
use crate::error::{Error, Result};
use lazyfuse_ir::DType;

mod run;

pub use run::run;

/// Whether `cuda:0` is the host emulation (`LAZYFUSE_CUDA_EMULATION`, read once).
static EMULATION: EnvSwitch = EnvSwitch::new("LAZYFUSE_CUDA_EMULATION");

/// Turns the host emulation of `cuda:0` on or off (see the module doc): for tests of
/// the device path on machines without a GPU. `LAZYFUSE_CUDA_EMULATION=1` sets the
/// initial value; it is off by default.
pub fn set_emulation(on: bool) {
    EMULATION.set(on);
}

/// Whether `cuda:0` is the host emulation.
///
/// ```
/// lazyfuse_runtime::resident::set_emulation(false);
/// assert!(!lazyfuse_runtime::resident::emulated());
/// ```
pub fn emulated() -> bool {
    EMULATION.get()
}

/// Checks that `cuda:ordinal` exists and can be used: opens it (once per process), or
/// under the emulation accepts ordinal 0 only.
///
/// # Errors
/// "CUDA driver not found: …" without a driver, or an invalid-ordinal error naming how
/// many devices the machine has.
pub fn check_device(ordinal: usize) -> Result<()> {
    let count = if emulated() {
        1
    } else {
        crate::cuda::mirror::device_count()?
    };
    if ordinal >= count {
        return Err(Error::Cuda(format!(
            "CUDA error: invalid device ordinal (cuda:{ordinal}; this machine has {count} \
             CUDA device{}{})",
            if count == 1 { "" } else { "s" },
            if emulated() { ", emulated" } else { "" }
        )));
    }
    if !emulated() {
        device(ordinal)?;
    }
    Ok(())
}

/// The memory behind a device array.
enum Memory {
    /// on a GPU
    Gpu(DeviceBuffer),
    /// host memory of the emulated device
    Emulated(Buffer),
}

/// One storage's elements in the memory of `cuda:N`: `len` elements of `dtype`.
pub struct DeviceArray {
    ordinal: usize,
    dtype: DType,
    len: usize,
    mem: Memory,
}

impl std::fmt::Debug for DeviceArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceArray({}[{}] on cuda:{}{})",
            self.dtype,
            self.len,
            self.ordinal,
            if self.is_emulated() { ", emulated" } else { "" }
        )
    }
}

/// The bytes of a host buffer.
fn host_bytes(b: &Buffer) -> &[u8] {
    let n = b.len() * b.dtype().size_in_bytes();
    if n == 0 {
        return &[];
    }
    // SAFETY: `Buffer::as_ptr` is valid for `len * size_in_bytes` bytes while `b` lives
    // and is not mutated, which the shared borrow of `b` guarantees for the slice's
    // lifetime.
    unsafe { std::slice::from_raw_parts(b.as_ptr(), n) }
}

impl DeviceArray {
    /// A copy of `host` on `cuda:ordinal`.
    ///
    /// # Errors
    /// As [`check_device`], or the device's allocation or copy error.
    pub fn upload(ordinal: usize, host: &Buffer) -> Result<DeviceArray> {
        check_device(ordinal)?;
        let mem = if emulated() {
            Memory::Emulated(host.clone())
        } else {
            let bytes = host_bytes(host);
            let dev = device(ordinal)?;
            Memory::Gpu(if bytes.is_empty() {
                dev.alloc(0)?
            } else {
                dev.upload(bytes)?
            })
        };
        Ok(DeviceArray {
            ordinal,
            dtype: host.dtype(),
            len: host.len(),
            mem,
        })
    }

    /// The elements, copied to the host (waits for the work that writes them).
    ///
    /// # Errors
    /// The device's copy error (which also reports an earlier kernel's fault).
    pub fn to_host(&self) -> Result<Buffer> {
        match &self.mem {
            Memory::Emulated(b) => Ok(b.clone()),
            Memory::Gpu(buf) => {
                let mut out = Buffer::zeros(self.dtype, self.len);
                let n = self.len * self.dtype.size_in_bytes();
                if n > 0 {
                    // SAFETY: `out` holds `len` elements of `dtype`, `n` bytes at
                    // `as_mut_ptr`, borrowed mutably for the slice's life; every dtype
                    // accepts the bytes a kernel of the same dtype wrote (a bool
                    // buffer holds only the 0 and 1 that kernels store).
                    let bytes = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr(), n) };
                    device(self.ordinal)?.read(buf, bytes)?;
                }
                Ok(out)
            }
        }
    }

    /// The element dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device ordinal (`N` of `cuda:N`).
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Whether it lives in the host emulation of the device.
    pub fn is_emulated(&self) -> bool {
        matches!(self.mem, Memory::Emulated(_))
    }

    /// A new array of `len` elements of `dtype` on `cuda:ordinal`: zeros, or (when
    /// `overwritten`: the writer stores every element before any is read) whatever the
    /// allocator's block held.
    fn alloc(ordinal: usize, dtype: DType, len: usize, overwritten: bool) -> Result<DeviceArray> {
        check_allocation(&[len], dtype, false)?;
        let mem = if emulated() {
            Memory::Emulated(Buffer::zeros(dtype, len))
        } else {
            let dev = device(ordinal)?;
            let bytes = len * dtype.size_in_bytes();
            // No memset of zero bytes: an empty array is only ever a pointer.
            Memory::Gpu(if overwritten || bytes == 0 {
                dev.alloc(bytes)?
            } else {
                dev.alloc_zeroed(bytes)?
            })
        };
        Ok(DeviceArray {
            ordinal,
            dtype,
            len,
            mem,
        })
    }

    /// A copy made on the device.
    fn duplicate(&self) -> Result<DeviceArray> {
        let mem = match &self.mem {
            Memory::Emulated(b) => Memory::Emulated(b.clone()),
            Memory::Gpu(buf) => Memory::Gpu(device(self.ordinal)?.duplicate(buf)?),
        };
        Ok(DeviceArray { mem, ..*self })
    }
}
