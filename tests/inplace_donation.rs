//! In-place writes into a realized storage store into its own buffer (the buffer is
//! *donated* to the realize) when no live reader needs the old version, and copy it
//! otherwise. Every program here runs on the interpreter and on the JIT and must
//! give the same values; `last_realize_stats().in_place` says whether the JIT wrote
//! the storage's buffer in place (the executor compares the buffer's address before
//! and after), and `kernels` that no copy kernel ran.
//!
//! The backend is process-wide: every test holds `BACKEND` while it runs.

use lazyfuse::{last_realize_stats, CpuBackend, DType, RoundingMode, Tensor};
use std::sync::Mutex;

static BACKEND: Mutex<()> = Mutex::new(());

/// With fusion off (`LAZYFUSE_NOFUSE=1`) every node is its own kernel, so no write
/// stores in place: the counts are checked with fusion on only.
fn fused() -> bool {
    std::env::var_os("LAZYFUSE_NOFUSE").is_none_or(|v| v == "0")
}

/// A realized `[3, 4]` float tensor holding 0..12.
fn grid() -> Tensor {
    let x = Tensor::from_vec((0..12).map(|v| v as f32).collect::<Vec<_>>(), &[3, 4]).unwrap();
    x.realize().unwrap();
    x
}

/// Runs `program` on the interpreter and on the JIT: the values must agree. Returns
/// the JIT's `in_place` count of the program's last realize.
fn agree(program: impl Fn() -> Vec<Vec<f32>>) -> usize {
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_cpu_backend(CpuBackend::Interp);
    let want = program();
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    let got = program();
    let in_place = last_realize_stats().in_place;
    assert_eq!(got, want);
    in_place
}

/// Realizes `x` and returns its values and what the realize did.
fn realized(x: &Tensor) -> (Vec<f32>, lazyfuse::RealizeStats) {
    x.realize().unwrap();
    let stats = last_realize_stats();
    (x.to_vec::<f32>().unwrap(), stats)
}

#[test]
fn a_write_through_a_select_stores_in_place() {
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    let x = grid();
    x.select(0, 1).unwrap().add_(100.0).unwrap();
    let (v, stats) = realized(&x);
    let want: Vec<f32> = (0..12)
        .map(|i| {
            if (4..8).contains(&i) {
                i as f32 + 100.0
            } else {
                i as f32
            }
        })
        .collect();
    assert_eq!(v, want);
    // The stores only: no copy kernel.
    assert!(
        !fused() || (stats.in_place, stats.kernels) == (1, 1),
        "{stats:?}"
    );
    // The common loop: one write and one realize per step, never a copy.
    for i in 0..6 {
        x.select(0, i % 3).unwrap().mul_(2.0).unwrap();
        let (_, stats) = realized(&x);
        assert!(
            !fused() || (stats.in_place, stats.kernels) == (1, 1),
            "step {i}: {stats:?}"
        );
    }
}

#[test]
fn views_of_every_kind_write_in_place_with_the_interpreters_values() {
    type Write = fn(&Tensor);
    let writes: Vec<(&str, Write)> = vec![
        ("select add_", |x| {
            x.select(0, 2).unwrap().add_(1.5).unwrap()
        }),
        ("narrow mul_", |x| {
            x.narrow(1, 1, 2).unwrap().mul_(-3.0).unwrap()
        }),
        ("column fill_", |x| {
            x.select(1, 3).unwrap().fill_(7.0).unwrap()
        }),
        ("transpose add_", |x| {
            x.t().unwrap().narrow(0, 1, 2).unwrap().add_(10.0).unwrap()
        }),
        ("strided sub_", |x| {
            x.as_strided(&[3, 2], &[4, 2], 0)
                .unwrap()
                .sub_(1.0)
                .unwrap()
        }),
        ("copy_ from another tensor", |x| {
            let src = Tensor::from_vec(vec![-1.0f32, -2.0, -3.0, -4.0], &[4]).unwrap();
            x.select(0, 0).unwrap().copy_(&src).unwrap()
        }),
        ("whole tensor leaky_relu_", |x| {
            x.sub_(5.0).unwrap();
            x.leaky_relu_(0.5).unwrap()
        }),
        ("self-referencing add_", |x| {
            let row = x.select(0, 1).unwrap();
            row.add_(&row.mul(2.0).unwrap()).unwrap()
        }),
    ];
    for (name, write) in writes {
        let in_place = agree(|| {
            let x = grid();
            write(&x);
            vec![realized(&x).0]
        });
        assert!(!fused() || in_place == 1, "{name}");
    }
}

