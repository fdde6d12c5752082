//! Golden tests of the graph's text form: each case builds a graph through the
//! public API and compares `graph_text()` with `tests/golden/<name>.txt`.
//! `LAZYFUSE_BLESS=1 cargo test --test golden` rewrites the files; a mismatch
//! prints a line diff.

use lazyfuse::{DType, Scalar, Tensor};
#[path = "support/golden.rs"]
mod golden;
use golden::check;

#[test]
fn promotion_inserts_casts_and_expands() {
    lazyfuse::set_verify(true);
    let a = Tensor::zeros(&[2, 3], DType::I32);
    let b = Tensor::ones(&[3], DType::F16);
    let c = a.mul(&b).unwrap().add(2.5).unwrap();
    check("promotion", &c.graph_text());
}

#[test]
fn views_compose_into_one_read() {
    lazyfuse::set_verify(true);
    let base = Tensor::arange(0.0, 24.0, 1.0, DType::F32).unwrap();
    let v = base
        .view(&[2, 3, 4])
        .unwrap()
        .permute(&[2, 0, 1])
        .unwrap()
        .select(0, 1)
        .unwrap()
        .exp()
        .unwrap();
    check("views", &v.graph_text());
}

#[test]
fn inplace_writes_make_versions() {
    lazyfuse::set_verify(true);
    let base = Tensor::zeros(&[2, 2], DType::F64);
    base.select(0, 1).unwrap().add_(1).unwrap();
    base.t().unwrap().fill_(Scalar::Float(0.5)).unwrap();
    check("inplace", &base.graph_text());
}

#[test]
fn reductions_and_matmul() {
    lazyfuse::set_verify(true);
    let a = Tensor::ones(&[2, 3], DType::F32);
    let b = Tensor::ones(&[3], DType::F32);
    let m = a.matmul(&b).unwrap().softmax(0).unwrap();
    let s = a
        .sum(&[1], true)
        .unwrap()
        .add(&m.unsqueeze(1).unwrap())
        .unwrap();
    check("reduce_matmul", &s.graph_text());
}

#[test]
fn promotion_after_passes() {
    // The two scalar broadcasts become `full` nodes of the full shape.
    lazyfuse::set_verify(true);
    let a = Tensor::zeros(&[2, 3], DType::I32);
    let b = Tensor::ones(&[3], DType::F16);
    let c = a.mul(&b).unwrap().add(2.5).unwrap();
    check("promotion_after_passes", &c.optimized_graph_text());
}

#[test]
fn view_chain_and_shared_work_after_passes() {
    // `x.exp()` is recorded twice and merged into one node; the transpose and the
    // select are one view already when recorded (views never record nodes).
    lazyfuse::set_verify(true);
    let x = Tensor::arange(0.0, 6.0, 1.0, DType::F32)
        .unwrap()
        .reshape(&[2, 3])
        .unwrap();
    let y = x
        .exp()
        .unwrap()
        .add(&x.exp().unwrap())
        .unwrap()
        .t()
        .unwrap()
        .select(0, 1)
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap()
        .neg()
        .unwrap();
    check("shared_after_passes", &y.optimized_graph_text());
}
