//! Hand-built graphs checking the interpreter per op family, with the special
//! values the conformance data does not reach: NaN/inf/-0.0, integer extremes,
//! division by zero, NaN propagation in max/argmax, float16 rounding, and that
//! intermediate buffers are freed.

use half::f16;
use lazyfuse_ir::{
    ArgReduceOp, BinaryOp, DType, Graph, InputId, Layout, NodeId, Op, ReduceOp, Scalar, UnaryOp,
};
use lazyfuse_runtime::interp::{execute, execute_with_stats};
use lazyfuse_runtime::{Buffer, Complex, Element, Error};
use std::collections::HashMap;
use std::sync::Arc;

#[allow(dead_code)]
#[path = "support/graph.rs"]
mod support;
use support::G;

impl G {
    fn node(&mut self, op: Op, dtype: DType, shape: &[usize], ins: &[NodeId]) -> NodeId {
        self.g.add(op, dtype, shape, ins)
    }

    fn shape(&self, n: NodeId) -> Vec<usize> {
        self.g.node(n).shape.to_vec()
    }

    fn unary(&mut self, u: UnaryOp, dtype: DType, x: NodeId) -> NodeId {
        let s = self.shape(x);
        self.node(Op::Unary(u), dtype, &s, &[x])
    }

    fn binary(&mut self, b: BinaryOp, x: NodeId, y: NodeId) -> NodeId {
        let s = self.shape(x);
        let dt = if b.is_predicate() {
            DType::Bool
        } else {
            self.g.node(x).dtype
        };
        self.node(Op::Binary(b), dt, &s, &[x, y])
    }

    fn run(&self, t: NodeId) -> Result<Buffer, Error> {
        execute(&self.g, &self.inputs, &[t]).map(|v| (*v[0]).clone())
    }

    fn get<T: Element>(&self, t: NodeId) -> Vec<T> {
        self.run(t).unwrap().as_slice::<T>().unwrap().to_vec()
    }
}

fn bin<T: Element>(op: BinaryOp, a: Vec<T>, b: Vec<T>) -> Result<Buffer, Error> {
    let mut g = G::default();
    let n = a.len();
    let (x, y) = (g.input(&[n], a), g.input(&[n], b));
    let z = g.binary(op, x, y);
    g.run(z)
}

fn un<T: Element>(op: UnaryOp, out: DType, a: Vec<T>) -> Buffer {
    let mut g = G::default();
    let n = a.len();
    let x = g.input(&[n], a);
    let z = g.unary(op, out, x);
    g.run(z).unwrap()
}

fn f32s(b: &Buffer) -> Vec<f32> {
    b.as_slice::<f32>().unwrap().to_vec()
}

/// Bitwise equality that treats every NaN as equal and keeps the sign of zero.
fn same(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits())
}

#[test]
fn integer_arithmetic_wraps() {
    use BinaryOp::*;
    let r = bin(Add, vec![i8::MAX, i8::MIN], vec![1i8, -1]).unwrap();
    assert_eq!(r, Buffer::from_vec(vec![i8::MIN, i8::MAX]));
    let r = bin(Mul, vec![i64::MAX, 1 << 62], vec![2i64, 4]).unwrap();
    assert_eq!(r, Buffer::from_vec(vec![-2i64, 0]));
    let r = bin(Sub, vec![0u8, 5], vec![1u8, 10]).unwrap();
    assert_eq!(r, Buffer::from_vec(vec![255u8, 251]));
    let r = un(UnaryOp::Neg, DType::I32, vec![i32::MIN, 5]);
    assert_eq!(r, Buffer::from_vec(vec![i32::MIN, -5]));
    let r = un(UnaryOp::Abs, DType::I16, vec![i16::MIN, -3]);
    assert_eq!(r, Buffer::from_vec(vec![i16::MIN, 3]));
    let r = bin(Add, vec![u64::MAX], vec![2u64]).unwrap();
    assert_eq!(r, Buffer::from_vec(vec![1u64]));
}

