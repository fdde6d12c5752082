//! Float matmul at BLAS speed for [`MathMode::Fast`](lazyfuse_ir::kernel::MathMode):
//! the `gemm` crate's packed, cache-blocked micro-kernels (AVX2/AVX-512, chosen at run
//! time) on the executor's thread pool.
//!
//! The interpreter's routine (`interp::matmul`) stays the spec and what
//! [`MathMode::Exact`](lazyfuse_ir::kernel::MathMode) runs: it accumulates float32 in
//! float64 and walks `k` in order, which a blocked product does not. Here:
//! - float32 and float64 accumulate in their own type (as PyTorch's CPU BLAS does);
//! - float16 uses `gemm`'s float16 product, which computes in float32 and rounds the
//!   result once, as the interpreter does;
//! - bfloat16 (which `gemm` lacks) is widened to float32, multiplied, and rounded once
//!   per element: the interpreter's "accumulate in float32, round once" rule;
//! - other dtypes return `None` (the caller runs the interpreter's routine).
//!
//! Threads: `gemm` runs with `Parallelism::None` inside chunks of the executor's pool
//! (batches first, then row or column blocks of one product), so the process never has two
//! pools competing for the two cores, and the crate is built without rayon.

use crate::buffer::{Buffer, Element};
use crate::epilogue::Epilogue;
use crate::interp::matmul::Dims;
use crate::pool;
use half::{bf16, f16};
use lazyfuse_ir::kernel::EpilogueOp;

/// Below this many multiply-adds a product runs on the calling thread: waking the
/// pool costs more than it saves.
const PARALLEL_MIN_MACS: usize = 1 << 18;

/// Rows (or columns) of one product per chunk when a product is split (a multiple
/// of the micro-kernels' blocks, so each chunk packs whole panels).
const ROW_BLOCK_ALIGN: usize = 16;

/// `x @ y` with `gemm` for float16/bfloat16/float32/float64 operands of one dtype
/// (contiguous `[b, m, k]` and `[b, k, n]`), or `None` for any other dtype pair or
/// sizes that do not match `d` (the caller falls back to the interpreter, which
/// reports them).
pub(crate) fn matmul(x: &Buffer, y: &Buffer, d: Dims) -> Option<Buffer> {
    let (xs, ys) = (Strided::row_major(d.m, d.k), Strided::row_major(d.k, d.n));
    matmul_strided(x, &xs, y, &ys, d)
}

/// Where a `[b, rows, cols]` operand lies in its buffer: element `(i, r, c)` is at
/// `offset + i·batch + r·row + c·col` (a transposed operand swaps `row` and `col`;
/// a broadcast batch has `batch == 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Strided {
    pub(crate) offset: usize,
    pub(crate) batch: usize,
    pub(crate) row: usize,
    pub(crate) col: usize,
}

impl Strided {
    /// A contiguous `[b, rows, cols]` operand.
    pub(crate) fn row_major(rows: usize, cols: usize) -> Strided {
        Strided {
            offset: 0,
            batch: rows * cols,
            row: cols,
            col: 1,
        }
    }

    /// Whether every element of a `[b, rows, cols]` operand lies inside `len`.
    fn fits(&self, b: usize, rows: usize, cols: usize, len: usize) -> bool {
        if b == 0 || rows == 0 || cols == 0 {
            return true;
        }
        let last = [(b, self.batch), (rows, self.row), (cols, self.col)]
            .iter()
            .try_fold(self.offset, |acc, &(n, st)| {
                acc.checked_add((n - 1).checked_mul(st)?)
            });
        last.is_some_and(|l| l < len)
    }
}

/// `x @ y` as [`matmul`], the operands read in place through their strides (a
/// transposed or batch-broadcast operand is not copied first); `None` also when
/// an operand reaches outside its buffer.
pub(crate) fn matmul_strided(
    x: &Buffer,
    xs: &Strided,
    y: &Buffer,
    ys: &Strided,
    d: Dims,
) -> Option<Buffer> {
    matmul_strided_then(x, xs, y, ys, d, (&[], &[]))
}

