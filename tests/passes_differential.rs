//! Differential test of the graph passes (`lazyfuse_ir::passes`): every random
//! program of `tests/support/random_program.rs` is built twice, realized once with
//! the passes off and once with them on, and every tensor must print identically
//! (values, dtype, shape, or the same error). With the verifier on, realize also
//! checks every node of the optimized graph.
//!
//! `set_passes` is global to the process: every test here holds
//! `differential::SETTINGS` while it builds and realizes.

#[path = "support/random_program.rs"]
mod random_program;

#[path = "support/cases.rs"]
mod cases;
use lazyfuse::{DType, Tensor};
use proptest::prelude::*;
#[path = "support/differential.rs"]
mod differential;
use differential::{settings_guard, Run};
use lazyfuse::{CpuBackend, MathMode};
use random_program::{source, step};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::cases(128)))]

    #[test]
    fn passes_do_not_change_values(
        sources in proptest::collection::vec(source(), 1..4),
        steps in proptest::collection::vec(step(), 1..16),
    ) {
        // The default settings: the JIT in fast math.
        let jit = Run { math: MathMode::Fast, ..Run::exact(CpuBackend::Jit) };
        differential::compare(&sources, &steps, jit.with_passes(false), jit.with_passes(true))?;
    }
}

/// A program written to hit every pass: shared subexpressions, casts to the same
/// dtype (through `to_dtype` of a promoted value), scalar broadcasts (views of
/// `full`), and chains of views over computed values.
fn every_pass() -> Vec<String> {
    let x = Tensor::arange(0.0, 12.0, 1.0, DType::F32)
        .unwrap()
        .reshape(&[3, 4])
        .unwrap();
    let e1 = x.exp().unwrap().mul(2).unwrap();
    let e2 = x.exp().unwrap().mul(2).unwrap();
    let y = e1
        .add(&e2)
        .unwrap()
        .sub(&x.t().unwrap().t().unwrap())
        .unwrap();
    let z = y.t().unwrap().contiguous().unwrap();
    let w = z
        .t()
        .unwrap()
        .select(1, 2)
        .unwrap()
        .unsqueeze(0)
        .unwrap()
        .expand(&[2, -1])
        .unwrap()
        .add(1.5)
        .unwrap();
    let c = w.to_dtype(DType::F32).unwrap().sum(&[1], false).unwrap();
    // Last first: the first realize then holds the whole program (and the view of
    // the materialized transpose `z` is a view of a view).
    [c, w, z, y].iter().map(|t| format!("{t}")).collect()
}

#[test]
fn a_program_that_hits_every_pass_prints_the_same() {
    let _guard = settings_guard();
    lazyfuse::set_verify(true);
    lazyfuse::set_passes(false);
    let off = every_pass();
    lazyfuse::set_passes(true);
    let on = every_pass();
    assert_eq!(off, on);
}

#[test]
fn shared_subexpressions_are_computed_once() {
    let _guard = settings_guard();
    let x = Tensor::ones(&[4], DType::F64);
    let a = x.sin().unwrap().add(&x.sin().unwrap()).unwrap();
    assert_eq!(
        a.optimized_graph_text(),
        "%0 = full(value=1) : float64[4]\n\
         %1 = sin(%0) : float64[4]\n\
         %2 = add(%1, %1) : float64[4]  -> t0\n"
    );
    assert_eq!(a.to_vec::<f64>().unwrap(), vec![2.0 * 1f64.sin(); 4]);
}
