//! Channels-last in, channels-last out: convolutions, pools and batch norm keep
//! their input's memory format as PyTorch does (the values equal the contiguous
//! input's), and a contiguous input stays contiguous.

use lazyfuse::nn::functional as F;
use lazyfuse::{DType, MemoryFormat, Tensor};

fn input(shape: &[usize], seed: f32) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::from_vec(
        (0..n).map(|i| (i as f32 * 0.37 + seed).sin()).collect(),
        shape,
    )
    .unwrap()
}

fn nhwc(t: &Tensor) -> Tensor {
    t.contiguous_in(MemoryFormat::ChannelsLast).unwrap()
}

/// `f` of a contiguous and of a channels-last `x`: same values, and each result in
/// its input's format.
fn check(what: &str, x: &Tensor, f: impl Fn(&Tensor) -> Tensor) {
    let plain = f(x);
    let cl = f(&nhwc(x));
    assert!(
        plain.is_contiguous(),
        "{what}: contiguous in, contiguous out"
    );
    assert!(
        cl.is_contiguous_in(MemoryFormat::ChannelsLast) && !cl.is_contiguous(),
        "{what}: channels-last out, strides {:?}",
        cl.strides()
    );
    assert_eq!(
        cl.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap(),
        plain.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap(),
        "{what}"
    );
}

#[test]
fn convolutions_pools_and_batch_norm_keep_channels_last() {
    let x = input(&[2, 3, 6, 6], 0.1);
    let w = input(&[4, 3, 3, 3], 0.5);
    let b = input(&[4], 0.9);
    check("conv2d", &x, |x| {
        F::conv2d(x, &w, Some(&b), &[1], &[1], &[1], 1).unwrap()
    });
    check("conv2d_same", &x, |x| {
        F::conv2d_same(x, &w, None, &[1], &[1], 1).unwrap()
    });
    let wt = input(&[3, 2, 2, 2], 0.7);
    check("conv_transpose2d", &x, |x| {
        F::conv_transpose2d(x, &wt, None, &[2], &[0], &[0], 1, &[1]).unwrap()
    });
    check("max_pool2d", &x, |x| {
        F::max_pool2d(x, &[2], &[], &[0], &[1], false).unwrap()
    });
    check("max_pool2d indices", &x, |x| {
        F::max_pool2d_with_indices(x, &[3], &[2], &[1], &[1], false)
            .unwrap()
            .1
    });
    check("avg_pool2d", &x, |x| {
        F::avg_pool2d(x, &[2], &[], &[1], false, true, None).unwrap()
    });
    check("adaptive_avg_pool2d", &x, |x| {
        F::adaptive_avg_pool2d(x, &[4, 3]).unwrap()
    });
    check("adaptive_max_pool2d", &x, |x| {
        F::adaptive_max_pool2d(x, &[2]).unwrap()
    });
    let (m, v) = (
        Tensor::zeros(&[3], DType::F32),
        Tensor::ones(&[3], DType::F32),
    );
    check("batch_norm eval", &x, |x| {
        F::batch_norm(x, Some(&m), Some(&v), None, None, false, 0.1, 1e-5).unwrap()
    });
    check("batch_norm train", &x, |x| {
        F::batch_norm(x, None, None, None, None, true, 0.1, 1e-5).unwrap()
    });
    // a channels-last weight makes a channels-last output too
    let y = F::conv2d(&x, &nhwc(&w), None, &[1], &[1], &[1], 1).unwrap();
    assert!(y.is_contiguous_in(MemoryFormat::ChannelsLast));
}
