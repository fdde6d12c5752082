//! The CUDA backend as far as it runs today (`CpuBackend::Cuda`: tensors on the CPU,
//! every fused kernel compiled by NVRTC and run on `cuda:0`, its buffers copied there
//! and back). Where no GPU is usable, a realize must fail with the reason (no
//! driver, no device, no NVRTC), never fall back silently; the value checks then
//! print why they are skipped, unless `LAZYFUSE_REQUIRE_GPU=1` (a GPU run) makes
//! that a failure. On a GPU, graphs covering each kernel layout (one thread per point,
//! groups of four, a block per point), float16, and both status errors are compared
//! with the interpreter.

use lazyfuse::{CpuBackend, DType, Tensor};
use std::sync::Mutex;

static BACKEND: Mutex<()> = Mutex::new(());

/// Whether `cuda:0` and NVRTC are usable here; otherwise why not.
fn gpu() -> Result<(), String> {
    match lazyfuse_runtime::cuda::device::device_count() {
        Ok(0) => Err("no CUDA device".into()),
        Ok(_) => lazyfuse_runtime::cuda::nvrtc::global()
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

fn ramp(shape: &[usize], dt: DType) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n)
        .map(|i| ((i * 37 % 101) as f64 - 50.0) / 9.0)
        .collect();
    Tensor::from_vec(v, shape).unwrap().to_dtype(dt).unwrap()
}

/// The graphs compared, as f64 values (or the error's text).
fn outputs() -> Vec<Result<Vec<f64>, String>> {
    let a = ramp(&[37, 256], DType::F32);
    let b = ramp(&[1, 256], DType::F32);
    let h = ramp(&[8, 100], DType::F16);
    let ints = Tensor::from_vec(vec![7i64, -7, 3, 0], &[4]).unwrap();
    let graphs: Vec<Box<dyn Fn() -> lazyfuse::Result<Tensor>>> = vec![
        Box::new(|| a.mul(&b)?.add(1.0)?.tanh()),
        Box::new(|| a.softmax(-1)),
        Box::new(|| a.sum(&[0], false)),
        Box::new(|| a.var(&[-1], 1, false)),
        Box::new(|| a.argmax(Some(-1), false)),
        Box::new(|| a.cumsum(-1)),
        Box::new(|| h.exp()?.sum(&[-1], false)),
        Box::new(|| h.mul(&h)?.sub(0.5)),
        Box::new(|| ints.div_mode(&ints.flip(&[0])?, lazyfuse::RoundingMode::Floor)),
        Box::new(|| {
            a.gather(
                -1,
                &Tensor::from_vec(vec![300i64], &[1, 1])?.expand(&[37, 1])?,
            )
        }),
    ];
    graphs
        .iter()
        .map(|g| {
            g().and_then(|t| t.to_dtype(DType::F64)?.to_vec::<f64>())
                .map_err(|e| e.to_string())
        })
        .collect()
}

#[test]
fn cuda_backend_agrees_with_the_interpreter_or_says_why_not() {
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    let why_not = gpu();
    lazyfuse::set_cpu_backend(CpuBackend::Interp);
    let want = outputs();
    lazyfuse::set_cpu_backend(CpuBackend::Cuda);
    let got = outputs();
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    if let Err(reason) = why_not {
        assert!(
            std::env::var_os("LAZYFUSE_REQUIRE_GPU").is_none_or(|v| v != "1"),
            "LAZYFUSE_REQUIRE_GPU=1 but {reason}"
        );
        // Every graph with a kernel fails, saying why.
        for g in &got {
            let e = g
                .as_ref()
                .expect_err("no GPU, yet a CUDA realize succeeded");
            assert!(
                e.contains("CUDA driver not found")
                    || e.contains("no CUDA device")
                    || e.contains("NVRTC"),
                "{e}"
            );
        }
        eprintln!("skipped the GPU comparison: {reason}");
        return;
    }
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        match (w, g) {
            (Ok(w), Ok(g)) => {
                assert_eq!(w.len(), g.len(), "graph {i}");
                for (x, y) in w.iter().zip(g) {
                    let tol = 2e-3 * x.abs().max(1.0);
                    assert!(
                        (x - y).abs() <= tol || (x.is_nan() && y.is_nan()),
                        "graph {i}: {x} vs {y}"
                    );
                }
            }
            (Err(w), Err(g)) => assert_eq!(w, g, "graph {i}"),
            _ => panic!("graph {i}: interpreter {w:?}, CUDA {g:?}"),
        }
    }
}
