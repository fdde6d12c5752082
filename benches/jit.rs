//! Criterion benchmarks of PERF.md's workloads W1–W9 on the JIT, each group beside
//! its plain-Rust baseline measured in the same run (the memory-traffic floor, a
//! plain copy for W7, the plain-Rust chain for W9; W6 has none: compare its
//! throughput with PERF.md's numpy figure), so that ratios survive a noisy machine.
//! The workloads and baselines are `benches/workloads.rs`, shared with
//! `examples/bench_report.rs` (which prints them as a table). W1 and W9 also run on
//! the reference interpreter.
//!
//! `LAZYFUSE_BENCH_QUICK=1` uses the small sizes of `bench_report --quick`;
//! `LAZYFUSE_BENCH=W1,W8` selects groups.

#[path = "workloads.rs"]
mod workloads;

use criterion::{criterion_main, Criterion, Throughput};
use lazyfuse::CpuBackend;
use workloads::{build, groups, Sizes, Unit};

fn all(c: &mut Criterion) {
    let quick = std::env::var("LAZYFUSE_BENCH_QUICK").is_ok_and(|v| v == "1");
    let filter = std::env::var("LAZYFUSE_BENCH").unwrap_or_default();
    let sizes = Sizes::new(quick);
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    for g in groups(&filter) {
        for mut w in build(g, &sizes) {
            let mut group = c.benchmark_group(w.id);
            group.sample_size(10);
            match w.unit {
                Unit::Bytes(b) => {
                    group.throughput(Throughput::Bytes(b as u64));
                }
                Unit::Flops(f) => {
                    group.throughput(Throughput::Elements(f as u64));
                }
                Unit::Latency => {}
            }
            if let Some(b) = w.baseline.as_mut() {
                group.bench_function("baseline", |bench| bench.iter(&mut *b));
            }
            group.bench_function("lazyfuse_jit", |bench| bench.iter(&mut w.run));
            if matches!(w.id, "W1" | "W9") {
                lazyfuse::set_cpu_backend(CpuBackend::Interp);
                group.bench_function("lazyfuse_interp", |bench| bench.iter(&mut w.run));
                lazyfuse::set_cpu_backend(CpuBackend::Jit);
            }
            group.finish();
        }
    }
}

// `criterion_group!` generates a public function without a doc comment.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::all);
}
criterion_main!(group::benches);
