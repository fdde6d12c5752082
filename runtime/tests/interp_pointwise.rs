//! Hand-built graphs for the unary pointwise nodes (`Unary` math and
//! predicates, `UnaryParam`): values at NaN/±inf/±0 and integer extremes, float16
//! computed in float32 and rounded once, complex special values, and the verifier's
//! checks of the new nodes.

use half::f16;
use lazyfuse_ir::{DType, Graph, InputId, Op, UnaryOp, UnaryParamOp};
use lazyfuse_runtime::interp::execute;
use lazyfuse_runtime::{Buffer, Complex, Element};
use std::collections::HashMap;
use std::sync::Arc;

/// Runs `op` on one input of `data` (output dtype `out`).
fn run<T: Element>(op: Op, out: DType, data: Vec<T>) -> Buffer {
    let mut g = Graph::new();
    let n = data.len();
    let x = g.add(Op::Input(InputId(0)), T::DTYPE, vec![n], &[]);
    let y = g.add(op, out, vec![n], &[x]);
    g.verify_node(y).expect("a valid node");
    let inputs = HashMap::from([(InputId(0), Arc::new(Buffer::from_vec(data)))]);
    let out = execute(&g, &inputs, &[y]).expect("execution");
    (*out[0]).clone()
}

fn f64s(b: &Buffer) -> Vec<f64> {
    b.as_slice::<f64>().expect("float64").to_vec()
}

/// Equal, NaN equal to NaN, and the sign of zero significant.
fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x.is_nan() && y.is_nan()) || (x == y && x.signum() == y.signum()))
}

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

#[test]
fn real_functions_at_special_values() {
    use UnaryOp::*;
    let x = vec![NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0];
    let cases: [(UnaryOp, [f64; 7]); 8] = [
        (
            Expm1,
            [NAN, INF, -1.0, 0.0, -0.0, 1f64.exp_m1(), (-1f64).exp_m1()],
        ),
        (Log1p, [NAN, INF, NAN, 0.0, -0.0, 2f64.ln(), -INF]),
        (Exp2, [NAN, INF, 0.0, 1.0, 1.0, 2.0, 0.5]),
        (
            Erf,
            [
                NAN,
                1.0,
                -1.0,
                0.0,
                -0.0,
                0.8427007929497149,
                -0.8427007929497149,
            ],
        ),
        (
            Erfc,
            [
                NAN,
                0.0,
                2.0,
                1.0,
                1.0,
                0.15729920705028513,
                1.8427007929497148,
            ],
        ),
        (Erfinv, [NAN, NAN, NAN, 0.0, -0.0, INF, -INF]),
        (Atanh, [NAN, NAN, NAN, 0.0, -0.0, INF, -INF]),
        (Frac, [NAN, NAN, NAN, 0.0, 0.0, 0.0, 0.0]),
    ];
    for (op, want) in cases {
        let got = f64s(&run(Op::Unary(op), DType::F64, x.clone()));
        assert!(same(&got, &want), "{op:?}: {got:?}");
    }
}

#[test]
fn predicates_and_integer_extremes() {
    let x = vec![NAN, INF, -INF, -0.0, 1.0];
    let p = |op| {
        run(Op::Unary(op), DType::Bool, x.clone())
            .as_slice::<bool>()
            .unwrap()
            .to_vec()
    };
    assert_eq!(p(UnaryOp::IsInf), vec![false, true, true, false, false]);
    assert_eq!(p(UnaryOp::IsPosInf), vec![false, true, false, false, false]);
    assert_eq!(p(UnaryOp::IsNegInf), vec![false, false, true, false, false]);
    assert_eq!(p(UnaryOp::IsFinite), vec![false, false, false, true, true]);
    assert_eq!(p(UnaryOp::Signbit), vec![false, false, true, true, false]);
    let ints = vec![i8::MIN, -1, 0, i8::MAX];
    let sq = run(Op::Unary(UnaryOp::Square), DType::I8, ints.clone());
    assert_eq!(sq.as_slice::<i8>().unwrap(), &[0, 1, 0, 1]);
    let sg = run(Op::Unary(UnaryOp::Sgn), DType::I8, ints.clone());
    assert_eq!(sg.as_slice::<i8>().unwrap(), &[-1, -1, 0, 1]);
    let sb = run(Op::Unary(UnaryOp::Signbit), DType::Bool, ints);
    assert_eq!(sb.as_slice::<bool>().unwrap(), &[true, true, false, false]);
    let u = run(Op::Unary(UnaryOp::Signbit), DType::Bool, vec![u64::MAX]);
    assert_eq!(u.as_slice::<bool>().unwrap(), &[false]);
}

