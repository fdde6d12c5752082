//! The CUDA C that the GPU backend generates, compiled for the host and run on the
//! CPU: a check of the CUDA code generator's semantics where no GPU exists.
//!
//! [`HostCudaModule::compile`] writes one translation unit (a host shim defining the
//! CUDA keywords and intrinsics the source uses, software float16 conversions in
//! place of `cuda_fp16.h`, then this module's [`PRELUDE`] and kernels, and one
//! wrapper per kernel with the CPU backend's [`KernelFn`] signature), compiles it
//! with the system C++ compiler (`CXX`, else `c++`) into a shared library and loads
//! it. The executor then runs those kernels exactly where it runs Cranelift's, so the
//! conformance corpus and the differential tests check the generated CUDA C against
//! the interpreter (`CpuBackend::CudaHost` in the facade). Like [`crate::cpu`]'s
//! Cranelift module, it generates code and loads it; running it is the runtime's. What differs from a GPU:
//! one thread runs a contiguous range of points (the shim's grid macros), the
//! transcendentals are the host's libm instead of CUDA's libdevice, and float16
//! conversions are software. Compiling is slow (a C++ compiler run per batch of
//! kernels): this is for tests, not for speed.

use super::{kernel_source_as, repr::storage, PRELUDE};
use lazyfuse_ir::kernel::{KernelCode, KernelFn, KernelSignature, LoopKernel, MathMode};
use std::ffi::{c_void, CString};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

const SHIM: &str = include_str!("host/shim.h");
const FP16: &str = include_str!("host/cuda_fp16.h");
const BF16: &str = include_str!("host/cuda_bf16.h");

/// Kernels compiled from their CUDA C for the host, loaded as a shared library.
pub struct HostCudaModule {
    handle: *mut c_void,
    entries: Vec<KernelFn>,
    /// what each entry was compiled for (the [`KernelCode`] contract)
    signatures: Vec<KernelSignature>,
}

// SAFETY: the loaded library's code is immutable until `Drop` (which takes `&mut
// self`, so no call through `&self` is in flight); each entry touches only the buffers
// passed to it and a thread-local point range, so calls from several threads at once
// are sound.
unsafe impl Send for HostCudaModule {}
// SAFETY: see `Send`: `&HostCudaModule` only hands out copies of entry points.
unsafe impl Sync for HostCudaModule {}

static UNIT: AtomicU64 = AtomicU64::new(0);

/// The compiler flags of every unit; the precompiled header is built with the same
/// ones, as the compiler requires. `-O0`: these kernels run on test-sized data, and
/// the compile time dominates.
const FLAGS: [&str; 5] = ["-O0", "-std=c++17", "-fPIC", "-w", "-ffp-contract=off"];

fn compiler() -> String {
    std::env::var("CXX").unwrap_or_else(|_| "c++".into())
}

