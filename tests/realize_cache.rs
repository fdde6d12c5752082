//! The realize cache (a rebuilt graph reuses the schedule and kernels of an equal
//! structure, `src/realize_cache.rs`): hits are counted, and a structurally
//! different graph never runs a wrong schedule — same shapes with other constants,
//! dtypes, views, input sharing, targets or math mode.

use lazyfuse::{last_realize_stats, DType, MathMode, Tensor};
use std::sync::Mutex;

/// The math mode is process-wide: tests that look at `reused` run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn vals(n: usize, seed: f32) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.7 + seed).sin()).collect()
}

#[test]
fn a_rebuilt_chain_is_reused_and_reads_its_own_buffers() {
    let _g = serial();
    let chain = |x: &Tensor| {
        x.mul(1.5)
            .unwrap()
            .add(0.25)
            .unwrap()
            .abs()
            .unwrap()
            .sqrt()
            .unwrap()
    };
    let a = Tensor::from_vec(vals(37, 0.1), &[37]).unwrap();
    let b = Tensor::from_vec(vals(37, 0.9), &[37]).unwrap();
    let first = chain(&a).to_vec::<f32>().unwrap();
    let again = chain(&a).to_vec::<f32>().unwrap();
    assert!(last_realize_stats().reused);
    assert_eq!(first, again);
    // Same structure, another buffer: reused, and it reads that buffer.
    let other = chain(&b).to_vec::<f32>().unwrap();
    let s = last_realize_stats();
    assert!(s.reused && !s.scheduled && s.compiled == 0, "{s:?}");
    let want: Vec<f32> = vals(37, 0.9)
        .iter()
        .map(|v| (v * 1.5 + 0.25).abs().sqrt())
        .collect();
    // (within an ulp or two, not bit for bit: fast math may fuse `v * 1.5 + 0.25`
    // into one fma; the other buffer's values are far from these)
    for (i, (o, w)) in other.iter().zip(&want).enumerate() {
        assert!(
            (o - w).abs() <= 2.0 * f32::EPSILON * w.abs(),
            "element {i}: {o} vs {w}"
        );
    }
}

#[test]
fn other_constants_are_other_structures() {
    let _g = serial();
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    x.realize().unwrap();
    assert_eq!(
        x.mul(2.0).unwrap().to_vec::<f32>().unwrap(),
        [2.0, 4.0, 6.0]
    );
    assert_eq!(
        x.mul(3.0).unwrap().to_vec::<f32>().unwrap(),
        [3.0, 6.0, 9.0]
    );
    assert!(!last_realize_stats().reused);
    // `0.0 == -0.0`, yet the kernels differ: the sign must survive.
    let pos = x.mul(0.0).unwrap().to_vec::<f32>().unwrap();
    let neg = x.mul(-0.0).unwrap().to_vec::<f32>().unwrap();
    assert!(pos.iter().all(|v| v.is_sign_positive()), "{pos:?}");
    assert!(neg.iter().all(|v| v.is_sign_negative()), "{neg:?}");
    let neg2 = x.mul(-0.0).unwrap().to_vec::<f32>().unwrap();
    assert!(last_realize_stats().reused);
    assert!(neg2.iter().all(|v| v.is_sign_negative()));
    // Constants compare by their bits: the same NaN reuses its schedule (the
    // kernels are the same), and the values stay NaN.
    for reused in [false, true] {
        let n = x.mul(f64::NAN).unwrap().to_vec::<f32>().unwrap();
        assert!(n.iter().all(|v| v.is_nan()));
        assert_eq!(last_realize_stats().reused, reused);
    }
}

#[test]
fn other_dtypes_views_and_sharing_are_other_structures() {
    let _g = serial();
    let m32 = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let m64 = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let n32 = Tensor::from_vec(vec![10.0f32, 20.0, 30.0, 40.0], &[2, 2]).unwrap();
    assert_eq!(
        m32.add(&m32).unwrap().to_vec::<f32>().unwrap(),
        [2.0, 4.0, 6.0, 8.0]
    );
    assert_eq!(
        m64.add(&m64).unwrap().to_vec::<f64>().unwrap(),
        [2.0, 4.0, 6.0, 8.0]
    );
    // The same buffer twice vs two buffers: inputs are numbered by sharing.
    assert_eq!(
        m32.add(&n32).unwrap().to_vec::<f32>().unwrap(),
        [11.0, 22.0, 33.0, 44.0]
    );
    assert_eq!(
        n32.add(&m32).unwrap().to_vec::<f32>().unwrap(),
        [11.0, 22.0, 33.0, 44.0]
    );
    assert!(last_realize_stats().reused);
    // A transposed view of the same shape.
    assert_eq!(
        m32.t().unwrap().add(&n32).unwrap().to_vec::<f32>().unwrap(),
        [11.0, 23.0, 32.0, 44.0]
    );
    assert_eq!(
        m32.add(&n32.t().unwrap()).unwrap().to_vec::<f32>().unwrap(),
        [11.0, 32.0, 23.0, 44.0]
    );
    // Another dtype out of the same op chain.
    let c = m32.add(&n32).unwrap().to_dtype(DType::I32).unwrap();
    assert_eq!(c.to_vec::<i32>().unwrap(), [11, 22, 33, 44]);
}

