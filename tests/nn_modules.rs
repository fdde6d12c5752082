//! `lazyfuse::nn`'s modules: PyTorch's dotted names and state-dict order,
//! `load_state_dict`'s reports, train/eval through containers, the default
//! initializations' ranges, and a model PyTorch saved with
//! `safetensors.torch.save_file` (`tests/data/training/model.safetensors`, by
//! `scripts/gen_training_data.py`) giving PyTorch's outputs.

use lazyfuse::io::load_safetensors;
use lazyfuse::nn::{
    BatchNorm2d, Conv2d, Conv2dOptions, Dropout, Embedding, Flatten, LayerNorm, Linear, MaxPool2d,
    Module, ReLU, Sequential, TrainingFlag,
};
use lazyfuse::{DType, Tensor};
use std::collections::HashMap;

fn data(name: &str) -> String {
    format!("{}/tests/data/training/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn names(pairs: Vec<(String, Tensor)>) -> Vec<String> {
    pairs.into_iter().map(|(n, _)| n).collect()
}

/// A model of the user's own: a `layers` child and a parameter of its own.
struct Net {
    scale: Tensor,
    layers: Sequential,
    training: TrainingFlag,
}

impl Module for Net {
    fn forward(&self, input: &Tensor) -> lazyfuse::Result<Tensor> {
        self.layers.forward(&input.mul(&self.scale)?)
    }

    fn own_parameters(&self) -> Vec<(String, Tensor)> {
        vec![("scale".into(), self.scale.clone())]
    }

    fn children(&self) -> Vec<(String, &dyn Module)> {
        vec![("layers".into(), &self.layers)]
    }

    fn training_flag(&self) -> Option<&TrainingFlag> {
        Some(&self.training)
    }
}

fn net() -> Net {
    Net {
        scale: Tensor::ones(&[1], DType::F32).requires_grad_(true).unwrap(),
        layers: Sequential::new()
            .append(Linear::new(4, 8, true).unwrap())
            .append(Dropout::new(0.5).unwrap())
            .append(Linear::new(8, 3, true).unwrap())
            .append(Sequential::new().append(BatchNorm2d::new(3).unwrap())),
        training: TrainingFlag::new(),
    }
}

#[test]
fn dotted_names_in_pytorch_order() {
    let n = net();
    assert_eq!(
        names(n.named_parameters()),
        [
            "scale",
            "layers.0.weight",
            "layers.0.bias",
            "layers.2.weight",
            "layers.2.bias",
            "layers.3.0.weight",
            "layers.3.0.bias"
        ]
    );
    assert_eq!(
        names(n.named_buffers()),
        [
            "layers.3.0.running_mean",
            "layers.3.0.running_var",
            "layers.3.0.num_batches_tracked"
        ]
    );
    assert_eq!(n.state_dict().len(), 10);
    assert_eq!(n.parameters().len(), 7);
    // a state dict's tensors are detached aliases: writes reach the module
    let sd: HashMap<String, Tensor> = n.state_dict().into_iter().collect();
    assert!(!sd["layers.0.weight"].requires_grad());
    assert!(sd["layers.0.weight"].shares_storage(&n.parameters()[1]));
}

#[test]
fn train_and_eval_reach_every_descendant() {
    let n = net();
    assert!(n.is_training() && n.layers.get(1).unwrap().is_training());
    n.eval();
    assert!(!n.is_training());
    for (_, child) in n.layers.children() {
        assert!(!child.is_training());
    }
    // dropout is the identity in eval mode
    let x = Tensor::ones(&[5, 4], DType::F32);
    let a = n.layers.get(1).unwrap().forward(&x).unwrap();
    assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0; 20]);
    n.train(true);
    assert!(n.layers.get(3).unwrap().is_training());
}

