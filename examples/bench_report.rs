//! Runs PERF.md's workloads W1–W9, the one-transcendental elementwise rows E (exp,
//! log, tanh, sigmoid, gelu, silu, erf over 16M float32, each beside the one-read,
//! one-write floor), the training steps T1–T3 and the convolutions C1–C2 on the
//! JIT and prints one table: per workload the median time, its rate
//! (GB/s of compulsory traffic, GFLOP/s for W6 and C1–C2, µs per chain for W9), the
//! baseline's median measured in the same run (the plain-Rust memory floor, a plain
//! copy for W7, plain Rust for W9, PERF.md's numpy sgemm figure for W6, a gemm of
//! the convolution's size for C1–C2), the ratio, and the target. Then JIT compile time per kernel and the first
//! realize of W1, both on graphs this process has never seen.
//!
//! ```text
//! cargo run --release --example bench_report [-- --quick] [-- W1,W3b] [-- --device cuda]
//! ```
//! `--quick` shrinks sizes and run counts (a smoke test); other arguments are
//! comma-separated workload groups (`compile`: the compile and first-realize
//! rows alone). The machine is shared: trust ratios (lazyfuse
//! and its baseline alternate within each sample) over absolute times.
//!
//! `--device cuda`: the workloads with GPU targets (W1–W5, W7, W8) with
//! their inputs on `cuda:0`, each beside the device's copy bandwidth: the baseline
//! copies half the workload's compulsory bytes device to device (so it moves the
//! same traffic), and the ratio is the fraction of copy bandwidth reached. W6 runs
//! beside cuBLAS called directly on buffers of the same sizes. A realize
//! on the device returns after its kernels finished (it reads their status blocks),
//! so the times are the device's. Needs a GPU (the host emulation has no bandwidth
//! to measure).

#[path = "../benches/workloads.rs"]
mod workloads;

use lazyfuse::{CpuBackend, Device, Tensor};
use std::time::Instant;
use workloads::{build, groups, Sizes, Unit, NUMPY_SGEMM_GFLOPS};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Seconds per call of `f`: median over `samples` samples of `batch` calls each.
fn time(f: &mut dyn FnMut(), samples: usize, batch: usize) -> f64 {
    median(
        (0..samples)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..batch {
                    f();
                }
                t.elapsed().as_secs_f64() / batch as f64
            })
            .collect(),
    )
}

fn rate(unit: Unit, secs: f64) -> String {
    match unit {
        Unit::Bytes(b) => format!("{:.1} GB/s", b / secs / 1e9),
        Unit::Flops(f) => format!("{:.1} GFLOP/s", f / secs / 1e9),
        Unit::Latency => format!("{:.2} µs", secs * 1e6),
    }
}

