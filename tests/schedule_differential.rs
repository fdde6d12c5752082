//! The scheduler (`lazyfuse_ir::schedule`) against the interpreter: graphs built
//! through the facade (random programs of `tests/support/random_program.rs`, and
//! hand-written ones) are optimized, scheduled with fusion on and off in both math
//! modes, verified, and run by the kernel-IR reference evaluator
//! (`lazyfuse_runtime::kernel_eval`); an error must be the interpreter's error, and
//! every value of an exact-math schedule must equal the interpreter's (bit for bit
//! for integers and bools, within the conformance tolerances for floats). A
//! fast-math schedule's values may differ by reordered float math, which ops
//! downstream amplify without bound, so they are checked elsewhere (the
//! conformance corpus in fast math, `fast_math.rs`, `fast_reductions.rs`). Also
//! the kernel counts the issue promises (softmax, layernorm, W1, …), of the
//! default (fast, fused) schedule.

#[path = "support/random_program.rs"]
mod random_program;

#[path = "support/cases.rs"]
mod cases;
use lazyfuse::{DType, Tensor};
use lazyfuse_ir::kernel::MathMode;
use lazyfuse_ir::schedule::{schedule, ScheduleOptions};
use lazyfuse_runtime::{interp, kernel_eval, Buffer};
use proptest::prelude::*;
use random_program::{build, observe, source, step};

/// The relative tolerance of a float dtype's values (`None`: compared exactly).
fn tolerance(d: DType) -> Option<f64> {
    match d {
        DType::F16 => Some(2e-3),
        DType::BF16 => Some(1e-2),
        DType::F32 => Some(2e-6),
        DType::F64 => Some(1e-12),
        _ => None,
    }
}

/// The loosest float tolerance among the nodes `target` depends on: a float64
/// value cast from a float32 softmax carries float32's rounding differences (the
/// interpreter and the kernel evaluator may differ by an ulp of float32 there).
fn loosest(graph: &lazyfuse_ir::Graph, target: lazyfuse_ir::NodeId) -> f64 {
    graph
        .topo_order(&[target])
        .iter()
        .filter_map(|&n| tolerance(graph.node(n).dtype))
        .fold(0.0, f64::max)
}

