//! The random program generator shared by `tests/random_graphs.rs` (realize order)
//! and `tests/passes_differential.rs` (graph passes on and off): random dtypes,
//! shapes, elementwise ops, reductions, views, in-place writes, casts, `where`,
//! `matmul`, `cat`, the indexing/shaping ops (`gather`, `scatter_add`, `take`, `flip`,
//! `roll`, `pad`, …), the pointwise math ops and activations, and creation ops
//! (random ones from a generator seeded at the start of every build). Included by
//! those tests with `#[path]`; it is no test target of its own.

use lazyfuse::{BinaryOp, DType, Result, Scalar, Tensor};
use proptest::prelude::*;

const DTYPES: [DType; 9] = [
    DType::Bool,
    DType::U8,
    DType::I8,
    DType::I32,
    DType::I64,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
];
const SHAPES: [&[usize]; 6] = [&[2, 3], &[3], &[1, 3], &[2, 1], &[], &[3, 3]];
const BINARY: [BinaryOp; 12] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::DivFloor,
    BinaryOp::Remainder,
    BinaryOp::Pow,
    BinaryOp::Maximum,
    BinaryOp::Lt,
    BinaryOp::Eq,
    BinaryOp::BitwiseXor,
    BinaryOp::Atan2,
];

/// One step of a program; indices pick tensors from the pool modulo its length.
#[derive(Clone, Debug)]
pub enum Step {
    Binary(usize, usize, usize),
    BinaryScalar(usize, usize, i8),
    Unary(usize, usize),
    Reduce(usize, usize, bool),
    View(usize, usize),
    Inplace(usize, usize, usize),
    Fill(usize, i8),
    Where(usize, usize, usize),
    Cast(usize, usize),
    Matmul(usize, usize),
    Cat(usize, usize),
    /// an indexing/shaping op of `a`, with in-range indices made from `b`'s values
    Index(usize, usize, usize),
    /// a pointwise math op or activation (some in place)
    Pointwise(usize, usize),
    /// One of the binary/ternary pointwise math ops, in place or through `out=`.
    BinaryPointwise(usize, usize, usize, usize),
    /// A creation op (`*_like`, `eye`, `linspace`, `rand`, `randn`, `randint`).
    Create(usize, usize, usize),
}

pub fn step() -> impl Strategy<Value = Step> {
    let i = || 0..64usize;
    prop_oneof![
        (i(), i(), i()).prop_map(|(o, a, b)| Step::Binary(o, a, b)),
        (i(), i(), any::<i8>()).prop_map(|(o, a, v)| Step::BinaryScalar(o, a, v)),
        (i(), i()).prop_map(|(o, a)| Step::Unary(o, a)),
        (i(), i(), any::<bool>()).prop_map(|(o, a, k)| Step::Reduce(o, a, k)),
        (i(), i()).prop_map(|(o, a)| Step::View(o, a)),
        (i(), i(), i()).prop_map(|(o, a, b)| Step::Inplace(o, a, b)),
        (i(), any::<i8>()).prop_map(|(a, v)| Step::Fill(a, v)),
        (i(), i(), i()).prop_map(|(c, a, b)| Step::Where(c, a, b)),
        (i(), i()).prop_map(|(a, d)| Step::Cast(a, d)),
        (i(), i()).prop_map(|(a, b)| Step::Matmul(a, b)),
        (i(), i()).prop_map(|(a, b)| Step::Cat(a, b)),
        (i(), i(), i()).prop_map(|(o, a, b)| Step::Index(o, a, b)),
        (i(), i()).prop_map(|(o, a)| Step::Pointwise(o, a)),
        (i(), i(), i(), i()).prop_map(|(o, a, b, c)| Step::BinaryPointwise(o, a, b, c)),
        (i(), i(), i()).prop_map(|(o, a, d)| Step::Create(o, a, d)),
    ]
}

/// A starting tensor: dtype, shape and a seed for its values.
pub fn source() -> impl Strategy<Value = (usize, usize, u64)> {
    (0..DTYPES.len(), 0..SHAPES.len(), any::<u64>())
}

fn make_source((d, s, seed): (usize, usize, u64)) -> Tensor {
    let shape = SHAPES[s];
    let n: usize = shape.iter().product();
    // Small integers (some zero, some negative) so integer ops stay interesting.
    let values: Vec<f64> = (0..n)
        .map(|i| {
            ((seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(i as u64 * 1442695040888963407)
                >> 33)
                % 7) as f64
                - 2.0
        })
        .collect();
    let t = Tensor::from_vec(values, shape).unwrap();
    t.to_dtype(DTYPES[d]).unwrap()
}

