//! Hand-built graphs for the interpreter's newer reductions (`nansum`, `any`, `all`,
//! `count_nonzero`, `logsumexp`, `norm`, the running mean) and `Op::Scan`
//! (`cumprod`, `cummax`/`cummin` with indices, `logcumsumexp`): special values,
//! integer wrap-around, reduced-precision accumulation, axes other than the last,
//! and the verifier's checks of these nodes.

use half::f16;
use lazyfuse_ir::{DType, NodeId, NormOrd, Op, ReduceOp, ScanOp};
use lazyfuse_runtime::interp::execute;
use lazyfuse_runtime::{Complex, Element};

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

#[allow(dead_code)]
#[path = "support/graph.rs"]
mod support;
use support::G;

impl G {
    fn reduce(&mut self, op: ReduceOp, dtype: DType, x: NodeId, axes: &[usize]) -> NodeId {
        let shape: Vec<usize> = self
            .g
            .node(x)
            .shape
            .iter()
            .enumerate()
            .filter(|(i, _)| !axes.contains(i))
            .map(|(_, &s)| s)
            .collect();
        let op = Op::Reduce {
            op,
            axes: axes.to_vec(),
            keepdim: false,
        };
        self.g.add(op, dtype, shape, &[x])
    }

    fn scan(&mut self, op: ScanOp, dtype: DType, x: NodeId, axis: usize) -> NodeId {
        let shape = self.g.node(x).shape.clone();
        self.g.add(Op::Scan { op, axis }, dtype, shape, &[x])
    }

    fn get<T: Element>(&self, t: NodeId) -> Vec<T> {
        let out = execute(&self.g, &self.inputs, &[t]).unwrap();
        out[0].as_slice::<T>().unwrap().to_vec()
    }
}

/// Bitwise float equality that treats every NaN alike (and tells -0.0 from 0.0).
fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits())
}

#[test]
fn nansum_skips_nan_but_not_opposite_infinities() {
    let mut g = G::default();
    let x = g.input(&[2, 3], vec![NAN, 1.0, -0.0, INF, -INF, NAN]);
    let s = g.reduce(ReduceOp::NanSum, DType::F64, x, &[1]);
    let got = g.get::<f64>(s);
    assert!(same(&got, &[1.0, NAN]), "{got:?}");
    // An all-NaN row sums to +0.
    let y = g.input(&[2], vec![NAN, NAN]);
    let s = g.reduce(ReduceOp::NanSum, DType::F64, y, &[0]);
    assert!(same(&g.get::<f64>(s), &[0.0]));
}

#[test]
fn nansum_of_int64_wraps() {
    let mut g = G::default();
    let x = g.input(&[2], vec![i64::MAX, 1]);
    let s = g.reduce(ReduceOp::NanSum, DType::I64, x, &[0]);
    assert_eq!(g.get::<i64>(s), vec![i64::MIN]);
}

#[test]
fn any_all_count_along_the_first_axis() {
    let mut g = G::default();
    // [[0, nan], [-0, 0]] : column 0 all zero, column 1 has a NaN (nonzero).
    let x = g.input(&[2, 2], vec![0.0f32, f32::NAN, -0.0, 0.0]);
    let any = g.reduce(ReduceOp::Any, DType::Bool, x, &[0]);
    let all = g.reduce(ReduceOp::All, DType::Bool, x, &[0]);
    let cnt = g.reduce(ReduceOp::CountNonzero, DType::I64, x, &[0]);
    assert_eq!(g.get::<bool>(any), vec![false, true]);
    assert_eq!(g.get::<bool>(all), vec![false, false]);
    assert_eq!(g.get::<i64>(cnt), vec![0, 1]);
    // uint8 input: uint8 output.
    let u = g.input(&[3], vec![0u8, 255, 1]);
    let any = g.reduce(ReduceOp::Any, DType::U8, u, &[0]);
    assert_eq!(g.get::<u8>(any), vec![1]);
    // Empty rows: any false, all true, count 0.
    let e = g.input(&[2, 0], Vec::<i32>::new());
    let all = g.reduce(ReduceOp::All, DType::Bool, e, &[1]);
    let cnt = g.reduce(ReduceOp::CountNonzero, DType::I64, e, &[1]);
    assert_eq!(g.get::<bool>(all), vec![true, true]);
    assert_eq!(g.get::<i64>(cnt), vec![0, 0]);
}

