//! NVRTC: CUDA C source to a CUBIN for one GPU architecture, cached in memory and on
//! disk.
//!
//! A compile costs tens of milliseconds, far more than most kernels run, so every CUBIN is kept: in memory for the process, and on
//! disk (see [`default_cache_dir`]) so that a second process compiles nothing. The disk
//! key is the source, the NVRTC version, the architecture and the options; a cache file
//! is checked (key, length, checksum) before it is used, and recompiled when it fails.
//!
//! No GPU is needed to compile: NVRTC assembles a CUBIN for any architecture it knows
//! (CUDA 13: sm_75 to sm_121), which is how CI proves every generated kernel compiles.
//!
//! ```
//! use lazyfuse_runtime::cuda::nvrtc::NvrtcCompiler;
//! let src = r#"extern "C" __global__ void k_double(float* x, unsigned long long n) {
//!     unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
//!     if (i < n) x[i] *= 2.0f;
//! }"#;
//! match NvrtcCompiler::new() {
//!     Ok(nvrtc) => {
//!         let nvrtc = nvrtc.with_cache_dir(None); // memory cache only
//!         let cubin = nvrtc.compile_cubin(src, "sm_90")?;
//!         assert_eq!(&cubin[..4], b"\x7fELF");
//!     }
//!     // No NVRTC here: the error says how to install it.
//!     Err(e) => assert!(e.to_string().contains("NVRTC"), "{e}"),
//! }
//! # Ok::<(), lazyfuse_runtime::Error>(())
//! ```

use super::disk_cache::{self, Reject};
use super::{cuda_err, debug};
use crate::{Error, Result};
use cudarc::nvrtc::{result as nvrtc_result, sys as nvrtc_sys};
use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// The NVRTC major version lazyfuse is built for (cudarc's `cuda-13000` feature).
pub const REQUIRED_MAJOR: i32 = 13;

/// The message when no NVRTC library can be loaded.
const NOT_FOUND: &str =
    "NVRTC not found: libnvrtc.so.13 is not on the library path (run scripts/install-nvrtc.sh)";

/// The default include directory, where the CUDA toolkit puts its headers.
const TOOLKIT_INCLUDE: &str = "/usr/local/cuda/include";

/// The version of the NVRTC library on the library path, `(major, minor)`.
///
/// Probes before loading (cudarc panics on a missing library), and checks the version
/// after (a CUDA 13 build of cudarc loads `libnvrtc.so.12` when that is all there is,
/// then panics on the first 13-only symbol). The result is computed once per process.
///
/// # Errors
/// "NVRTC not found: …" when no NVRTC can be loaded, "NVRTC 12.x loaded, lazyfuse needs
/// 13.x" for another major version.
///
/// ```
/// match lazyfuse_runtime::cuda::nvrtc::nvrtc_version() {
///     Ok((major, _minor)) => assert_eq!(major, 13),
///     Err(e) => println!("no CUDA compiles here: {e}"),
/// }
/// ```
pub fn nvrtc_version() -> Result<(i32, i32)> {
    static VERSION: OnceLock<Result<(i32, i32)>> = OnceLock::new();
    VERSION.get_or_init(probe_nvrtc).clone()
}

fn probe_nvrtc() -> Result<(i32, i32)> {
    // SAFETY: `is_culib_present` only tries to dlopen the candidate library names and
    // closes what it opened; it calls no NVRTC symbol.
    if !unsafe { nvrtc_sys::is_culib_present() } {
        return Err(Error::Cuda(NOT_FOUND.to_string()));
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: a library was found just above, so cudarc's loader (the same candidate
    // list, in the same order) does not panic; `nvrtcVersion` exists in every NVRTC
    // release and writes two ints through the pointers, which point to live locals.
    unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| cuda_err("nvrtcVersion", e))?;
    check_version(major, minor)
}

