//! Tile programs (`vtiles`): float16 and bfloat16 elementwise kernels whose
//! values are all of their one dtype run as routine calls over tiles of the
//! dtype's codes. Against the reference interpreter, bit for bit, in both
//! math modes (the fast-math transcendentals, which are the JIT's own forms,
//! against its inline code), every tile op and routine: rows shorter than, as
//! long as and longer than a tile (512 points), ranges that the threads split
//! inside a row, constants that the dtype rounds, values that overflow,
//! underflow and NaNs; and which kernels take a program.
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
    let chains: [(&str, Chain, bool); 10] = [
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
        (
            "arithmetic on the grid",
            |a, b, c| {
                let y = a.sub(b).unwrap().div(c).unwrap().mul(0.125).unwrap();
                y.maximum(&a.neg().unwrap())
                    .unwrap()
                    .minimum(&b.abs().unwrap())
                    .unwrap()
                    .relu()
                    .unwrap()
            },
            false,
        ),
        (
            "transcendentals on the grid",
            |a, b, c| {
                let e = a.mul(0.0078125).unwrap().exp().unwrap();
                let s = a.mul(b).unwrap().add(0.25).unwrap().sigmoid().unwrap();
                let g = b.gelu(lazyfuse::GeluApproximate::None).unwrap();
                let t = c.gelu(lazyfuse::GeluApproximate::Tanh).unwrap();
                let y = e.add(&c.silu().unwrap()).unwrap().log().unwrap();
                y.sub(&s)
                    .unwrap()
                    .add(&g)
                    .unwrap()
                    .mul(&t)
                    .unwrap()
                    .erf()
                    .unwrap()
            },
            true,
        ),
        (
            "every other routine",
            |a, b, c| {
                let x = a.sin().unwrap().add(&b.cos().unwrap()).unwrap();
                let x = x.add(&c.mul(0.5).unwrap().tan().unwrap()).unwrap();
                let x = x.mul(&a.atan().unwrap()).unwrap();
                let x = x
                    .add(&b.sinh().unwrap().sub(&c.cosh().unwrap()).unwrap())
                    .unwrap();
                let x = x.add(&a.expm1().unwrap()).unwrap();
                x.sub(&b.abs().unwrap().log1p().unwrap())
                    .unwrap()
                    .tanh()
                    .unwrap()
            },
            true,
        ),
        (
            "activations and logarithms",
            |a, b, c| {
                let x = a
                    .softplus(1.0, 20.0)
                    .unwrap()
                    .add(&b.elu(1.0).unwrap())
                    .unwrap();
                let x = x.sub(&c.mish().unwrap()).unwrap();
                let x = x.add(&a.abs().unwrap().log2().unwrap()).unwrap();
                x.mul(&b.abs().unwrap().log10().unwrap()).unwrap()
            },
            true,
        ),
    ];
    for math in [MathMode::Fast, MathMode::Exact] {
        lazyfuse::set_math_mode(math);
        for dt in [DType::F16, DType::BF16] {
            for shape in [
                vec![33],
                vec![7, 255],
                vec![3, 512],
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
                        let program = out.clif_text().unwrap().contains("lf_ctile_");
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
        assert!(!clif.contains("lf_ctile_"), "{what}:\n{clif}");
    }
    // The codes read where they lie, the stored op into the output: no
    // widening, narrowing or copying.
    let clif = x.mul(&x).unwrap().add(0.1).unwrap().clif_text().unwrap();
    for call in ["lf_ctile_mul_f16", "lf_ctile_add_f16"] {
        assert!(clif.contains(call), "{call}:\n{clif}");
    }
    for absent in ["lf_widen_", "lf_narrow_", "lf_ctile_copy", "lf_run_"] {
        assert!(!clif.contains(absent), "{absent}:\n{clif}");
    }
    // Two outputs, one an operand of the other: the first op's codes go into
    // its output's run, where the second reads them.
    let pair = |b: CpuBackend| {
        lazyfuse::set_cpu_backend(b);
        let m = x.mul(&x).unwrap();
        let y = m.add(1.0).unwrap();
        lazyfuse::realize_all(&[&m, &y]).unwrap();
        (codes(&m), codes(&y))
    };
    assert_eq!(pair(CpuBackend::Jit), pair(CpuBackend::Interp));
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
}
