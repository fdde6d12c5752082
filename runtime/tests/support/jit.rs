//! What the JIT tests share: a builder of hand-made [`LoopKernel`]s, a runner that
//! compiles one with `CpuModule` and calls it on byte buffers, byte views of
//! interpreter [`Buffer`]s, and a one-node interpreter run to compare with.
#![allow(dead_code)]

use half::{bf16, f16};
use lazyfuse_codegen::cpu::{CodegenError, CpuModule};
use lazyfuse_ir::kernel::{
    Affine, BufId, DynIndex, Expr, ExprId, ExprNode, LoopKernel, Param, ParamId, Stage, StoreOp,
    STATUS_SLOTS,
};
use lazyfuse_ir::{DType, Graph, InputId, Op};
use lazyfuse_runtime::jit_symbols::lookup;
use lazyfuse_runtime::Buffer;
use std::collections::HashMap;
use std::sync::Arc;

/// A loop kernel under construction.
pub struct Kb {
    /// the kernel so far
    pub k: LoopKernel,
}

impl Kb {
    /// An empty kernel over `dims`, the first `n_parallel` parallel.
    pub fn new(dims: &[usize], n_parallel: usize) -> Kb {
        Kb {
            k: LoopKernel {
                name: "test".into(),
                nodes: vec![],
                params: vec![],
                dims: dims.to_vec(),
                n_parallel,
                exprs: vec![],
                stores: vec![],
            },
        }
    }

    /// A param of `len` elements of `dtype`.
    pub fn param(&mut self, dtype: DType, len: usize, writes: bool) -> usize {
        let buf = BufId(self.k.params.len() as u32);
        self.k.params.push(Param {
            buf,
            dtype,
            len,
            writes,
        });
        self.k.params.len() - 1
    }

    /// An expression.
    pub fn push(&mut self, expr: Expr, dtype: DType, stage: Stage) -> ExprId {
        self.k.exprs.push(ExprNode { expr, dtype, stage });
        ExprId(self.k.exprs.len() as u32 - 1)
    }

    /// A load of param `p` at `offset + Σ strides·i`.
    pub fn load(&mut self, p: usize, offset: i64, strides: &[i64], stage: Stage) -> ExprId {
        let dtype = self.k.params[p].dtype;
        self.push(
            Expr::Load {
                param: ParamId(p as u32),
                index: Affine {
                    offset,
                    strides: strides.to_vec(),
                },
                dynamic: None,
            },
            dtype,
            stage,
        )
    }

    /// A gather-like load with a data-dependent term.
    pub fn load_dyn(&mut self, p: usize, strides: &[i64], d: DynIndex, stage: Stage) -> ExprId {
        let dtype = self.k.params[p].dtype;
        self.push(
            Expr::Load {
                param: ParamId(p as u32),
                index: Affine {
                    offset: 0,
                    strides: strides.to_vec(),
                },
                dynamic: Some(d),
            },
            dtype,
            stage,
        )
    }

    /// A store of `v` into param `p`.
    pub fn store(&mut self, p: usize, offset: i64, strides: &[i64], v: ExprId) {
        self.k.stores.push(StoreOp {
            param: ParamId(p as u32),
            index: Affine {
                offset,
                strides: strides.to_vec(),
            },
            value: v,
        });
    }
}

/// The output of a kernel call: the buffers after it and the status block.
pub struct Ran {
    /// every param's bytes
    pub bufs: Vec<Vec<u8>>,
    /// the status block
    pub status: [u64; STATUS_SLOTS],
}

