//! Memory per training step stays flat: after backward and the update, nothing
//! keeps an earlier step's graph or history alive (graph nodes and autograd records
//! are counted, not timed). A binary of its own: the counts are process-wide.

use lazyfuse::Tensor;

#[test]
fn a_training_loop_keeps_memory_flat() {
    let w = Tensor::from_vec(vec![0.5f32; 8], &[8])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let x = Tensor::from_vec((0..8).map(|i| i as f32 / 8.0).collect(), &[8]).unwrap();
    let mut counts = Vec::new();
    for step in 0..200 {
        let loss = w.mul(&x).unwrap().tanh().unwrap().sum(&[], false).unwrap();
        loss.backward().unwrap();
        lazyfuse::no_grad(|| {
            w.sub_(&w.grad().unwrap().mul(0.1).unwrap()).unwrap();
        });
        w.set_grad(None).unwrap();
        lazyfuse::realize_all(&[&w, &loss]).unwrap();
        drop(loss);
        if step >= 100 {
            counts.push((lazyfuse::live_graph_nodes(), lazyfuse::live_grad_records()));
        }
    }
    let first = counts[0];
    assert!(
        counts.iter().all(|&c| c == first),
        "graph nodes and records grow: {:?} .. {:?}",
        first,
        counts.last()
    );
}
