//! Hand-built graphs of the creation nodes without inputs: `random` (every element
//! equals `lazyfuse_ir::philox::sample` converted, whatever the dtype) and `linspace`
//! (special values and integer ends, values printed by PyTorch 2.15).

use half::{bf16, f16};
use lazyfuse_ir::philox::{sample, Distribution, Sample};
use lazyfuse_ir::{DType, Graph, Op};
use lazyfuse_runtime::interp::execute;
use lazyfuse_runtime::{Buffer, Complex};
use std::collections::HashMap;

fn run(op: Op, dtype: DType, n: usize) -> Buffer {
    let mut g = Graph::new();
    let node = g.add(op, dtype, vec![n], &[]);
    g.verify_node(node).unwrap();
    let out = execute(&g, &HashMap::new(), &[node]).unwrap();
    (*out[0]).clone()
}

fn random(distribution: Distribution, dtype: DType, n: usize) -> Buffer {
    let op = Op::Random {
        seed: 1234,
        offset: 99,
        distribution,
    };
    run(op, dtype, n)
}

fn reals(d: Distribution, dtype: DType) -> Vec<f64> {
    (0..64)
        .map(|i| match sample(d, dtype, 1234, 99, i) {
            Sample::Real(x) => x,
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn random_elements_are_the_pure_samples() {
    let u = random(Distribution::Uniform, DType::F64, 64);
    assert_eq!(
        u.as_slice::<f64>().unwrap(),
        reals(Distribution::Uniform, DType::F64)
    );
    // Uniform values are exact in their dtype: the conversion changes nothing.
    let u = random(Distribution::Uniform, DType::F32, 64);
    let expected: Vec<f32> = reals(Distribution::Uniform, DType::F32)
        .iter()
        .map(|&x| x as f32)
        .collect();
    assert_eq!(u.as_slice::<f32>().unwrap(), expected);
    for (x, e) in u
        .as_slice::<f32>()
        .unwrap()
        .iter()
        .zip(reals(Distribution::Uniform, DType::F32))
    {
        assert_eq!(f64::from(*x), e);
    }
    let h = random(Distribution::Uniform, DType::F16, 64);
    for (x, e) in h
        .as_slice::<f16>()
        .unwrap()
        .iter()
        .zip(reals(Distribution::Uniform, DType::F16))
    {
        assert_eq!(f64::from(*x), e);
    }
    let b = random(Distribution::Uniform, DType::BF16, 64);
    for (x, e) in b
        .as_slice::<bf16>()
        .unwrap()
        .iter()
        .zip(reals(Distribution::Uniform, DType::BF16))
    {
        assert_eq!(f64::from(*x), e);
    }
    // Normal: f64 samples rounded once.
    let z = random(Distribution::Normal, DType::F32, 64);
    let expected: Vec<f32> = reals(Distribution::Normal, DType::F32)
        .iter()
        .map(|&x| x as f32)
        .collect();
    assert_eq!(z.as_slice::<f32>().unwrap(), expected);
    // float16: the f64 sample rounded once.
    let h = random(Distribution::Normal, DType::F16, 64);
    let expected: Vec<f16> = reals(Distribution::Normal, DType::F16)
        .iter()
        .map(|&x| f16::from_f64(x))
        .collect();
    assert_eq!(h.as_slice::<f16>().unwrap(), expected);
    // Complex: both parts.
    let c = random(Distribution::Normal, DType::C128, 8);
    for (i, v) in c.as_slice::<Complex<f64>>().unwrap().iter().enumerate() {
        let Sample::Complex(re, im) = sample(Distribution::Normal, DType::C128, 1234, 99, i as u64)
        else {
            panic!("complex sample expected");
        };
        assert_eq!((v.re, v.im), (re, im));
    }
}

#[test]
fn random_integers_in_every_dtype() {
    let d = Distribution::Integer {
        low: -128,
        high: 128,
    };
    let v = random(d, DType::I8, 1000);
    let v = v.as_slice::<i8>().unwrap();
    assert!(v.contains(&i8::MIN) || v.iter().any(|x| *x < -100));
    let d = Distribution::Integer { low: 0, high: 256 };
    let v = random(d, DType::U8, 1000);
    assert!(v.as_slice::<u8>().unwrap().iter().any(|x| *x > 200));
    let d = Distribution::Integer {
        low: i64::MIN,
        high: i64::MAX,
    };
    let v = random(d, DType::I64, 100);
    assert!(v.as_slice::<i64>().unwrap().iter().any(|x| *x < 0));
    let d = Distribution::Integer { low: 0, high: 2 };
    let v = random(d, DType::F16, 100);
    assert!(v
        .as_slice::<f16>()
        .unwrap()
        .iter()
        .all(|x| *x == f16::ZERO || *x == f16::ONE));
    // An empty node draws nothing and works.
    assert_eq!(random(Distribution::Normal, DType::F32, 0).len(), 0);
}

#[test]
fn verifier_checks_random_nodes() {
    let mut g = Graph::new();
    let bad = g.add(
        Op::Random {
            seed: 0,
            offset: 0,
            distribution: Distribution::Uniform,
        },
        DType::I64,
        vec![2],
        &[],
    );
    assert!(g.verify_node(bad).is_err());
    let bad = g.add(
        Op::Random {
            seed: 0,
            offset: 0,
            distribution: Distribution::Integer { low: 3, high: 3 },
        },
        DType::I64,
        vec![2],
        &[],
    );
    assert!(g.verify_node(bad).is_err());
    let bad = g.add(
        Op::Linspace {
            start: 0.0,
            end: 1.0,
        },
        DType::F32,
        vec![2, 2],
        &[],
    );
    assert!(g.verify_node(bad).is_err());
}

#[test]
fn linspace_special_values() {
    let f = |start: f64, end: f64, n: usize| {
        run(Op::Linspace { start, end }, DType::F32, n)
            .as_slice::<f32>()
            .unwrap()
            .to_vec()
    };
    assert!(f(f64::NAN, 1.0, 4).iter().all(|x| x.is_nan()));
    let z = f(-0.0, -0.0, 3);
    assert_eq!(
        z.iter().map(|x| x.is_sign_negative()).collect::<Vec<_>>(),
        [false, true, true]
    );
    assert_eq!(f(1.0, 0.0, 2), [1.0, 0.0]);
    // The step overflows float32: NaN where it is multiplied by 0, as PyTorch.
    let v = f(-3e38, 3e38, 3);
    assert!(v[0].is_nan() && v[1] == f32::NEG_INFINITY && v[2].is_nan());
    let i = run(
        Op::Linspace {
            start: -128.0,
            end: 127.0,
        },
        DType::I8,
        3,
    );
    assert_eq!(i.as_slice::<i8>().unwrap(), [-128, 0, 127]);
    let u = run(
        Op::Linspace {
            start: 0.0,
            end: 255.0,
        },
        DType::U8,
        4,
    );
    assert_eq!(u.as_slice::<u8>().unwrap(), [0, 85, 170, 255]);
    let c = run(
        Op::Linspace {
            start: 0.0,
            end: 1.0,
        },
        DType::C64,
        3,
    );
    let c: Vec<f32> = c
        .as_slice::<Complex<f32>>()
        .unwrap()
        .iter()
        .map(|z| z.re)
        .collect();
    assert_eq!(c, [0.0, 0.5, 1.0]);
}
