//! Random elementwise DAGs (unary, binary, compare + where, casts through another
//! dtype, reused subexpressions, two outputs) built twice: as a graph run by the
//! interpreter and as one fused loop kernel compiled by `CpuModule`. The results
//! must agree bit for bit (any NaN equals any NaN), which checks that the fused code
//! evaluates each node once, in order, and rounds float16/bfloat16 after every op.

#[path = "support/jit.rs"]
mod jit;

use jit::{assert_same, buffer, bytes_of, run_ranges, Kb};
use lazyfuse_ir::kernel::{Expr, ExprId, Stage};
use lazyfuse_ir::{BinaryOp, DType, Graph, InputId, NodeId, Op, UnaryOp};
use lazyfuse_runtime::interp::execute;
use std::collections::HashMap;
use std::sync::Arc;

/// xorshift64*: a tiny deterministic generator (seeds are the test's case numbers).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())]
    }
}

/// One random case: returns a description for failure messages.
fn case(seed: u64) {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let dtypes = [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::I8,
    ];
    // Half the cases use only ops with lane-wise instructions on f32/f64/i32 over a
    // 2-D space, so that the vector loop (and its tail, and rows shorter than a
    // vector) runs; the others mix everything over one dim.
    let vector = rng.below(2) == 0;
    let dt = if vector {
        rng.pick(&[DType::F32, DType::F64, DType::I32])
    } else {
        rng.pick(&dtypes)
    };
    let float = dt.is_floating_point();
    let (rows, cols) = if vector {
        (1 + rng.below(4), 1 + rng.below(13))
    } else {
        (1, 1 + rng.below(17))
    };
    let n = rows * cols;
    let st = [cols as i64, 1];
    let mut g = Graph::new();
    let mut kb = Kb::new(&[rows, cols], 2);
    let mut inputs = HashMap::new();
    let mut bufs = vec![];
    // (graph node, kernel expr) of every value of dtype `dt`.
    let mut vals: Vec<(NodeId, ExprId)> = vec![];
    let o = Stage::Outer(0);
    for i in 0..1 + rng.below(3) {
        let fs: Vec<f64> = (0..n)
            .map(|_| {
                rng.pick(&[
                    0.0,
                    -0.0,
                    1.0,
                    -1.5,
                    2.5,
                    0.1,
                    1e-3,
                    300.0,
                    -7.25,
                    f64::NAN,
                    f64::INFINITY,
                    1e-40,
                ])
            })
            .collect();
        let is: Vec<i128> = (0..n)
            .map(|_| rng.pick(&[0, 1, -1, 3, -7, 100, 127, -128, 1 << 20, i64::MIN as i128]))
            .collect();
        let b = buffer(dt, &fs, &is);
        let id = InputId(i as u64);
        let node = g.add(Op::Input(id), dt, vec![n], &[]);
        bufs.push(bytes_of(&b));
        inputs.insert(id, Arc::new(b));
        let p = kb.param(dt, n, false);
        let e = kb.load(p, 0, &st, o);
        vals.push((node, e));
    }
    let float_unary = [
        UnaryOp::Neg,
        UnaryOp::Abs,
        UnaryOp::Exp,
        UnaryOp::Tanh,
        UnaryOp::Sigmoid,
        UnaryOp::Sqrt,
        UnaryOp::Floor,
        UnaryOp::Square,
        UnaryOp::Relu,
        UnaryOp::Log1p,
    ];
    let int_unary = [
        UnaryOp::Neg,
        UnaryOp::Abs,
        UnaryOp::Square,
        UnaryOp::BitwiseNot,
        UnaryOp::Relu,
        UnaryOp::Sign,
    ];
    let float_binary = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
        BinaryOp::Pow,
        BinaryOp::Atan2,
        BinaryOp::Remainder,
    ];
    let int_binary = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
        BinaryOp::BitwiseAnd,
        BinaryOp::BitwiseXor,
    ];
    let vector_unary: &[UnaryOp] = if float {
        &[
            UnaryOp::Neg,
            UnaryOp::Abs,
            UnaryOp::Sqrt,
            UnaryOp::Floor,
            UnaryOp::Square,
            UnaryOp::Relu,
        ]
    } else {
        &[
            UnaryOp::Neg,
            UnaryOp::Abs,
            UnaryOp::Square,
            UnaryOp::BitwiseNot,
        ]
    };
    let vector_binary: &[BinaryOp] = if float {
        &float_binary[..6]
    } else {
        &int_binary
    };
    let mut log = vec![];
    for _ in 0..1 + rng.below(8) {
        let (a, b) = (rng.pick(&vals), rng.pick(&vals));
        let next = match rng.below(if vector { 2 } else { 4 }) {
            0 => {
                let op = if vector {
                    rng.pick(vector_unary)
                } else {
                    rng.pick(if float { &float_unary } else { &int_unary })
                };
                log.push(format!("{op:?}"));
                let node = g.add(Op::Unary(op), dt, vec![n], &[a.0]);
                (node, kb.push(Expr::Unary { op, x: a.1 }, dt, o))
            }
            1 => {
                let op = if vector {
                    rng.pick(vector_binary)
                } else {
                    rng.pick(if float { &float_binary } else { &int_binary })
                };
                log.push(format!("{op:?}"));
                let node = g.add(Op::Binary(op), dt, vec![n], &[a.0, b.0]);
                let e = kb.push(Expr::Binary { op, a: a.1, b: b.1 }, dt, o);
                (node, e)
            }
            2 => {
                log.push("where".into());
                let c = rng.pick(&vals);
                let cn = g.add(Op::Binary(BinaryOp::Lt), DType::Bool, vec![n], &[a.0, b.0]);
                let ce = kb.push(
                    Expr::Binary {
                        op: BinaryOp::Lt,
                        a: a.1,
                        b: b.1,
                    },
                    DType::Bool,
                    o,
                );
                let node = g.add(Op::Where, dt, vec![n], &[cn, c.0, b.0]);
                let e = kb.push(
                    Expr::Where {
                        cond: ce,
                        a: c.1,
                        b: b.1,
                    },
                    dt,
                    o,
                );
                (node, e)
            }
            _ => {
                let via = rng.pick(&dtypes);
                log.push(format!("cast via {via}"));
                let m = g.add(Op::Cast, via, vec![n], &[a.0]);
                let me = kb.push(Expr::Cast { x: a.1 }, via, o);
                let node = g.add(Op::Cast, dt, vec![n], &[m]);
                (node, kb.push(Expr::Cast { x: me }, dt, o))
            }
        };
        vals.push(next);
    }
    let outs = [vals[vals.len() - 1], rng.pick(&vals)];
    for (_, e) in outs {
        let p = kb.param(dt, n, true);
        kb.store(p, 0, &st, e);
        bufs.push(vec![0; n * dt.size_in_bytes()]);
    }
    // The points in one call or in a few calls with random cuts.
    let mut cuts = vec![0u64, n as u64];
    for _ in 0..rng.below(3) {
        cuts.push(rng.below(n + 1) as u64);
    }
    cuts.sort_unstable();
    let ranges: Vec<(u64, u64)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
    let what = format!(
        "seed {seed}: {dt}[{rows}, {cols}] {} ranges {ranges:?}",
        log.join(", ")
    );
    let want = execute(&g, &inputs, &[outs[0].0, outs[1].0]).expect("interpreter");
    let got = run_ranges(&kb.k, &bufs, &ranges).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.status[0], 0, "{what}");
    let k = inputs.len();
    for (j, w) in want.iter().enumerate() {
        assert_same(dt, &bytes_of(w), &got.bufs[k + j], &what);
    }
}

#[test]
fn random_fused_elementwise_dags_agree_with_the_interpreter() {
    let cases: u64 = std::env::var("JIT_RANDOM_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    for seed in 0..cases {
        case(seed);
    }
}
