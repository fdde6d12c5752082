//! Benchmarks of the JIT (fused Cranelift kernels) on PERF.md's W1 and W9, each beside
//! the reference interpreter and plain-Rust loops in the same run, so that ratios
//! survive a noisy machine:
//!
//! - W1 `((a*b + c).relu()*0.5 + a).tanh()` over three 16M f32 arrays: one kernel.
//!   Baselines: the memory-traffic floor (a two-thread `a*b + c` loop: the compulsory
//!   reads and writes with trivial arithmetic) and the same formula with libm `tanh`;
//! - W9 a 10-op elementwise chain on [1000], built and realized every iteration
//!   (graph building, passes, scheduling, the kernel cache and the run: per-realize
//!   latency once the kernel is compiled).

use criterion::{black_box, criterion_main, Criterion};
use lazyfuse::{CpuBackend, Tensor};

const W1_LEN: usize = 1 << 24;
const W9_LEN: usize = 1000;

fn inputs(len: usize, seed: f32) -> Vec<f32> {
    (0..len).map(|i| (i as f32 * 0.37 + seed).sin()).collect()
}

/// `out[i] = f(i)` on two threads (the machine's cores), each writing its half.
fn two_threads(out: &mut [f32], f: impl Fn(usize) -> f32 + Sync) {
    let half = out.len() / 2;
    let (lo, hi) = out.split_at_mut(half);
    std::thread::scope(|s| {
        s.spawn(|| lo.iter_mut().enumerate().for_each(|(i, o)| *o = f(i)));
        hi.iter_mut()
            .enumerate()
            .for_each(|(i, o)| *o = f(i + half));
    });
}

fn w1(c: &mut Criterion) {
    let (a, b, cc) = (
        inputs(W1_LEN, 0.1),
        inputs(W1_LEN, 0.2),
        inputs(W1_LEN, 0.3),
    );
    let ta = Tensor::from_slice(&a, &[W1_LEN]).unwrap();
    let tb = Tensor::from_slice(&b, &[W1_LEN]).unwrap();
    let tc = Tensor::from_slice(&cc, &[W1_LEN]).unwrap();
    let w1 = || {
        let y = ta.mul(&tb).unwrap().add(&tc).unwrap().relu().unwrap();
        y.mul(0.5).unwrap().add(&ta).unwrap().tanh().unwrap()
    };
    let mut out = vec![0.0f32; W1_LEN];
    let mut group = c.benchmark_group("W1_16M");
    group.sample_size(10);
    group.bench_function("plain_rust_floor_2threads", |bench| {
        bench.iter(|| {
            two_threads(&mut out, |i| a[i] * b[i] + cc[i]);
            black_box(&out);
        })
    });
    group.bench_function("plain_rust_libm_tanh_2threads", |bench| {
        bench.iter(|| {
            two_threads(&mut out, |i| {
                ((a[i] * b[i] + cc[i]).max(0.0) * 0.5 + a[i]).tanh()
            });
            black_box(&out);
        })
    });
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    assert_eq!(w1().kernel_count().unwrap(), 1, "W1 must be one kernel");
    group.bench_function("lazyfuse_jit", |bench| {
        bench.iter(|| black_box(w1().realize().unwrap()))
    });
    lazyfuse::set_cpu_backend(CpuBackend::Interp);
    group.bench_function("lazyfuse_interp", |bench| {
        bench.iter(|| black_box(w1().realize().unwrap()))
    });
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    group.finish();
}

fn w9(c: &mut Criterion) {
    let x = inputs(W9_LEN, 0.5);
    let tx = Tensor::from_slice(&x, &[W9_LEN]).unwrap();
    let floor = Tensor::scalar(0.1);
    let chain = || {
        let v = tx.mul(1.5).unwrap().add(0.25).unwrap().abs().unwrap();
        let v = v.sqrt().unwrap().sub(0.5).unwrap();
        let v = v.mul(&v).unwrap().add(1.0).unwrap().log().unwrap();
        let v = v.maximum(&floor).unwrap();
        v.div(3.0).unwrap().exp().unwrap().tanh().unwrap()
    };
    let mut group = c.benchmark_group("W9_chain_1000");
    group.bench_function("plain_rust", |bench| {
        bench.iter(|| {
            let out: Vec<f32> = x
                .iter()
                .map(|&v| {
                    let v = (v * 1.5 + 0.25).abs().sqrt() - 0.5;
                    let v = (v * v + 1.0).ln().max(0.1);
                    (v / 3.0).exp().tanh()
                })
                .collect();
            black_box(out)
        })
    });
    for (name, backend) in [
        ("lazyfuse_jit", CpuBackend::Jit),
        ("lazyfuse_interp", CpuBackend::Interp),
    ] {
        lazyfuse::set_cpu_backend(backend);
        group.bench_function(name, |bench| {
            bench.iter(|| black_box(chain().realize().unwrap()))
        });
    }
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    group.finish();
}

// `criterion_group!` generates a public function without a doc comment.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::w1, super::w9);
}
criterion_main!(group::benches);
