//! The Cranelift backend against the interpreter, op by op: every `UnaryOp`,
//! `UnaryParamOp` (several parameter sets), `BinaryOp`, `Where` and `Cast` on every
//! real dtype, through a one-node graph run by `interp::execute` and a hand-built
//! kernel (load, op, store) compiled by `CpuModule`, on special values (NaN, ±inf,
//! ±0, ±1, integer extremes, subnormals, large values).
//!
//! The JIT calls the interpreter's own scalar code for the long tail, so results are
//! compared bit for bit (any NaN equals any NaN). Where the interpreter refuses an op
//! for a dtype, compiling the kernel must be `CodegenError::Unsupported`.

#[path = "support/jit.rs"]
mod jit;

use half::{bf16, f16};
use jit::{assert_same, buffer, bytes_of, elementwise, interp, run};
use lazyfuse_codegen::cpu::{CodegenError, CpuModule};
use lazyfuse_ir::kernel::{Const, Expr, Stage};
use lazyfuse_ir::{BinaryOp, DType, Op, UnaryOp, UnaryParamOp};
use lazyfuse_runtime::interp::nan_to_num_defaults;
use lazyfuse_runtime::jit_symbols::lookup;
use lazyfuse_runtime::Buffer;

const O: Stage = Stage::Outer(0);

/// Every real dtype (complex never enters a loop kernel).
fn real_dtypes() -> Vec<DType> {
    // (float4 holds packed bytes that nothing converts to or computes with)
    DType::ALL
        .into_iter()
        .filter(|d| !d.is_complex() && *d != DType::F4E2M1FNX2)
        .collect()
}

const FLOATS: [f64; 34] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    2.5,
    -2.5,
    3.0,
    1e-40,
    -1e-45,
    5e-324,
    1e-310,
    1e30,
    -1e30,
    65504.0,
    70000.0,
    3.3895e38,
    1e300,
    0.1,
    -0.7,
    2.0,
    100.0,
    10.0,
    0.999,
    -1e5,
    9.3e18,
    1.9e19,
    -9.3e18,
    4e9,
];

const INTS: [i128; 26] = [
    0,
    1,
    -1,
    2,
    -2,
    3,
    -7,
    7,
    5,
    63,
    64,
    100,
    -100,
    127,
    128,
    255,
    256,
    65535,
    1 << 31,
    (1 << 32) - 1,
    i64::MIN as i128,
    i64::MAX as i128,
    i64::MIN as i128 + 1,
    i32::MIN as i128,
    i16::MIN as i128,
    i8::MIN as i128,
];

/// The special values of a dtype.
fn values(dtype: DType) -> Buffer {
    let is: Vec<i128> = if dtype == DType::Bool {
        vec![0, 1, 1, 0]
    } else {
        INTS.to_vec()
    };
    buffer(dtype, &FLOATS, &is)
}

/// Every pair of special values, as two buffers (`skip_zero`: no zero divisor).
fn pairs(dtype: DType, skip_zero: bool) -> (Buffer, Buffer) {
    let (mut fa, mut fb, mut ia, mut ib) = (vec![], vec![], vec![], vec![]);
    let is: Vec<i128> = if dtype == DType::Bool {
        vec![0, 1]
    } else {
        INTS.to_vec()
    };
    for &a in &FLOATS {
        for &b in &FLOATS {
            fa.push(a);
            fb.push(b);
        }
    }
    for &a in &is {
        for &b in &is {
            // A divisor that wraps to zero in the dtype.
            let zero = bytes_of(&buffer(dtype, &[0.0], &[b]))
                .iter()
                .all(|&x| x == 0);
            if skip_zero && zero {
                continue;
            }
            ia.push(a);
            ib.push(b);
        }
    }
    (buffer(dtype, &fa, &ia), buffer(dtype, &fb, &ib))
}

