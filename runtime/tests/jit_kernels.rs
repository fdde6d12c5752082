//! The Cranelift backend on kernel structure: reductions (every `Accum`, several
//! dtypes, against the interpreter's reduce and arg-reduce nodes), a three-phase
//! softmax, strided/negative-stride/offset indexing, parallel ranges split across
//! calls, loop indices, `DynIndex` in and out of range (status 3), integer division
//! by zero (status 1) and `MIN / -1` (no trap), kernels without parallel dims, and
//! empty dims.

#[path = "support/jit.rs"]
mod jit;

use jit::{assert_same, bytes_of, element, interp, run, run_ranges, Kb};
use lazyfuse_ir::kernel::{Accum, DynIndex, Expr, ExprId, IndexError, LoopKernel, Stage, Status};
use lazyfuse_ir::{ArgReduceOp, BinaryOp, DType, Op, ReduceOp, UnaryOp};
use lazyfuse_runtime::Buffer;

const O0: Stage = Stage::Outer(0);
const O1: Stage = Stage::Outer(1);
const I0: Stage = Stage::Inner(0);

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn i64s(b: &[u8]) -> Vec<i64> {
    b.chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// `out[r] = reduce(x[r, :])` over a `[rows, cols]` input; the result's dtype is
/// `out`.
fn row_reduce(op: Accum, dtype: DType, out: DType, rows: usize, cols: usize) -> LoopKernel {
    let mut kb = Kb::new(&[rows, cols], 1);
    let x = kb.param(dtype, rows * cols, false);
    let o = kb.param(out, rows, true);
    let v = kb.load(x, 0, &[cols as i64, 1], I0);
    let r = kb.push(Expr::Reduce { op, x: v }, out, O1);
    kb.store(o, 0, &[1, 0], r);
    kb.k
}

/// A `[rows, cols]` buffer of `dtype` with NaNs, ties, extremes and ±0 in its rows.
fn reduce_input(dtype: DType, rows: usize, cols: usize) -> Buffer {
    let vals: Vec<f64> = (0..rows * cols)
        .map(|i| {
            let (r, c) = (i / cols, i % cols);
            match (r, c) {
                (1, 2) | (1, 4) => f64::NAN,
                (2, _) => [3.0, -1.0, 3.0, 7.0, 7.0, -0.0][c % 6],
                (3, _) => -0.0,
                (4, 0) => 1e30,
                _ => ((i * 37 + 11) % 23) as f64 - 11.0,
            }
        })
        .collect();
    let ints: Vec<i128> = vals
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if v.is_nan() {
                i64::MIN as i128
            } else if v >= 1e20 {
                i64::MAX as i128 - i as i128
            } else {
                v as i128 * 1_000_003
            }
        })
        .collect();
    let bools: Vec<i128> = ints.iter().map(|&v| i128::from(v % 3 == 0)).collect();
    let is = if dtype == DType::Bool { &bools } else { &ints };
    jit::buffer(dtype, &vals, is)
}

/// The interpreter's node for an accumulator (with its output dtype).
fn reduce_node(op: Accum, dtype: DType) -> (Op, DType) {
    let reduce = |r: ReduceOp| Op::Reduce {
        op: r,
        axes: vec![1],
        keepdim: false,
    };
    let arg = |a: ArgReduceOp| Op::ArgReduce {
        op: a,
        axis: Some(1),
        keepdim: false,
    };
    match op {
        Accum::Sum => (reduce(ReduceOp::Sum), dtype),
        Accum::Prod => (reduce(ReduceOp::Prod), dtype),
        Accum::Max => (reduce(ReduceOp::Amax), dtype),
        Accum::Min => (reduce(ReduceOp::Amin), dtype),
        Accum::ArgMax => (arg(ArgReduceOp::ArgMax), DType::I64),
        Accum::ArgMin => (arg(ArgReduceOp::ArgMin), DType::I64),
        Accum::Any => (reduce(ReduceOp::Any), DType::Bool),
        Accum::All => (reduce(ReduceOp::All), DType::Bool),
    }
}

