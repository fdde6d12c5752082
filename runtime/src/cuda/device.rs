//! A CUDA device: its context and stream, device memory through a caching allocator,
//! modules loaded from CUBINs, and kernel launches, behind a safe API whose failures are
//! values.
//!
//! # Ordering
//! Every operation of one [`CudaDevice`] goes to one stream (the context's default
//! stream), so uploads, launches, downloads and frees run in the order they were
//! issued: a buffer freed (returned to the allocator) and handed out again is only
//! touched by work issued after the work that used it before. That is why cudarc's
//! per-buffer event tracking is turned off (it costs two events per allocation).
//!
//! # Why launches are safe to call
//! A kernel launch is unsafe in cudarc because the driver reads as many argument bytes
//! as the kernel's parameters take from the pointers it is given. [`CudaDevice::launch`]
//! asks the driver for the kernel's parameters (`cuFuncGetParamInfo`) and refuses a
//! launch whose arguments do not match them one for one (each parameter 8 bytes: a
//! device pointer, `u64` or `i64`), so the driver never reads past what we pass. What the
//! kernel then does to device memory stays on the device: an out-of-range access is a
//! CUDA error returned by the next synchronizing call, not host memory corruption.
//!
//! ```
//! use lazyfuse_runtime::cuda::CudaDevice;
//! match CudaDevice::new(0) {
//!     Ok(dev) => {
//!         let buf = dev.upload(&[1, 2, 3, 4])?;
//!         assert_eq!(dev.download(&buf)?, vec![1, 2, 3, 4]);
//!     }
//!     Err(e) => println!("no GPU here: {e}"),
//! }
//! # Ok::<(), lazyfuse_runtime::Error>(())
//! ```

use super::allocator::{size_class, AllocatorStats, SizeClassPool};
use super::cuda_err;
use crate::{Error, Result};
use cudarc::driver::sys as driver_sys;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, LaunchConfig,
    PushKernelArg,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The oldest driver lazyfuse accepts: CUDA 13.0 (driver R580), the API cudarc is built
/// for here (`cuda-13000`); an older driver lacks symbols that cudarc would panic on.
pub const MIN_DRIVER_VERSION: i32 = 13000;

/// The default bound on the bytes a device's allocator keeps for reuse (1 GiB).
pub const DEFAULT_MAX_CACHED_BYTES: usize = 1 << 30;

/// The version of the CUDA driver (`cuDriverGetVersion`: 13000 for CUDA 13.0), probed
/// once per process.
///
/// # Errors
/// "CUDA driver not found: …" when `libcuda.so` cannot be loaded (no NVIDIA driver),
/// or a message naming the version when the driver is older than CUDA 13.
pub fn driver_version() -> Result<i32> {
    static VERSION: OnceLock<Result<i32>> = OnceLock::new();
    VERSION.get_or_init(probe_driver).clone()
}

fn probe_driver() -> Result<i32> {
    // SAFETY: `is_culib_present` only tries to dlopen the candidate library names and
    // closes what it opened; it calls no driver symbol.
    if !unsafe { driver_sys::is_culib_present() } {
        return Err(Error::Cuda(
            "CUDA driver not found: libcuda.so is not on the library path \
             (is the NVIDIA driver installed?)"
                .to_string(),
        ));
    }
    let mut version = 0;
    // SAFETY: the library was found just above, so cudarc's loader does not panic;
    // `cuDriverGetVersion` exists in every driver, needs no `cuInit`, and writes one
    // int through the pointer, which points to a live local.
    unsafe { driver_sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(|e| cuda_err("cuDriverGetVersion", e))?;
    if version < MIN_DRIVER_VERSION {
        return Err(Error::Cuda(format!(
            "CUDA driver for CUDA {}.{} found, lazyfuse needs a driver for CUDA 13 (R580 or newer)",
            version / 1000,
            version % 1000 / 10
        )));
    }
    Ok(version)
}

/// The number of CUDA devices (0 when the driver finds none).
///
/// # Errors
/// As [`driver_version`], or when the driver fails to initialize for another reason
/// than having no device.
pub fn device_count() -> Result<usize> {
    driver_version()?;
    match CudaContext::device_count() {
        Ok(n) => Ok(usize::try_from(n).unwrap_or(0)),
        Err(DriverError(driver_sys::CUresult::CUDA_ERROR_NO_DEVICE)) => Ok(0),
        Err(e) => Err(cuda_err("cuInit/cuDeviceGetCount", e)),
    }
}

/// The allocator shared by a device and its buffers (a buffer returns its block on drop).
type Pool = Arc<Mutex<SizeClassPool<CudaSlice<u8>>>>;

fn lock(pool: &Pool) -> std::sync::MutexGuard<'_, SizeClassPool<CudaSlice<u8>>> {
    // A panic while holding the lock leaves only counters half-updated; keep going.
    pool.lock().unwrap_or_else(|p| p.into_inner())
}

