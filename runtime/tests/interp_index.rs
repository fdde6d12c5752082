//! Hand-built graphs of the indexing nodes (`gather`, `index_select`, `take`,
//! `scatter`, `flip`) on the interpreter: index values out of range are errors with
//! PyTorch's messages, malformed nodes are `Malformed` (never a panic or an access
//! outside a buffer), raw storage-only bytes move, and scatter's numerics.

use half::{bf16, f16};
use lazyfuse_ir::{DType, NodeId, Op, ScatterReduce};
use lazyfuse_runtime::interp::execute;
use lazyfuse_runtime::{Buffer, Error};

#[allow(dead_code)]
#[path = "support/graph.rs"]
mod support;
use support::G;

impl G {
    fn run(
        &mut self,
        op: Op,
        dtype: DType,
        shape: &[usize],
        ins: &[NodeId],
    ) -> Result<Buffer, Error> {
        let n = self.g.add(op, dtype, shape, ins);
        execute(&self.g, &self.inputs, &[n]).map(|b| (*b[0]).clone())
    }
}

fn scatter(reduce: Option<ScatterReduce>, include_self: bool) -> Op {
    Op::Scatter {
        axis: 0,
        reduce,
        include_self,
    }
}

#[test]
fn gather_reads_along_the_axis_and_checks_values() {
    let mut g = G::default();
    let x = g.input(&[2, 3], vec![0i8, 1, 2, 3, 4, 5]);
    let i = g.input(&[2, 2], vec![2i64, 0, 1, 1]);
    let out = g.run(Op::Gather { axis: 1 }, DType::I8, &[2, 2], &[x, i]);
    assert_eq!(out.unwrap(), Buffer::from_vec(vec![2i8, 0, 4, 4]));
    let bad = g.input(&[1, 1], vec![-1i64]);
    let err = g.run(Op::Gather { axis: 0 }, DType::I8, &[1, 1], &[x, bad]);
    assert_eq!(
        err.unwrap_err(),
        Error::IndexOutOfRange("index -1 is out of bounds for dimension 0 with size 2".into())
    );
}

#[test]
fn malformed_index_nodes_are_reported() {
    let mut g = G::default();
    let x = g.input(&[3], vec![1.0f32, 2.0, 3.0]);
    let i32_index = g.input(&[1], vec![0i32]);
    let r = g.run(Op::Take, DType::F32, &[1], &[x, i32_index]);
    assert!(matches!(r, Err(Error::Malformed(_))), "{r:?}");
    // an index larger than the input in a non-indexed dim
    let x2 = g.input(&[1, 2], vec![1.0f32, 2.0]);
    let wide = g.input(&[1, 3], vec![0i64, 0, 0]);
    let r = g.run(Op::Gather { axis: 0 }, DType::F32, &[1, 3], &[x2, wide]);
    assert!(matches!(r, Err(Error::Malformed(_))), "{r:?}");
    // a source that does not match the index
    let idx = g.input(&[2], vec![0i64, 1]);
    let src = g.input(&[1], vec![9.0f32]);
    let r = g.run(scatter(None, true), DType::F32, &[3], &[x, idx, src]);
    assert!(matches!(r, Err(Error::Malformed(_))), "{r:?}");
    // an axis past the input's dims
    let r = g.run(Op::IndexSelect { axis: 1 }, DType::F32, &[2], &[x, idx]);
    assert!(matches!(r, Err(Error::Malformed(_))), "{r:?}");
}

#[test]
fn raw_bytes_move_through_index_select_take_and_flip() {
    let mut g = G::default();
    let raw = Buffer::Raw {
        dtype: DType::F8E4M3FN,
        bytes: vec![1, 2, 3, 4, 5, 6],
    };
    let x = g.buffer(&[2, 3], raw);
    let i = g.input(&[2], vec![2i64, 0]);
    let sel = g.run(
        Op::IndexSelect { axis: 1 },
        DType::F8E4M3FN,
        &[2, 2],
        &[x, i],
    );
    let bytes = |b: Buffer| match b {
        Buffer::Raw { bytes, .. } => bytes,
        other => panic!("{other:?}"),
    };
    assert_eq!(bytes(sel.unwrap()), vec![3, 1, 6, 4]);
    let t = g.input(&[2], vec![-1i64, 1]);
    let took = g.run(Op::Take, DType::F8E4M3FN, &[2], &[x, t]);
    assert_eq!(bytes(took.unwrap()), vec![6, 2]);
    let f = g.run(Op::Flip { axes: vec![0] }, DType::F8E4M3FN, &[2, 3], &[x]);
    assert_eq!(bytes(f.unwrap()), vec![4, 5, 6, 1, 2, 3]);
}

