//! Trains a two-layer MLP by gradient descent on data it generates (three Gaussian
//! blobs in the plane, one class each) and prints the loss falling.
//!
//! Each step builds the forward pass, calls `backward`, and updates the weights in
//! place under `no_grad`; realizing the weights and the loss together runs the
//! forward, the backward and the update as one fused schedule.
//!
//! `cargo run --release --example train_mlp`

use lazyfuse::{DType, Tensor};

const CLASSES: usize = 3;
const PER_CLASS: usize = 64;
const HIDDEN: usize = 32;

/// Points around three centres, and their class indices.
fn blobs() -> lazyfuse::Result<(Tensor, Tensor)> {
    lazyfuse::manual_seed(7);
    let centres = [(-2.0f32, 0.0f32), (2.0, 1.0), (0.0, -2.5)];
    let noise = Tensor::randn(&[CLASSES * PER_CLASS, 2], DType::F32)?.to_vec::<f32>()?;
    let mut points = Vec::with_capacity(noise.len());
    let mut labels = Vec::with_capacity(CLASSES * PER_CLASS);
    for (c, (cx, cy)) in centres.iter().enumerate() {
        for i in 0..PER_CLASS {
            let k = 2 * (c * PER_CLASS + i);
            points.push(cx + 0.7 * noise[k]);
            points.push(cy + 0.7 * noise[k + 1]);
            labels.push(c as i64);
        }
    }
    Ok((
        Tensor::from_vec(points, &[CLASSES * PER_CLASS, 2])?,
        Tensor::from_vec(labels, &[CLASSES * PER_CLASS, 1])?,
    ))
}

/// A weight matrix of `[fan_in, fan_out]` with variance `1 / fan_in`, as a leaf.
fn weight(fan_in: usize, fan_out: usize) -> lazyfuse::Result<Tensor> {
    Tensor::randn(&[fan_in, fan_out], DType::F32)?
        .mul(1.0 / (fan_in as f64).sqrt())?
        .requires_grad_(true)
}

fn main() -> lazyfuse::Result<()> {
    let (x, y) = blobs()?;
    let w1 = weight(2, HIDDEN)?;
    let b1 = Tensor::zeros(&[HIDDEN], DType::F32).requires_grad_(true)?;
    let w2 = weight(HIDDEN, CLASSES)?;
    let b2 = Tensor::zeros(&[CLASSES], DType::F32).requires_grad_(true)?;
    let params = [&w1, &b1, &w2, &b2];
    lazyfuse::realize_all(&params)?;
    let lr = 0.5;
    for step in 0..=200 {
        // forward: cross-entropy of the logits against the labels
        let hidden = x.matmul(&w1)?.add(&b1)?.tanh()?;
        let logits = hidden.matmul(&w2)?.add(&b2)?;
        let loss = logits
            .log_softmax(1)?
            .gather(1, &y)?
            .mean(&[], false)?
            .neg()?;
        loss.backward()?;
        // the update, under no_grad, and the gradients cleared for the next step
        lazyfuse::no_grad(|| -> lazyfuse::Result<()> {
            for p in params {
                if let Some(g) = p.grad() {
                    p.sub_(&g.mul(lr)?)?;
                }
                p.set_grad(None)?;
            }
            Ok(())
        })?;
        let mut realized: Vec<&Tensor> = params.to_vec();
        realized.push(&loss);
        lazyfuse::realize_all(&realized)?;
        if step % 20 == 0 {
            let value = loss.to_vec::<f32>()?[0];
            println!("step {step:3}  loss {value:.4}");
        }
    }
    let hidden = x.matmul(&w1)?.add(&b1)?.tanh()?;
    let predicted = hidden.matmul(&w2)?.add(&b2)?.argmax(Some(1), true)?;
    let correct = predicted.eq(&y)?.sum(&[], false)?.to_vec::<i64>()?[0];
    println!(
        "accuracy {correct}/{} on the training points",
        CLASSES * PER_CLASS
    );
    Ok(())
}