#[test]
fn integer_division_follows_python() {
    use BinaryOp::*;
    let a = vec![7i64, -7, 7, -7, i64::MIN];
    let b = vec![2i64, 2, -2, -2, -1];
    assert_eq!(
        bin(DivFloor, a.clone(), b.clone()).unwrap(),
        Buffer::from_vec(vec![3i64, -4, -4, 3, i64::MIN])
    );
    assert_eq!(
        bin(DivTrunc, a.clone(), b.clone()).unwrap(),
        Buffer::from_vec(vec![3i64, -3, -3, 3, i64::MIN])
    );
    assert_eq!(
        bin(Remainder, a.clone(), b.clone()).unwrap(),
        Buffer::from_vec(vec![1i64, 1, -1, -1, 0])
    );
    assert_eq!(
        bin(Fmod, a, b).unwrap(),
        Buffer::from_vec(vec![1i64, -1, 1, -1, 0])
    );
    for op in [DivFloor, DivTrunc, Remainder, Fmod] {
        assert_eq!(
            bin(op, vec![5i32, 1], vec![1i32, 0]),
            Err(Error::ZeroDivision)
        );
        assert_eq!(bin(op, vec![5u8], vec![0u8]), Err(Error::ZeroDivision));
    }
}

#[test]
fn float_division_follows_pytorch() {
    use BinaryOp::*;
    let inf = f32::INFINITY;
    let r = bin(
        DivFloor,
        vec![7.0f32, -7.0, 1.0, -1.0, 0.0, 5.0],
        vec![2.0f32, 2.0, 0.0, 0.0, 0.0, -inf],
    )
    .unwrap();
    let r = f32s(&r);
    assert!(same(&r[..4], &[3.0, -4.0, inf, -inf]), "{r:?}");
    assert!(r[4].is_nan());
    // fmod(5, -inf) = 5 with the divisor's sign differing: (5 - 5)/-inf - 1 = -1
    assert_eq!(r[5], -1.0);
    let r = f32s(
        &bin(
            Remainder,
            vec![-7.0f32, 7.0, 5.0, -0.0],
            vec![2.0f32, -2.0, 0.0, 1.0],
        )
        .unwrap(),
    );
    assert_eq!(&r[..2], &[1.0, -1.0]);
    assert!(r[2].is_nan());
    assert_eq!(r[3], 0.0);
    let r = f32s(&bin(Fmod, vec![-7.0f32, 7.0], vec![2.0f32, -2.0]).unwrap());
    assert_eq!(r, vec![-1.0, 1.0]);
    let r = f32s(&bin(Div, vec![1.0f32, -1.0, 0.0], vec![0.0f32, 0.0, 0.0]).unwrap());
    assert_eq!(&r[..2], &[inf, -inf]);
    assert!(r[2].is_nan());
}

#[test]
fn integer_pow() {
    let r = bin(
        BinaryOp::Pow,
        vec![2i32, -2, 1, -1, -1, 0, 3, 2, 7],
        vec![10i32, 3, -5, -3, -4, -1, -1, 31, 0],
    )
    .unwrap();
    assert_eq!(
        r,
        Buffer::from_vec(vec![1024i32, -8, 1, -1, 1, 0, 0, i32::MIN, 1])
    );
    // wrapping: 3^40 mod 2^8
    let r = bin(BinaryOp::Pow, vec![3u8], vec![40u8]).unwrap();
    assert_eq!(r, Buffer::from_vec(vec![3u64.pow(40) as u8]));
}

