//! The float8 dtypes through the public API: storage-only, as in PyTorch. Tensors of
//! them are created, converted to and from other dtypes (c10's rounding, overflow, NaN
//! and signed-zero rules), viewed, concatenated, selected with `where`, written in
//! place and printed; arithmetic on them is refused as unsupported.

use lazyfuse::half::f16;
use lazyfuse::{Complex, DType, Scalar, Tensor};

const FLOAT8: [DType; 5] = [
    DType::F8E4M3FN,
    DType::F8E5M2,
    DType::F8E4M3FNUZ,
    DType::F8E5M2FNUZ,
    DType::F8E8M0FNU,
];

/// The values of any tensor, converted to float32.
fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap()
}

/// Asserts bit-equality (so -0.0 differs from 0.0), any NaN matching any NaN.
fn assert_same(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else {
            g.to_bits() == w.to_bits()
        };
        assert!(ok, "{what}[{i}]: got {g:e}, want {w:e}");
    }
}

/// float32 → `dtype` → float32 for each `(input, expected)` pair.
fn check_round_trip(dtype: DType, cases: &[(f32, f32)]) {
    let (input, want): (Vec<f32>, Vec<f32>) = cases.iter().copied().unzip();
    let t = Tensor::from_vec(input, &[cases.len()]).unwrap();
    let f8 = t.to_dtype(dtype).unwrap();
    assert_eq!(f8.dtype(), dtype);
    assert_same(&f32s(&f8), &want, &dtype.to_string());
}

fn p2(k: i32) -> f32 {
    2f32.powi(k)
}

const NAN: f32 = f32::NAN;
const INF: f32 = f32::INFINITY;

#[test]
fn e4m3fn_round_trip() {
    check_round_trip(
        DType::F8E4M3FN,
        &[
            (0.0, 0.0),
            (-0.0, -0.0),
            (1.0, 1.0),
            (0.3, 0.3125),
            (-2.6, -2.5),
            (448.0, 448.0),
            (464.0, 448.0), // the tie with the missing 480 goes to even 448
            (470.0, NAN),   // beyond it: no infinity, NaN
            (1e6, NAN),
            (INF, NAN),
            (-INF, NAN),
            (NAN, NAN),
            (p2(-6), p2(-6)),                 // smallest normal
            (0.875 * p2(-6), 0.875 * p2(-6)), // largest subnormal
            (p2(-9), p2(-9)),                 // smallest subnormal
            (-p2(-9), -p2(-9)),
            (p2(-10), 0.0), // tie between 0 and 2^-9: even is 0
            (-p2(-10), -0.0),
            (1.5 * p2(-9), p2(-8)), // tie between codes 1 and 2: even is 2
            (p2(-12), 0.0),
        ],
    );
}

#[test]
fn e5m2_round_trip() {
    check_round_trip(
        DType::F8E5M2,
        &[
            (0.0, 0.0),
            (-0.0, -0.0),
            (1.1, 1.0),
            (1.125, 1.0), // tie between 1.0 and 1.25
            (1.375, 1.5), // tie between 1.25 and 1.5
            (57344.0, 57344.0),
            (60000.0, 57344.0),
            (61440.0, INF), // tie with 65536: the even code is infinity
            (-1e9, -INF),
            (INF, INF),
            (-INF, -INF),
            (NAN, NAN),
            (p2(-14), p2(-14)),
            (p2(-16), p2(-16)),
            (1e-5, p2(-16)),
            (p2(-17), 0.0),
            (3.0 * p2(-17), p2(-15)),
        ],
    );
}

#[test]
fn e4m3fnuz_round_trip() {
    check_round_trip(
        DType::F8E4M3FNUZ,
        &[
            (0.0, 0.0),
            (-0.0, 0.0), // no negative zero
            (-1e-9, 0.0),
            (1.0, 1.0),
            (-1.0, -1.0),
            (240.0, 240.0),
            (247.0, 240.0),
            (248.0, NAN), // rounds past 240: the single NaN
            (-248.0, NAN),
            (INF, NAN),
            (-INF, NAN),
            (NAN, NAN),
            (p2(-7), p2(-7)),
            (p2(-10), p2(-10)),
            (-p2(-10), -p2(-10)),
            (p2(-11), 0.0),
        ],
    );
}

#[test]
fn e5m2fnuz_round_trip() {
    check_round_trip(
        DType::F8E5M2FNUZ,
        &[
            (0.0, 0.0),
            (-0.0, 0.0),
            (-1.5, -1.5),
            (57344.0, 57344.0),
            (61440.0, NAN),
            (-1e30, NAN),
            (INF, NAN),
            (NAN, NAN),
            (p2(-15), p2(-15)),
            (p2(-17), p2(-17)),
            (-p2(-18), 0.0),
        ],
    );
}

