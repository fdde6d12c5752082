//! Benchmarks of the reference interpreter on PERF.md's workloads, each beside a
//! plain-Rust loop doing the same work in the same run, so that the ratio survives a
//! noisy machine. The interpreter is the oracle, not the fast path: these numbers are
//! the baseline that fusion and the JIT are measured against.
//!
//! - W1 `((a*b + c).relu()*0.5 + a).tanh()` (at 1M elements rather than 16M, so that a
//!   sample takes well under a second);
//! - W9 a 10-op elementwise chain on [1000], built and realized every iteration
//!   (graph building, the store lock and execution: the per-realize overhead).

use criterion::{black_box, criterion_main, Criterion};
use lazyfuse::Tensor;

const W1_LEN: usize = 1 << 20;
const W9_LEN: usize = 1000;

fn inputs(len: usize, seed: f32) -> Vec<f32> {
    (0..len).map(|i| (i as f32 * 0.37 + seed).sin()).collect()
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
    let mut group = c.benchmark_group("W1_1M");
    group.sample_size(10);
    group.bench_function("plain_rust", |bench| {
        bench.iter(|| {
            let out: Vec<f32> = (0..W1_LEN)
                .map(|i| ((a[i] * b[i] + cc[i]).max(0.0) * 0.5 + a[i]).tanh())
                .collect();
            black_box(out)
        })
    });
    group.bench_function("lazyfuse_interp", |bench| {
        bench.iter(|| {
            let y = ta.mul(&tb).unwrap().add(&tc).unwrap().relu().unwrap();
            let y = y.mul(0.5).unwrap().add(&ta).unwrap().tanh().unwrap();
            black_box(y.realize().unwrap())
        })
    });
    group.finish();
}

fn w9(c: &mut Criterion) {
    let x = inputs(W9_LEN, 0.5);
    let tx = Tensor::from_slice(&x, &[W9_LEN]).unwrap();
    let floor = Tensor::scalar(0.1);
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
    group.bench_function("lazyfuse_interp", |bench| {
        bench.iter(|| {
            let v = tx
                .mul(1.5)
                .unwrap()
                .add(0.25)
                .unwrap()
                .abs()
                .unwrap()
                .sqrt()
                .unwrap();
            let v = v.sub(0.5).unwrap();
            let v = v
                .mul(&v)
                .unwrap()
                .add(1.0)
                .unwrap()
                .log()
                .unwrap()
                .maximum(&floor)
                .unwrap();
            let v = v.div(3.0).unwrap().exp().unwrap().tanh().unwrap();
            black_box(v.realize().unwrap())
        })
    });
    group.finish();
}

// `criterion_group!` generates a public function without a doc comment.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::w1, super::w9);
}
criterion_main!(group::benches);
