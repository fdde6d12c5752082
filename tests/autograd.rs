//! Autograd's API against PyTorch's behaviour: leaves and their flags, grad mode,
//! in-place rules, `.grad` accumulation and assignment, `autograd::grad` with and
//! without `create_graph` (memory over training steps: `autograd_memory.rs`).

use lazyfuse::{autograd, DType, Tensor};

fn leaf(v: Vec<f32>, shape: &[usize]) -> Tensor {
    Tensor::from_vec(v, shape)
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

fn vals(t: &Tensor) -> Vec<f32> {
    t.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap()
}

#[test]
fn flags_follow_pytorch() {
    lazyfuse::set_verify(true);
    let w = leaf(vec![1.0, 2.0], &[2]);
    assert!(w.requires_grad() && w.is_leaf());
    let y = w.mul(2.0).unwrap();
    assert!(y.requires_grad() && !y.is_leaf());
    let v = w.narrow(0, 0, 1).unwrap();
    assert!(v.requires_grad() && !v.is_leaf());
    let plain = Tensor::zeros(&[2], DType::F32);
    assert!(!plain.requires_grad() && plain.is_leaf());
    assert!(!plain.add(&plain).unwrap().requires_grad());
    // integer and bool results carry no gradient
    assert!(!w.argmax(None, false).unwrap().requires_grad());
    assert!(!w.gt(1.0).unwrap().requires_grad());
    // the flag of a computed tensor cannot be turned off
    let e = y.requires_grad_(false).unwrap_err().to_string();
    assert!(e.starts_with("you can only change requires_grad flags of leaf variables."));
    assert!(y.requires_grad_(true).is_ok());
    let e = Tensor::zeros(&[2], DType::I32)
        .requires_grad_(true)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "only Tensors of floating point dtype can require gradients"
    );
    let c = Tensor::zeros(&[2], DType::C64).requires_grad_(true);
    assert!(c.unwrap_err().is_unsupported());
    // a leaf turned off is a plain tensor again
    let u = leaf(vec![1.0], &[1]);
    u.requires_grad_(false).unwrap();
    assert!(!u.requires_grad() && !u.exp().unwrap().requires_grad());
}

#[test]
fn grad_mode_is_thread_local_and_scoped() {
    let w = leaf(vec![1.0, 2.0], &[2]);
    assert!(lazyfuse::is_grad_enabled());
    let y = lazyfuse::no_grad(|| {
        assert!(!lazyfuse::is_grad_enabled());
        w.mul(3.0).unwrap()
    });
    assert!(lazyfuse::is_grad_enabled());
    assert!(!y.requires_grad());
    let other = std::thread::spawn(|| {
        lazyfuse::set_grad_enabled(false);
        lazyfuse::is_grad_enabled()
    });
    assert!(!other.join().unwrap());
    assert!(lazyfuse::is_grad_enabled());
}

#[test]
fn backward_accumulates_and_errors_as_pytorch() {
    lazyfuse::set_verify(true);
    let x = leaf(vec![1.0, -2.0, 3.0], &[3]);
    let loss = x.mul(&x).unwrap().sum(&[], false).unwrap();
    loss.backward().unwrap();
    assert_eq!(vals(&x.grad().unwrap()), vec![2.0, -4.0, 6.0]);
    // the graph is kept: a second backward adds
    loss.backward().unwrap();
    assert_eq!(vals(&x.grad().unwrap()), vec![4.0, -8.0, 12.0]);
    x.set_grad(None).unwrap();
    assert!(x.grad().is_none());
    let e = x.mul(2.0).unwrap().backward().unwrap_err().to_string();
    assert_eq!(e, "grad can be implicitly created only for scalar outputs");
    let plain = Tensor::ones(&[], DType::F32);
    let e = plain.exp().unwrap().backward().unwrap_err().to_string();
    assert_eq!(
        e,
        "element 0 of tensors does not require grad and does not have a grad_fn"
    );
    let e = x
        .mul(2.0)
        .unwrap()
        .backward_with(&Tensor::ones(&[2], DType::F32))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape of torch.Size([3])."
    );
    // a seed of another dtype is converted
    x.mul(2.0)
        .unwrap()
        .backward_with(&Tensor::ones(&[3], DType::F64))
        .unwrap();
    assert_eq!(x.grad().unwrap().dtype(), DType::F32);
}

