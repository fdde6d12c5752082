//! Criterion benchmarks of a training step on the JIT: T1 (an MLP 784→256→10, batch
//! 64) and T2 (a one-head attention block with layer norm, batch 8, sequence 64,
//! width 64), each one SGD step (forward, backward, update) built and realized per
//! iteration; T3 (the digits CNN's Adam step) and the convolutions C1/C2 (quick
//! sizes: batch 2) beside their gemm floor. The workloads are `benches/workloads.rs`'s, shared with
//! `examples/bench_report.rs`; PyTorch's figures for the same steps are in PERF.md.

#[path = "workloads.rs"]
mod workloads;

use criterion::{criterion_main, Criterion};
use lazyfuse::CpuBackend;
use workloads::build;

fn steps(c: &mut Criterion) {
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    let sizes = workloads::Sizes::new(true);
    for group in ["T1", "T2", "T3", "C1", "C2"] {
        for mut w in build(group, &sizes) {
            let mut g = c.benchmark_group(w.id);
            g.sample_size(20);
            g.bench_function("lazyfuse_jit", |bench| bench.iter(&mut w.run));
            if let Some(baseline) = w.baseline.as_mut() {
                g.bench_function("baseline", |bench| bench.iter(&mut *baseline));
            }
            g.finish();
        }
    }
}

fn benches() {
    let mut c = Criterion::default().configure_from_args();
    steps(&mut c);
}

criterion_main!(benches);