#[test]
fn live_intermediates_are_targets_and_change_the_structure() {
    let _g = serial();
    let x = Tensor::from_vec(vals(16, 0.3), &[16]).unwrap();
    x.realize().unwrap();
    let y = x.exp().unwrap().add(1.0).unwrap().to_vec::<f32>().unwrap();
    // Now the intermediate `e` stays alive: it is a target too.
    let e = x.exp().unwrap();
    let z = e.add(1.0).unwrap();
    assert_eq!(z.to_vec::<f32>().unwrap(), y);
    // Fast math's exp is within a few ulp of libm's, not equal to it.
    for (got, v) in e.to_vec::<f32>().unwrap().iter().zip(vals(16, 0.3)) {
        assert!(
            (got - v.exp()).abs() <= 4.0 * f32::EPSILON * v.exp(),
            "{got} vs exp({v})"
        );
    }
}

#[test]
fn the_math_mode_is_part_of_the_key() {
    let _g = serial();
    let x = Tensor::from_vec(vals(64, 0.2), &[64]).unwrap();
    x.realize().unwrap();
    let run = || x.tanh().unwrap().mul(2.0).unwrap().to_vec::<f32>().unwrap();
    lazyfuse::set_math_mode(MathMode::Exact);
    let exact = run();
    run();
    assert!(last_realize_stats().reused);
    lazyfuse::set_math_mode(MathMode::Fast);
    run();
    assert!(
        !last_realize_stats().reused,
        "fast mode reused exact kernels"
    );
    run();
    assert!(last_realize_stats().reused);
    lazyfuse::set_math_mode(MathMode::Exact);
    assert_eq!(run(), exact);
    assert!(last_realize_stats().reused);
    lazyfuse::set_math_mode(MathMode::Fast);
}

/// A training step rebuilt each iteration (forward, backward, an SGD update of
/// whole parameters under `no_grad`) schedules and compiles nothing after the
/// first, and computes the same values as with the graph passes off (where the
/// writes stay writes; their schedule donates no buffer, since the forward's
/// kernels read the old parameters, so it is cached too).
#[test]
fn a_rebuilt_training_step_is_reused() {
    let _g = serial();
    let run = |steps: usize| -> (Vec<f32>, Vec<bool>) {
        let x = Tensor::from_vec(vals(8 * 5, 0.3), &[8, 5]).unwrap();
        let w = Tensor::from_vec(vals(5 * 3, 0.9), &[5, 3])
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let b = Tensor::zeros(&[3], DType::F32)
            .requires_grad_(true)
            .unwrap();
        lazyfuse::realize_all(&[&w, &b]).unwrap();
        let mut reused = Vec::new();
        for _ in 0..steps {
            let loss = x
                .matmul(&w)
                .unwrap()
                .add(&b)
                .unwrap()
                .tanh()
                .unwrap()
                .square()
                .unwrap()
                .mean(&[], false)
                .unwrap();
            loss.backward().unwrap();
            lazyfuse::no_grad(|| {
                for p in [&w, &b] {
                    p.sub_(&p.grad().unwrap().mul(0.1).unwrap()).unwrap();
                    p.set_grad(None).unwrap();
                }
            });
            lazyfuse::realize_all(&[&w, &b, &loss]).unwrap();
            reused.push(last_realize_stats().reused);
        }
        (w.to_vec::<f32>().unwrap(), reused)
    };
    let (cached, reused) = run(4);
    assert_eq!(reused, vec![false, true, true, true]);
    lazyfuse::set_passes(false);
    let (unfolded, reused) = run(4);
    lazyfuse::set_passes(true);
    assert_eq!(reused, vec![false, true, true, true]);
    assert_eq!(cached, unfolded);
}

/// The key's words leave some attributes out (a reduction's axes): structures
/// that differ only there share a hash, and each keeps its own entry, so
/// alternating between them reuses both.
#[test]
fn structures_that_share_a_hash_keep_an_entry_each() {
    let _g = serial();
    let z = Tensor::from_vec((0..16).map(|v| v as f32).collect(), &[4, 4]).unwrap();
    z.realize().unwrap();
    let columns: Vec<f32> = (0..4)
        .map(|j| (0..4).map(|i| (4 * i + j) as f32).sum())
        .collect();
    let rows: Vec<f32> = (0..4)
        .map(|i| (0..4).map(|j| (4 * i + j) as f32).sum())
        .collect();
    for step in 0..3 {
        let sums = |axis: isize| z.sum(&[axis], false).unwrap().exp2().unwrap();
        let got = sums(0).to_vec::<f32>().unwrap();
        assert_eq!(
            last_realize_stats().reused,
            step > 0,
            "step {step}: columns"
        );
        assert_eq!(got, columns.iter().map(|v| v.exp2()).collect::<Vec<_>>());
        let got = sums(1).to_vec::<f32>().unwrap();
        assert_eq!(last_realize_stats().reused, step > 0, "step {step}: rows");
        assert_eq!(got, rows.iter().map(|v| v.exp2()).collect::<Vec<_>>());
    }
}
