//! Tensors on `cuda:0`: transfers, PyTorch's device rules, and realizes on
//! device-resident buffers, against the same computation on the CPU.
//!
//! Where a GPU exists these run on it. Elsewhere they run on the host emulation of
//! `cuda:0` (`lazyfuse::set_cuda_emulation`: device arrays in host memory, the same
//! generated CUDA C compiled by the system C++ compiler), which checks everything of
//! the device path but the driver calls. Without a GPU and without a C++ compiler they
//! print why and pass, unless `LAZYFUSE_REQUIRE_CXX=1` (CI) or `LAZYFUSE_REQUIRE_GPU=1`
//! (the GPU machine) makes that a failure.

#[path = "support/random_program.rs"]
mod random_program;

#[path = "support/cases.rs"]
mod cases;

use lazyfuse::{DType, Device, Error, Tensor};
use proptest::prelude::*;
#[path = "support/differential.rs"]
mod differential;
use differential::Run;
use lazyfuse::CpuBackend;
use random_program::{source, step, Step};

const GPU: Device = Device::cuda(0);

/// Whether `cuda:0` can be used here: a real GPU, else (turning it on) the emulation
/// where a C++ compiler runs; `false` after printing why neither exists.
fn have_device() -> bool {
    static HAVE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let have = *HAVE.get_or_init(|| {
        let require_gpu = std::env::var_os("LAZYFUSE_REQUIRE_GPU").is_some_and(|v| v != "0");
        lazyfuse::set_cuda_emulation(false);
        match Tensor::scalar(1.0).to_device(GPU) {
            Ok(_) => {
                eprintln!("running on a GPU");
                return true;
            }
            Err(e) => {
                assert!(!require_gpu, "LAZYFUSE_REQUIRE_GPU is set but: {e}");
                eprintln!("no GPU ({e}): the host emulation of cuda:0");
            }
        }
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        let ok = std::process::Command::new(&cxx)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            assert!(
                std::env::var_os("LAZYFUSE_REQUIRE_CXX").is_none_or(|v| v == "0"),
                "LAZYFUSE_REQUIRE_CXX is set but the C++ compiler `{cxx}` does not run"
            );
            eprintln!("skipped: no GPU and no C++ compiler (`{cxx}`) for the emulation");
            return false;
        }
        lazyfuse::set_cuda_emulation(true);
        true
    });
    have
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

#[test]
fn every_dtype_goes_there_and_back() {
    if !have_device() {
        return;
    }
    let base = Tensor::from_vec(vec![-2.5f64, 0.0, 1.0, 3.75, 100.0, -0.5], &[2, 3]).unwrap();
    for dtype in [
        DType::Bool,
        DType::U8,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ] {
        let host = base.to_dtype(dtype).unwrap();
        let there = host.to_device(GPU).unwrap();
        assert_eq!(there.device(), GPU);
        assert_eq!((there.dtype(), there.shape()), (dtype, vec![2, 3]));
        let back = there.to_device(Device::CPU).unwrap();
        assert_eq!(back.device(), Device::CPU);
        // Printing reads the device tensor back too; the text differs by the suffix.
        assert_eq!(format!("{back}"), format!("{host}"), "{dtype}");
        assert!(format!("{there}").contains("device='cuda:0'"), "{there}");
    }
    // A view moves as its logical elements; the same device is the tensor itself.
    let t = base.t().unwrap().to_device(GPU).unwrap();
    assert_eq!(
        t.to_vec::<f64>().unwrap(),
        vec![-2.5, 3.75, 0.0, 100.0, 1.0, -0.5]
    );
    assert!(t.to_device(GPU).unwrap().shares_storage(&t));
    let empty = Tensor::zeros(&[0, 4], DType::F32).to_device(GPU).unwrap();
    assert_eq!(
        format!("{empty}"),
        "tensor([], device='cuda:0', size=(0, 4))"
    );
}

