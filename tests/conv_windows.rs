//! A convolution's product reads the windows of its padded input tile by tile
//! (the schedule's `dims=` operand view: the im2col matrix is never stored), from
//! the unpadded input (`zero_padded`: nor is the padded copy), and computes what
//! the reference interpreter computes on the gathered windows.
//! (A binary of its own: the math mode it switches is global.)

use lazyfuse::{DType, Tensor};

fn ramp(shape: &[usize], seed: f64, dtype: DType) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.37 + seed).sin()).collect();
    Tensor::from_vec(v, shape).unwrap().to_dtype(dtype).unwrap()
}

/// Convolutions (forward only: the windows have no other reader; each image's
/// column matrix over 64K elements) whose product reads the windows of the padded
/// input tile by tile (`dims=` in the schedule), with the windows never stored,
/// against exact math (which gathers them whole for the interpreter's product).
fn convolutions(dtype: DType) -> Vec<(Vec<f64>, String)> {
    use lazyfuse::nn::functional as F;
    let x = ramp(&[2, 40, 24, 24], 0.6, dtype);
    let w = ramp(&[7, 40, 3, 3], 0.7, dtype);
    let wg = ramp(&[8, 10, 5, 5], 0.8, dtype);
    let w4 = ramp(&[3, 40, 4, 4], 1.1, dtype);
    let b = ramp(&[7], 0.9, dtype);
    lazyfuse::realize_all(&[&x, &w, &wg, &w4, &b]).unwrap();
    let cases = [
        // k = 360: two tiles of the contracted dim
        F::conv2d(&x, &w, Some(&b), &[1], &[1], &[1], 1).unwrap(),
        F::conv2d(&x, &w, None, &[2, 1], &[0, 2], &[1, 2], 1).unwrap(),
        // "same" with an even kernel pads one more after than before
        F::conv2d_same(&x, &w4, None, &[1], &[1], 1).unwrap(),
        // no padding: the windows of the input itself
        F::conv2d(&x, &w, Some(&b), &[1], &[0], &[1], 1).unwrap(),
        // groups: the windows' channel dim split, the groups the batch of the
        // product (a permute of the windows' reshape)
        F::conv2d(&x, &wg, None, &[1], &[1], &[1], 4).unwrap(),
    ];
    cases
        .iter()
        .map(|t| {
            let text = t.schedule_text().unwrap();
            let v = t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            (v, text)
        })
        .collect()
}

#[test]
fn convolution_windows_are_read_in_tiles() {
    lazyfuse::set_verify(true);
    lazyfuse::set_cpu_backend(lazyfuse::CpuBackend::Jit);
    for dtype in [DType::F32, DType::F64] {
        lazyfuse::set_math_mode(lazyfuse::MathMode::Fast);
        let fast = convolutions(dtype);
        lazyfuse::set_math_mode(lazyfuse::MathMode::Exact);
        let exact = convolutions(dtype);
        lazyfuse::set_math_mode(lazyfuse::MathMode::Fast);
        for (i, ((f, text), (e, exact_text))) in fast.iter().zip(&exact).enumerate() {
            assert!(text.contains("dims=["), "{dtype} case {i}:\n{text}");
            // the padded input is never stored where the windows are read in tiles
            assert_eq!(
                text.contains("zero_padded("),
                i != 3,
                "{dtype} case {i}:\n{text}"
            );
            assert!(!text.contains("write_view"), "{dtype} case {i}:\n{text}");
            assert!(
                !exact_text.contains("dims=["),
                "{dtype} case {i}:\n{exact_text}"
            );
            assert_eq!(f.len(), e.len());
            for (x, y) in f.iter().zip(e) {
                assert!(
                    (x - y).abs() <= 1e-4 * y.abs().max(1.0),
                    "{dtype} case {i}: {x} vs {y}"
                );
            }
        }
    }
    the_gradients_read_their_windows_in_tiles();
}

/// A convolution's two gradients (the input's, a convolution of the padded
/// gradient; the weight's, the windows of the padded input times the gradient,
/// the windows on the left): both read their windows in tiles, from unpadded
/// buffers, with exact math's values.
fn gradients(dtype: DType) -> Vec<(Vec<f64>, String)> {
    use lazyfuse::autograd::grad;
    use lazyfuse::nn::functional as F;
    let x = ramp(&[2, 40, 24, 24], 0.6, dtype)
        .requires_grad_(true)
        .unwrap();
    // 24 output channels: the input gradient's windows pass 64K per image
    let w = ramp(&[24, 40, 3, 3], 0.7, dtype)
        .requires_grad_(true)
        .unwrap();
    let r = ramp(&[2, 24, 24, 24], 0.8, dtype);
    lazyfuse::realize_all(&[&x, &w, &r]).unwrap();
    let y = F::conv2d(&x, &w, None, &[1], &[1], &[1], 1).unwrap();
    let loss = y.mul(&r).unwrap().sum(&[], false).unwrap();
    let grads = grad(&[&loss], &[&x, &w], None, false).unwrap();
    grads
        .iter()
        .map(|g| {
            let g = g.as_ref().unwrap();
            let text = g.schedule_text().unwrap();
            let v = g.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            (v, text)
        })
        .collect()
}

/// (Called by the one test: the math mode is global.)
fn the_gradients_read_their_windows_in_tiles() {
    for dtype in [DType::F32, DType::F64] {
        lazyfuse::set_math_mode(lazyfuse::MathMode::Fast);
        let fast = gradients(dtype);
        lazyfuse::set_math_mode(lazyfuse::MathMode::Exact);
        let exact = gradients(dtype);
        lazyfuse::set_math_mode(lazyfuse::MathMode::Fast);
        for (i, ((f, text), (e, _))) in fast.iter().zip(&exact).enumerate() {
            assert!(text.contains("dims=["), "{dtype} gradient {i}:\n{text}");
            assert!(
                text.contains("zero_padded("),
                "{dtype} gradient {i}:\n{text}"
            );
            assert!(
                !text.contains("write_view"),
                "{dtype} gradient {i}:\n{text}"
            );
            for (x, y) in f.iter().zip(e) {
                assert!(
                    (x - y).abs() <= 1e-3 * y.abs().max(1.0),
                    "{dtype} gradient {i}: {x} vs {y}"
                );
            }
        }
    }
}
