//! How the backward graph fuses: the kernel count of realizing the gradients of
//! small models, asserted exactly (a change is a decision, not an accident). Each
//! gradient is realized alone, from realized inputs, on the JIT.
//!
//! Where the counts stand against the autograd issue's targets: an elementwise
//! chain's backward is 1 kernel and a hand-written layer norm's 2 (targets 1 and
//! ≤ 3); softmax's and log_softmax's are 3 (target 1–2) and cross-entropy's 6
//! (target ≤ 3): their reduce → elementwise → reduce chains are not yet fused into
//! multi-phase row kernels.

use lazyfuse::Tensor;

fn leaf(shape: &[usize], seed: f32) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37 + seed).sin()).collect();
    Tensor::from_vec(v, shape)
        .unwrap()
        .requires_grad_(true)
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
    assert_eq!(backward_kernels(&[&x], sm), 3, "softmax");
    x.set_grad(None).unwrap();
    let lsm = x
        .log_softmax(1)
        .unwrap()
        .mul(&w)
        .unwrap()
        .sum(&[], false)
        .unwrap();
    assert_eq!(backward_kernels(&[&x], lsm), 3, "log_softmax");
    x.set_grad(None).unwrap();
    // a hand-written layer norm
    let mean = x.mean(&[-1], true).unwrap();
    let centred = x.sub(&mean).unwrap();
    let var = centred.mul(&centred).unwrap().mean(&[-1], true).unwrap();
    let ln = centred
        .mul(&var.add(1e-5).unwrap().rsqrt().unwrap())
        .unwrap();
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
    assert_eq!(backward_kernels(&[&x], ce), 6, "cross-entropy");
}