#[test]
fn set_grad_checks_dtype_device_and_size() {
    let x = leaf(vec![1.0, 2.0], &[2]);
    let e = x
        .set_grad(Some(&Tensor::zeros(&[2], DType::F64)))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with(
        "attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'."
    ));
    let e = x
        .set_grad(Some(&Tensor::zeros(&[3], DType::F32)))
        .unwrap_err()
        .to_string();
    assert_eq!(e, "attempting to assign a gradient of size '[3]' to a tensor of size '[2]'. Please ensure that the gradient and the tensor are the same size");
    x.set_grad(Some(&Tensor::ones(&[2], DType::F32))).unwrap();
    x.sum(&[], false).unwrap().backward().unwrap();
    assert_eq!(vals(&x.grad().unwrap()), vec![2.0, 2.0]);
}

#[test]
fn inplace_on_leaves_needs_no_grad() {
    lazyfuse::set_verify(true);
    let w = leaf(vec![1.0, 2.0], &[2]);
    let e = w.add_(1.0).unwrap_err().to_string();
    assert_eq!(
        e,
        "a leaf Variable that requires grad is being used in an in-place operation."
    );
    let e = w
        .narrow(0, 0, 1)
        .unwrap()
        .fill_(0.0)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "a view of a leaf Variable that requires grad is being used in an in-place operation."
    );
    // an SGD step: allowed under no_grad, and w stays a leaf that requires grad
    w.mul(&w)
        .unwrap()
        .sum(&[], false)
        .unwrap()
        .backward()
        .unwrap();
    lazyfuse::no_grad(|| w.sub_(&w.grad().unwrap().mul(0.5).unwrap()).unwrap());
    assert_eq!(vals(&w), vec![0.0, 0.0]);
    assert!(w.requires_grad() && w.is_leaf());
    w.set_grad(None).unwrap();
    w.add(1.0)
        .unwrap()
        .sum(&[], false)
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(vals(&w.grad().unwrap()), vec![1.0, 1.0]);
}

