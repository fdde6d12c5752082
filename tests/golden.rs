//! Golden tests of the graph's text form: each case builds a graph through the
//! public API and compares `graph_text()` with `tests/golden/<name>.txt`.
//! `LAZYFUSE_BLESS=1 cargo test --test golden` rewrites the files; a mismatch
//! prints a unified line diff.

use lazyfuse::{DType, Scalar, Tensor};
#[path = "support/golden.rs"]
mod golden;
use golden::{check, line_diff};

#[test]
fn promotion_inserts_casts_and_expands() {
    lazyfuse::set_verify(true);
    let a = Tensor::zeros(&[2, 3], DType::I32);
    // (realized: a constant operand would be recorded as one constant of the
    // broadcast shape, without the expanding view this shows)
    let b = Tensor::ones(&[3], DType::F16).realize().unwrap();
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

#[test]
fn a_diff_shows_each_change_once_with_its_context() {
    let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    // One line inserted after line 5, line 15 changed.
    let new = old
        .replace("line 5\n", "line 5\ninserted\n")
        .replace("line 15\n", "line fifteen\n");
    assert_eq!(
        line_diff(&old, &new),
        "@@ -3,6 +3,7 @@\n  line 3\n  line 4\n  line 5\n+ inserted\n  line 6\n  line 7\n  line 8\n\
         @@ -12,7 +13,7 @@\n  line 12\n  line 13\n  line 14\n- line 15\n+ line fifteen\n  line 16\n  line 17\n  line 18\n"
    );
    assert_eq!(line_diff(&old, &old), "");
    // Everything removed, everything added.
    assert_eq!(line_diff("a\nb\n", ""), "@@ -1,2 +1,0 @@\n- a\n- b\n");
    assert_eq!(line_diff("", "a\n"), "@@ -1,0 +1,1 @@\n+ a\n");
}
