//! Compiled kernels never touch memory outside their buffers, whatever the views:
//! real schedules (random programs of `tests/support/random_program.rs`, and
//! hand-written view-heavy programs: `as_strided` windows reaching the last element
//! of their storage, overlapping windows, flips, transposes, expands, edge
//! narrows/selects, unfold, diagonal, reductions and softmax over strided views,
//! writes through views, zero-size dims, every element width) are run step by step
//! with each loop kernel compiled by `CpuModule` and called on **guarded copies** of
//! its params: every buffer sits right against an inaccessible page, once with its
//! last byte before the trailing guard page and once with its first byte after the
//! leading one (zero-length buffers point at a guard boundary), over the whole
//! parallel range and over uneven split ranges. An out-of-bounds read or write
//! faults and kills the test process. Extern steps run the interpreter's routine
//! (`interp::eval_node`), as the executor does.
//!
//! The values must also match the interpreter's (`interp::execute` on the same
//! graph): integers and bools bit for bit, floats bit for bit or within 1e-6
//! relative (NaN equals NaN), and every placement and split must give the same bits.
//! `PROPTEST_CASES` sets the number of random programs (64 by default);
//! `GUARD_PAGES_TRACE=1` prints every kernel before it runs.
#![cfg(target_os = "linux")]

#[path = "support/guarded.rs"]
mod guarded;
#[path = "../runtime/tests/support/jit.rs"]
mod jit;
#[path = "support/random_program.rs"]
#[allow(dead_code)] // `observe` is for the realize tests
mod random_program;

use guarded::{Guarded, Placement};
use lazyfuse::{DType, Tensor};
use lazyfuse_codegen::cpu::CpuModule;
use lazyfuse_ir::kernel::{BufId, LoopKernel, MathMode, Schedule, Step, STATUS_SLOTS};
use lazyfuse_ir::schedule::{schedule, ScheduleOptions};
use lazyfuse_ir::{Graph, InputId, Node};
use lazyfuse_runtime::half::{bf16, f16};
use lazyfuse_runtime::{interp, jit_symbols, Buffer, Error};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What the guarded runs did, over the whole test binary.
static SCHEDULES: AtomicUsize = AtomicUsize::new(0);
static LOOP_KERNELS: AtomicUsize = AtomicUsize::new(0);
static KERNEL_CALLS: AtomicUsize = AtomicUsize::new(0);
static EXTERN_STEPS: AtomicUsize = AtomicUsize::new(0);

fn totals() -> String {
    format!(
        "{} schedules, {} loop kernels, {} guarded kernel calls, {} extern steps (run by the interpreter, not guarded)",
        SCHEDULES.load(Ordering::Relaxed),
        LOOP_KERNELS.load(Ordering::Relaxed),
        KERNEL_CALLS.load(Ordering::Relaxed),
        EXTERN_STEPS.load(Ordering::Relaxed)
    )
}

/// A buffer of `dtype` from its little-endian bytes (the inverse of `jit::bytes_of`).
fn buffer_of(dtype: DType, bytes: &[u8]) -> Buffer {
    fn le<T, const N: usize>(b: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
        b.chunks_exact(N)
            .map(|c| f(c.try_into().expect("a whole element")))
            .collect()
    }
    match dtype {
        DType::Bool => Buffer::from_vec(
            bytes
                .iter()
                .map(|&b| {
                    assert!(b <= 1, "a kernel stored {b} into a bool");
                    b == 1
                })
                .collect::<Vec<bool>>(),
        ),
        DType::U8 => Buffer::from_vec(bytes.to_vec()),
        DType::I8 => Buffer::from_vec(le(bytes, i8::from_le_bytes)),
        DType::I16 => Buffer::from_vec(le(bytes, i16::from_le_bytes)),
        DType::I32 => Buffer::from_vec(le(bytes, i32::from_le_bytes)),
        DType::I64 => Buffer::from_vec(le(bytes, i64::from_le_bytes)),
        DType::U16 => Buffer::from_vec(le(bytes, u16::from_le_bytes)),
        DType::U32 => Buffer::from_vec(le(bytes, u32::from_le_bytes)),
        DType::U64 => Buffer::from_vec(le(bytes, u64::from_le_bytes)),
        DType::F16 => Buffer::from_vec(le(bytes, |b| f16::from_bits(u16::from_le_bytes(b)))),
        DType::BF16 => Buffer::from_vec(le(bytes, |b| bf16::from_bits(u16::from_le_bytes(b)))),
        DType::F32 => Buffer::from_vec(le(bytes, f32::from_le_bytes)),
        DType::F64 => Buffer::from_vec(le(bytes, f64::from_le_bytes)),
        d if interp::float8::Format::of(d).is_some() => Buffer::Raw {
            dtype: d,
            bytes: bytes.to_vec(),
        },
        d => panic!("no loop kernel handles {d}"),
    }
}