/// Whether two buffers agree: integers and bools exactly, floats within their
/// dtype's tolerance or `floor`, whichever is looser (NaN equals NaN, infinities
/// must match).
fn close(a: &Buffer, b: &Buffer, floor: f64) -> Result<(), String> {
    if a.dtype() != b.dtype() || a.len() != b.len() {
        return Err(format!(
            "{} x {} vs {} x {}",
            a.dtype(),
            a.len(),
            b.dtype(),
            b.len()
        ));
    }
    let Some(tol) = tolerance(a.dtype()).map(|t| t.max(floor)) else {
        return if a == b {
            Ok(())
        } else {
            Err(format!("{a:?} vs {b:?}"))
        };
    };
    let fa = interp_f64(a);
    let fb = interp_f64(b);
    for (i, (&x, &y)) in fa.iter().zip(&fb).enumerate() {
        let ok = (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= tol * (1.0 + y.abs());
        if !ok {
            return Err(format!("element {i}: {x} vs {y}"));
        }
    }
    Ok(())
}

fn interp_f64(b: &Buffer) -> Vec<f64> {
    match b {
        Buffer::F16(v) => v.iter().map(|x| x.to_f64()).collect(),
        Buffer::BF16(v) => v.iter().map(|x| x.to_f64()).collect(),
        Buffer::F32(v) => v.iter().map(|&x| x as f64).collect(),
        Buffer::F64(v) => v.clone(),
        _ => vec![],
    }
}

/// Schedules the tensors' graph with fusion on and off and compares the kernel
/// evaluator with the interpreter. Returns the fused schedule's kernel count.
fn check(tensors: &[&Tensor]) -> Result<usize, String> {
    let (graph, targets, inputs) = Tensor::debug_optimized_graph(tensors);
    let want = interp::execute(&graph, &inputs, &targets);
    let mut count = 0;
    for (fuse, math) in [
        (true, MathMode::Fast),
        (false, MathMode::Fast),
        (true, MathMode::Exact),
        (false, MathMode::Exact),
    ] {
        let s = schedule(
            &graph,
            &targets,
            &ScheduleOptions {
                fuse,
                math,
                ..Default::default()
            },
        )
        .map_err(|e| {
            format!(
                "schedule (fuse {fuse}, {math:?}): {e}\n{}",
                graph.dump(&targets)
            )
        })?;
        s.verify()
            .map_err(|e| format!("verify (fuse {fuse}, {math:?}): {e}\n{}", s.text()))?;
        if fuse && math == MathMode::Fast {
            count = s.kernel_count();
            if std::env::var_os("SCHEDULE_TEST_DUMP").is_some() {
                eprintln!(
                    "{}\n{}{}",
                    graph.dump(&targets),
                    s.text(),
                    s.notes.join("\n")
                );
            }
        }
        let got = kernel_eval::run_schedule(&s, &graph, &inputs);
        let context = || {
            format!(
                "fuse {fuse}, {math:?}\n{}\n{}",
                graph.dump(&targets),
                s.text()
            )
        };
        match (&want, &got) {
            // Fast schedules reorder float math (a float32 softmax in float32 with
            // a reciprocal multiply): an ulp that `pow(x, 42)` or a `remainder`
            // downstream amplifies past any tolerance (found at 30000 cases), so
            // only exact schedules' values are compared here; fast values are the
            // conformance corpus's, `fast_math`'s and `fast_reductions`' to check.
            (Ok(_), Ok(_)) if math == MathMode::Fast => {}
            (Ok(w), Ok(g)) => {
                for (i, (x, y)) in g.iter().zip(w).enumerate() {
                    close(x, y, loosest(&graph, targets[i]))
                        .map_err(|e| format!("target {i}: {e}\n{}", context()))?;
                }
            }
            (Err(w), Err(g)) if w.to_string() == g.to_string() => {}
            _ => return Err(format!("interp {want:?} vs kernels {got:?}\n{}", context())),
        }
    }
    Ok(count)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::cases(256)))]

    #[test]
    fn kernels_compute_what_the_interpreter_computes(
        sources in proptest::collection::vec(source(), 1..4),
        steps in proptest::collection::vec(step(), 1..32),
    ) {
        let pool = build(&sources, &steps);
        let refs: Vec<&Tensor> = pool.iter().collect();
        if let Err(e) = check(&refs) {
            prop_assert!(false, "{}", e);
        }
        // The store still realizes the program after the graph was read out.
        for t in &pool {
            observe(t);
        }
    }
}

fn t(data: Vec<f32>, shape: &[usize]) -> Tensor {
    Tensor::from_vec(data, shape).unwrap()
}

/// Deterministic test data with negatives, of `n` elements.
fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| (((i as u32 * 2654435761u32) ^ seed) % 1000) as f32 / 100.0 - 5.0)
        .collect()
}

#[test]
fn softmax_is_at_most_two_kernels() {
    let x = t(data(24, 1), &[4, 6]);
    assert!(check(&[&x.softmax(-1).unwrap()]).unwrap() <= 2);
    assert!(check(&[&x.log_softmax(-1).unwrap()]).unwrap() <= 2);
    assert!(check(&[&x.softmax(0).unwrap()]).unwrap() <= 2);
}

#[test]
fn hand_written_layernorm_is_at_most_two_kernels() {
    let x = t(data(24, 2), &[4, 6]);
    let w = t(data(6, 3), &[6]);
    let b = t(data(6, 4), &[6]);
    let mean = x.mean(&[-1], true).unwrap();
    let var = x.var(&[-1], 0, true).unwrap();
    let y = x
        .sub(&mean)
        .unwrap()
        .div(&var.add(1e-5).unwrap().sqrt().unwrap())
        .unwrap()
        .mul(&w)
        .unwrap()
        .add(&b)
        .unwrap();
    assert!(check(&[&y]).unwrap() <= 2);
    // the variance written out as the mean of squared deviations
    let d = x.sub(&mean).unwrap();
    let var2 = d.mul(&d).unwrap().mean(&[-1], true).unwrap();
    let y2 = d
        .div(&var2.add(1e-5).unwrap().sqrt().unwrap())
        .unwrap()
        .mul(&w)
        .unwrap()
        .add(&b)
        .unwrap();
    assert!(check(&[&y2]).unwrap() <= 2);
}