/// One graph of every kind of step, on the device and on the CPU: fused
/// elementwise, broadcasts, reductions (row and whole), softmax, an extern step
/// (matmul), views, cat, where, indexing with a host-found index, creation like
/// another tensor, and an in-place write through a view.
#[test]
fn computations_on_the_device_match_the_cpu() {
    if !have_device() {
        return;
    }
    let run = |device: Device| -> Vec<Vec<f32>> {
        let x = Tensor::from_vec((0..24).map(|i| (i as f32 - 11.0) * 0.25).collect(), &[4, 6])
            .unwrap()
            .to_device(device)
            .unwrap();
        let w = Tensor::from_vec((0..6).map(|i| i as f32 * 0.5).collect(), &[6, 1])
            .unwrap()
            .to_device(device)
            .unwrap();
        let y = x.mul(&x).unwrap().add(1).unwrap().sqrt().unwrap();
        let rows = y.sum(&[1], false).unwrap();
        let total = y.mean(&[], false).unwrap();
        let soft = x.softmax(1).unwrap();
        let mm = x.matmul(&w).unwrap().relu().unwrap();
        let cat = Tensor::cat(&[&x.t().unwrap(), &y.t().unwrap()], 1).unwrap();
        let picked = Tensor::where_cond(&x.gt(0).unwrap(), &x, &y.neg().unwrap()).unwrap();
        let selected = x.masked_select(&x.lt(-1).unwrap()).unwrap();
        let like = x.full_like(2.5, None).unwrap().add(&x).unwrap();
        let z = x.mul(1).unwrap();
        z.narrow(1, 2, 3).unwrap().mul_(-1).unwrap();
        let all = [
            &y, &rows, &total, &soft, &mm, &cat, &picked, &selected, &like, &z,
        ];
        for t in all {
            assert_eq!(t.device(), device, "{t:?}");
        }
        all.iter().map(|t| f32s(t)).collect()
    };
    let cpu = run(Device::CPU);
    let gpu = run(GPU);
    for (i, (c, g)) in cpu.iter().zip(&gpu).enumerate() {
        assert_eq!(c.len(), g.len(), "result {i}");
        for (a, b) in c.iter().zip(g) {
            assert!(
                (a - b).abs() <= 1e-5 * a.abs().max(1.0),
                "result {i}: {c:?} on the CPU, {g:?} on the device"
            );
        }
    }
}

/// PyTorch's rule: tensors of one op share a device, except zero-dim CPU tensors,
/// which join a CUDA op (moved there); `copy_` crosses devices.
#[test]
fn devices_meet_only_as_pytorch_allows() {
    if !have_device() {
        return;
    }
    let cpu = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let gpu = cpu.to_device(GPU).unwrap();
    let mismatch = |e: Error, op: &str| {
        assert_eq!(
            e.to_string(),
            format!(
                "{op}: Expected all tensors to be on the same device, but found at least two \
                 devices, cuda:0 and cpu!"
            )
        );
    };
    mismatch(gpu.add(&cpu).unwrap_err(), "add");
    mismatch(cpu.mul(&gpu).unwrap_err(), "mul");
    mismatch(gpu.matmul(&cpu).unwrap_err(), "matmul");
    mismatch(Tensor::cat(&[&gpu, &cpu], 0).unwrap_err(), "cat");
    mismatch(gpu.add_(&cpu).unwrap_err(), "add_");
    mismatch(
        Tensor::where_cond(&cpu.gt(1).unwrap(), &gpu, 0).unwrap_err(),
        "where",
    );
    // A one-element tensor that is not zero-dim does not move.
    let one = Tensor::from_vec(vec![10.0f32], &[1]).unwrap();
    mismatch(gpu.add(&one).unwrap_err(), "add");
    // Zero-dim CPU tensors join, on either side, computed or not.
    let s = Tensor::scalar(10.0f32);
    let lazy_s = cpu.sum(&[], false).unwrap();
    assert_eq!(f32s(&gpu.add(&s).unwrap()), vec![11.0, 12.0, 13.0]);
    assert_eq!(f32s(&s.sub(&gpu).unwrap()), vec![9.0, 8.0, 7.0]);
    let scaled = gpu.mul(&lazy_s).unwrap();
    assert_eq!(scaled.device(), GPU);
    assert_eq!(f32s(&scaled), vec![6.0, 12.0, 18.0]);
    assert_eq!(lazy_s.device(), Device::CPU);
    assert_eq!(f32s(&lazy_s), vec![6.0]);
    let g2 = gpu.mul(1).unwrap();
    g2.add_(&s).unwrap();
    assert_eq!(f32s(&g2), vec![11.0, 12.0, 13.0]);
    // A zero-dim CPU destination cannot take a CUDA result in place.
    let dest = Tensor::scalar(1.0f32);
    assert_eq!(
        dest.clamp_min_(&gpu.sum(&[], false).unwrap())
            .unwrap_err()
            .to_string(),
        "in-place op: Expected all tensors to be on the same device, but found at least two \
         devices, cpu and cuda:0!"
    );
    // copy_ moves the values either way.
    let c = Tensor::zeros(&[3], DType::F32);
    c.copy_(&gpu.mul(2).unwrap()).unwrap();
    assert_eq!((c.device(), f32s(&c)), (Device::CPU, vec![2.0, 4.0, 6.0]));
    let g = Tensor::zeros(&[3], DType::F64).to_device(GPU).unwrap();
    g.copy_(&cpu).unwrap();
    assert_eq!(g.device(), GPU);
    assert_eq!(g.to_vec::<f64>().unwrap(), vec![1.0, 2.0, 3.0]);
    // Indexing ops take their index on the same device.
    let idx = Tensor::from_vec(vec![2i64, 0], &[2]).unwrap();
    mismatch(gpu.index_select(0, &idx).unwrap_err(), "index_select");
    let gidx = idx.to_device(GPU).unwrap();
    assert_eq!(f32s(&gpu.index_select(0, &gidx).unwrap()), vec![3.0, 1.0]);
    // No such device.
    let e = cpu.to_device(Device::cuda(99)).unwrap_err().to_string();
    assert!(e.contains("invalid device ordinal"), "{e}");
}