/// Compiles `k` and calls it once per `(begin, end)` range on copies of `bufs`.
pub fn run_ranges(
    k: &LoopKernel,
    bufs: &[Vec<u8>],
    ranges: &[(u64, u64)],
) -> Result<Ran, CodegenError> {
    k.verify().expect("a valid kernel");
    let m = CpuModule::compile(&[k], &lookup)?;
    let mut bufs = bufs.to_vec();
    for (b, p) in bufs.iter().zip(&k.params) {
        assert_eq!(
            b.len(),
            p.len * p.dtype.size_in_bytes(),
            "buffer size of {p:?}"
        );
    }
    // Exactly-sized buffers; an empty one still needs a valid pointer.
    let mut ptrs: Vec<*mut u8> = bufs.iter_mut().map(|b| b.as_mut_ptr()).collect();
    let mut status = [0u64; STATUS_SLOTS];
    let f = m.entry(0);
    for &(b, e) in ranges {
        // SAFETY: each param pointer addresses a buffer of exactly the param's
        // length (checked above), the status block has STATUS_SLOTS words, the
        // range lies within the kernel's points, and `m` outlives the call.
        unsafe {
            f(
                ptrs.as_mut_ptr() as *const *mut u8,
                status.as_mut_ptr(),
                b,
                e,
            )
        };
    }
    Ok(Ran { bufs, status })
}

/// [`run_ranges`] over all the kernel's points in one call.
pub fn run(k: &LoopKernel, bufs: &[Vec<u8>]) -> Result<Ran, CodegenError> {
    let n = if k.n_parallel == 0 {
        1
    } else {
        k.parallel_points() as u64
    };
    run_ranges(k, bufs, &[(0, n)])
}

/// The little-endian bytes of a buffer (bool as 0/1, f16/bf16 as their bits).
pub fn bytes_of(b: &Buffer) -> Vec<u8> {
    fn le<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        v.iter().flat_map(|&x| f(x)).collect()
    }
    match b {
        Buffer::Bool(v) => v.iter().map(|&x| x as u8).collect(),
        Buffer::U8(v) => v.clone(),
        Buffer::I8(v) => le(v, i8::to_le_bytes),
        Buffer::I16(v) => le(v, i16::to_le_bytes),
        Buffer::I32(v) => le(v, i32::to_le_bytes),
        Buffer::I64(v) => le(v, i64::to_le_bytes),
        Buffer::U16(v) => le(v, u16::to_le_bytes),
        Buffer::U32(v) => le(v, u32::to_le_bytes),
        Buffer::U64(v) => le(v, u64::to_le_bytes),
        Buffer::F16(v) => le(v, |x: f16| x.to_bits().to_le_bytes()),
        Buffer::BF16(v) => le(v, |x: bf16| x.to_bits().to_le_bytes()),
        Buffer::F32(v) => le(v, f32::to_le_bytes),
        Buffer::F64(v) => le(v, f64::to_le_bytes),
        Buffer::Raw { bytes, .. } => bytes.clone(),
        other => panic!("no byte view of {}", other.dtype()),
    }
}

/// Element `i` of `bytes` of `dtype` as f64 (floats decoded; float8 codes as is),
/// for readable failure messages and tolerant compares.
pub fn element(dtype: DType, bytes: &[u8], i: usize) -> f64 {
    let s = dtype.size_in_bytes();
    let e = &bytes[i * s..(i + 1) * s];
    let mut w = [0u8; 8];
    w[..s].copy_from_slice(e);
    let u = u64::from_le_bytes(w);
    match dtype {
        DType::Bool | DType::U8 | DType::U16 | DType::U32 | DType::U64 => u as f64,
        DType::I8 => u as u8 as i8 as f64,
        DType::I16 => u as u16 as i16 as f64,
        DType::I32 => u as u32 as i32 as f64,
        DType::I64 => u as i64 as f64,
        DType::F16 => f16::from_bits(u as u16).to_f64(),
        DType::BF16 => bf16::from_bits(u as u16).to_f64(),
        DType::F32 => f32::from_bits(u as u32) as f64,
        DType::F64 => f64::from_bits(u),
        _ => u as f64,
    }
}

/// Whether element `i` is a NaN of a float dtype (float8 included, via decoding).
pub fn is_nan(dtype: DType, bytes: &[u8], i: usize) -> bool {
    if let Some(f) = lazyfuse_runtime::interp::float8::Format::of(dtype) {
        return f.decode(bytes[i]).is_nan();
    }
    dtype.is_floating_point() && element(dtype, bytes, i).is_nan()
}

