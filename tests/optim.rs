//! `lazyfuse::optim` against PyTorch 2.15 (`tests/data/training/optim.json`,
//! written by `scripts/gen_training_data.py`): 20-step trajectories of every
//! optimizer configuration under a fixed gradient sequence (the optimizer's
//! arithmetic alone), with the two schedulers, and one model trained on its own
//! gradients; then the kernels of a step (asserted exactly: a change is a
//! decision) and that steps after the first compile nothing.

use lazyfuse::optim::{
    Adam, AdamConfig, AdamW, CosineAnnealingLR, LrScheduler, Optimizer, Sgd, SgdConfig, StepLR,
};
use lazyfuse::{last_realize_stats, DType, Tensor};
use serde_json::Value;

fn data() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/training/optim.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn f(v: &Value, key: &str, default: f64) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(default)
}

fn b(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn leaf(values: Vec<f32>, shape: &[usize]) -> Tensor {
    let t = Tensor::from_vec(values, shape).unwrap();
    t.realize().unwrap();
    t.requires_grad_(true).unwrap()
}

/// The optimizer a case names, over `params`, with its keyword arguments.
fn optimizer(case: &Value, params: Vec<Tensor>) -> Box<dyn Optimizer> {
    let k = &case["kwargs"];
    match case["optimizer"].as_str().unwrap() {
        "SGD" => Box::new(
            Sgd::new(
                params,
                SgdConfig {
                    lr: f(k, "lr", 1e-3),
                    momentum: f(k, "momentum", 0.0),
                    dampening: f(k, "dampening", 0.0),
                    weight_decay: f(k, "weight_decay", 0.0),
                    nesterov: b(k, "nesterov"),
                    maximize: b(k, "maximize"),
                },
            )
            .unwrap(),
        ),
        name @ ("Adam" | "AdamW") => {
            let base = if name == "Adam" {
                AdamConfig::default()
            } else {
                AdamConfig::adamw()
            };
            let betas = k.get("betas").map_or(base.betas, |v| {
                let v = v.as_array().unwrap();
                (v[0].as_f64().unwrap(), v[1].as_f64().unwrap())
            });
            let config = AdamConfig {
                lr: f(k, "lr", base.lr),
                betas,
                eps: f(k, "eps", base.eps),
                weight_decay: f(k, "weight_decay", base.weight_decay),
                amsgrad: b(k, "amsgrad"),
                maximize: b(k, "maximize"),
            };
            if name == "Adam" {
                Box::new(Adam::new(params, config).unwrap())
            } else {
                Box::new(AdamW::new(params, config).unwrap())
            }
        }
        other => panic!("unknown optimizer {other}"),
    }
}

fn scheduler(case: &Value, opt: &dyn Optimizer) -> Option<Box<dyn LrScheduler>> {
    let s = case.get("scheduler")?;
    Some(match s["kind"].as_str().unwrap() {
        "StepLR" => Box::new(
            StepLR::new(
                opt,
                s["step_size"].as_u64().unwrap() as usize,
                s["gamma"].as_f64().unwrap(),
            )
            .unwrap(),
        ),
        "CosineAnnealingLR" => Box::new(
            CosineAnnealingLR::new(
                opt,
                s["T_max"].as_u64().unwrap() as usize,
                s["eta_min"].as_f64().unwrap(),
            )
            .unwrap(),
        ),
        other => panic!("unknown scheduler {other}"),
    })
}

/// The largest difference in units of `scale` (relative, with an absolute floor).
fn assert_close(what: &str, got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let err = (g - w).abs() / w.abs().max(1.0);
        assert!(
            err <= tol,
            "{what}[{i}]: {g} vs PyTorch {w} (error {err:e})"
        );
    }
}

/// The weight and bias against one step of a recorded trajectory.
fn assert_params(what: &str, w: &Tensor, bias: &Tensor, want: &Value, tol: f32) {
    assert_close(what, &w.to_vec::<f32>().unwrap(), &floats(&want["w"]), tol);
    assert_close(
        what,
        &bias.to_vec::<f32>().unwrap(),
        &floats(&want["b"]),
        tol,
    );
}

