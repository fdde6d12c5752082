//! The JIT's row loop (the innermost parallel dim runs as a row; outer dims advance
//! once per row) at its edges: thread ranges that start and end mid-row (sizes large
//! enough for the pool to split them, rows that do not divide the split), rows
//! shorter than a vector, 3-d and 4-d kernels, broadcasts (stride 0), flips
//! (negative strides) and permutes, on every vector tier (single dtype, mixed
//! dtypes, scalar). Exact math: every value must equal the interpreter's bit for bit.

use lazyfuse::{CpuBackend, DType, MathMode, Tensor};
use std::sync::Mutex;

static BACKEND: Mutex<()> = Mutex::new(());

fn data(n: usize, seed: f32) -> Vec<f32> {
    (0..n)
        .map(|i| (i as f32 * 0.37 + seed).sin() * 3.0)
        .collect()
}

/// `values` as a realized tensor of `shape` in `dtype`.
fn realized_as(values: Vec<f32>, shape: &[usize], dtype: DType) -> Tensor {
    let t = Tensor::from_vec(values, shape).unwrap();
    t.to_dtype(dtype).unwrap().realize().unwrap()
}

/// A tensor's values, as float64.
fn f64s(t: &Tensor) -> Vec<f64> {
    t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

/// Rows of every length 1..=40 (every remainder of the interleaved tier's 16
/// float32 or 8 float64 points) and `more` shapes.
fn row_shapes(more: &[(usize, usize, usize)]) -> Vec<(usize, usize, usize)> {
    (1..=40)
        .map(|c| (1, 1, c))
        .chain(more.iter().copied())
        .collect()
}

/// `f` realized on the interpreter and on the JIT (exact math): equal bits.
fn same(what: &str, f: &dyn Fn() -> Tensor) {
    let _g = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Exact);
    lazyfuse::set_cpu_backend(CpuBackend::Interp);
    // Realized in their own dtype first: a cast to float64 fused into the kernel
    // would keep it off the single-dtype vector tier.
    let want = f().realize().unwrap();
    let want = f64s(&want);
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    let got = f().realize().unwrap();
    let got = f64s(&got);
    lazyfuse::set_math_mode(MathMode::Fast);
    same_bits(what, ("interpreter", &want), ("JIT", &got));
}

/// Asserts two labelled value lists equal bit for bit (any NaN matching any NaN).
fn same_bits(what: &str, (wl, want): (&str, &[f64]), (gl, got): (&str, &[f64])) {
    assert_eq!(want.len(), got.len(), "{what}");
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        assert!(
            w.to_bits() == g.to_bits() || (w.is_nan() && g.is_nan()),
            "{what}: element {i}: {wl} {w}, {gl} {g}"
        );
    }
}

#[test]
fn rows_split_across_threads_mid_row() {
    // 3 × 7 × 4099 = 86k points: more than one chunk, and 4099 divides nothing.
    for &(a, b, c) in &[
        (3usize, 7usize, 4099usize),
        (2, 3, 13),
        (5, 1, 3),
        (1, 1, 70001),
    ] {
        let n = a * b * c;
        let x = Tensor::from_vec(data(n, 0.1), &[a, b, c]).unwrap();
        let row = Tensor::from_vec(data(c, 0.2), &[1, 1, c]).unwrap();
        let col = Tensor::from_vec(data(a * b, 0.3), &[a, b, 1]).unwrap();
        same(&format!("broadcasts [{a},{b},{c}]"), &|| {
            x.add(&row).unwrap().mul(&col).unwrap()
        });
        same(&format!("flip of the row dim [{a},{b},{c}]"), &|| {
            x.flip(&[2]).unwrap().sub(&row).unwrap().relu().unwrap()
        });
        same(&format!("permute [{a},{b},{c}]"), &|| {
            x.permute(&[2, 0, 1])
                .unwrap()
                .mul(2.0)
                .unwrap()
                .contiguous()
                .unwrap()
        });
        let ints =
            Tensor::from_vec((0..n as i32).map(|v| v % 1001 - 500).collect(), &[a, b, c]).unwrap();
        let halves = x.to_dtype(DType::F16).unwrap().realize().unwrap();
        same(&format!("mixed dtypes [{a},{b},{c}]"), &|| {
            ints.mul(0.5).unwrap().add(&halves).unwrap()
        });
        same(&format!("scalar tier (int64) [{a},{b},{c}]"), &|| {
            ints.to_dtype(DType::I64)
                .unwrap()
                .mul(&ints)
                .unwrap()
                .add(7)
                .unwrap()
        });
    }
}