/// Kernel statuses read back from the device are the op's errors, with the CPU's
/// messages.
#[test]
fn device_kernel_errors_are_the_ops_errors() {
    if !have_device() {
        return;
    }
    let a = Tensor::from_vec(vec![4i32, 5, 6], &[3]).unwrap();
    let b = Tensor::from_vec(vec![2i32, 0, 3], &[3]).unwrap();
    let on = |t: &Tensor| t.to_device(GPU).unwrap();
    let cpu_err = a.floor_divide(&b).unwrap().realize().unwrap_err();
    let gpu_err = on(&a).floor_divide(&on(&b)).unwrap().realize().unwrap_err();
    assert_eq!(gpu_err.to_string(), cpu_err.to_string());
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let bad = Tensor::from_vec(vec![5i64], &[1]).unwrap();
    let cpu_err = x.gather(0, &bad).unwrap().to_vec::<f32>().unwrap_err();
    let gpu_err = on(&x)
        .gather(0, &on(&bad))
        .unwrap()
        .to_vec::<f32>()
        .unwrap_err();
    assert_eq!(gpu_err.to_string(), cpu_err.to_string());
    assert_eq!(
        gpu_err.to_string(),
        "index 5 is out of bounds for dimension 0 with size 2"
    );
    // The failed realize leaves the device usable.
    assert_eq!(f32s(&on(&x).add(1).unwrap()), vec![2.0, 3.0]);
}

/// Random programs (every op family, all dtypes) built on `cuda:0` print what the
/// same programs print on the CPU in exact math (the reference interpreter's values;
/// the generated CUDA C's agree bit for bit where it shares the host's libm, as the
/// emulation does).
fn compare(sources: &[(usize, usize, u64)], steps: &[Step]) -> Result<(), TestCaseError> {
    if !have_device() {
        return Ok(());
    }
    let device = Run::exact(CpuBackend::Jit).on(GPU);
    differential::compare(sources, steps, Run::reference(), device)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::cases(24)))]

    #[test]
    fn device_programs_agree_with_the_cpu(
        sources in proptest::collection::vec(source(), 1..4),
        steps in proptest::collection::vec(step(), 1..16),
    ) {
        compare(&sources, &steps)?;
    }
}

