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
use crate::epilogue::Epilogue;
use crate::interp::matmul::Dims;
use crate::pool;
use lazyfuse_ir::kernel::ZeroPadded;

/// Rows of the contracted dim per tile.
const TILE_K: usize = 256;

/// Columns per tile of the right operand (with `TILE_K`, 512 KiB of float32).
const TILE_N: usize = 512;

/// A `[b, rows, cols]` operand whose each dim is a run of dims `(size, stride)`
/// (row-major within the run) from `offset`; with `padded`, the offset and
/// strides index that zero-padded buffer, whose interior the operand's buffer
/// holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Grouped {
    pub(crate) offset: usize,
    pub(crate) groups: [Vec<(usize, usize)>; 3],
    pub(crate) padded: Option<ZeroPadded>,
}

/// The indices of one group, row-major over its dims: each one's buffer offset
/// and, for a padded operand, its coordinates along the padded dims
/// ([`padded_dims`], `nd` per index), whose sum over the groups is an element's
/// (no carry: `fits`). A padded index's offset is the source offset its
/// coordinates (along every dim) step, `Σ coords[d] · source_strides[d]`.
struct Table {
    offsets: Vec<isize>,
    coords: Vec<usize>,
    nd: usize,
}

impl Table {
    fn coords(&self, i: usize) -> &[usize] {
        &self.coords[i * self.nd..(i + 1) * self.nd]
    }
}

impl Grouped {
    /// The index table of group `g` ([`Table`]).
    fn table(&self, g: usize) -> Table {
        let dims = &self.groups[g];
        let Some(p) = &self.padded else {
            let mut t = vec![0isize];
            for &(size, stride) in dims {
                t = t
                    .iter()
                    .flat_map(|&base| (0..size).map(move |i| base + (i * stride) as isize))
                    .collect();
            }
            return Table {
                offsets: t,
                coords: Vec::new(),
                nd: 0,
            };
        };
        let dims_padded = padded_dims(p);
        let nd = dims_padded.len();
        let mut t = Table {
            offsets: vec![0],
            coords: vec![0; nd],
            nd,
        };
        for &(size, stride) in dims {
            // `fits` has checked that every stride has coordinates
            let all = p.coords(stride).unwrap_or_else(|| vec![0; p.shape.len()]);
            let step_offset: usize = all.iter().zip(&p.source_strides).map(|(c, s)| c * s).sum();
            let step: Vec<usize> = dims_padded.iter().map(|&d| all[d]).collect();
            let mut next = Table {
                offsets: Vec::with_capacity(t.offsets.len() * size),
                coords: Vec::with_capacity(t.coords.len() * size),
                nd,
            };
            for e in 0..t.offsets.len() {
                for i in 0..size {
                    next.offsets.push(t.offsets[e] + (i * step_offset) as isize);
                    next.coords
                        .extend(t.coords(e).iter().zip(&step).map(|(c, s)| c + i * s));
                }
            }
            t = next;
        }
        t
    }