#[test]
fn trajectories_match_pytorch() {
    let d = data();
    let grads = d["grads"].as_array().unwrap();
    for case in d["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let w = leaf(floats(&d["w0"]), &[3, 4]);
        let bias = leaf(floats(&d["b0"]), &[3]);
        let mut opt = optimizer(case, vec![w.clone(), bias.clone()]);
        let mut sched = scheduler(case, opt.as_ref());
        for (step, g) in grads.iter().enumerate() {
            w.set_grad(Some(&Tensor::from_vec(floats(&g["w"]), &[3, 4]).unwrap()))
                .unwrap();
            bias.set_grad(Some(&Tensor::from_vec(floats(&g["b"]), &[3]).unwrap()))
                .unwrap();
            opt.step().unwrap();
            let want = &case["trajectory"][step];
            // float32 rounding: PyTorch's vector loops fuse some multiply-adds
            // that lazyfuse rounds twice, or the other way round
            let what = format!("{name} step {}", step + 1);
            assert_params(&what, &w, &bias, want, 2e-6);
            if let Some(s) = sched.as_mut() {
                s.step(opt.as_mut());
                let want = case["lrs"][step].as_f64().unwrap();
                assert!(
                    (opt.lr() - want).abs() <= 1e-15 * want.abs(),
                    "{name} lr after step {}: {} vs PyTorch {want}",
                    step + 1,
                    opt.lr()
                );
                assert_eq!(s.get_last_lr(), opt.lr());
            }
        }
    }
}

#[test]
fn a_model_trained_on_its_own_gradients_follows_pytorch() {
    let d = data();
    let m = &d["model"];
    let x = Tensor::from_vec(floats(&m["x"]), &[6, 4]).unwrap();
    let y = Tensor::from_vec(floats(&m["y"]), &[6, 3]).unwrap();
    let w = leaf(floats(&d["w0"]), &[3, 4]);
    let bias = leaf(floats(&d["b0"]), &[3]);
    let config = AdamConfig {
        lr: 0.05,
        ..Default::default()
    };
    let mut opt = Adam::new(vec![w.clone(), bias.clone()], config).unwrap();
    for step in 0..20 {
        opt.zero_grad().unwrap();
        let loss = x
            .matmul(&w.t().unwrap())
            .unwrap()
            .add(&bias)
            .unwrap()
            .tanh()
            .unwrap()
            .sub(&y)
            .unwrap()
            .square()
            .unwrap()
            .mean(&[], false)
            .unwrap();
        loss.backward().unwrap();
        opt.step_and_realize(&[&loss]).unwrap();
        let what = format!("step {}", step + 1);
        let want_loss = m["losses"][step].as_f64().unwrap() as f32;
        assert_close(&what, &loss.to_vec::<f32>().unwrap(), &[want_loss], 1e-5);
        let want = &m["trajectory"][step];
        assert_params(&what, &w, &bias, want, 1e-5);
    }
}

/// Realized gradients for `params`, so a step's realize holds the update alone.
fn give_grads(params: &[Tensor], seed: f32) {
    for p in params {
        let n = p.numel();
        let g: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37 + seed).sin()).collect();
        let g = Tensor::from_vec(g, &p.shape()).unwrap();
        g.realize().unwrap();
        p.set_grad(Some(&g)).unwrap();
    }
}