#[test]
fn four_dims_and_short_rows() {
    for &shape in &[
        [2usize, 3, 5, 3],
        [4, 1, 2, 1],
        [3, 4, 6, 9],
        [33, 17, 9, 7],
    ] {
        let n: usize = shape.iter().product();
        let x = Tensor::from_vec(data(n, 0.4), &shape).unwrap();
        same(&format!("4-d exp·x {shape:?}"), &|| {
            x.exp().unwrap().mul(&x).unwrap()
        });
        same(&format!("4-d transpose {shape:?}"), &|| {
            x.transpose(1, 3)
                .unwrap()
                .add(1.0)
                .unwrap()
                .contiguous()
                .unwrap()
        });
        same(&format!("4-d flip {shape:?}"), &|| {
            x.flip(&[0, 3]).unwrap().maximum(&x).unwrap()
        });
    }
}

/// Values that only the outer dims move (a layernorm's `1 / sqrt(var + eps)`,
/// a column factor) are computed once per row and splat into the vector loop
/// (`row_invariant` in the codegen). Exact math: the interpreter's bits, in
/// float32 and float64, also from ranges that start mid-row. Fast math: the
/// same bits as realizing the per-row value first (its own kernel computes it
/// with the same code), so hoisting changes no value.
#[test]
fn row_invariant_values_are_hoisted_without_changing_values() {
    for &(a, b, c) in &[(3usize, 7usize, 4099usize), (4, 2, 5), (1, 3, 70001)] {
        let n = a * b * c;
        for dt in [DType::F32, DType::F64] {
            let x = Tensor::from_vec(data(n, 0.1), &[a, b, c])
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let col = Tensor::from_vec(data(a * b, 0.3), &[a, b, 1])
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let row = Tensor::from_vec(data(c, 0.2), &[c])
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let per_row = |col: &Tensor| {
                let v = col.abs().unwrap().add(1e-5).unwrap().sqrt().unwrap();
                v.add(&col.exp().unwrap()).unwrap()
            };
            // realized in its own dtype: a cast to float64 fused into the kernel
            // (by the comparison's `to_dtype`) would leave the single-dtype
            // vector path that hoists
            let layer = |s: &Tensor| {
                let y = x.sub(&col).unwrap().div(s).unwrap().mul(&row).unwrap();
                y.realize().unwrap()
            };
            // (exact math vectorizes sqrt and div, not exp)
            same(&format!("hoisted [{a},{b},{c}] {dt}"), &|| {
                layer(&col.abs().unwrap().add(1e-5).unwrap().sqrt().unwrap())
            });

            let _g = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
            lazyfuse::set_math_mode(MathMode::Fast);
            lazyfuse::set_cpu_backend(CpuBackend::Jit);
            let fused = layer(&per_row(&col));
            let s = per_row(&col);
            s.realize().unwrap();
            let apart = layer(&s);
            let (fused, apart) = (f64s(&fused), f64s(&apart));
            same_bits(
                &format!("fast [{a},{b},{c}] {dt}"),
                ("fused", &fused),
                ("realized apart", &apart),
            );
        }
    }
}

