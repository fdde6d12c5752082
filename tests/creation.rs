//! Creation ops through the API: `eye`, `linspace`, `*_like`, and the random
//! constructors with `manual_seed` (determinism, independence of calls, loose
//! distribution checks at fixed seeds, dtype tables and PyTorch's messages).

use lazyfuse::{manual_seed, DType, Tensor};
use std::sync::Mutex;

/// The generator is global: tests that seed it run one at a time.
static SEEDED: Mutex<()> = Mutex::new(());

fn seeded<R>(seed: u64, f: impl FnOnce() -> R) -> R {
    let _guard = SEEDED.lock().unwrap_or_else(|p| p.into_inner());
    manual_seed(seed);
    f()
}

fn err_text<T: std::fmt::Debug>(r: lazyfuse::Result<T>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn same_seed_same_numbers_other_seed_other_numbers() {
    let draw = |seed| {
        seeded(seed, || {
            let a = Tensor::rand(&[64], DType::F32)
                .unwrap()
                .to_vec::<f32>()
                .unwrap();
            let b = Tensor::randn(&[64], DType::F64)
                .unwrap()
                .to_vec::<f64>()
                .unwrap();
            let c = Tensor::randint(0, 1000, &[64], DType::I64)
                .unwrap()
                .to_vec::<i64>()
                .unwrap();
            (a, b, c)
        })
    };
    let first = draw(5);
    assert_eq!(first, draw(5));
    let other = draw(6);
    assert_ne!(first.0, other.0);
    assert_ne!(first.1, other.1);
    assert_ne!(first.2, other.2);
}

#[test]
fn calls_advance_the_offset_by_what_they_consume() {
    // Element i depends only on (seed, offset, i): one call of 6 equals two calls
    // of 2 and 4, and two consecutive calls differ.
    let whole = seeded(11, || {
        Tensor::rand(&[6], DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
    });
    let parts = seeded(11, || {
        let mut a = Tensor::rand(&[2], DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        a.extend(
            Tensor::rand(&[2, 2], DType::F64)
                .unwrap()
                .to_vec::<f64>()
                .unwrap(),
        );
        a
    });
    assert_eq!(whole, parts);
    let (x, y) = seeded(11, || {
        let x = Tensor::rand(&[3], DType::F64).unwrap();
        let y = Tensor::rand(&[3], DType::F64).unwrap();
        (x.to_vec::<f64>().unwrap(), y.to_vec::<f64>().unwrap())
    });
    assert_ne!(x, y);
    // Realizing in another order changes nothing: the numbers are fixed at build.
    let (x2, y2) = seeded(11, || {
        let x = Tensor::rand(&[3], DType::F64).unwrap();
        let y = Tensor::rand(&[3], DType::F64).unwrap();
        let y = y.to_vec::<f64>().unwrap();
        (x.to_vec::<f64>().unwrap(), y)
    });
    assert_eq!((x, y), (x2, y2));
    // An empty call consumes nothing.
    let after_empty = seeded(11, || {
        Tensor::rand(&[0, 3], DType::F64).unwrap();
        Tensor::rand(&[6], DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
    });
    assert_eq!(after_empty, whole);
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    (mean, v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n)
}

#[test]
fn distributions_are_sane() {
    // Fixed seeds: these bounds (several standard errors wide) are checked once and
    // cannot flake.
    let u = seeded(1, || {
        Tensor::rand(&[20000], DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
    });
    assert!(u.iter().all(|x| (0.0..1.0).contains(x)));
    let (m, v) = mean_var(&u);
    assert!(
        (m - 0.5).abs() < 0.01 && (v - 1.0 / 12.0).abs() < 0.005,
        "{m} {v}"
    );
    let z = seeded(2, || {
        Tensor::randn(&[20000], DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
    });
    let (m, v) = mean_var(&z);
    assert!(m.abs() < 0.03 && (v - 1.0).abs() < 0.05, "{m} {v}");
    let beyond = z.iter().filter(|x| x.abs() > 1.96).count() as f64 / z.len() as f64;
    assert!((beyond - 0.05).abs() < 0.01, "{beyond}");
    let k = seeded(3, || {
        Tensor::randint(-3, 4, &[7000], DType::I8)
            .unwrap()
            .to_vec::<i8>()
            .unwrap()
    });
    for value in -3..4 {
        let count = k.iter().filter(|x| **x == value).count();
        assert!((800..1200).contains(&count), "{value}: {count}");
    }
    // complex randn: each part has variance 1/2
    let c = seeded(4, || {
        Tensor::randn(&[10000], DType::C128)
            .unwrap()
            .to_vec::<lazyfuse::Complex<f64>>()
            .unwrap()
    });
    let re: Vec<f64> = c.iter().map(|z| z.re).collect();
    let im: Vec<f64> = c.iter().map(|z| z.im).collect();
    assert!((mean_var(&re).1 - 0.5).abs() < 0.03 && (mean_var(&im).1 - 0.5).abs() < 0.03);
}

#[test]
fn uniform_uses_the_dtypes_bits() {
    let h = seeded(8, || {
        Tensor::rand(&[1000], DType::F16)
            .unwrap()
            .to_vec::<lazyfuse::half::f16>()
            .unwrap()
    });
    assert!(h.iter().all(|x| {
        let f = f64::from(*x);
        (0.0..1.0).contains(&f) && (f * 2048.0).fract() == 0.0
    }));
    let b = seeded(8, || {
        Tensor::rand(&[1000], DType::BF16)
            .unwrap()
            .to_vec::<lazyfuse::half::bf16>()
            .unwrap()
    });
    assert!(b.iter().all(|x| {
        let f = f64::from(*x);
        (0.0..1.0).contains(&f) && (f * 256.0).fract() == 0.0
    }));
}

#[test]
fn random_dtype_tables() {
    let _guard = SEEDED.lock().unwrap_or_else(|p| p.into_inner());
    for d in [
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ] {
        assert_eq!(Tensor::rand(&[2], d).unwrap().dtype(), d);
        assert_eq!(
            Tensor::randn(&[2], d).unwrap().realize().unwrap().dtype(),
            d
        );
    }
    for (d, name) in [
        (DType::Bool, "Bool"),
        (DType::U8, "Byte"),
        (DType::I64, "Long"),
        (DType::U64, "UInt64"),
        (DType::F8E4M3FN, "Float8_e4m3fn"),
    ] {
        assert_eq!(
            err_text(Tensor::rand(&[2], d)),
            format!("\"check_uniform_bounds\" not implemented for '{name}'")
        );
        // rand checks even for empty results, randn does not.
        assert!(Tensor::rand(&[0], d).is_err());
        assert_eq!(
            err_text(Tensor::randn(&[2], d)),
            format!("\"normal_kernel_cpu\" not implemented for '{name}'")
        );
        assert_eq!(Tensor::randn(&[0], d).unwrap().shape(), vec![0]);
    }
    // complex32 is computed by PyTorch but storage-only here.
    assert!(Tensor::rand(&[2], DType::C32).unwrap_err().is_unsupported());
    // randint: every dtype but complex, float8 and float4.
    let randint_dtypes = DType::ALL
        .into_iter()
        .filter(|d| !d.is_complex() && !d.is_float8() && *d != DType::F4E2M1FNX2);
    for d in randint_dtypes {
        let t = Tensor::randint(0, 2, &[50], d).unwrap();
        assert_eq!(t.dtype(), d);
        let f = t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
        assert!(f.iter().all(|x| *x == 0.0 || *x == 1.0));
        assert!(f.contains(&0.0) && f.contains(&1.0));
    }
    assert_eq!(
        err_text(Tensor::randint(0, 2, &[2], DType::C64)),
        "check_random_bounds handles only integral, floating-point and boolean types"
    );
    assert_eq!(
        err_text(Tensor::randint(0, 2, &[2], DType::F8E5M2)),
        "\"random_update_from_to\" not implemented for 'Float8_e5m2'"
    );
}

#[test]
fn randint_bounds_messages() {
    let cases = [
        (
            5,
            5,
            DType::I64,
            "random_ expects 'from' to be less than 'to', but got from=5 >= to=5",
        ),
        (
            5,
            3,
            DType::U8,
            "random_ expects 'from' to be less than 'to', but got from=5 >= to=3",
        ),
        (-1, 5, DType::U8, "from is out of bounds for unsigned char"),
        (
            0,
            300,
            DType::U8,
            "to - 1 is out of bounds for unsigned char",
        ),
        (-129, 0, DType::I8, "from is out of bounds for signed char"),
        (
            0,
            70000,
            DType::F16,
            "to - 1 is out of bounds for c10::Half",
        ),
        (0, 3, DType::Bool, "to - 1 is out of bounds for bool"),
        (
            -1,
            3,
            DType::U64,
            "from is out of bounds for long unsigned int",
        ),
        (
            0,
            i64::MAX,
            DType::U16,
            "to - 1 is out of bounds for short unsigned int",
        ),
    ];
    for (low, high, d, msg) in cases {
        assert_eq!(
            err_text(Tensor::randint(low, high, &[2], d)),
            msg,
            "{low} {high} {d}"
        );
    }
    // The full ranges are fine.
    assert!(Tensor::randint(0, 256, &[2], DType::U8).is_ok());
    assert!(Tensor::randint(i64::MIN, i64::MAX, &[2], DType::I64)
        .unwrap()
        .realize()
        .is_ok());
    // Zero-dim results.
    let s = Tensor::randint(3, 4, &[], DType::I32).unwrap();
    assert_eq!(s.to_vec::<i32>().unwrap(), vec![3]);
}

#[test]
fn eye_as_pytorch() {
    let e = Tensor::eye(3, None, DType::F32).unwrap();
    assert_eq!(
        e.to_vec::<f32>().unwrap(),
        vec![1., 0., 0., 0., 1., 0., 0., 0., 1.]
    );
    let e = Tensor::eye(3, Some(2), DType::Bool).unwrap();
    assert_eq!(
        e.to_vec::<bool>().unwrap(),
        vec![true, false, false, true, false, false]
    );
    assert_eq!(
        Tensor::eye(0, None, DType::F32).unwrap().shape(),
        vec![0, 0]
    );
    assert_eq!(
        Tensor::eye(3, Some(0), DType::F32).unwrap().shape(),
        vec![3, 0]
    );
    let c = Tensor::eye(2, None, DType::C64)
        .unwrap()
        .to_vec::<lazyfuse::Complex<f32>>()
        .unwrap();
    assert_eq!(c[0].re, 1.0);
    assert!(Tensor::eye(2, None, DType::F8E4M3FN)
        .unwrap()
        .realize()
        .is_ok());
    for (d, name) in [
        (DType::U16, "UInt16"),
        (DType::U64, "UInt64"),
        (DType::C32, "ComplexHalf"),
    ] {
        assert_eq!(
            err_text(Tensor::eye(2, None, d)),
            format!("\"eye\" not implemented for '{name}'")
        );
    }
}

#[test]
fn linspace_as_pytorch() {
    let t = Tensor::linspace(0.0, 10.0, 7, DType::F32)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(
        t,
        vec![
            0.0,
            1.666_666_6,
            3.333_333_3,
            5.0,
            6.666_667,
            8.333_333,
            10.0
        ]
    );
    // Both ends are exact; descending works.
    let t = Tensor::linspace(1.0, -1.0, 3, DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert_eq!(t, vec![1.0, 0.0, -1.0]);
    assert_eq!(
        Tensor::linspace(3.0, 1.0, 1, DType::F32)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![3.0]
    );
    assert_eq!(
        Tensor::linspace(3.0, 1.0, 0, DType::Bool).unwrap().shape(),
        vec![0]
    );
    assert_eq!(
        err_text(Tensor::linspace(0.0, 1.0, -1, DType::F32)),
        "number of steps must be non-negative"
    );
    assert_eq!(
        err_text(Tensor::linspace(0.0, 1.0, 5, DType::Bool)),
        "\"linspace_cpu\" not implemented for 'Bool'"
    );
    assert_eq!(
        err_text(Tensor::linspace(0.0, 1.0, 5, DType::U32)),
        "\"linspace_cpu\" not implemented for 'UInt32'"
    );
    // An infinite end makes the step infinite and every element NaN (inf * 0), as
    // in PyTorch.
    let t = Tensor::linspace(0.0, f64::INFINITY, 3, DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert!(t.iter().all(|x| x.is_nan()));
}

#[test]
fn like_constructors() {
    let x = Tensor::arange(0.0, 6.0, 1.0, DType::I16)
        .unwrap()
        .view(&[2, 3])
        .unwrap()
        .t()
        .unwrap();
    let z = x.zeros_like(None).unwrap();
    // preserve_format, as PyTorch: strides (1, 3) like the transpose.
    assert_eq!(
        (z.shape(), z.dtype(), z.strides()),
        (vec![3, 2], DType::I16, vec![1, 3])
    );
    let e = Tensor::zeros(&[2, 1], DType::F32)
        .expand(&[2, 3])
        .unwrap()
        .zeros_like(None)
        .unwrap();
    assert_eq!(e.strides(), vec![3, 1]);
    let base = Tensor::zeros(&[2, 3, 4], DType::F32);
    let p = base.permute(&[2, 0, 1]).unwrap().zeros_like(None).unwrap();
    assert_eq!(p.strides(), vec![1, 12, 4]);
    assert_eq!(z.to_vec::<i16>().unwrap(), vec![0; 6]);
    assert_eq!(
        x.ones_like(Some(DType::F32))
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![1.0; 6]
    );
    assert_eq!(
        x.full_like(2.5, Some(DType::F64))
            .unwrap()
            .to_vec::<f64>()
            .unwrap(),
        vec![2.5; 6]
    );
    assert!(x.full_like(1e10, None).is_err());
    let s = Tensor::scalar(1.5).zeros_like(None).unwrap();
    assert_eq!(s.shape(), Vec::<usize>::new());
}

#[test]
fn graph_text_of_creation_nodes() {
    let t = Tensor::linspace(0.0, 1.0, 3, DType::F32).unwrap();
    assert_eq!(
        t.graph_text(),
        "%0 = linspace(start=0.0, end=1.0) : float32[3]  -> t0\n"
    );
    let r = seeded(42, || {
        Tensor::rand(&[2], DType::F32).unwrap();
        Tensor::randint(-1, 5, &[2, 2], DType::I16).unwrap()
    });
    assert_eq!(
        r.graph_text(),
        "%0 = random(seed=42, offset=2, distribution=integer, low=-1, high=5) : int16[2, 2]  -> t0\n"
    );
    let e = Tensor::eye(2, None, DType::F32).unwrap();
    assert_eq!(
        e.graph_text(),
        "%0 = arange(start=0.0, step=1.0) : int64[2]\n%1 = view(%0; shape=[2, 2], strides=[1, 0], offset=0) : int64[2, 2]\n%2 = view(%0; shape=[2, 2], strides=[0, 1], offset=0) : int64[2, 2]\n%3 = eq(%1, %2) : bool[2, 2]\n%4 = cast(%3) : float32[2, 2]  -> t0\n"
    );
}

/// Every case of `tests/data/creation/linspace.jsonl` (PyTorch 2.15's values, see
/// its README), bit for bit.
#[test]
fn linspace_matches_vendored_pytorch_values() {
    let data = include_str!("data/creation/linspace.jsonl");
    let mut cases = 0;
    for line in data.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        // Floats are strings: Rust's parser rounds correctly, serde_json's may not.
        let float = |v: &serde_json::Value| v.as_str().unwrap().parse::<f64>().unwrap();
        let (start, end) = (float(&case["start"]), float(&case["end"]));
        let steps = case["steps"].as_i64().unwrap();
        let dtype: DType = case["dtype"].as_str().unwrap().parse().unwrap();
        let expected: Vec<f64> = case["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(float)
            .collect();
        let t = Tensor::linspace(start, end, steps, dtype).unwrap();
        let got = t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
        assert_eq!(got, expected, "linspace({start}, {end}, {steps}, {dtype})");
        cases += 1;
    }
    assert!(cases >= 100);
}
