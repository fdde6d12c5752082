//! Hand-built graphs for the interpreter's kernels of the binary math ops
//! (`fmax` … `lcm`): special values, signed zeros, integer extremes, float16 bits,
//! and the verifier's dtype invariant for these nodes.

use half::f16;
use lazyfuse_ir::{BinaryOp, DType, Graph, InputId, NodeId, Op};
use lazyfuse_runtime::interp::execute;
use lazyfuse_runtime::{Buffer, Element};
use std::collections::HashMap;
use std::sync::Arc;

/// Builds `op(x, y)` on two input buffers of one dtype and runs it.
fn run<T: Element>(op: BinaryOp, x: Vec<T>, y: Vec<T>) -> Buffer {
    let mut g = Graph::default();
    let mut inputs = HashMap::new();
    let n = x.len();
    let mut input = |data: Vec<T>, g: &mut Graph| -> NodeId {
        let id = InputId(inputs.len() as u64);
        inputs.insert(id, Arc::new(Buffer::from_vec(data)));
        g.add(Op::Input(id), T::DTYPE, vec![n], &[])
    };
    let a = input(x, &mut g);
    let b = input(y, &mut g);
    let out = g.add(Op::Binary(op), T::DTYPE, vec![n], &[a, b]);
    g.verify_node(out).unwrap();
    (*execute(&g, &inputs, &[out]).unwrap()[0]).clone()
}

fn vals<T: Element>(b: &Buffer) -> Vec<T> {
    b.as_slice::<T>().unwrap().to_vec()
}

#[test]
fn fmax_fmin_ignore_nan_and_keep_the_first_zero() {
    let nan = f32::NAN;
    let x = vec![nan, 1.0, nan, -0.0, 0.0];
    let y = vec![2.0, nan, nan, 0.0, -0.0];
    let m: Vec<f32> = vals(&run(BinaryOp::Fmax, x.clone(), y.clone()));
    assert_eq!((m[0], m[1]), (2.0, 1.0));
    assert!(m[2].is_nan());
    assert!(m[3] == 0.0 && m[3].is_sign_negative() && m[4].is_sign_positive());
    let m: Vec<f32> = vals(&run(BinaryOp::Fmin, x, y));
    assert!(m[3].is_sign_negative() && m[4].is_sign_positive());
    let i: Vec<i8> = vals(&run(BinaryOp::Fmax, vec![i8::MIN, 3], vec![i8::MAX, -3]));
    assert_eq!(i, vec![i8::MAX, 3]);
}

#[test]
fn float_functions_special_values() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let h: Vec<f64> = vals(&run(
        BinaryOp::Hypot,
        vec![inf, nan, -3.0],
        vec![nan, inf, 4.0],
    ));
    assert_eq!(h, vec![inf, inf, 5.0]);
    let c: Vec<f64> = vals(&run(BinaryOp::Copysign, vec![1.0, 0.0], vec![-0.0, -nan]));
    assert!(c[0] == -1.0 && c[1] == 0.0 && c[1].is_sign_negative());
    let l: Vec<f64> = vals(&run(
        BinaryOp::Logaddexp,
        vec![inf, -inf, 0.0],
        vec![inf, -inf, 0.0],
    ));
    assert_eq!(l, vec![inf, -inf, std::f64::consts::LN_2]);
    let l: Vec<f64> = vals(&run(BinaryOp::Logaddexp2, vec![-inf, 3.0], vec![-inf, 3.0]));
    assert_eq!(l, vec![-inf, 4.0]);
    let x: Vec<f64> = vals(&run(
        BinaryOp::Xlogy,
        vec![0.0, 0.0, 1.0, 2.0],
        vec![0.0, nan, 0.0, -1.0],
    ));
    assert_eq!(x[0], 0.0);
    assert!(x[1].is_nan() && x[3].is_nan());
    assert_eq!(x[2], -inf);
    let n: Vec<f16> = vals(&run(
        BinaryOp::Nextafter,
        vec![f16::ONE, f16::ZERO, f16::INFINITY],
        vec![f16::from_f32(2.0), f16::NEG_ONE, f16::ZERO],
    ));
    assert_eq!(n[0].to_bits(), 0x3C01);
    assert_eq!(n[1].to_bits(), 0x8001);
    assert_eq!(n[2], f16::MAX);
}

#[test]
fn shifts_gcd_lcm_at_the_extremes() {
    let l: Vec<i64> = vals(&run(
        BinaryOp::BitwiseLeftShift,
        vec![1i64, 1, -1, 3],
        vec![63, 64, -1, 62],
    ));
    assert_eq!(l, vec![i64::MIN, 0, 0, -4611686018427387904]);
    let r: Vec<i64> = vals(&run(
        BinaryOp::BitwiseRightShift,
        vec![i64::MIN, -1, 7, 7],
        vec![63, 64, -1, 1000],
    ));
    assert_eq!(r, vec![-1, -1, 0, 0]);
    let r: Vec<u8> = vals(&run(
        BinaryOp::BitwiseRightShift,
        vec![200u8, 255, 5],
        vec![7, 8, 200],
    ));
    assert_eq!(r, vec![1, 0, 0]);
    let g: Vec<i8> = vals(&run(
        BinaryOp::Gcd,
        vec![-128i8, -128, 0, -6, 12, -128],
        vec![0, -128, 0, 4, -18, 6],
    ));
    assert_eq!(g, vec![-128, -128, 0, 2, 6, -2]);
    let m: Vec<i8> = vals(&run(
        BinaryOp::Lcm,
        vec![-128i8, 0, 50, 127],
        vec![3, 5, 3, 2],
    ));
    assert_eq!(m, vec![-128, 0, -106, -2]);
}

#[test]
fn verifier_refuses_a_kernel_dtype_the_op_lacks() {
    let mut g = Graph::default();
    let a = g.add(Op::Input(InputId(0)), DType::F32, vec![2], &[]);
    let bad = g.add(Op::Binary(BinaryOp::Gcd), DType::F32, vec![2], &[a, a]);
    assert!(g.verify_node(bad).is_err());
    let good = g.add(Op::Binary(BinaryOp::Hypot), DType::F32, vec![2], &[a, a]);
    assert!(g.verify_node(good).is_ok());
}