/// One GPU: a context, a stream, and a caching allocator.
#[derive(Debug)]
pub struct CudaDevice {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: String,
    compute_capability: (i32, i32),
    name: String,
    pool: Pool,
    /// the cuBLAS handle, made on first use (or why there is none)
    blas: OnceLock<std::result::Result<super::blas::Blas, Error>>,
}

impl CudaDevice {
    /// Opens device `ordinal` (`cuda:ordinal`): its primary context, its default stream,
    /// and its compute capability.
    ///
    /// # Errors
    /// "CUDA driver not found: …" without a driver, "no CUDA device cuda:N (found M)"
    /// when there is no such device, or the driver's error.
    pub fn new(ordinal: usize) -> Result<Self> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::Cuda(format!(
                "no CUDA device cuda:{ordinal} (found {count})"
            )));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| cuda_err("creating the context", e))?;
        // SAFETY: every buffer of this device is used on its one stream only (see the
        // module's "Ordering"), so the cross-stream synchronization that event tracking
        // provides is never needed. No slice was created before this call.
        unsafe { ctx.disable_event_tracking() };
        let compute_capability = ctx
            .compute_capability()
            .map_err(|e| cuda_err("cuDeviceGetAttribute(compute capability)", e))?;
        let name = ctx.name().unwrap_or_else(|_| "unknown GPU".to_string());
        let stream = ctx.default_stream();
        Ok(CudaDevice {
            ordinal,
            arch: format!("sm_{}{}", compute_capability.0, compute_capability.1),
            compute_capability,
            name,
            stream,
            ctx,
            pool: Arc::new(Mutex::new(SizeClassPool::new(DEFAULT_MAX_CACHED_BYTES))),
            blas: OnceLock::new(),
        })
    }

    /// The device's cuBLAS handle, made on first use.
    pub(crate) fn blas(&self) -> Result<&super::blas::Blas> {
        self.blas
            .get_or_init(|| super::blas::Blas::new(self.stream.clone()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Sets every byte of `buf` to zero (queued on the stream).
    ///
    /// # Errors
    /// When `buf` belongs to another device, or the driver's error.
    pub fn fill_zero(&self, buf: &mut DeviceBuffer) -> Result<()> {
        self.check_owner(buf)?;
        let len = buf.len;
        if len == 0 {
            return Ok(());
        }
        self.stream
            .memset_zeros(&mut buf.slice_mut().slice_mut(..len))
            .map_err(|e| cuda_err("cuMemsetD8", e))
    }

    /// Typed views of three buffers of this device: `b` and `a` read (`nb` and `na`
    /// elements of `T`), `out` written (`nc` elements).
    ///
    /// # Safety
    /// The bytes the views cover must be valid values of `T` for whoever reads them
    /// (every byte pattern is, for the float types cuBLAS takes).
    pub(crate) unsafe fn slice_views<'x, T>(
        &self,
        b: &'x DeviceBuffer,
        nb: usize,
        a: &'x DeviceBuffer,
        na: usize,
        out: &'x mut DeviceBuffer,
        nc: usize,
    ) -> Result<(
        cudarc::driver::CudaView<'x, T>,
        cudarc::driver::CudaView<'x, T>,
        cudarc::driver::CudaViewMut<'x, T>,
    )> {
        for buf in [a, b, &*out] {
            self.check_owner(buf)?;
        }
        let short = || Error::Cuda("a typed view past the end of a device buffer".into());
        // SAFETY: `transmute` checks the length against the block's bytes (None past
        // it); the caller vouches for the values.
        let bv = unsafe { b.slice_ref().transmute::<T>(nb) }.ok_or_else(short)?;
        // SAFETY: as above.
        let av = unsafe { a.slice_ref().transmute::<T>(na) }.ok_or_else(short)?;
        // SAFETY: as above; `out` is borrowed mutably, so no other view aliases it.
        let cv = unsafe { out.slice_mut().transmute_mut::<T>(nc) }.ok_or_else(short)?;
        Ok((bv, av, cv))
    }

    /// The device's ordinal, N of `cuda:N`.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The NVRTC architecture of this device, `"sm_90"` for compute capability 9.0.
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// The compute capability, `(major, minor)`.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// The device's name ("NVIDIA H100 80GB HBM3").
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A buffer of `bytes` bytes whose contents are unspecified (they may be a previous
    /// buffer's): for outputs that a kernel overwrites entirely. Served from the
    /// allocator's cache when a block of the same size class is free.
    ///
    /// # Errors
    /// "CUDA out of memory: …" when the device has no room even after the cache is
    /// emptied, or the driver's error.
    pub fn alloc(&self, bytes: usize) -> Result<DeviceBuffer> {
        let class = size_class(bytes);
        let cached = lock(&self.pool).take(class);
        let slice = match cached {
            Some(slice) => slice,
            None => self.fresh_block(class)?,
        };
        Ok(DeviceBuffer {
            slice: Some(slice),
            len: bytes,
            class,
            pool: self.pool.clone(),
        })
    }

    fn fresh_block(&self, class: usize) -> Result<CudaSlice<u8>> {
        // SAFETY: the memory is uninitialized, which every byte pattern of u8 allows;
        // `alloc` documents that the contents are unspecified.
        match unsafe { self.stream.alloc::<u8>(class) } {
            Ok(slice) => Ok(slice),
            Err(DriverError(driver_sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY)) => {
                // The cache may hold the room: give it back and try once more.
                self.release_cached();
                self.synchronize()?;
                // SAFETY: as above.
                unsafe { self.stream.alloc::<u8>(class) }.map_err(|e| match e {
                    DriverError(driver_sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY) => {
                        Error::Cuda(format!(
                            "CUDA out of memory: tried to allocate {class} bytes on cuda:{}",
                            self.ordinal
                        ))
                    }
                    e => cuda_err("cuMemAlloc", e),
                })
            }
            Err(e) => Err(cuda_err("cuMemAlloc", e)),
        }
    }

    /// A buffer of `bytes` zero bytes.
    ///
    /// # Errors
    /// As [`alloc`](Self::alloc).
    pub fn alloc_zeroed(&self, bytes: usize) -> Result<DeviceBuffer> {
        let mut buf = self.alloc(bytes)?;
        self.stream
            .memset_zeros(&mut buf.slice_mut().slice_mut(..bytes))
            .map_err(|e| cuda_err("cuMemsetD8", e))?;
        Ok(buf)
    }

    /// A new buffer holding a copy of `data` (any dtype, as bytes).
    ///
    /// # Errors
    /// As [`alloc`](Self::alloc), or the copy's error.
    pub fn upload(&self, data: &[u8]) -> Result<DeviceBuffer> {
        let mut buf = self.alloc(data.len())?;
        self.write(&mut buf, data)?;
        Ok(buf)
    }

    /// Copies `data` into the start of `buf`.
    ///
    /// # Errors
    /// When `data` is longer than `buf`, `buf` belongs to another device, or the copy
    /// fails.
    pub fn write(&self, buf: &mut DeviceBuffer, data: &[u8]) -> Result<()> {
        self.check_owner(buf)?;
        if data.len() > buf.len {
            return Err(Error::Cuda(format!(
                "cannot write {} bytes into a device buffer of {}",
                data.len(),
                buf.len
            )));
        }
        if data.is_empty() {
            return Ok(());
        }
        self.stream
            .memcpy_htod(data, &mut buf.slice_mut().slice_mut(..data.len()))
            .map_err(|e| cuda_err("cuMemcpyHtoD", e))
    }

    /// A new buffer holding a copy of `buf`'s bytes, copied on the device (queued
    /// after the work issued before, like every operation of this device).
    ///
    /// # Errors
    /// As [`alloc`](Self::alloc), when `buf` belongs to another device, or the copy's
    /// error.
    pub fn duplicate(&self, buf: &DeviceBuffer) -> Result<DeviceBuffer> {
        self.check_owner(buf)?;
        let mut out = self.alloc(buf.len)?;
        if buf.len > 0 {
            let len = buf.len;
            self.stream
                .memcpy_dtod(
                    &buf.slice_ref().slice(..len),
                    &mut out.slice_mut().slice_mut(..len),
                )
                .map_err(|e| cuda_err("cuMemcpyDtoD", e))?;
        }
        Ok(out)
    }

    /// The bytes of `buf` (waits for the work issued before that writes it).
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn download(&self, buf: &DeviceBuffer) -> Result<Vec<u8>> {
        let mut out = vec![0u8; buf.len];
        self.read(buf, &mut out)?;
        Ok(out)
    }

    /// Copies the first `out.len()` bytes of `buf` into `out`, and waits for the copy.
    ///
    /// # Errors
    /// When `out` is longer than `buf`, `buf` belongs to another device, or the copy
    /// (or an earlier kernel, whose errors surface here) fails.
    pub fn read(&self, buf: &DeviceBuffer, out: &mut [u8]) -> Result<()> {
        self.check_owner(buf)?;
        if out.len() > buf.len {
            return Err(Error::Cuda(format!(
                "cannot read {} bytes from a device buffer of {}",
                out.len(),
                buf.len
            )));
        }
        if !out.is_empty() {
            self.stream
                .memcpy_dtoh(&buf.slice_ref().slice(..out.len()), out)
                .map_err(|e| cuda_err("cuMemcpyDtoH", e))?;
        }
        // The copy into pageable memory may still be in flight: wait before the caller
        // reads `out`.
        self.synchronize()
    }

    /// Waits for all work issued to this device, and reports any error that an earlier
    /// asynchronous operation left (a faulting kernel, a failed free).
    ///
    /// # Errors
    /// The first pending CUDA error.
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| cuda_err("synchronize", e))?;
        self.ctx
            .check_err()
            .map_err(|e| cuda_err("an earlier asynchronous operation", e))
    }

    /// Loads a CUBIN (from [`NvrtcCompiler`](super::NvrtcCompiler)) as a module.
    ///
    /// # Errors
    /// When `cubin` is not a well-formed ELF image (checked before the driver reads it:
    /// the driver takes no length and trusts the image's own offsets), or when the
    /// driver refuses it (e.g. compiled for another architecture).
    pub fn load(&self, cubin: &[u8]) -> Result<Module> {
        check_elf(cubin)?;
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(cubin.to_vec()))
            .map_err(|e| cuda_err("cuModuleLoadData", e))?;
        Ok(Module {
            module,
            ctx: self.ctx.clone(),
            functions: Mutex::new(HashMap::new()),
        })
    }

    /// Launches `kernel` of `module` with `dims` and `args`, on this device's stream.
    /// Returns when the launch is queued; [`synchronize`](Self::synchronize) or a read
    /// waits for it and reports errors that happen while it runs.
    ///
    /// # Errors
    /// When the module has no such kernel or was loaded on another device, when `args`
    /// do not match the kernel's parameters (count, and 8 bytes each), when a buffer
    /// belongs to another device, or when the driver refuses the launch (e.g. too many
    /// threads per block).
    pub fn launch(
        &self,
        module: &Module,
        kernel: &str,
        dims: LaunchDims,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        // Handles of one device share its primary context: compare the contexts, not
        // the handles.
        if module.ctx.cu_ctx() != self.ctx.cu_ctx() {
            return Err(Error::Cuda(format!(
                "a module loaded on cuda:{} was launched on cuda:{}",
                module.ctx.ordinal(),
                self.ordinal
            )));
        }
        let (function, params) = module.function(kernel)?;
        if params.len() != args.len() {
            return Err(Error::Cuda(format!(
                "kernel {kernel} takes {} parameters, the launch passes {}",
                params.len(),
                args.len()
            )));
        }
        for (i, &size) in params.iter().enumerate() {
            if size != 8 {
                return Err(Error::Cuda(format!(
                    "parameter {i} of kernel {kernel} is {size} bytes; lazyfuse passes \
                     pointers and 64-bit scalars only"
                )));
            }
        }
        let mut builder = self.stream.launch_builder(&function);
        for arg in args {
            match arg {
                KernelArg::Buffer(buf) => {
                    self.check_owner(buf)?;
                    builder.arg(buf.slice_ref());
                }
                KernelArg::U64(v) => {
                    builder.arg(v);
                }
                KernelArg::I64(v) => {
                    builder.arg(v);
                }
            }
        }
        let cfg = LaunchConfig {
            grid_dim: dims.grid,
            block_dim: dims.block,
            shared_mem_bytes: dims.shared_bytes,
        };
        // SAFETY: the arguments match the kernel's parameters one for one, each 8 bytes
        // (checked above against the driver's own description of the kernel), and each
        // pointer pushed points to a live 8-byte value: a device pointer inside a
        // buffer borrowed for this call, or a scalar inside `args`. The buffers belong
        // to this device and stay allocated until work issued after this launch (see
        // the module's "Ordering").
        unsafe { builder.launch(cfg) }.map_err(|e| cuda_err(&format!("launching {kernel}"), e))?;
        Ok(())
    }

    /// The allocator's counters.
    pub fn allocator_stats(&self) -> AllocatorStats {
        lock(&self.pool).stats()
    }

    /// Sets the bound on the bytes the allocator keeps for reuse (default
    /// [`DEFAULT_MAX_CACHED_BYTES`]); `0` turns caching off. Frees what no longer fits.
    pub fn set_max_cached_bytes(&self, bytes: usize) {
        let evicted = lock(&self.pool).set_max_bytes(bytes);
        drop(evicted); // freed outside the lock
    }

    /// Frees every block the allocator keeps (live buffers are untouched).
    pub fn release_cached(&self) {
        let blocks = lock(&self.pool).drain();
        drop(blocks); // freed outside the lock
    }

    fn check_owner(&self, buf: &DeviceBuffer) -> Result<()> {
        if Arc::ptr_eq(&buf.pool, &self.pool) {
            Ok(())
        } else {
            Err(Error::Cuda(format!(
                "a device buffer of another device was used on cuda:{}",
                self.ordinal
            )))
        }
    }
}

