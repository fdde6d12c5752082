//! PERF.md's workloads W1–W9 and their plain-Rust baselines, the training steps
//! T1 (an MLP) and T2 (an attention block), and the neural-network workloads of
//! `nn_workloads.rs` (C1/C2 convolutions, T3 the digits CNN), shared by
//! `examples/bench_report.rs` (the table) and `benches/jit.rs` (criterion groups)
//! through `#[path]`, so that both measure the same thing.
//!
//! Each [`Workload`] holds its inputs (built once: large, deterministic, realized
//! before timing), a closure that builds and realizes the lazyfuse graph, and a
//! baseline closure: for memory-bound workloads the *floor*, a two-thread loop doing
//! the workload's compulsory reads and writes with trivial arithmetic; for W7 a
//! plain two-thread copy; for W9 the same chain in plain Rust; W6 has none (no Rust
//! BLAS here: the report divides by PERF.md's numpy figure instead).

#![allow(dead_code)]

use lazyfuse::half::f16;
use lazyfuse::{DType, Tensor};
use std::hint::black_box;

/// What a workload's rate is measured in.
#[derive(Clone, Copy, PartialEq)]
pub enum Unit {
    /// bytes of compulsory traffic per run (GB/s)
    Bytes(f64),
    /// floating-point operations per run (GFLOP/s)
    Flops(f64),
    /// latency per run (µs)
    Latency,
}

/// One workload: lazyfuse beside its baseline.
pub struct Workload {
    /// PERF.md's id (`W1`, `W3b_rows`, ...)
    pub id: &'static str,
    /// what it computes
    pub what: String,
    /// the rate's unit and amount of work per run
    pub unit: Unit,
    /// builds and realizes the graph once
    pub run: Box<dyn FnMut()>,
    /// the baseline, once (`None`: no baseline in this process)
    pub baseline: Option<Box<dyn FnMut()>>,
    /// the target as PERF.md states it
    pub target: &'static str,
    /// the target as a minimum ratio of baseline time / lazyfuse time (or of
    /// GFLOP/s to the reference figure), `None` for absolute targets
    pub min_ratio: Option<f64>,
    /// the target as a maximum time per run (latencies)
    pub max_secs: Option<f64>,
}

/// A deterministic input in [-1, 1).
pub fn inputs(len: usize, seed: f32) -> Vec<f32> {
    (0..len).map(|i| (i as f32 * 0.37 + seed).sin()).collect()
}

/// Runs `f(start, chunk)` on two threads (the machine's cores), each over one half
/// of `out` starting at element `start`. Baselines write their loops over slices
/// with `zip` (no index bounds checks), so LLVM vectorizes them: a floor must be
/// the memory traffic, not scalar arithmetic.
pub fn two_threads<T: Send>(out: &mut [T], f: impl Fn(usize, &mut [T]) + Sync) {
    let half = out.len() / 2;
    let (lo, hi) = out.split_at_mut(half);
    std::thread::scope(|s| {
        s.spawn(|| f(0, lo));
        f(half, hi);
    });
}

/// The sum of `x` on two threads with 16 independent lanes each (vectorizable).
pub fn two_thread_sum(x: &[f32]) -> f32 {
    fn part(x: &[f32]) -> f32 {
        let mut acc = [0.0f32; 16];
        let chunks = x.chunks_exact(16);
        let rest: f32 = chunks.remainder().iter().sum();
        for c in chunks {
            for (a, v) in acc.iter_mut().zip(c) {
                *a += v;
            }
        }
        acc.iter().sum::<f32>() + rest
    }
    let (lo, hi) = x.split_at(x.len() / 2);
    std::thread::scope(|s| {
        let h = s.spawn(|| part(lo));
        part(hi) + h.join().unwrap()
    })
}

fn tensor(data: Vec<f32>, shape: &[usize]) -> Tensor {
    on_device(Tensor::from_vec(data, shape).unwrap())
}

/// Where the workloads' input tensors live (see [`set_device`]).
static DEVICE: std::sync::Mutex<lazyfuse::Device> = std::sync::Mutex::new(lazyfuse::Device::CPU);