    /// The buffer offset and padded coordinates (along the padded dims) of the
    /// operand's element 0: the offset itself unpadded; padded, the source offset
    /// of its coordinates (negative where they lie in the padding before the
    /// interior).
    fn origin(&self) -> (isize, Vec<usize>) {
        match &self.padded {
            None => (self.offset as isize, Vec::new()),
            Some(p) => {
                let c = p
                    .coords(self.offset)
                    .unwrap_or_else(|| vec![0; p.shape.len()]);
                let at = (0..c.len()).fold(p.source_offset as isize, |at, d| {
                    at + (c[d] as isize - p.before[d] as isize) * p.source_strides[d] as isize
                });
                (at, padded_dims(p).iter().map(|&d| c[d]).collect())
            }
        }
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

    /// Whether every element of the operand lies inside `len` (padded: inside
    /// the padded buffer with exact coordinates, and the interior inside `len`).
    fn fits(&self, len: usize) -> bool {
        let view = lazyfuse_ir::kernel::ExternView {
            offset: self.offset,
            strides: self.groups.iter().flatten().map(|d| d.1).collect(),
            dims: Some(self.groups.iter().flatten().map(|d| d.0).collect()),
            padded: self.padded.clone(),
        };
        let sizes: Vec<usize> = self
            .groups
            .iter()
            .map(|g| g.iter().map(|d| d.0).product())
            .collect();
        view.reads_within(&sizes, len)
    }
}

/// The dims of `p` that have padding (the others are their source's whole dim:
/// no element lies outside them).
fn padded_dims(p: &ZeroPadded) -> Vec<usize> {
    (0..p.shape.len())
        .filter(|&d| p.before[d] > 0 || p.before[d] + p.interior[d] < p.shape[d])
        .collect()
}

/// Where a padded operand's elements lie in the interior, by index into the
/// padded dims ([`padded_dims`]): the interior's range `(k, first, length)`
/// along each dim that a run of columns does not step along (`checks`), and
/// along the one it does (`run`: the last dim, where it is padded and runs are
/// longer than one).
struct Clip {
    checks: Vec<(usize, usize, usize)>,
    run: Option<(usize, usize, usize)>,
}

impl Clip {
    fn new(p: &ZeroPadded, run: usize) -> Clip {
        let dims = padded_dims(p);
        let last = p.shape.len() - 1;
        let run_dim = (run > 1 && dims.last() == Some(&last)).then(|| dims.len() - 1);
        let range = |k: usize| (k, p.before[dims[k]], p.interior[dims[k]]);
        Clip {
            checks: (0..dims.len())
                .filter(|&k| Some(k) != run_dim)
                .map(range)
                .collect(),
            run: run_dim.map(range),
        }
    }
}

/// How a chunk reads one operand: in place through two strides, or by gathering
/// tiles through index tables.
enum Reader {
    Strided {
        batch: usize,
        row: usize,
        col: usize,
    },
    Gathered(Box<Gathered>),
}

/// The index tables a gathered operand is read through.
struct Gathered {
    /// element 0's offset and padded coordinates ([`Grouped::origin`])
    origin: (isize, Vec<usize>),
    batch: Table,
    rows: Table,
    cols: Table,
    /// the size of the columns' last dim where it steps one element of the
    /// buffer (its elements are copied as runs), else 1
    run: usize,
    /// a padded operand's interior
    clip: Option<Clip>,
}

impl Reader {
    fn new(o: &Grouped) -> Reader {
        match (o.single(0), o.single(1), o.single(2), &o.padded) {
            (Some(batch), Some(row), Some(col), None) => Reader::Strided { batch, row, col },
            _ => {
                let unit = |p: &ZeroPadded| {
                    // a step of 1 in the padded buffer is one along its last dim
                    p.source_strides.last() == Some(&1) && p.shape.last().is_some_and(|&n| n > 1)
                };
                let run = match (o.groups[2].last(), &o.padded) {
                    (Some(&(size, 1)), None) => size.max(1),
                    (Some(&(size, 1)), Some(p)) if unit(p) => size.max(1),
                    _ => 1,
                };
                Reader::Gathered(Box::new(Gathered {
                    origin: o.origin(),
                    batch: o.table(0),
                    rows: o.table(1),
                    cols: o.table(2),
                    run,
                    clip: o.padded.as_ref().map(|p| Clip::new(p, run)),
                }))
            }
        }
    }
}

/// Appends columns `c0..c1` of the row at `base` to `tile`: `cols` gives each
/// column's offset, and runs of `run` columns (aligned to multiples of `run`)
/// are contiguous in `src`.
fn gather_row<T: Copy>(
    tile: &mut Vec<T>,
    src: &[T],
    base: isize,
    cols: &Table,
    (c0, c1): (usize, usize),
    run: usize,
) {
    // one division per row: the runs' ends step by `run`
    let (mut j, mut run_end) = (c0, (c0 / run + 1) * run);
    while j < c1 {
        let end = run_end.min(c1);
        // unpadded offsets are never negative (`Grouped::fits`)
        let at = (base + cols.offsets[j]) as usize;
        tile.extend_from_slice(&src[at..at + (end - j)]);
        (j, run_end) = (end, run_end + run);
    }
}

/// [`gather_row`] for a padded operand: the row at source offset `base` and
/// coordinates `at` (along the padded dims); a column whose coordinates leave the
/// interior reads zero. A run steps along the padded buffer's last dim, where it
/// is clipped to the interior and the rest copied as one slice.
fn gather_padded_row<T: GemmElement>(
    tile: &mut Vec<T>,
    src: &[T],
    (base, at): (isize, &[usize]),
    cols: &Table,
    (c0, c1): (usize, usize),
    run: usize,
    clip: &Clip,
) {
    let nd = at.len();
    let (mut j, mut run_end) = (c0, (c0 / run + 1) * run);
    while j < c1 {
        let end = run_end.min(c1);
        let len = end - j;
        let c = &cols.coords[j * nd..(j + 1) * nd];
        // x in first..first + length, as one unsigned comparison
        let inside = clip
            .checks
            .iter()
            .all(|&(k, first, length)| (at[k] + c[k]).wrapping_sub(first) < length);
        let from = base + cols.offsets[j];
        match clip.run {
            _ if !inside => tile.resize(tile.len() + len, T::ZERO),
            // inside the interior: source indices (`Grouped::fits`)
            None => {
                let from = from as usize;
                tile.extend_from_slice(&src[from..from + len]);
            }
            Some((k, first, length)) => {
                let x0 = at[k] + c[k];
                let lo = first.saturating_sub(x0).min(len);
                let hi = (first + length).saturating_sub(x0).clamp(lo, len);
                let whole = usize::try_from(from)
                    .ok()
                    .filter(|&f| f.checked_add(len).is_some_and(|e| e <= src.len()));
                match whole {
                    Some(f) if lo == 0 && hi == len => tile.extend_from_slice(&src[f..f + len]),
                    // the whole run's source range lies inside `src` (its clipped
                    // ends are neighbouring elements): one copy of fixed length,
                    // then the ends zeroed
                    Some(f) => {
                        let start = tile.len();
                        tile.extend_from_slice(&src[f..f + len]);
                        tile[start..start + lo].fill(T::ZERO);
                        tile[start + hi..start + len].fill(T::ZERO);
                    }
                    None => {
                        tile.resize(tile.len() + lo, T::ZERO);
                        // elements lo..hi lie in the interior, one source element apart
                        let f = (from + lo as isize) as usize;
                        tile.extend_from_slice(&src[f..f + (hi - lo)]);
                        tile.resize(tile.len() + (len - hi), T::ZERO);
                    }
                }
            }
        }
        (j, run_end) = (end, run_end + run);
    }
}

/// Appends row `r` of batch `bi`, columns `c0..c1`, of a gathered operand to
/// `tile`.
fn gather<T: GemmElement>(
    tile: &mut Vec<T>,
    src: &[T],
    reader: &Reader,
    (bi, r): (usize, usize),
    cols_range: (usize, usize),
    scratch: &mut Vec<usize>,
) {
    let Reader::Gathered(g) = reader else {
        return;
    };
    let Gathered {
        origin,
        batch,
        rows,
        cols,
        run,
        clip,
    } = &**g;
    let base = origin.0 + batch.offsets[bi] + rows.offsets[r];
    match clip {
        None => gather_row(tile, src, base, cols, cols_range, *run),
        Some(clip) => {
            scratch.clear();
            let (b, rw) = (batch.coords(bi), rows.coords(r));
            scratch.extend((0..origin.1.len()).map(|k| origin.1[k] + b[k] + rw[k]));
            gather_padded_row(tile, src, (base, scratch), cols, cols_range, *run, clip);
        }
    }
}

/// `x @ y` for operands described by [`Grouped`] (the product's `Dims`), or
/// `None` where a group's size does not match `d` or an operand reaches outside
/// its buffer.
pub(crate) fn product<T: GemmElement + PartialOrd>(
    x: &[T],
    xo: &Grouped,
    y: &[T],
    yo: &Grouped,
    d: Dims,
    epi: &Epilogue<T>,
) -> Option<Vec<T>> {
    let Dims { b, m, k, n } = d;
    let size = |o: &Grouped, g: usize| o.groups[g].iter().map(|d| d.0).product::<usize>();
    let sizes_match = [(xo, [b, m, k]), (yo, [b, k, n])]
        .iter()
        .all(|(o, s)| (0..3).all(|g| size(o, g) == s[g]));
    if !sizes_match || !xo.fits(x.len()) || !yo.fits(y.len()) || epi.shape() != [b, m, n] {
        return None;
    }
    let len = b * m * n;
    if len == 0 || k == 0 {
        let mut out = vec![T::ZERO; len];
        epi.apply_all(&mut out);
        return Some(out);
    }
    // every element is stored by the first tile of the contracted dim
    // (`read_dst == false`): a kept buffer needs no zeroing
    let mut out = T::into_vec(crate::buffer_cache::take_for_overwrite(T::DTYPE, len))
        .unwrap_or_else(|_| vec![T::ZERO; len]);
    let (xr, yr) = (Reader::new(xo), Reader::new(yo));
    // column blocks, as a row block would gather the right operand's tiles once
    // per chunk; row blocks where only the left operand is gathered (each chunk
    // gathers its own rows; the right one is read in place) and it is the taller
    let by_rows = matches!((&xr, &yr), (Reader::Gathered(_), Reader::Strided { .. })) && m >= n;
    let chunks = Chunks::new(d, by_rows);
    let dst = OutPtr(out.as_mut_ptr());
    let body = |c: usize| {
        let (b0, b1, (r0, r1), (c0, c1)) = chunks.chunk(c);
        let rows = r1 - r0;
        let mut a_tile: Vec<T> = Vec::new();
        let mut b_tile: Vec<T> = Vec::new();
        let mut scratch: Vec<usize> = Vec::new();
        for bi in b0..b1 {
            for k0 in (0..k).step_by(TILE_K) {
                let kc = TILE_K.min(k - k0);
                // the left operand's `rows × kc` block: (pointer, column stride, row stride)
                let (lhs, lcs, lrs) = match &xr {
                    Reader::Strided { batch, row, col } => {
                        let at = xo.offset + bi * batch + r0 * row + k0 * col;
                        (x[at..].as_ptr(), *col as isize, *row as isize)
                    }
                    Reader::Gathered(_) => {
                        a_tile.clear();
                        for r in r0..r1 {
                            gather(&mut a_tile, x, &xr, (bi, r), (k0, k0 + kc), &mut scratch);
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
                        Reader::Gathered(_) => {
                            b_tile.clear();
                            for r in k0..k0 + kc {
                                gather(&mut b_tile, y, &yr, (bi, r), (n0, n0 + nc), &mut scratch);
                            }
                            (b_tile.as_ptr(), 1, nc as isize)
                        }
                    };
                    // SAFETY: `lhs` reaches `rows × kc` elements through (`lrs`,
                    // `lcs`) and `rhs` `kc × nc` through (`rrs`, `rcs`): in place,
                    // inside `x` and `y` (`Grouped::fits` bounds every index of the
                    // operands, and the slicing above starts inside them);
                    // gathered, inside the tiles just filled (`rows·kc` and `kc·nc`
                    // elements). The destination block, rows `r0..r1` × columns
                    // `n0..n0+nc` of batch `bi` with row stride `n`, lies inside
                    // `out` (`b·m·n` elements) and no other chunk writes it; the
                    // first tile of the contracted dim only writes it (`read_dst ==
                    // false`), the others add to what it holds.
                    unsafe {
                        gemm::gemm(
                            rows,
                            nc,
                            kc,
                            dst.get().add(bi * m * n + r0 * n + n0),
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
            // SAFETY: rows `r0..r1` × columns `c0..c1` of batch `bi` (row stride
            // `n`) lie inside `out` and belong to this chunk alone; the
            // epilogue's operands were checked for this product's shape.
            unsafe { epi.apply(dst, bi, (r0, r1), (c0, c1)) };
        }
    };
    pool::parallel_for(chunks.count, &body);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Element `(bi, i, j)` of an operand, from its virtual offsets (the
    /// padded buffer's, where it is padded) one element at a time.
    fn element(src: &[f32], o: &Grouped, (bi, i, j): (usize, usize, usize)) -> f32 {
        let plain = Grouped {
            padded: None,
            ..o.clone()
        };
        let (b, r, c) = (plain.table(0), plain.table(1), plain.table(2));
        let at = o.offset as isize + b.offsets[bi] + r.offsets[i] + c.offsets[j];
        match &o.padded {
            None => src[at as usize],
            Some(p) => p
                .source_index(&p.coords(at as usize).unwrap())
                .map_or(0.0, |s| src[s]),
        }
    }

    fn reference(x: &[f32], xo: &Grouped, y: &[f32], yo: &Grouped, d: Dims) -> Vec<f32> {
        let mut out = vec![0f32; d.b * d.m * d.n];
        for bi in 0..d.b {
            for i in 0..d.m {
                for j in 0..d.n {
                    let mut s = 0f64;
                    for kk in 0..d.k {
                        let a = element(x, xo, (bi, i, kk));
                        let b = element(y, yo, (bi, kk, j));
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
        let fast = product(x, xo, y, yo, d, &Epilogue::none([d.b, d.m, d.n])).unwrap();
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
                padded: None,
            };
            let yo = Grouped {
                offset: 0,
                groups: [
                    vec![(n, c * hw)],
                    vec![(c, hw), (3, side), (3, 1)],
                    vec![(out, side), (out, 1)],
                ],
                padded: None,
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
    fn windows_of_an_image_padded_in_place_multiply_as_their_column_matrix() {
        // conv 3×3 with padding 1 read from the unpadded [2, c, h, w] image: stride
        // 1 (columns copied as clipped runs) and 2 (one element at a time); the
        // second's k (360) spans two tiles, and odd sizes leave partial runs
        for (c, (h, w), stride) in [
            (5usize, (12usize, 11usize), 1usize),
            (40, (9, 10), 2),
            (3, (7, 30), 1),
        ] {
            let (n, o) = (2usize, 7usize);
            let (hp, wp) = (h + 2, w + 2);
            let (oh, ow) = ((hp - 3) / stride + 1, (wp - 3) / stride + 1);
            let x = data(n * c * h * w, 3);
            let wt = data(o * c * 9, 5);
            let xo = Grouped {
                offset: 0,
                groups: [vec![(n, 0)], vec![(o, c * 9)], vec![(c * 9, 1)]],
                padded: None,
            };
            let yo = Grouped {
                offset: 0,
                groups: [
                    vec![(n, c * hp * wp)],
                    vec![(c, hp * wp), (3, wp), (3, 1)],
                    vec![(oh, stride * wp), (ow, stride)],
                ],
                padded: Some(ZeroPadded {
                    shape: vec![n, c, hp, wp],
                    before: vec![0, 0, 1, 1],
                    interior: vec![n, c, h, w],
                    source_offset: 0,
                    source_strides: vec![c * h * w, h * w, w, 1],
                }),
            };
            let d = Dims {
                b: n,
                m: o,
                k: c * 9,
                n: oh * ow,
            };
            check(&wt, &xo, &x, &yo, d);
            // one element short of the interior is refused
            assert!(product(&wt, &xo, &x[1..], &yo, d, &Epilogue::none([d.b, d.m, d.n])).is_none());
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
            padded: None,
        };
        let yo = Grouped {
            offset: 0,
            groups: [vec![], vec![(n * p, c)], vec![(c, 1)]],
            padded: None,
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
            padded: None,
        };
        let xo = Grouped {
            offset: 0,
            groups: [vec![(1, 0)], vec![(1, 0)], vec![(4, 1)]],
            padded: None,
        };
        let d = Dims {
            b: 1,
            m: 1,
            k: 4,
            n: 3,
        };
        // the last element is at 4 + 1 + 2·2 = 9: a buffer of 9 is too short
        assert!(product(
            &[1f32; 4],
            &xo,
            &[1f32; 9],
            &yo,
            d,
            &Epilogue::none([d.b, d.m, d.n])
        )
        .is_none());
        assert!(product(
            &[1f32; 4],
            &xo,
            &[1f32; 10],
            &yo,
            d,
            &Epilogue::none([d.b, d.m, d.n])
        )
        .is_some());
    }
}