/// Uneven ranges covering `0..points` (sizes 1, 3, 2, 7, 4, 5, …), so that calls
/// start and end at every kind of offset (vector bodies and their tails).
fn split(points: u64) -> Vec<(u64, u64)> {
    const SIZES: [u64; 6] = [1, 3, 2, 7, 4, 5];
    let mut out = Vec::new();
    let (mut at, mut i) = (0, 0);
    while at < points {
        let end = (at + SIZES[i % SIZES.len()]).min(points);
        out.push((at, end));
        at = end;
        i += 1;
    }
    out
}

/// The result of one guarded run of a kernel: the first nonzero status block (if
/// any) and the bytes of every written buffer afterwards.
struct Ran {
    status: Option<[u64; STATUS_SLOTS]>,
    written: Vec<(BufId, Vec<u8>)>,
}

/// Calls `k` once per range of `ranges` with a guarded copy of every distinct
/// buffer (`before` holds their bytes), placed as `placement` says.
fn call_guarded(
    k: &LoopKernel,
    m: &CpuModule,
    before: &[(BufId, Vec<u8>)],
    placement: Placement,
    ranges: &[(u64, u64)],
) -> Ran {
    let regions: Vec<(BufId, Guarded)> = before
        .iter()
        .map(|(b, bytes)| (*b, Guarded::new(bytes, placement)))
        .collect();
    let region = |b: BufId| &regions.iter().find(|(x, _)| *x == b).expect("a region").1;
    let ptrs: Vec<*mut u8> = k
        .params
        .iter()
        .map(|p| region(p.buf).as_mut_ptr())
        .collect();
    for (p, ptr) in k.params.iter().zip(&ptrs) {
        // The region is exactly the param's size: its end touches a guard page.
        assert_eq!(
            region(p.buf).end() as usize - *ptr as usize,
            p.len * p.dtype.size_in_bytes()
        );
    }
    let f = m.entry(0);
    let mut status = None;
    for &(begin, end) in ranges {
        let mut block = [0u64; STATUS_SLOTS];
        // SAFETY: `params[i]` points at a mapped copy of exactly param i's bytes (its
        // dtype and length, checked above), between guard pages; the status block has
        // STATUS_SLOTS words and is zero on entry; `begin..end` lies inside the
        // kernel's parallel points; `m` and the regions outlive the call. An access
        // outside the params faults (which is what this test looks for).
        unsafe { f(ptrs.as_ptr(), block.as_mut_ptr(), begin, end) };
        KERNEL_CALLS.fetch_add(1, Ordering::Relaxed);
        if block[0] != 0 && status.is_none() {
            status = Some(block);
        }
    }
    let written = regions
        .iter()
        .filter(|(b, _)| k.params.iter().any(|p| p.buf == *b && p.writes))
        .map(|(b, g)| (*b, g.to_vec()))
        .collect();
    Ran { status, written }
}