/// Puts the inputs of the workloads built from now on on `device` (realized there
/// before timing): the graphs then run there.
pub fn set_device(device: lazyfuse::Device) {
    *DEVICE.lock().unwrap_or_else(|p| p.into_inner()) = device;
}

/// `t` on the workloads' device.
fn on_device(t: Tensor) -> Tensor {
    let device = *DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    t.to_device(device).unwrap()
}

#[path = "nn_workloads.rs"]
mod nn;

#[path = "half_by_hand.rs"]
mod half_by_hand;

/// Sizes: full (PERF.md's) or `quick` (a smoke test: each side divided by ~4–16).
pub struct Sizes {
    /// elementwise length (W1, W8)
    pub n: usize,
    /// square side (W2, W3b, W4, W5)
    pub side: usize,
    /// the reduction length of W3
    pub sum_n: usize,
    /// the transpose side of W7
    pub t_side: usize,
    /// matmul sides of W6
    pub mm: [usize; 2],
    /// a smoke run (the convolutions' batch shrinks too)
    pub quick: bool,
}

impl Sizes {
    /// PERF.md's sizes, or small ones for a smoke run.
    pub fn new(quick: bool) -> Sizes {
        if quick {
            Sizes {
                n: 1 << 20,
                side: 1024,
                sum_n: 1 << 22,
                t_side: 2048,
                mm: [256, 512],
                quick,
            }
        } else {
            Sizes {
                n: 1 << 24,
                side: 4096,
                sum_n: 1 << 26,
                t_side: 8192,
                mm: [1024, 2048],
                quick,
            }
        }
    }
}

/// The workload groups, in PERF.md's order (E: one transcendental per element).
pub const GROUPS: [&str; 16] = [
    "W1", "W2", "W3", "W3b", "W4", "W5", "W6", "W7", "W8", "W9", "E", "T1", "T2", "C1", "C2", "T3",
];

/// The groups `filter` selects: all when it is empty, else those named by one of
/// its comma-separated, case-insensitive ids (`w3` selects W3 only, `w3b` W3b).
pub fn groups(filter: &str) -> Vec<&'static str> {
    GROUPS
        .into_iter()
        .filter(|g| filter.is_empty() || filter.split(',').any(|f| f.eq_ignore_ascii_case(g)))
        .collect()
}

/// The workloads of one group (inputs built now: build one group at a time to keep
/// memory bounded).
pub fn build(group: &str, s: &Sizes) -> Vec<Workload> {
    match group {
        "W1" => [DType::F64, DType::F16, DType::BF16]
            .into_iter()
            .fold(vec![w1(s.n)], |mut v, dt| {
                v.push(w1_typed(s.n, dt));
                v
            })
            .into_iter()
            .chain(
                [DType::F16, DType::BF16]
                    .into_iter()
                    .filter_map(|dt| half_by_hand::hand_w1(s.n, dt))
                    .chain(half_by_hand::native_w1(s.n)),
            )
            .collect(),
        "W2" => vec![w2(s.side)],
        "W3" => vec![w3(s.sum_n)],
        "W3b" => w3b(s.side * 2),
        "W4" => {
            [DType::F64, DType::F16, DType::BF16]
                .into_iter()
                .fold(vec![w4(s.side)], |mut v, dt| {
                    v.push(w4_typed(s.side, dt));
                    v
                })
        }
        "W5" => vec![w5(s.side)],
        "W6" => w6_cases(s)
            .into_iter()
            .map(|(id, n, batch, target)| w6(n, batch, id, target))
            .collect(),
        "W7" => vec![w7(s.t_side)],
        "W8" => vec![w8(s.n)],
        "W9" => vec![w9()],
        "E" => TRANSCENDENTALS
            .iter()
            .map(|&(id, _, _)| transcendental(id, s.n))
            .collect(),
        "T1" => vec![t1_mlp_step()],
        "T2" => vec![t2_attention_step()],
        "C1" => vec![nn::c1_conv_forward(s.quick)],
        "C2" => vec![nn::c2_conv_forward_backward(s.quick)],
        "T3" => vec![nn::t3_digits_step()],
        _ => Vec::new(),
    }
}