#[test]
fn single_kernel_patterns() {
    let a = t(data(12, 5), &[3, 4]);
    let b = t(data(12, 6), &[3, 4]);
    let c = t(data(12, 7), &[3, 4]);
    // (a*b).sum(-1)
    assert_eq!(
        check(&[&a.mul(&b).unwrap().sum(&[-1], false).unwrap()]).unwrap(),
        1
    );
    // x.t() + y
    let y = t(data(12, 8), &[4, 3]);
    assert_eq!(check(&[&a.t().unwrap().add(&y).unwrap()]).unwrap(), 1);
    // x.t().contiguous()
    assert_eq!(check(&[&a.t().unwrap().contiguous().unwrap()]).unwrap(), 1);
    // W1: ((a*b + c).relu()*0.5 + a).tanh()
    let w1 = a
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
        .unwrap();
    assert_eq!(check(&[&w1]).unwrap(), 1);
    // a 10-op elementwise chain
    let mut x = a.clone();
    for i in 0..10 {
        x = match i % 3 {
            0 => x.add(&b).unwrap(),
            1 => x.mul(0.75).unwrap(),
            _ => x.sin().unwrap(),
        };
    }
    assert_eq!(check(&[&x]).unwrap(), 1);
}

#[test]
fn size_one_dims_and_permute_broadcast_mixes() {
    let col = t(data(4, 9), &[4, 1]);
    let row = t(data(3, 10), &[1, 3]);
    // [N, 1] + [1, M] broadcast, reduced both ways
    let s = col.add(&row).unwrap();
    check(&[
        &s,
        &s.sum(&[0], true).unwrap(),
        &s.sum(&[1], false).unwrap(),
    ])
    .unwrap();
    check(&[
        &col.sum(&[1], true).unwrap(),
        &col.softmax(1).unwrap(),
        &col.softmax(0).unwrap(),
    ])
    .unwrap();
    // permute + broadcast
    let x = t(data(24, 11), &[2, 3, 4]);
    let p = x.permute(&[2, 0, 1]).unwrap(); // [4, 2, 3]
    let q = row.expand(&[4, 2, 3]).unwrap();
    let r = p.mul(&q).unwrap().add(&col.unsqueeze(2).unwrap()).unwrap();
    check(&[
        &r,
        &r.mean(&[1], false).unwrap(),
        &r.amax(&[0, 2], true).unwrap(),
    ])
    .unwrap();
    // a reduction read through a transpose, and reduced values broadcast back
    let m = x.sum(&[2], false).unwrap(); // [2, 3]
    check(&[&m.t().unwrap().add(1.0).unwrap()]).unwrap();
    check(&[&x.sub(&x.amax(&[1], true).unwrap()).unwrap().exp().unwrap()]).unwrap();
    // views of computed values that cross dims (a reshape of a transpose)
    let z = x
        .add(1.0)
        .unwrap()
        .transpose(0, 2)
        .unwrap()
        .reshape(&[4, 6])
        .unwrap();
    check(&[&z.add(&z).unwrap()]).unwrap();
}

