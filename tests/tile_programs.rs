//! Tile programs (`vtiles`): float16 and bfloat16 elementwise kernels whose
//! values are all of their one dtype run as routine calls over float32 tiles.
//! Against the reference interpreter, bit for bit, in both math modes (the
//! fast-math transcendentals, which are the JIT's own forms, against its
//! inline code): rows
//! shorter than, as long as and longer than a tile (256 points), ranges that
//! the threads split inside a row, constants off the dtype's grid, values
//! that overflow, underflow and NaNs; and which kernels take a program.
//! One test: the backend is a process-wide setting.

use lazyfuse::half::{bf16, f16};
use lazyfuse::{CpuBackend, DType, MathMode, Tensor};

/// `n` values over the whole float16 range and past it: large and tiny
/// magnitudes, both signs, a NaN and infinities here and there.
fn values(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| match i % 97 {
            13 => f32::NAN,
            29 => f32::INFINITY,
            41 => -0.0,
            _ => {
                let t = (i as f32 * 0.618_034).fract();
                let scale = 2f32.powi((i % 37) as i32 - 24);
                (t - 0.4) * scale * 7.0
            }
        })
        .collect()
}

/// The bits of a float16 or bfloat16 tensor's codes.
fn codes(y: &Tensor) -> Vec<u16> {
    match y.dtype() {
        DType::F16 => y
            .to_vec::<f16>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect(),
        _ => y
            .to_vec::<bf16>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect(),
    }
}

/// An elementwise expression of three same-shaped tensors.
type Chain = fn(&Tensor, &Tensor, &Tensor) -> Tensor;

#[test]
fn tile_programs_match_the_interpreter_bit_for_bit() {
    let chains: [(&str, Chain, bool); 6] = [
        (
            "W1",
            |a, b, c| {
                let y = a.mul(b).unwrap().add(c).unwrap().relu().unwrap();
                y.mul(0.5).unwrap().add(a).unwrap().tanh().unwrap()
            },
            true,
        ),
        (
            "arithmetic",
            |a, b, c| {
                let y = a.sub(b).unwrap().div(c).unwrap().mul(0.1).unwrap();
                y.maximum(&a.neg().unwrap())
                    .unwrap()
                    .minimum(&b.abs().unwrap())
                    .unwrap()
            },
            false,
        ),
        (
            "sigmoid inside",
            |a, b, _| {
                a.mul(b)
                    .unwrap()
                    .add(1e-3)
                    .unwrap()
                    .sigmoid()
                    .unwrap()
                    .mul(a)
                    .unwrap()
            },
            true,
        ),
        (
            "transcendentals",
            |a, _, c| {
                let e = a.mul(0.01).unwrap().exp().unwrap();
                e.add(&c.silu().unwrap()).unwrap().log().unwrap()
            },
            true,
        ),
        (
            "gelu and erf",
            |a, b, _| {
                let g = a.gelu(lazyfuse::GeluApproximate::None).unwrap();
                g.sub(&b.mul(0.3).unwrap().erf().unwrap()).unwrap()
            },
            true,
        ),
        (
            "a constant's own value",
            |a, _, _| a.add(0.1).unwrap().mul(3.3).unwrap(),
            false,
        ),
    ];
    for math in [MathMode::Fast, MathMode::Exact] {
        lazyfuse::set_math_mode(math);
        for dt in [DType::F16, DType::BF16] {
            for shape in [
                vec![33],
                vec![7, 255],
                vec![3, 256],
                vec![2, 1025],
                vec![3, 100_003],
            ] {
                let n: usize = shape.iter().product();
                let input = |seed: usize| {
                    let v: Vec<f32> = values(n + seed).split_off(seed);
                    let t = Tensor::from_vec(v, &shape).unwrap();
                    t.to_dtype(dt).unwrap().realize().unwrap()
                };
                for (name, f, transcendental) in &chains {
                    // Fast math's transcendentals are the JIT's own forms: their
                    // reference is the JIT's inline code, which a kernel takes
                    // where each input is first multiplied by a one broadcast
                    // along the row (exact: `x · 1` is `x`).
                    let inline = math == MathMode::Fast && *transcendental;
                    let run = |b: CpuBackend, via_one: bool| {
                        lazyfuse::set_cpu_backend(b);
                        let one = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
                        let one = one.to_dtype(dt).unwrap().realize().unwrap();
                        let by_one = |t: Tensor| if via_one { t.mul(&one).unwrap() } else { t };
                        let (x, y, z) = (by_one(input(0)), by_one(input(5)), by_one(input(11)));
                        let out = f(&x, &y, &z);
                        let program = out.clif_text().unwrap().contains("lf_tile_");
                        (codes(&out.realize().unwrap()), program)
                    };
                    let (want, reference_program) = if inline {
                        run(CpuBackend::Jit, true)
                    } else {
                        run(CpuBackend::Interp, false)
                    };
                    assert!(
                        !(inline && reference_program),
                        "{name}: the inline reference takes no tile program"
                    );
                    let (got, program) = run(CpuBackend::Jit, false);
                    let what = format!("{math:?} {dt} {name} {shape:?}");
                    // transcendentals take their routines only in fast math
                    let expected = math == MathMode::Fast || !transcendental;
                    assert_eq!(program, expected, "{what}: tile program");
                    let bad: Vec<String> = want
                        .iter()
                        .zip(&got)
                        .enumerate()
                        .filter(|(_, (a, b))| a != b)
                        .take(8)
                        .map(|(i, (a, b))| format!("#{i}: reference {a:#06x}, tiles {b:#06x}"))
                        .collect();
                    assert!(bad.is_empty(), "{what}:\n{}", bad.join("\n"));
                }
            }
        }
    }
    // Kernels that keep the inline tiers: another dtype among the values, a
    // load broadcast along the row, an input that is not contiguous along it,
    // an op without a tile routine.
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    lazyfuse::set_math_mode(MathMode::Fast);
    let narrow = |n: usize, shape: &[usize]| {
        let t = Tensor::from_vec(values(n), shape).unwrap();
        t.to_dtype(DType::F16).unwrap().realize().unwrap()
    };
    let (x, col) = (narrow(4096, &[64, 64]), narrow(64, &[64, 1]));
    let others: [(&str, Tensor); 4] = [
        (
            "float32 among the values",
            x.to_dtype(DType::F32)
                .unwrap()
                .exp()
                .unwrap()
                .to_dtype(DType::F16)
                .unwrap(),
        ),
        ("a column broadcast along the rows", x.mul(&col).unwrap()),
        (
            "a transposed input",
            x.transpose(0, 1).unwrap().add(&x).unwrap(),
        ),
        ("sqrt", x.sqrt().unwrap().add(1.0).unwrap()),
    ];
    for (what, y) in others {
        let clif = y.clif_text().unwrap();
        assert!(!clif.contains("lf_tile_"), "{what}:\n{clif}");
    }
    let clif = x.mul(&x).unwrap().add(1.0).unwrap().clif_text().unwrap();
    // (the add's value only the store reads: its narrowing rounds it)
    for call in [
        "lf_tile_widen_f16",
        "lf_tile_mul_f16",
        "lf_tile_add_f32",
        "lf_narrow_f16",
    ] {
        assert!(clif.contains(call), "{call}:\n{clif}");
    }
}