fn apply(pool: &mut Vec<Tensor>, s: &Step, device: lazyfuse::Device) {
    let pick = |i: usize| pool[i % pool.len()].clone();
    let made: Result<Tensor> = match *s {
        Step::Binary(o, a, b) => Tensor::binary(BINARY[o % BINARY.len()], &pick(a), &pick(b)),
        Step::BinaryScalar(o, a, v) => {
            let op = BINARY[o % BINARY.len()];
            if v % 2 == 0 {
                Tensor::binary(op, &pick(a), v as i64)
            } else {
                Tensor::binary(op, f64::from(v) / 4.0, &pick(a))
            }
        }
        Step::Unary(o, a) => {
            let t = pick(a);
            match o % 10 {
                0 => t.neg(),
                1 => t.abs(),
                2 => t.exp(),
                3 => t.sqrt(),
                4 => t.sigmoid(),
                5 => t.floor(),
                6 => t.bitwise_not(),
                8 => t.reciprocal(),
                9 => t.rsqrt(),
                _ => t.clamp(Some(Scalar::Int(-1)), Some(Scalar::Float(1.5))),
            }
        }
        Step::Reduce(o, a, keepdim) => {
            let t = pick(a);
            match o % 17 {
                0 => t.sum(&[-1], keepdim),
                1 => t.mean(&[], keepdim),
                2 => t.amax(&[0], keepdim),
                3 => t.argmax(Some(-1), keepdim),
                4 => t.var(&[], 1, keepdim),
                5 => t.softmax(0),
                // the reductions and scans of src/ops/reduce_special.rs and scan.rs
                7 => t.nansum(&[0], keepdim),
                8 => t.any(&[-1], keepdim),
                9 => t.logsumexp(&[-1], keepdim),
                10 => t.count_nonzero(&[0]),
                11 => t.norm(2.0, &[], keepdim),
                12 => t.max_dim(-1, keepdim).map(|(v, _)| v),
                13 => t.min_dim(0, keepdim).map(|(_, i)| i),
                14 => t.cumprod(0),
                15 => t.cummax(-1).map(|(_, i)| i),
                16 => t.logcumsumexp(-1),
                _ => t.cumsum(-1),
            }
        }
        Step::View(o, a) => {
            let t = pick(a);
            match o % 6 {
                0 => t.t(),
                1 => t.unsqueeze(0),
                2 => t.reshape(&[-1]),
                3 => t.expand(&[2, -1, -1]),
                4 => t.slice(-1, Some(1), None, 1),
                _ => t.contiguous(),
            }
        }
        Step::Inplace(o, a, b) => {
            let (dst, src) = (pick(a), pick(b));
            let done = match o % 4 {
                0 => dst.add_(&src),
                1 => dst.mul_(&src),
                2 => dst.copy_(&src),
                _ => dst.sub_(1),
            };
            done.map(|()| dst)
        }
        Step::Fill(a, v) => {
            let dst = pick(a);
            dst.fill_(v as i64).map(|()| dst)
        }
        Step::Where(c, a, b) => pick(c)
            .ne(0)
            .and_then(|cond| Tensor::where_cond(&cond, &pick(a), &pick(b))),
        Step::Cast(a, d) => pick(a).to_dtype(DTYPES[d % DTYPES.len()]),
        Step::Matmul(a, b) => pick(a).matmul(&pick(b)),
        Step::Cat(a, b) => Tensor::cat(&[&pick(a), &pick(b)], 0),
        Step::Index(o, a, b) => index_step(o, &pick(a), &pick(b)),
        Step::Pointwise(o, a) => {
            let t = pick(a);
            match o % 12 {
                0 => t.erf(),
                1 => t.log1p(),
                2 => t.sgn(),
                3 => t.isfinite(),
                4 => t.nan_to_num(None, None, Some(-3.0)),
                5 => t.gelu(lazyfuse::GeluApproximate::Tanh),
                6 => t.silu(),
                7 => t.hardtanh(-1.0, 1.5),
                8 => t.logit(Some(0.1)),
                9 => t.round_decimals(1),
                10 => t.expm1_().map(|()| t),
                _ => t.square(),
            }
        }
        Step::BinaryPointwise(o, a, b, c) => pointwise(o, &pick(a), &pick(b), &pick(c)),
        Step::Create(o, a, d) => {
            let (t, dtype) = (pick(a), DTYPES[d % DTYPES.len()]);
            match o % 7 {
                0 => t.zeros_like(Some(dtype)),
                1 => t.full_like(2, None),
                2 => Tensor::eye(3, Some(2), dtype),
                3 => Tensor::linspace(-1.0, 2.0, 5, dtype),
                4 => Tensor::rand(&t.shape(), dtype),
                5 => Tensor::randn(&t.shape(), dtype),
                _ => Tensor::randint(-2, 3, &t.shape(), dtype),
            }
            // A new tensor is made on the CPU, then moved where the program runs.
            .and_then(|t| t.to_device(device))
        }
    };
    if let Ok(t) = made {
        pool.push(t);
    }
}

