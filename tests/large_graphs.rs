//! The compiler's cost grows with the graph, not faster: deep chains, many targets,
//! long in-place chains and iterated reductions, measured with the compiler's work
//! counter (`lazyfuse_ir::work`, no timers) at 1k and 8k steps. Each must also give
//! the right values, and its kernel count must grow with the depth, not jump.

use lazyfuse::{DType, Tensor};

/// The work a closure's realize did on this thread, and its result.
fn measured<R>(f: impl FnOnce() -> R) -> (u64, R) {
    let before = lazyfuse_ir::work::total();
    let r = f();
    (lazyfuse_ir::work::total() - before, r)
}

/// Asserts that work at 8× the steps is at most ~8× the work (linear, with slack
/// for fixed costs), and that the same holds for the kernel count.
fn assert_linear(what: &str, small: (u64, usize), large: (u64, usize)) {
    eprintln!(
        "{what}: work {} -> {}, kernels {} -> {}",
        small.0, large.0, small.1, large.1
    );
    assert!(
        large.0 <= 10 * small.0 + 10_000,
        "{what}: work {} at 1k steps, {} at 8k (more than linear)",
        small.0,
        large.0
    );
    assert!(
        large.1 <= 10 * small.1 + 4,
        "{what}: {} kernels at 1k steps, {} at 8k",
        small.1,
        large.1
    );
}

/// A chain of `steps` additions with every handle kept (an unrolled RNN keeps its
/// states this way), all realized together: work and kernels.
fn chain_kept(steps: usize) -> (u64, usize) {
    let x = Tensor::from_vec(vec![0.5f32; 4], &[4]).unwrap();
    let mut hs = vec![x];
    for _ in 0..steps {
        let next = hs.last().unwrap().add(1.0).unwrap();
        hs.push(next);
    }
    let refs: Vec<&Tensor> = hs.iter().collect();
    let (work, ()) = measured(|| lazyfuse::realize_all(&refs).unwrap());
    let kernels = lazyfuse::last_realize_stats().kernels;
    for k in [0, steps / 3, steps] {
        assert_eq!(hs[k].to_vec::<f32>().unwrap(), vec![0.5 + k as f32; 4]);
    }
    // reading the last state alone computes nothing again
    assert!(hs[steps].is_realized());
    (work, kernels)
}

#[test]
fn many_targets_of_one_chain_schedule_in_linear_time() {
    lazyfuse::set_verify(true);
    assert_linear("chain kept", chain_kept(1000), chain_kept(8000));
}

/// The same chain with only its end read.
fn chain_read(steps: usize) -> (u64, usize) {
    let x = Tensor::from_vec(vec![0.5f32; 4], &[4]).unwrap();
    let mut t = x;
    for _ in 0..steps {
        t = t.add(1.0).unwrap();
    }
    let (work, v) = measured(|| t.to_vec::<f32>().unwrap());
    assert_eq!(v, vec![0.5 + steps as f32; 4]);
    (work, lazyfuse::last_realize_stats().kernels)
}

#[test]
fn a_deep_chain_schedules_in_linear_time() {
    lazyfuse::set_verify(true);
    assert_linear("chain read", chain_read(1000), chain_read(8000));
}

/// `steps` in-place additions through overlapping views of one storage.
fn in_place(steps: usize) -> (u64, usize) {
    let x = Tensor::zeros(&[16], DType::F32);
    for i in 0..steps {
        x.narrow(0, (i % 8) as isize, 8).unwrap().add_(1.0).unwrap();
    }
    let (work, v) = measured(|| x.to_vec::<f32>().unwrap());
    // element j is covered by the narrows starting at max(0, j-7)..=min(j, 7)
    let want: Vec<f32> = (0..16usize)
        .map(|j| {
            (0..steps)
                .filter(|i| {
                    let s = i % 8;
                    s <= j && j < s + 8
                })
                .count() as f32
        })
        .collect();
    assert_eq!(v, want);
    (work, lazyfuse::last_realize_stats().kernels)
}

#[test]
fn a_deep_in_place_chain_schedules_in_linear_time() {
    lazyfuse::set_verify(true);
    assert_linear("in place", in_place(1000), in_place(8000));
}

/// `t = t - t.mean(1, keepdim) + 1`, `steps` times on `[8, 8]`.
fn centred(steps: usize) -> (u64, usize) {
    let v: Vec<f32> = (0..64).map(|i| (i % 8) as f32 * 0.25).collect();
    let mut t = Tensor::from_vec(v, &[8, 8]).unwrap();
    for _ in 0..steps {
        t = t
            .sub(&t.mean(&[1], true).unwrap())
            .unwrap()
            .add(1.0)
            .unwrap();
    }
    let (work, got) = measured(|| t.to_vec::<f32>().unwrap());
    // After the first step every row is centred plus one; later steps keep it so.
    for (i, g) in got.iter().enumerate() {
        let want = (i % 8) as f32 * 0.25 - 0.875 + 1.0;
        assert!((g - want).abs() < 1e-4, "{i}: {g} vs {want}");
    }
    (work, lazyfuse::last_realize_stats().kernels)
}

#[test]
fn an_iterated_reduction_schedules_in_linear_time() {
    lazyfuse::set_verify(true);
    let small = centred(1000);
    let large = centred(8000);
    assert_linear("centred", small, large);
    // the 100-step case that once made 43 kernels of quadratic size: few kernels
    // (a row kernel takes four steps: each phase recomputes the steps before it,
    // and the cost rule stores `t` once that prologue outgrows its bound)
    let (_, k100) = centred(100);
    assert!(k100 <= 25, "{k100} kernels for 100 steps");
}

#[test]
fn a_cat_of_thousands_after_thousands_of_cached_kernels() {
    lazyfuse::set_verify(true);
    // 3000 kernels of distinct structures in the kernel cache, compiled in one batch
    let warm: Vec<Tensor> = (1..=3000)
        .map(|n| Tensor::ones(&[n], DType::F32).mul(2.0).unwrap())
        .collect();
    let refs: Vec<&Tensor> = warm.iter().collect();
    lazyfuse::realize_all(&refs).unwrap();
    assert_eq!(warm[2999].to_vec::<f32>().unwrap()[2999], 2.0);
    let parts: Vec<Tensor> = (0..5000)
        .map(|i| Tensor::from_vec(vec![i as f32; 16], &[16]).unwrap())
        .collect();
    let refs: Vec<&Tensor> = parts.iter().collect();
    let c = Tensor::cat(&refs, 0).unwrap();
    let (work, v) = measured(|| c.to_vec::<f32>().unwrap());
    let s = lazyfuse::last_realize_stats();
    assert!(
        s.compiled <= 1,
        "a cat of 5000 compiled {} kernels",
        s.compiled
    );
    assert_eq!(v.len(), 5000 * 16);
    assert!(v
        .chunks(16)
        .enumerate()
        .all(|(i, c)| c.iter().all(|&x| x == i as f32)));
    assert!(work < 200_000, "work {work}");
    // computed slices, each its own kernel of one structure
    let parts: Vec<Tensor> = (0..3100)
        .map(|i| {
            Tensor::from_vec(vec![i as f32; 16], &[16])
                .unwrap()
                .mul(2)
                .unwrap()
        })
        .collect();
    let refs: Vec<&Tensor> = parts.iter().collect();
    let v = Tensor::cat(&refs, 0).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(v[16 * 3099], 6198.0);
    assert!(lazyfuse::last_realize_stats().compiled <= 2);
}