/// Accepts NVRTC `major.minor` when the major version is the one lazyfuse is built for.
fn check_version(major: i32, minor: i32) -> Result<(i32, i32)> {
    if major == REQUIRED_MAJOR {
        Ok((major, minor))
    } else {
        Err(Error::Cuda(format!(
            "NVRTC {major}.x loaded, lazyfuse needs {REQUIRED_MAJOR}.x \
             (run scripts/install-nvrtc.sh and put its lib directory first on LD_LIBRARY_PATH)"
        )))
    }
}

/// The directory of the CUDA headers (`cuda_fp16.h`, `cuda_bf16.h`) that kernels
/// include: `LAZYFUSE_CUDA_INCLUDE`, else `/usr/local/cuda/include`.
///
/// # Errors
/// When `LAZYFUSE_CUDA_INCLUDE` names a directory without `cuda_fp16.h`, or when it is
/// unset and the toolkit's directory has none; the message names both places.
pub fn include_dir() -> Result<PathBuf> {
    include_dir_from(
        std::env::var_os("LAZYFUSE_CUDA_INCLUDE").map(PathBuf::from),
        Path::new(TOOLKIT_INCLUDE),
    )
}

fn include_dir_from(env: Option<PathBuf>, toolkit: &Path) -> Result<PathBuf> {
    // cuda_fp16.h is the header every generated kernel may need; a directory without
    // it would fail later with NVRTC's "could not open source file", far from the cause.
    match env {
        Some(dir) if dir.join("cuda_fp16.h").is_file() => Ok(dir),
        Some(dir) => Err(Error::Cuda(format!(
            "CUDA headers not found: LAZYFUSE_CUDA_INCLUDE={} has no cuda_fp16.h \
             (run scripts/install-nvrtc.sh and eval its output)",
            dir.display()
        ))),
        None if toolkit.join("cuda_fp16.h").is_file() => Ok(toolkit.to_path_buf()),
        None => Err(Error::Cuda(format!(
            "CUDA headers not found: LAZYFUSE_CUDA_INCLUDE is not set and {} has no \
             cuda_fp16.h (run scripts/install-nvrtc.sh and eval its output)",
            toolkit.display()
        ))),
    }
}

/// The default directory of the disk cache: `LAZYFUSE_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/lazyfuse`, else `$HOME/.cache/lazyfuse`; `None` when none of these
/// is set (then only the memory cache is used). CUBINs go in its `cubin/` directory.
pub fn default_cache_dir() -> Option<PathBuf> {
    let var = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("LAZYFUSE_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("lazyfuse")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("lazyfuse")))
}

/// Where a CUBIN came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// NVRTC compiled it now.
    Compiled,
    /// This compiler had compiled or loaded it before.
    MemoryCache,
    /// A cache file written by an earlier compile (perhaps of another process).
    DiskCache,
}

/// A CUBIN and where it came from.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The CUBIN: an ELF image for the requested architecture, for
    /// [`CudaDevice::load`](super::CudaDevice::load).
    pub cubin: Arc<Vec<u8>>,
    /// Whether it was compiled now or found in a cache.
    pub origin: Origin,
}

/// The memory cache's key: (architecture, source); the options and the NVRTC version
/// are fixed per compiler.
type MemoryKey = (String, String);

/// An NVRTC front end with a memory cache and (optionally) a disk cache.
///
/// Cheap to share: `compile` takes `&self` and may be called from many threads.
/// [`compile_cubin`] uses one per process, configured from the environment.
#[derive(Debug)]
pub struct NvrtcCompiler {
    version: (i32, i32),
    include_dir: PathBuf,
    cache_dir: Option<PathBuf>,
    memory: Mutex<HashMap<MemoryKey, Arc<Vec<u8>>>>,
    compiles: AtomicUsize,
}