#[test]
fn float16_rounds_once_and_nan_to_num_uses_half_limits() {
    let x = vec![f16::from_f32(0.1), f16::NAN, f16::INFINITY];
    let out = run(Op::Unary(UnaryOp::Expm1), DType::F16, x.clone());
    let want = f16::from_f32(f16::from_f32(0.1).to_f32().exp_m1());
    assert_eq!(out.as_slice::<f16>().unwrap()[0], want);
    let n = UnaryParamOp::NanToNum {
        nan: 0.0,
        posinf: 65504.0,
        neginf: -65504.0,
    };
    let out = run(Op::UnaryParam(n), DType::F16, x);
    let v: Vec<f32> = out
        .as_slice::<f16>()
        .unwrap()
        .iter()
        .map(|h| h.to_f32())
        .collect();
    assert_eq!(v, vec![f16::from_f32(0.1).to_f32(), 0.0, 65504.0]);
}

#[test]
fn parameterised_activations() {
    let x = vec![-INF, -1.0, -0.0, 0.5, 30.0, INF, NAN];
    let act = |op| f64s(&run(Op::UnaryParam(op), DType::F64, x.clone()));
    let elu = act(UnaryParamOp::Elu {
        alpha: 2.0,
        scale: 1.0,
        input_scale: 1.0,
    });
    assert!(same(
        &elu,
        &[-2.0, 2.0 * (-1f64).exp_m1(), -0.0, 0.5, 30.0, INF, NAN]
    ));
    let lr = act(UnaryParamOp::LeakyRelu {
        negative_slope: 0.1,
    });
    assert!(
        same(&lr, &[-INF, -0.1, -0.0, 0.5, 30.0, INF, NAN]),
        "{lr:?}"
    );
    let sp = act(UnaryParamOp::Softplus {
        beta: 1.0,
        threshold: 20.0,
    });
    assert_eq!(sp[4], 30.0);
    assert!(sp[0] == 0.0 && sp[5] == INF && sp[6].is_nan());
    let ht = act(UnaryParamOp::Hardtanh {
        min_val: -0.5,
        max_val: 1.0,
    });
    assert!(same(&ht, &[-0.5, -0.5, -0.0, 0.5, 1.0, 1.0, NAN]), "{ht:?}");
    let lg = f64s(&run(
        Op::UnaryParam(UnaryParamOp::Logit { eps: Some(0.25) }),
        DType::F64,
        vec![0.0, 1.0, NAN],
    ));
    assert!(same(&lg, &[-(3f64.ln()), 3f64.ln(), NAN]), "{lg:?}");
    let ht_int = run(
        Op::UnaryParam(UnaryParamOp::Hardtanh {
            min_val: -1e30,
            max_val: 6.0,
        }),
        DType::U8,
        vec![0u8, 7, 255],
    );
    assert_eq!(ht_int.as_slice::<u8>().unwrap(), &[0, 6, 6]);
}

#[test]
fn complex_special_values() {
    let z = |re, im| Complex::new(re, im);
    let x = vec![z(0.0, 0.0), z(0.0, -2.0), z(INF, 0.0), z(NAN, 0.0)];
    let out = run(Op::Unary(UnaryOp::Sinh), DType::C128, x.clone());
    let v = out.as_slice::<Complex<f64>>().unwrap();
    assert_eq!(v[2], z(INF, 0.0));
    assert!(v[3].re.is_nan() && v[3].im == 0.0);
    let out = run(Op::Unary(UnaryOp::Sgn), DType::C128, x);
    let v = out.as_slice::<Complex<f64>>().unwrap();
    assert_eq!(v[0], z(0.0, 0.0));
    assert_eq!(v[1], z(0.0, -1.0));
    // asin on the real axis beyond 1 takes the side of the zero's sign.
    let out = run(
        Op::Unary(UnaryOp::Asin),
        DType::C128,
        vec![z(2.0, 0.0), z(2.0, -0.0)],
    );
    let v = out.as_slice::<Complex<f64>>().unwrap();
    assert!(v[0].im > 0.0 && v[1].im < 0.0);
}

#[test]
fn verifier_checks_the_new_nodes() {
    let mut g = Graph::new();
    let x = g.add(Op::Input(InputId(0)), DType::F32, vec![3], &[]);
    let bad = g.add(Op::Unary(UnaryOp::IsInf), DType::F32, vec![3], &[x]);
    assert!(g.verify_node(bad).is_err());
    let gelu = Op::UnaryParam(UnaryParamOp::Gelu { tanh: false });
    let bad = g.add(gelu.clone(), DType::F64, vec![3], &[x]);
    assert!(g.verify_node(bad).is_err());
    let bad = g.add(gelu.clone(), DType::F32, vec![2], &[x]);
    assert!(g.verify_node(bad).is_err());
    let ok = g.add(gelu, DType::F32, vec![3], &[x]);
    assert!(g.verify_node(ok).is_ok());
}