#[test]
fn load_state_dict_reports_as_pytorch() {
    let m = Linear::new(3, 2, true).unwrap();
    let sd = HashMap::from([
        ("weight".to_string(), Tensor::zeros(&[3, 2], DType::F32)),
        ("extra".to_string(), Tensor::zeros(&[1], DType::F32)),
        ("zz".to_string(), Tensor::zeros(&[1], DType::F32)),
    ]);
    let before = m.weight.to_vec::<f32>().unwrap();
    let err = m.load_state_dict(&sd, true).unwrap_err().to_string();
    assert_eq!(
        err,
        "Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: \"bias\". \n\tUnexpected key(s) in state_dict: \"extra\", \"zz\". \n\tsize mismatch for weight: copying a param with shape torch.Size([3, 2]) from checkpoint, the shape in current model is torch.Size([2, 3])."
    );
    // shape mismatches fail even when not strict; nothing was copied
    let err = m.load_state_dict(&sd, false).unwrap_err().to_string();
    assert!(
        err.ends_with("the shape in current model is torch.Size([2, 3])."),
        "{err}"
    );
    assert_eq!(m.weight.to_vec::<f32>().unwrap(), before);
    // not strict: the keys that match load, the rest is reported
    let sd = HashMap::from([
        ("weight".to_string(), Tensor::ones(&[2, 3], DType::F64)),
        ("extra".to_string(), Tensor::zeros(&[1], DType::F32)),
    ]);
    let keys = m.load_state_dict(&sd, false).unwrap();
    assert_eq!(keys.missing_keys, ["bias"]);
    assert_eq!(keys.unexpected_keys, ["extra"]);
    assert_eq!(m.weight.to_vec::<f32>().unwrap(), vec![1.0; 6]); // converted
    assert!(m.weight.requires_grad());
}

#[test]
fn state_dict_round_trips_through_safetensors() {
    let a = net();
    let path =
        std::env::temp_dir().join(format!("lazyfuse_round_{}.safetensors", std::process::id()));
    let sd: HashMap<String, Tensor> = a.state_dict().into_iter().collect();
    lazyfuse::io::save_safetensors(&path, &sd).unwrap();
    let b = net();
    let keys = b
        .load_state_dict(&load_safetensors(&path).unwrap(), true)
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(keys, Default::default());
    a.eval();
    b.eval();
    let x = Tensor::from_vec((0..8).map(|i| i as f32 * 0.3 - 1.0).collect(), &[2, 4]).unwrap();
    // [2, 3] through BatchNorm2d needs 4-D: run the layers before it
    let upto = |n: &Net| {
        let h = n
            .layers
            .get(0)
            .unwrap()
            .forward(&x.mul(&n.scale).unwrap())
            .unwrap();
        n.layers
            .get(2)
            .unwrap()
            .forward(&h)
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
    };
    assert_eq!(upto(&a), upto(&b));
}

/// PyTorch's model of `gen_training_data.py`.
fn torch_model() -> Sequential {
    Sequential::new()
        .append(Conv2d::new(1, 4, &[3], Conv2dOptions::default().padding(1)).unwrap())
        .append(BatchNorm2d::new(4).unwrap())
        .append(ReLU::new())
        .append(MaxPool2d::new(&[2]))
        .append(Flatten::new())
        .append(Linear::new(4 * 4 * 4, 10, true).unwrap())
}

fn assert_close(what: &str, got: &Tensor, want: &Tensor, tol: f32) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    let (g, w) = (got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            (a - b).abs() <= tol * b.abs().max(1.0),
            "{what}[{i}]: {a} vs PyTorch {b}"
        );
    }
}

#[test]
fn a_pytorch_state_dict_loads_and_gives_pytorch_outputs() {
    let state = load_safetensors(data("model.safetensors")).unwrap();
    let io = load_safetensors(data("model_io.safetensors")).unwrap();
    let model = torch_model();
    let mut expected: Vec<String> = names(model.state_dict());
    expected.sort();
    let mut found: Vec<String> = state.keys().cloned().collect();
    found.sort();
    assert_eq!(found, expected);
    model.load_state_dict(&state, true).unwrap();
    model.eval();
    assert_close(
        "eval",
        &model.forward(&io["input"]).unwrap(),
        &io["output_eval"],
        1e-5,
    );
    model.train(true);
    assert_close(
        "train",
        &model.forward(&io["input"]).unwrap(),
        &io["output_train"],
        1e-5,
    );
    let sd: HashMap<String, Tensor> = model.state_dict().into_iter().collect();
    assert_close(
        "running_mean",
        &sd["1.running_mean"],
        &io["running_mean_after"],
        1e-5,
    );
    assert_close(
        "running_var",
        &sd["1.running_var"],
        &io["running_var_after"],
        1e-5,
    );
    assert_eq!(
        sd["1.num_batches_tracked"].to_vec::<i64>().unwrap(),
        vec![8]
    );
}

