//! The neural-network workloads of `bench_report` and the criterion benches: C1/C2
//! (conv2d 3×3, 64 → 64 channels on 32×32 images, forward and forward+backward,
//! each beside a matrix product of the same size from columns made beforehand: the
//! floor an im2col convolution approaches) and T3 (one Adam step of the digits CNN
//! of `examples/train_digits.rs`, batch 64). PyTorch's figures for the same work
//! on this machine are in PERF.md.

use super::{inputs, param, tensor, Unit, Workload};
use lazyfuse::nn::functional::{self as F, Reduction};
use lazyfuse::nn::{Conv2d, Conv2dOptions, Flatten, Linear, MaxPool2d, Module, ReLU, Sequential};
use lazyfuse::optim::{Adam, AdamConfig, Optimizer};
use lazyfuse::Tensor;

/// The conv layer's sizes: batch (32, or 2 for a quick run), channels in and out,
/// image side.
fn conv_sizes(quick: bool) -> (usize, usize, usize, usize) {
    (if quick { 2 } else { 32 }, 64, 64, 32)
}

/// The matrix product an im2col convolution runs: `[n·h·w, c·9] @ [c·9, oc]`, its
/// operands realized beforehand.
fn gemm_floor(n: usize, c: usize, oc: usize, side: usize) -> Box<dyn FnMut()> {
    let rows = n * side * side;
    let cols = tensor(inputs(rows * c * 9, 0.4), &[rows, c * 9]);
    let w = tensor(inputs(c * 9 * oc, 0.8), &[c * 9, oc]);
    Box::new(move || {
        cols.matmul(&w).unwrap().realize().unwrap();
    })
}

/// C1: `conv2d(x, w, b, padding=1)` with `x` `[n, 64, 32, 32]`, `w` `[64, 64, 3, 3]`.
pub fn c1_conv_forward(quick: bool) -> Workload {
    let (n, c, oc, side) = conv_sizes(quick);
    let x = tensor(inputs(n * c * side * side, 0.1), &[n, c, side, side]);
    let w = tensor(
        inputs(oc * c * 9, 0.2).iter().map(|v| v * 0.05).collect(),
        &[oc, c, 3, 3],
    );
    let b = tensor(inputs(oc, 0.3), &[oc]);
    let run = move || {
        F::conv2d(&x, &w, Some(&b), &[1], &[1], &[1], 1)
            .unwrap()
            .realize()
            .unwrap();
    };
    Workload {
        id: "C1",
        what: format!("conv2d 3x3 [{n},{c},{side},{side}]->{oc} fwd"),
        unit: Unit::Flops(2.0 * (n * side * side * c * 9 * oc) as f64),
        run: Box::new(run),
        baseline: Some(gemm_floor(n, c, oc, side)),
        target: "≤ 1.5x PyTorch oneDNN (PERF.md); ratio: gemm of its size",
        min_ratio: None,
        max_secs: None,
    }
}

/// C2: C1's convolution, `sum` of its output, and the gradients of `x`, `w`, `b`.
pub fn c2_conv_forward_backward(quick: bool) -> Workload {
    let (n, c, oc, side) = conv_sizes(quick);
    let x = param(&[n, c, side, side], 1.0, 0.1);
    let w = param(&[oc, c, 3, 3], 0.05, 0.2);
    let b = param(&[oc], 1.0, 0.3);
    let run = move || {
        for p in [&x, &w, &b] {
            p.set_grad(None).unwrap();
        }
        F::conv2d(&x, &w, Some(&b), &[1], &[1], &[1], 1)
            .unwrap()
            .sum(&[], false)
            .unwrap()
            .backward()
            .unwrap();
        let grads: Vec<Tensor> = [&x, &w, &b].iter().map(|p| p.grad().unwrap()).collect();
        lazyfuse::realize_all(&grads.iter().collect::<Vec<_>>()).unwrap();
    };
    Workload {
        id: "C2",
        what: format!("conv2d 3x3 [{n},{c},{side},{side}]->{oc} fwd+bwd"),
        unit: Unit::Flops(3.0 * 2.0 * (n * side * side * c * 9 * oc) as f64),
        run: Box::new(run),
        baseline: Some(gemm_floor(n, c, oc, side)),
        target: "PyTorch's figure in PERF.md; ratio: one gemm of the fwd's size",
        min_ratio: None,
        max_secs: None,
    }
}

/// T3: one Adam step (forward, cross entropy, backward, update, the loss read) of
/// the digits CNN, batch 64 of 8×8 images.
pub fn t3_digits_step() -> Workload {
    lazyfuse::manual_seed(0);
    let pad = Conv2dOptions::default().padding(1);
    let model = Sequential::new()
        .append(Conv2d::new(1, 16, &[3], pad).unwrap())
        .append(ReLU::new())
        .append(MaxPool2d::new(&[2]))
        .append(Conv2d::new(16, 32, &[3], pad).unwrap())
        .append(ReLU::new())
        .append(Flatten::new())
        .append(Linear::new(32 * 4 * 4, 10, true).unwrap());
    let config = AdamConfig {
        lr: 5e-3,
        ..Default::default()
    };
    let mut opt = Adam::new(model.parameters(), config).unwrap();
    let x = tensor(
        inputs(64 * 64, 0.7).iter().map(|v| v.abs()).collect(),
        &[64, 1, 8, 8],
    );
    let y = Tensor::from_vec((0..64).map(|i| (i * 7 % 10) as i64).collect(), &[64]).unwrap();
    let run = move || {
        opt.zero_grad().unwrap();
        let logits = model.forward(&x).unwrap();
        let loss = F::cross_entropy(&logits, &y, None, -100, Reduction::Mean, 0.0).unwrap();
        loss.backward().unwrap();
        opt.step_and_realize(&[&loss]).unwrap();
        loss.to_vec::<f32>().unwrap();
    };
    Workload {
        id: "T3",
        what: "digits CNN b64 Adam step".into(),
        unit: Unit::Latency,
        run: Box::new(run),
        baseline: None,
        target: "faster than PyTorch eager (PERF.md)",
        min_ratio: None,
        max_secs: None,
    }
}
