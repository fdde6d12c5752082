//! The CUDA device on a real GPU: memory round trips, the caching allocator, loading a
//! CUBIN compiled by NVRTC for the device, launches and their argument checks.
//!
//! Each test skips with a printed reason where there is no driver, no device or no
//! NVRTC, unless `LAZYFUSE_REQUIRE_GPU=1` (for runs on the GPU machines, where a skip
//! would hide a broken set-up).

use lazyfuse_runtime::cuda::{CudaDevice, KernelArg, LaunchDims, NvrtcCompiler};

fn require_gpu() -> bool {
    std::env::var("LAZYFUSE_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// `cuda:0`, or `None` with the reason printed.
fn device() -> Option<CudaDevice> {
    match CudaDevice::new(0) {
        Ok(d) => Some(d),
        Err(e) => {
            assert!(!require_gpu(), "LAZYFUSE_REQUIRE_GPU=1 but: {e}");
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// `cuda:0` and NVRTC (without a disk cache), or `None` with the reason printed.
fn device_and_nvrtc() -> Option<(CudaDevice, NvrtcCompiler)> {
    let dev = device()?;
    match NvrtcCompiler::new() {
        Ok(c) => Some((dev, c.with_cache_dir(None))),
        Err(e) => {
            assert!(!require_gpu(), "LAZYFUSE_REQUIRE_GPU=1 but: {e}");
            eprintln!("skipped: {e}");
            None
        }
    }
}

const AXPY: &str = r#"
#include <cuda_fp16.h>
extern "C" __global__ void k1_axpy(const float* x, float* y, unsigned long long n, long long a) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        y[i] = __half2float(__float2half((float)a)) * x[i] + y[i];
    }
}

extern "C" __global__ void k2_warp_sum(const float* x, float* out) {
    float v = x[threadIdx.x];
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) out[0] = v;
}
"#;

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn device_reports_its_architecture() {
    let Some(dev) = device() else { return };
    let (major, minor) = dev.compute_capability();
    assert_eq!(dev.arch(), format!("sm_{major}{minor}"));
    assert!(major >= 7, "{}", dev.name());
    eprintln!("cuda:0 is {} ({})", dev.name(), dev.arch());
}

#[test]
fn upload_download_round_trip_and_zeroed() {
    let Some(dev) = device() else { return };
    let data: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    let buf = dev.upload(&data).unwrap();
    assert_eq!(buf.len(), data.len());
    assert_eq!(dev.download(&buf).unwrap(), data);
    let zeros = dev.alloc_zeroed(4097).unwrap();
    assert_eq!(dev.download(&zeros).unwrap(), vec![0u8; 4097]);
    let empty = dev.upload(&[]).unwrap();
    assert!(empty.is_empty());
    assert_eq!(dev.download(&empty).unwrap(), Vec::<u8>::new());
    let mut small = vec![0u8; 3];
    dev.read(&buf, &mut small).unwrap();
    assert_eq!(small, &data[..3]);
    assert!(
        dev.read(&zeros, &mut vec![0u8; 5000]).is_err(),
        "longer than the buffer"
    );
}

#[test]
fn the_allocator_reuses_freed_blocks_of_the_same_class() {
    let Some(dev) = device() else { return };
    let before = dev.allocator_stats();
    drop(dev.alloc(1000).unwrap());
    let b = dev.alloc(1001).unwrap(); // same class (1024): a hit
    let after = dev.allocator_stats();
    assert_eq!(after.misses - before.misses, 1);
    assert_eq!(after.hits - before.hits, 1);
    drop(b);
    assert!(dev.allocator_stats().cached_bytes >= 1024);
    dev.release_cached();
    assert_eq!(dev.allocator_stats().cached_bytes, 0);
    dev.set_max_cached_bytes(0);
    drop(dev.alloc(1000).unwrap());
    assert_eq!(
        dev.allocator_stats().cached_blocks,
        0,
        "caching off keeps nothing"
    );
}

#[test]
fn compile_load_and_launch() {
    let Some((dev, nvrtc)) = device_and_nvrtc() else {
        return;
    };
    let cubin = nvrtc.compile_cubin(AXPY, dev.arch()).unwrap();
    let module = dev.load(&cubin).unwrap();
    assert!(module.has_kernel("k1_axpy"));
    assert!(!module.has_kernel("k9_missing"));

    let n = 100_000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let xb = dev.upload(&f32_bytes(&x)).unwrap();
    let yb = dev.upload(&f32_bytes(&y)).unwrap();
    let args = [
        KernelArg::Buffer(&xb),
        KernelArg::Buffer(&yb),
        KernelArg::U64(n as u64),
        KernelArg::I64(3),
    ];
    dev.launch(&module, "k1_axpy", LaunchDims::linear(64, 256), &args)
        .unwrap();
    let got = f32s(&dev.download(&yb).unwrap());
    for i in 0..n {
        assert_eq!(got[i], 3.0 * x[i] + y[i], "element {i}");
    }

    let ones = dev.upload(&f32_bytes(&[1.0; 32])).unwrap();
    let out = dev.alloc_zeroed(4).unwrap();
    dev.launch(
        &module,
        "k2_warp_sum",
        LaunchDims::linear(1, 32),
        &[KernelArg::Buffer(&ones), KernelArg::Buffer(&out)],
    )
    .unwrap();
    assert_eq!(f32s(&dev.download(&out).unwrap()), vec![32.0]);
}

#[test]
fn launches_that_do_not_match_the_kernel_are_errors() {
    let Some((dev, nvrtc)) = device_and_nvrtc() else {
        return;
    };
    let module = dev
        .load(&nvrtc.compile_cubin(AXPY, dev.arch()).unwrap())
        .unwrap();
    let buf = dev.alloc_zeroed(128).unwrap();
    let too_few = [KernelArg::Buffer(&buf)];
    let msg = dev
        .launch(&module, "k2_warp_sum", LaunchDims::linear(1, 32), &too_few)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("takes 2 parameters, the launch passes 1"),
        "{msg}"
    );
    let msg = dev
        .launch(&module, "k9_missing", LaunchDims::linear(1, 32), &[])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("k9_missing"), "{msg}");
    // More threads per block than any GPU allows: the driver refuses, as a value.
    let two = [KernelArg::Buffer(&buf), KernelArg::Buffer(&buf)];
    assert!(dev
        .launch(&module, "k2_warp_sum", LaunchDims::linear(1, 4096), &two)
        .is_err());
    dev.synchronize().unwrap();
}