/// W1 `((a*b + c).relu()*0.5 + a).tanh()`; floor: `a*b + c`.
pub fn w1(n: usize) -> Workload {
    let (a, b, c) = (inputs(n, 0.1), inputs(n, 0.2), inputs(n, 0.3));
    let (ta, tb, tc) = (
        tensor(a.clone(), &[n]),
        tensor(b.clone(), &[n]),
        tensor(c.clone(), &[n]),
    );
    let mut out = vec![0.0f32; n];
    Workload {
        id: "W1",
        what: format!("((a*b+c).relu()*0.5+a).tanh() [{n}]"),
        unit: Unit::Bytes(16.0 * n as f64),
        run: Box::new(move || {
            // written as users write it: one statement, realized at its end
            black_box(
                ta.mul(&tb)
                    .unwrap()
                    .add(&tc)
                    .unwrap()
                    .relu()
                    .unwrap()
                    .mul(0.5)
                    .unwrap()
                    .add(&ta)
                    .unwrap()
                    .tanh()
                    .unwrap()
                    .realize()
                    .unwrap(),
            );
        }),
        baseline: Some(Box::new(move || {
            two_threads(&mut out, |s, o| {
                let n = o.len();
                let (a, b, c) = (&a[s..s + n], &b[s..s + n], &c[s..s + n]);
                for (((o, a), b), c) in o.iter_mut().zip(a).zip(b).zip(c) {
                    *o = a * b + c;
                }
            });
            black_box(&out);
        })),
        target: "≥ 0.85 of floor",
        min_ratio: Some(0.85),
        max_secs: None,
    }
}

/// A float32 tensor of `data` converted to `dtype` and realized (an input).
fn typed(data: Vec<f32>, shape: &[usize], dtype: DType) -> Tensor {
    tensor(data, shape)
        .to_dtype(dtype)
        .unwrap()
        .realize()
        .unwrap()
}

/// The floor of a workload over `n` elements of `dtype` reading `reads` arrays
/// and writing one, with trivial arithmetic: `a*b + c` (or `x*2 + 1`) in float64,
/// the bits' xor for the 2-byte floats (whose arithmetic on the CPU is a
/// conversion, not memory traffic).
fn typed_floor(n: usize, dtype: DType, reads: usize) -> Box<dyn FnMut()> {
    let ins: Vec<Vec<f32>> = (0..reads)
        .map(|r| inputs(n, 0.1 * (r + 1) as f32))
        .collect();
    if dtype == DType::F64 {
        floor_loop(ins, f64::from, |a, b, c| a * b + c, |x| x * 2.0 + 1.0)
    } else {
        let bits = |x: f32| f16::from_f32(x).to_bits();
        floor_loop(ins, bits, |a, b, c| a ^ b ^ c, |x| x ^ 0x3c00)
    }
}

/// The two-thread floor loop over `ins` (one or three arrays) converted by
/// `conv`, writing `three(a, b, c)` or `one(x)` per element (closures, so each
/// loop is compiled, and vectorized, for its own arithmetic).
fn floor_loop<T: Copy + Default + Send + Sync + 'static>(
    ins: Vec<Vec<f32>>,
    conv: impl Fn(f32) -> T,
    three: impl Fn(T, T, T) -> T + Sync + 'static,
    one: impl Fn(T) -> T + Sync + 'static,
) -> Box<dyn FnMut()> {
    let ins: Vec<Vec<T>> = ins
        .into_iter()
        .map(|v| v.into_iter().map(&conv).collect())
        .collect();
    let mut out = vec![T::default(); ins[0].len()];
    Box::new(move || {
        two_threads(&mut out, |s, o| match ins.as_slice() {
            [a, b, c] => {
                let (a, b, c) = (&a[s..], &b[s..], &c[s..]);
                for (((o, &a), &b), &c) in o.iter_mut().zip(a).zip(b).zip(c) {
                    *o = three(a, b, c);
                }
            }
            [x] => {
                for (o, &x) in o.iter_mut().zip(&x[s..]) {
                    *o = one(x);
                }
            }
            _ => unreachable!("one or three reads"),
        });
        black_box(&out);
    })
}