/// Runs one loop kernel in every guarded variant; the written buffers go to `bufs`.
fn run_loop(k: &LoopKernel, bufs: &mut [Option<Arc<Buffer>>]) -> Result<(), Error> {
    k.verify().map_err(Error::Malformed)?;
    if std::env::var_os("GUARD_PAGES_TRACE").is_some() {
        eprintln!("{}", k.text());
    }
    let m = CpuModule::compile(&[k], &jit_symbols::lookup)
        .map_err(|e| Error::Unsupported(format!("compiling {}: {e}", k.name)))?;
    LOOP_KERNELS.fetch_add(1, Ordering::Relaxed);
    // One region per distinct buffer (two params of one buffer share it, as in the
    // executor); a buffer not written yet starts zeroed.
    let mut before: Vec<(BufId, Vec<u8>)> = Vec::new();
    for p in &k.params {
        if before.iter().any(|(b, _)| *b == p.buf) {
            continue;
        }
        let bytes = match &bufs[p.buf.0 as usize] {
            Some(b) => {
                assert_eq!((b.dtype(), b.len()), (p.dtype, p.len), "param {}", p.buf);
                jit::bytes_of(b)
            }
            None if p.writes => vec![0; p.len * p.dtype.size_in_bytes()],
            None => return Err(Error::Malformed(format!("{} read before written", p.buf))),
        };
        before.push((p.buf, bytes));
    }
    let points = k.parallel_points() as u64;
    let whole = [(0, points)];
    let pieces = split(points);
    let mut reversed = pieces.clone();
    reversed.reverse();
    let runs = [
        call_guarded(k, &m, &before, Placement::AgainstEnd, &whole),
        call_guarded(k, &m, &before, Placement::AgainstStart, &whole),
        call_guarded(k, &m, &before, Placement::AgainstEnd, &pieces),
        call_guarded(k, &m, &before, Placement::AgainstStart, &reversed),
    ];
    let first = &runs[0];
    for (i, r) in runs.iter().enumerate().skip(1) {
        assert_eq!(
            r.status.is_some(),
            first.status.is_some(),
            "variant {i} of kernel {} disagrees on its status\n{}",
            k.name,
            k.text()
        );
        if first.status.is_none() {
            assert!(
                r.written == first.written,
                "variant {i} of kernel {} wrote other bytes\n{}",
                k.name,
                k.text()
            );
        }
    }
    if let Some(s) = &first.status {
        return Err(lazyfuse_runtime::exec::status_error(k, s));
    }
    for (b, bytes) in &first.written {
        let p = k.params.iter().find(|p| p.buf == *b).expect("a param");
        bufs[b.0 as usize] = Some(Arc::new(buffer_of(p.dtype, bytes)));
    }
    Ok(())
}