#[test]
fn e8m0fnu_round_trip() {
    check_round_trip(
        DType::F8E8M0FNU,
        &[
            (1.0, 1.0),
            (1.4, 1.0),
            (1.5, 2.0), // c10 rounds up from half the mantissa
            (3.0, 4.0),
            (0.75, 1.0),
            (-4.0, 4.0),           // unsigned: the sign is dropped
            (0.0, p2(-126) / 2.0), // no zero: code 0 is 2^-127
            // c10 rounds an f32 subnormal as a fraction of 2^-126: 0.625 rounds up
            (p2(-126) * 0.625, p2(-126)),
            (p2(-126) * 0.5, p2(-126) / 2.0),
            (p2(127), p2(127)),
            (1.5 * p2(127), NAN),
            (INF, NAN),
            (NAN, NAN),
        ],
    );
}

#[test]
fn conversions_from_other_dtypes_go_through_float32() {
    let e4 = DType::F8E4M3FN;
    // float64: rounded to float32 first, so 1.0625 + 2^-30 becomes the exact tie
    // 1.0625, which goes to even (1.0), not up to 1.125.
    let d = Tensor::from_vec(vec![1.0625f64 + 2f64.powi(-30), -0.1], &[2]).unwrap();
    assert_same(&f32s(&d.to_dtype(e4).unwrap()), &[1.0, -0.1015625], "f64");
    let i = Tensor::from_vec(vec![300i64, -7, 1 << 40], &[3]).unwrap();
    assert_same(&f32s(&i.to_dtype(e4).unwrap()), &[288.0, -7.0, NAN], "i64");
    let i = Tensor::from_vec(vec![255u8, 0], &[2]).unwrap();
    assert_same(
        &f32s(&i.to_dtype(DType::F8E5M2).unwrap()),
        &[256.0, 0.0],
        "u8",
    );
    let b = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    assert_same(&f32s(&b.to_dtype(e4).unwrap()), &[1.0, 0.0], "bool");
    let c = Tensor::from_vec(
        vec![Complex::new(-2.0f32, 9.0), Complex::new(0.5, -1.0)],
        &[2],
    )
    .unwrap();
    // the imaginary part is dropped, as `.to()` does
    assert_same(&f32s(&c.to_dtype(e4).unwrap()), &[-2.0, 0.5], "complex");
    // from float8 to the other dtypes: decode, then the float32 rules
    let f8 = Tensor::from_vec(vec![-1.75f32, 448.0, -0.0, 0.5], &[4])
        .unwrap()
        .to_dtype(e4)
        .unwrap();
    let ints = f8.to_dtype(DType::I32).unwrap().to_vec::<i32>().unwrap();
    assert_eq!(ints, vec![-1, 448, 0, 0]);
    let bools = f8.to_dtype(DType::Bool).unwrap().to_vec::<bool>().unwrap();
    assert_eq!(bools, vec![true, true, false, true]);
    let f64s = f8.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(f64s, vec![-1.75, 448.0, 0.0, 0.5]);
    let halves = f8.to_dtype(DType::F16).unwrap().to_vec::<f16>().unwrap();
    let halves: Vec<f32> = halves.iter().map(|h| h.to_f32()).collect();
    assert_same(&halves, &[-1.75, 448.0, -0.0, 0.5], "to f16");
    // between float8 formats: 448 overflows e4m3fnuz (max 240) to NaN; e5m2 keeps it
    assert_same(
        &f32s(&f8.to_dtype(DType::F8E4M3FNUZ).unwrap()),
        &[-1.75, NAN, 0.0, 0.5],
        "e4m3fn -> e4m3fnuz",
    );
    assert_same(
        &f32s(&f8.to_dtype(DType::F8E5M2).unwrap()),
        &[-1.75, 448.0, -0.0, 0.5],
        "e4m3fn -> e5m2",
    );
    // e5m2's infinity has no e4m3fn code: NaN
    let inf = Tensor::full(&[1], f64::INFINITY, DType::F8E5M2).unwrap();
    assert_same(&f32s(&inf), &[INF], "e5m2 inf");
    assert_same(&f32s(&inf.to_dtype(e4).unwrap()), &[NAN], "inf -> e4m3fn");
    // to complex32 (as PyTorch: through float32, each part rounded to float16)
    let c = f8.to_dtype(DType::C32).unwrap().real().unwrap_err();
    assert!(c.is_unsupported()); // complex32 parts are not views yet
    let c = f8
        .to_dtype(DType::C32)
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap();
    assert_same(&f32s(&c), &[-1.75, 448.0, -0.0, 0.5], "e4m3fn -> complex32");
}