#[test]
fn logsumexp_handles_infinities_like_pytorch() {
    let mut g = G::default();
    let x = g.input(
        &[5, 2],
        vec![-INF, -INF, INF, 1.0, INF, INF, NAN, INF, 1000.0, 1000.0],
    );
    let l = g.reduce(ReduceOp::LogSumExp, DType::F64, x, &[1]);
    let got = g.get::<f64>(l);
    assert!(same(&got[..4], &[-INF, INF, INF, NAN]), "{got:?}");
    assert!((got[4] - (1000.0 + 2f64.ln())).abs() < 1e-12);
    // Empty: -inf.
    let e = g.input(&[0], Vec::<f64>::new());
    let l = g.reduce(ReduceOp::LogSumExp, DType::F64, e, &[0]);
    assert!(same(&g.get::<f64>(l), &[-INF]));
}

#[test]
fn float16_reductions_accumulate_in_float32() {
    let mut g = G::default();
    let big = f16::from_f32(60000.0);
    let x = g.input(&[3], vec![big, big, -big]);
    let s = g.reduce(ReduceOp::NanSum, DType::F16, x, &[0]);
    assert_eq!(g.get::<f16>(s), vec![big]);
    // sqrt(2) * 60000 overflows float16 only when rounded at the end.
    let y = g.input(&[2], vec![big, big]);
    let n = g.reduce(
        ReduceOp::Norm {
            ord: NormOrd::new(2.0),
        },
        DType::F16,
        y,
        &[0],
    );
    assert_eq!(g.get::<f16>(n), vec![f16::INFINITY]);
    let z = g.input(&[2], vec![f16::from_f32(300.0), f16::from_f32(0.5)]);
    let p = g.scan(ScanOp::Cumprod, DType::F16, z, 0);
    assert_eq!(
        g.get::<f16>(p),
        vec![f16::from_f32(300.0), f16::from_f32(150.0)]
    );
}

#[test]
fn norms_of_every_order() {
    let mut g = G::default();
    let x = g.input(&[4], vec![3.0f64, -4.0, 0.0, -0.0]);
    let cases = [
        (2.0, 5.0),
        (1.0, 7.0),
        (INF, 4.0),
        (-INF, 0.0),
        (0.0, 2.0),
        (3.0, 91f64.powf(1.0 / 3.0)),
    ];
    for (p, want) in cases {
        let op = ReduceOp::Norm {
            ord: NormOrd::new(p),
        };
        let n = g.reduce(op, DType::F64, x, &[0]);
        let got = g.get::<f64>(n)[0];
        assert!((got - want).abs() < 1e-12, "p={p}: {got} vs {want}");
    }
    let c = g.input(
        &[2],
        vec![Complex::new(3.0f32, 4.0), Complex::new(0.0, 1.0)],
    );
    let op = ReduceOp::Norm {
        ord: NormOrd::new(1.0),
    };
    let n = g.reduce(op, DType::F32, c, &[0]);
    assert_eq!(g.get::<f32>(n), vec![6.0]);
}

#[test]
fn running_mean_turns_an_infinity_then_a_finite_value_into_nan() {
    let mut g = G::default();
    let x = g.input(&[2, 2], vec![-INF, 1.0, 1.0, 3.0]);
    let m = g.reduce(ReduceOp::RunningMean, DType::F64, x, &[1]);
    assert!(same(&g.get::<f64>(m), &[NAN, 2.0]));
}