/// Runs `s` (made from `graph`) step by step: loop kernels guarded, extern steps by
/// the interpreter's routine. One buffer per target.
fn run_guarded(
    s: &Schedule,
    graph: &Graph,
    inputs: &HashMap<InputId, Arc<Buffer>>,
) -> Result<Vec<Arc<Buffer>>, Error> {
    SCHEDULES.fetch_add(1, Ordering::Relaxed);
    let mut bufs: Vec<Option<Arc<Buffer>>> = s
        .buffers
        .iter()
        .map(|d| match d.kind {
            lazyfuse_ir::kernel::BufKind::Input(id) => inputs.get(&id).cloned(),
            // As in the executor: an empty buffer is ready without a step (a `cat`
            // of empty tensors has none, and a kernel may still read it).
            _ if d.len == 0 => Some(Arc::new(Buffer::zeros(d.dtype, 0))),
            _ => None,
        })
        .collect();
    for step in &s.steps {
        match step {
            Step::Loop(k) => run_loop(k, &mut bufs)?,
            Step::Extern(e) => {
                EXTERN_STEPS.fetch_add(1, Ordering::Relaxed);
                let arg_nodes: Vec<&Node> = graph
                    .inputs(e.node)
                    .iter()
                    .map(|&i| graph.node(i))
                    .collect();
                let args = e
                    .inputs
                    .iter()
                    .map(|b| {
                        bufs[b.0 as usize]
                            .clone()
                            .ok_or_else(|| Error::Malformed(format!("{b} read before written")))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let out = interp::eval_node(graph.node(e.node), &args, &arg_nodes, inputs)?;
                bufs[e.output.0 as usize] = Some(out);
            }
        }
    }
    Ok(s.outputs
        .iter()
        .map(|b| {
            let d = &s.buffers[b.0 as usize];
            bufs[b.0 as usize]
                .clone()
                // a buffer no step wrote is empty (its kernels had no points)
                .unwrap_or_else(|| {
                    assert_eq!(d.len, 0, "output {b} was never written");
                    Arc::new(Buffer::zeros(d.dtype, 0))
                })
        })
        .collect())
}

/// Whether two buffers agree: bit for bit, or (floats) both NaN or within 1e-6
/// relative.
fn agree(want: &Buffer, got: &Buffer) -> Result<(), String> {
    let dtype = want.dtype();
    if (dtype, want.len()) != (got.dtype(), got.len()) {
        return Err(format!(
            "{}[{}] vs {}[{}]",
            dtype,
            want.len(),
            got.dtype(),
            got.len()
        ));
    }
    let (a, b) = (jit::bytes_of(want), jit::bytes_of(got));
    let size = dtype.size_in_bytes();
    for i in 0..want.len() {
        if a[i * size..(i + 1) * size] == b[i * size..(i + 1) * size] {
            continue;
        }
        let (x, y) = (jit::element(dtype, &a, i), jit::element(dtype, &b, i));
        let float = dtype.is_floating_point() && interp::float8::Format::of(dtype).is_none();
        let ok = (jit::is_nan(dtype, &a, i) && jit::is_nan(dtype, &b, i))
            || (float && (x - y).abs() <= 1e-6 * x.abs().max(y.abs()));
        if !ok {
            return Err(format!("element {i}: interpreter {x}, guarded jit {y}"));
        }
    }
    Ok(())
}

/// Schedules the tensors' optimized graph (fusion on and off) and runs it guarded;
/// the values (or the error) must be the interpreter's.
fn check(tensors: &[&Tensor]) -> Result<(), String> {
    guarded::report_faults();
    let (graph, targets, inputs) = Tensor::debug_optimized_graph(tensors);
    let want = interp::execute(&graph, &inputs, &targets);
    for fuse in [true, false] {
        let s = schedule(
            &graph,
            &targets,
            &ScheduleOptions {
                fuse,
                // the kernels compile in exact math (`CpuModule::compile`), so they
                // are scheduled in it too: a fast schedule computes a float32
                // softmax in float32 with a reciprocal multiply, an ulp from the
                // interpreter's, which a `remainder` downstream amplified past 1e-6
                math: MathMode::Exact,
                ..Default::default()
            },
        )
        .map_err(|e| format!("schedule (fuse {fuse}): {e}\n{}", graph.dump(&targets)))?;
        s.verify()
            .map_err(|e| format!("verify (fuse {fuse}): {e}\n{}", s.text()))?;
        let got = run_guarded(&s, &graph, &inputs);
        let context = || format!("fuse {fuse}\n{}\n{}", graph.dump(&targets), s.text());
        match (&want, &got) {
            (Ok(w), Ok(g)) => {
                for (i, (x, y)) in w.iter().zip(g).enumerate() {
                    agree(x, y).map_err(|e| format!("target {i}: {e}\n{}", context()))?;
                }
            }
            (Err(w), Err(g)) if std::mem::discriminant(w) == std::mem::discriminant(g) => {}
            _ => return Err(format!("interp {want:?} vs guarded {got:?}\n{}", context())),
        }
    }
    Ok(())
}

fn check_all(what: &str, tensors: &[Tensor]) {
    let refs: Vec<&Tensor> = tensors.iter().collect();
    if let Err(e) = check(&refs) {
        panic!("{what}: {e}");
    }
    eprintln!("{what}: {} tensors; so far {}", tensors.len(), totals());
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64)
}

#[test]
fn random_programs_stay_inside_their_buffers() {
    let mut runner = TestRunner::new(Config::with_cases(cases()));
    let programs = (
        proptest::collection::vec(random_program::source(), 1..4),
        proptest::collection::vec(random_program::step(), 1..24),
    );
    let result = runner.run(&programs, |(sources, steps)| {
        let pool = random_program::build(&sources, &steps);
        let refs: Vec<&Tensor> = pool.iter().collect();
        if let Err(e) = check(&refs) {
            prop_assert!(false, "{}", e);
        }
        Ok(())
    });
    eprintln!("random programs ({} cases): {}", cases(), totals());
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Deterministic values with negatives and zeros, `n` of them.
fn data(n: usize, seed: u64) -> Vec<f64> {
    (0..n as u64)
        .map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 17) as f64 / 4.0 - 2.0)
        .collect()
}

/// A realized tensor (an input buffer of the graph) of `dtype` and `shape`.
fn input(shape: &[usize], dtype: DType, seed: u64) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_vec(data(n, seed), shape)
        .and_then(|t| t.to_dtype(dtype))
        .and_then(|t| t.realize())
        .expect("an input tensor")
}