#[test]
fn nan_propagation() {
    use BinaryOp::*;
    let nan = f32::NAN;
    let a = vec![nan, 1.0, 2.0, -0.0];
    let b = vec![1.0, nan, 1.0, 0.0];
    let mx = f32s(&bin(Maximum, a.clone(), b.clone()).unwrap());
    assert!(mx[0].is_nan() && mx[1].is_nan());
    assert_eq!(mx[2], 2.0);
    let mn = f32s(&bin(Minimum, a.clone(), b.clone()).unwrap());
    assert!(mn[0].is_nan() && mn[1].is_nan());
    assert_eq!(mn[2], 1.0);
    assert_eq!(
        bin(Eq, a.clone(), b.clone()).unwrap(),
        Buffer::from_vec(vec![false, false, false, true])
    );
    assert_eq!(
        bin(Ne, a.clone(), b.clone()).unwrap(),
        Buffer::from_vec(vec![true, true, true, false])
    );
    assert_eq!(
        bin(Lt, a.clone(), b.clone()).unwrap(),
        Buffer::from_vec(vec![false, false, false, false])
    );
    // truthiness: NaN and -0.0
    assert_eq!(
        bin(LogicalAnd, a, vec![1.0f32; 4]).unwrap(),
        Buffer::from_vec(vec![true, true, true, false])
    );

    // amax / argmax: NaN wins, the first NaN
    let mut g = G::default();
    let x = g.input(&[2, 3], vec![1.0f32, nan, 5.0, 3.0, 1.0, 3.0]);
    let amax = g.node(
        Op::Reduce {
            op: ReduceOp::Amax,
            axes: vec![1],
            keepdim: false,
        },
        DType::F32,
        &[2],
        &[x],
    );
    let r = g.get::<f32>(amax);
    assert!(r[0].is_nan());
    assert_eq!(r[1], 3.0);
    let arg = |g: &mut G, op, axis| {
        let shape: &[usize] = if axis == Some(1) { &[2] } else { &[] };
        g.node(
            Op::ArgReduce {
                op,
                axis,
                keepdim: false,
            },
            DType::I64,
            shape,
            &[x],
        )
    };
    let am = arg(&mut g, ArgReduceOp::ArgMax, Some(1));
    assert_eq!(g.get::<i64>(am), vec![1, 0]);
    let an = arg(&mut g, ArgReduceOp::ArgMin, Some(1));
    assert_eq!(g.get::<i64>(an), vec![1, 1]);
    let all = arg(&mut g, ArgReduceOp::ArgMax, None);
    assert_eq!(g.get::<i64>(all), vec![1]);
}

#[test]
fn unary_special_values() {
    use UnaryOp::*;
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    let x = vec![nan, -inf, -2.5, -0.5, -0.0, 0.5, 1.5, 2.5, inf];
    let r = f32s(&un(Round, DType::F32, x.clone()));
    assert!(
        same(&r, &[nan, -inf, -2.0, -0.0, -0.0, 0.0, 2.0, 2.0, inf]),
        "{r:?}"
    );
    let r = f32s(&un(Sign, DType::F32, x.clone()));
    assert!(
        // PyTorch's (0 < x) - (x < 0): NaN gives 0.
        same(&r, &[0.0, -1.0, -1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 1.0]),
        "{r:?}"
    );
    let r = f32s(&un(Sigmoid, DType::F32, vec![-1000.0f32, 0.0, 1000.0, nan]));
    assert!(same(&r, &[0.0, 0.5, 1.0, nan]), "{r:?}");
    let r = f32s(&un(Rsqrt, DType::F32, vec![0.0f32, -0.0, 4.0, -1.0]));
    assert!(same(&r, &[inf, -inf, 0.5, nan]), "{r:?}");
    let r = f32s(&un(Relu, DType::F32, vec![-1.0f32, nan, 2.0]));
    assert!(same(&r, &[0.0, nan, 2.0]), "{r:?}");
    assert_eq!(
        un(IsNan, DType::Bool, vec![nan, 1.0]),
        Buffer::from_vec(vec![true, false])
    );
    assert_eq!(
        un(LogicalNot, DType::Bool, vec![nan, 0.0, -0.0]),
        Buffer::from_vec(vec![false, true, true])
    );
    assert_eq!(
        un(BitwiseNot, DType::I8, vec![0i8, -1]),
        Buffer::from_vec(vec![-1i8, 0])
    );
    assert_eq!(
        un(BitwiseNot, DType::Bool, vec![true, false]),
        Buffer::from_vec(vec![false, true])
    );
    // complex: |3+4i| = 5 (real output); 1/0 = (inf, nan)
    let r = un(Abs, DType::F64, vec![Complex::new(3.0f64, 4.0)]);
    assert_eq!(r, Buffer::from_vec(vec![5.0f64]));
    let r = un(
        Reciprocal,
        DType::C64,
        vec![Complex::new(0.0f32, 0.0), Complex::new(0.0, 2.0)],
    );
    let r = r.as_slice::<Complex<f32>>().unwrap();
    assert!(r[0].re == inf && r[0].im.is_nan());
    assert_eq!(r[1], Complex::new(0.0, -0.5));
    // float-only functions on integers are a builder bug, reported, not a panic
    let mut g = G::default();
    let x = g.input(&[1], vec![1i32]);
    let e = g.unary(Exp, DType::I32, x);
    assert!(matches!(g.run(e), Err(Error::Malformed(_))));
}