#[test]
fn reductions_of_every_kind() {
    let x = t(data(24, 12), &[4, 6]);
    let h = x.to_dtype(DType::F16).unwrap();
    let i = x.to_dtype(DType::I32).unwrap();
    for v in [&x, &h] {
        let outs = [
            v.sum(&[1], false).unwrap(),
            v.mean(&[0], true).unwrap(),
            v.var(&[1], 1, false).unwrap(),
            v.std(&[0, 1], 0, false).unwrap(),
            v.amax(&[1], false).unwrap(),
            v.prod(&[1], false).unwrap(),
            v.nansum(&[1], false).unwrap(),
            v.nanmean(&[1], false).unwrap(),
            v.logsumexp(&[1], false).unwrap(),
            v.argmax(Some(1), false).unwrap(),
            v.argmin(None, false).unwrap(),
            v.count_nonzero(&[1]).unwrap(),
            v.any(&[1], false).unwrap(),
            v.all(&[0], false).unwrap(),
        ];
        let refs: Vec<&Tensor> = outs.iter().collect();
        check(&refs).unwrap();
        for p in [0.0, 1.0, 2.0, 3.0, f64::INFINITY, f64::NEG_INFINITY] {
            check(&[&v.norm(p, &[1], false).unwrap()]).unwrap();
        }
    }
    check(&[
        &i.sum(&[1], false).unwrap(),
        &i.amin(&[0], false).unwrap(),
        &i.prod(&[0], true).unwrap(),
    ])
    .unwrap();
}

/// The schedule of the tensors' graph (fusion on or off).
fn sched(tensors: &[&Tensor], fuse: bool) -> lazyfuse_ir::kernel::Schedule {
    let (graph, targets, _) = Tensor::debug_optimized_graph(tensors);
    schedule(
        &graph,
        &targets,
        &ScheduleOptions {
            fuse,
            ..Default::default()
        },
    )
    .unwrap()
}

/// Found by the proptest above: an extern step (a float16 nansum) reading the empty
/// output of a `cat` of empty tensors, which no step writes; the kernel evaluator
/// reported "extern reads b4 before it is written" where the executor and the
/// interpreter give the empty result.
#[test]
fn an_extern_reads_an_empty_cat() {
    use random_program::Step::*;
    let steps = [
        View(10, 0),
        Fill(13, 0),
        View(1, 0),
        Cat(37, 29),
        Binary(0, 15, 0),
        Reduce(7, 46, false),
    ];
    let pool = build(&[(5, 3, 0)], &steps);
    let refs: Vec<&Tensor> = pool.iter().collect();
    check(&refs).unwrap();
}

