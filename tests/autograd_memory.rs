//! Memory and work per training step stay flat: after backward and the update,
//! nothing keeps an earlier step's graph, history or buffers alive, and a step
//! costs the same scheduler work at step 900 as at step 100 (graph nodes,
//! autograd records, realized buffers and the work counter are counted, not
//! timed). A binary of its own: the counts are process-wide.

use lazyfuse::Tensor;

#[test]
fn a_training_loop_keeps_memory_and_work_flat() {
    let w = Tensor::from_vec(vec![0.5f32; 8], &[8])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let x = Tensor::from_vec((0..8).map(|i| i as f32 / 8.0).collect(), &[8]).unwrap();
    let mut counts = Vec::new();
    let mut work = Vec::new();
    for step in 0..1000 {
        let before = lazyfuse_ir::work::total();
        let loss = w.mul(&x).unwrap().tanh().unwrap().sum(&[], false).unwrap();
        loss.backward().unwrap();
        lazyfuse::no_grad(|| {
            w.sub_(&w.grad().unwrap().mul(0.1).unwrap()).unwrap();
        });
        w.set_grad(None).unwrap();
        lazyfuse::realize_all(&[&w, &loss]).unwrap();
        drop(loss);
        work.push(lazyfuse_ir::work::total() - before);
        if step >= 100 {
            counts.push((
                lazyfuse::live_graph_nodes(),
                lazyfuse::live_grad_records(),
                lazyfuse::live_buffers(),
            ));
        }
    }
    let first = counts[0];
    assert!(
        counts.iter().all(|&c| c == first),
        "graph nodes, records and buffers grow: {:?} .. {:?}",
        first,
        counts.last()
    );
    // (a few units of jitter come from the graph's slot reuse; growth would show
    // as a multiple)
    let window = |from: usize| work[from..from + 100].iter().sum::<u64>();
    let (early, late) = (window(100), window(900));
    assert!(
        late <= early + early / 20,
        "work per 100 steps grows: {early} -> {late}"
    );
}