impl NvrtcCompiler {
    /// A compiler configured from the environment: the NVRTC probe
    /// ([`nvrtc_version`]), the headers ([`include_dir`]) and the disk cache
    /// ([`default_cache_dir`]).
    ///
    /// # Errors
    /// When NVRTC or the headers are missing (see [`nvrtc_version`], [`include_dir`]).
    pub fn new() -> Result<Self> {
        let version = nvrtc_version()?;
        let include_dir = include_dir()?;
        Ok(NvrtcCompiler {
            version,
            include_dir,
            cache_dir: default_cache_dir(),
            memory: Mutex::new(HashMap::new()),
            compiles: AtomicUsize::new(0),
        })
    }

    /// The same compiler with its disk cache in `dir` (CUBINs under `dir/cubin/`), or
    /// without a disk cache for `None`. Tests pass a temporary directory here instead
    /// of setting `LAZYFUSE_CACHE_DIR`, which would race with other threads.
    pub fn with_cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.cache_dir = dir;
        self
    }

    /// The same compiler with the CUDA headers taken from `dir`.
    pub fn with_include_dir(mut self, dir: PathBuf) -> Self {
        self.include_dir = dir;
        self
    }

    /// The NVRTC version, `(major, minor)`.
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// The disk cache directory, if any.
    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache_dir.as_deref()
    }

    /// How many times this compiler ran NVRTC (cache hits do not count).
    pub fn nvrtc_compiles(&self) -> usize {
        self.compiles.load(Ordering::Relaxed)
    }

    /// The NVRTC options for `arch`. Why each:
    /// - `--gpu-architecture=sm_XX`: a real architecture, so NVRTC emits a CUBIN (a
    ///   `compute_XX` one gives PTX only, and a CUBIN of size 0);
    /// - `--include-path`: the headers are not where NVRTC looks by default;
    /// - `--std=c++17`: `if constexpr` and friends for the generated code;
    /// - `-default-device`: helper functions need no `__device__` annotation;
    /// - `--fmad=false`: `a * b + c` rounds twice, as on the CPU (the kernel IR's
    ///   numerics are the interpreter's; a contracted FMA would differ in the last bit).
    ///
    /// No fast-math flags: kernels must give PyTorch's numerics; the code generator
    /// chooses intrinsics explicitly where it wants them.
    fn options(&self, arch: &str) -> Result<Vec<String>> {
        let include = self.include_dir.to_str().ok_or_else(|| {
            Error::Cuda(format!(
                "the CUDA include directory {} is not valid UTF-8",
                self.include_dir.display()
            ))
        })?;
        let options = vec![
            format!("--gpu-architecture={arch}"),
            format!("--include-path={include}"),
            "--std=c++17".to_string(),
            "-default-device".to_string(),
            "--fmad=false".to_string(),
        ];
        // cudarc turns options into C strings with an unwrap: refuse a NUL here.
        if options.iter().any(|o| o.contains('\0')) {
            return Err(Error::Cuda(format!(
                "an NVRTC option holds a NUL byte: {options:?}"
            )));
        }
        Ok(options)
    }

    /// The disk cache key: everything that decides the CUBIN's bytes.
    fn key(&self, source: &str, arch: &str, options: &[String]) -> Vec<u8> {
        let (major, minor) = self.version;
        format!(
            "lazyfuse cubin\nnvrtc {major}.{minor}\narch {arch}\noptions {}\n\n{source}",
            options.join(" ")
        )
        .into_bytes()
    }

    /// The disk cache file of `source` for `arch` (whether or not it exists), `None`
    /// without a disk cache. Its name is the hash of the key (source, NVRTC version,
    /// architecture, options).
    ///
    /// # Errors
    /// For an invalid `arch` (see [`compile`](Self::compile)).
    pub fn cache_file(&self, source: &str, arch: &str) -> Result<Option<PathBuf>> {
        check_arch(arch)?;
        let options = self.options(arch)?;
        Ok(self.cache_path(&self.key(source, arch, &options)))
    }

    fn cache_path(&self, key: &[u8]) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?;
        Some(
            dir.join("cubin")
                .join(format!("{:016x}.cubin", disk_cache::fnv1a64(key))),
        )
    }

    /// Compiles `source` (one CUDA C translation unit, `extern "C"` kernels) to a CUBIN
    /// for `arch` (`"sm_90"`), or finds it in the memory or disk cache.
    ///
    /// With `LAZYFUSE_DEBUG=1`, prints one line per NVRTC compile ("nvrtc: compiled
    /// k3_add for sm_90 in 52 ms") or disk-cache hit ("nvrtc: k3_add from disk cache").
    ///
    /// # Errors
    /// An `arch` that is not `sm_` and digits (with an optional `a`/`f` suffix), a
    /// source with a NUL byte, or a compile failure: the message then holds NVRTC's log
    /// and the source with line numbers. Failures to write the disk cache are not
    /// errors (the CUBIN is good; the next process compiles again).
    pub fn compile(&self, source: &str, arch: &str) -> Result<Compiled> {
        check_arch(arch)?;
        let memory_key = (arch.to_string(), source.to_string());
        if let Some(cubin) = self.memory.lock().expect("nvrtc cache").get(&memory_key) {
            return Ok(Compiled {
                cubin: cubin.clone(),
                origin: Origin::MemoryCache,
            });
        }
        let options = self.options(arch)?;
        let key = self.key(source, arch, &options);
        let path = self.cache_path(&key);
        let names = kernel_names(source);

        if let Some(path) = &path {
            if let Some(cubin) = read_cache_file(path, &key) {
                if debug() {
                    eprintln!("nvrtc: {names} from disk cache");
                }
                let cubin = Arc::new(cubin);
                self.remember(memory_key, &cubin);
                return Ok(Compiled {
                    cubin,
                    origin: Origin::DiskCache,
                });
            }
        }

        let start = Instant::now();
        let cubin = nvrtc_compile(source, &names, arch, &options)?;
        self.compiles.fetch_add(1, Ordering::Relaxed);
        if debug() {
            eprintln!(
                "nvrtc: compiled {names} for {arch} in {} ms",
                start.elapsed().as_millis()
            );
        }
        if let Some(path) = &path {
            if let Err(e) = disk_cache::write_atomic(path, &disk_cache::encode(&key, &cubin)) {
                if debug() {
                    eprintln!(
                        "nvrtc: could not write the cache file {}: {e}",
                        path.display()
                    );
                }
            }
        }
        let cubin = Arc::new(cubin);
        self.remember(memory_key, &cubin);
        Ok(Compiled {
            cubin,
            origin: Origin::Compiled,
        })
    }

    fn remember(&self, key: MemoryKey, cubin: &Arc<Vec<u8>>) {
        self.memory
            .lock()
            .expect("nvrtc cache")
            .insert(key, cubin.clone());
    }

    /// [`compile`](Self::compile), the CUBIN only.
    ///
    /// # Errors
    /// As [`compile`](Self::compile).
    pub fn compile_cubin(&self, source: &str, arch: &str) -> Result<Arc<Vec<u8>>> {
        Ok(self.compile(source, arch)?.cubin)
    }

    /// Compiles several kernels' sources as one translation unit (one NVRTC call, one
    /// CUBIN, one module to load): the kernels of one realize pay NVRTC's fixed cost
    /// (start-up, header parsing) once. The sources are joined in order, so they must
    /// not define the same helper twice (headers with include guards are fine).
    ///
    /// # Errors
    /// As [`compile`](Self::compile).
    pub fn compile_batch(&self, sources: &[&str], arch: &str) -> Result<Compiled> {
        self.compile(&sources.join("\n"), arch)
    }
}

