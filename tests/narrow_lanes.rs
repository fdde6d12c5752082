//! float16 and bfloat16 elementwise kernels in the JIT's vector tier (rounding
//! each op in `f32x4` lanes, packing the stores) give the reference
//! interpreter's bits for every kind of value: a sweep of float32 bit patterns
//! (normals, subnormals of both narrow types, ties, values that overflow to
//! inf, NaNs with payloads) through a cast, arithmetic and a store, and the
//! rounded values read back as float32 (bit for bit in either math mode: these
//! chains hold nothing to approximate or contract); and reductions whose vector phases load and store those dtypes (a row
//! max bit for bit, a softmax in fast math within one float16 ulp). One test:
//! the backend is a process-wide setting.

use lazyfuse::half::{bf16, f16};
use lazyfuse::{CpuBackend, DType, Tensor};

/// Every 2039th float32 bit pattern (both signs), plus the edge cases by name.
fn patterns() -> Vec<f32> {
    let mut v: Vec<f32> = (0..u32::MAX / 2039)
        .map(|i| f32::from_bits(i * 2039))
        .collect();
    v.extend([
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::from_bits(0x7FC0_0001),
        f32::from_bits(0xFF80_2001),
        65504.0,
        65519.996,
        65520.0,
        -65520.0,
        6.103_515_6e-5,
        2.980_232_2e-8,
        2.980_232_3e-8,
        5.960_464_5e-8,
        1.000_488_3,
        1.000_976_6,
        f32::MAX,
        f32::MIN_POSITIVE,
    ]);
    v
}

/// The bits `f` computes over the patterns (`dt`: float16 or bfloat16) under
/// `backend`: the codes of a float16 or bfloat16 result, the bits of a float32
/// one.
fn run(backend: CpuBackend, dt: DType, f: impl Fn(&Tensor) -> Tensor) -> Vec<u32> {
    lazyfuse::set_cpu_backend(backend);
    let p = patterns();
    let n = p.len();
    let x = Tensor::from_vec(p, &[n]).unwrap().to_dtype(dt).unwrap();
    let y = f(&x).realize().unwrap();
    match y.dtype() {
        DType::F16 => y
            .to_vec::<f16>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits().into())
            .collect(),
        DType::BF16 => y
            .to_vec::<bf16>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits().into())
            .collect(),
        _ => y
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect(),
    }
}

/// An elementwise chain of one tensor.
type Chain = fn(&Tensor) -> Tensor;

#[test]
fn narrow_lanes_match_the_interpreter_bit_for_bit() {
    let chains: [(&str, Chain); 6] = [
        ("cast", |x| x.clone()),
        // ops that return an operand's value take no rounding of their own
        ("relu, abs, neg, maximum, minimum", |x| {
            let y = x.mul(1.5).unwrap().add(0.25).unwrap();
            let m = y.relu().unwrap().maximum(&y.neg().unwrap()).unwrap();
            m.minimum(&y.abs().unwrap().mul(0.75).unwrap()).unwrap()
        }),
        // and with a constant operand, read as float32 (no store rounds it)
        ("maximum with 0.1 as float32", |x| {
            let m = x.maximum(0.1).unwrap().relu().unwrap();
            m.to_dtype(DType::F32).unwrap()
        }),
        ("x*1.5+0.25", |x| x.mul(1.5).unwrap().add(0.25).unwrap()),
        ("(x*x - x)/3", |x| {
            x.mul(x).unwrap().sub(x).unwrap().div(3.0).unwrap()
        }),
        // the rounded values themselves, NaN payloads included, as float32
        ("(x*1.5+0.25) as float32", |x| {
            let y = x.mul(1.5).unwrap().add(0.25).unwrap();
            y.to_dtype(DType::F32).unwrap()
        }),
    ];
    for dt in [DType::F16, DType::BF16] {
        for (name, f) in &chains {
            let want = run(CpuBackend::Interp, dt, f);
            let got = run(CpuBackend::Jit, dt, f);
            let bad: Vec<String> = want
                .iter()
                .zip(&got)
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .take(10)
                .map(|(i, (a, b))| format!("#{i}: interpreter {a:#06x}, JIT {b:#06x}"))
                .collect();
            assert!(bad.is_empty(), "{dt} {name}:\n{}", bad.join("\n"));
        }
    }
    // Rows of 256: the reduction phases run in vector code.
    let rows: Vec<f32> = (0..64 * 256)
        .map(|i| ((i as f32) * 0.37).sin() * 8.0)
        .collect();
    for dt in [DType::F16, DType::BF16] {
        let x = |b: CpuBackend| {
            lazyfuse::set_cpu_backend(b);
            Tensor::from_vec(rows.clone(), &[64, 256])
                .unwrap()
                .to_dtype(dt)
                .unwrap()
        };
        let max = |b: CpuBackend| -> Vec<f32> {
            let m = x(b).to_dtype(DType::F32).unwrap().amax(&[1], true).unwrap();
            m.realize().unwrap().to_vec().unwrap()
        };
        let (want, got) = (max(CpuBackend::Interp), max(CpuBackend::Jit));
        assert!(
            want.iter()
                .zip(&got)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{dt} row max differs"
        );
        let softmax = |b: CpuBackend| -> Vec<f32> {
            let s = x(b).softmax(1).unwrap().to_dtype(DType::F32).unwrap();
            s.realize().unwrap().to_vec().unwrap()
        };
        let (want, got) = (softmax(CpuBackend::Interp), softmax(CpuBackend::Jit));
        let ulp = if dt == DType::F16 {
            2f32.powi(-10)
        } else {
            2f32.powi(-7)
        };
        for (i, (a, b)) in want.iter().zip(&got).enumerate() {
            assert!(
                (a - b).abs() <= ulp * a.abs().max(2f32.powi(-14)),
                "{dt} softmax #{i}: {a} vs {b}"
            );
        }
    }
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
}