/// On a device, matmul is a generated kernel (no extern step crossing to the host):
/// integers wrap as on the CPU, floats agree within rounding, for batches, vectors,
/// transposed and computed operands, an empty and a length-1 contracted dim, and an
/// epilogue.
#[test]
fn matmul_is_a_device_kernel() {
    if !have_device() {
        return;
    }
    let vals = |n: usize, seed: i64| -> Vec<f64> {
        (0..n as i64)
            .map(|i| ((i * 7 + seed) % 11 - 5) as f64 * 0.75)
            .collect()
    };
    let cases: [(&[usize], &[usize]); 7] = [
        (&[3, 4], &[4, 5]),
        (&[2, 3, 4], &[2, 4, 2]),
        (&[4], &[4, 3]),
        (&[3, 4], &[4]),
        (&[2, 1], &[1, 3]),
        (&[2, 0], &[0, 3]),
        (&[2, 1, 3, 4], &[5, 4, 2]),
    ];
    for dtype in [
        DType::I32,
        DType::I64,
        DType::U8,
        DType::I16,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ] {
        for (sa, sb) in cases {
            let na: usize = sa.iter().product();
            let nb: usize = sb.iter().product();
            let a = Tensor::from_vec(vals(na, 1), sa)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let b = Tensor::from_vec(vals(nb, 3), sb)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let build = |a: &Tensor, b: &Tensor| -> Tensor {
                // A computed left operand, the product, an epilogue.
                let a = a.add(a).unwrap();
                a.matmul(b).unwrap().mul(3).unwrap()
            };
            let want = build(&a, &b).to_dtype(DType::F64).unwrap();
            let got = build(&a.to_device(GPU).unwrap(), &b.to_device(GPU).unwrap());
            let text = got.schedule_text().unwrap();
            // A kernel, or (fast math on a GPU with cuBLAS) the library on the device.
            let by_blas = text.contains("float matmul through the device's BLAS");
            assert!(
                !text.contains("extern") || (by_blas && dtype.is_floating_point()),
                "{dtype} {sa:?}@{sb:?}:\n{text}"
            );
            assert_eq!(got.device(), GPU);
            let got = got.to_dtype(DType::F64).unwrap();
            let (w, g) = (want.to_vec::<f64>().unwrap(), got.to_vec::<f64>().unwrap());
            let tol = match dtype {
                DType::F16 | DType::BF16 => 1e-2,
                DType::F32 => 1e-5,
                _ => 0.0,
            };
            assert_eq!(w.len(), g.len());
            for (x, y) in w.iter().zip(&g) {
                assert!(
                    (x - y).abs() <= tol * x.abs().max(1.0),
                    "{dtype} {sa:?}@{sb:?}: {w:?} on the CPU, {g:?} on the device"
                );
            }
        }
    }
    // A transposed operand is read through its strides.
    let x = Tensor::from_vec(vals(12, 2), &[4, 3]).unwrap();
    let want = x.t().unwrap().matmul(&x).unwrap();
    let gx = x.to_device(GPU).unwrap();
    let got = gx.t().unwrap().matmul(&gx).unwrap();
    assert_eq!(got.to_vec::<f64>().unwrap(), want.to_vec::<f64>().unwrap());
}

/// A reduction with few outputs over a long extent runs in two kernels on a device
/// (partials, then their reduction): integer sums, max and any exactly, float sums
/// within rounding; keepdim and the reduced dim's position are kept.
#[test]
fn long_reductions_split_on_the_device() {
    if !have_device() {
        return;
    }
    let n = 1 << 16;
    let ints = Tensor::from_vec(
        (0..n as i64).map(|i| (i * 7919) % 1001 - 500).collect(),
        &[n],
    )
    .unwrap();
    let floats = Tensor::from_vec((0..n).map(|i| (i as f32 * 0.37).sin()).collect(), &[n]).unwrap();
    let g_ints = ints.to_device(GPU).unwrap();
    let g_floats = floats.to_device(GPU).unwrap();
    let whole = g_ints.sum(&[], false).unwrap();
    let text = whole.schedule_text().unwrap();
    // 256 partials of 256 elements, then their sum: two kernels.
    assert!(text.contains("int64[256] temp"), "{text}");
    assert_eq!(
        whole.to_vec::<i64>().unwrap(),
        ints.sum(&[], false).unwrap().to_vec::<i64>().unwrap()
    );
    assert_eq!(
        g_ints.amax(&[0], true).unwrap().to_vec::<i64>().unwrap(),
        ints.amax(&[0], true).unwrap().to_vec::<i64>().unwrap()
    );
    assert_eq!(
        g_ints
            .gt(499)
            .unwrap()
            .any(&[], false)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![true]
    );
    let (want, got) = (
        floats.sum(&[], false).unwrap().to_vec::<f32>().unwrap()[0],
        g_floats.sum(&[], false).unwrap().to_vec::<f32>().unwrap()[0],
    );
    assert!(
        (want - got).abs() <= 1e-3,
        "{want} on the CPU, {got} on the device"
    );
    // Column sums of a wide matrix, and a middle dim with keepdim.
    let m = floats.view(&[4096, 16]).unwrap();
    let gm = g_floats.view(&[4096, 16]).unwrap();
    let (want, got) = (
        f32s(&m.sum(&[0], false).unwrap()),
        f32s(&gm.sum(&[0], false).unwrap()),
    );
    for (w, g) in want.iter().zip(&got) {
        assert!(
            (w - g).abs() <= 1e-3,
            "{want:?} on the CPU, {got:?} on the device"
        );
    }
    let t3 = g_ints.view(&[2, 8192, 4]).unwrap();
    let s3 = t3.sum(&[1], true).unwrap();
    assert_eq!(s3.shape(), vec![2, 1, 4]);
    assert_eq!(
        s3.to_vec::<i64>().unwrap(),
        ints.view(&[2, 8192, 4])
            .unwrap()
            .sum(&[1], true)
            .unwrap()
            .to_vec::<i64>()
            .unwrap()
    );
}