/// The ops that compute hoisted row values run once per row, in the row's first
/// block: a layernorm's `sqrt(var + eps)` is not in the vector loop. Without the
/// stack-slot anchor (`row_loop_values`), Cranelift's optimizer placed them at
/// their uses, inside the loop.
#[test]
fn hoisted_row_values_leave_the_vector_loop() {
    let _g = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    let (rows, cols) = (8usize, 1027usize);
    let x = Tensor::from_vec(data(rows * cols, 0.1), &[rows, cols]).unwrap();
    let var = Tensor::from_vec(data(rows, 0.4), &[rows, 1])
        .unwrap()
        .abs()
        .unwrap()
        .realize()
        .unwrap();
    let mean = Tensor::from_vec(data(rows, 0.5), &[rows, 1]).unwrap();
    let weight = Tensor::from_vec(data(cols, 0.6), &[cols]).unwrap();
    let bias = Tensor::from_vec(data(cols, 0.7), &[cols]).unwrap();
    let y = x
        .sub(&mean)
        .unwrap()
        .div(&var.add(1e-5).unwrap().sqrt().unwrap())
        .unwrap()
        .mul(&weight)
        .unwrap()
        .add(&bias)
        .unwrap();
    for math in [MathMode::Fast, MathMode::Exact] {
        lazyfuse::set_math_mode(math);
        let asm = y.asm_text();
        lazyfuse::set_math_mode(MathMode::Fast);
        let asm = asm.unwrap();
        // The vector loop: the machine-code blocks that store a whole vector
        // (`movups %xmm…, (…)`).
        let blocks: Vec<&str> = asm.split("\nblock").collect();
        let vector_loops: Vec<&&str> = blocks
            .iter()
            .filter(|b| {
                b.lines()
                    .any(|l| l.contains("movups %xmm") && l.contains(", ("))
            })
            .collect();
        assert!(!vector_loops.is_empty(), "{math:?}: no vector loop:\n{asm}");
        for b in vector_loops {
            assert!(
                !b.contains("sqrt"),
                "{math:?}: sqrt in the vector loop:\n{b}"
            );
        }
        assert!(asm.contains("sqrt"), "{math:?}: no sqrt at all:\n{asm}");
    }
}

/// The interleaved vector tier (`Tier::Interleaved` in the codegen: four vectors per
/// step, computed expression by expression, for elementwise kernels with two or
/// more expensive ops) on rows that end in every remainder of its 16 float32 or 8
/// float64 points, with broadcasts and mid-row thread ranges. Exact math (which
/// vectorizes sqrt): the interpreter's bits.
#[test]
fn interleaved_blocks_match_the_interpreter_in_exact_math() {
    for (a, b, c) in row_shapes(&[(3, 7, 37), (2, 3, 13), (1, 1, 70001), (3, 5, 4099)]) {
        let n = a * b * c;
        for dt in [DType::F32, DType::F64] {
            let x = realized_as(data(n, 0.1), &[a, b, c], dt);
            let row = realized_as(data(c, 0.2), &[c], dt);
            same(&format!("two sqrts [{a},{b},{c}] {dt}"), &|| {
                let s = x.abs().unwrap().sqrt().unwrap().add(&row).unwrap();
                s.abs().unwrap().sqrt().unwrap().mul(&x).unwrap()
            });
        }
    }
}

/// A chain of transcendentals (W9's kind) in fast math: one kernel on the
/// interleaved tier gives the same bits as realizing each op apart (each its own
/// kernel on the one-vector tier, with the same inline vector math per lane and
/// the same scalar code in the tails). The chain has no product for fast math to
/// contract into an `fma` across ops.
#[test]
fn interleaved_chains_keep_each_ops_bits_in_fast_math() {
    let _g = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    for (a, b, c) in row_shapes(&[(3, 7, 37), (1, 1, 70001), (3, 5, 4099)]) {
        let n = a * b * c;
        for dt in [DType::F32, DType::F64] {
            let x = realized_as(data(n, 0.1), &[a, b, c], dt);
            let steps: [fn(&Tensor, &Tensor) -> Tensor; 5] = [
                |v, _| v.abs().unwrap().sqrt().unwrap(),
                |v, _| v.exp().unwrap(),
                |v, x| v.add(&x.abs().unwrap()).unwrap().log().unwrap(),
                |v, _| v.tanh().unwrap(),
                |v, x| v.sigmoid().unwrap().add(x).unwrap(),
            ];
            let fused = steps.iter().fold(x.clone(), |v, step| step(&v, &x));
            assert_eq!(fused.kernel_count().unwrap(), 1, "the chain is one kernel");
            let fused = fused.realize().unwrap();
            let apart = steps
                .iter()
                .fold(x.clone(), |v, step| step(&v, &x).realize().unwrap());
            let (fused, apart) = (f64s(&fused), f64s(&apart));
            same_bits(
                &format!("chain [{a},{b},{c}] {dt}"),
                ("fused", &fused),
                ("apart", &apart),
            );
        }
    }
}