/// The results that exist (some ops refuse some dtypes: the refusal is no value,
/// and is counted on stderr).
fn ok(results: Vec<lazyfuse::Result<Tensor>>) -> Vec<Tensor> {
    let n = results.len();
    let made: Vec<Tensor> = results.into_iter().filter_map(Result::ok).collect();
    if made.len() < n {
        eprintln!("{} of {n} programs refused by the API", n - made.len());
    }
    made
}

#[test]
fn as_strided_windows_reach_the_last_element() {
    let t = input(&[12], DType::F32, 1);
    // windows whose last element is the storage's last one (offset 3 + 6 + 2 = 11)
    let w = t.as_strided(&[3, 3], &[3, 1], 3).unwrap();
    let w2 = t.as_strided(&[2, 2], &[4, 3], 4).unwrap();
    // overlapping windows (rows share elements), and a stride-0 row
    let o = t.as_strided(&[5, 4], &[2, 1], 0).unwrap();
    let z = t.as_strided(&[3, 4], &[0, 1], 8).unwrap();
    check_all(
        "as_strided",
        &ok(vec![
            w.mul(2).and_then(|x| x.add(1)),
            w.sum(&[-1], false),
            w2.exp(),
            w2.t().and_then(|x| x.contiguous()),
            o.exp().and_then(|x| x.sum(&[-1], false)),
            o.amax(&[0], true),
            o.add(&z.unfold(0, 2, 1).and_then(|u| u.sum(&[-1], false)).unwrap()),
            z.mul(&w.select(0, -1).unwrap().narrow(0, 0, 1).unwrap()),
            t.as_strided(&[1], &[1], 11),
            t.as_strided(&[0, 3], &[5, 1], 12),
        ]),
    );
}

#[test]
fn flips_transposes_expands_and_edge_slices() {
    let x = input(&[3, 4], DType::F32, 2);
    let y = input(&[4, 3], DType::F32, 3);
    let c = input(&[3, 1], DType::F32, 4);
    let r = input(&[1, 4], DType::F32, 5);
    let cube = input(&[2, 3, 4], DType::F32, 6);
    check_all(
        "views",
        &ok(vec![
            x.flip(&[0, 1]).and_then(|f| f.add(&x)),
            x.flip(&[1]).and_then(|f| f.sum(&[-1], false)),
            x.t().and_then(|t| t.add(&y)),
            y.t().and_then(|t| t.flip(&[0])).and_then(|t| t.mul(&x)),
            cube.permute(&[2, 0, 1]).and_then(|p| p.contiguous()),
            cube.transpose(0, 2).and_then(|p| p.sum(&[0], false)),
            c.expand(&[3, 4])
                .and_then(|e| e.mul(&r.expand(&[3, 4]).unwrap())),
            c.add(&r),
            r.expand(&[2, 3, 4]).and_then(|e| e.add(&cube)),
            x.narrow(1, 3, 1).and_then(|n| n.mul(3)),
            x.narrow(0, 2, 1),
            x.narrow(1, 4, 0).and_then(|n| n.sum(&[-1], false)),
            x.select(0, -1).and_then(|s| s.exp()),
            x.select(1, 0).and_then(|s| s.add(&x.select(1, 3).unwrap())),
            x.slice(1, Some(1), None, 2),
            cube.select(2, 3).and_then(|s| s.t()).and_then(|s| s.neg()),
        ]),
    );
}

#[test]
fn unfold_diagonal_and_reductions_over_strided_views() {
    let t = input(&[12], DType::F64, 7);
    let sq = input(&[4, 4], DType::F32, 8);
    let x = input(&[3, 4], DType::F32, 9);
    check_all(
        "unfold/diagonal/reductions",
        &ok(vec![
            t.unfold(0, 4, 4).and_then(|u| u.sum(&[-1], false)),
            t.unfold(0, 3, 3).and_then(|u| u.flip(&[0])),
            t.unfold(0, 5, 3).and_then(|u| u.amax(&[-1], false)),
            t.unfold(0, 12, 1),
            sq.diagonal(0, 0, 1).and_then(|d| d.mul(2)),
            sq.diagonal(3, 0, 1),
            sq.diagonal(-3, 0, 1).and_then(|d| d.exp()),
            x.diagonal(1, 0, 1).and_then(|d| d.mean(&[], false)),
            x.diagonal(0, 1, 0),
            x.t().and_then(|v| v.sum(&[0], false)),
            x.flip(&[0]).and_then(|v| v.amax(&[0], true)),
            x.t().and_then(|v| v.argmax(Some(-1), false)),
            x.flip(&[1]).and_then(|v| v.argmax(None, false)),
            t.as_strided(&[3, 3], &[3, 1], 3)
                .and_then(|v| v.prod(&[0], false)),
            sq.t().and_then(|v| v.cumsum(0)),
            x.t().and_then(|v| v.var(&[-1], 1, false)),
            x.t().and_then(|v| v.softmax(-1)),
            x.t().and_then(|v| v.softmax(0)),
            x.flip(&[1]).and_then(|v| v.log_softmax(-1)),
            sq.diagonal(0, 0, 1).and_then(|d| d.softmax(0)),
        ]),
    );
}

