//! A realize computes and stores its targets only: the temporaries of a method chain
//! and the intermediates that live handles name are fused, not stored, and are
//! computed when they are read; `realize_all` stores several tensors in one pass.

use lazyfuse::{DType, Tensor};

fn ramp(n: usize, scale: f32) -> Tensor {
    let v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * scale).collect();
    Tensor::from_vec(v, &[n]).unwrap()
}

#[test]
fn the_w1_one_liner_is_one_kernel_with_one_output() {
    lazyfuse::set_verify(true);
    let (a, b, c) = (ramp(4096, 1.0), ramp(4096, 2.0), ramp(4096, 0.5));
    let y = a
        .mul(&b)
        .unwrap()
        .add(&c)
        .unwrap()
        .relu()
        .unwrap()
        .mul(0.5)
        .unwrap()
        .add(&a)
        .unwrap()
        .tanh()
        .unwrap()
        .realize()
        .unwrap();
    let s = lazyfuse::last_realize_stats();
    assert_eq!((s.kernels, s.outputs, s.temporaries), (1, 1, 0), "{s:?}");
    let (av, bv, cv) = (
        a.to_vec::<f32>().unwrap(),
        b.to_vec::<f32>().unwrap(),
        c.to_vec::<f32>().unwrap(),
    );
    let got = y.to_vec::<f32>().unwrap();
    for i in 0..av.len() {
        let want = ((av[i] * bv[i] + cv[i]).max(0.0) * 0.5 + av[i]).tanh();
        assert!((got[i] - want).abs() < 1e-5, "{i}: {} vs {want}", got[i]);
    }
}

#[test]
fn a_chain_read_by_to_vec_or_summed_stores_its_result_only() {
    lazyfuse::set_verify(true);
    let x = ramp(1000, 1.0);
    let v = x.exp().unwrap().mul(2).unwrap().to_vec::<f32>().unwrap();
    let s = lazyfuse::last_realize_stats();
    assert_eq!((s.kernels, s.outputs, s.temporaries), (1, 1, 0), "{s:?}");
    assert_eq!(v.len(), 1000);
    let total = x
        .exp()
        .unwrap()
        .sum(&[0], false)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    let s = lazyfuse::last_realize_stats();
    assert_eq!((s.kernels, s.outputs, s.temporaries), (1, 1, 0), "{s:?}");
    let want: f32 = x.to_vec::<f32>().unwrap().iter().map(|v| v.exp()).sum();
    assert!((total[0] - want).abs() < 1e-3 * want.abs());
}

#[test]
fn a_live_intermediate_is_computed_when_it_is_read() {
    lazyfuse::set_verify(true);
    let x = ramp(64, 1.0);
    let h = x.mul(3).unwrap();
    let g = h.exp().unwrap();
    let y = g.add(&h).unwrap().realize().unwrap();
    assert!(!h.is_realized() && !g.is_realized());
    assert_eq!(lazyfuse::last_realize_stats().outputs, 1);
    let xs = x.to_vec::<f32>().unwrap();
    let hs: Vec<f32> = xs.iter().map(|v| v * 3.0).collect();
    assert_eq!(h.to_vec::<f32>().unwrap(), hs);
    let gs = g.to_vec::<f32>().unwrap();
    for (i, (&gv, &hv)) in gs.iter().zip(&hs).enumerate() {
        assert!((gv - hv.exp()).abs() <= 1e-5 * hv.exp(), "{i}");
    }
    // `y` was realized once and is not computed again by the reads above.
    assert!(y.is_realized());
    let ys = y.to_vec::<f32>().unwrap();
    assert!((ys[5] - (gs[5] + hs[5])).abs() < 1e-4 * ys[5].abs().max(1.0));
}