#[test]
fn a_cubin_for_another_architecture_or_garbage_is_refused() {
    let Some((dev, nvrtc)) = device_and_nvrtc() else {
        return;
    };
    assert!(dev.load(b"garbage").is_err());
    let cubin = nvrtc.compile_cubin(AXPY, dev.arch()).unwrap();
    assert!(dev.load(&cubin[..cubin.len() / 2]).is_err(), "truncated");
    // A CUBIN only runs on its own major architecture: pick one that is not ours.
    let other = if dev.arch().starts_with("sm_7") {
        "sm_90"
    } else {
        "sm_75"
    };
    let foreign = nvrtc.compile_cubin(AXPY, other).unwrap();
    assert!(dev.load(&foreign).is_err());
}

#[test]
fn buffers_of_another_device_are_refused() {
    let Some(a) = device() else { return };
    let b = CudaDevice::new(0).unwrap(); // another handle: another allocator
    let buf = a.upload(&[1, 2, 3]).unwrap();
    assert!(b.download(&buf).is_err());
}

/// cuBLAS's batched GEMM of row-major operands, against the plain triple loop: the
/// column-major trick (module doc of `cuda::blas`), a batch, non-square shapes, an
/// empty contraction (zeros), and a copy made on the device. Without cuBLAS on a GPU
/// machine the probe's reason is printed (float matmul then runs as a generated
/// kernel, which `tests/cuda_tensors.rs` checks).
#[test]
fn cublas_matmul_and_device_copies() {
    let Some(dev) = device() else {
        return;
    };
    let buf = dev.upload(&f32_bytes(&[1.0, 2.0, 3.0])).unwrap();
    let copy = dev.duplicate(&buf).unwrap();
    assert_eq!(f32s(&dev.download(&copy).unwrap()), vec![1.0, 2.0, 3.0]);
    if let Err(why) = lazyfuse_runtime::cuda::blas::cublas_version() {
        eprintln!("no cuBLAS here: {why}");
        return;
    }
    use lazyfuse_runtime::cuda::blas::MatmulDims;
    for (batch, m, k, n) in [(1, 3, 4, 5), (2, 7, 3, 2), (1, 1, 1, 1), (2, 3, 0, 2)] {
        let a: Vec<f32> = (0..batch * m * k).map(|i| (i % 7) as f32 - 3.0).collect();
        let b: Vec<f32> = (0..batch * k * n).map(|i| (i % 5) as f32 * 0.5).collect();
        let mut want = vec![0.0f32; batch * m * n];
        for p in 0..batch {
            for i in 0..m {
                for j in 0..n {
                    want[(p * m + i) * n + j] = (0..k)
                        .map(|q| a[(p * m + i) * k + q] * b[(p * k + q) * n + j])
                        .sum();
                }
            }
        }
        let da = dev.upload(&f32_bytes(&a)).unwrap();
        let db = dev.upload(&f32_bytes(&b)).unwrap();
        // Garbage first: an empty contraction must still write zeros.
        let mut out = dev.upload(&f32_bytes(&vec![9.0; batch * m * n])).unwrap();
        dev.matmul(
            lazyfuse_ir::DType::F32,
            &da,
            &db,
            &mut out,
            MatmulDims { batch, m, k, n },
        )
        .unwrap();
        assert_eq!(
            f32s(&dev.download(&out).unwrap()),
            want,
            "{batch}x{m}x{k}x{n}"
        );
    }
}