/// The row id of a typed variant (`W1_f64`, `W4_bf16`).
fn typed_id(w: &str, dtype: DType) -> &'static str {
    match (w, dtype) {
        ("W1", DType::F64) => "W1_f64",
        ("W1", DType::F16) => "W1_f16",
        ("W1", DType::BF16) => "W1_bf16",
        ("W4", DType::F64) => "W4_f64",
        ("W4", DType::F16) => "W4_f16",
        ("W4", DType::BF16) => "W4_bf16",
        _ => unreachable!("W1 and W4 at float64, float16, bfloat16"),
    }
}

/// W1 over `n` elements of `dtype` (float64, float16, bfloat16), beside its
/// floor at that width.
pub fn w1_typed(n: usize, dtype: DType) -> Workload {
    let (a, b, c) = (
        typed(inputs(n, 0.1), &[n], dtype),
        typed(inputs(n, 0.2), &[n], dtype),
        typed(inputs(n, 0.3), &[n], dtype),
    );
    let size = dtype.size_in_bytes() as f64;
    Workload {
        id: typed_id("W1", dtype),
        what: format!("W1 {dtype} [{n}]"),
        unit: Unit::Bytes(4.0 * size * n as f64),
        run: Box::new(move || {
            black_box(w1_graph(&a, &b, &c).realize().unwrap());
        }),
        baseline: Some(typed_floor(n, dtype, 3)),
        target: "≥ 0.85 of floor",
        min_ratio: Some(0.85),
        max_secs: None,
    }
}

/// W4 over rows of [side, side] of `dtype`, beside its floor at that width.
pub fn w4_typed(side: usize, dtype: DType) -> Workload {
    let x = typed(inputs(side * side, 0.1), &[side, side], dtype);
    let size = dtype.size_in_bytes() as f64;
    Workload {
        id: typed_id("W4", dtype),
        what: format!("softmax rows {dtype} [{side},{side}]"),
        unit: Unit::Bytes(2.0 * size * (side * side) as f64),
        run: Box::new(move || {
            black_box(x.softmax(1).unwrap().realize().unwrap());
        }),
        baseline: Some(typed_floor(side * side, dtype, 1)),
        target: "≥ 0.7 of floor",
        min_ratio: Some(0.7),
        max_secs: None,
    }
}

/// W1's graph (unrealized).
pub fn w1_graph(a: &Tensor, b: &Tensor, c: &Tensor) -> Tensor {
    let y = a.mul(b).unwrap().add(c).unwrap().relu().unwrap();
    y.mul(0.5).unwrap().add(a).unwrap().tanh().unwrap()
}

/// A one-read, one-write floor over `n` f32: `x*2 + 1`.
fn copy_floor(n: usize) -> Box<dyn FnMut()> {
    let x = inputs(n, 0.7);
    let mut out = vec![0.0f32; n];
    Box::new(move || {
        two_threads(&mut out, |s, o| {
            for (o, x) in o.iter_mut().zip(&x[s..]) {
                *o = x * 2.0 + 1.0;
            }
        });
        black_box(&out);
    })
}

/// A tensor method of one argument.
pub type UnaryFn = fn(&Tensor) -> lazyfuse::Result<Tensor>;

/// The elementwise ops of the transcendental rows (PERF.md: any elementwise
/// kernel with one transcendental over 16M float32 at ≥ 0.8 of the floor).
pub const TRANSCENDENTALS: [(&str, &str, UnaryFn); 8] = [
    ("E_exp", "exp()", Tensor::exp),
    ("E_log", "log()", Tensor::log),
    ("E_tanh", "tanh()", Tensor::tanh),
    ("E_sigmoid", "sigmoid()", Tensor::sigmoid),
    ("E_gelu", "gelu()", |x| {
        x.gelu(lazyfuse::GeluApproximate::None)
    }),
    ("E_gelu_tanh", "gelu(tanh)", |x| {
        x.gelu(lazyfuse::GeluApproximate::Tanh)
    }),
    ("E_silu", "silu()", Tensor::silu),
    ("E_erf", "erf()", Tensor::erf),
];

