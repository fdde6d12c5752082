//! How the backward graph fuses: the kernel count of realizing the gradients of
//! small models, and of the hand-written forms they are made of, asserted exactly
//! (a change is a decision, not an accident). Each gradient is realized alone,
//! from realized inputs, on the JIT.
//!
//! Every count meets its target: reduce → elementwise → reduce
//! chains over rows become multi-phase row kernels (the built-in softmax's form),
//! and a gather of one index per row differentiates to an elementwise select.

use lazyfuse::Tensor;

fn leaf(shape: &[usize], seed: f32) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37 + seed).sin()).collect();
    Tensor::from_vec(v, shape)
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

/// `softmax(x, -1)` written with reductions: `e = exp(x - max); e / sum(e)`.
fn softmax(x: &Tensor) -> Tensor {
    let e = x.sub(&x.amax(&[-1], true).unwrap()).unwrap().exp().unwrap();
    e.div(&e.sum(&[-1], true).unwrap()).unwrap()
}

/// A layer norm over the last dim written with reductions (no affine).
fn layer_norm(x: &Tensor) -> Tensor {
    let mean = x.mean(&[-1], true).unwrap();
    let centred = x.sub(&mean).unwrap();
    let var = centred.mul(&centred).unwrap().mean(&[-1], true).unwrap();
    centred
        .mul(&var.add(1e-5).unwrap().rsqrt().unwrap())
        .unwrap()
}

/// Kernels of realizing the `.grad` of every leaf after `loss.backward()`.
fn backward_kernels(leaves: &[&Tensor], loss: Tensor) -> usize {
    loss.backward().unwrap();
    let grads: Vec<Tensor> = leaves.iter().map(|l| l.grad().unwrap()).collect();
    let refs: Vec<&Tensor> = grads.iter().collect();
    lazyfuse::realize_all(&refs).unwrap();
    lazyfuse::last_realize_stats().kernels
}

#[test]
fn backward_kernel_counts() {
    lazyfuse::set_cpu_backend(lazyfuse::CpuBackend::Jit);
    let x = leaf(&[64, 128], 0.1);
    // an elementwise chain
    let chain = x
        .mul(2.0)
        .unwrap()
        .exp()
        .unwrap()
        .tanh()
        .unwrap()
        .sum(&[], false)
        .unwrap();
    assert_eq!(backward_kernels(&[&x], chain), 1, "elementwise chain");
    x.set_grad(None).unwrap();
    // softmax and log_softmax
    let w = Tensor::from_vec((0..64 * 128).map(|i| (i % 7) as f32).collect(), &[64, 128]).unwrap();
    let sm = x
        .softmax(1)
        .unwrap()
        .mul(&w)
        .unwrap()
        .sum(&[], false)
        .unwrap();
    assert_eq!(backward_kernels(&[&x], sm), 2, "softmax");
    x.set_grad(None).unwrap();
    let lsm = x
        .log_softmax(1)
        .unwrap()
        .mul(&w)
        .unwrap()
        .sum(&[], false)
        .unwrap();
    assert_eq!(backward_kernels(&[&x], lsm), 2, "log_softmax");
    x.set_grad(None).unwrap();
    // a hand-written layer norm
    let ln = layer_norm(&x);
    let ln_loss = ln.mul(&w).unwrap().sum(&[], false).unwrap();
    assert_eq!(backward_kernels(&[&x], ln_loss), 2, "layer norm");
    x.set_grad(None).unwrap();
    // cross-entropy with class indices
    let y = Tensor::from_vec((0..64).map(|i| (i % 128) as i64).collect(), &[64, 1]).unwrap();
    let ce = x
        .log_softmax(1)
        .unwrap()
        .gather(1, &y)
        .unwrap()
        .mean(&[], false)
        .unwrap()
        .neg()
        .unwrap();
    assert_eq!(backward_kernels(&[&x], ce), 2, "cross-entropy");
    x.set_grad(None).unwrap();
    // a hand-written softmax
    let hsm = softmax(&x);
    let hsm_loss = hsm.mul(&w).unwrap().sum(&[], false).unwrap();
    assert_eq!(backward_kernels(&[&x], hsm_loss), 2, "hand-written softmax");
}

/// Kernels of realizing `t` alone.
fn kernels(t: &Tensor) -> usize {
    t.realize().unwrap();
    lazyfuse::last_realize_stats().kernels
}