/// The interpreter's reduction of a `[rows, cols]` input.
fn interp_reduce(op: Op, out: DType, x: &Buffer, rows: usize, cols: usize) -> Buffer {
    let mut g = lazyfuse_ir::Graph::new();
    let i = g.add(
        Op::Input(lazyfuse_ir::InputId(0)),
        x.dtype(),
        vec![rows, cols],
        &[],
    );
    let y = g.add(op, out, vec![rows], &[i]);
    let inputs = std::collections::HashMap::from([(
        lazyfuse_ir::InputId(0),
        std::sync::Arc::new(x.clone()),
    )]);
    let r = lazyfuse_runtime::interp::execute(&g, &inputs, &[y]).expect("interpreter");
    (*r[0]).clone()
}

#[test]
fn every_accumulator_against_the_interpreter() {
    use Accum::*;
    let (rows, cols) = (6, 7);
    let cases: &[(Accum, &[DType])] = &[
        (
            Sum,
            &[DType::I32, DType::I64, DType::U8, DType::F64, DType::F32],
        ),
        (Prod, &[DType::I64, DType::I8, DType::F64]),
        (
            Max,
            &[
                DType::F32,
                DType::F64,
                DType::F16,
                DType::BF16,
                DType::I8,
                DType::U16,
                DType::U64,
            ],
        ),
        (
            Min,
            &[
                DType::F32,
                DType::F64,
                DType::F16,
                DType::I32,
                DType::U64,
                DType::Bool,
            ],
        ),
        (
            ArgMax,
            &[DType::F32, DType::F16, DType::I32, DType::U8, DType::Bool],
        ),
        (ArgMin, &[DType::F64, DType::BF16, DType::I64, DType::U16]),
        (Any, &[DType::Bool]),
        (All, &[DType::Bool]),
    ];
    for &(op, dtypes) in cases {
        for &dt in dtypes {
            let x = reduce_input(dt, rows, cols);
            let (node, out) = reduce_node(op, dt);
            let want = interp_reduce(node, out, &x, rows, cols);
            let k = row_reduce(op, dt, out, rows, cols);
            let got = run(&k, &[bytes_of(&x), vec![0; rows * out.size_in_bytes()]]).unwrap();
            let what = format!("{op:?} of {dt}");
            if matches!(op, Sum | Prod) && dt.is_floating_point() {
                // The interpreter sums with Neumaier's compensation, the kernel in
                // plain float64: equal within a few ulps of float32.
                for r in 0..rows {
                    let (a, b) = (
                        element(out, &bytes_of(&want), r),
                        element(out, &got.bufs[1], r),
                    );
                    assert!(
                        (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-6 * a.abs(),
                        "{what}: row {r}: {a} vs {b}"
                    );
                }
            } else {
                assert_same(out, &bytes_of(&want), &got.bufs[1], &what);
            }
        }
    }
}

#[test]
fn empty_reductions_give_the_identity() {
    for (op, dt, want) in [
        (Accum::Sum, DType::F32, 0f64),
        (Accum::Prod, DType::I32, 1.0),
        (Accum::Any, DType::Bool, 0.0),
        (Accum::All, DType::Bool, 1.0),
    ] {
        let k = row_reduce(op, dt, dt, 3, 0);
        let got = run(&k, &[vec![], vec![0xAB; 3 * dt.size_in_bytes()]]).unwrap();
        for r in 0..3 {
            assert_eq!(element(dt, &got.bufs[1], r), want, "{op:?} {dt}");
        }
    }
}

#[test]
fn empty_parallel_dim_writes_nothing() {
    let mut kb = Kb::new(&[0, 4], 2);
    let o = kb.param(DType::I32, 1, true);
    let c = kb.push(
        Expr::Const(lazyfuse_ir::kernel::Const::Int(7)),
        DType::I32,
        O0,
    );
    kb.store(o, 0, &[0, 0], c);
    let got = run_ranges(&kb.k, &[vec![0; 4]], &[(0, 0)]).unwrap();
    assert_eq!(got.bufs[0], vec![0; 4]);
}

/// x: `[rows, cols]` f32 → softmax over each row in one three-phase kernel.
fn softmax_kernel(rows: usize, cols: usize) -> LoopKernel {
    let mut kb = Kb::new(&[rows, cols], 1);
    let x = kb.param(DType::F32, rows * cols, false);
    let o = kb.param(DType::F32, rows * cols, true);
    let st = [cols as i64, 1];
    let bin = |kb: &mut Kb, op, a, b, s| kb.push(Expr::Binary { op, a, b }, DType::F32, s);
    let x0 = kb.load(x, 0, &st, I0);
    let m = kb.push(
        Expr::Reduce {
            op: Accum::Max,
            x: x0,
        },
        DType::F32,
        O1,
    );
    let x1 = kb.load(x, 0, &st, Stage::Inner(1));
    let d1 = bin(&mut kb, BinaryOp::Sub, x1, m, Stage::Inner(1));
    let e1 = kb.push(
        Expr::Unary {
            op: UnaryOp::Exp,
            x: d1,
        },
        DType::F32,
        Stage::Inner(1),
    );
    let s = kb.push(
        Expr::Reduce {
            op: Accum::Sum,
            x: e1,
        },
        DType::F32,
        Stage::Outer(2),
    );
    let x2 = kb.load(x, 0, &st, Stage::Inner(2));
    let d2 = bin(&mut kb, BinaryOp::Sub, x2, m, Stage::Inner(2));
    let e2 = kb.push(
        Expr::Unary {
            op: UnaryOp::Exp,
            x: d2,
        },
        DType::F32,
        Stage::Inner(2),
    );
    let y = bin(&mut kb, BinaryOp::Div, e2, s, Stage::Inner(2));
    kb.store(o, 0, &st, y);
    kb.k
}

#[test]
fn three_phase_softmax() {
    let (rows, cols) = (5, 9);
    let x: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 29 % 17) as f32 - 8.0) * 0.7)
        .collect();
    let k = softmax_kernel(rows, cols);
    assert_eq!(k.phases(), 3);
    let got = run(&k, &[f32_bytes(&x), vec![0; rows * cols * 4]]).unwrap();
    let y = f32s(&got.bufs[1]);
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let m = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let s: f64 = row.iter().map(|&v| f64::from((v - m).exp())).sum();
        for c in 0..cols {
            let want = (row[c] - m).exp() / s as f32;
            assert!((y[r * cols + c] - want).abs() <= 1e-7, "row {r} col {c}");
        }
        let total: f32 = y[r * cols..(r + 1) * cols].iter().sum();
        assert!((total - 1.0).abs() < 1e-5);
    }
    // The same through the interpreter's softmax node, within float32 rounding.
    let mut g = lazyfuse_ir::Graph::new();
    let i = g.add(
        Op::Input(lazyfuse_ir::InputId(0)),
        DType::F32,
        vec![rows, cols],
        &[],
    );
    let sm = g.add(
        Op::Softmax {
            axis: 1,
            log: false,
        },
        DType::F32,
        vec![rows, cols],
        &[i],
    );
    let inputs = std::collections::HashMap::from([(
        lazyfuse_ir::InputId(0),
        std::sync::Arc::new(Buffer::from_vec(x.clone())),
    )]);
    let want = lazyfuse_runtime::interp::execute(&g, &inputs, &[sm]).unwrap();
    for (a, b) in want[0].as_slice::<f32>().unwrap().iter().zip(&y) {
        assert!((a - b).abs() <= 2e-7, "{a} vs {b}");
    }
}