#[test]
fn creation() {
    for dtype in FLOAT8 {
        let z = Tensor::zeros(&[2], dtype);
        assert_eq!((z.shape(), z.dtype()), (vec![2], dtype));
        // e8m0fnu has no zero: 0 becomes its smallest value, 2^-127
        let zero = if dtype == DType::F8E8M0FNU {
            p2(-126) / 2.0
        } else {
            0.0
        };
        assert_same(&f32s(&z), &[zero, zero], &format!("zeros {dtype}"));
        assert_same(&f32s(&Tensor::ones(&[1], dtype)), &[1.0], "ones");
        let two = Tensor::full(&[2, 1], 2, dtype).unwrap();
        assert_same(&f32s(&two), &[2.0, 2.0], "full 2");
    }
    let t = Tensor::full(&[3], 1.5, DType::F8E4M3FN).unwrap();
    assert_same(&f32s(&t), &[1.5; 3], "full 1.5");
    let t = Tensor::full(&[1], 0.3, DType::F8E5M2).unwrap();
    assert_same(&f32s(&t), &[0.3125], "full 0.3");
    let t = Tensor::full(&[1], Scalar::Bool(true), DType::F8E5M2FNUZ).unwrap();
    assert_same(&f32s(&t), &[1.0], "full true");
}

fn e4m3(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape)
        .unwrap()
        .to_dtype(DType::F8E4M3FN)
        .unwrap()
}

#[test]
fn views() {
    let t = e4m3(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]);
    let tt = t.t().unwrap();
    assert!(tt.shares_storage(&t) && tt.dtype() == DType::F8E4M3FN);
    assert_same(&f32s(&tt), &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0], "t()");
    assert_same(
        &f32s(&tt.contiguous().unwrap()),
        &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0],
        "contig",
    );
    assert_same(&f32s(&t.select(1, 2).unwrap()), &[2.0, 5.0], "select");
    assert_same(
        &f32s(&t.narrow(1, 1, 2).unwrap()),
        &[1.0, 2.0, 4.0, 5.0],
        "narrow",
    );
    assert_same(
        &f32s(&t.view(&[3, 2]).unwrap()),
        &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
        "view",
    );
    let row = t.select(0, 1).unwrap().unsqueeze(0).unwrap();
    assert_same(
        &f32s(&row.expand(&[2, 3]).unwrap()),
        &[3.0, 4.0, 5.0, 3.0, 4.0, 5.0],
        "expand",
    );
    assert_same(
        &f32s(&tt.reshape(&[-1]).unwrap()),
        &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0],
        "reshape",
    );
}

#[test]
fn cat_and_stack() {
    let a = e4m3(&[1.0, 2.0], &[1, 2]);
    let b = e4m3(&[3.0, 4.0, 5.0, 6.0], &[2, 2]);
    let c = Tensor::cat(&[&a, &b], 0).unwrap();
    assert_eq!((c.shape(), c.dtype()), (vec![3, 2], DType::F8E4M3FN));
    assert_same(&f32s(&c), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "cat 0");
    let c = Tensor::cat(&[&b, &b.t().unwrap()], 1).unwrap();
    assert_same(
        &f32s(&c),
        &[3.0, 4.0, 3.0, 5.0, 5.0, 6.0, 4.0, 6.0],
        "cat 1",
    );
    let s = Tensor::stack(&[&a, &a], 0).unwrap();
    assert_eq!(s.shape(), vec![2, 1, 2]);
    assert_same(&f32s(&s), &[1.0, 2.0, 1.0, 2.0], "stack");
    // float8 does not promote with anything else (PyTorch's error, not a gap)
    let f = Tensor::ones(&[1, 2], DType::F32);
    let err = Tensor::cat(&[&a, &f], 0).unwrap_err();
    assert!(!err.is_unsupported());
    assert!(err
        .to_string()
        .contains("Promotion for Float8 Types is not supported"));
    let e5 = a.to_dtype(DType::F8E5M2).unwrap();
    assert!(Tensor::cat(&[&a, &e5], 0).is_err());
}

#[test]
fn where_selects() {
    let cond = Tensor::from_vec(vec![true, false, true], &[3]).unwrap();
    let a = e4m3(&[1.0, 2.0, 3.0], &[3]);
    let b = e4m3(&[-1.0, -2.0, -3.0], &[3]);
    let w = Tensor::where_cond(&cond, &a, &b).unwrap();
    assert_eq!(w.dtype(), DType::F8E4M3FN);
    assert_same(&f32s(&w), &[1.0, -2.0, 3.0], "where");
    // a host scalar takes the tensor's float8 dtype (same category): 0.3 → 0.3125
    let w = Tensor::where_cond(&cond, &a, 0.3).unwrap();
    assert_eq!(w.dtype(), DType::F8E4M3FN);
    assert_same(&f32s(&w), &[1.0, 0.3125, 3.0], "where scalar");
    // broadcasting
    let col = Tensor::from_vec(vec![true, false], &[2, 1]).unwrap();
    let w = Tensor::where_cond(&col, &a, &b).unwrap();
    assert_same(&f32s(&w), &[1.0, 2.0, 3.0, -1.0, -2.0, -3.0], "where bcast");
    let f = Tensor::ones(&[3], DType::F32);
    assert!(Tensor::where_cond(&cond, &a, &f).is_err());
}

