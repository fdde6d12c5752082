//! NVRTC compiles without a GPU: CUBINs for sm_90 from hand-written kernels, compile
//! errors with NVRTC's log, and the disk cache (hits, corrupted files).
//!
//! Where NVRTC is missing these tests print why and pass, unless
//! `LAZYFUSE_REQUIRE_NVRTC=1` (CI sets it, after `scripts/install-nvrtc.sh`): then a
//! missing NVRTC fails them, so CI proves the compiles really happen.

use lazyfuse_runtime::cuda::{NvrtcCompiler, Origin};
use std::path::PathBuf;
use std::process::Command;

/// A compiler with its disk cache in `cache_dir` (never the user's), or `None` with the
/// reason printed when NVRTC is missing and not required.
fn compiler(cache_dir: Option<PathBuf>) -> Option<NvrtcCompiler> {
    match NvrtcCompiler::new() {
        Ok(c) => Some(c.with_cache_dir(cache_dir)),
        Err(e) => {
            if std::env::var("LAZYFUSE_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
                panic!("LAZYFUSE_REQUIRE_NVRTC=1 but NVRTC is unusable: {e}");
            }
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// A fresh temporary directory, removed on drop (each test its own: tests run in
/// parallel threads).
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir =
            std::env::temp_dir().join(format!("lazyfuse-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// f16 and bf16 through the CUDA headers, a warp-shuffle reduction, 64-bit indexing:
/// what generated kernels need from NVRTC and the headers.
const HALF_SHUFFLE: &str = r#"
#include <cuda_fp16.h>
#include <cuda_bf16.h>

float warp_sum(float v) {  // -default-device: no __device__ needed
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}

extern "C" __global__ void k1_half_sum(const __half* a, const __nv_bfloat16* b, float* out,
                                       unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    float v = 0.0f;
    if (i < n) {
        v = __half2float(a[i]) + __bfloat162float(b[i]);
    }
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(out, v);
    }
}
"#;

#[test]
fn half_and_shuffle_kernel_compiles_to_an_sm90_cubin() {
    let Some(nvrtc) = compiler(None) else { return };
    let compiled = nvrtc.compile(HALF_SHUFFLE, "sm_90").unwrap();
    assert_eq!(compiled.origin, Origin::Compiled);
    assert_eq!(&compiled.cubin[..4], b"\x7fELF", "a CUBIN is an ELF image");
    assert_eq!(nvrtc.nvrtc_compiles(), 1);
    // The second request is the memory cache: the same bytes, no compile.
    let again = nvrtc.compile(HALF_SHUFFLE, "sm_90").unwrap();
    assert_eq!(again.origin, Origin::MemoryCache);
    assert!(std::sync::Arc::ptr_eq(&again.cubin, &compiled.cubin));
    assert_eq!(nvrtc.nvrtc_compiles(), 1);
    assert_eq!(nvrtc.version().0, 13);
}

#[test]
fn a_broken_kernel_reports_the_log_and_the_numbered_source() {
    let Some(nvrtc) = compiler(None) else { return };
    let src = "extern \"C\" __global__ void k2_broken(float* x) {\n    x[0] = undefined_name;\n}\n";
    let msg = nvrtc.compile(src, "sm_90").unwrap_err().to_string();
    assert!(msg.contains("k2_broken"), "{msg}");
    assert!(
        msg.contains("identifier \"undefined_name\" is undefined"),
        "the NVRTC log line is missing: {msg}"
    );
    assert!(
        msg.contains("2 |     x[0] = undefined_name;"),
        "numbered source: {msg}"
    );
    assert_eq!(nvrtc.nvrtc_compiles(), 0, "a failed compile is not counted");
}

#[test]
fn invalid_architectures_are_errors() {
    let Some(nvrtc) = compiler(None) else { return };
    let msg = nvrtc
        .compile(HALF_SHUFFLE, "compute_90")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("expected sm_XX"), "{msg}");
}

#[test]
fn the_disk_cache_serves_a_second_compiler() {
    let dir = TempDir::new("nvrtc-disk-cache");
    let Some(first) = compiler(Some(dir.0.clone())) else {
        return;
    };
    let compiled = first.compile(HALF_SHUFFLE, "sm_90").unwrap();
    assert_eq!(compiled.origin, Origin::Compiled);
    let file = first.cache_file(HALF_SHUFFLE, "sm_90").unwrap().unwrap();
    assert!(
        file.starts_with(&dir.0) && file.is_file(),
        "{}",
        file.display()
    );

    // A new compiler, as a new process would have: nothing in memory, a disk hit.
    let second = compiler(Some(dir.0.clone())).unwrap();
    let cached = second.compile(HALF_SHUFFLE, "sm_90").unwrap();
    assert_eq!(cached.origin, Origin::DiskCache);
    assert_eq!(
        cached.cubin, compiled.cubin,
        "the cache returns identical bytes"
    );
    assert_eq!(second.nvrtc_compiles(), 0);

    // Another architecture is another entry.
    let other = second.compile(HALF_SHUFFLE, "sm_80").unwrap();
    assert_eq!(other.origin, Origin::Compiled);
    assert_ne!(
        second.cache_file(HALF_SHUFFLE, "sm_80").unwrap(),
        Some(file)
    );
}

#[test]
fn a_corrupted_cache_file_is_recompiled_and_repaired() {
    let dir = TempDir::new("nvrtc-corrupt-cache");
    let Some(first) = compiler(Some(dir.0.clone())) else {
        return;
    };
    let good = first.compile(HALF_SHUFFLE, "sm_90").unwrap().cubin;
    let file = first.cache_file(HALF_SHUFFLE, "sm_90").unwrap().unwrap();

    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff; // one flipped payload byte: the checksum must catch it
    std::fs::write(&file, &bytes).unwrap();
    let second = compiler(Some(dir.0.clone())).unwrap();
    let again = second.compile(HALF_SHUFFLE, "sm_90").unwrap();
    assert_eq!(
        again.origin,
        Origin::Compiled,
        "a corrupt file is not trusted"
    );
    assert_eq!(&again.cubin[..4], b"\x7fELF");
    assert_eq!(again.cubin.len(), good.len());

    // The recompile rewrote the file: the next compiler reads it.
    let third = compiler(Some(dir.0.clone())).unwrap();
    assert_eq!(
        third.compile(HALF_SHUFFLE, "sm_90").unwrap().origin,
        Origin::DiskCache
    );

    // A truncated file and a file of garbage are misses too.
    for damage in [
        bytes[..bytes.len() / 2].to_vec(),
        b"not a cache file".to_vec(),
    ] {
        std::fs::write(&file, &damage).unwrap();
        let fresh = compiler(Some(dir.0.clone())).unwrap();
        assert_eq!(
            fresh.compile(HALF_SHUFFLE, "sm_90").unwrap().origin,
            Origin::Compiled
        );
    }
}

#[test]
fn a_batch_is_one_translation_unit() {
    let Some(nvrtc) = compiler(None) else { return };
    let a = "extern \"C\" __global__ void k5_a(float* x) { x[0] = 1.0f; }";
    let b = "extern \"C\" __global__ void k6_b(float* x) { x[0] = 2.0f; }";
    let compiled = nvrtc.compile_batch(&[a, b], "sm_90").unwrap();
    assert_eq!(compiled.origin, Origin::Compiled);
    assert_eq!(nvrtc.nvrtc_compiles(), 1);
    // Both kernels' names are in the CUBIN's symbol table.
    let has = |name: &str| {
        compiled
            .cubin
            .windows(name.len())
            .any(|w| w == name.as_bytes())
    };
    assert!(has("k5_a") && has("k6_b"));
}

/// The child half of `a_second_process_compiles_nothing`: compiles through the process's
/// compiler, configured from the environment the parent gives it. A no-op when run
/// directly.
#[test]
fn child_compile() {
    if std::env::var_os("LAZYFUSE_TEST_CHILD").is_none() {
        return;
    }
    let cubin = lazyfuse_runtime::cuda::compile_cubin(HALF_SHUFFLE, "sm_90").unwrap();
    assert_eq!(&cubin[..4], b"\x7fELF");
}

/// The disk cache across processes, as a user sees it: with `LAZYFUSE_CACHE_DIR` and
/// `LAZYFUSE_DEBUG=1`, the first process says it compiled the kernel, the second that
/// it took it from the disk cache, and compiles nothing.
#[test]
fn a_second_process_compiles_nothing() {
    if compiler(None).is_none() {
        return;
    }
    let dir = TempDir::new("nvrtc-second-process");
    let run = || {
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_compile",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("LAZYFUSE_TEST_CHILD", "1")
            .env("LAZYFUSE_CACHE_DIR", &dir.0)
            .env("LAZYFUSE_DEBUG", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "child failed: {stderr}");
        stderr
    };
    let first = run();
    assert!(
        first.contains("nvrtc: compiled k1_half_sum for sm_90 in "),
        "{first}"
    );
    let second = run();
    assert!(
        second.contains("nvrtc: k1_half_sum from disk cache"),
        "{second}"
    );
    assert!(!second.contains("nvrtc: compiled"), "{second}");
}