#[test]
fn writes_through_views() {
    let x = input(&[3, 4], DType::F32, 10);
    let y = input(&[4, 3], DType::F32, 11);
    let t = input(&[12], DType::I64, 12);
    let sq = input(&[4, 4], DType::I32, 13);
    x.narrow(1, 3, 1).unwrap().fill_(7).unwrap();
    x.t().unwrap().add_(&y).unwrap();
    x.select(0, -1).unwrap().sub_(1).unwrap();
    t.as_strided(&[2, 2], &[4, 3], 4)
        .unwrap()
        .copy_(&t.as_strided(&[2, 2], &[1, 2], 0).unwrap())
        .unwrap();
    t.narrow(0, 11, 1).unwrap().mul_(5).unwrap();
    sq.diagonal(0, 0, 1).unwrap().mul_(3).unwrap();
    sq.diagonal(-3, 0, 1).unwrap().fill_(-9).unwrap();
    let u = t.unfold(0, 4, 4).unwrap();
    u.select(1, 3).unwrap().add_(100).unwrap();
    check_all("writes through views", &[x.clone(), t.clone(), sq.clone()]);
    // and a read of a view of the written tensors, in the same schedule
    check_all(
        "reads after writes",
        &ok(vec![
            x.t().and_then(|v| v.sum(&[-1], false)),
            t.flip(&[0]),
            sq.t().and_then(|v| v.contiguous()),
        ]),
    );
}

#[test]
fn zero_size_dims() {
    let e = input(&[0, 3], DType::F32, 14);
    let x = input(&[3, 4], DType::F32, 15);
    let ei = input(&[2, 0], DType::I64, 16);
    check_all(
        "zero-size",
        &ok(vec![
            e.sum(&[0], false),
            e.exp(),
            e.t().and_then(|v| v.contiguous()),
            e.prod(&[0], true),
            x.narrow(0, 3, 0).and_then(|v| v.add(1)),
            x.narrow(1, 0, 0).and_then(|v| v.sum(&[-1], false)),
            ei.sum(&[-1], false),
            ei.any(&[-1], false),
            ei.expand(&[3, 2, 0]).and_then(|v| v.mul(2)),
            Tensor::cat(&[&e, &x.narrow(1, 0, 3).unwrap()], 0),
            Tensor::zeros(&[4, 0], DType::F64).mean(&[-1], false),
            e.unfold(1, 3, 1),
        ]),
    );
    // Found by a long run (`PROPTEST_CASES=12000`): a `cat` of empty views has no
    // step, and the kernel reading its result found the buffer unwritten here
    // (the executor starts empty buffers ready; this test's runner now does too).
    let b = input(&[2, 1], DType::Bool, 17);
    let empty = b.narrow(1, 1, 0).unwrap();
    let cat = Tensor::cat(&[&empty, &empty], 0).unwrap();
    check_all(
        "a kernel reads an empty cat",
        &ok(vec![cat.to_dtype(DType::I64).and_then(|v| v.mul(0))]),
    );
}