/// Compiles `source` to a CUBIN for `arch` with the process's compiler
/// ([`NvrtcCompiler::new`], created on first use from the environment), which caches in
/// memory and on disk.
///
/// # Errors
/// When NVRTC or the headers are missing, or as [`NvrtcCompiler::compile`].
pub fn compile_cubin(source: &str, arch: &str) -> Result<Arc<Vec<u8>>> {
    global()?.compile_cubin(source, arch)
}

/// The process's compiler, created on first use from the environment.
///
/// # Errors
/// As [`NvrtcCompiler::new`] (the same error every time: the environment is read once).
pub fn global() -> Result<&'static NvrtcCompiler> {
    static GLOBAL: OnceLock<Result<NvrtcCompiler>> = OnceLock::new();
    GLOBAL
        .get_or_init(NvrtcCompiler::new)
        .as_ref()
        .map_err(Clone::clone)
}

/// Accepts `sm_` followed by digits and an optional `a` or `f` suffix (`sm_90`,
/// `sm_90a`, `sm_100f`). `compute_XX` is refused: NVRTC gives no CUBIN for it.
fn check_arch(arch: &str) -> Result<()> {
    let ok = arch.strip_prefix("sm_").is_some_and(|rest| {
        let digits = rest.trim_end_matches(['a', 'f']);
        !digits.is_empty()
            && rest.len() - digits.len() <= 1
            && digits.bytes().all(|b| b.is_ascii_digit())
    });
    if ok {
        Ok(())
    } else {
        Err(Error::Cuda(format!(
            "invalid GPU architecture {arch:?}: expected sm_XX, such as sm_90"
        )))
    }
}