/// Row `id` of [`TRANSCENDENTALS`]: its op over `n` float32 (positive inputs, so
/// `log` is finite), beside the one-read, one-write floor.
pub fn transcendental(id: &'static str, n: usize) -> Workload {
    let (name, op) = TRANSCENDENTALS
        .iter()
        .find(|(i, _, _)| *i == id)
        .map(|&(_, name, f)| (name, f))
        .expect("a listed row");
    let x = tensor(
        inputs(n, 0.4).into_iter().map(|v| v.abs() + 0.01).collect(),
        &[n],
    );
    Workload {
        id,
        what: format!("x.{name} [{n}]"),
        unit: Unit::Bytes(8.0 * n as f64),
        run: Box::new(move || {
            black_box(op(&x).unwrap().realize().unwrap());
        }),
        baseline: Some(copy_floor(n)),
        target: "≥ 0.8 of floor",
        min_ratio: Some(0.8),
        max_secs: None,
    }
}

/// W2 `(x + row) * col` over [side, side].
pub fn w2(side: usize) -> Workload {
    let x = tensor(inputs(side * side, 0.1), &[side, side]);
    let row = tensor(inputs(side, 0.2), &[1, side]);
    let col = tensor(inputs(side, 0.3), &[side, 1]);
    Workload {
        id: "W2",
        what: format!("(x[{side},{side}]+row)*col"),
        unit: Unit::Bytes(8.0 * (side * side) as f64),
        run: Box::new(move || {
            black_box(x.add(&row).unwrap().mul(&col).unwrap().realize().unwrap());
        }),
        baseline: Some(copy_floor(side * side)),
        target: "≥ 0.8 of floor",
        min_ratio: Some(0.8),
        max_secs: None,
    }
}

/// W3 sum of `n` f32; floor: a two-thread 16-lane sum.
pub fn w3(n: usize) -> Workload {
    let x = inputs(n, 0.1);
    let t = tensor(x.clone(), &[n]);
    Workload {
        id: "W3",
        what: format!("sum [{n}]"),
        unit: Unit::Bytes(4.0 * n as f64),
        run: Box::new(move || {
            black_box(t.sum(&[0], false).unwrap().realize().unwrap());
        }),
        baseline: Some(Box::new(move || {
            black_box(two_thread_sum(&x));
        })),
        target: "≥ 0.8 of floor",
        min_ratio: Some(0.8),
        max_secs: None,
    }
}

/// W3b row sums and column sums of [side, side]; floor: the whole-array sum.
pub fn w3b(side: usize) -> Vec<Workload> {
    let x = inputs(side * side, 0.1);
    let t = tensor(x.clone(), &[side, side]);
    let x = std::sync::Arc::new(x);
    [("W3b_rows", 1isize), ("W3b_cols", 0)]
        .into_iter()
        .map(|(id, dim)| {
            let (t, x) = (t.clone(), x.clone());
            Workload {
                id,
                what: format!("sum(dim={dim}) [{side},{side}]"),
                unit: Unit::Bytes(4.0 * (side * side) as f64),
                run: Box::new(move || {
                    black_box(t.sum(&[dim], false).unwrap().realize().unwrap());
                }),
                baseline: Some(Box::new(move || {
                    black_box(two_thread_sum(&x));
                })),
                target: "≥ 0.8 of floor",
                min_ratio: Some(0.8),
                max_secs: None,
            }
        })
        .collect()
}

/// W4 softmax over rows of [side, side].
pub fn w4(side: usize) -> Workload {
    let x = tensor(inputs(side * side, 0.1), &[side, side]);
    Workload {
        id: "W4",
        what: format!("softmax rows [{side},{side}]"),
        unit: Unit::Bytes(8.0 * (side * side) as f64),
        run: Box::new(move || {
            black_box(x.softmax(1).unwrap().realize().unwrap());
        }),
        baseline: Some(copy_floor(side * side)),
        target: "≥ 0.7 of floor",
        min_ratio: Some(0.7),
        max_secs: None,
    }
}