#[test]
fn float16_rounds_once() {
    // 2049 is not a float16; 2048 + 1 computed in f32 rounds to even (2048).
    let a: Vec<f16> = vec![
        f16::from_f32(2048.0),
        f16::from_f32(65504.0),
        f16::from_f32(0.1),
    ];
    let b: Vec<f16> = vec![
        f16::from_f32(1.0),
        f16::from_f32(65504.0),
        f16::from_f32(0.2),
    ];
    let r = bin(BinaryOp::Add, a, b).unwrap();
    let r = r.as_slice::<f16>().unwrap();
    assert_eq!(r[0].to_f32(), 2048.0);
    assert_eq!(r[1], f16::INFINITY);
    // 0.1h + 0.2h in f32, rounded once
    assert_eq!(
        r[2],
        f16::from_f32(f16::from_f32(0.1).to_f32() + f16::from_f32(0.2).to_f32())
    );
    // a float16 sum of 4096 ones accumulates in f32 (a float16 accumulator stops at 2048)
    let mut g = G::default();
    let x = g.input(&[4096], vec![f16::ONE; 4096]);
    let s = g.node(
        Op::Reduce {
            op: ReduceOp::Sum,
            axes: vec![0],
            keepdim: false,
        },
        DType::F16,
        &[],
        &[x],
    );
    assert_eq!(g.get::<f16>(s), vec![f16::from_f32(4096.0)]);
}

#[test]
fn casts() {
    let mut g = G::default();
    let x = g.input(&[6], vec![-1.9f64, 2.9, 300.0, -0.0, f64::NAN, 65520.0]);
    let to = |g: &mut G, d| g.node(Op::Cast, d, &[6], &[x]);
    let i = to(&mut g, DType::I64);
    assert_eq!(g.get::<i64>(i)[..4], [-1, 2, 300, 0]);
    let u = to(&mut g, DType::U8);
    assert_eq!(g.get::<u8>(u)[..4], [255, 2, 44, 0]);
    let b = to(&mut g, DType::Bool);
    assert_eq!(g.get::<bool>(b), vec![true, true, true, false, true, true]);
    let h = to(&mut g, DType::F16);
    let h = g.get::<f16>(h);
    assert_eq!(h[5], f16::INFINITY);
    assert!(h[4].is_nan());
    let c = to(&mut g, DType::C64);
    assert_eq!(g.get::<Complex<f32>>(c)[1], Complex::new(2.9f32, 0.0));

    let mut g = G::default();
    let x = g.input(&[3], vec![300i32, -129, 65535]);
    let y = g.node(Op::Cast, DType::I8, &[3], &[x]);
    assert_eq!(g.get::<i8>(y), vec![44, 127, -1]);
    let z = g.node(Op::Cast, DType::F32, &[3], &[x]);
    assert_eq!(g.get::<f32>(z), vec![300.0, -129.0, 65535.0]);

    let mut g = G::default();
    let x = g.input(
        &[2],
        vec![Complex::new(1.5f64, -2.0), Complex::new(0.0, 1.0)],
    );
    let r = g.node(Op::Cast, DType::F32, &[2], &[x]);
    assert_eq!(g.get::<f32>(r), vec![1.5, 0.0]);
    let b = g.node(Op::Cast, DType::Bool, &[2], &[x]);
    assert_eq!(g.get::<bool>(b), vec![true, true]);
    // float8 is storage only but convertible: the real part, through float32
    let f8 = g.node(Op::Cast, DType::F8E5M2, &[2], &[x]);
    let f8_bytes = Buffer::Raw {
        dtype: DType::F8E5M2,
        bytes: vec![0x3e, 0x00],
    };
    assert_eq!(g.run(f8).unwrap(), f8_bytes);
    // complex32: each part rounded to float16, (re, im) little-endian halves
    let c32 = g.node(Op::Cast, DType::C32, &[2], &[x]);
    let c32_bytes = Buffer::Raw {
        dtype: DType::C32,
        bytes: vec![0x00, 0x3e, 0x00, 0xc0, 0x00, 0x00, 0x00, 0x3c],
    };
    assert_eq!(g.run(c32).unwrap(), c32_bytes);
}