#[test]
fn several_writes_in_one_realize_share_the_buffer() {
    let in_place = agree(|| {
        let x = grid();
        x.select(0, 0).unwrap().add_(1.0).unwrap();
        x.select(1, 1).unwrap().mul_(3.0).unwrap();
        x.narrow(0, 1, 2)
            .unwrap()
            .select(1, 2)
            .unwrap()
            .fill_(-8.0)
            .unwrap();
        x.select(0, 2)
            .unwrap()
            .add_(&x.select(0, 0).unwrap())
            .unwrap();
        vec![realized(&x).0]
    });
    assert!(!fused() || in_place == 1);
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    let x = grid();
    x.select(0, 0).unwrap().add_(1.0).unwrap();
    x.select(0, 1).unwrap().add_(1.0).unwrap();
    x.select(0, 2).unwrap().add_(1.0).unwrap();
    let (_, stats) = realized(&x);
    assert!(
        !fused() || (stats.in_place, stats.kernels) == (1, 3),
        "{stats:?}"
    );
}

#[test]
fn a_live_reader_of_the_old_version_keeps_it() {
    // `y` reads the old version and is realized after the write: a copy.
    let in_place = agree(|| {
        let x = grid();
        let y = x.mul(2.0).unwrap();
        x.select(0, 1).unwrap().add_(100.0).unwrap();
        let (xv, _) = realized(&x);
        vec![xv, y.to_vec::<f32>().unwrap()]
    });
    assert_eq!(in_place, 0);
    // Realized together (y first): y still sees the old values.
    agree(|| {
        let x = grid();
        let y = x.mul(2.0).unwrap();
        x.select(0, 1).unwrap().add_(100.0).unwrap();
        let yv = y.to_vec::<f32>().unwrap();
        vec![yv, realized(&x).0]
    });
    // Once the reader is realized, the old version is free to donate.
    let in_place = agree(|| {
        let x = grid();
        let y = x.mul(2.0).unwrap();
        y.realize().unwrap();
        x.select(0, 1).unwrap().add_(100.0).unwrap();
        vec![realized(&x).0, y.to_vec::<f32>().unwrap()]
    });
    assert!(!fused() || in_place == 1);
    // A target of the same realize that reads the old version (a tensor that
    // depends on both versions).
    agree(|| {
        let x = grid();
        let old = x.select(0, 0).unwrap().mul(1.0).unwrap();
        x.select(0, 0).unwrap().add_(5.0).unwrap();
        let both = x.select(0, 0).unwrap().sub(&old).unwrap();
        let bv = both.to_vec::<f32>().unwrap();
        vec![bv, old.to_vec::<f32>().unwrap(), realized(&x).0]
    });
}

#[test]
fn views_held_across_the_write_see_the_new_values() {
    let in_place = agree(|| {
        let x = grid();
        let row = x.select(0, 2).unwrap();
        let col = x.select(1, 0).unwrap();
        row.add_(1000.0).unwrap();
        col.mul_(-1.0).unwrap();
        vec![
            realized(&x).0,
            row.to_vec::<f32>().unwrap(),
            col.to_vec::<f32>().unwrap(),
        ]
    });
    assert!(!fused() || in_place == 1);
}

