//! Trains a small CNN on the 1,797 handwritten 8×8 digits that scikit-learn ships
//! (`examples/data/digits.csv.gz`), split 80/20: it prints the loss per epoch and
//! the test accuracy, saves the weights to a safetensors file, loads them into a
//! fresh model and checks that it predicts the same.
//!
//! The model is `lazyfuse::nn` modules in a `Sequential` (conv, ReLU, max-pool,
//! conv, ReLU, linear), trained by `optim::Adam` with a cosine schedule. Each step
//! builds the forward pass, calls `backward`, and `step_and_realize` realizes the
//! updated parameters, the optimizer's state and the loss in one pass.
//!
//! `cargo run --release --example train_digits [-- --epochs N]` (default 15)

use flate2::read::GzDecoder;
use lazyfuse::io::{load_safetensors, save_safetensors};
use lazyfuse::nn::functional::{self as F, Reduction};
use lazyfuse::nn::{Conv2d, Conv2dOptions, Flatten, Linear, MaxPool2d, Module, ReLU, Sequential};
use lazyfuse::optim::{Adam, AdamConfig, CosineAnnealingLR, LrScheduler, Optimizer};
use lazyfuse::{Result, Tensor};
use std::collections::HashMap;
use std::io::Read;
use std::time::Instant;

const BATCH: usize = 64;

/// The digits: pixels (0–16) scaled to [0, 1] as `[n, 1, 8, 8]`, and labels.
struct Digits {
    images: Vec<f32>,
    labels: Vec<i64>,
}

impl Digits {
    fn load() -> std::io::Result<Digits> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/digits.csv.gz");
        let mut text = String::new();
        GzDecoder::new(std::fs::File::open(path)?).read_to_string(&mut text)?;
        let (mut images, mut labels) = (Vec::new(), Vec::new());
        for line in text.lines().filter(|l| !l.is_empty()) {
            let fields: Vec<f32> = line
                .split(',')
                .map(|v| v.trim().parse::<f32>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            if fields.len() != 65 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("a row of {} fields, not 65", fields.len()),
                ));
            }
            images.extend(fields[..64].iter().map(|p| p / 16.0));
            labels.push(fields[64] as i64);
        }
        Ok(Digits { images, labels })
    }

    fn len(&self) -> usize {
        self.labels.len()
    }

    /// The samples at `indices` as an image batch and a label vector.
    fn batch(&self, indices: &[usize]) -> Result<(Tensor, Tensor)> {
        let mut x = Vec::with_capacity(indices.len() * 64);
        for &i in indices {
            x.extend_from_slice(&self.images[i * 64..(i + 1) * 64]);
        }
        let y: Vec<i64> = indices.iter().map(|&i| self.labels[i]).collect();
        Ok((
            Tensor::from_vec(x, &[indices.len(), 1, 8, 8])?,
            Tensor::from_vec(y, &[indices.len()])?,
        ))
    }
}

/// A deterministic shuffle (xorshift), so the split and the batches repeat.
fn shuffle(v: &mut [usize], seed: &mut u64) {
    for i in (1..v.len()).rev() {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        v.swap(i, (*seed % (i as u64 + 1)) as usize);
    }
}

fn model() -> Result<Sequential> {
    let pad = Conv2dOptions::default().padding(1);
    Ok(Sequential::new()
        .append(Conv2d::new(1, 16, &[3], pad)?)
        .append(ReLU::new())
        .append(MaxPool2d::new(&[2]))
        .append(Conv2d::new(16, 32, &[3], pad)?)
        .append(ReLU::new())
        .append(Flatten::new())
        .append(Linear::new(32 * 4 * 4, 10, true)?))
}

/// The fraction of `indices` the model classifies right.
fn accuracy(model: &Sequential, data: &Digits, indices: &[usize]) -> Result<f64> {
    let (x, y) = data.batch(indices)?;
    let predicted = model.forward(&x)?.argmax(Some(1), false)?;
    let right = predicted.eq(&y)?.sum(&[], false)?.to_vec::<i64>()?[0];
    Ok(right as f64 / indices.len() as f64)
}

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let epochs = match args.iter().position(|a| a == "--epochs") {
        Some(i) => args.get(i + 1).ok_or("--epochs needs a count")?.parse()?,
        None => 15,
    };
    let data = Digits::load()?;
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut order: Vec<usize> = (0..data.len()).collect();
    shuffle(&mut order, &mut seed);
    let split = data.len() * 4 / 5;
    let (mut train, test) = (order[..split].to_vec(), order[split..].to_vec());
    println!("digits: {} train, {} test", train.len(), test.len());

    lazyfuse::manual_seed(0);
    let net = model()?;
    let config = AdamConfig {
        lr: 5e-3,
        ..Default::default()
    };
    let mut opt = Adam::new(net.parameters(), config)?;
    let mut schedule = CosineAnnealingLR::new(&opt, epochs.max(1), 1e-4)?;
    let start = Instant::now();
    for epoch in 1..=epochs {
        shuffle(&mut train, &mut seed);
        let (mut total, mut batches) = (0.0f64, 0usize);
        for chunk in train.chunks(BATCH) {
            let (x, y) = data.batch(chunk)?;
            opt.zero_grad()?;
            let loss = F::cross_entropy(&net.forward(&x)?, &y, None, -100, Reduction::Mean, 0.0)?;
            loss.backward()?;
            opt.step_and_realize(&[&loss])?;
            total += loss.to_vec::<f32>()?[0] as f64;
            batches += 1;
        }
        schedule.step(&mut opt);
        println!(
            "epoch {epoch:2}: loss {:.4}  ({:.1} s)",
            total / batches as f64,
            start.elapsed().as_secs_f64()
        );
    }
    net.eval();
    let acc = accuracy(&net, &data, &test)?;
    println!("test accuracy: {:.2}% ({} images)", acc * 100.0, test.len());

    let path =
        std::env::temp_dir().join(format!("train_digits_{}.safetensors", std::process::id()));
    let weights: HashMap<String, Tensor> = net.state_dict().into_iter().collect();
    save_safetensors(&path, &weights)?;
    let restored = model()?;
    restored.load_state_dict(&load_safetensors(&path)?, true)?;
    std::fs::remove_file(&path)?;
    restored.eval();
    let again = accuracy(&restored, &data, &test)?;
    println!(
        "saved {} tensors to safetensors and loaded them back: test accuracy {:.2}%",
        weights.len(),
        again * 100.0
    );
    if again != acc {
        return Err("the restored model predicts differently".into());
    }
    Ok(())
}
