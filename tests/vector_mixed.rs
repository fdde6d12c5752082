//! Mixed-dtype vector kernels (W8 and W2): kernels whose expressions have
//! different dtypes of 4 lanes (int32, float16 and bfloat16 loads widened to float32)
//! run in `f32x4`/`i32x4`, and must give the interpreter's values bit for bit: the
//! casts they use (int32 → float32, float16/bfloat16 → float32) are exact, so this
//! holds in both math modes. Lengths around the lane count exercise the vector loop
//! and its scalar tail; the inputs hold NaN, ±inf, subnormal float16, -0.0 and the
//! int32 extremes.
//!
//! The backend and math mode are process-wide: every test holds `LOCK`.

use lazyfuse::half::{bf16, f16};
use lazyfuse::{CpuBackend, DType, MathMode, Tensor};
use std::sync::Mutex;

static LOCK: Mutex<()> = Mutex::new(());

/// Every float16 bit pattern class: zeros, subnormals (smallest, largest), normals,
/// the largest finite, infinities, signalling and quiet NaNs with payloads.
const F16_BITS: [u16; 16] = [
    0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x7c00,
    0xfc00, 0x7c01, 0x7e00, 0xfd55,
];

const I32S: [i32; 10] = [
    0,
    1,
    -1,
    i32::MAX,
    i32::MIN,
    16_777_217,
    -16_777_219,
    123_456_789,
    7,
    -3,
];

fn f16_input(n: usize) -> Vec<f16> {
    (0..n)
        .map(|i| f16::from_bits(F16_BITS[(i * 7) % F16_BITS.len()] ^ (i as u16 & 0x0010)))
        .collect()
}

fn bf16_input(n: usize) -> Vec<bf16> {
    // The same classes in bfloat16's layout (8 exponent bits).
    const B: [u16; 10] = [
        0x0000, 0x8000, 0x0001, 0x807f, 0x3f80, 0x7f7f, 0x7f80, 0xff80, 0x7f81, 0xffc0,
    ];
    (0..n)
        .map(|i| bf16::from_bits(B[(i * 3) % B.len()]))
        .collect()
}

fn i32_input(n: usize) -> Vec<i32> {
    (0..n)
        .map(|i| I32S[i % I32S.len()].wrapping_add((i / I32S.len()) as i32))
        .collect()
}

/// The bits of `f`'s float32 result on the JIT (in `mode`) and on the interpreter;
/// asserts that the JIT code is vectorized (`f32x4`) when the result has at least
/// one vector's worth of elements (a single element has no loop to vectorize).
fn jit_and_interp(f: &dyn Fn() -> Tensor, mode: MathMode) -> (Vec<u32>, Vec<u32>) {
    lazyfuse::set_math_mode(mode);
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    let y = f();
    assert_eq!(y.kernel_count().unwrap(), 1);
    let clif = y.clif_text().unwrap();
    if y.numel() > 1 {
        assert!(clif.contains("f32x4"), "not vectorized:\n{clif}");
    }
    let jit: Vec<u32> = y
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    lazyfuse::set_cpu_backend(CpuBackend::Interp);
    let interp = f()
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    lazyfuse::set_math_mode(MathMode::Fast);
    (jit, interp)
}

#[test]
fn int32_times_half_plus_float16_is_vectorized_and_exact() {
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    for n in [1, 3, 4, 5, 7, 8, 9, 17, 100] {
        let a = Tensor::from_vec(i32_input(n), &[n]).unwrap();
        let h = Tensor::from_vec(f16_input(n), &[n]).unwrap();
        let w8 = || a.mul(0.5).unwrap().add(&h).unwrap();
        for mode in [MathMode::Exact, MathMode::Fast] {
            let (jit, interp) = jit_and_interp(&w8, mode);
            assert_eq!(jit, interp, "W8 n={n} {mode:?}");
        }
    }
}