#[test]
fn overlapping_reads_copy_instead() {
    // Each point would read an element another point writes: a store hazard, so
    // the write copies the storage first.
    let in_place = agree(|| {
        let x = grid();
        let shifted = x.narrow(1, 0, 3).unwrap().add(0.0).unwrap();
        x.narrow(1, 1, 3).unwrap().add_(&shifted).unwrap();
        vec![realized(&x).0]
    });
    assert_eq!(in_place, 0);
    // Reading another row of the destination is safe to compute but still copies
    // (the rule compares indices, not disjointness).
    agree(|| {
        let x = grid();
        x.select(0, 0)
            .unwrap()
            .copy_(&x.select(0, 2).unwrap())
            .unwrap();
        vec![realized(&x).0]
    });
    // A reduction of the destination feeding the write.
    agree(|| {
        let x = grid();
        let total = x.sum(&[], false).unwrap();
        x.select(0, 1).unwrap().sub_(&total).unwrap();
        vec![realized(&x).0]
    });
}

#[test]
fn a_write_that_may_fail_is_not_done_in_place() {
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    let x = Tensor::from_vec(vec![7i64, 8, 9, 10], &[4]).unwrap();
    x.realize().unwrap();
    let zero = Tensor::from_vec(vec![0i64], &[1]).unwrap();
    x.narrow(0, 1, 2)
        .unwrap()
        .div_mode_(&zero, RoundingMode::Floor)
        .unwrap();
    assert!(x.realize().is_err());
    assert_eq!(last_realize_stats().in_place, 0);
    // The storage's old version is intact: the same error again, not half-written
    // values.
    assert!(x.to_vec::<i64>().is_err());
    let y = Tensor::from_vec(vec![7i64, 8, 9, 10], &[4]).unwrap();
    y.realize().unwrap();
    y.narrow(0, 1, 2)
        .unwrap()
        .div_mode_(2, RoundingMode::Floor)
        .unwrap();
    y.realize().unwrap();
    assert_eq!(last_realize_stats().in_place, 0);
    assert_eq!(y.to_vec::<i64>().unwrap(), vec![7, 4, 4, 10]);
}

#[test]
fn two_threads_realizing_one_written_storage_agree() {
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    let x = Tensor::from_vec(vec![0.0f32; 4096], &[64, 64]).unwrap();
    x.realize().unwrap();
    for i in 0..20 {
        x.select(0, i % 64).unwrap().add_(1.0).unwrap();
        let seen: Vec<Vec<f32>> = std::thread::scope(|s| {
            let a = s.spawn(|| x.to_vec::<f32>().unwrap());
            let b = s.spawn(|| x.to_vec::<f32>().unwrap());
            vec![a.join().unwrap(), b.join().unwrap()]
        });
        assert_eq!(seen[0], seen[1]);
        assert_eq!(seen[0].iter().sum::<f32>(), 64.0 * (i + 1) as f32);
    }
}

#[test]
fn other_dtypes_write_in_place() {
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    for dt in [
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I32,
        DType::U8,
        DType::Bool,
    ] {
        let run = |backend| {
            lazyfuse::set_cpu_backend(backend);
            let x = Tensor::arange(0.0, 6.0, 1.0, DType::F32)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            x.realize().unwrap();
            x.narrow(0, 2, 3).unwrap().fill_(1).unwrap();
            x.realize().unwrap();
            let stats = last_realize_stats();
            (format!("{x}"), stats.in_place)
        };
        let (want, _) = run(CpuBackend::Interp);
        let (got, in_place) = run(CpuBackend::Jit);
        assert_eq!(got, want, "{dt}");
        assert!(!fused() || in_place == 1, "{dt}");
    }
}