/// [`matmul_strided`] followed by an epilogue (`ops`, their operands in
/// `inputs` by slot) applied to each chunk's block of the result: float32 and
/// float64 only where there are ops (`None` for other dtypes, or operands that
/// do not fit).
pub(crate) fn matmul_strided_then(
    x: &Buffer,
    xs: &Strided,
    y: &Buffer,
    ys: &Strided,
    d: Dims,
    (ops, inputs): (&[EpilogueOp], &[std::sync::Arc<Buffer>]),
) -> Option<Buffer> {
    if !xs.fits(d.b, d.m, d.k, x.len()) || !ys.fits(d.b, d.k, d.n, y.len()) {
        return None;
    }
    let shape = [d.b, d.m, d.n];
    Some(match (x, y) {
        (Buffer::F32(a), Buffer::F32(b)) => Buffer::from_vec(product(
            a,
            xs,
            b,
            ys,
            d,
            &Epilogue::new(ops, inputs, shape)?,
        )),
        (Buffer::F64(a), Buffer::F64(b)) => Buffer::from_vec(product(
            a,
            xs,
            b,
            ys,
            d,
            &Epilogue::new(ops, inputs, shape)?,
        )),
        _ if !ops.is_empty() => return None,
        (Buffer::F16(a), Buffer::F16(b)) => {
            Buffer::from_vec(product(a, xs, b, ys, d, &Epilogue::none(shape)))
        }
        (Buffer::BF16(a), Buffer::BF16(b)) => {
            let wide = |v: &[bf16]| v.iter().map(|e| e.to_f32()).collect::<Vec<f32>>();
            let out = product(&wide(a), xs, &wide(b), ys, d, &Epilogue::none(shape));
            Buffer::from_vec(out.into_iter().map(bf16::from_f32).collect::<Vec<_>>())
        }
        _ => return None,
    })
}

/// The element types `gemm` multiplies, with their zero.
pub(crate) trait GemmElement:
    Element + Copy + Send + Sync + std::ops::Add<Output = Self> + 'static
{
    const ZERO: Self;
    const ONE: Self;
}

impl GemmElement for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
}

impl GemmElement for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
}

impl GemmElement for f16 {
    const ZERO: Self = f16::ZERO;
    const ONE: Self = f16::ONE;
}

/// A raw output pointer the chunks share; each chunk writes a disjoint block.
#[derive(Clone, Copy)]
pub(crate) struct OutPtr<T>(pub(crate) *mut T);

impl<T> OutPtr<T> {
    /// The pointer (a method, so closures capture the `Sync` wrapper, not the field).
    pub(crate) fn get(self) -> *mut T {
        self.0
    }
}

impl<T: GemmElement> OutPtr<T> {
    /// Adds +0 to the `rows × cols` block from element `at` (row stride `stride`).
    /// gemm's vector paths (one row or one column) and its k ≤ 2 path start each
    /// sum from its first product, so a sum of negative zeros stays -0; PyTorch's
    /// sums (and gemm's other paths) start from +0 and give +0. Adding zero turns
    /// -0 into +0 and leaves every other value as it is, so the result does not
    /// depend on which path the operands' shape picks.
    ///
    /// # Safety
    /// The block lies inside the allocation, and no other thread reads or writes
    /// it meanwhile.
    pub(crate) unsafe fn plus_zero(self, at: usize, rows: usize, cols: usize, stride: usize) {
        for r in 0..rows {
            // SAFETY: row `r` of the block lies inside the allocation and is this
            // caller's alone (the function's contract).
            let row = unsafe { std::slice::from_raw_parts_mut(self.0.add(at + r * stride), cols) };
            for v in row {
                *v = *v + T::ZERO;
            }
        }
    }
}

/// How a batched product `[b, m, k] @ [b, k, n]` is cut into chunks of the
/// executor's pool: batch ranges when there are enough batches to share, else
/// blocks of each product (`per_batch` of them, `span` rows or columns each). A
/// chunk packs its own copy of the operand its cut does not divide (all of `y`
/// for a row block, all of `x` for a column block), so the cut goes across the
/// larger one.
pub(crate) struct Chunks {
    /// how many chunks
    pub(crate) count: usize,
    per_batch: usize,
    span: usize,
    by_rows: bool,
    d: Dims,
}