/// Compares the JIT with the interpreter on one node of `op`; `make` builds the
/// kernel expression from the loads.
fn check(
    op: Op,
    out: DType,
    inputs: &[Buffer],
    make: impl FnOnce(&mut jit::Kb, &[lazyfuse_ir::kernel::ExprId]) -> lazyfuse_ir::kernel::ExprId,
) {
    let what = format!(
        "{} of {:?} -> {out}",
        op.name(),
        inputs
            .iter()
            .map(|b| b.dtype().to_string())
            .collect::<Vec<_>>()
    );
    let n = inputs[0].len();
    let ins: Vec<DType> = inputs.iter().map(|b| b.dtype()).collect();
    let k = elementwise(&ins, out, n, make);
    match interp(op.clone(), out, inputs) {
        Ok(want) => {
            assert_eq!(want.dtype(), out, "{what}: interpreter dtype");
            let mut bufs: Vec<Vec<u8>> = inputs.iter().map(bytes_of).collect();
            bufs.push(vec![0; n * out.size_in_bytes()]);
            let got = run(&k, &bufs).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(got.status[0], 0, "{what}: status");
            assert_same(out, &bytes_of(&want), &got.bufs[inputs.len()], &what);
            if std::env::var("JIT_TRACE").is_ok() {
                eprintln!("compared {what}");
            }
        }
        Err(e) => match CpuModule::compile(&[&k], &lookup) {
            Err(CodegenError::Unsupported(m)) => {
                if std::env::var("JIT_TRACE").is_ok() {
                    eprintln!("refused {what}: {e} / {m}");
                }
            }
            Err(other) => panic!("{what}: interpreter says {e}, jit says {other}"),
            Ok(_) => panic!("{what}: interpreter refuses ({e}), the jit compiled it"),
        },
    }
}

const UNARY: [UnaryOp; 47] = {
    use UnaryOp::*;
    [
        Neg, Abs, Sign, Exp, Log, Sqrt, Rsqrt, Sin, Cos, Tanh, Sigmoid, Relu, Floor, Ceil, Round,
        Trunc, Reciprocal, LogicalNot, BitwiseNot, IsNan, Sgn, Square, Exp2, Expm1, Log2, Log10,
        Log1p, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Erf, Erfc, Erfinv, Frac,
        IsInf, IsPosInf, IsNegInf, IsFinite, IsReal, Signbit, Silu,
    ]
};
const UNARY_REST: [UnaryOp; 3] = [UnaryOp::Mish, UnaryOp::Hardsigmoid, UnaryOp::Hardswish];

/// Fails to compile when an op is added and the lists above miss it.
#[allow(dead_code)]
fn unary_lists_are_complete(op: UnaryOp) {
    use UnaryOp::*;
    match op {
        Neg | Abs | Sign | Exp | Log | Sqrt | Rsqrt | Sin | Cos | Tanh | Sigmoid | Relu | Floor
        | Ceil | Round | Trunc | Reciprocal | LogicalNot | BitwiseNot | IsNan | Sgn | Square
        | Exp2 | Expm1 | Log2 | Log10 | Log1p | Tan | Asin | Acos | Atan | Sinh | Cosh | Asinh
        | Acosh | Atanh | Erf | Erfc | Erfinv | Frac | IsInf | IsPosInf | IsNegInf | IsFinite
        | IsReal | Signbit | Silu | Mish | Hardsigmoid | Hardswish => {}
        // complex values only, which never enter loop kernels
        RealPart | ImagPart | Conj => {}
    }
}

const BINARY: [BinaryOp; 34] = {
    use BinaryOp::*;
    [
        Add,
        Sub,
        Mul,
        Div,
        DivFloor,
        DivTrunc,
        Remainder,
        Fmod,
        Pow,
        Maximum,
        Minimum,
        Atan2,
        Eq,
        Ne,
        Lt,
        Le,
        Gt,
        Ge,
        LogicalAnd,
        LogicalOr,
        LogicalXor,
        BitwiseAnd,
        BitwiseOr,
        BitwiseXor,
        Fmax,
        Fmin,
        Hypot,
        Copysign,
        Logaddexp,
        Logaddexp2,
        Xlogy,
        Nextafter,
        BitwiseLeftShift,
        BitwiseRightShift,
    ]
};
const BINARY_REST: [BinaryOp; 2] = [BinaryOp::Gcd, BinaryOp::Lcm];