/// The realize cache and donations: a structure first realized where no buffer
/// could be given up (a live reader of the old version) is cached without the
/// write in place; realized again where the buffer can go, it is another key, and
/// writes in place (a schedule that donated is never recorded).
#[test]
fn a_cached_copy_is_not_run_where_a_donation_is_possible() {
    // the realize cache serves the JIT only: no other test may switch backends
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    let step = |x: &Tensor| {
        x.mul_(2.0).unwrap();
        x.realize().unwrap();
        lazyfuse::last_realize_stats()
    };
    let x = Tensor::from_vec(vec![1.0f32; 64], &[64]).unwrap();
    x.realize().unwrap();
    // a live reader of the old version: no donation, and the schedule is recorded
    let old = x.add(0.0).unwrap();
    let s = step(&x);
    assert_eq!(s.in_place, 0, "{s:?}");
    let old2 = x.add(0.0).unwrap();
    let s = step(&x);
    assert!(s.reused && s.in_place == 0, "{s:?}");
    drop((old, old2));
    // nobody reads the old version: in place, every time
    for _ in 0..3 {
        let s = step(&x);
        assert!(!fused() || (s.in_place == 1 && !s.reused), "{s:?}");
    }
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![32.0; 64]);
}

#[test]
fn whole_writes_of_one_shape_are_one_kernel() {
    // An optimizer's step: each storage replaced whole, the later writes reading
    // the earlier ones' new values and the old values of the first.
    let step = || {
        let (p, m, v) = (grid(), grid(), grid());
        let g = p.mul(0.5).unwrap().add(1.0).unwrap();
        g.realize().unwrap();
        // (exact products: fast math's fused multiply-adds round alike)
        m.copy_(&m.mul(0.5).unwrap().add(&g.mul(0.25).unwrap()).unwrap())
            .unwrap();
        v.copy_(&v.mul(0.5).unwrap().add(&g.mul(&g).unwrap()).unwrap())
            .unwrap();
        p.copy_(
            &p.sub(&m.div(&v.sqrt().unwrap().add(1.0).unwrap()).unwrap())
                .unwrap(),
        )
        .unwrap();
        lazyfuse::realize_all(&[&p, &m, &v]).unwrap();
        let stats = last_realize_stats();
        let values = vec![
            p.to_vec::<f32>().unwrap(),
            m.to_vec::<f32>().unwrap(),
            v.to_vec::<f32>().unwrap(),
        ];
        (values, stats)
    };
    let in_place = agree(|| step().0);
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    let (_, stats) = step();
    assert!(!fused() || (in_place, stats.kernels) == (3, 1), "{stats:?}");
}

#[test]
fn a_whole_write_runs_after_the_readers_of_the_old_values() {
    // `s` reads the old values through a reduction (another iteration space, so
    // another kernel) and is realized with the write: the write's kernel comes
    // after it, in place.
    let in_place = agree(|| {
        let x = grid();
        let s = x.sum(&[], false).unwrap();
        x.copy_(&x.add(1.0).unwrap()).unwrap();
        lazyfuse::realize_all(&[&s, &x]).unwrap();
        vec![x.to_vec::<f32>().unwrap(), s.to_vec::<f32>().unwrap()]
    });
    assert!(!fused() || in_place == 1);
    // A transposed read of the old values in the write's own kernel would see
    // other points' new values: the write copies (or stores apart) instead.
    agree(|| {
        let x = Tensor::from_vec((0..16).map(|v| v as f32).collect(), &[4, 4]).unwrap();
        x.realize().unwrap();
        x.copy_(&x.t().unwrap().add(&x).unwrap()).unwrap();
        vec![realized(&x).0]
    });
    // A whole write of a computed base still computes the base, and its error.
    let _guard = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    for backend in [CpuBackend::Interp, CpuBackend::Jit] {
        lazyfuse::set_cpu_backend(backend);
        let a = Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
        let z = Tensor::zeros(&[3], DType::I64);
        let q = a.div_mode(&z, RoundingMode::Floor).unwrap();
        q.fill_(7.0).unwrap();
        let e = q.realize().unwrap_err();
        assert!(
            e.to_string().contains("ZeroDivisionError"),
            "{backend:?}: {e}"
        );
    }
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
}