/// In-place writes on a device store into the storage's own array when nothing else
/// needs its old version (no copy kernel), and copy it when something does.
#[test]
fn in_place_writes_on_the_device_reuse_the_array() {
    if !have_device() {
        return;
    }
    let x = Tensor::from_vec((0..12).map(|i| i as f32).collect(), &[3, 4])
        .unwrap()
        .to_device(GPU)
        .unwrap();
    // Rebuilding and realizing the same computation on the device takes its recorded
    // schedule (the realize cache), as on the CPU.
    let build = || x.mul(3.0).unwrap().sin().unwrap().add(&x).unwrap();
    let first = f32s(&build());
    build().realize().unwrap();
    let again = build();
    again.realize().unwrap();
    assert!(lazyfuse::last_realize_stats().reused);
    assert_eq!(f32s(&again), first);
    x.select(0, 1).unwrap().add_(100.0).unwrap();
    x.realize().unwrap();
    let stats = lazyfuse::last_realize_stats();
    assert_eq!((stats.in_place, stats.kernels), (1, 1), "{stats:?}");
    let want: Vec<f32> = (0..12)
        .map(|i| {
            if (4..8).contains(&i) {
                i as f32 + 100.0
            } else {
                i as f32
            }
        })
        .collect();
    assert_eq!(f32s(&x), want);
    // A clone of the old values keeps the old version alive: the write copies.
    let y = Tensor::from_vec(vec![1.0f32, 2.0], &[2])
        .unwrap()
        .to_device(GPU)
        .unwrap();
    let old = y.mul(1).unwrap();
    y.add_(1.0).unwrap();
    assert_eq!(f32s(&y), vec![2.0, 3.0]);
    assert_eq!(f32s(&old), vec![1.0, 2.0]);
    // A failed in-place realize leaves the tensor's values readable.
    let z = Tensor::from_vec(vec![6i32, 8], &[2])
        .unwrap()
        .to_device(GPU)
        .unwrap();
    let zero = Tensor::from_vec(vec![0i32, 2], &[2])
        .unwrap()
        .to_device(GPU)
        .unwrap();
    z.floor_divide_(&zero).unwrap();
    assert!(z.realize().is_err());
}

/// Results an op makes without reading its input (constants) stay on the input's
/// device: the indices of a zero-dim cummax, `x ** 0`, a pad that keeps nothing, an
/// empty complex reduction, `full_like`. (A random program found the first.)
#[test]
fn constant_results_stay_on_the_device() {
    if !have_device() {
        return;
    }
    let s = Tensor::scalar(2.5f32).to_device(GPU).unwrap();
    let (v, i) = s.cummax(-1).unwrap();
    assert_eq!((v.device(), i.device()), (GPU, GPU));
    assert_eq!(i.to_vec::<i64>().unwrap(), vec![0]);
    let x = Tensor::from_vec(vec![3.0f32, -1.0], &[2])
        .unwrap()
        .to_device(GPU)
        .unwrap();
    let ones = x.pow(0).unwrap();
    assert_eq!((ones.device(), f32s(&ones)), (GPU, vec![1.0, 1.0]));
    let padded = x.pad(&[-2, 1], 7.0).unwrap();
    assert_eq!((padded.device(), f32s(&padded)), (GPU, vec![7.0]));
    let empty = Tensor::zeros(&[0, 2], DType::C64).to_device(GPU).unwrap();
    assert_eq!(
        empty
            .amax(&[0], false)
            .unwrap_or_else(|_| empty.clone())
            .device(),
        GPU
    );
    assert_eq!(x.full_like(4, None).unwrap().device(), GPU);
}