#[test]
fn a_step_is_one_kernel_per_parameter_and_compiles_nothing_after_the_first() {
    lazyfuse::set_cpu_backend(lazyfuse::CpuBackend::Jit);
    let make = || -> Vec<Tensor> {
        vec![
            leaf(vec![0.5; 64 * 32], &[64, 32]),
            leaf(vec![0.1; 32], &[32]),
            leaf(vec![-0.2; 10 * 64], &[10, 64]),
        ]
    };
    let sgd = |p: Vec<Tensor>| -> Box<dyn Optimizer> {
        let c = SgdConfig {
            lr: 0.1,
            momentum: 0.9,
            nesterov: true,
            weight_decay: 1e-4,
            ..Default::default()
        };
        Box::new(Sgd::new(p, c).unwrap())
    };
    let adam = |p: Vec<Tensor>| -> Box<dyn Optimizer> {
        let c = AdamConfig {
            weight_decay: 0.01,
            amsgrad: true,
            ..Default::default()
        };
        Box::new(Adam::new(p, c).unwrap())
    };
    let adamw = |p: Vec<Tensor>| -> Box<dyn Optimizer> {
        Box::new(AdamW::new(p, AdamConfig::adamw()).unwrap())
    };
    // One kernel per parameter: every write of a step (the parameter, its
    // moments or momentum buffer) is stored by the kernel of its iteration space.
    type MakeOptimizer<'a> = &'a dyn Fn(Vec<Tensor>) -> Box<dyn Optimizer>;
    let makers: [(&str, MakeOptimizer, usize); 3] =
        [("SGD", &sgd, 1), ("Adam", &adam, 1), ("AdamW", &adamw, 1)];
    for (name, make_opt, per_parameter) in makers {
        let params = make();
        let mut opt = make_opt(params.clone());
        let mut sched = CosineAnnealingLR::new(opt.as_ref(), 5, 1e-4).unwrap();
        for step in 1..=6 {
            give_grads(&params, step as f32);
            opt.step().unwrap();
            sched.step(opt.as_mut()); // a new rate every step
            let s = last_realize_stats();
            // SGD's first step copies the gradient into its momentum buffer
            if step > 1 {
                assert_eq!(
                    s.kernels,
                    per_parameter * params.len(),
                    "{name} step {step}: {s:?}"
                );
            }
            // SGD's momentum buffer starts as a copy: its second step differs
            if step > 2 {
                assert_eq!(s.compiled, 0, "{name} step {step} compiled: {s:?}");
            }
        }
    }
}

#[test]
fn parameters_without_gradients_are_skipped() {
    let a = leaf(vec![1.0, 2.0], &[2]);
    let frozen = leaf(vec![5.0], &[1]);
    let mut opt = Adam::new(vec![a.clone(), frozen.clone()], AdamConfig::default()).unwrap();
    a.set_grad(Some(&Tensor::ones(&[2], DType::F32))).unwrap();
    opt.step().unwrap();
    assert_eq!(frozen.to_vec::<f32>().unwrap(), vec![5.0]);
    assert_ne!(a.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
}

#[test]
fn bad_arguments_are_pytorch_errors() {
    let p = || vec![leaf(vec![1.0], &[1])];
    let err = |r: lazyfuse::Result<()>| r.unwrap_err().to_string();
    let sgd = |c: SgdConfig| Sgd::new(p(), c).map(|_| ());
    let adam = |c: AdamConfig| Adam::new(p(), c).map(|_| ());
    assert_eq!(
        err(sgd(SgdConfig {
            lr: -0.1,
            ..Default::default()
        })),
        "Invalid learning rate: -0.1"
    );
    assert_eq!(
        err(sgd(SgdConfig {
            momentum: -1.0,
            ..Default::default()
        })),
        "Invalid momentum value: -1.0"
    );
    assert_eq!(
        err(sgd(SgdConfig {
            nesterov: true,
            momentum: 0.9,
            dampening: 0.1,
            ..Default::default()
        })),
        "Nesterov momentum requires a momentum and zero dampening"
    );
    assert_eq!(
        err(adam(AdamConfig {
            betas: (0.9, 1.0),
            ..Default::default()
        })),
        "Invalid beta parameter at index 1: 1.0"
    );
    assert_eq!(
        err(adam(AdamConfig {
            eps: -1e-8,
            ..Default::default()
        })),
        "Invalid epsilon value: -1e-08"
    );
    assert_eq!(
        err(Sgd::new(vec![], SgdConfig::default()).map(|_| ())),
        "optimizer got an empty parameter list"
    );
    let non_leaf = leaf(vec![1.0], &[1]).mul(2.0).unwrap();
    assert_eq!(
        err(Sgd::new(vec![non_leaf], SgdConfig::default()).map(|_| ())),
        "can't optimize a non-leaf Tensor"
    );
    let ints = Tensor::zeros(&[1], DType::I64);
    assert!(Sgd::new(vec![ints], SgdConfig::default()).is_err());
}