#[test]
fn an_intermediate_sees_the_version_it_was_built_on() {
    lazyfuse::set_verify(true);
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let before = x.mul(10).unwrap();
    x.narrow(0, 1, 2).unwrap().add_(100.0).unwrap();
    let after = x.mul(10).unwrap();
    assert_eq!(
        after.to_vec::<f32>().unwrap(),
        vec![10.0, 1020.0, 1030.0, 40.0]
    );
    // `before` read the old version: still there, though `x` moved on.
    assert_eq!(
        before.to_vec::<f32>().unwrap(),
        vec![10.0, 20.0, 30.0, 40.0]
    );
}

#[test]
fn realize_all_computes_shared_work_once() {
    lazyfuse::set_verify(true);
    let x = ramp(2048, 1.0);
    let e = x.exp().unwrap();
    let a = e.add(1).unwrap();
    let b = e.mul(2).unwrap();
    lazyfuse::realize_all(&[&a, &b, &a]).unwrap();
    let s = lazyfuse::last_realize_stats();
    // one realize stores both; the exp they share is computed by one kernel
    // (a temporary or fused into the kernel that stores both), never twice
    assert_eq!(s.outputs, 2, "{s:?}");
    assert!(a.is_realized() && b.is_realized() && !e.is_realized());
    let schedule = a.sub(&b).unwrap().schedule_text().unwrap();
    assert!(!schedule.contains("exp"), "{schedule}");
    let av = a.to_vec::<f32>().unwrap();
    let bv = b.to_vec::<f32>().unwrap();
    for (i, &v) in x.to_vec::<f32>().unwrap().iter().enumerate() {
        assert!((av[i] - (v.exp() + 1.0)).abs() < 1e-5 * av[i]);
        assert!((bv[i] - v.exp() * 2.0).abs() < 1e-5 * bv[i]);
    }
    // realized tensors cost nothing; nothing to do is no error
    lazyfuse::realize_all(&[&a, &b]).unwrap();
    lazyfuse::realize_all(&[]).unwrap();
}

#[test]
fn the_cached_one_liner_compiles_nothing_on_its_second_run() {
    lazyfuse::set_verify(true);
    let (a, b) = (ramp(512, 1.0), ramp(512, 2.0));
    let run = || {
        a.mul(&b)
            .unwrap()
            .add(&a)
            .unwrap()
            .relu()
            .unwrap()
            .sigmoid()
            .unwrap()
            .realize()
            .unwrap()
    };
    let first = run();
    let second = run();
    let s = lazyfuse::last_realize_stats();
    assert_eq!((s.compiled, s.outputs, s.reused), (0, 1, true), "{s:?}");
    assert_eq!(
        first.to_vec::<f32>().unwrap(),
        second.to_vec::<f32>().unwrap()
    );
}

#[test]
fn realize_all_of_mixed_devices_and_dtypes() {
    lazyfuse::set_verify(true);
    let x = Tensor::arange(0.0, 6.0, 1.0, DType::I64).unwrap();
    let f = x.to_dtype(DType::F64).unwrap().sqrt().unwrap();
    let i = x.mul(&x).unwrap();
    lazyfuse::realize_all(&[&f, &i]).unwrap();
    assert_eq!(i.to_vec::<i64>().unwrap(), vec![0, 1, 4, 9, 16, 25]);
    assert_eq!(f.to_vec::<f64>().unwrap()[4], 2.0);
}

#[test]
fn realize_all_takes_targets_in_any_order() {
    lazyfuse::set_verify(true);
    let x = ramp(300, 1.0);
    let a = x.exp().unwrap();
    let b = a.mul(2).unwrap();
    let c = b.sum(&[0], false).unwrap();
    // consumers before their producers, and a repeated handle
    lazyfuse::realize_all(&[&c, &b, &a, &c]).unwrap();
    assert_eq!(lazyfuse::last_realize_stats().outputs, 3);
    assert!(a.is_realized() && b.is_realized() && c.is_realized());
    let av = a.to_vec::<f32>().unwrap();
    let bv = b.to_vec::<f32>().unwrap();
    assert!(av.iter().zip(&bv).all(|(a, b)| *b == 2.0 * a));
    let total: f32 = bv.iter().sum();
    assert!((c.to_vec::<f32>().unwrap()[0] - total).abs() < 1e-4 * total);
}