/// W5 layernorm over rows of [side, side] with weight and bias (eps 1e-5).
pub fn w5(side: usize) -> Workload {
    let x = tensor(inputs(side * side, 0.1), &[side, side]);
    let w = tensor(inputs(side, 0.2), &[side]);
    let b = tensor(inputs(side, 0.3), &[side]);
    Workload {
        id: "W5",
        what: format!("layernorm rows [{side},{side}]"),
        unit: Unit::Bytes(8.0 * (side * side) as f64),
        run: Box::new(move || {
            let mean = x.mean(&[1], true).unwrap();
            let var = x.var(&[1], 0, true).unwrap();
            let std = var.add(1e-5).unwrap().sqrt().unwrap();
            let y = x.sub(&mean).unwrap().div(&std).unwrap();
            black_box(y.mul(&w).unwrap().add(&b).unwrap().realize().unwrap());
        }),
        baseline: Some(copy_floor(side * side)),
        target: "≥ 0.7 of floor",
        min_ratio: Some(0.7),
        max_secs: None,
    }
}

/// PERF.md's numpy sgemm figure on this machine (2 threads), GFLOP/s: W6's
/// reference (there is no Rust BLAS in this process to measure).
pub const NUMPY_SGEMM_GFLOPS: f64 = 250.0;

/// W6's products: id, side `n`, batch and target.
pub fn w6_cases(s: &Sizes) -> [(&'static str, usize, usize, &'static str); 3] {
    [
        ("W6_1024", s.mm[0], 1, "≥ 0.8 of numpy sgemm"),
        ("W6_2048", s.mm[1], 1, "(none)"),
        ("W6_batched", 128, 64, "(none)"),
    ]
}

/// W6 `[batch, n, n] @ [batch, n, n]` (no batch dim when `batch == 1`).
pub fn w6(n: usize, batch: usize, id: &'static str, target: &'static str) -> Workload {
    let shape: Vec<usize> = if batch == 1 {
        vec![n, n]
    } else {
        vec![batch, n, n]
    };
    let a = tensor(inputs(batch * n * n, 0.1), &shape);
    let b = tensor(inputs(batch * n * n, 0.2), &shape);
    Workload {
        id,
        what: format!("matmul {shape:?}@{shape:?}"),
        unit: Unit::Flops(2.0 * (batch * n * n * n) as f64),
        run: Box::new(move || {
            black_box(a.matmul(&b).unwrap().realize().unwrap());
        }),
        baseline: None,
        target,
        min_ratio: (id == "W6_1024").then_some(0.8),
        max_secs: None,
    }
}

/// W7 `x[side, side].t().contiguous()`; baseline: a plain two-thread copy.
pub fn w7(side: usize) -> Workload {
    let x = tensor(inputs(side * side, 0.1), &[side, side]);
    let src = inputs(side * side, 0.1);
    let mut out = vec![0.0f32; side * side];
    Workload {
        id: "W7",
        what: format!("x[{side},{side}].t().contiguous()"),
        unit: Unit::Bytes(8.0 * (side * side) as f64),
        run: Box::new(move || {
            black_box(x.t().unwrap().contiguous().unwrap().realize().unwrap());
        }),
        baseline: Some(Box::new(move || {
            let half = out.len() / 2;
            let (lo, hi) = out.split_at_mut(half);
            let (slo, shi) = src.split_at(half);
            std::thread::scope(|s| {
                s.spawn(|| lo.copy_from_slice(slo));
                hi.copy_from_slice(shi);
            });
            black_box(&out);
        })),
        target: "≥ 0.5 of copy",
        min_ratio: Some(0.5),
        max_secs: None,
    }
}