#[test]
fn strides_negative_strides_and_offsets() {
    // out[i, j] = x[j, i] (transpose) and flip[k] = x[11 - k].
    let x: Vec<f32> = (0..12).map(|v| v as f32).collect();
    let mut kb = Kb::new(&[4, 3], 2);
    let p = kb.param(DType::F32, 12, false);
    let t = kb.param(DType::F32, 12, true);
    let f = kb.param(DType::F32, 12, true);
    let v = kb.load(p, 0, &[1, 4], O0);
    kb.store(t, 0, &[3, 1], v);
    let w = kb.load(p, 11, &[-3, -1], O0);
    kb.store(f, 0, &[3, 1], w);
    let got = run(&kb.k, &[f32_bytes(&x), vec![0; 48], vec![0; 48]]).unwrap();
    let tr = f32s(&got.bufs[1]);
    for i in 0..4 {
        for j in 0..3 {
            assert_eq!(tr[i * 3 + j], x[j * 4 + i]);
        }
    }
    let fl = f32s(&got.bufs[2]);
    assert_eq!(fl, x.iter().rev().cloned().collect::<Vec<_>>());
}

#[test]
fn split_parallel_ranges_equal_one_call() {
    // dims [3, 5, 7], two parallel: out[a, b] = Σ_c x[a, b, c] * (c + 1) + a - b
    let (d0, d1, d2) = (3usize, 5usize, 7usize);
    let mut kb = Kb::new(&[d0, d1, d2], 2);
    let x = kb.param(DType::I64, d0 * d1 * d2, false);
    let o = kb.param(DType::I64, d0 * d1, true);
    let v = kb.load(x, 0, &[(d1 * d2) as i64, d2 as i64, 1], I0);
    let c = kb.push(Expr::LoopIndex { dim: 2 }, DType::I64, I0);
    let one = kb.push(
        Expr::Const(lazyfuse_ir::kernel::Const::Int(1)),
        DType::I64,
        I0,
    );
    let c1 = kb.push(
        Expr::Binary {
            op: BinaryOp::Add,
            a: c,
            b: one,
        },
        DType::I64,
        I0,
    );
    let p = kb.push(
        Expr::Binary {
            op: BinaryOp::Mul,
            a: v,
            b: c1,
        },
        DType::I64,
        I0,
    );
    let s = kb.push(
        Expr::Reduce {
            op: Accum::Sum,
            x: p,
        },
        DType::I64,
        O1,
    );
    let a = kb.push(Expr::LoopIndex { dim: 0 }, DType::I64, O0);
    let b = kb.push(Expr::LoopIndex { dim: 1 }, DType::I64, O0);
    let ab = kb.push(
        Expr::Binary {
            op: BinaryOp::Sub,
            a,
            b,
        },
        DType::I64,
        O0,
    );
    let r = kb.push(
        Expr::Binary {
            op: BinaryOp::Add,
            a: s,
            b: ab,
        },
        DType::I64,
        O1,
    );
    kb.store(o, 0, &[d1 as i64, 1, 0], r);
    let xs: Vec<i64> = (0..(d0 * d1 * d2) as i64).map(|v| v * 3 - 50).collect();
    let xb: Vec<u8> = xs.iter().flat_map(|v| v.to_le_bytes()).collect();
    let whole = run(&kb.k, &[xb.clone(), vec![0; d0 * d1 * 8]]).unwrap();
    let split = run_ranges(
        &kb.k,
        &[xb, vec![0; d0 * d1 * 8]],
        &[(0, 4), (4, 5), (5, 13), (13, 15)],
    )
    .unwrap();
    assert_eq!(whole.bufs[1], split.bufs[1]);
    let out = i64s(&whole.bufs[1]);
    for ia in 0..d0 {
        for ib in 0..d1 {
            let want: i64 = (0..d2)
                .map(|ic| xs[(ia * d1 + ib) * d2 + ic] * (ic as i64 + 1))
                .sum::<i64>()
                + ia as i64
                - ib as i64;
            assert_eq!(out[ia * d1 + ib], want);
        }
    }
}

