//! A host product applies the elementwise readers of its result (a bias added
//! along its rows or columns, a residual, a ReLU) to each block in cache: the
//! schedule shows them as `then …` on the extern step, and the values are those
//! of the unfused kernels bit for bit (the product stored as a target of its own
//! keeps them apart).

use lazyfuse::nn::functional as F;
use lazyfuse::{DType, Tensor};

fn ramp(shape: &[usize], seed: f64, dtype: DType) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.37 + seed).sin()).collect();
    let t = Tensor::from_vec(v, shape).unwrap().to_dtype(dtype).unwrap();
    t.realize().unwrap();
    t
}

fn bits(t: &Tensor) -> Vec<u64> {
    match t.dtype() {
        DType::F32 => t
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits() as u64)
            .collect(),
        _ => t
            .to_vec::<f64>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect(),
    }
}

/// `f`'s result with its product's readers in the epilogue (the schedule says
/// `then`, `epilogue` of them) against the same with the product stored as a
/// target of its own: the same bits.
fn check(name: &str, epilogue: usize, f: &dyn Fn() -> (Tensor, Tensor)) {
    let (_, fused) = f();
    let text = fused.schedule_text().unwrap();
    assert_eq!(text.matches(" then ").count(), epilogue, "{name}:\n{text}");
    let (product, plain) = f();
    lazyfuse::realize_all(&[&product, &plain]).unwrap();
    assert_eq!(bits(&fused), bits(&plain), "{name}");
}

#[test]
fn a_product_applies_its_readers_to_each_block() {
    lazyfuse::set_verify(true);
    for dt in [DType::F32, DType::F64] {
        let x = ramp(&[6, 7], 0.1, dt);
        let w = ramp(&[5, 7], 0.2, dt);
        let b = ramp(&[5], 0.3, dt);
        // a linear layer: a bias per column, then ReLU
        check("linear", 2, &|| {
            let p = x.matmul(&w.t().unwrap()).unwrap();
            (p.clone(), p.add(&b).unwrap().relu().unwrap())
        });
        // F::linear as written (the product is its own node's reshape)
        check("F::linear", 1, &|| {
            let p = x.matmul(&w.t().unwrap()).unwrap();
            (p, F::linear(&x, &w, Some(&b)).unwrap())
        });
        // a residual of the product's shape, read transposed; ReLU first
        let r = ramp(&[5, 6], 0.4, dt);
        check("residual", 2, &|| {
            let p = x.matmul(&w.t().unwrap()).unwrap();
            (p.clone(), p.relu().unwrap().add(&r.t().unwrap()).unwrap())
        });
        // a batched product, ReLU alone
        let xb = ramp(&[3, 4, 9], 0.5, dt);
        let wb = ramp(&[3, 9, 8], 0.6, dt);
        check("batched", 1, &|| {
            let p = xb.matmul(&wb).unwrap();
            (p.clone(), p.relu().unwrap())
        });
        // convolutions: a bias per output channel (a row of the product), then
        // ReLU; small images (the windows stored) and large (read in tiles)
        for (shape, wshape) in [
            ([2, 3, 6, 6], [4, 3, 3, 3]),
            ([2, 40, 24, 24], [7, 40, 3, 3]),
        ] {
            let xi = ramp(&shape, 0.7, dt);
            let wi = ramp(&wshape, 0.8, dt);
            let bi = ramp(&[wshape[0]], 0.9, dt);
            check("conv2d", 2, &|| {
                let p = F::conv2d(&xi, &wi, None, &[1], &[1], &[1], 1).unwrap();
                let with_bias = F::conv2d(&xi, &wi, Some(&bi), &[1], &[1], &[1], 1).unwrap();
                (p, with_bias.relu().unwrap())
            });
        }
    }
}

#[test]
fn a_negative_zero_sum_plus_a_negative_zero_bias_is_positive_zero() {
    // PyTorch's sum starts from +0: (+0) + (-0) = +0, then + (-0) = +0
    let x = Tensor::from_vec(vec![-1.0f32], &[1, 1]).unwrap();
    let w = Tensor::from_vec(vec![0.0f32], &[1, 1]).unwrap();
    let b = Tensor::from_vec(vec![-0.0f32], &[1]).unwrap();
    let y = x.matmul(&w).unwrap().add(&b).unwrap();
    assert!(y.schedule_text().unwrap().contains(" then add"));
    assert_eq!(y.to_vec::<f32>().unwrap()[0].to_bits(), 0.0f32.to_bits());
}

#[test]
fn readers_that_do_not_fit_stay_kernels() {
    let x = ramp(&[6, 7], 0.1, DType::F32);
    let w = ramp(&[7, 5], 0.2, DType::F32);
    // a float64 bias promotes the sum: not the product's dtype
    let b64 = ramp(&[5], 0.3, DType::F64);
    let y = x.matmul(&w).unwrap().add(&b64).unwrap();
    assert!(!y.schedule_text().unwrap().contains(" then "));
    // a product read twice is stored
    let p = x.matmul(&w).unwrap();
    let y = p.relu().unwrap().add(&p).unwrap();
    assert!(!y.schedule_text().unwrap().contains(" then "));
    // a reader of another op: the chain stops before it
    let y = x.matmul(&w).unwrap().relu().unwrap().exp().unwrap();
    let text = y.schedule_text().unwrap();
    assert_eq!(text.matches(" then ").count(), 1, "{text}");
}
