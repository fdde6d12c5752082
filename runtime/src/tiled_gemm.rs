//! Float products whose operands are strided views that no pair of strides
//! describes: a convolution's windows `[N, C, kh, kw, OH, OW]` of its padded
//! input, read as the `[N, C·kh·kw, OH·OW]` operand of its product. Rather than
//! copying the whole column matrix first (the im2col copy, many times the
//! input's size), each chunk gathers one tile of the operand at a time into a
//! buffer that stays in cache and multiplies it with `gemm`, accumulating over
//! the contracted dim's tiles.
//!
//! Chunks: batches when there are enough to share, else column blocks of each
//! product (so that an image's product is shared by the threads too). An operand
//! that one row stride and one column stride describe is read in place, as
//! [`crate::blas`] reads it; the others are gathered per tile.

use crate::blas::{Chunks, GemmElement, OutPtr};
use crate::interp::matmul::Dims;
use crate::pool;

/// Rows of the contracted dim per tile.
const TILE_K: usize = 256;

/// Columns per tile of the right operand (with `TILE_K`, 512 KiB of float32).
const TILE_N: usize = 512;

/// A `[b, rows, cols]` operand whose each dim is a run of dims `(size, stride)`
/// (row-major within the run) from `offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Grouped {
    pub(crate) offset: usize,
    pub(crate) groups: [Vec<(usize, usize)>; 3],
}

impl Grouped {
    /// The buffer offset of each index of group `g` (row-major over its dims).
    fn table(&self, g: usize) -> Vec<usize> {
        let mut t = vec![0usize];
        for &(size, stride) in &self.groups[g] {
            t = t
                .iter()
                .flat_map(|&base| (0..size).map(move |i| base + i * stride))
                .collect();
        }
        t
    }

    /// The one stride of group `g`, where a single dim (or none) makes it up.
    fn single(&self, g: usize) -> Option<usize> {
        match self.groups[g].as_slice() {
            [] => Some(0),
            [(_, s)] => Some(*s),
            dims => {
                // size-1 dims move nothing
                let moving: Vec<usize> = dims.iter().filter(|d| d.0 > 1).map(|d| d.1).collect();
                match moving.as_slice() {
                    [] => Some(0),
                    [s] => Some(*s),
                    _ => None,
                }
            }
        }
    }

    /// Whether every element of the operand lies inside `len`.
    fn fits(&self, len: usize) -> bool {
        if self.groups.iter().flatten().any(|d| d.0 == 0) {
            return true;
        }
        self.groups
            .iter()
            .flatten()
            .try_fold(self.offset, |acc, &(n, st)| {
                acc.checked_add((n - 1).checked_mul(st)?)
            })
            .is_some_and(|last| last < len)
    }
}

/// How a chunk reads one operand: in place through two strides, or by gathering
/// tiles through offset tables.
enum Reader {
    Strided {
        batch: usize,
        row: usize,
        col: usize,
    },
    Gathered {
        batch: Vec<usize>,
        rows: Vec<usize>,
        cols: Vec<usize>,
        /// the size of the columns' last dim where its stride is 1 (its
        /// elements are copied as runs), else 1
        run: usize,
    },
}

impl Reader {
    fn new(o: &Grouped) -> Reader {
        match (o.single(0), o.single(1), o.single(2)) {
            (Some(batch), Some(row), Some(col)) => Reader::Strided { batch, row, col },
            _ => Reader::Gathered {
                batch: o.table(0),
                rows: o.table(1),
                cols: o.table(2),
                run: match o.groups[2].last() {
                    Some(&(size, 1)) => size.max(1),
                    _ => 1,
                },
            },
        }
    }
}

/// Appends columns `c0..c1` of the row at `base` to `tile`: `cols` gives each
/// column's offset, and runs of `run` columns (aligned to multiples of `run`)
/// are contiguous in `src`.
fn gather_row<T: Copy>(
    tile: &mut Vec<T>,
    src: &[T],
    base: usize,
    cols: &[usize],
    (c0, c1): (usize, usize),
    run: usize,
) {
    let mut j = c0;
    while j < c1 {
        let end = ((j / run + 1) * run).min(c1);
        let at = base + cols[j];
        tile.extend_from_slice(&src[at..at + (end - j)]);
        j = end;
    }
}