fn ms(secs: f64) -> String {
    if secs < 1e-3 {
        format!("{:.2} µs", secs * 1e6)
    } else {
        format!("{:.2} ms", secs * 1e3)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let filter = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .cloned()
        .collect::<Vec<_>>()
        .join(",");
    let gpu = match args.iter().position(|a| a == "--device") {
        None => false,
        Some(i) => match args.get(i + 1).map(String::as_str) {
            Some("cuda") | Some("cuda:0") => true,
            Some("cpu") => false,
            other => {
                eprintln!("bench_report: --device takes cpu or cuda, not {other:?}");
                std::process::exit(2);
            }
        },
    };
    let filter = filter
        .split(',')
        .filter(|f| !["cuda", "cuda:0", "cpu"].contains(f))
        .collect::<Vec<_>>()
        .join(",");
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    if gpu {
        if lazyfuse::cuda_emulation() {
            eprintln!("bench_report: --device cuda measures a GPU, not the host emulation");
            std::process::exit(2);
        }
        if let Err(e) = Tensor::scalar(0.0).to_device(Device::cuda(0)) {
            eprintln!("bench_report: --device cuda needs a GPU: {e}");
            std::process::exit(2);
        }
        workloads::set_device(Device::cuda(0));
    }
    let sizes = Sizes::new(quick);
    let samples = if quick { 3 } else { 7 };
    println!(
        "lazyfuse bench_report ({}; math {:?}; medians of {samples} samples, lazyfuse and baseline alternating)",
        if quick { "quick sizes" } else { "PERF.md sizes" },
        lazyfuse::math_mode().unwrap()
    );
    println!(
        "{:<12} {:<40} {:>10} {:>14} {:>10} {:>7}  target",
        "id", "workload", "median", "rate", "baseline", "ratio"
    );
    for g in groups(&filter) {
        if gpu && (g == "W9" || g.starts_with('T') || g.starts_with('C')) {
            // W9 is the CPU's latency target.
            println!("{g:<12} (not measured on the device)");
            continue;
        }
        for mut w in build(g, &sizes) {
            if gpu {
                match w.unit {
                    Unit::Bytes(b) => {
                        w.baseline = Some(device_copy((b / 2.0) as usize));
                        w.target = "≥ 0.85 of device copy (softmax ≥ 0.7)";
                        w.min_ratio = Some(if w.id == "W4" { 0.7 } else { 0.85 });
                    }
                    Unit::Flops(_) => {
                        // W6: beside cuBLAS called directly on the same sizes.
                        w.baseline = direct_cublas(w.id, &sizes);
                        w.target = "≥ 0.8 of cuBLAS called directly";
                        w.min_ratio = w.baseline.is_some().then_some(0.8);
                    }
                    Unit::Latency => {}
                }
            }
            // W9 is a latency: batches of calls per sample (a training step is
            // long enough alone).
            let batch = match w.unit {
                Unit::Latency if w.id == "W9" => 200,
                Unit::Latency => 20,
                _ => 1,
            };
            (w.run)();
            if let Some(b) = w.baseline.as_mut() {
                b();
            }
            let (mut ours, mut base) = (Vec::new(), Vec::new());
            for _ in 0..samples {
                ours.push(time(&mut w.run, 1, batch));
                if let Some(b) = w.baseline.as_mut() {
                    base.push(time(b, 1, batch));
                }
            }
            let t = median(ours);
            let (bcol, ratio) = match (w.unit, base.is_empty()) {
                (Unit::Flops(f), true) => (
                    format!("numpy {NUMPY_SGEMM_GFLOPS:.0}*"),
                    f / t / 1e9 / NUMPY_SGEMM_GFLOPS,
                ),
                (_, true) => ("-".into(), f64::NAN),
                (_, false) => {
                    let bt = median(base);
                    (ms(bt), bt / t)
                }
            };
            let met = match (w.min_ratio, w.max_secs) {
                (Some(m), _) if ratio >= m => " (met)",
                (Some(_), _) => " (NOT met)",
                (None, Some(limit)) if t <= limit => " (met)",
                (None, Some(_)) => " (NOT met)",
                (None, None) => "",
            };
            println!(
                "{:<12} {:<40} {:>10} {:>14} {:>10} {:>7.2}  {}{}",
                w.id,
                w.what,
                ms(t),
                rate(w.unit, t),
                bcol,
                ratio,
                w.target,
                met
            );
        }
    }
    let compile = filter.split(',').any(|f| f.eq_ignore_ascii_case("compile"));
    if (filter.is_empty() || compile) && !gpu {
        compile_times(&sizes, samples);
    }
    println!(
        "ratio: baseline time / lazyfuse time (1.0 = at the floor); W6: GFLOP/s / \
         PERF.md's numpy sgemm figure (*not measured in this run); W9 ratio: plain Rust \
         time / lazyfuse time"
    );
}

/// Compile cost: the first realize of never-seen graphs minus a cached realize of
/// cuBLAS called directly for W6's product `id`, the device baseline of matmul:
/// `None` (after saying why) where cuBLAS is missing, and matmul runs as a generated
/// kernel.
fn direct_cublas(id: &str, sizes: &Sizes) -> Option<Box<dyn FnMut()>> {
    if let Err(why) = lazyfuse_runtime::cuda::blas::cublas_version() {
        println!("{id:<12} no cuBLAS ({why}): a generated kernel, no baseline");
        return None;
    }
    let (_, n, batch, _) = workloads::w6_cases(sizes).into_iter().find(|c| c.0 == id)?;
    let dev = lazyfuse_runtime::cuda::mirror::device(0).expect("the GPU checked above");
    let bytes = batch * n * n * 4;
    let a = dev.alloc_zeroed(bytes).expect("device memory");
    let b = dev.alloc_zeroed(bytes).expect("device memory");
    let mut out = dev.alloc(bytes).expect("device memory");
    let dims = lazyfuse_runtime::cuda::blas::MatmulDims {
        batch,
        m: n,
        k: n,
        n,
    };
    Some(Box::new(move || {
        dev.matmul(lazyfuse::DType::F32, &a, &b, &mut out, dims)
            .expect("cuBLAS");
        dev.synchronize().expect("the product finished");
    }))
}

/// The device's copy bandwidth as a baseline: one device-to-device copy of `bytes`
/// (reads and writes `2 * bytes`), waited for.
fn device_copy(bytes: usize) -> Box<dyn FnMut()> {
    let dev = lazyfuse_runtime::cuda::mirror::device(0).expect("the GPU checked above");
    let src = dev
        .alloc_zeroed(bytes)
        .expect("device memory for the copy baseline");
    Box::new(move || {
        let copy = dev.duplicate(&src).expect("a device copy");
        dev.synchronize().expect("the copy finished");
        std::hint::black_box(copy);
    })
}

/// JIT compile time: the first realize of a never-seen kernel minus a cached
/// realize of the same graph, on [16] (the kernel compiled, plus its schedule),
/// for W1's kernel made new by its constant (the target's "per kernel", median)
/// and for W1 with 100+ extra `+ a` (one long kernel); then the first realize of a
/// never-seen 16M W1-shaped graph (compile, schedule and the run, with its fresh
/// output's page faults) beside a cached realize of it.
fn compile_times(sizes: &Sizes, samples: usize) {
    let small = |n: usize| workloads::inputs(n, 0.9);
    let a = Tensor::from_vec(small(16), &[16]).unwrap();
    // W1's kernel, made new per sample by its constant (constants are compiled
    // into the code, so each is a cache miss): the target's "per kernel" figure.
    let w1_like = |a: &Tensor, j: usize| {
        let y = (&(a * a) + a).relu().unwrap();
        let y = y.mul(0.5 + j as f64 * 1e-3).unwrap().add(a).unwrap();
        y.tanh().unwrap()
    };
    // W1 and 100+ more adds: one kernel of over 100 ops.
    let long = |a: &Tensor, j: usize| {
        let mut y = workloads::w1_graph(a, a, a);
        for _ in 0..j {
            y = y.add(a).unwrap();
        }
        y
    };
    // One sample: the first realize of kernel `j` of `g` minus a cached one.
    let compile_time = |g: &dyn Fn(&Tensor, usize) -> Tensor, j: usize| {
        let y = g(&a, j);
        let t = Instant::now();
        y.realize().unwrap();
        let first = t.elapsed().as_secs_f64();
        first - time(&mut || drop(g(&a, j).realize().unwrap()), 5, 20)
    };
    let mut w1_kernel = Vec::new();
    let mut long_kernel = Vec::new();
    for j in 0..samples.max(9) {
        w1_kernel.push(compile_time(&w1_like, j));
        long_kernel.push(compile_time(&long, 100 + j));
    }
    for (id, what, times, target) in [
        (
            "compile",
            "first − cached realize, new W1 kernel",
            w1_kernel,
            "≤ 0.5 ms",
        ),
        (
            "compile_long",
            "the same, one kernel of 107 ops",
            long_kernel,
            "(none)",
        ),
    ] {
        println!(
            "{:<12} {:<40} {:>10} {:>14} {:>10} {:>7}  {target}",
            id,
            what,
            ms(median(times)),
            "",
            "",
            ""
        );
    }
    let n = sizes.n;
    let big = Tensor::from_vec(workloads::inputs(n, 0.2), &[n]).unwrap();
    let t = Instant::now();
    long(&big, 1).realize().unwrap();
    let first = t.elapsed().as_secs_f64();
    let cached = time(&mut || drop(long(&big, 1).realize().unwrap()), samples, 1);
    println!(
        "{:<12} {:<40} {:>10} {:>14} {:>10} {:>7}  < 20 ms",
        "first_W1",
        format!("first realize of new W1(+a) [{n}]"),
        ms(first),
        format!("cached {}", ms(cached)),
        "",
        ""
    );
}