/// Threads build and realize device tensors at once: each gets its own values.
#[test]
fn threads_realize_device_tensors_at_once() {
    if !have_device() {
        return;
    }
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let x = Tensor::from_vec((0..64).map(|i| (i + t) as f32).collect(), &[8, 8])
                    .unwrap()
                    .to_device(GPU)
                    .unwrap();
                let mut acc = x.clone();
                for _ in 0..5 {
                    acc = acc.add(&x).unwrap().mul(0.5).unwrap().realize().unwrap();
                }
                (t, acc.sum(&[], false).unwrap().to_vec::<f32>().unwrap()[0])
            })
        })
        .collect();
    for h in handles {
        let (t, got) = h.join().unwrap();
        // acc stays x (the mean of x and x), so the sum is sum(x).
        let want: f32 = (0..64).map(|i| (i + t) as f32).sum();
        assert_eq!(got, want, "thread {t}");
    }
}

#[test]
fn factories_make_tensors_on_the_device_named_or_the_default() {
    if !have_device() {
        return;
    }
    // The default device and the random generator are process-wide: the random
    // programs of `device_programs_agree_with_the_cpu` must not draw or build in
    // between (they hold the same lock).
    let _guard = differential::settings_guard();
    use lazyfuse::{manual_seed, DeviceGuard};
    let cpu = || -> Vec<Tensor> {
        manual_seed(5);
        vec![
            Tensor::zeros(&[2, 3], DType::F32),
            Tensor::ones(&[3], DType::I32).to_dtype(DType::F32).unwrap(),
            Tensor::full(&[2], 2.5, DType::F32).unwrap(),
            Tensor::arange(0.0, 4.0, 1.0, DType::F32).unwrap(),
            Tensor::linspace(0.0, 1.0, 5, DType::F32).unwrap(),
            Tensor::eye(2, Some(3), DType::F32).unwrap(),
            Tensor::rand(&[4], DType::F32).unwrap(),
            Tensor::from_vec(vec![1.5f32, -2.0], &[2]).unwrap(),
            Tensor::scalar(4.0),
        ]
    };
    let expected: Vec<Vec<f32>> = cpu().iter().map(f32s).collect();
    // `with torch.device("cuda")`: every factory allocates there
    let on_device = {
        let _scope = DeviceGuard::new("cuda").unwrap();
        assert_eq!(lazyfuse::get_default_device(), GPU);
        cpu()
    };
    assert_eq!(lazyfuse::get_default_device(), Device::CPU);
    for (t, want) in on_device.iter().zip(&expected) {
        assert_eq!(t.device(), GPU);
        assert_eq!(&f32s(t), want);
    }
    // the `_on` forms name the device and leave the default alone
    manual_seed(5);
    let z = Tensor::zeros_on(&[2, 3], DType::F32, 0usize).unwrap();
    assert_eq!(
        (z.device(), lazyfuse::get_default_device()),
        (GPU, Device::CPU)
    );
    let r = Tensor::rand_on(&[4], DType::F32, "cuda:0").unwrap();
    manual_seed(5);
    assert_eq!(f32s(&r), f32s(&Tensor::rand(&[4], DType::F32).unwrap()));
    // CPU tensors made before the scope keep working inside it (the helper
    // constants of ops stay with their tensors)
    let x = Tensor::zeros(&[3], DType::F32);
    let i = Tensor::from_vec(vec![2i64, 0], &[2]).unwrap();
    let y = {
        let _scope = DeviceGuard::new(GPU).unwrap();
        x.index_add(
            0,
            &i,
            &Tensor::ones(&[2], DType::F32).to_device("cpu").unwrap(),
            2.0,
        )
        .unwrap()
    };
    assert_eq!((y.device(), f32s(&y)), (Device::CPU, vec![2.0, 0.0, 2.0]));
}