#[allow(dead_code)]
fn binary_lists_are_complete(op: BinaryOp) {
    use BinaryOp::*;
    match op {
        Add | Sub | Mul | Div | DivFloor | DivTrunc | Remainder | Fmod | Pow | Maximum
        | Minimum | Atan2 | Eq | Ne | Lt | Le | Gt | Ge | LogicalAnd | LogicalOr | LogicalXor
        | BitwiseAnd | BitwiseOr | BitwiseXor | Fmax | Fmin | Hypot | Copysign | Logaddexp
        | Logaddexp2 | Xlogy | Nextafter | BitwiseLeftShift | BitwiseRightShift | Gcd | Lcm => {}
        // a complex output, which never enters loop kernels
        ComplexOf => {}
    }
}

#[test]
fn every_unary_op_on_every_dtype() {
    for op in UNARY.into_iter().chain(UNARY_REST) {
        for dt in real_dtypes() {
            let out = if op.is_predicate() { DType::Bool } else { dt };
            check(Op::Unary(op), out, &[values(dt)], |kb, l| {
                kb.push(Expr::Unary { op, x: l[0] }, out, O)
            });
        }
    }
}

fn param_ops(dt: DType) -> Vec<UnaryParamOp> {
    let (n, p, m) = nan_to_num_defaults(dt);
    vec![
        UnaryParamOp::NanToNum {
            nan: n,
            posinf: p,
            neginf: m,
        },
        UnaryParamOp::NanToNum {
            nan: 1.5,
            posinf: 1e300,
            neginf: -0.1,
        },
        UnaryParamOp::Logit { eps: None },
        UnaryParamOp::Logit { eps: Some(0.1) },
        UnaryParamOp::Logit { eps: Some(-1.0) },
        UnaryParamOp::RoundDecimals { decimals: 0 },
        UnaryParamOp::RoundDecimals { decimals: 2 },
        UnaryParamOp::RoundDecimals { decimals: -1 },
        UnaryParamOp::Gelu { tanh: false },
        UnaryParamOp::Gelu { tanh: true },
        UnaryParamOp::Softplus {
            beta: 1.0,
            threshold: 20.0,
        },
        UnaryParamOp::Softplus {
            beta: 2.0,
            threshold: 1.0,
        },
        UnaryParamOp::Elu {
            alpha: 1.0,
            scale: 1.0,
            input_scale: 1.0,
        },
        UnaryParamOp::Elu {
            alpha: 0.5,
            scale: 2.0,
            input_scale: 1.5,
        },
        UnaryParamOp::LeakyRelu {
            negative_slope: 0.01,
        },
        UnaryParamOp::Hardtanh {
            min_val: -1.0,
            max_val: 1.0,
        },
        UnaryParamOp::Hardtanh {
            min_val: -2.5,
            max_val: 300.0,
        },
        UnaryParamOp::Hardtanh {
            min_val: 5.0,
            max_val: 2.0,
        },
        UnaryParamOp::Hardtanh {
            min_val: 0.0,
            max_val: 1e10,
        },
        UnaryParamOp::Hardtanh {
            min_val: -1e30,
            max_val: -200.0,
        },
    ]
}

#[test]
fn every_unary_param_op_on_every_dtype() {
    for dt in real_dtypes() {
        for op in param_ops(dt) {
            check(Op::UnaryParam(op), dt, &[values(dt)], |kb, l| {
                kb.push(Expr::UnaryParam { op, x: l[0] }, dt, O)
            });
        }
    }
}