/// Bytes in device memory. Dropping it returns its block to its device's allocator.
#[derive(Debug)]
pub struct DeviceBuffer {
    /// `Some` until drop hands the block back.
    slice: Option<CudaSlice<u8>>,
    len: usize,
    class: usize,
    pool: Pool,
}

impl DeviceBuffer {
    /// Its length in bytes (the block behind it may be larger: a size class).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn slice_ref(&self) -> &CudaSlice<u8> {
        self.slice.as_ref().expect("a live buffer has its block")
    }

    fn slice_mut(&mut self) -> &mut CudaSlice<u8> {
        self.slice.as_mut().expect("a live buffer has its block")
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if let Some(slice) = self.slice.take() {
            let refused = lock(&self.pool).put(self.class, slice);
            drop(refused); // over the bound: really freed, outside the lock
        }
    }
}

/// A loaded module (one CUBIN), with its kernels looked up once each.
#[derive(Debug)]
pub struct Module {
    module: Arc<CudaModule>,
    /// The context it was loaded in: made current before the driver is asked about its
    /// kernels (the calling thread may have none current).
    ctx: Arc<CudaContext>,
    /// Kernel name -> the function and the byte size of each of its parameters.
    functions: Mutex<HashMap<String, (CudaFunction, Vec<usize>)>>,
}