#[test]
fn kernels_without_parallel_dims() {
    // A full reduction to one value, and a scalar kernel with no dims at all.
    let mut kb = Kb::new(&[6], 0);
    let x = kb.param(DType::I32, 6, false);
    let o = kb.param(DType::I32, 1, true);
    let v = kb.load(x, 0, &[1], I0);
    let m = kb.push(
        Expr::Reduce {
            op: Accum::Max,
            x: v,
        },
        DType::I32,
        O1,
    );
    kb.store(o, 0, &[0], m);
    let xs: Vec<u8> = [3i32, -9, 44, 2, 44, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let got = run(&kb.k, &[xs, vec![0; 4]]).unwrap();
    assert_eq!(i32::from_le_bytes(got.bufs[1][..4].try_into().unwrap()), 44);

    let mut kb = Kb::new(&[], 0);
    let x = kb.param(DType::F64, 1, false);
    let o = kb.param(DType::F64, 1, true);
    let v = kb.load(x, 0, &[], O0);
    let n = kb.push(
        Expr::Unary {
            op: UnaryOp::Neg,
            x: v,
        },
        DType::F64,
        O0,
    );
    kb.store(o, 0, &[], n);
    let got = run(&kb.k, &[2.5f64.to_le_bytes().to_vec(), vec![0; 8]]).unwrap();
    assert_eq!(got.bufs[1], (-2.5f64).to_le_bytes().to_vec());
}

/// `out[i] = table[wrap(idx[i])]` with a `size`-entry table (negative values
/// wrap when `wrap`).
fn gather_k(idx_dtype: DType, n: usize, size: u64, wrap: bool) -> LoopKernel {
    let mut kb = Kb::new(&[n], 1);
    let t = kb.param(DType::F32, size as usize, false);
    let ix = kb.param(idx_dtype, n, false);
    let o = kb.param(DType::F32, n, true);
    let i = kb.load(ix, 0, &[1], O0);
    let v = kb.load_dyn(
        t,
        &[0],
        DynIndex {
            value: i,
            size,
            stride: 1,
            wrap,
            error: IndexError::Take,
        },
        O0,
    );
    kb.store(o, 0, &[1], v);
    kb.k
}

fn gather(idx_dtype: DType, n: usize, size: u64) -> LoopKernel {
    gather_k(idx_dtype, n, size, true)
}

#[test]
fn dynamic_index_without_wrap_refuses_negative_values() {
    let table = f32_bytes(&[10.0, 20.0, 30.0]);
    let idx: Vec<u8> = [2i64, 0, -1, 1]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let k = gather_k(DType::I64, 4, 3, false);
    let got = run(&k, &[table, idx, vec![0; 16]]).unwrap();
    // value, size, and the id of the failing load (expr v1)
    assert_eq!(got.status, [Status::IndexOutOfRange as u64, u64::MAX, 3, 1]);
    assert_eq!(f32s(&got.bufs[2])[..2], [30.0, 10.0]);
}

#[test]
fn dynamic_index_in_and_out_of_range() {
    let table = f32_bytes(&[10.0, 20.0, 30.0]);
    // In range, negative indices wrap.
    let idx: Vec<u8> = [2i64, -1, 0, -3, 1]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let got = run(
        &gather(DType::I64, 5, 3),
        &[table.clone(), idx, vec![0; 20]],
    )
    .unwrap();
    assert_eq!(got.status, [0; 4]);
    assert_eq!(f32s(&got.bufs[2]), vec![30.0, 30.0, 10.0, 10.0, 20.0]);
    // Out of range: status 3 with the first bad value and the size; no load happens.
    let idx: Vec<u8> = [1i32, 3, -4, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let got = run(
        &gather(DType::I32, 4, 3),
        &[table.clone(), idx, vec![0xFF; 16]],
    )
    .unwrap();
    assert_eq!(got.status[0], Status::IndexOutOfRange as u64);
    assert_eq!((got.status[1] as i64, got.status[2]), (3, 3));
    assert_eq!(f32s(&got.bufs[2]), vec![20.0, 0.0, 0.0, 10.0]);
    // Unsigned index values are never negative: 255 as uint8 is out of range.
    let got = run(&gather(DType::U8, 2, 3), &[table, vec![255, 2], vec![0; 8]]).unwrap();
    assert_eq!(got.status[..3], [3, 255, 3]);
    assert_eq!(f32s(&got.bufs[2]), vec![0.0, 30.0]);
    // A uint64 index at or above 2^63 is huge, not negative: no wrap-around.
    let idx: Vec<u8> = [u64::MAX, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let got = run(
        &gather(DType::U64, 2, 3),
        &[f32_bytes(&[1.0, 2.0, 3.0]), idx, vec![0; 8]],
    )
    .unwrap();
    assert_eq!(got.status[..3], [3, u64::MAX, 3]);
    assert_eq!(f32s(&got.bufs[2]), vec![0.0, 1.0]);
}

#[test]
fn one_module_called_from_several_threads() {
    // Disjoint ranges of one kernel on four threads at once, sharing the status
    // block, give what one call gives (the module is Send + Sync).
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<lazyfuse_codegen::cpu::CpuModule>();
    let n = 4000;
    let k = jit::elementwise(&[DType::F32], DType::F32, n, |kb, l: &[ExprId]| {
        kb.push(
            Expr::Unary {
                op: UnaryOp::Sigmoid,
                x: l[0],
            },
            DType::F32,
            O0,
        )
    });
    let x: Vec<f32> = (0..n).map(|i| (i as f32 - 2000.0) * 0.01).collect();
    let whole = run(&k, &[f32_bytes(&x), vec![0; n * 4]]).unwrap();
    let m =
        lazyfuse_codegen::cpu::CpuModule::compile(&[&k], &lazyfuse_runtime::jit_symbols::lookup)
            .unwrap();
    let mut y = vec![0f32; n];
    let status = std::sync::Mutex::new([0u64; 4]);
    let (xp, yp) = (x.as_ptr() as usize, y.as_mut_ptr() as usize);
    let f = m.entry(0);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let status = &status;
            s.spawn(move || {
                let params = [xp as *mut u8, yp as *mut u8];
                let mut st = [0u64; 4];
                let (b, e) = (t * 1000, (t + 1) * 1000);
                // SAFETY: the buffers hold n f32s and outlive the scope; each thread
                // writes only its own range of y; `m` outlives the scope.
                unsafe { f(params.as_ptr(), st.as_mut_ptr(), b, e) };
                status.lock().unwrap()[0] |= st[0];
            });
        }
    });
    assert_eq!(status.into_inner().unwrap(), [0; 4]);
    assert_eq!(f32_bytes(&y), whole.bufs[1]);
}