/// W8 `int32[n] * 0.5 + float16[n]` (float32 result); floor: the same reads (4 + 2
/// bytes) and write (4 bytes) with trivial arithmetic on the raw values.
pub fn w8(n: usize) -> Workload {
    let ints: Vec<i32> = (0..n as i32)
        .map(|i| i.wrapping_mul(7919) % 100_000)
        .collect();
    let halves: Vec<f16> = inputs(n, 0.4).into_iter().map(f16::from_f32).collect();
    let ta = on_device(Tensor::from_vec(ints.clone(), &[n]).unwrap());
    let th = on_device(Tensor::from_vec(halves.clone(), &[n]).unwrap());
    let bits: Vec<u16> = halves.iter().map(|h| h.to_bits()).collect();
    let mut out = vec![0.0f32; n];
    Workload {
        id: "W8",
        what: format!("int32[{n}]*0.5 + float16[{n}]"),
        unit: Unit::Bytes(10.0 * n as f64),
        run: Box::new(move || {
            black_box(ta.mul(0.5).unwrap().add(&th).unwrap().realize().unwrap());
        }),
        baseline: Some(Box::new(move || {
            two_threads(&mut out, |s, o| {
                for ((o, i), h) in o.iter_mut().zip(&ints[s..]).zip(&bits[s..]) {
                    *o = *i as f32 * 0.5 + *h as f32;
                }
            });
            black_box(&out);
        })),
        target: "≥ 0.8 of floor",
        min_ratio: Some(0.8),
        max_secs: None,
    }
}

/// The plain-Rust W9 chain on one value.
pub fn w9_scalar(v: f32) -> f32 {
    let v = (v * 1.5 + 0.25).abs().sqrt() - 0.5;
    let v = (v * v + 1.0).ln().max(0.1);
    (v / 3.0).exp().tanh()
}

/// W9: the chain on [1000], built and realized per run; baseline: plain Rust.
pub fn w9() -> Workload {
    let x = inputs(1000, 0.5);
    let tx = tensor(x.clone(), &[1000]);
    let floor = Tensor::scalar(0.1);
    Workload {
        id: "W9",
        what: "10-op chain [1000], built+realized".into(),
        unit: Unit::Latency,
        run: Box::new(move || {
            // the intermediates' handles are alive at the realize: only the
            // result is stored
            let v = tx.mul(1.5).unwrap().add(0.25).unwrap().abs().unwrap();
            let v = v.sqrt().unwrap().sub(0.5).unwrap();
            let v = v.mul(&v).unwrap().add(1.0).unwrap().log().unwrap();
            let v = v.maximum(&floor).unwrap();
            black_box(
                v.div(3.0)
                    .unwrap()
                    .exp()
                    .unwrap()
                    .tanh()
                    .unwrap()
                    .realize()
                    .unwrap(),
            );
        }),
        baseline: Some(Box::new(move || {
            black_box(x.iter().map(|&v| w9_scalar(v)).collect::<Vec<f32>>());
        })),
        target: "≤ 5 µs",
        min_ratio: None,
        max_secs: Some(5e-6),
    }
}

/// A deterministic normal-ish weight (sums of uniforms), scaled, as a leaf.
fn param(shape: &[usize], scale: f32, seed: f32) -> Tensor {
    let n = shape.iter().product();
    let v: Vec<f32> = inputs(n, seed).iter().map(|x| x * scale).collect();
    tensor(v, shape).requires_grad_(true).unwrap()
}

/// One SGD step over `params` (`p -= lr * p.grad` under `no_grad`, as PyTorch's
/// `p.sub_(p.grad * lr)`), then the parameters and the loss realized together.
fn sgd_step(params: &[Tensor], loss: &Tensor, lr: f64) {
    loss.backward().unwrap();
    lazyfuse::no_grad(|| {
        for p in params {
            let g = p.grad().unwrap();
            p.sub_(&g.mul(lr).unwrap()).unwrap();
            p.set_grad(None).unwrap();
        }
    });
    let mut all: Vec<&Tensor> = params.iter().collect();
    all.push(loss);
    lazyfuse::realize_all(&all).unwrap();
}

/// Kernels of the last realize, after one warm-up run of `run`.
fn kernels_per_step(run: &mut dyn FnMut()) -> usize {
    run();
    lazyfuse::last_realize_stats().kernels
}

