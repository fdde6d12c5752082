//! A float matmul reads a transposed, sliced or batch-broadcast operand in place
//! (`gemm` takes strides; no copy kernel first), and computes what the reference
//! interpreter computes on the gathered operands.

use lazyfuse::{DType, Tensor};

fn ramp(shape: &[usize], seed: f64, dtype: DType) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.37 + seed).sin()).collect();
    Tensor::from_vec(v, shape).unwrap().to_dtype(dtype).unwrap()
}

/// The products of operand views, with the kernels each realize took.
fn products(dtype: DType) -> Vec<(Vec<f64>, usize)> {
    let a = ramp(&[24, 16], 0.1, dtype);
    let b = ramp(&[20, 24], 0.2, dtype);
    let c = ramp(&[3, 16, 20], 0.3, dtype);
    let w = ramp(&[20, 12], 0.4, dtype);
    let r = ramp(&[16, 5], 0.5, dtype);
    lazyfuse::realize_all(&[&a, &b, &c, &w, &r]).unwrap();
    let cases = [
        // a^T @ b^T: both operands transposed
        a.t().unwrap().matmul(&b.t().unwrap()).unwrap(),
        // a sliced and transposed operand (an offset)
        a.narrow(0, 4, 16)
            .unwrap()
            .t()
            .unwrap()
            .matmul(
                &b.t()
                    .unwrap()
                    .narrow(0, 2, 16)
                    .unwrap()
                    .narrow(1, 3, 12)
                    .unwrap(),
            )
            .unwrap(),
        // a batched operand with a transposed batch-broadcast weight
        c.matmul(&w.t().unwrap().t().unwrap()).unwrap(),
        c.transpose(1, 2).unwrap().matmul(&r).unwrap(),
    ];
    cases
        .iter()
        .map(|t| {
            t.realize().unwrap();
            let k = lazyfuse::last_realize_stats().kernels;
            let v = t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            (v, k)
        })
        .collect()
}

#[test]
fn strided_operands_are_read_in_place() {
    lazyfuse::set_verify(true);
    lazyfuse::set_cpu_backend(lazyfuse::CpuBackend::Jit);
    for dtype in [DType::F32, DType::F64] {
        lazyfuse::set_math_mode(lazyfuse::MathMode::Fast);
        let fast = products(dtype);
        lazyfuse::set_math_mode(lazyfuse::MathMode::Exact);
        let exact = products(dtype);
        lazyfuse::set_math_mode(lazyfuse::MathMode::Fast);
        for (i, ((f, kf), (e, _))) in fast.iter().zip(&exact).enumerate() {
            // one step: the matmul itself, its operands read where they lie and its
            // product stored straight into the output
            assert_eq!(*kf, 1, "{dtype} case {i}: kernels");
            assert_eq!(f.len(), e.len());
            for (x, y) in f.iter().zip(e) {
                assert!(
                    (x - y).abs() <= 1e-4 * y.abs().max(1.0),
                    "{dtype} case {i}: {x} vs {y}"
                );
            }
        }
    }
}