impl Chunks {
    /// The chunks of product `d`, its blocks rows (`by_rows`) or columns; one
    /// chunk below [`PARALLEL_MIN_MACS`] or on one thread.
    pub(crate) fn new(d: Dims, by_rows: bool) -> Chunks {
        let Dims { b, m, k, n } = d;
        let threads = pool::threads().max(1);
        let macs = b.saturating_mul(m).saturating_mul(n).saturating_mul(k);
        let side = if by_rows { m } else { n };
        let (count, per_batch, span) = if macs < PARALLEL_MIN_MACS || threads == 1 {
            (1, 1, side)
        } else if b >= threads {
            (b.min(threads * 4), 1, side)
        } else {
            let want = threads.div_ceil(b);
            let span = side
                .div_ceil(want)
                .next_multiple_of(ROW_BLOCK_ALIGN)
                .clamp(1, side);
            let per_batch = side.div_ceil(span);
            (b * per_batch, per_batch, span)
        };
        Chunks {
            count,
            per_batch,
            span,
            by_rows,
            d,
        }
    }

    /// Chunk `c`'s batches `[b0, b1)`, rows `[r0, r1)` and columns `[c0, c1)`.
    pub(crate) fn chunk(&self, c: usize) -> (usize, usize, (usize, usize), (usize, usize)) {
        let Dims { b, m, n, .. } = self.d;
        if self.per_batch == 1 {
            return (c * b / self.count, (c + 1) * b / self.count, (0, m), (0, n));
        }
        let (bi, blk) = (c / self.per_batch, c % self.per_batch);
        let side = if self.by_rows { m } else { n };
        let cut = (blk * self.span, ((blk + 1) * self.span).min(side));
        if self.by_rows {
            (bi, bi + 1, cut, (0, n))
        } else {
            (bi, bi + 1, (0, m), cut)
        }
    }
}

// SAFETY: the pointer is only used by `product`'s chunks, which write disjoint
// blocks of one live allocation that outlives `pool::parallel_for`.
unsafe impl<T> Send for OutPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for OutPtr<T> {}