/// T1: one SGD step of an MLP 784→256→10 (ReLU), batch 64, cross-entropy loss:
/// forward, backward and update built and realized per run. PERF.md quotes PyTorch
/// 2.15 here: eager 1.0–1.1 ms, `torch.compile` 0.65 ms per step.
pub fn t1_mlp_step() -> Workload {
    let x = tensor(inputs(64 * 784, 0.3), &[64, 784]);
    let labels: Vec<i64> = (0..64).map(|i| (i * 7 % 10) as i64).collect();
    let y = on_device(Tensor::from_vec(labels, &[64, 1]).unwrap());
    let params = vec![
        param(&[784, 256], 0.06, 0.1),
        param(&[256], 0.0, 0.2),
        param(&[256, 10], 0.1, 0.3),
        param(&[10], 0.0, 0.4),
    ];
    let mut run = move || {
        let h = x
            .matmul(&params[0])
            .unwrap()
            .add(&params[1])
            .unwrap()
            .relu()
            .unwrap();
        let logits = h.matmul(&params[2]).unwrap().add(&params[3]).unwrap();
        let loss = logits
            .log_softmax(1)
            .unwrap()
            .gather(1, &y)
            .unwrap()
            .mean(&[], false)
            .unwrap()
            .neg()
            .unwrap();
        sgd_step(&params, &loss, 0.01);
    };
    let kernels = kernels_per_step(&mut run);
    Workload {
        id: "T1",
        what: format!("MLP 784-256-10 b64 SGD step ({kernels} kernels)"),
        unit: Unit::Latency,
        run: Box::new(run),
        baseline: None,
        target: "< 0.65 ms (torch.compile, PERF.md)",
        min_ratio: None,
        max_secs: Some(0.65e-3),
    }
}

/// A hand-written layer norm over the last dim (no affine).
fn layer_norm(x: &Tensor) -> Tensor {
    let mean = x.mean(&[-1], true).unwrap();
    let centred = x.sub(&mean).unwrap();
    let var = centred.mul(&centred).unwrap().mean(&[-1], true).unwrap();
    centred
        .mul(&var.add(1e-5).unwrap().rsqrt().unwrap())
        .unwrap()
}

/// T2: one SGD step of a one-head attention block with layer norm and a residual
/// (batch 8, sequence 64, width 64; loss: mean square of the output). PERF.md
/// quotes PyTorch 2.15 here: eager 1.3–2.2 ms, `torch.compile` 0.84 ms per step.
pub fn t2_attention_step() -> Workload {
    let (b, t, d) = (8usize, 64usize, 64usize);
    let x = tensor(inputs(b * t * d, 0.6), &[b, t, d]);
    let scale = 1.0 / (d as f64).sqrt();
    let params: Vec<Tensor> = (0..4)
        .map(|i| param(&[d, d], 0.12, 0.5 + i as f32 / 10.0))
        .collect();
    let mut run = move || {
        let h = layer_norm(&x);
        let q = h.matmul(&params[0]).unwrap();
        let k = h.matmul(&params[1]).unwrap();
        let v = h.matmul(&params[2]).unwrap();
        let scores = q
            .matmul(&k.transpose(1, 2).unwrap())
            .unwrap()
            .mul(scale)
            .unwrap();
        let attended = scores.softmax(-1).unwrap().matmul(&v).unwrap();
        let out = attended.matmul(&params[3]).unwrap().add(&x).unwrap();
        let loss = out.mul(&out).unwrap().mean(&[], false).unwrap();
        sgd_step(&params, &loss, 0.01);
    };
    let kernels = kernels_per_step(&mut run);
    Workload {
        id: "T2",
        what: format!("attention b8 t64 d64 SGD step ({kernels} kernels)"),
        unit: Unit::Latency,
        run: Box::new(run),
        baseline: None,
        target: "< 0.84 ms (torch.compile, PERF.md)",
        min_ratio: None,
        max_secs: Some(0.84e-3),
    }
}