#[test]
fn full_arange_view_write_view() {
    let mut g = G::default();
    let f = g.node(Op::Full(Scalar::Float(2.5)), DType::I32, &[2], &[]);
    assert_eq!(g.get::<i32>(f), vec![2, 2]);
    let f = g.node(Op::Full(Scalar::Int(-1)), DType::U8, &[1], &[]);
    assert_eq!(g.get::<u8>(f), vec![255]);
    let a = g.node(
        Op::Arange {
            start: 1.0,
            step: 0.5,
        },
        DType::F32,
        &[4],
        &[],
    );
    assert_eq!(g.get::<f32>(a), vec![1.0, 1.5, 2.0, 2.5]);
    let a = g.node(
        Op::Arange {
            start: 10.0,
            step: -3.0,
        },
        DType::I64,
        &[4],
        &[],
    );
    assert_eq!(g.get::<i64>(a), vec![10, 7, 4, 1]);

    // transpose view of a [2, 3] input, then write [100, 200] into column 1 of it
    let x = g.input(&[2, 3], vec![0i64, 1, 2, 3, 4, 5]);
    let t = Layout {
        shape: vec![3, 2].into(),
        strides: vec![1, 3].into(),
        offset: 0,
    };
    let v = g.node(Op::view(t), DType::I64, &[3, 2], &[x]);
    assert_eq!(g.get::<i64>(v), vec![0, 3, 1, 4, 2, 5]);
    let vals = g.input(&[2], vec![100i64, 200]);
    let col = Layout {
        shape: vec![2].into(),
        strides: vec![3].into(),
        offset: 1,
    };
    let w = g.node(Op::write_view(col), DType::I64, &[6], &[x, vals]);
    assert_eq!(g.get::<i64>(w), vec![0, 100, 2, 3, 200, 5]);
}