/// The interleaved tier's machine code runs the four vectors' chains side by
/// side: in the block that stores four vectors, all four `sqrt`s come before
/// the first instruction of an `exp2` (its `vpslld` that builds 2^n). Without
/// the anchors (`Lower::anchor` in `vector_points`), Cranelift placed each
/// vector's whole chain before the next one's. (`exp2` has no routine: an
/// `exp` would be left to a routine chain's pass, `vchain`.)
#[test]
fn interleaved_chains_run_side_by_side() {
    let _g = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    let x = Tensor::from_vec(data(1000, 0.1), &[1000]).unwrap();
    let y = x
        .abs()
        .unwrap()
        .sqrt()
        .unwrap()
        .exp2()
        .unwrap()
        .add(&x)
        .unwrap();
    let asm = y.asm_text().unwrap();
    let vector_stores = |b: &str| {
        b.lines()
            .filter(|l| l.contains("movups %xmm") && l.contains("(%r") && !l.contains("rsp"))
            .count()
    };
    let blocks: Vec<&str> = asm.split("\nblock").collect();
    let interleaved: Vec<&&str> = blocks.iter().filter(|b| vector_stores(b) == 4).collect();
    assert_eq!(interleaved.len(), 1, "no block stores four vectors:\n{asm}");
    let lines: Vec<&str> = interleaved[0].lines().collect();
    let sqrts: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains("sqrtps"))
        .collect();
    let first_exp = lines.iter().position(|l| l.contains("pslld"));
    assert_eq!(sqrts.len(), 4, "{}", interleaved[0]);
    assert!(
        first_exp.is_some_and(|e| sqrts[3] < e),
        "the chains run one after another:\n{}",
        interleaved[0]
    );
}

/// Kernels of cheap ops over 64K points or more, in rows of 64 or more, take
/// the interleaved tier too (a block that stores four vectors), and smaller
/// ones or shorter rows keep the one-vector loop; on the tier, every dtype's
/// ops (arithmetic, compares, `where`, integers) give the interpreter's bits
/// on rows with every kind of remainder.
#[test]
fn long_loops_of_cheap_ops_interleave() {
    let four_stores = |t: &Tensor| {
        let asm = t.asm_text().unwrap();
        asm.split("\nblock").any(|b| {
            b.lines()
                .filter(|l| l.contains("movups %xmm") && l.contains("(%r") && !l.contains("rsp"))
                .count()
                == 4
        })
    };
    let w2 = |rows: usize, cols: usize| {
        let x = Tensor::from_vec(data(rows * cols, 0.1), &[rows, cols]).unwrap();
        let row = Tensor::from_vec(data(cols, 0.2), &[1, cols]).unwrap();
        let col = Tensor::from_vec(data(rows, 0.3), &[rows, 1]).unwrap();
        x.add(&row).unwrap().mul(&col).unwrap()
    };
    {
        let _g = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
        lazyfuse::set_cpu_backend(CpuBackend::Jit);
        assert!(four_stores(&w2(300, 256)), "76800 points in rows of 256");
        assert!(!four_stores(&w2(255, 256)), "65280 points");
        assert!(!four_stores(&w2(2000, 63)), "rows of 63");
    }
    for (rows, cols) in [(1100usize, 67usize), (17, 4099), (1, 70001)] {
        let n = rows * cols;
        for dt in [DType::F32, DType::F64, DType::I32, DType::I64] {
            let x = realized_as(data(n, 0.1), &[rows, cols], dt);
            let row = realized_as(data(cols, 0.2), &[1, cols], dt);
            let col = realized_as(data(rows, 0.3), &[rows, 1], dt);
            same(&format!("(x + row) * col [{rows},{cols}] {dt}"), &|| {
                x.add(&row).unwrap().mul(&col).unwrap()
            });
            same(
                &format!("where(x > row, x, col) [{rows},{cols}] {dt}"),
                &|| Tensor::where_cond(&x.gt(&row).unwrap(), &x, &col).unwrap(),
            );
            same(&format!("x >= row [{rows},{cols}] {dt}"), &|| {
                x.ge(&row).unwrap()
            });
        }
    }
}
