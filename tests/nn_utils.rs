//! `nn::utils::clip_grad_norm_`: the norm of all gradients together, the in-place
//! scaling only above `max_norm`, parameters without gradients, the infinity
//! norm, and the non-finite error.

use lazyfuse::nn::utils::clip_grad_norm_;
use lazyfuse::Tensor;

fn leaf(v: Vec<f64>) -> Tensor {
    let n = v.len();
    Tensor::from_vec(v, &[n])
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

/// Gives `p` the gradient `g` through a backward of `sum(p·g)`.
fn set_grad(p: &Tensor, g: Vec<f64>) {
    let n = g.len();
    p.mul(&Tensor::from_vec(g, &[n]).unwrap())
        .unwrap()
        .sum(&[], false)
        .unwrap()
        .backward()
        .unwrap();
}

#[test]
fn clips_all_gradients_together_in_place() {
    let (a, b, none) = (leaf(vec![0.0; 2]), leaf(vec![0.0]), leaf(vec![0.0]));
    set_grad(&a, vec![3.0, 0.0]);
    set_grad(&b, vec![4.0]);
    let held = a.grad().unwrap();
    let norm = clip_grad_norm_(&[&a, &none, &b], 2.5, 2.0, false).unwrap();
    assert_eq!(norm.to_vec::<f64>().unwrap(), vec![5.0]);
    let scale = 2.5 / (5.0 + 1e-6);
    assert_eq!(
        held.to_vec::<f64>().unwrap(),
        vec![3.0 * scale, 0.0],
        "in place"
    );
    assert_eq!(
        b.grad().unwrap().to_vec::<f64>().unwrap(),
        vec![4.0 * scale]
    );
    assert!(none.grad().is_none());
    // below the bound: unchanged
    let norm = clip_grad_norm_(&[&a, &b], 10.0, 2.0, false).unwrap();
    assert!((norm.to_vec::<f64>().unwrap()[0] - 2.5).abs() < 1e-5);
    assert_eq!(
        b.grad().unwrap().to_vec::<f64>().unwrap(),
        vec![4.0 * scale]
    );
}

#[test]
fn infinity_norm_and_non_finite_norms() {
    let a = leaf(vec![0.0; 3]);
    set_grad(&a, vec![1.0, -7.0, 2.0]);
    let norm = clip_grad_norm_(&[&a], 1.0, f64::INFINITY, false).unwrap();
    assert_eq!(norm.to_vec::<f64>().unwrap(), vec![7.0]);
    let b = leaf(vec![0.0]);
    set_grad(&b, vec![f64::INFINITY]);
    let err = clip_grad_norm_(&[&b], 1.0, 2.0, true)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("The total norm of order 2 for gradients"),
        "{err}"
    );
    assert_eq!(
        clip_grad_norm_(&[], 1.0, 2.0, false)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![0.0]
    );
}
