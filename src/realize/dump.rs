//! `LAZYFUSE_DUMP_IR`'s kernel stages: the schedule, each kernel's Cranelift IR (and
//! machine code), its CUDA C, and the DOT picture.

use crate::settings::Settings;
use lazyfuse_ir::kernel::{MathMode, Schedule, Step};
use lazyfuse_ir::{Graph, NodeId};
use std::sync::atomic::Ordering;

/// A text form of a loop kernel compiled with a math mode (`lazyfuse_runtime::exec`'s
/// `clif_text` and `asm_text`).
pub(crate) type KernelText =
    fn(&lazyfuse_ir::kernel::LoopKernel, MathMode) -> lazyfuse_runtime::Result<String>;

/// Prints the kernels (with the graph nodes each holds), each kernel's loop IR and
/// its Cranelift IR (for a CPU realize; on a GPU: its CUDA C); with
/// `LAZYFUSE_DUMP_IR=dot`, also writes the DOT picture.
pub(super) fn dump_schedule(
    graph: &Graph,
    targets: &[NodeId],
    sched: &Schedule,
    settings: &Settings,
) {
    let on_gpu = settings.on_gpu();
    eprintln!(
        "== lazyfuse: kernels ({} steps) ==\n{}",
        sched.kernel_count(),
        sched.text()
    );
    // The Cranelift IR, and with `LAZYFUSE_DUMP_IR=asm` the machine code too.
    let asm = std::env::var("LAZYFUSE_DUMP_IR").is_ok_and(|v| v == "asm");
    let stages: [(&str, KernelText); 2] = [
        ("Cranelift IR", lazyfuse_compile::clif_text),
        ("machine code", lazyfuse_compile::asm_text),
    ];
    let stages = &stages[..if asm { 2 } else { 1 }];
    for step in sched.steps.iter().filter(|_| !on_gpu) {
        if let Step::Loop(k) = step {
            for (what, text) in stages {
                match text(k, settings.math) {
                    Ok(t) => eprintln!("== lazyfuse: {what} of {} ==\n{t}", k.name),
                    Err(e) => eprintln!("== lazyfuse: {what} of {}: {e} ==", k.name),
                }
            }
        }
    }
    if on_gpu || std::env::var("LAZYFUSE_DUMP_IR").is_ok_and(|v| v == "cuda") {
        // The CUDA C the GPU backend generates for the same kernels (on CPU tensors a
        // preview; the device-independent prelude is `cuda::PRELUDE`).
        for step in &sched.steps {
            if let Step::Loop(k) = step {
                match lazyfuse_codegen::cuda::kernel_source(k, settings.math) {
                    Ok(src) => eprintln!("== lazyfuse: CUDA C of {} ==\n{}", k.name, src.function),
                    Err(e) => eprintln!("== lazyfuse: CUDA C of {}: {e} ==", k.name),
                }
            }
        }
    }
    if std::env::var("LAZYFUSE_DUMP_IR").is_ok_and(|v| v == "dot") {
        let dir = std::env::var("LAZYFUSE_DUMP_DIR").unwrap_or_else(|_| ".".into());
        let dot = lazyfuse_ir::dot::schedule_dot(graph, targets, sched);
        let path = std::path::Path::new(&dir).join(format!(
            "lazyfuse-{}-{}.dot",
            std::process::id(),
            DOT_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::write(&path, dot) {
            Ok(()) => eprintln!("== lazyfuse: wrote {} ==", path.display()),
            Err(e) => eprintln!("== lazyfuse: could not write {}: {e} ==", path.display()),
        }
    }
}

pub(super) static DOT_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