/// `x @ y` for operands described by [`Grouped`] (the product's `Dims`), or
/// `None` where a group's size does not match `d` or an operand reaches outside
/// its buffer.
pub(crate) fn product<T: GemmElement>(
    x: &[T],
    xo: &Grouped,
    y: &[T],
    yo: &Grouped,
    d: Dims,
) -> Option<Vec<T>> {
    let Dims { b, m, k, n } = d;
    let size = |o: &Grouped, g: usize| o.groups[g].iter().map(|d| d.0).product::<usize>();
    let sizes_match = [(xo, [b, m, k]), (yo, [b, k, n])]
        .iter()
        .all(|(o, s)| (0..3).all(|g| size(o, g) == s[g]));
    if !sizes_match || !xo.fits(x.len()) || !yo.fits(y.len()) {
        return None;
    }
    let len = b * m * n;
    if len == 0 || k == 0 {
        return Some(vec![T::ZERO; len]);
    }
    // every element is stored by the first tile of the contracted dim
    // (`read_dst == false`): a kept buffer needs no zeroing
    let mut out = T::into_vec(crate::buffer_cache::take_for_overwrite(T::DTYPE, len))
        .unwrap_or_else(|_| vec![T::ZERO; len]);
    let (xr, yr) = (Reader::new(xo), Reader::new(yo));
    // column blocks only: a row block would gather the right operand's tiles
    // once per chunk
    let chunks = Chunks::new(d, false);
    let dst = OutPtr(out.as_mut_ptr());
    let body = |c: usize| {
        let (b0, b1, _, (c0, c1)) = chunks.chunk(c);
        let mut a_tile: Vec<T> = Vec::new();
        let mut b_tile: Vec<T> = Vec::new();
        for bi in b0..b1 {
            for k0 in (0..k).step_by(TILE_K) {
                let kc = TILE_K.min(k - k0);
                // the left operand's `m × kc` block: (pointer, column stride, row stride)
                let (lhs, lcs, lrs) = match &xr {
                    Reader::Strided { batch, row, col } => {
                        let at = xo.offset + bi * batch + k0 * col;
                        (x[at..].as_ptr(), *col as isize, *row as isize)
                    }
                    Reader::Gathered {
                        batch,
                        rows,
                        cols,
                        run,
                    } => {
                        a_tile.clear();
                        let base = xo.offset + batch[bi];
                        for &r in rows {
                            gather_row(&mut a_tile, x, base + r, cols, (k0, k0 + kc), *run);
                        }
                        (a_tile.as_ptr(), 1, kc as isize)
                    }
                };
                for n0 in (c0..c1).step_by(TILE_N) {
                    let nc = TILE_N.min(c1 - n0);
                    let (rhs, rcs, rrs) = match &yr {
                        Reader::Strided { batch, row, col } => {
                            let at = yo.offset + bi * batch + k0 * row + n0 * col;
                            (y[at..].as_ptr(), *col as isize, *row as isize)
                        }
                        Reader::Gathered {
                            batch,
                            rows,
                            cols,
                            run,
                        } => {
                            b_tile.clear();
                            let base = yo.offset + batch[bi];
                            for &r in &rows[k0..k0 + kc] {
                                gather_row(&mut b_tile, y, base + r, cols, (n0, n0 + nc), *run);
                            }
                            (b_tile.as_ptr(), 1, nc as isize)
                        }
                    };
                    // SAFETY: `lhs` reaches `m × kc` elements through (`lrs`, `lcs`)
                    // and `rhs` `kc × nc` through (`rrs`, `rcs`): in place, inside
                    // `x` and `y` (`Grouped::fits` bounds every index of the
                    // operands, and the slicing above starts inside them); gathered,
                    // inside the tiles just filled (`m·kc` and `kc·nc` elements).
                    // The destination block, rows `0..m` × columns `n0..n0+nc` of
                    // batch `bi` with row stride `n`, lies inside `out` (`b·m·n`
                    // elements) and no other chunk writes it; the first tile of the
                    // contracted dim only writes it (`read_dst == false`), the
                    // others add to what it holds.
                    unsafe {
                        gemm::gemm(
                            m,
                            nc,
                            kc,
                            dst.get().add(bi * m * n + n0),
                            1,
                            n as isize,
                            k0 > 0,
                            lhs,
                            lcs,
                            lrs,
                            rhs,
                            rcs,
                            rrs,
                            T::ONE,
                            T::ONE,
                            false,
                            false,
                            false,
                            gemm::Parallelism::None,
                        );
                    }
                }
            }
            // SAFETY: rows `0..m` × columns `c0..c1` of batch `bi` (row stride `n`)
            // lie inside `out` and belong to this chunk alone.
            unsafe { dst.plus_zero(bi * m * n + c0, m, c1 - c0, n) };
        }
    };
    pool::parallel_for(chunks.count, &body);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(x: &[f32], xo: &Grouped, y: &[f32], yo: &Grouped, d: Dims) -> Vec<f32> {
        let (xb, xrow, xc) = (xo.table(0), xo.table(1), xo.table(2));
        let (yb, yrow, yc) = (yo.table(0), yo.table(1), yo.table(2));
        let mut out = vec![0f32; d.b * d.m * d.n];
        for bi in 0..d.b {
            for i in 0..d.m {
                for j in 0..d.n {
                    let mut s = 0f64;
                    for kk in 0..d.k {
                        let a = x[xo.offset + xb[bi] + xrow[i] + xc[kk]];
                        let b = y[yo.offset + yb[bi] + yrow[kk] + yc[j]];
                        s += a as f64 * b as f64;
                    }
                    out[(bi * d.m + i) * d.n + j] = s as f32;
                }
            }
        }
        out
    }

    fn data(len: usize, seed: u32) -> Vec<f32> {
        crate::blas::tests::data(len, seed)
            .into_iter()
            .map(|v| v as f32)
            .collect()
    }

    /// The tiled product of `d` against the reference, within float32 rounding.
    fn check(x: &[f32], xo: &Grouped, y: &[f32], yo: &Grouped, d: Dims) {
        let fast = product(x, xo, y, yo, d).unwrap();
        let exact = reference(x, xo, y, yo, d);
        assert_eq!(fast.len(), exact.len());
        for (a, b) in fast.iter().zip(&exact) {
            assert!((a - b).abs() <= 1e-4 * b.abs().max(1.0), "{a} vs {b}");
        }
    }

    #[test]
    fn windows_of_a_padded_image_multiply_as_their_column_matrix() {
        // conv 3×3, stride 1, 7 output channels, on padded [2, 5, 12, 12] and
        // [2, 40, 9, 9] inputs: the second's k (360) spans two tiles
        for (c, side) in [(5usize, 12usize), (40, 9)] {
            let (n, o, out) = (2usize, 7usize, side - 2);
            let x = data(n * c * side * side, 3);
            let w = data(o * c * 9, 5);
            let hw = side * side;
            let xo = Grouped {
                offset: 0,
                groups: [vec![], vec![(o, c * 9)], vec![(c * 9, 1)]],
            };
            let yo = Grouped {
                offset: 0,
                groups: [
                    vec![(n, c * hw)],
                    vec![(c, hw), (3, side), (3, 1)],
                    vec![(out, side), (out, 1)],
                ],
            };
            // the weights broadcast over the batch
            let xo = Grouped {
                groups: [vec![(n, 0)], xo.groups[1].clone(), xo.groups[2].clone()],
                ..xo
            };
            let d = Dims {
                b: n,
                m: o,
                k: c * 9,
                n: out * out,
            };
            check(&w, &xo, &x, &yo, d);
        }
    }

    #[test]
    fn a_gathered_left_operand_multiplies_as_its_copy() {
        // a weight gradient's shape: a [N, O, P] gradient read as [O, N·P] (the
        // left operand gathered, k = 600 over three tiles) times a row-major
        // [N·P, C]
        let (n, o, p, c) = (3usize, 5usize, 200usize, 9usize);
        let g = data(n * o * p, 11);
        let cols = data(n * p * c, 13);
        let xo = Grouped {
            offset: 0,
            groups: [vec![], vec![(o, p)], vec![(n, o * p), (p, 1)]],
        };
        let yo = Grouped {
            offset: 0,
            groups: [vec![], vec![(n * p, c)], vec![(c, 1)]],
        };
        let d = Dims {
            b: 1,
            m: o,
            k: n * p,
            n: c,
        };
        check(&g, &xo, &cols, &yo, d);
    }

    #[test]
    fn an_operand_reaching_outside_its_buffer_is_refused() {
        let yo = Grouped {
            offset: 0,
            groups: [vec![(1, 0)], vec![(2, 4), (2, 1)], vec![(3, 2)]],
        };
        let xo = Grouped {
            offset: 0,
            groups: [vec![(1, 0)], vec![(1, 0)], vec![(4, 1)]],
        };
        let d = Dims {
            b: 1,
            m: 1,
            k: 4,
            n: 3,
        };
        // the last element is at 4 + 1 + 2·2 = 9: a buffer of 9 is too short
        assert!(product(&[1f32; 4], &xo, &[1f32; 9], &yo, d).is_none());
        assert!(product(&[1f32; 4], &xo, &[1f32; 10], &yo, d).is_some());
    }
}