#[test]
fn cumprod_wraps_integers_along_a_leading_axis() {
    let mut g = G::default();
    let x = g.input(&[3, 2], vec![1i64 << 40, 2, 1 << 40, 3, 3, -1]);
    let p = g.scan(ScanOp::Cumprod, DType::I64, x, 0);
    assert_eq!(g.get::<i64>(p), vec![1 << 40, 2, 0, 6, 0, -6]);
}

#[test]
fn cummax_cummin_values_and_indices() {
    let mut g = G::default();
    let x = g.input(
        &[8],
        vec![3.0f32, 1.0, 3.0, 5.0, 5.0, f32::NAN, 2.0, f32::NAN],
    );
    let v = g.scan(ScanOp::Cummax, DType::F32, x, 0);
    let i = g.scan(ScanOp::CummaxIndices, DType::I64, x, 0);
    let vals: Vec<f64> = g.get::<f32>(v).into_iter().map(f64::from).collect();
    assert!(same(&vals, &[3.0, 3.0, 3.0, 5.0, 5.0, NAN, NAN, NAN]));
    assert_eq!(g.get::<i64>(i), vec![0, 0, 2, 3, 4, 5, 5, 7]);
    let y = g.input(&[5], vec![3u8, 1, 1, 2, 1]);
    let i = g.scan(ScanOp::CumminIndices, DType::I64, y, 0);
    let v = g.scan(ScanOp::Cummin, DType::U8, y, 0);
    assert_eq!(g.get::<i64>(i), vec![0, 1, 2, 2, 4]);
    assert_eq!(g.get::<u8>(v), vec![3, 1, 1, 1, 1]);
    let b = g.input(&[3], vec![false, true, false]);
    let v = g.scan(ScanOp::Cummax, DType::Bool, b, 0);
    assert_eq!(g.get::<bool>(v), vec![false, true, true]);
}

#[test]
fn logcumsumexp_special_values() {
    let mut g = G::default();
    let x = g.input(&[6], vec![-INF, -INF, 1.0, INF, NAN, 1.0]);
    let l = g.scan(ScanOp::LogCumSumExp, DType::F64, x, 0);
    assert!(same(&g.get::<f64>(l), &[-INF, -INF, 1.0, INF, NAN, NAN]));
    let y = g.input(&[2, 2], vec![0.0f64, 1.0, 0.0, 1.0]);
    let l = g.scan(ScanOp::LogCumSumExp, DType::F64, y, 0);
    let got = g.get::<f64>(l);
    assert_eq!(got[0], 0.0);
    assert!((got[2] - 2f64.ln()).abs() < 1e-15);
    assert!((got[3] - (1.0 + 2f64.ln())).abs() < 1e-15);
}

#[test]
fn verifier_checks_scan_and_reduce_nodes() {
    let mut g = G::default();
    let x = g.input(&[2, 3], vec![1.0f32; 6]);
    let ok = g.scan(ScanOp::CummaxIndices, DType::I64, x, 1);
    assert!(g.g.verify_node(ok).is_ok());
    let bad_dtype = g.scan(ScanOp::CummaxIndices, DType::F32, x, 1);
    assert!(g.g.verify_node(bad_dtype).is_err());
    let bad_axis = g.scan(ScanOp::Cumprod, DType::F32, x, 2);
    assert!(g.g.verify_node(bad_axis).is_err());
    let bad_any = g.reduce(ReduceOp::Any, DType::F32, x, &[0]);
    assert!(g.g.verify_node(bad_any).is_err());
    let bad_norm = g.reduce(
        ReduceOp::Norm {
            ord: NormOrd::new(2.0),
        },
        DType::F64,
        x,
        &[0],
    );
    assert!(g.g.verify_node(bad_norm).is_err());
    assert_eq!(g.g.node(ok).op.name(), "cummax_indices");
    assert_eq!(g.g.node(ok).op.attributes(), "axis=1");
}