#[test]
fn fill_and_copy_in_place() {
    let t = Tensor::zeros(&[2, 3], DType::F8E5M2);
    t.select(0, 1).unwrap().fill_(3.0).unwrap();
    assert_same(&f32s(&t), &[0.0, 0.0, 0.0, 3.0, 3.0, 3.0], "fill_ row");
    t.select(1, 0).unwrap().fill_(-0.3).unwrap();
    assert_same(
        &f32s(&t),
        &[-0.3125, 0.0, 0.0, -0.3125, 3.0, 3.0],
        "fill_ col",
    );
    // copy_ from float32 (converted, broadcast) into a float8 view
    let src = Tensor::from_vec(vec![100.0f32, 1e6], &[2]).unwrap();
    t.narrow(1, 1, 2).unwrap().copy_(&src).unwrap();
    assert_same(
        &f32s(&t),
        &[-0.3125, 96.0, INF, -0.3125, 96.0, INF],
        "copy_ f32",
    );
    // copy_ from float8 into float32, and between float8 formats
    let dst = Tensor::zeros(&[2, 3], DType::F32);
    dst.copy_(&t).unwrap();
    assert_same(
        &dst.to_vec::<f32>().unwrap(),
        &[-0.3125, 96.0, INF, -0.3125, 96.0, INF],
        "copy_ to f32",
    );
    let e4 = Tensor::zeros(&[3], DType::F8E4M3FN);
    e4.copy_(&t.select(0, 0).unwrap()).unwrap();
    assert_same(&f32s(&e4), &[-0.3125, 96.0, NAN], "copy_ e5m2 -> e4m3fn");
    let same = e4.clone();
    e4.copy_(&same).unwrap();
    assert_same(&f32s(&e4), &[-0.3125, 96.0, NAN], "copy_ self");
}

#[test]
fn printing() {
    let t = e4m3(&[1.0, -0.5, f32::NAN], &[3]);
    assert_eq!(
        t.to_string(),
        "tensor([ 1.0000, -0.5000,     nan], dtype=torch.float8_e4m3fn)"
    );
    let t = Tensor::full(&[2, 2], 1000, DType::F8E5M2).unwrap();
    assert_eq!(
        t.to_string(),
        "tensor([[1024., 1024.],\n        [1024., 1024.]], dtype=torch.float8_e5m2)"
    );
    let t = Tensor::ones(&[], DType::F8E8M0FNU);
    assert_eq!(t.to_string(), "tensor(1., dtype=torch.float8_e8m0fnu)");
    let t = Tensor::zeros(&[0], DType::F8E4M3FNUZ);
    assert_eq!(t.to_string(), "tensor([], dtype=torch.float8_e4m3fnuz)");
}

#[test]
fn arithmetic_is_what_pytorch_computes() {
    for dtype in FLOAT8 {
        let a = Tensor::ones(&[2], dtype);
        let b = Tensor::ones(&[2], dtype);
        // PyTorch 2.15 has no CPU kernel for these (tests/data/seeds/shell_dtypes.jsonl)
        let refused = [
            a.add(&b).err(),
            a.add(1).err(),
            a.mul(2.5).err(),
            a.mul(&b.select(0, 0).unwrap()).err(),
            a.neg().err(),
            a.sum(&[], false).err(),
            a.amax(&[], false).err(),
            a.unsqueeze(0)
                .unwrap()
                .matmul(&b.unsqueeze(1).unwrap())
                .err(),
            a.add_(1).err(),
            a.clamp(Some(Scalar::Int(0)), None).err(),
            a.lt(&b).err(),
        ];
        for (i, e) in refused.into_iter().enumerate() {
            assert!(e.is_some(), "{dtype} op {i} was not refused");
        }
        // and these it computes through float32, rounding a float8 result once
        let two = Tensor::full(&[2], 2.0, dtype).unwrap();
        let m = two.mul(&two).unwrap();
        assert_eq!((m.dtype(), f32s(&m)), (dtype, vec![4.0, 4.0]));
        assert_eq!(
            a.eq(&b).unwrap().to_vec::<bool>().unwrap(),
            vec![true, true]
        );
        assert_eq!(
            a.ne(1.0).unwrap().to_vec::<bool>().unwrap(),
            vec![false, false]
        );
        assert_eq!(
            a.isnan().unwrap().to_vec::<bool>().unwrap(),
            vec![false, false]
        );
        assert_eq!(a.abs().is_ok(), dtype != DType::F8E8M0FNU);
    }
}