#[test]
fn hand_written_row_ops_are_row_kernels() {
    lazyfuse::set_cpu_backend(lazyfuse::CpuBackend::Jit);
    let x = leaf(&[64, 128], 0.3).detach();
    x.realize().unwrap();
    // the exp is read twice (the cost rule stores it): max and exp, then sum and
    // divide
    let sm = softmax(&x);
    assert_eq!(kernels(&sm), 2, "softmax");
    let want = x.softmax(-1).unwrap().to_vec::<f32>().unwrap();
    let got = sm.to_vec::<f32>().unwrap();
    assert!(want.iter().zip(&got).all(|(a, b)| (a - b).abs() <= 1e-6));
    // mean, variance and the normalized values: one kernel of three phases
    let ln = layer_norm(&x);
    assert_eq!(kernels(&ln), 1, "layer norm");
    let xs = x.to_vec::<f32>().unwrap();
    let want: Vec<f32> = xs
        .chunks(128)
        .flat_map(|row| {
            let m = row.iter().map(|&v| v as f64).sum::<f64>() / 128.0;
            let v = row.iter().map(|&v| (v as f64 - m).powi(2)).sum::<f64>() / 128.0;
            row.iter()
                .map(move |&a| ((a as f64 - m) / (v + 1e-5).sqrt()) as f32)
                .collect::<Vec<_>>()
        })
        .collect();
    let got = ln.to_vec::<f32>().unwrap();
    assert!(want.iter().zip(&got).all(|(a, b)| (a - b).abs() <= 1e-4));
    // a reduction over the leading dim is stored, not made a strided row kernel
    let cols = x.div(&x.sum(&[0], true).unwrap()).unwrap();
    assert_eq!(kernels(&cols), 2, "column normalization");
    // over large tensors a row kernel stays one kernel while it has rows enough
    // for the threads (its parallel points) ...
    let big = Tensor::from_vec(vec![0.5f32; 256 * 256], &[256, 256]).unwrap();
    let centred = big.sub(&big.mean(&[-1], true).unwrap()).unwrap();
    assert_eq!(kernels(&centred), 1, "large rows, many");
    assert!(centred.to_vec::<f32>().unwrap().iter().all(|&v| v == 0.0));
    // ... and with few long rows the reduction is stored, so that the
    // elementwise kernel runs in parallel over every element
    let long = Tensor::from_vec(vec![0.5f32; 16 * 4096], &[16, 4096]).unwrap();
    let centred = long.sub(&long.mean(&[-1], true).unwrap()).unwrap();
    assert_eq!(kernels(&centred), 2, "large rows, few");
}

#[test]
fn a_write_through_a_view_then_an_op_is_two_kernels() {
    lazyfuse::set_cpu_backend(lazyfuse::CpuBackend::Jit);
    let base = Tensor::from_vec((0..12).map(|i| i as f32).collect(), &[4, 3]).unwrap();
    let x = Tensor::from_vec(vec![1.0f32; 6], &[2, 3]).unwrap();
    lazyfuse::realize_all(&[&base, &x]).unwrap();
    base.narrow(0, 0, 2).unwrap().add_(&x).unwrap();
    // the op over every point from the old base, then over the written rows
    let doubled = base.mul(2.0).unwrap();
    assert_eq!(kernels(&doubled), 2);
    let want: Vec<f32> = (0..12)
        .map(|i| 2.0 * (i as f32 + if i < 6 { 1.0 } else { 0.0 }))
        .collect();
    assert_eq!(doubled.to_vec::<f32>().unwrap(), want);
    // the write itself is still to come, from the old base
    assert_eq!(kernels(&base), 1);
    let want: Vec<f32> = want.iter().map(|v| v / 2.0).collect();
    assert_eq!(base.to_vec::<f32>().unwrap(), want);
}

#[test]
fn matmul_gradients_need_no_batch_sum_and_no_copy() {
    lazyfuse::set_cpu_backend(lazyfuse::CpuBackend::Jit);
    let x = leaf(&[8, 16, 32], 0.3);
    let w = leaf(&[32, 24], 0.7);
    // a batched input times a weight folds its batch into the product's rows (as
    // PyTorch does): the weight's gradient is one product over all 128 rows, with
    // no sum over the batch after it
    let gy = leaf(&[8, 16, 24], 0.5).detach();
    gy.realize().unwrap();
    x.matmul(&w).unwrap().backward_with(&gy).unwrap();
    let dw = w.grad().unwrap();
    assert_eq!(kernels(&dw), 1, "weight");
    let (dw, xs, gs) = (
        dw.to_vec::<f32>().unwrap(),
        x.detach().to_vec::<f32>().unwrap(),
        gy.to_vec::<f32>().unwrap(),
    );
    for (i, j) in [(0, 0), (5, 17), (31, 23)] {
        let want: f32 = (0..128).map(|r| xs[r * 32 + i] * gs[r * 24 + j]).sum();
        assert!((dw[i * 24 + j] - want).abs() <= 1e-4 * want.abs().max(1.0));
    }
    // a product with a transposed operand (attention's `q @ k^T`) computes that
    // operand's gradient transposed, so it reaches `k` as it lies, and `k`'s own
    // gradient through a folded product needs no copy first: two products
    let h = leaf(&[8, 16, 32], 0.9).detach();
    let (wq, wk) = (leaf(&[32, 32], 0.2), leaf(&[32, 32], 0.4));
    lazyfuse::realize_all(&[&h, &wq, &wk]).unwrap();
    let q = h.matmul(&wq).unwrap().detach();
    q.realize().unwrap();
    let k = h.matmul(&wk).unwrap();
    let gs = leaf(&[8, 16, 16], 0.1).detach();
    gs.realize().unwrap();
    q.matmul(&k.transpose(1, 2).unwrap())
        .unwrap()
        .backward_with(&gs)
        .unwrap();
    assert_eq!(kernels(&wk.grad().unwrap()), 2, "transposed operand");
}