/// The names of the `__global__` functions in `source`, for messages: "k3_add" or
/// "k1_mul, k2_sum"; "kernel" when none is found.
fn kernel_names(source: &str) -> String {
    let mut names = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("__global__") {
        rest = &rest[at + "__global__".len()..];
        // The name is the identifier right before the first '(' after the keyword,
        // skipping `__launch_bounds__(…)`.
        let mut search = rest;
        while let Some(paren) = search.find('(') {
            let head = search[..paren].trim_end();
            let start = head
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            let ident = &head[start..];
            if ident == "__launch_bounds__" {
                let after = &search[paren..];
                search = after.find(')').map_or("", |close| &after[close + 1..]);
                continue;
            }
            if !ident.is_empty() {
                names.push(ident);
            }
            break;
        }
    }
    if names.is_empty() {
        "kernel".to_string()
    } else {
        names.join(", ")
    }
}

/// `source` with 1-based line numbers, as NVRTC's log refers to them.
fn numbered(source: &str) -> String {
    let width = source.lines().count().max(1).to_string().len();
    let mut out = String::new();
    for (i, line) in source.lines().enumerate() {
        out.push_str(&format!("{:>width$} | {line}\n", i + 1));
    }
    out
}

/// A cache file's CUBIN, or `None` (missing, unreadable, corrupt, another key, not an
/// ELF image): a miss, recompiled and rewritten by the caller.
fn read_cache_file(path: &Path, key: &[u8]) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    match disk_cache::decode(&bytes, key) {
        Ok(cubin) if cubin.starts_with(b"\x7fELF") => Some(cubin),
        Ok(_) | Err(Reject::Corrupt) => {
            if debug() {
                eprintln!(
                    "nvrtc: cache file {} is corrupt, recompiling",
                    path.display()
                );
            }
            None
        }
        Err(Reject::OtherKey) => None,
    }
}

/// Destroys an NVRTC program when dropped, on every path out of [`nvrtc_compile`].
struct Program(nvrtc_sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by `create_program` and is destroyed only
        // here, once. A failure to destroy leaks it; nothing else can be done in drop.
        let _ = unsafe { nvrtc_result::destroy_program(self.0) };
    }
}