impl Module {
    /// The kernel `name` and its parameter sizes, looked up on first use.
    fn function(&self, name: &str) -> Result<(CudaFunction, Vec<usize>)> {
        let mut functions = self.functions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = functions.get(name) {
            return Ok(f.clone());
        }
        self.ctx
            .bind_to_thread()
            .map_err(|e| cuda_err("cuCtxSetCurrent", e))?;
        // cudarc makes a C string of the name with an unwrap: refuse a NUL here.
        if name.contains('\0') {
            return Err(Error::Cuda(format!(
                "kernel name {name:?} holds a NUL byte"
            )));
        }
        let function = self
            .module
            .load_function(name)
            .map_err(|e| cuda_err(&format!("looking up kernel {name}"), e))?;
        let params = param_sizes(&function, name)?;
        functions.insert(name.to_string(), (function.clone(), params.clone()));
        Ok((function, params))
    }

    /// Whether the module has a kernel `name`.
    pub fn has_kernel(&self, name: &str) -> bool {
        self.function(name).is_ok()
    }
}

/// The byte size of each parameter of `function`, from the driver.
fn param_sizes(function: &CudaFunction, name: &str) -> Result<Vec<usize>> {
    let mut sizes = Vec::new();
    // A kernel's parameters take at most 32 KiB (CUDA 12.1+), so at most 32768 of them;
    // the bound only guards against a driver that never says "no more".
    for index in 0..32768 {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: the function handle is live (its module is held by `function`); the
        // driver writes two `usize` through pointers to live locals. The driver is at
        // least CUDA 13.0 (probed), which has `cuFuncGetParamInfo` (added in 12.4).
        let r = unsafe {
            driver_sys::cuFuncGetParamInfo(function.cu_function(), index, &mut offset, &mut size)
        };
        match r {
            driver_sys::CUresult::CUDA_SUCCESS => sizes.push(size),
            // The index past the last parameter.
            driver_sys::CUresult::CUDA_ERROR_INVALID_VALUE => return Ok(sizes),
            e => return Err(cuda_err(&format!("cuFuncGetParamInfo({name})"), e)),
        }
    }
    Err(Error::Cuda(format!(
        "kernel {name} reports too many parameters"
    )))
}