#[test]
fn flip_of_empty_and_zero_dim() {
    let mut g = G::default();
    let e = g.input::<f64>(&[0, 2], vec![]);
    let r = g.run(Op::Flip { axes: vec![0, 1] }, DType::F64, &[0, 2], &[e]);
    assert_eq!(r.unwrap().len(), 0);
    let z = g.input(&[], vec![7u64]);
    let r = g.run(Op::Flip { axes: vec![0] }, DType::U64, &[], &[z]);
    assert_eq!(r.unwrap(), Buffer::from_vec(vec![7u64]));
}

#[test]
fn scatter_numerics() {
    let mut g = G::default();
    // integer sums wrap; amax/amin of NaN propagate; -0.0 alone sums to +0.0
    let x = g.input(&[2], vec![i8::MAX, 0]);
    let i = g.input(&[2], vec![0i64, 0]);
    let s = g.input(&[2], vec![1i8, 1]);
    let r = g.run(
        scatter(Some(ScatterReduce::Sum), true),
        DType::I8,
        &[2],
        &[x, i, s],
    );
    assert_eq!(r.unwrap(), Buffer::from_vec(vec![i8::MIN + 1, 0]));
    let xf = g.input(&[2], vec![1.0f64, 5.0]);
    let sf = g.input(&[2], vec![f64::NAN, -0.0]);
    let i01 = g.input(&[2], vec![0i64, 1]);
    let r = g.run(
        scatter(Some(ScatterReduce::Amin), true),
        DType::F64,
        &[2],
        &[xf, i01, sf],
    );
    let v = r.unwrap();
    let v = v.as_slice::<f64>().unwrap();
    assert!(v[0].is_nan() && v[1] == 0.0 && v[1].is_sign_negative());
    let r = g.run(
        scatter(Some(ScatterReduce::Sum), false),
        DType::F64,
        &[2],
        &[xf, i01, sf],
    );
    let v = r.unwrap();
    assert!(v.as_slice::<f64>().unwrap()[1].is_sign_positive());
    // bfloat16 accumulates in float32 and rounds once: 256 + 1 + 1 = 258
    let xb = g.input(&[1], vec![bf16::from_f32(256.0)]);
    let sb = g.input(&[2], vec![bf16::ONE, bf16::ONE]);
    let r = g.run(
        scatter(Some(ScatterReduce::Sum), true),
        DType::BF16,
        &[1],
        &[xb, i, sb],
    );
    assert_eq!(r.unwrap(), Buffer::from_vec(vec![bf16::from_f32(258.0)]));
    // float16 mean rounds the sum first: (2048 + 1 + 1) / 3 → 683.5
    let xh = g.input(&[1], vec![f16::from_f32(2048.0)]);
    let sh = g.input(&[2], vec![f16::ONE, f16::ONE]);
    let r = g.run(
        scatter(Some(ScatterReduce::Mean), true),
        DType::F16,
        &[1],
        &[xh, i, sh],
    );
    assert_eq!(r.unwrap(), Buffer::from_vec(vec![f16::from_f32(683.5)]));
    // u8 mean: the wrapped sum floor-divided
    let xu = g.input(&[1], vec![0u8]);
    let su = g.input(&[2], vec![255u8, 255]);
    let r = g.run(
        scatter(Some(ScatterReduce::Mean), false),
        DType::U8,
        &[1],
        &[xu, i, su],
    );
    assert_eq!(r.unwrap(), Buffer::from_vec(vec![127u8]));
}

#[test]
fn complex_order_reductions_are_not_computed() {
    let mut g = G::default();
    let x = g.input(&[1], vec![lazyfuse_runtime::Complex::new(1.0f32, 0.0)]);
    let i = g.input(&[1], vec![0i64]);
    let r = g.run(
        scatter(Some(ScatterReduce::Amax), true),
        DType::C64,
        &[1],
        &[x, i, x],
    );
    assert!(matches!(r, Err(Error::Unsupported(_))), "{r:?}");
}