#[test]
fn empty_dims_views_writes_and_externs() {
    let e = Tensor::zeros(&[0, 3], DType::F32);
    check(&[
        &e.sum(&[0], false).unwrap(),
        &e.mean(&[1], true).unwrap(),
        &e.softmax(1).unwrap(),
    ])
    .unwrap();
    check(&[
        &e.prod(&[0], true).unwrap(),
        &e.exp().unwrap(),
        &e.any(&[0], false).unwrap(),
    ])
    .unwrap();
    // in-place writes through views, then reads of both versions
    let x = t(data(12, 13), &[3, 4]);
    let y = x.add(0.0).unwrap();
    y.narrow(1, 1, 2).unwrap().fill_(7.0).unwrap();
    y.select(0, 2)
        .unwrap()
        .copy_(&t(data(4, 14), &[4]))
        .unwrap();
    check(&[&y, &y.t().unwrap().mul(&x.t().unwrap()).unwrap()]).unwrap();
    // cat, flip, arange, matmul (extern), cumsum (a scan kernel), gather (extern)
    let a = Tensor::arange(0.0, 12.0, 1.0, DType::I64)
        .unwrap()
        .reshape(&[3, 4])
        .unwrap();
    let f = x.flip(&[0, 1]).unwrap();
    let c = Tensor::cat(&[&x, &f.mul(2.0).unwrap()], 0).unwrap();
    check(&[
        &c,
        &c.sum(&[0], false).unwrap(),
        &a.flip(&[1]).unwrap().add(&a).unwrap(),
    ])
    .unwrap();
    let m = x
        .matmul(&x.t().unwrap())
        .unwrap()
        .add(1.0)
        .unwrap()
        .relu()
        .unwrap();
    let cs = x.cumsum(1).unwrap().tanh().unwrap();
    let idx = Tensor::from_vec(vec![2i64, 0, 1], &[3, 1]).unwrap();
    let g = x.gather(1, &idx).unwrap().exp().unwrap();
    check(&[&m, &cs, &g]).unwrap();
    let s = sched(&[&m, &cs], true);
    let externs: Vec<&str> = s
        .steps
        .iter()
        .filter_map(|st| match st {
            lazyfuse_ir::kernel::Step::Extern(e) => Some(e.reason.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(externs.len(), 1, "{}", s.text());
    assert!(externs.iter().any(|r| r.contains("matmul")));
    // integer division by zero is the interpreter's error, fused or not
    let i = Tensor::from_vec(vec![4i32, 5, 6], &[3]).unwrap();
    let z = Tensor::from_vec(vec![1i32, 0, 2], &[3]).unwrap();
    check(&[&i
        .div_mode(&z, lazyfuse::RoundingMode::Floor)
        .unwrap()
        .add(1)
        .unwrap()])
    .unwrap();
}

#[test]
fn no_fusion_is_one_step_per_node_and_schedules_are_deterministic() {
    let a = t(data(12, 15), &[3, 4]);
    let b = t(data(12, 16), &[3, 4]);
    let y = a
        .mul(&b)
        .unwrap()
        .add(&a)
        .unwrap()
        .tanh()
        .unwrap()
        .sum(&[1], false)
        .unwrap();
    let (graph, targets, _) = Tensor::debug_optimized_graph(&[&y]);
    let computed = graph
        .topo_order(&targets)
        .iter()
        .filter(|&&n| {
            !matches!(
                graph.node(n).op,
                lazyfuse_ir::Op::Input(_) | lazyfuse_ir::Op::View(_)
            )
        })
        .count();
    let off = schedule(
        &graph,
        &targets,
        &ScheduleOptions {
            fuse: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(off.kernel_count(), computed, "{}", off.text());
    assert_eq!(off.notes.len(), computed);
    let on = sched(&[&y], true);
    assert_eq!(on.kernel_count(), 1, "{}", on.text());
    assert_eq!(on.notes.len(), 1);
    assert!(on.notes[0].contains("target t0"), "{:?}", on.notes);
    // the same computation built again schedules to the same text
    let a2 = t(data(12, 17), &[3, 4]);
    let b2 = t(data(12, 18), &[3, 4]);
    let y2 = a2
        .mul(&b2)
        .unwrap()
        .add(&a2)
        .unwrap()
        .tanh()
        .unwrap()
        .sum(&[1], false)
        .unwrap();
    assert_eq!(sched(&[&y2], true).text(), on.text());
    // a transcendental read twice is stored once, with the reason noted
    let e = a.exp().unwrap();
    let two = sched(
        &[
            &e.add(&b).unwrap().sum(&[0], false).unwrap(),
            &e.mul(&b).unwrap().sum(&[1], false).unwrap(),
        ],
        true,
    );
    assert!(
        two.notes.iter().any(|n| n.contains("cost rule")),
        "{:?}",
        two.notes
    );
    // The cost rule's one definition of expensive (`schedule::expensive`): gelu
    // (an erf) read twice is stored; leaky_relu (a compare and a select) is not.
    let read_twice = |v: &Tensor| {
        sched(
            &[
                &v.add(&b).unwrap().sum(&[0], false).unwrap(),
                &v.mul(&b).unwrap().sum(&[1], false).unwrap(),
            ],
            true,
        )
    };
    let gelu = read_twice(&a.gelu(lazyfuse::GeluApproximate::None).unwrap());
    assert!(
        gelu.notes.iter().any(|n| n.contains("cost rule")),
        "{:?}",
        gelu.notes
    );
    let leaky = read_twice(&a.leaky_relu(0.1).unwrap());
    assert!(
        !leaky.notes.iter().any(|n| n.contains("cost rule")),
        "{:?}",
        leaky.notes
    );
    assert!(leaky.kernel_count() < gelu.kernel_count());
    check(&[&a.leaky_relu(0.1).unwrap().add(&b).unwrap()]).unwrap();
}

#[test]
fn tricky_index_maps_and_nested_reductions() {
    let x = t(data(24, 19), &[2, 3, 4]);
    let computed = x.mul(1.5).unwrap().add(0.25).unwrap();
    // overlapping windows of a computed value (as_strided), reduced and broadcast
    let flat = computed.reshape(&[24]).unwrap();
    let win = flat.as_strided(&[5, 4], &[3, 1], 2).unwrap();
    check(&[&win.sum(&[1], false).unwrap(), &win.exp().unwrap()]).unwrap();
    // a reduction of a reduction, and of a broadcast (stride-0) value
    let r = computed
        .sum(&[2], false)
        .unwrap()
        .amax(&[0], false)
        .unwrap();
    let b = x.sum(&[0], true).unwrap().expand(&[5, 3, 4]).unwrap();
    check(&[
        &r,
        &b.sum(&[0], false).unwrap(),
        &b.var(&[0], 1, false).unwrap(),
    ])
    .unwrap();
    // softmax along a middle axis of a permuted value; argmax over all of a transpose
    let p = computed.permute(&[2, 0, 1]).unwrap();
    check(&[
        &p.softmax(1).unwrap(),
        &p.log_softmax(0).unwrap(),
        &p.argmax(None, false).unwrap(),
    ])
    .unwrap();
    // 0-dim values, a repeated target, var_mean's running mean (extern)
    let s = x.sum(&[0, 1, 2], false).unwrap();
    let (v, m) = x.var_mean(&[1], 1, false).unwrap();
    check(&[
        &s,
        &s.mul(2.0).unwrap(),
        &s,
        &v,
        &m,
        &Tensor::scalar(3.0).exp().unwrap(),
    ])
    .unwrap();
    // max_dim (values and indices) of a flipped value
    let (mx, ix) = computed.flip(&[2]).unwrap().max_dim(2, true).unwrap();
    check(&[&mx, &ix, &computed.sub(&mx).unwrap()]).unwrap();
    // NaN and infinities through the reductions
    let w = Tensor::from_vec(
        vec![
            1.0f32,
            f32::NAN,
            2.0,
            f32::INFINITY,
            -1.0,
            f32::NEG_INFINITY,
        ],
        &[2, 3],
    )
    .unwrap();
    let outs = [
        w.amax(&[1], false).unwrap(),
        w.nansum(&[1], false).unwrap(),
        w.nanmean(&[0], false).unwrap(),
        w.logsumexp(&[1], false).unwrap(),
        w.softmax(1).unwrap(),
        w.argmin(Some(1), false).unwrap(),
        w.norm(2.0, &[1], false).unwrap(),
        w.norm(f64::INFINITY, &[0], false).unwrap(),
    ];
    let refs: Vec<&Tensor> = outs.iter().collect();
    check(&refs).unwrap();
}

#[test]
fn float32_overflow_and_huge_sizes_stay_the_interpreters() {
    // nansum/norm of float32 overflow in float32 as PyTorch's do (extern steps)
    let big = Tensor::from_vec(vec![3e38f32, 3e38, -3e38, 1.0], &[4]).unwrap();
    let s = big.nansum(&[0], false).unwrap();
    let n = big.norm(1.0, &[0], false).unwrap();
    check(&[&s, &n, &big.sum(&[0], false).unwrap()]).unwrap();
    let (graph, targets, inputs) = Tensor::debug_optimized_graph(&[&s]);
    let sch = schedule(
        &graph,
        &targets,
        &ScheduleOptions {
            fuse: true,
            ..Default::default()
        },
    )
    .unwrap();
    let out = kernel_eval::run_schedule(&sch, &graph, &inputs).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), [f32::INFINITY]);
    // a size that overflows is the interpreter's error, not a malformed schedule
    let huge = Tensor::ones(&[1 << 62, 4], DType::F32);
    let (graph, targets, inputs) = Tensor::debug_optimized_graph(&[&huge]);
    let sch = schedule(
        &graph,
        &targets,
        &ScheduleOptions {
            fuse: true,
            ..Default::default()
        },
    )
    .unwrap();
    let err = kernel_eval::run_schedule(&sch, &graph, &inputs).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Storage size calculation overflowed with sizes=[4611686018427387904, 4]"
    );
}

#[test]
fn float8_and_complex_values() {
    let x = t(data(12, 20), &[3, 4]);
    for d in [DType::F8E4M3FN, DType::F8E5M2] {
        let q = x.to_dtype(d).unwrap();
        let back = q
            .t()
            .unwrap()
            .to_dtype(DType::F32)
            .unwrap()
            .add(1.0)
            .unwrap();
        let c = Tensor::cat(&[&q, &q.flip(&[0]).unwrap()], 1).unwrap();
        let y = q.t().unwrap().contiguous().unwrap();
        y.narrow(0, 1, 1).unwrap().fill_(2.0).unwrap();
        check(&[&q, &back, &c, &y, &Tensor::zeros(&[2], d)]).unwrap();
    }
    let z = x.to_dtype(DType::C64).unwrap();
    check(&[
        &z.mul(&z).unwrap(),
        &z.abs().unwrap().add(1.0).unwrap(),
        &z.sum(&[1], false).unwrap(),
    ])
    .unwrap();
}

#[test]
fn deep_chains_are_cut_not_overflowed() {
    // 3000 dependent elementwise ops: far deeper than one kernel inlines
    let mut x = t(data(6, 21), &[2, 3]);
    for i in 0..3000 {
        x = if i % 2 == 0 {
            x.add(0.5).unwrap()
        } else {
            x.mul(0.999).unwrap()
        };
    }
    let s = x.sum(&[1], false).unwrap();
    let n = check(&[&x, &s]).unwrap();
    assert!(n > 1 && n < 100, "{n} kernels");
}

#[test]
fn indexing_ops_are_fused_loads_with_the_interpreters_errors() {
    // in range (take wraps negative values), fused with their neighbours
    let x = Tensor::from_vec((0..12).map(|i| i as f32 * 0.5).collect::<Vec<_>>(), &[3, 4]).unwrap();
    let ints = |v: &[i64], s: &[usize]| Tensor::from_vec(v.to_vec(), s).unwrap();
    let g = x.gather(1, &ints(&[3, 0, 1, 3, 2, 2], &[3, 2])).unwrap();
    let g = g.mul(2.0).unwrap();
    let s = x.index_select(0, &ints(&[2, 0], &[2])).unwrap();
    let tk = x.take(&ints(&[11, -1, -12, 5], &[2, 2])).unwrap();
    assert_eq!(check(&[&g]).unwrap(), 1);
    assert_eq!(check(&[&s]).unwrap(), 1);
    assert_eq!(check(&[&tk]).unwrap(), 1);
    // out of range: the kernel evaluator words each op's error as the interpreter
    // (`check` compares the messages); negative values fail gather and index_select
    for (t, msg) in [
        (
            x.gather(1, &ints(&[0, -1], &[1, 2])).unwrap(),
            "index -1 is out of bounds for dimension 1 with size 4",
        ),
        (
            x.index_select(1, &ints(&[1, 4], &[2])).unwrap(),
            "INDICES element is out of DATA bounds, id=4 axis_dim=4",
        ),
        (
            x.take(&ints(&[0, -13], &[2])).unwrap(),
            "out of range: tried to access index -13 on a tensor of 12 elements.",
        ),
    ] {
        check(&[&t]).unwrap();
        let (graph, targets, inputs) = Tensor::debug_optimized_graph(&[&t]);
        let sch = schedule(
            &graph,
            &targets,
            &ScheduleOptions {
                fuse: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(!sch.text().contains("extern"), "{}", sch.text());
        let err = kernel_eval::run_schedule(&sch, &graph, &inputs).unwrap_err();
        assert_eq!(err.to_string(), msg);
    }
}