/// One NVRTC run: source to CUBIN bytes.
fn nvrtc_compile(source: &str, names: &str, arch: &str, options: &[String]) -> Result<Vec<u8>> {
    // Probe first: cudarc panics when NVRTC is missing.
    nvrtc_version()?;
    let c_source = CString::new(source)
        .map_err(|_| Error::Cuda(format!("CUDA source of {names} holds a NUL byte")))?;
    let program = Program(
        nvrtc_result::create_program(&c_source, Some(c"lazyfuse.cu"))
            .map_err(|e| cuda_err("nvrtcCreateProgram", e))?,
    );
    // SAFETY: `program.0` was created just above and is destroyed only when `program`
    // drops, after this function's last use of it; `c_source` outlives it too. The
    // options hold no NUL byte (checked by `NvrtcCompiler::options`), so cudarc's
    // conversion to C strings does not panic.
    let compiled = unsafe { nvrtc_result::compile_program(program.0, options) };
    // SAFETY: as above, the program is live.
    let log = unsafe { nvrtc_result::get_program_log(program.0) }
        .map(|chars| c_chars_to_string(&chars))
        .unwrap_or_else(|e| format!("(no log: {e:?})"));
    if let Err(e) = compiled {
        return Err(Error::Cuda(format!(
            "NVRTC failed to compile {names} for {arch} ({e:?}):\n{}\nsource:\n{}",
            log.trim_end(),
            numbered(source)
        )));
    }
    let mut size = 0usize;
    // SAFETY: the program is live and compiled; `size` is a live local written once.
    unsafe { nvrtc_sys::nvrtcGetCUBINSize(program.0, &mut size) }
        .result()
        .map_err(|e| cuda_err("nvrtcGetCUBINSize", e))?;
    if size == 0 {
        return Err(Error::Cuda(format!(
            "NVRTC gave an empty CUBIN for {names} ({arch})"
        )));
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: NVRTC writes exactly the `size` bytes it reported into the buffer, which
    // holds `size` bytes; the program is live.
    unsafe { nvrtc_sys::nvrtcGetCUBIN(program.0, cubin.as_mut_ptr().cast::<c_char>()) }
        .result()
        .map_err(|e| cuda_err("nvrtcGetCUBIN", e))?;
    Ok(cubin)
}

/// NVRTC's NUL-terminated log as a string.
fn c_chars_to_string(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .map(|&c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_check_names_both_versions() {
        assert_eq!(check_version(13, 0).unwrap(), (13, 0));
        let msg = check_version(12, 9).unwrap_err().to_string();
        assert!(
            msg.starts_with("NVRTC 12.x loaded, lazyfuse needs 13.x"),
            "{msg}"
        );
    }

    #[test]
    fn include_dir_errors_name_the_places() {
        let nowhere = Path::new("/nonexistent/lazyfuse-cuda-include");
        let msg = include_dir_from(None, nowhere).unwrap_err().to_string();
        assert!(
            msg.contains("LAZYFUSE_CUDA_INCLUDE") && msg.contains(nowhere.to_str().unwrap()),
            "{msg}"
        );
        let msg = include_dir_from(Some(nowhere.into()), Path::new("/x"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("LAZYFUSE_CUDA_INCLUDE=/nonexistent"), "{msg}");
        // A directory with the header is taken, the variable first.
        let dir =
            std::env::temp_dir().join(format!("lazyfuse-include-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cuda_fp16.h"), "").unwrap();
        assert_eq!(include_dir_from(Some(dir.clone()), nowhere).unwrap(), dir);
        assert_eq!(include_dir_from(None, &dir).unwrap(), dir);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn architectures() {
        for ok in ["sm_75", "sm_90", "sm_90a", "sm_100f", "sm_121"] {
            assert!(check_arch(ok).is_ok(), "{ok}");
        }
        for bad in ["compute_90", "sm_", "sm_9x", "90", "sm_90af", "sm_a", ""] {
            assert!(check_arch(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn kernel_names_for_messages() {
        let src = "__device__ float f(float x) { return x; }\n\
                   extern \"C\" __global__ void k3_add(float* a) {}\n\
                   extern \"C\" __global__ void __launch_bounds__(256) k4_sum (float* a) {}";
        assert_eq!(kernel_names(src), "k3_add, k4_sum");
        assert_eq!(kernel_names("int x;"), "kernel");
    }

    #[test]
    fn numbered_source() {
        assert_eq!(numbered("a\nb"), "1 | a\n2 | b\n");
        let ten = "x\n".repeat(10);
        assert!(numbered(&ten).starts_with(" 1 | x\n"));
        assert!(numbered(&ten).ends_with("10 | x\n"));
    }
}