#[test]
fn every_element_width() {
    for dtype in [
        DType::Bool,
        DType::U8,
        DType::I16,
        DType::I32,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::I64,
    ] {
        let t = input(&[3, 4], dtype, 17);
        let s = input(&[12], dtype, 18);
        let w = t.clone();
        let _ = w.narrow(1, 3, 1).and_then(|v| v.copy_(&t.narrow(1, 0, 1)?));
        check_all(
            &format!("{dtype}"),
            &ok(vec![
                t.t().and_then(|v| v.contiguous()),
                t.flip(&[0, 1]).and_then(|v| v.eq(&t)),
                t.flip(&[1]).and_then(|v| v.add(&t)),
                s.as_strided(&[3, 3], &[3, 1], 3)
                    .and_then(|v| v.to_dtype(DType::F32)),
                s.as_strided(&[5, 4], &[2, 1], 0)
                    .and_then(|v| v.to_dtype(DType::I64)),
                t.t().and_then(|v| v.sum(&[0], false)),
                t.amax(&[1], false),
                t.select(0, -1).and_then(|v| v.mul(&t.select(0, 0)?)),
                s.unfold(0, 4, 4)
                    .and_then(|v| v.max_dim(-1, false).map(|m| m.1)),
                t.diagonal(1, 0, 1).and_then(|v| v.to_dtype(DType::F64)),
                t.expand(&[2, 3, 4]).and_then(|v| v.contiguous()),
                t.gt(0)
                    .and_then(|m| Tensor::where_cond(&m, &t, &t.flip(&[0])?)),
                Ok(w),
            ]),
        );
    }
}

#[test]
fn lengths_around_vector_widths_and_pages() {
    // Odd lengths end vector loops (f32x4, f64x2, i32x4) in scalar tails right
    // against the guard page; page-sized buffers end exactly at a page boundary.
    for (n, dtype) in [
        (1001, DType::F32),
        (1024, DType::F32),
        (1027, DType::I32),
        (511, DType::F64),
        (512, DType::F64),
        (4095, DType::U8),
        (2049, DType::I16),
    ] {
        let a = input(&[n], dtype, 19);
        let b = input(&[n], dtype, 20);
        let m = input(&[n / 7, 7], dtype, 21);
        check_all(
            &format!("{dtype}[{n}]"),
            &ok(vec![
                a.add(&b),
                a.mul(&b).and_then(|v| v.sub(&a)),
                a.flip(&[0]).and_then(|v| v.add(&b)),
                a.slice(0, Some(1), None, 2).and_then(|v| v.mul(2)),
                a.sum(&[0], false),
                m.t().and_then(|v| v.contiguous()),
                m.sum(&[-1], false),
                m.t().and_then(|v| v.amax(&[-1], false)),
            ]),
        );
    }
}

/// The guard pages work: a read one byte past the end (or before the start) of a
/// guarded buffer kills a child process with SIGSEGV. The child is this test binary
/// re-run on the ignored test below.
#[test]
fn a_read_past_a_guarded_buffer_faults() {
    use std::os::unix::process::ExitStatusExt;
    for side in ["past-end", "before-start", "empty"] {
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args(["--ignored", "--exact", "guard_fault_child", "--nocapture"])
            .env("GUARD_FAULT_SIDE", side)
            .output()
            .unwrap();
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGSEGV),
            "{side}: the child should die of SIGSEGV: {out:?}"
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("guard page hit"),
            "{side}: {out:?}"
        );
    }
}

/// The child of [`a_read_past_a_guarded_buffer_faults`]: reads outside a guarded
/// buffer on purpose.
#[test]
#[ignore = "run by a_read_past_a_guarded_buffer_faults in a child process"]
fn guard_fault_child() {
    let Ok(side) = std::env::var("GUARD_FAULT_SIDE") else {
        return;
    };
    guarded::report_faults();
    let bytes = [1u8, 2, 3, 4, 5];
    let (g, at) = match side.as_str() {
        "past-end" => {
            let g = Guarded::new(&bytes, Placement::AgainstEnd);
            let at = g.end();
            (g, at)
        }
        "before-start" => {
            let g = Guarded::new(&bytes, Placement::AgainstStart);
            let at = g.as_mut_ptr().wrapping_sub(1);
            (g, at)
        }
        _ => {
            let g = Guarded::new(&[], Placement::AgainstEnd);
            let at = g.as_mut_ptr();
            (g, at)
        }
    };
    // SAFETY: none: this reads a guard page on purpose, in a child process whose
    // death by SIGSEGV is what the parent test expects.
    let v = unsafe { std::ptr::read_volatile(at) };
    drop(g);
    panic!("read {v} outside a guarded buffer without a fault");
}