/// The indexing and shaping ops; index values are `b`'s reduced modulo the size they
/// address, so that every index is in range (an out-of-range one would fail at
/// realize, which `observe` allows only for division by zero).
fn index_step(o: usize, t: &Tensor, b: &Tensor) -> Result<Tensor> {
    let last = t.shape().last().copied().unwrap_or(1) as i64;
    let first = t.shape().first().copied().unwrap_or(1) as i64;
    let index_of = |u: &Tensor, size: i64| u.to_dtype(DType::I64)?.remainder(size);
    match o % 10 {
        0 => t.flip(&[0]),
        1 => t.roll(&[1], &[-1]),
        2 => t.tril(0),
        3 => t.tile(&[2]),
        4 => t.pad(&[1, 0], 0),
        5 => t.gather(-1, &index_of(t, last)?),
        6 => t.index_select(0, &index_of(&b.reshape(&[-1])?, first)?),
        7 => t.take(&index_of(b, t.numel() as i64)?),
        8 => t.scatter_add(-1, &index_of(t, last)?, t),
        _ => t.masked_select(&b.gt(0)?),
    }
}

/// The binary/ternary pointwise math ops (values, in-place forms and `out=`).
fn pointwise(o: usize, a: &Tensor, b: &Tensor, c: &Tensor) -> Result<Tensor> {
    let written = |r: Result<()>| r.map(|()| a.clone());
    match o % 16 {
        0 => a.fmax(b),
        1 => a.fmin(b),
        2 => a.hypot(b),
        3 => a.copysign(b),
        4 => a.logaddexp(b),
        5 => a.xlogy(b),
        6 => a.nextafter(b),
        7 => a.bitwise_left_shift(b),
        8 => a.gcd(b),
        9 => a.clamp_tensor(Some(b), Some(c)),
        10 => a.lerp(b, c),
        11 => a.addcmul(b, c, 2),
        12 => a.addcdiv(b, c, 0.5),
        13 => b.ne(0).and_then(|m| a.masked_fill(&m, 3)),
        14 => written(a.clamp_min_(b)),
        _ => a.maximum(b).and_then(|m| written(a.write_out(&m))),
    }
}
/// Builds hold the global random generator: each build seeds it, and no other build
/// (another test's thread) may draw in between.
static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[allow(dead_code)] // the differentials build through `build_on`
pub fn build(sources: &[(usize, usize, u64)], steps: &[Step]) -> Vec<Tensor> {
    build_on(sources, steps, lazyfuse::Device::CPU)
}

/// [`build`] with every tensor on `device`: the sources and the created tensors are
/// moved there, so every op runs there.
#[allow(dead_code)] // only the device tests build elsewhere than on the CPU
pub fn build_on(
    sources: &[(usize, usize, u64)],
    steps: &[Step],
    device: lazyfuse::Device,
) -> Vec<Tensor> {
    let _guard = BUILDING.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::manual_seed(0x5eed);
    let mut pool: Vec<Tensor> = sources
        .iter()
        .map(|&s| make_source(s).to_device(device).unwrap())
        .collect();
    for s in steps {
        apply(&mut pool, s, device);
    }
    pool
}

/// [`build`] from leaves that require grad (the float sources; the pool starts from
/// copies of them, so in-place steps write non-leaves), followed by `backward` of
/// the sum of every float tensor of the pool that requires grad. Returns the
/// leaves' gradients (`None` when a leaf got none) or the backward's error text.
#[allow(dead_code)] // only the gradient differential builds this
pub fn build_with_grad(
    sources: &[(usize, usize, u64)],
    steps: &[Step],
) -> Result<Vec<Option<Tensor>>, String> {
    let _guard = BUILDING.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::manual_seed(0x5eed);
    let mut leaves = Vec::new();
    let mut pool: Vec<Tensor> = Vec::new();
    for &s in sources {
        let t = make_source(s);
        let d = t.dtype();
        if d.is_floating_point() && !d.is_float8() {
            let leaf = t.requires_grad_(true).unwrap();
            pool.push(leaf.mul(1).unwrap());
            leaves.push(leaf);
        } else {
            pool.push(t);
        }
    }
    for s in steps {
        apply(&mut pool, s, lazyfuse::Device::CPU);
    }
    let mut total: Option<Tensor> = None;
    for t in pool.iter().filter(|t| t.requires_grad()) {
        let part = t.to_dtype(DType::F64).unwrap().sum(&[], false).unwrap();
        total = Some(match total {
            Some(acc) => acc.add(&part).unwrap(),
            None => part,
        });
    }
    if let Some(total) = total {
        total.backward().map_err(|e| e.to_string())?;
    }
    Ok(leaves.iter().map(Tensor::grad).collect())
}

/// The printed value, or the error's text; checks dtype and shape on success.
pub fn observe(t: &Tensor) -> String {
    let (dtype, shape) = (t.dtype(), t.shape());
    match t.realize() {
        Ok(r) => {
            assert_eq!((r.dtype(), r.shape()), (dtype, shape.clone()));
            format!("{r}")
        }
        Err(e) => {
            assert_eq!(
                e.to_string(),
                "ZeroDivisionError",
                "only integer division by zero may fail at realize"
            );
            e.to_string()
        }
    }
}