#[test]
fn reductions() {
    let mut g = G::default();
    let x = g.input(&[2, 3], vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let red = |g: &mut G, op, axes: Vec<usize>, shape: &[usize]| {
        g.node(
            Op::Reduce {
                op,
                axes,
                keepdim: false,
            },
            DType::F64,
            shape,
            &[x],
        )
    };
    let s = red(&mut g, ReduceOp::Sum, vec![0], &[3]);
    assert_eq!(g.get::<f64>(s), vec![5.0, 7.0, 9.0]);
    let p = red(&mut g, ReduceOp::Prod, vec![0, 1], &[]);
    assert_eq!(g.get::<f64>(p), vec![720.0]);
    let m = red(&mut g, ReduceOp::Mean, vec![1], &[2]);
    assert_eq!(g.get::<f64>(m), vec![2.0, 5.0]);
    let v = red(&mut g, ReduceOp::Var { correction: 1 }, vec![1], &[2]);
    assert_eq!(g.get::<f64>(v), vec![1.0, 1.0]);
    let sd = red(&mut g, ReduceOp::Std { correction: 0 }, vec![0], &[3]);
    assert_eq!(g.get::<f64>(sd), vec![1.5, 1.5, 1.5]);
    // N - correction <= 0: the divisor is 0, so a positive sum of squares gives inf
    let v = red(&mut g, ReduceOp::Var { correction: 4 }, vec![1], &[2]);
    assert!(g.get::<f64>(v).iter().all(|x| x.is_infinite()));
    let one = g.input(&[1], vec![3.0f64]);
    let v1 = g.node(
        Op::Reduce {
            op: ReduceOp::Var { correction: 1 },
            axes: vec![0],
            keepdim: false,
        },
        DType::F64,
        &[],
        &[one],
    );
    // N = 1, correction 1: 0/0 = NaN
    assert!(g.get::<f64>(v1)[0].is_nan());

    // empty reductions: sum 0, prod 1, mean NaN
    let e = g.input(&[2, 0], Vec::<f32>::new());
    for (op, want) in [
        (ReduceOp::Sum, 0.0f32),
        (ReduceOp::Prod, 1.0),
        (ReduceOp::Mean, f32::NAN),
    ] {
        let r = g.node(
            Op::Reduce {
                op,
                axes: vec![1],
                keepdim: true,
            },
            DType::F32,
            &[2, 1],
            &[e],
        );
        assert!(same(&g.get::<f32>(r), &[want, want]), "{op:?}");
    }

    // integer sum wraps; complex var is real
    let i = g.input(&[2], vec![i64::MAX, 1]);
    let s = g.node(
        Op::Reduce {
            op: ReduceOp::Sum,
            axes: vec![0],
            keepdim: false,
        },
        DType::I64,
        &[],
        &[i],
    );
    assert_eq!(g.get::<i64>(s), vec![i64::MIN]);
    let c = g.input(
        &[2],
        vec![Complex::new(1.0f32, 1.0), Complex::new(-1.0, -1.0)],
    );
    let v = g.node(
        Op::Reduce {
            op: ReduceOp::Var { correction: 0 },
            axes: vec![0],
            keepdim: false,
        },
        DType::F32,
        &[],
        &[c],
    );
    assert_eq!(g.get::<f32>(v), vec![2.0]);
}

#[test]
fn cumsum_softmax_matmul_cat_where() {
    let mut g = G::default();
    let x = g.input(&[2, 3], vec![1i64, 2, 3, 4, 5, 6]);
    let c0 = g.node(Op::Cumsum { axis: 0 }, DType::I64, &[2, 3], &[x]);
    assert_eq!(g.get::<i64>(c0), vec![1, 2, 3, 5, 7, 9]);
    let c1 = g.node(Op::Cumsum { axis: 1 }, DType::I64, &[2, 3], &[x]);
    assert_eq!(g.get::<i64>(c1), vec![1, 3, 6, 4, 9, 15]);

    let f = g.input(&[2, 2], vec![0.0f32, f32::NEG_INFINITY, 1000.0, 1000.0]);
    let s = g.node(
        Op::Softmax {
            axis: 1,
            log: false,
        },
        DType::F32,
        &[2, 2],
        &[f],
    );
    assert_eq!(g.get::<f32>(s), vec![1.0, 0.0, 0.5, 0.5]);
    let ls = g.node(
        Op::Softmax { axis: 1, log: true },
        DType::F32,
        &[2, 2],
        &[f],
    );
    let ls = g.get::<f32>(ls);
    assert_eq!(ls[0], 0.0);
    assert_eq!(ls[1], f32::NEG_INFINITY);
    assert!((ls[2] + std::f32::consts::LN_2).abs() < 1e-6);

    // [1, 2, 3] @ [1, 3, 2], and a wrapping int8 product
    let a = g.input(&[1, 2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = g.input(&[1, 3, 2], vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0]);
    let m = g.node(Op::Matmul, DType::F32, &[1, 2, 2], &[a, b]);
    assert_eq!(g.get::<f32>(m), vec![4.0, 5.0, 10.0, 11.0]);
    let a8 = g.input(&[1, 1, 2], vec![100i8, 100]);
    let b8 = g.input(&[1, 2, 1], vec![2i8, 1]);
    let m8 = g.node(Op::Matmul, DType::I8, &[1, 1, 1], &[a8, b8]);
    assert_eq!(g.get::<i8>(m8), vec![300i32 as i8]);

    let p = g.input(&[2, 1], vec![7i64, 8]);
    let cat = g.node(Op::Cat { axis: 1 }, DType::I64, &[2, 4], &[x, p]);
    assert_eq!(g.get::<i64>(cat), vec![1, 2, 3, 7, 4, 5, 6, 8]);
    let cat0 = g.node(Op::Cat { axis: 0 }, DType::I64, &[4, 3], &[x, x]);
    assert_eq!(g.get::<i64>(cat0), vec![1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6]);

    let cond = g.input(&[2, 3], vec![true, false, true, false, true, false]);
    let zero = g.node(Op::Full(Scalar::Int(0)), DType::I64, &[2, 3], &[]);
    let w = g.node(Op::Where, DType::I64, &[2, 3], &[cond, x, zero]);
    assert_eq!(g.get::<i64>(w), vec![1, 0, 3, 0, 5, 0]);
}

#[test]
fn malformed_graphs_are_errors() {
    let mut g = G::default();
    // the Input node claims 3 elements but the buffer has 2
    let x = g.input(&[3], vec![1i32, 2]);
    let y = g.unary(UnaryOp::Neg, DType::I32, x);
    assert!(matches!(g.run(y), Err(Error::Malformed(_))));
    // a missing input buffer
    let mut g2 = G::default();
    let lone = g2.node(Op::Input(InputId(42)), DType::F32, &[1], &[]);
    assert!(matches!(g2.run(lone), Err(Error::Malformed(_))));
    // binary inputs of different dtypes
    let mut g3 = G::default();
    let a = g3.input(&[1], vec![1i32]);
    let b = g3.input(&[1], vec![1i64]);
    let c = g3.node(Op::Binary(BinaryOp::Add), DType::I32, &[1], &[a, b]);
    assert!(matches!(g3.run(c), Err(Error::Malformed(_))));
}

#[test]
fn intermediates_are_freed() {
    // x -> neg -> neg -> ... (200 times) with a second target in the middle
    let mut g = G::default();
    let x = g.input(&[1000], vec![1.5f32; 1000]);
    let mut cur = x;
    let mut middle = x;
    for i in 0..200 {
        cur = g.unary(UnaryOp::Neg, DType::F32, cur);
        if i == 100 {
            middle = cur;
        }
    }
    let (out, stats) = execute_with_stats(&g.g, &g.inputs, &[cur, middle, cur]).unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(stats.nodes, 201);
    assert!(Arc::ptr_eq(&out[0], &out[2]));
    assert_eq!(out[0].as_slice::<f32>().unwrap()[0], 1.5);
    assert_eq!(out[1].as_slice::<f32>().unwrap()[0], -1.5);
    // at most: the kept middle target, the producer and its consumer
    assert!(stats.peak_live_buffers <= 3, "{stats:?}");
    // identity views and no-op casts share the buffer instead of copying
    let v = g.node(
        Op::view(Layout::contiguous(&[10, 100])),
        DType::F32,
        &[10, 100],
        &[x],
    );
    let out = execute(&g.g, &g.inputs, &[v]).unwrap();
    assert!(Arc::ptr_eq(&out[0], &g.inputs[&InputId(0)]));
}

#[test]
fn a_million_elements_is_linear() {
    let n = 1_000_000;
    let mut g = G::default();
    let x = g.input(
        &[1000, 1000],
        (0..n).map(|i| i as f32 * 1e-3).collect::<Vec<_>>(),
    );
    let t = g.node(
        Op::view(Layout {
            shape: vec![1000, 1000].into(),
            strides: vec![1, 1000].into(),
            offset: 0,
        }),
        DType::F32,
        &[1000, 1000],
        &[x],
    );
    let e = g.unary(UnaryOp::Sin, DType::F32, t);
    let y = g.binary(BinaryOp::Mul, e, x);
    let s = g.node(
        Op::Softmax {
            axis: 0,
            log: false,
        },
        DType::F32,
        &[1000, 1000],
        &[y],
    );
    let r = g.node(
        Op::Reduce {
            op: ReduceOp::Sum,
            axes: vec![0],
            keepdim: false,
        },
        DType::F32,
        &[1000],
        &[s],
    );
    let start = std::time::Instant::now();
    let out = g.get::<f32>(r);
    // every softmax column sums to 1
    assert!(out.iter().all(|v| (v - 1.0).abs() < 1e-4));
    // generous bound: this runs unoptimized-ish (opt-level 1) on a shared machine
    assert!(start.elapsed().as_secs_f64() < 10.0);
}

/// PyTorch's `prod` of float16/bfloat16 rounds every partial product to the stored
/// type (checked against PyTorch 2.15): float16 [300, 300, 0.001] is inf, not 90, and
/// bfloat16 1.5^40 is 10747904, not 11057332.
#[test]
fn prod_of_half_types_rounds_each_step() {
    use half::bf16;
    use lazyfuse_ir::ReduceOp;
    let mut g = Graph::new();
    let x = g.add(Op::Input(InputId(0)), DType::F16, vec![3], &[]);
    let p = g.add(
        Op::Reduce {
            op: ReduceOp::Prod,
            axes: vec![0],
            keepdim: false,
        },
        DType::F16,
        vec![],
        &[x],
    );
    let values = [300.0, 300.0, 0.001].map(f16::from_f32).to_vec();
    let inputs = HashMap::from([(InputId(0), Arc::new(Buffer::from_vec(values)))]);
    let out = execute(&g, &inputs, &[p]).unwrap();
    assert_eq!(*out[0], Buffer::from_vec(vec![f16::INFINITY]));

    let mut g = Graph::new();
    let x = g.add(Op::Input(InputId(0)), DType::BF16, vec![40], &[]);
    let p = g.add(
        Op::Reduce {
            op: ReduceOp::Prod,
            axes: vec![0],
            keepdim: false,
        },
        DType::BF16,
        vec![],
        &[x],
    );
    let inputs = HashMap::from([(
        InputId(0),
        Arc::new(Buffer::from_vec(vec![bf16::from_f32(1.5); 40])),
    )]);
    let out = execute(&g, &inputs, &[p]).unwrap();
    assert_eq!(*out[0], Buffer::from_vec(vec![bf16::from_f32(10747904.0)]));
}
