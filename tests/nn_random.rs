//! The random parts of `lazyfuse::nn`: dropout's mask (repeatable under
//! `manual_seed`, the same for the value and the gradient), attention's dropout,
//! and the in-place initializers `uniform_`/`normal_` (PyTorch's leaf rule: only
//! under `no_grad` on a leaf that requires grad).

use lazyfuse::nn::functional as F;
use lazyfuse::{manual_seed, DType, Tensor};

#[test]
fn dropout_masks_value_and_gradient_alike_and_repeats_under_a_seed() {
    let x = Tensor::ones(&[4, 64], DType::F32)
        .requires_grad_(true)
        .unwrap();
    manual_seed(11);
    let y = F::dropout(&x, 0.5, true).unwrap();
    y.sum(&[], false).unwrap().backward().unwrap();
    let (values, grad) = (
        y.to_vec::<f32>().unwrap(),
        x.grad().unwrap().to_vec::<f32>().unwrap(),
    );
    // d(sum(x·mask/(1-p)))/dx = mask/(1-p): the value itself, as x is ones
    assert_eq!(values, grad);
    assert!(values.iter().all(|&v| v == 0.0 || v == 2.0));
    assert!(values.contains(&0.0) && values.contains(&2.0));
    manual_seed(11);
    let again = F::dropout(&Tensor::ones(&[4, 64], DType::F32), 0.5, true).unwrap();
    assert_eq!(again.to_vec::<f32>().unwrap(), values);
    assert_eq!(
        F::dropout(&x, 1.0, true).unwrap().to_vec::<f32>().unwrap(),
        vec![0.0; 256]
    );
}

#[test]
fn attention_dropout_drops_weights() {
    let q = Tensor::ones(&[1, 4, 8], DType::F32);
    let (k, v) = (
        Tensor::ones(&[1, 16, 8], DType::F32),
        Tensor::ones(&[1, 16, 2], DType::F32),
    );
    let plain = F::scaled_dot_product_attention(&q, &k, &v, None, 0.0, false, None).unwrap();
    assert_eq!(plain.to_vec::<f32>().unwrap(), vec![1.0; 8]);
    manual_seed(3);
    let dropped = F::scaled_dot_product_attention(&q, &k, &v, None, 0.5, false, None).unwrap();
    let d = dropped.to_vec::<f32>().unwrap();
    // each output is the kept weights (1/16 each) scaled by 2: a multiple of 1/8
    assert!(d
        .iter()
        .all(|&x| ((x * 8.0).round() - x * 8.0).abs() < 1e-5));
    assert_ne!(d, vec![1.0; 8]);
    let none = F::scaled_dot_product_attention(&q, &k, &v, None, 1.0, false, None).unwrap();
    assert_eq!(none.to_vec::<f32>().unwrap(), vec![0.0; 8]);
}

#[test]
fn initializers_fill_in_place_under_pytorchs_leaf_rule() {
    manual_seed(5);
    let w = Tensor::zeros(&[256], DType::F64)
        .requires_grad_(true)
        .unwrap();
    assert!(w.uniform_(-1.0, 1.0).is_err(), "a leaf that requires grad");
    lazyfuse::no_grad(|| w.uniform_(-1.0, 1.0)).unwrap();
    let u = w.to_vec::<f64>().unwrap();
    assert!(u.iter().all(|v| (-1.0..1.0).contains(v)));
    assert!(u.iter().any(|&v| v < -0.5) && u.iter().any(|&v| v > 0.5));
    lazyfuse::no_grad(|| w.normal_(0.0, 2.0)).unwrap();
    let n = w.to_vec::<f64>().unwrap();
    let var = n.iter().map(|v| v * v).sum::<f64>() / n.len() as f64;
    assert!((2.5..6.0).contains(&var), "variance {var}");
    assert!(w.requires_grad() && w.is_leaf());
    let i = Tensor::zeros(&[2], DType::I64);
    assert_eq!(
        i.uniform_(0.0, 1.0).unwrap_err().to_string(),
        "\"check_uniform_bounds\" not implemented for 'Long'"
    );
}