#[test]
fn float16_and_bfloat16_widen_exactly() {
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    // Every float16 bit pattern (through a plain widening cast), then a sum with a
    // bfloat16 and a float32 operand.
    let all: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let n = all.len();
    let h = Tensor::from_vec(all, &[n]).unwrap();
    for mode in [MathMode::Exact, MathMode::Fast] {
        let (jit, interp) = jit_and_interp(&|| h.to_dtype(DType::F32).unwrap(), mode);
        assert_eq!(jit, interp, "f16 -> f32 {mode:?}");
        // `half`'s own widening, as a second witness for the NaN payloads.
        for (i, &b) in jit.iter().enumerate() {
            let want = f16::from_bits(i as u16).to_f32().to_bits();
            assert_eq!(b, want, "f16 bits {i:#06x}");
        }
    }
    for n in [2, 4, 6, 13] {
        let h = Tensor::from_vec(f16_input(n), &[n]).unwrap();
        let b = Tensor::from_vec(bf16_input(n), &[n]).unwrap();
        let x: Vec<f32> = (0..n).map(|i| i as f32 - 2.5).collect();
        let x = Tensor::from_vec(x, &[n]).unwrap();
        let f = || {
            let s = h.to_dtype(DType::F32).unwrap();
            let t = b.to_dtype(DType::F32).unwrap();
            s.mul(&t).unwrap().add(&x).unwrap().maximum(&t).unwrap()
        };
        for mode in [MathMode::Exact, MathMode::Fast] {
            let (jit, interp) = jit_and_interp(&f, mode);
            assert_eq!(jit, interp, "f16*bf16+f32 n={n} {mode:?}");
        }
    }
}

#[test]
fn int32_arithmetic_then_a_float_cast() {
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    // int32 ops in i32x4 (wrapping), the exact int → float cast, float ops.
    for n in [4, 5, 11, 64] {
        let a = Tensor::from_vec(i32_input(n), &[n]).unwrap();
        let b = Tensor::from_vec(i32_input(n).into_iter().rev().collect(), &[n]).unwrap();
        let f = || {
            let i = a.mul(&b).unwrap().add(&a).unwrap();
            i.to_dtype(DType::F32)
                .unwrap()
                .mul(-0.0f64)
                .unwrap()
                .sub(&i.to_dtype(DType::F32).unwrap())
                .unwrap()
        };
        for mode in [MathMode::Exact, MathMode::Fast] {
            let (jit, interp) = jit_and_interp(&f, mode);
            assert_eq!(jit, interp, "int32 chain n={n} {mode:?}");
        }
    }
}

#[test]
fn w2_broadcast_row_and_column_vectorize() {
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    // W2 at a small size: `x + row[1, c]`, times `col[r, 1]` (stride 0 along the
    // inner dim: a splat), with a row length that leaves a tail.
    let (r, c) = (5, 11);
    let x: Vec<f32> = (0..r * c).map(|i| (i as f32 * 0.37).sin()).collect();
    let mut row: Vec<f32> = (0..c).map(|i| i as f32 - 3.0).collect();
    row[2] = f32::NAN;
    let col: Vec<f32> = vec![1.5, -0.0, f32::INFINITY, 1e-40, -2.0];
    let x = Tensor::from_vec(x, &[r, c]).unwrap();
    let row = Tensor::from_vec(row, &[1, c]).unwrap();
    let col = Tensor::from_vec(col, &[r, 1]).unwrap();
    let f = || x.add(&row).unwrap().mul(&col).unwrap();
    for mode in [MathMode::Exact, MathMode::Fast] {
        let (jit, interp) = jit_and_interp(&f, mode);
        assert_eq!(jit, interp, "W2 {mode:?}");
    }
}

/// A realized 0-d float64 (or int64) tensor operand is a broadcast load of a dtype
/// without 4 lanes: loaded once per vector as a scalar, cast, then splat.
#[test]
fn a_zero_dim_float64_tensor_operand_stays_vectorized() {
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let f = Tensor::from_vec(vec![0.1f64], &[])
        .unwrap()
        .realize()
        .unwrap();
    let i = Tensor::from_vec(vec![-3i64], &[])
        .unwrap()
        .realize()
        .unwrap();
    for n in [1, 3, 4, 9, 100] {
        let x = Tensor::from_vec(i32_input(n), &[n])
            .unwrap()
            .to_dtype(DType::F32)
            .unwrap()
            .realize()
            .unwrap();
        let g = || x.maximum(&f).unwrap().add(&i).unwrap();
        for mode in [MathMode::Exact, MathMode::Fast] {
            let (jit, interp) = jit_and_interp(&g, mode);
            assert_eq!(jit, interp, "n={n} {mode:?}");
        }
    }
}