#[test]
fn every_binary_op_on_every_dtype() {
    use BinaryOp::*;
    for op in BINARY.into_iter().chain(BINARY_REST) {
        for dt in real_dtypes() {
            let skip_zero = (dt.is_integer() || dt == DType::Bool)
                && matches!(op, DivFloor | DivTrunc | Remainder | Fmod);
            let (a, b) = pairs(dt, skip_zero);
            let out = if op.is_predicate() { DType::Bool } else { dt };
            check(Op::Binary(op), out, &[a, b], |kb, l| {
                kb.push(
                    Expr::Binary {
                        op,
                        a: l[0],
                        b: l[1],
                    },
                    out,
                    O,
                )
            });
        }
    }
}

#[test]
fn where_on_every_dtype() {
    for dt in real_dtypes() {
        let (a, b) = pairs(dt, false);
        let n = a.len();
        let cond = Buffer::from_vec((0..n).map(|i| i % 3 == 0).collect::<Vec<_>>());
        check(Op::Where, dt, &[cond, a, b], |kb, l| {
            kb.push(
                Expr::Where {
                    cond: l[0],
                    a: l[1],
                    b: l[2],
                },
                dt,
                O,
            )
        });
    }
}

#[test]
fn every_cast_between_real_dtypes() {
    for from in real_dtypes() {
        for to in real_dtypes() {
            check(Op::Cast, to, &[values(from)], |kb, l| {
                kb.push(Expr::Cast { x: l[0] }, to, O)
            });
        }
    }
}

#[test]
fn float16_rounds_after_every_op() {
    // (a + b) - b in float16: 2048 + 1 rounds to 2048 first, so the result is 2047;
    // computing the chain in float32 and rounding once would give 2048.
    let a = Buffer::from_vec(vec![f16::from_f32(2048.0), f16::from_f32(1.0)]);
    let b = Buffer::from_vec(vec![f16::from_f32(1.0), f16::from_f32(2048.0)]);
    let k = elementwise(&[DType::F16, DType::F16], DType::F16, 2, |kb, l| {
        let s = kb.push(
            Expr::Binary {
                op: BinaryOp::Add,
                a: l[0],
                b: l[1],
            },
            DType::F16,
            O,
        );
        kb.push(
            Expr::Binary {
                op: BinaryOp::Sub,
                a: s,
                b: l[1],
            },
            DType::F16,
            O,
        )
    });
    let r = run(&k, &[bytes_of(&a), bytes_of(&b), vec![0; 4]]).unwrap();
    let got = Buffer::from_vec(vec![
        f16::from_bits(u16::from_le_bytes([r.bufs[2][0], r.bufs[2][1]])),
        f16::from_bits(u16::from_le_bytes([r.bufs[2][2], r.bufs[2][3]])),
    ]);
    assert_eq!(
        got.as_slice::<f16>().unwrap(),
        &[f16::from_f32(2047.0), f16::from_f32(0.0)]
    );
}

#[test]
fn constants_of_every_kind() {
    for (dt, c, want) in [
        (DType::I32, Const::Int(-5), (-5i32).to_le_bytes().to_vec()),
        (
            DType::U64,
            Const::Int(u64::MAX as i128),
            u64::MAX.to_le_bytes().to_vec(),
        ),
        (DType::Bool, Const::Bool(true), vec![1]),
        (
            DType::F32,
            Const::Float(0.25),
            0.25f32.to_le_bytes().to_vec(),
        ),
        (
            DType::BF16,
            Const::Float(-2.0),
            bf16::from_f32(-2.0).to_bits().to_le_bytes().to_vec(),
        ),
        (
            DType::F64,
            Const::Float(1e300),
            1e300f64.to_le_bytes().to_vec(),
        ),
    ] {
        let mut kb = jit::Kb::new(&[], 0);
        let o = kb.param(dt, 1, true);
        let v = kb.push(Expr::Const(c), dt, O);
        kb.store(o, 0, &[], v);
        let r = run(&kb.k, &[vec![0; dt.size_in_bytes()]]).unwrap();
        assert_eq!(r.bufs[0], want, "{dt} {c}");
    }
}