/// Asserts that two byte buffers of `dtype` are equal element by element: the same
/// bits, or both NaN.
pub fn assert_same(dtype: DType, want: &[u8], got: &[u8], what: &str) {
    assert_eq!(want.len(), got.len(), "{what}: lengths");
    let s = dtype.size_in_bytes();
    for i in 0..want.len() / s {
        let (a, b) = (&want[i * s..(i + 1) * s], &got[i * s..(i + 1) * s]);
        if a == b || (is_nan(dtype, want, i) && is_nan(dtype, got, i)) {
            continue;
        }
        panic!(
            "{what}: element {i} differs: interpreter {} ({a:?}), jit {} ({b:?})",
            element(dtype, want, i),
            element(dtype, got, i)
        );
    }
}

/// Runs one graph node `op` (output `out`, shape `[n]`) on input buffers with the
/// interpreter.
pub fn interp(op: Op, out: DType, inputs: &[Buffer]) -> lazyfuse_runtime::Result<Buffer> {
    let mut g = Graph::new();
    let n = inputs[0].len();
    let mut ids = vec![];
    let mut map = HashMap::new();
    for (i, b) in inputs.iter().enumerate() {
        ids.push(g.add(Op::Input(InputId(i as u64)), b.dtype(), vec![n], &[]));
        map.insert(InputId(i as u64), Arc::new(b.clone()));
    }
    let y = g.add(op, out, vec![n], &ids);
    let r = lazyfuse_runtime::interp::execute(&g, &map, &[y])?;
    Ok((*r[0]).clone())
}

/// The elementwise kernel `out[i] = f(in0[i], in1[i], …)` over `n` points: loads of
/// every input, then `make(kb, loads)` builds the result expression.
pub fn elementwise(
    ins: &[DType],
    out: DType,
    n: usize,
    make: impl FnOnce(&mut Kb, &[ExprId]) -> ExprId,
) -> LoopKernel {
    let mut kb = Kb::new(&[n], 1);
    let mut loads = vec![];
    for &d in ins {
        let p = kb.param(d, n, false);
        loads.push(kb.load(p, 0, &[1], Stage::Outer(0)));
    }
    let o = kb.param(out, n, true);
    let v = make(&mut kb, &loads);
    kb.store(o, 0, &[1], v);
    kb.k
}

/// A buffer of `dtype` holding the values of `fs` (floats) or `is` (integers).
pub fn buffer(dtype: DType, fs: &[f64], is: &[i128]) -> Buffer {
    match dtype {
        DType::Bool => Buffer::from_vec(is.iter().map(|&v| v & 1 == 1).collect::<Vec<_>>()),
        DType::U8 => Buffer::from_vec(is.iter().map(|&v| v as u8).collect::<Vec<_>>()),
        DType::I8 => Buffer::from_vec(is.iter().map(|&v| v as i8).collect::<Vec<_>>()),
        DType::I16 => Buffer::from_vec(is.iter().map(|&v| v as i16).collect::<Vec<_>>()),
        DType::I32 => Buffer::from_vec(is.iter().map(|&v| v as i32).collect::<Vec<_>>()),
        DType::I64 => Buffer::from_vec(is.iter().map(|&v| v as i64).collect::<Vec<_>>()),
        DType::U16 => Buffer::from_vec(is.iter().map(|&v| v as u16).collect::<Vec<_>>()),
        DType::U32 => Buffer::from_vec(is.iter().map(|&v| v as u32).collect::<Vec<_>>()),
        DType::U64 => Buffer::from_vec(is.iter().map(|&v| v as u64).collect::<Vec<_>>()),
        DType::F16 => Buffer::from_vec(fs.iter().map(|&v| f16::from_f64(v)).collect::<Vec<_>>()),
        DType::BF16 => Buffer::from_vec(fs.iter().map(|&v| bf16::from_f64(v)).collect::<Vec<_>>()),
        DType::F32 => Buffer::from_vec(fs.iter().map(|&v| v as f32).collect::<Vec<_>>()),
        DType::F64 => Buffer::from_vec(fs.to_vec()),
        d => {
            let f = lazyfuse_runtime::interp::float8::Format::of(d).expect("a float8 dtype");
            Buffer::Raw {
                dtype: d,
                bytes: fs.iter().map(|&v| f.encode(v as f32)).collect(),
            }
        }
    }
}