/// Checks that `image` is a whole ELF64 file: the header, and every program header,
/// section header and section's bytes inside `image`. The driver's `cuModuleLoadData`
/// takes no length and follows the image's offsets, so a truncated CUBIN would make it
/// read past the buffer.
fn check_elf(image: &[u8]) -> Result<()> {
    let bad = |why: &str| Err(Error::Cuda(format!("not a loadable CUBIN: {why}")));
    if image.len() < 64 || &image[..4] != b"\x7fELF" {
        return bad("no ELF header");
    }
    if image[4] != 2 || image[5] != 1 {
        return bad("not a 64-bit little-endian ELF file");
    }
    let u16_at = |at: usize| u64::from(u16::from_le_bytes([image[at], image[at + 1]]));
    let u32_at = |at: usize| u32::from_le_bytes(image[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(image[at..at + 8].try_into().expect("8 bytes"));
    let len = image.len() as u64;
    let within = |offset: u64, size: u64| offset.checked_add(size).is_some_and(|end| end <= len);
    let (phoff, shoff) = (u64_at(0x20), u64_at(0x28));
    let (phentsize, phnum, shentsize, shnum) =
        (u16_at(0x36), u16_at(0x38), u16_at(0x3a), u16_at(0x3c));
    if phnum > 0 && (phentsize < 56 || !within(phoff, phentsize * phnum)) {
        return bad("program headers out of range");
    }
    if shnum > 0 && (shentsize < 64 || !within(shoff, shentsize * shnum)) {
        return bad("section headers out of range");
    }
    for i in 0..phnum {
        let ph = (phoff + i * phentsize) as usize;
        if !within(u64_at(ph + 0x08), u64_at(ph + 0x20)) {
            return bad("a segment lies outside the file");
        }
    }
    for i in 0..shnum {
        let sh = (shoff + i * shentsize) as usize;
        const SHT_NOBITS: u32 = 8;
        if u32_at(sh + 0x04) != SHT_NOBITS && !within(u64_at(sh + 0x18), u64_at(sh + 0x20)) {
            return bad("a section lies outside the file");
        }
    }
    Ok(())
}

/// The grid, block and dynamic shared memory of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchDims {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
}

impl LaunchDims {
    /// A one-dimensional launch of `grid` blocks of `block` threads, no dynamic shared
    /// memory.
    ///
    /// ```
    /// let d = lazyfuse_runtime::cuda::LaunchDims::linear(4, 256);
    /// assert_eq!((d.grid, d.block, d.shared_bytes), ((4, 1, 1), (256, 1, 1), 0));
    /// ```
    pub fn linear(grid: u32, block: u32) -> Self {
        LaunchDims {
            grid: (grid, 1, 1),
            block: (block, 1, 1),
            shared_bytes: 0,
        }
    }
}

/// One kernel argument: a device buffer (passed as its device pointer) or a 64-bit
/// scalar. Generated kernels take only these, so every parameter is 8 bytes.
#[derive(Clone, Copy, Debug)]
pub enum KernelArg<'a> {
    /// A buffer, as `T*` in the kernel.
    Buffer(&'a DeviceBuffer),
    /// An `unsigned long long`.
    U64(u64),
    /// A `long long`.
    I64(i64),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal valid ELF64 header with no program or section headers.
    fn elf_header() -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h
    }

    #[test]
    fn elf_checks() {
        assert!(check_elf(&elf_header()).is_ok());
        assert!(check_elf(b"\x7fELF").is_err(), "truncated header");
        assert!(check_elf(&[0u8; 64]).is_err(), "no magic");
        // One section header claiming bytes past the end.
        let mut img = elf_header();
        img[0x28..0x30].copy_from_slice(&64u64.to_le_bytes());
        img[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        img[0x3c..0x3e].copy_from_slice(&1u16.to_le_bytes());
        img.extend_from_slice(&[0u8; 64]);
        assert!(check_elf(&img).is_ok(), "an empty section at offset 0 fits");
        img[64 + 0x18..64 + 0x20].copy_from_slice(&100u64.to_le_bytes());
        img[64 + 0x20..64 + 0x28].copy_from_slice(&100u64.to_le_bytes());
        assert!(check_elf(&img).is_err(), "section past the end");
        img[64 + 0x04..64 + 0x08].copy_from_slice(&8u32.to_le_bytes());
        assert!(
            check_elf(&img).is_ok(),
            "NOBITS sections take no file bytes"
        );
        // Section headers themselves past the end.
        img[0x3c..0x3e].copy_from_slice(&2u16.to_le_bytes());
        assert!(check_elf(&img).is_err());
        // Offsets that overflow.
        img[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(check_elf(&img).is_err());
    }

    #[test]
    fn no_driver_is_an_error_not_a_panic() {
        // On a machine without a driver this is the "not found" error; with one, a
        // device count. Either way, no panic.
        match device_count() {
            Ok(_) => {}
            Err(e) => assert!(e.to_string().contains("CUDA"), "{e}"),
        }
    }
}
