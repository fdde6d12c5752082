//! Random programs through the public API: random dtypes, shapes, elementwise ops,
//! reductions, views, in-place writes, casts, `where`, `matmul`, `cat`, the
//! indexing/shaping ops (`gather`, `scatter_add`, `take`, `flip`, `roll`, `pad`, …),
//! the pointwise math ops and activations, and creation ops (random ones from a
//! generator seeded at the start of every build).
//!
//! Each program is built twice; one copy is realized front to back, the other back to
//! front, and every tensor must print identically (realize order must not change a
//! value, whatever versions and pinned intermediates it materializes). Both run in
//! exact math: fast math contracts a product into the add that takes it (one
//! rounding, `fma`) where both are in one kernel, and not where the product was
//! realized first, so there the order may move a value by an ulp (a long run found
//! one that crossed a printed digit). Along the way:
//! no panic, the graph verifier accepts every node, every op either fails when it is
//! built or computes (the only data-dependent failure allowed is integer division by
//! zero), and a realized tensor has the dtype and shape it was built with. The
//! generator lives in `tests/support/random_program.rs`, shared with the
//! differential tests (graph passes on and off, later the compiled backends).

#[path = "support/random_program.rs"]
mod random_program;

#[path = "support/cases.rs"]
mod cases;
use lazyfuse::Tensor;
use proptest::prelude::*;
use random_program::{build, observe, source, step, Step};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::cases(128)))]

    #[test]
    fn realize_order_does_not_change_values(
        sources in proptest::collection::vec(source(), 1..4),
        steps in proptest::collection::vec(step(), 1..16),
    ) {
        lazyfuse::set_verify(true);
        lazyfuse::set_math_mode(lazyfuse::MathMode::Exact);
        let forward = build(&sources, &steps);
        let backward = build(&sources, &steps);
        let seen_forward: Vec<String> = forward.iter().map(observe).collect();
        let mut seen_backward: Vec<String> = backward.iter().rev().map(observe).collect();
        seen_backward.reverse();
        for (i, (f, b)) in seen_forward.iter().zip(&seen_backward).enumerate() {
            prop_assert_eq!(f, b, "tensor {} differs between realize orders", i);
        }
    }
}

#[test]
fn graph_text_is_deterministic() {
    let steps = [
        Step::Binary(0, 0, 1),
        Step::Unary(2, 2),
        Step::Inplace(0, 0, 3),
        Step::Reduce(0, 2, true),
    ];
    let sources = [(7, 0, 1), (3, 1, 2)];
    let a: Vec<String> = build(&sources, &steps)
        .iter()
        .map(Tensor::graph_text)
        .collect();
    let b: Vec<String> = build(&sources, &steps)
        .iter()
        .map(Tensor::graph_text)
        .collect();
    assert_eq!(a, b);
}

#[test]
fn index_steps_record_and_compute() {
    lazyfuse::set_verify(true);
    let steps: Vec<Step> = (0..10).map(|o| Step::Index(o, 0, 1)).collect();
    let sources = [(7, 0, 1), (4, 1, 2)]; // float32 [2, 3], int64 [3]
    let pool = build(&sources, &steps);
    assert_eq!(
        pool.len(),
        2 + 10,
        "every index step builds on these sources"
    );
    for t in &pool {
        observe(t);
    }
}