#[test]
fn default_initializations_have_pytorch_bounds() {
    lazyfuse::manual_seed(3);
    let fc = Linear::new(100, 50, true).unwrap();
    let bound = 0.1; // 1 / sqrt(100)
    for t in [&fc.weight, fc.bias.as_ref().unwrap()] {
        let v = t.to_vec::<f32>().unwrap();
        assert!(v.iter().all(|x| x.abs() <= bound));
        assert!(
            v.iter().any(|x| x.abs() > 0.8 * bound),
            "spread over the range"
        );
    }
    let conv = Conv2d::new(8, 4, &[3, 2], Conv2dOptions::default().groups(2)).unwrap();
    assert_eq!(conv.weight.shape(), vec![4, 4, 3, 2]);
    let bound = 1.0 / (24f32).sqrt();
    let v = conv.weight.to_vec::<f32>().unwrap();
    assert!(v.iter().all(|x| x.abs() <= bound) && v.iter().any(|x| x.abs() > 0.8 * bound));
    let bn = BatchNorm2d::new(3).unwrap();
    assert_eq!(
        bn.weight.as_ref().unwrap().to_vec::<f32>().unwrap(),
        vec![1.0; 3]
    );
    assert_eq!(
        bn.running_var.as_ref().unwrap().to_vec::<f32>().unwrap(),
        vec![1.0; 3]
    );
    let ln = LayerNorm::with_options(&[4], 1e-5, true, false).unwrap();
    assert_eq!(names(ln.named_parameters()), ["weight"]);
    let emb = Embedding::new(1000, 4, Some(-1)).unwrap();
    assert_eq!(emb.padding_idx, Some(999));
    let w = emb.weight.to_vec::<f32>().unwrap();
    assert_eq!(&w[999 * 4..], &[0.0; 4]);
    let mean = w.iter().sum::<f32>() / w.len() as f32;
    let var = w.iter().map(|x| (x - mean).powi(2)).sum::<f32>() / w.len() as f32;
    assert!(
        mean.abs() < 0.1 && (var - 1.0).abs() < 0.1,
        "N(0, 1): {mean} {var}"
    );
}

#[test]
fn batch_norm_with_cumulative_average_and_bad_inputs() {
    let bn = BatchNorm2d::with_options(1, 0.0, None, false, true).unwrap();
    for (i, v) in [2.0f32, 4.0, 9.0].into_iter().enumerate() {
        let x = Tensor::full(&[2, 1, 1, 1], v, DType::F32).unwrap();
        bn.forward(&x).unwrap();
        // the mean of the batch means so far
        let want = [2.0, 3.0, 5.0][i];
        assert_eq!(
            bn.running_mean.as_ref().unwrap().to_vec::<f32>().unwrap(),
            vec![want]
        );
    }
    let err = bn.forward(&Tensor::zeros(&[2, 1], DType::F32)).unwrap_err();
    assert_eq!(err.to_string(), "expected 4D input (got 2D input)");
    assert!(Embedding::new(10, 3, Some(-11)).is_err());
}

#[test]
fn a_module_trains_through_its_parameters() {
    let model = Sequential::new()
        .append(Linear::new(2, 8, true).unwrap())
        .append(ReLU::new())
        .append(Linear::new(8, 1, true).unwrap());
    let x = Tensor::from_vec(vec![0.0f32, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0], &[4, 2]).unwrap();
    let y = Tensor::from_vec(vec![1.0f32, 1.0, 0.0, 0.0], &[4, 1]).unwrap();
    let mut opt = lazyfuse::optim::Sgd::new(
        model.parameters(),
        lazyfuse::optim::SgdConfig {
            lr: 0.1,
            momentum: 0.9,
            ..Default::default()
        },
    )
    .unwrap();
    use lazyfuse::optim::Optimizer;
    let loss_of = || {
        model
            .forward(&x)
            .unwrap()
            .sub(&y)
            .unwrap()
            .square()
            .unwrap()
            .mean(&[], false)
            .unwrap()
    };
    let first = loss_of().to_vec::<f32>().unwrap()[0];
    for _ in 0..50 {
        opt.zero_grad().unwrap();
        let loss = loss_of();
        loss.backward().unwrap();
        opt.step_and_realize(&[&loss]).unwrap();
    }
    let last = loss_of().to_vec::<f32>().unwrap()[0];
    assert!(last < first * 0.5, "{first} → {last}");
}
