//! The convolutions' own derivative (a transposed convolution for the input, a
//! product with the input's windows for the weight) against central finite
//! differences in float64, over strides, asymmetric padding, dilation, groups and
//! inputs whose last rows no window reaches; and a second derivative through it.

use lazyfuse::autograd::grad;
use lazyfuse::nn::functional as F;
use lazyfuse::Tensor;

fn values(n: usize, seed: f64) -> Vec<f64> {
    (0..n).map(|i| (i as f64 * 0.731 + seed).sin()).collect()
}

fn leaf(shape: &[usize], seed: f64) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_vec(values(n, seed), shape)
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

/// `sum(f(x, w) · r)` for a fixed `r`, its analytic gradients, and central
/// differences of each element of `x` and `w`.
fn check(what: &str, x_shape: &[usize], w_shape: &[usize], f: &dyn Fn(&Tensor, &Tensor) -> Tensor) {
    let (x, w) = (leaf(x_shape, 0.3), leaf(w_shape, 1.1));
    let y = f(&x, &w);
    let r = Tensor::from_vec(values(y.numel(), 2.0), &y.shape()).unwrap();
    let loss = |x: &Tensor, w: &Tensor| -> f64 {
        f(x, w)
            .mul(&r)
            .unwrap()
            .sum(&[], false)
            .unwrap()
            .to_vec::<f64>()
            .unwrap()[0]
    };
    y.mul(&r)
        .unwrap()
        .sum(&[], false)
        .unwrap()
        .backward()
        .unwrap();
    for (name, t, other, is_x) in [("input", &x, &w, true), ("weight", &w, &x, false)] {
        let analytic = t.grad().unwrap().to_vec::<f64>().unwrap();
        let base = t.detach().to_vec::<f64>().unwrap();
        let eps = 1e-6;
        for i in 0..base.len() {
            let at = |d: f64| {
                let mut v = base.clone();
                v[i] += d;
                let moved = Tensor::from_vec(v, &t.shape()).unwrap();
                let other = other.detach();
                if is_x {
                    loss(&moved, &other)
                } else {
                    loss(&other, &moved)
                }
            };
            let numeric = (at(eps) - at(-eps)) / (2.0 * eps);
            assert!(
                (numeric - analytic[i]).abs() <= 1e-6 * numeric.abs().max(1.0),
                "{what}: d/d{name}[{i}]: analytic {} vs numeric {numeric}",
                analytic[i]
            );
        }
    }
}

#[test]
fn conv2d_gradients_match_finite_differences() {
    check(
        "stride, padding, dilation, groups",
        &[2, 4, 7, 6],
        &[6, 2, 3, 2],
        &|x, w| F::conv2d(x, w, None, &[2, 1], &[1, 2], &[2, 1], 2).unwrap(),
    );
    // stride 3 over 8 rows: the last rows are in no window
    check("unreached rows", &[1, 2, 8, 5], &[3, 2, 2, 2], &|x, w| {
        F::conv2d(x, w, None, &[3], &[0], &[1], 1).unwrap()
    });
    check(
        "same, even kernel",
        &[1, 3, 5, 4],
        &[2, 3, 2, 4],
        &|x, w| F::conv2d_same(x, w, None, &[1], &[1], 1).unwrap(),
    );
    check("conv1d", &[2, 2, 9], &[4, 1, 3], &|x, w| {
        F::conv1d(x, w, None, &[2], &[1], &[1], 2).unwrap()
    });
    check("transposed", &[1, 4, 3, 4], &[4, 3, 3, 2], &|x, w| {
        F::conv_transpose2d(x, w, None, &[2], &[1], &[1], 2, &[1]).unwrap()
    });
}

#[test]
fn a_second_derivative_goes_through_the_convolution() {
    let x = leaf(&[1, 2, 5, 5], 0.2);
    let w = leaf(&[3, 2, 3, 3], 0.9);
    let y = F::conv2d(&x, &w, None, &[1], &[1], &[1], 1).unwrap();
    let loss = y.square().unwrap().sum(&[], false).unwrap();
    let gx = grad(&[&loss], &[&x], None, true).unwrap()[0]
        .clone()
        .unwrap();
    // d/dw of sum(gx): gx = 2·convT(y, w) is bilinear in w through y
    let gw = grad(&[&gx.sum(&[], false).unwrap()], &[&w], None, false).unwrap()[0]
        .clone()
        .unwrap();
    assert_eq!(gw.shape(), vec![3, 2, 3, 3]);
    assert!(gw.to_vec::<f64>().unwrap().iter().any(|v| v.abs() > 1e-3));
}