/// The work directory of this prelude and compiler: the header stand-ins and the
/// precompiled header `pch.h` (shim + prelude), built once and shared by every process
/// (the name is a hash of what goes into it; files appear by rename, so a process
/// never reads another's half-written file). Each unit then parses only its kernels.
/// A stale or foreign `.gch` is safe: the compiler ignores an unusable one and reads
/// `pch.h` itself.
fn prepared() -> Result<PathBuf, String> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        use std::hash::{Hash, Hasher};
        let cxx = compiler();
        let pch = format!("{SHIM}\n{PRELUDE}");
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&cxx, FLAGS, &pch, FP16, BF16).hash(&mut h);
        let dir = std::env::temp_dir().join(format!("lazyfuse-cuda-host-{:016x}", h.finish()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let tmp = |name: &str| dir.join(format!("{name}.{}.tmp", std::process::id()));
        for (name, text) in [
            ("cuda_fp16.h", FP16),
            ("cuda_bf16.h", BF16),
            ("pch.h", &pch),
        ] {
            if !dir.join(name).exists() {
                std::fs::write(tmp(name), text)
                    .and_then(|()| std::fs::rename(tmp(name), dir.join(name)))
                    .map_err(|e| format!("{name}: {e}"))?;
            }
        }
        if !dir.join("pch.h.gch").exists() {
            let out = Command::new(&cxx)
                .args(FLAGS)
                .args(["-x", "c++-header", "-I"])
                .arg(&dir)
                .arg(dir.join("pch.h"))
                .arg("-o")
                .arg(tmp("pch.h.gch"))
                .output()
                .map_err(|e| format!("running the C++ compiler `{cxx}`: {e}"))?;
            if !out.status.success() {
                let _ = std::fs::remove_file(tmp("pch.h.gch"));
                return Err(format!(
                    "`{cxx}` failed on the CUDA prelude:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            std::fs::rename(tmp("pch.h.gch"), dir.join("pch.h.gch"))
                .map_err(|e| format!("pch.h.gch: {e}"))?;
        }
        Ok(dir)
    })
    .clone()
}

fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string owned by libc, valid
    // until the next dl* call on this thread; it is copied at once.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown error".into()
        } else {
            std::ffi::CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

impl HostCudaModule {
    /// Generates the CUDA C of `kernels` (with `math`), compiles it for the host and
    /// loads it. An `Err` says what failed: a kernel the CUDA generator refuses, a
    /// missing compiler, or the compiler's messages with the source.
    pub fn compile(kernels: &[&LoopKernel], math: MathMode) -> Result<Self, String> {
        let mut tu = String::with_capacity(4096 * kernels.len());
        let mut wrappers = String::new();
        for (j, k) in kernels.iter().enumerate() {
            let src = kernel_source_as(k, math, &format!("lf_kernel_{j}"))
                .map_err(|e| format!("kernel {}: {e}", k.name))?;
            tu.push('\n');
            tu.push_str(&src.function);
            // Each param as the pointer type the kernel declares.
            let args = k
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let cv = if p.writes { "" } else { "const " };
                    let c = storage(p.dtype).map_err(|e| e.to_string())?;
                    Ok(format!("({cv}{c}*)params[{i}]"))
                })
                .collect::<Result<Vec<String>, String>>()?;
            // The executor gives point ranges; a vectorized kernel steps over groups of
            // `g` points. Group `q` runs in the range holding its first point `g·q`:
            // groups `ceil(begin/g)..ceil(end/g)`, which partition the groups exactly.
            let _ = writeln!(
                wrappers,
                "extern \"C\" void lf_host_entry_{j}(void* const* params, u64* status, u64 begin, u64 end) {{\n    \
                 lf_host_begin = (i64)((begin + {g} - 1) / {g});\n    lf_host_end = (i64)((end + {g} - 1) / {g});\n    (void)params;\n    \
                 {}({}{}status);\n}}",
                src.symbol,
                args.join(", "),
                if args.is_empty() { "" } else { ", " },
                g = src.group,
            );
        }
        tu.push_str(&wrappers);

        let base = prepared()?;
        let n = UNIT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("unit-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let source = format!("#include \"pch.h\"\n{tu}");
        std::fs::write(dir.join("kernels.cpp"), &source)
            .map_err(|e| format!("kernels.cpp: {e}"))?;
        let lib = dir.join("kernels.so");
        let cxx = compiler();
        let out = Command::new(&cxx)
            .args(FLAGS)
            .arg("-shared")
            .arg("-I")
            .arg(&base)
            .arg(dir.join("kernels.cpp"))
            .arg("-o")
            .arg(&lib)
            .output()
            .map_err(|e| format!("running the C++ compiler `{cxx}`: {e}"))?;
        if !out.status.success() {
            let _ = std::fs::remove_dir_all(&dir);
            let numbered: String = source
                .lines()
                .enumerate()
                .map(|(i, l)| format!("{:5} {l}\n", i + 1))
                .collect();
            return Err(format!(
                "`{cxx}` failed on the generated CUDA C:\n{}\n{numbered}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let path = CString::new(lib.to_string_lossy().as_bytes())
            .map_err(|_| "a temp path holds a NUL byte".to_string())?;
        // SAFETY: `path` is a NUL-terminated path of the library just built; loading
        // it runs no constructors of ours beyond the C++ runtime's static init.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        // The loaded image stays mapped after its files are gone. (The directory with
        // the precompiled header stays for other units and processes.)
        let _ = std::fs::remove_dir_all(&dir);
        if handle.is_null() {
            return Err(format!("loading the host CUDA kernels: {}", dl_error()));
        }
        let mut module = HostCudaModule {
            handle,
            entries: Vec::new(),
            signatures: kernels.iter().map(|k| KernelSignature::of(k)).collect(),
        };
        for j in 0..kernels.len() {
            let name = CString::new(format!("lf_host_entry_{j}")).expect("no NUL");
            // SAFETY: `handle` is a live library handle and `name` a C string.
            let f = unsafe { libc::dlsym(module.handle, name.as_ptr()) };
            if f.is_null() {
                return Err(format!("lf_host_entry_{j}: {}", dl_error()));
            }
            // SAFETY: `lf_host_entry_{j}` is defined above with exactly the C
            // signature of `KernelFn` (params, status, begin, end).
            module
                .entries
                .push(unsafe { std::mem::transmute::<*mut c_void, KernelFn>(f) });
        }
        Ok(module)
    }

    /// The entry point of kernel `i` (as given to [`HostCudaModule::compile`]): the
    /// CPU backend's signature, running the points `begin..end` on the calling thread.
    pub fn entry(&self, i: usize) -> KernelFn {
        self.entries[i]
    }
}

// SAFETY: `kernel_source_as` verifies every kernel before generating its CUDA C, the
// generated code keeps the verified kernel's accesses (data-dependent ones checked in
// the code), each wrapper runs the points `begin..end` of its kernel only, and
// `signatures[j]` is taken from kernel `j`; the library stays loaded until `Drop`.
unsafe impl KernelCode for HostCudaModule {
    fn kernels(&self) -> usize {
        self.entries.len()
    }

    fn kernel(&self, j: usize) -> Option<(KernelFn, &KernelSignature)> {
        Some((*self.entries.get(j)?, self.signatures.get(j)?))
    }
}

impl Drop for HostCudaModule {
    fn drop(&mut self) {
        // SAFETY: `&mut self` means no entry of this module is running (the executor
        // holds the module while it calls them), and the handle came from dlopen.
        unsafe {
            libc::dlclose(self.handle);
        }
    }
}
