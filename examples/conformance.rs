//! The conformance runner's command line: checks lazyfuse against the PyTorch-generated
//! cases of a directory of `*.jsonl` files (schema: `tests/data/conformance/SCHEMA.md`).
//!
//! `cargo run --release --example conformance -- DIR` runs every `*.jsonl` file of `DIR`
//! and prints, per file, `name.jsonl: P passed, F failed, U unsupported`, then one
//! readable diff per failure, and last `conformance: P passed, F failed, U unsupported`.
//! The exit code is non-zero when any case failed. The runner itself is the dev-only
//! crate `lazyfuse-conformance` (`conformance/`), which the conformance tests call too.

use std::path::Path;

fn main() {
    // `conformance [DIR] [--backend jit|interp|cuda-host|cuda] [--device cpu|cuda] [--cuda-compile-check]`
    // --backend cuda: CPU tensors whose kernels run on cuda:0 (buffers copied there and
    // back per kernel); --device cuda: tensors on cuda:0.
    // --cuda-compile-check: every schedule's kernels are also compiled to CUDA C and
    // by NVRTC for sm_90 (values still from the CPU backend; a compile failure fails
    // the case).
    let mut dir = "tests/data/conformance".to_string();
    let mut args = std::env::args().skip(1);
    let mut check = false;
    while let Some(a) = args.next() {
        if a == "--device" {
            // `--device cuda`: every input tensor is moved to cuda:0, so the ops run
            // there on device-resident buffers and the results are read back (with
            // `LAZYFUSE_CUDA_EMULATION=1`, on the host emulation of the device);
            // `--device cpu`: the default.
            let cuda = match args.next().as_deref() {
                Some("cuda") | Some("cuda:0") => true,
                Some("cpu") => false,
                other => {
                    eprintln!("conformance: --device takes cpu or cuda, not {other:?}");
                    std::process::exit(2);
                }
            };
            lazyfuse_conformance::ON_CUDA.store(cuda, std::sync::atomic::Ordering::Relaxed);
        } else if a == "--cuda-compile-check" {
            check = true;
            lazyfuse::set_cuda_compile_check(true);
        } else if a == "--backend" {
            let name = args.next().unwrap_or_default();
            match name.parse::<lazyfuse::CpuBackend>() {
                Ok(b) => lazyfuse::set_cpu_backend(b),
                Err(e) => {
                    eprintln!("conformance: {e}");
                    std::process::exit(2);
                }
            }
        } else {
            dir = a;
        }
    }
    if lazyfuse_conformance::ON_CUDA.load(std::sync::atomic::Ordering::Relaxed) {
        println!(
            "device: cuda:0{}",
            if lazyfuse::cuda_emulation() {
                " (host emulation)"
            } else {
                ""
            }
        );
    }
    match lazyfuse::cpu_backend() {
        Ok(b) => println!("backend: {b:?}"),
        Err(e) => {
            eprintln!("conformance: {e}");
            std::process::exit(2);
        }
    }
    let summary = lazyfuse_conformance::run_dir(Path::new(&dir));
    if check {
        let (units, kernels) = lazyfuse::cuda_compile_check_counts();
        println!(
            "cuda compile check: {kernels} kernels in {units} translation units compiled for {} by NVRTC",
            lazyfuse::CHECK_ARCH
        );
    }
    if summary.failed > 0 {
        std::process::exit(1);
    }
}