/// The batched product of contiguous row-major operands.
fn product<T: GemmElement + PartialOrd>(
    x: &[T],
    xs: &Strided,
    y: &[T],
    ys: &Strided,
    d: Dims,
    epi: &Epilogue<T>,
) -> Vec<T> {
    let Dims { b, m, k, n } = d;
    let len = b * m * n;
    // (the one caller makes the epilogue for `d`; its blocks are `d`'s)
    debug_assert_eq!(epi.shape(), [b, m, n]);
    if len == 0 || k == 0 {
        let mut out = vec![T::ZERO; len];
        epi.apply_all(&mut out);
        return out;
    }
    // gemm stores every element (`read_dst == false`): a kept buffer needs no
    // zeroing first
    let mut out = T::into_vec(crate::buffer_cache::take_for_overwrite(T::DTYPE, len))
        .unwrap_or_else(|_| vec![T::ZERO; len]);
    // a range of rows where the product is taller than wide, of columns otherwise
    // (see `Chunks::new`)
    let chunks = Chunks::new(d, m >= n);
    let dst = OutPtr(out.as_mut_ptr());
    let body = |c: usize| {
        let (b0, b1, (r0, r1), (c0, c1)) = chunks.chunk(c);
        for bi in b0..b1 {
            // SAFETY (pointers): every element the operands' strides reach lies in
            // `x` and `y` (`Strided::fits`, checked by the caller), and rows
            // `r0..r1` and columns `c0..c1` are among the checked ones.
            let lhs = unsafe { x.as_ptr().add(xs.offset + bi * xs.batch + r0 * xs.row) };
            let rhs = unsafe { y.as_ptr().add(ys.offset + bi * ys.batch + c0 * ys.col) };
            let first = bi * m * n + r0 * n + c0;
            // SAFETY: `lhs` reaches `(r1 - r0) × k` elements and `rhs` `k × (c1 - c0)`
            // through their strides, all inside their buffers (above); the
            // destination block starts at row `r0`, column `c0` of batch `bi` of
            // `out` (`b*m*n` elements) and spans rows `r0..r1` × columns `c0..c1`
            // with row stride `n`, which no other chunk writes; `read_dst == false`
            // with `alpha == 0` means the destination is only written.
            unsafe {
                gemm::gemm(
                    r1 - r0,
                    c1 - c0,
                    k,
                    dst.get().add(first),
                    1,
                    n as isize,
                    false,
                    lhs,
                    xs.col as isize,
                    xs.row as isize,
                    rhs,
                    ys.col as isize,
                    ys.row as isize,
                    T::ZERO,
                    T::ONE,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
            }
            // SAFETY (both): this chunk's block of `out` (rows `r0..r1` × columns
            // `c0..c1` of batch `bi`, row stride `n`) lies inside `out`, and no
            // other chunk reads or writes it; the epilogue's operands were checked
            // for this product's shape.
            if !epi.is_empty() {
                unsafe { epi.apply(dst, bi, (r0, r1), (c0, c1)) };
            } else if r1 - r0 <= 1 || c1 - c0 <= 1 || k <= 2 {
                // (-0 sums of gemm's special paths: see `OutPtr::plus_zero`)
                unsafe { dst.plus_zero(first, r1 - r0, c1 - c0, n) };
            }
        }
    };
    pool::parallel_for(chunks.count, &body);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::interp::matmul::matmul as reference;

    /// `len` deterministic values in [-1, 1] (3 decimals) for `seed`.
    pub(crate) fn data(len: usize, seed: u32) -> Vec<f64> {
        (0..len)
            .map(|i| {
                let h = (i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 16;
                (h % 2001) as f64 / 1000.0 - 1.0
            })
            .collect()
    }

    /// Max |fast - exact| over max(1, |exact|), as f64.
    fn rel_err(fast: &Buffer, exact: &Buffer) -> f64 {
        let f = |b: &Buffer| -> Vec<f64> {
            match b {
                Buffer::F32(v) => v.iter().map(|&e| e as f64).collect(),
                Buffer::F64(v) => v.clone(),
                Buffer::F16(v) => v.iter().map(|e| e.to_f64()).collect(),
                Buffer::BF16(v) => v.iter().map(|e| e.to_f64()).collect(),
                _ => panic!("not a float buffer"),
            }
        };
        let (a, b) = (f(fast), f(exact));
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
            .fold(0.0, f64::max)
    }

    fn check(d: Dims, tol: [f64; 4]) {
        let (xs, ys) = (data(d.b * d.m * d.k, 1), data(d.b * d.k * d.n, 7));
        let bufs: [(Buffer, Buffer); 4] = [
            (
                Buffer::from_vec(xs.iter().map(|&v| v as f32).collect::<Vec<_>>()),
                Buffer::from_vec(ys.iter().map(|&v| v as f32).collect::<Vec<_>>()),
            ),
            (Buffer::from_vec(xs.clone()), Buffer::from_vec(ys.clone())),
            (
                Buffer::from_vec(xs.iter().map(|&v| f16::from_f64(v)).collect::<Vec<_>>()),
                Buffer::from_vec(ys.iter().map(|&v| f16::from_f64(v)).collect::<Vec<_>>()),
            ),
            (
                Buffer::from_vec(xs.iter().map(|&v| bf16::from_f64(v)).collect::<Vec<_>>()),
                Buffer::from_vec(ys.iter().map(|&v| bf16::from_f64(v)).collect::<Vec<_>>()),
            ),
        ];
        for ((x, y), tol) in bufs.iter().zip(tol) {
            let fast = matmul(x, y, d).expect("a float dtype");
            let exact = reference(x, y, d).unwrap();
            assert_eq!(fast.dtype(), exact.dtype());
            let e = rel_err(&fast, &exact);
            assert!(e <= tol, "{} {d:?}: error {e} > {tol}", x.dtype());
        }
    }

    #[test]
    fn a_reused_buffer_leaves_no_trace_in_the_product() {
        // The product is stored into a kept buffer as it is (not zeroed): a freed
        // buffer of the same size full of NaN must not show through.
        let d = Dims {
            b: 1,
            m: 128,
            k: 3,
            n: 160,
        };
        let len = d.m * d.n;
        assert!(len * 4 >= crate::buffer_cache::MIN_CACHED_BYTES);
        let (x, y) = (data(d.m * d.k, 3), data(d.k * d.n, 5));
        let x = Buffer::from_vec(x.iter().map(|&v| v as f32).collect::<Vec<_>>());
        let y = Buffer::from_vec(y.iter().map(|&v| v as f32).collect::<Vec<_>>());
        for _ in 0..3 {
            let stale = Buffer::from_vec(vec![f32::NAN; len]);
            crate::buffer_cache::recycle(std::sync::Arc::new(stale));
            let fast = matmul(&x, &y, d).unwrap();
            assert!(rel_err(&fast, &reference(&x, &y, d).unwrap()) <= 1e-5);
        }
        // An empty contracted dim is zeros, whatever is kept.
        let e = Dims { k: 0, ..d };
        let z = Buffer::from_vec(Vec::<f32>::new());
        crate::buffer_cache::recycle(std::sync::Arc::new(Buffer::from_vec(vec![f32::NAN; len])));
        assert_eq!(matmul(&z, &z, e), Some(Buffer::from_vec(vec![0f32; len])));
    }

    #[test]
    fn sums_of_negative_zeros_are_positive_zero_on_every_path() {
        // 0 × -1 = -0 for every product: a sum from a zero accumulator is +0, as
        // PyTorch's and the interpreter's are, whichever gemm path the shape and the
        // strides pick (one row, one column, k ≤ 2, a broadcast column, the kernels).
        let shapes = [
            (1, 5, 3),
            (5, 1, 3),
            (4, 4, 2),
            (4, 4, 1),
            (6, 7, 9),
            (40, 40, 40),
        ];
        for (m, n, k) in shapes {
            let d = Dims { b: 1, m, k, n };
            let x = Buffer::from_vec(vec![0f64; m * k]);
            let y = Buffer::from_vec(vec![-1f64; k * n]);
            let broadcast = Strided {
                offset: 0,
                batch: 0,
                row: 1,
                col: 0,
            };
            let xs = [Strided::row_major(m, k), broadcast];
            for xs in xs {
                let out = matmul_strided(&x, &xs, &y, &Strided::row_major(k, n), d).unwrap();
                for (what, out) in [("gemm", out), ("interp", reference(&x, &y, d).unwrap())] {
                    let Buffer::F64(v) = &out else {
                        panic!("a float64 product is float64");
                    };
                    assert!(
                        v.iter().all(|e| *e == 0.0 && e.is_sign_positive()),
                        "{what}: {m}x{k} @ {k}x{n} with {xs:?}: {v:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn matches_the_interpreter_within_rounding() {
        // Tolerances: a few ulps of the accumulated magnitude (k terms of |v| ≤ 1)
        // for f32/f64; one rounding of the result (plus f32 accumulation) for f16/bf16.
        for d in [
            Dims {
                b: 1,
                m: 1,
                k: 1,
                n: 1,
            },
            Dims {
                b: 1,
                m: 7,
                k: 13,
                n: 5,
            },
            Dims {
                b: 3,
                m: 33,
                k: 70,
                n: 17,
            },
            Dims {
                b: 1,
                m: 130,
                k: 257,
                n: 66,
            },
            Dims {
                b: 2,
                m: 200,
                k: 300,
                n: 100,
            },
            Dims {
                b: 9,
                m: 64,
                k: 64,
                n: 64,
            },
            Dims {
                b: 1,
                m: 1,
                k: 1000,
                n: 1,
            },
        ] {
            check(d, [2e-5 * d.k as f64, 1e-13 * d.k as f64, 2e-3, 1.6e-2]);
        }
    }

    #[test]
    fn empty_and_other_dtypes() {
        let d = Dims {
            b: 2,
            m: 0,
            k: 3,
            n: 4,
        };
        let x = Buffer::from_vec(Vec::<f32>::new());
        let y = Buffer::from_vec(vec![1f32; 24]);
        assert_eq!(matmul(&x, &y, d), Some(Buffer::from_vec(Vec::<f32>::new())));
        let d = Dims {
            b: 1,
            m: 2,
            k: 0,
            n: 2,
        };
        let z = Buffer::from_vec(Vec::<f32>::new());
        assert_eq!(matmul(&z, &z, d), Some(Buffer::from_vec(vec![0f32; 4])));
        let i = Buffer::from_vec(vec![1i32; 4]);
        let d = Dims {
            b: 1,
            m: 2,
            k: 2,
            n: 2,
        };
        assert_eq!(matmul(&i, &i, d), None);
        // Mismatched sizes go back to the interpreter, which reports them.
        let f = Buffer::from_vec(vec![1f32; 3]);
        assert_eq!(matmul(&f, &f, d), None);
    }
}