/// `out = a op b` on `n` elements of `dt`.
fn binary_kernel(op: BinaryOp, dt: DType, n: usize) -> LoopKernel {
    jit::elementwise(&[dt, dt], dt, n, |kb, l: &[ExprId]| {
        kb.push(
            Expr::Binary {
                op,
                a: l[0],
                b: l[1],
            },
            dt,
            O0,
        )
    })
}

#[test]
fn integer_division_by_zero_sets_status_and_min_by_minus_one_wraps() {
    use BinaryOp::*;
    for op in [DivFloor, DivTrunc, Remainder, Fmod] {
        // i32: MIN / -1 wraps (no SIGFPE), 7 / 0 sets status 1.
        let a: Vec<u8> = [i32::MIN, 7, -7]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let b: Vec<u8> = [-1i32, 2, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
        let got = run(
            &binary_kernel(op, DType::I32, 3),
            &[a.clone(), b, vec![0; 12]],
        )
        .unwrap();
        assert_eq!(got.status[0], 0, "{op:?}");
        let want = interp(
            Op::Binary(op),
            DType::I32,
            &[
                Buffer::from_vec(vec![i32::MIN, 7, -7]),
                Buffer::from_vec(vec![-1i32, 2, 2]),
            ],
        )
        .unwrap();
        assert_same(
            DType::I32,
            &bytes_of(&want),
            &got.bufs[2],
            &format!("{op:?}"),
        );
        let b0: Vec<u8> = [-1i32, 0, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
        let got = run(&binary_kernel(op, DType::I32, 3), &[a, b0, vec![0; 12]]).unwrap();
        assert_eq!(got.status[0], Status::ZeroDivision as u64, "{op:?}");
        // The interpreter refuses the same data.
        assert!(interp(
            Op::Binary(op),
            DType::I32,
            &[Buffer::from_vec(vec![1i32]), Buffer::from_vec(vec![0i32])]
        )
        .is_err());
        // i8 and i64 minimums too.
        let got = run(
            &binary_kernel(op, DType::I8, 1),
            &[vec![0x80], vec![0xFF], vec![0]],
        )
        .unwrap();
        assert_eq!(got.status[0], 0);
        let got = run(
            &binary_kernel(op, DType::I64, 1),
            &[
                i64::MIN.to_le_bytes().to_vec(),
                (-1i64).to_le_bytes().to_vec(),
                vec![0; 8],
            ],
        )
        .unwrap();
        assert_eq!(got.status[0], 0);
        let want = if matches!(op, DivFloor | DivTrunc) {
            i64::MIN
        } else {
            0
        };
        assert_eq!(i64s(&got.bufs[2]), vec![want]);
    }
}

#[test]
fn the_first_status_wins() {
    // Two zero divisors and then an out-of-range index: the status stays 1.
    let mut kb = Kb::new(&[3], 1);
    let a = kb.param(DType::I64, 3, false);
    let t = kb.param(DType::I64, 2, false);
    let o = kb.param(DType::I64, 3, true);
    let x = kb.load(a, 0, &[1], O0);
    let q = kb.push(
        Expr::Binary {
            op: BinaryOp::DivTrunc,
            a: x,
            b: x,
        },
        DType::I64,
        O0,
    );
    let g = kb.load_dyn(
        t,
        &[0],
        DynIndex {
            value: x,
            size: 2,
            stride: 1,
            wrap: true,
            error: IndexError::Take,
        },
        O0,
    );
    let s = kb.push(
        Expr::Binary {
            op: BinaryOp::Add,
            a: q,
            b: g,
        },
        DType::I64,
        O0,
    );
    kb.store(o, 0, &[1], s);
    let xs: Vec<u8> = [0i64, 1, 5].iter().flat_map(|v| v.to_le_bytes()).collect();
    let ts: Vec<u8> = [4i64, 6].iter().flat_map(|v| v.to_le_bytes()).collect();
    let got = run(&kb.k, &[xs, ts, vec![0; 24]]).unwrap();
    assert_eq!(got.status[0], Status::ZeroDivision as u64);
    assert_eq!(i64s(&got.bufs[2])[1], 1 + 6);
}

#[test]
fn stores_inside_a_phase_and_loop_indices() {
    // out[r, c] = 2 * x[r, c] (stored inside the reduction loop) and
    // idx[r] = argmax_c x[r, c] as int64, plus pos[r, c] = r * 10 + c as int32.
    let (rows, cols) = (3, 4);
    let mut kb = Kb::new(&[rows, cols], 1);
    let x = kb.param(DType::F32, rows * cols, false);
    let o = kb.param(DType::F32, rows * cols, true);
    let ai = kb.param(DType::I64, rows, true);
    let ps = kb.param(DType::I32, rows * cols, true);
    let v = kb.load(x, 0, &[cols as i64, 1], I0);
    let d = kb.push(
        Expr::Binary {
            op: BinaryOp::Add,
            a: v,
            b: v,
        },
        DType::F32,
        I0,
    );
    kb.store(o, 0, &[cols as i64, 1], d);
    let am = kb.push(
        Expr::Reduce {
            op: Accum::ArgMax,
            x: v,
        },
        DType::I64,
        O1,
    );
    kb.store(ai, 0, &[1, 0], am);
    let r = kb.push(Expr::LoopIndex { dim: 0 }, DType::I32, O0);
    let c = kb.push(Expr::LoopIndex { dim: 1 }, DType::I32, I0);
    let ten = kb.push(
        Expr::Const(lazyfuse_ir::kernel::Const::Int(10)),
        DType::I32,
        O0,
    );
    let r10 = kb.push(
        Expr::Binary {
            op: BinaryOp::Mul,
            a: r,
            b: ten,
        },
        DType::I32,
        O0,
    );
    let p = kb.push(
        Expr::Binary {
            op: BinaryOp::Add,
            a: r10,
            b: c,
        },
        DType::I32,
        I0,
    );
    kb.store(ps, 0, &[cols as i64, 1], p);
    let xs = [
        1.0f32,
        5.0,
        5.0,
        -1.0,
        f32::NAN,
        2.0,
        f32::NAN,
        9.0,
        -3.0,
        -2.0,
        -2.5,
        -2.0,
    ];
    let got = run(
        &kb.k,
        &[f32_bytes(&xs), vec![0; 48], vec![0; 24], vec![0; 48]],
    )
    .unwrap();
    let doubled = f32s(&got.bufs[1]);
    for (a, b) in xs.iter().zip(&doubled) {
        assert!((a.is_nan() && b.is_nan()) || a * 2.0 == *b);
    }
    assert_eq!(i64s(&got.bufs[2]), vec![1, 0, 1]);
    let pos: Vec<i32> = got.bufs[3]
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(pos, vec![0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23]);
}

#[test]
fn unknown_symbols_are_errors() {
    let k = jit::elementwise(&[DType::F32], DType::F32, 2, |kb, l: &[ExprId]| {
        kb.push(
            Expr::Unary {
                op: UnaryOp::Tanh,
                x: l[0],
            },
            DType::F32,
            O0,
        )
    });
    let e = lazyfuse_codegen::cpu::CpuModule::compile(&[&k], &|_| None).unwrap_err();
    assert!(e.to_string().contains("lf_tanh_f32"), "{e}");
}

#[test]
fn outer_stages_past_the_last_phase_run() {
    // No reduction at all, but a value staged at Outer(1): it is still computed.
    let mut kb = Kb::new(&[3], 1);
    let x = kb.param(DType::I32, 3, false);
    let o = kb.param(DType::I32, 3, true);
    let v = kb.load(x, 0, &[1], O0);
    let n = kb.push(
        Expr::Unary {
            op: UnaryOp::Neg,
            x: v,
        },
        DType::I32,
        O1,
    );
    kb.store(o, 0, &[1], n);
    let xs: Vec<u8> = [1i32, -2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
    let got = run(&kb.k, &[xs, vec![0; 12]]).unwrap();
    let want: Vec<u8> = [-1i32, 2, -3]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(got.bufs[1], want);
}

/// A kernel of one parallel dim runs its range as one row (no loop over rows):
/// empty ranges at the start, inside and at the end write nothing, and ranges
/// that cut the vector loop and its tail anywhere write exactly their points.
#[test]
fn one_parallel_dim_runs_any_range_as_one_row() {
    let n = 37usize;
    let mut kb = Kb::new(&[n], 1);
    let x = kb.param(DType::F32, n, false);
    let o = kb.param(DType::F32, n, true);
    let xv = kb.load(x, 0, &[1], O0);
    let y = kb.push(
        Expr::Unary {
            op: UnaryOp::Neg,
            x: xv,
        },
        DType::F32,
        O0,
    );
    kb.store(o, 0, &[1], y);
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
    let sentinel = f32::from_bits(0x7fc0_0abc);
    let bufs = [f32_bytes(&xs), f32_bytes(&vec![sentinel; n])];
    let split = [(0, 0), (0, 5), (5, 5), (5, 6), (6, 33), (33, 37), (37, 37)];
    let got = f32s(&run_ranges(&kb.k, &bufs, &split).unwrap().bufs[1]);
    let want: Vec<f32> = xs.iter().map(|v| -v).collect();
    assert_eq!(got, want);
    let part = f32s(&run_ranges(&kb.k, &bufs, &[(3, 3), (10, 21)]).unwrap().bufs[1]);
    for (i, v) in part.iter().enumerate() {
        if (10..21).contains(&i) {
            assert_eq!(*v, want[i], "point {i}");
        } else {
            assert_eq!(
                v.to_bits(),
                sentinel.to_bits(),
                "point {i} is outside the ranges"
            );
        }
    }
}

#[test]
fn vector_loop_with_a_broadcast_row_and_split_ranges() {
    // out[r, c] = max(x[r, c], b[c]) * 2 over [3, 10]: the vector loop (f32x4), its
    // tail, a stride-0 load along rows, and ranges that cut rows in the middle.
    let (rows, cols) = (3usize, 10usize);
    let mut kb = Kb::new(&[rows, cols], 2);
    let x = kb.param(DType::F32, rows * cols, false);
    let b = kb.param(DType::F32, cols, false);
    let o = kb.param(DType::F32, rows * cols, true);
    let xv = kb.load(x, 0, &[cols as i64, 1], O0);
    let bv = kb.load(b, 0, &[0, 1], O0);
    let m = kb.push(
        Expr::Binary {
            op: BinaryOp::Maximum,
            a: xv,
            b: bv,
        },
        DType::F32,
        O0,
    );
    let two = kb.push(
        Expr::Const(lazyfuse_ir::kernel::Const::Float(2.0)),
        DType::F32,
        O0,
    );
    let y = kb.push(
        Expr::Binary {
            op: BinaryOp::Mul,
            a: m,
            b: two,
        },
        DType::F32,
        O0,
    );
    kb.store(o, 0, &[cols as i64, 1], y);
    assert!(
        lazyfuse_codegen::cpu::clif_text(&kb.k, lazyfuse_ir::kernel::MathMode::Fast)
            .unwrap()
            .contains("f32x4")
    );
    let xs: Vec<f32> = (0..rows * cols).map(|i| (i as f32 - 13.0) * 0.5).collect();
    let mut bs: Vec<f32> = (0..cols).map(|i| i as f32 - 4.0).collect();
    bs[3] = f32::NAN;
    let bufs = [f32_bytes(&xs), f32_bytes(&bs), vec![0; rows * cols * 4]];
    let whole = run(&kb.k, &bufs).unwrap();
    let split = run_ranges(&kb.k, &bufs, &[(0, 7), (7, 8), (8, 23), (23, 30)]).unwrap();
    assert_eq!(whole.bufs[2], split.bufs[2]);
    let got = f32s(&whole.bufs[2]);
    for r in 0..rows {
        for c in 0..cols {
            let (a, bb) = (xs[r * cols + c], bs[c]);
            let want = if bb.is_nan() {
                f32::NAN
            } else {
                a.max(bb) * 2.0
            };
            let g = got[r * cols + c];
            assert!((want.is_nan() && g.is_nan()) || want == g, "[{r}, {c}]");
        }
    }
}