#[test]
fn writes_through_views_differentiate_as_copy_slices() {
    lazyfuse::set_verify(true);
    let x = leaf(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let v = leaf(vec![10.0, 20.0], &[2]);
    let y = x.mul(1.0).unwrap();
    y.select(0, 0).unwrap().mul_(&v).unwrap();
    let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    y.mul(&w)
        .unwrap()
        .sum(&[], false)
        .unwrap()
        .backward()
        .unwrap();
    // y[0] = x[0] * v: dx[0] = w[0] * v, dx[1] = w[1], dv = w[0] * x[0]
    assert_eq!(vals(&x.grad().unwrap()), vec![10.0, 40.0, 3.0, 4.0]);
    assert_eq!(vals(&v.grad().unwrap()), vec![1.0, 4.0]);
}

#[test]
fn detach_shares_storage_without_history() {
    let w = leaf(vec![1.0, 2.0], &[2]);
    let d = w.detach();
    assert!(!d.requires_grad() && d.shares_storage(&w));
    let y = w.mul(&d).unwrap().sum(&[], false).unwrap();
    y.backward().unwrap();
    // d is a constant: dy/dw = d
    assert_eq!(vals(&w.grad().unwrap()), vec![1.0, 2.0]);
    // a detached tensor can become a leaf of its own
    let e = d.requires_grad_(true).unwrap();
    assert!(e.is_leaf() && e.requires_grad() && w.requires_grad());
}

#[test]
fn equal_leaves_stay_apart() {
    lazyfuse::set_verify(true);
    let a = leaf(vec![2.0], &[]);
    let b = leaf(vec![2.0], &[]);
    let y = a.mul(3.0).unwrap().add(&b.mul(5.0).unwrap()).unwrap();
    y.backward().unwrap();
    assert_eq!(vals(&a.grad().unwrap()), vec![3.0]);
    assert_eq!(vals(&b.grad().unwrap()), vec![5.0]);
}

#[test]
fn grad_returns_none_for_unused_inputs_and_supports_double_backward() {
    lazyfuse::set_verify(true);
    let x = leaf(vec![1.0, 2.0], &[2]);
    let unused = leaf(vec![1.0], &[1]);
    let y = x.pow(3.0).unwrap().sum(&[], false).unwrap();
    let g = autograd::grad(&[&y], &[&x, &unused], None, true).unwrap();
    assert!(g[1].is_none());
    let gx = g[0].clone().unwrap();
    assert_eq!(vals(&gx), vec![3.0, 12.0]);
    assert!(gx.requires_grad());
    // Hessian-vector product: H v with H = diag(6x)
    let v = Tensor::from_vec(vec![1.0f32, -1.0], &[2]).unwrap();
    let hv = autograd::grad(
        &[&gx.mul(&v).unwrap().sum(&[], false).unwrap()],
        &[&x],
        None,
        false,
    )
    .unwrap()[0]
        .clone()
        .unwrap();
    assert_eq!(vals(&hv), vec![6.0, -12.0]);
    assert!(x.grad().is_none(), "grad() accumulates nothing");
    // gradients of an intermediate tensor
    let h = x.mul(2.0).unwrap();
    let z = h.mul(&h).unwrap().sum(&[], false).unwrap();
    let gh = autograd::grad(&[&z], &[&h], None, false).unwrap()[0]
        .clone()
        .unwrap();
    assert_eq!(vals(&gh), vec![4.0, 8.0]);
}

/// A backward that needs a value an in-place write has since replaced fails with
/// PyTorch's version error, where PyTorch saves that value, and only there.
#[test]
fn overwritten_saved_values_are_pytorchs_version_error() {
    lazyfuse::set_verify(true);
    let hint = "Hint: enable anomaly detection to find the operation that failed to compute \
                its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).";
    // exp saves its result
    let x = leaf(vec![1.0, 1.0, 1.0], &[3]);
    let y = x.exp().unwrap();
    y.add_(1.0).unwrap();
    let e = y
        .sum(&[], false)
        .unwrap()
        .backward()
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "one of the variables needed for gradient computation has been modified by an \
             inplace operation: [torch.FloatTensor [3]], which is output 0 of Exp, is at \
             version 1; expected version 0 instead. {hint}"
        )
    );
    // a leaf updated under no_grad, saved by matmul for the other operand's gradient
    let w = leaf(vec![1.0; 6], &[3, 2]);
    let a = leaf(vec![1.0; 6], &[2, 3]);
    let loss = a.matmul(&w).unwrap().sum(&[], false).unwrap();
    lazyfuse::no_grad(|| w.sub_(0.1).unwrap());
    let e = loss.backward().unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "one of the variables needed for gradient computation has been modified by an \
             inplace operation: [torch.FloatTensor [3, 2]] is at version 1; expected version \
             0 instead. {hint}"
        )
    );
    // not saved when only the leaf itself needs a gradient: PyTorch goes on
    let c = Tensor::ones(&[2, 3], lazyfuse::DType::F32);
    let v = leaf(vec![1.0; 6], &[3, 2]);
    let loss = c
        .matmul(&v)
        .unwrap()
        .tanh()
        .unwrap()
        .sum(&[], false)
        .unwrap();
    lazyfuse::no_grad(|| v.sub_(0.5).unwrap());
    loss.backward().unwrap();
    assert_eq!(v.grad().unwrap().shape(), vec![3, 2]);
    // a product by a number saves nothing of its input
    let x = leaf(vec![1.0, 1.0, 1.0], &[3]);
    let h = x.mul(2.0).unwrap();
    let z = h.mul(3.0).unwrap();
    h.mul_(3.0).unwrap();
    z.sum(&[], false).unwrap().backward().unwrap();
    assert_eq!(vals(&x.grad().unwrap()), vec![6.0, 6.0, 6.0]);
    // a write through a view bumps the base's version
    let x = leaf(vec![1.0, 1.0, 1.0], &[3]);
    let h = x.sigmoid().unwrap();
    let z = h.sum(&[], false).unwrap();
    h.select(0, 0).unwrap().fill_(5.0).unwrap();
    let e = z.backward().unwrap_err().to_string();
    assert!(e.contains("[torch.FloatTensor [3]], which is output 0 of Sigmoid, is at version 1"));
    // an in-place op reads the version it replaces: its own gradient is fine
    let x = leaf(vec![1.0, 2.0], &[2]);
    let w = leaf(vec![3.0, 4.0], &[2]);
    let y = x.mul(1.0).unwrap();
    y.mul_(&w).unwrap();
    y.sum(&[], false).unwrap().backward().unwrap();
    assert_eq!(vals(&w.grad().unwrap()), vec![1.0, 2.0]);
    assert_eq!(vals(&x.grad().unwrap()), vec![3.0, 4.0]);
}
