//! Register transposes for transposed copies (`x.t().contiguous()`, W7).
//!
//! The scheduler cuts such a copy into tiles (`ir::schedule::tile_transposes`):
//! its last two dims are one tile, along which the store is contiguous in the last
//! dim and the load in the one before. A tile runs here as blocks of `L × L`
//! elements (`L` = 4 for 4-byte dtypes, 2 for 8-byte ones): `L` vector loads
//! along the load's contiguous dim, a transpose in registers by byte shuffles
//! (the `unpcklps`/`unpckhps`, `punpcklqdq`/`punpckhqdq` pattern), `L` vector
//! stores along the store's. A scalar copy reads one strided element per store;
//! this reads a whole vector per load, and so does each store.
//!
//! The values move as bits, so every dtype of the size qualifies. Every element
//! a block touches is a point of the tile (both dims are multiples of `L`), so the
//! verifier's bounds proof over the kernel's whole space covers these accesses.
//! Points of a thread's range outside whole tiles (a range starting or ending
//! mid-tile) take the ordinary scalar point. The tiles of an output larger than the
//! caches are calls of the runtime's streamed transpose instead
//! ([`STREAM_MIN_BYTES`]): one call per run of whole tiles along a row of tiles,
//! as one tile as wide as the run, so that its output rows are long runs of whole
//! lines (which it streams).

use super::{Lower, R};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I64, I8, I8X16};
use cranelift_codegen::ir::{Block, ConstantData, InstBuilder, Value};
use cranelift_frontend::Variable;
use lazyfuse_ir::kernel::{Expr, LoopKernel};

/// Most points a tile may hold for the register path: a thread's range holds many
/// whole tiles, so the scalar points at its ends stay few.
const MAX_TILE_POINTS: usize = 4096;

/// Smallest output, in bytes, whose tiles run as one call of the runtime's
/// streamed transpose (`lf_transpose_stream_<size>`, streaming stores that skip
/// the cache): an output this large does not stay in the caches for the next
/// kernel anyway, and not reading each line before writing it saves a third of
/// the copy's traffic. Smaller ones keep the register transposes.
const STREAM_MIN_BYTES: i64 = 32 << 20;

/// Most blocks of a tile row written out straight (the 256 × 16 tiles of
/// `ir::schedule`'s `TRANSPOSE_TILES` have four); longer rows loop.
const UNROLL_BLOCKS: i64 = 8;

/// The block side `L` with which `k` runs as register transposes (see the module
/// doc), or `None`: every parallel dim, one store whose value is one static load
/// of another param and of the same dtype (4 or 8 bytes), the load contiguous
/// (stride 1) along the second-to-last dim and strided along the last, the store
/// contiguous along the last and strided along the one before, both dims
/// multiples of `L`, and the tile at most [`MAX_TILE_POINTS`] points.
pub(super) fn transpose_block(k: &LoopKernel, needed: &[bool]) -> Option<i64> {
    let nd = k.dims.len();
    if nd < 2 || k.n_parallel != nd || k.stores.len() != 1 {
        return None;
    }
    let store = &k.stores[0];
    let value = store.value.0 as usize;
    if (0..k.exprs.len()).any(|i| needed[i] != (i == value)) {
        return None;
    }
    let Expr::Load {
        param,
        index,
        dynamic: None,
    } = &k.exprs[value].expr
    else {
        return None;
    };
    let dtype = k.params[store.param.index()].dtype;
    if *param == store.param
        || k.params[param.index()].dtype != dtype
        || k.exprs[value].dtype != dtype
    {
        return None;
    }
    let lanes = match dtype.size_in_bytes() {
        4 => 4,
        8 => 2,
        _ => return None,
    };
    let (rows, cols) = (k.dims[nd - 2], k.dims[nd - 1]);
    let transposed = index.strides[nd - 2] == 1
        && index.strides[nd - 1] != 0
        && store.index.strides[nd - 1] == 1
        && store.index.strides[nd - 2] != 0;
    let fits = rows % lanes == 0 && cols % lanes == 0 && rows * cols <= MAX_TILE_POINTS;
    (transposed && fits).then_some(lanes as i64)
}

/// A tile's load and store (see `Lower::tile_access`).
struct TileAccess {
    from: Value,
    to: Value,
    size: i64,
    load_row: i64,
    load_col: i64,
    store_row: i64,
    store_col: i64,
    adjacent: bool,
}

/// Byte masks of `shuffle` (operands `a`, `b`: bytes 0–15 of `a`, 16–31 of `b`).
fn mask(bytes: impl Iterator<Item = u8>) -> ConstantData {
    ConstantData::from(bytes.collect::<Vec<u8>>())
}

impl Lower<'_, '_> {
    /// The body of one step of a [`transpose_block`] kernel at parallel position
    /// `p` (its multi-index in the loop variables): a whole tile when `p` is a
    /// tile's first point and the tile lies in the range (`p` up to `end`), else
    /// one scalar point; then advances `p` and the odometer and jumps to `head`.
    pub(super) fn transpose_step(
        &mut self,
        p: Variable,
        end: Value,
        lanes: i64,
        head: Block,
    ) -> R<()> {
        let nd = self.k.dims.len();
        let tile = (self.k.dims[nd - 2] * self.k.dims[nd - 1]) as i64;
        let pv = self.b.use_var(p);
        let i = self.b.use_var(self.idx[nd - 2]);
        let j = self.b.use_var(self.idx[nd - 1]);
        let ij = self.b.ins().bor(i, j);
        let at_start = self.b.ins().icmp_imm_s(IntCC::Equal, ij, 0);
        let pe = self.b.ins().iadd_imm_s(pv, tile);
        let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, pe, end);
        let whole = self.b.ins().band(at_start, fits);
        let tileb = self.b.create_block();
        let pointb = self.b.create_block();
        self.b.ins().brif(whole, tileb, &[], pointb, &[]);

        self.b.switch_to_block(tileb);
        let tiles = if self.streams() {
            self.stream_tiles(p, end)?
        } else {
            self.transpose_tile(lanes)?;
            self.iconst(I64, 1)
        };
        let z = self.iconst(I64, 0);
        self.b.def_var(self.idx[nd - 2], z);
        self.b.def_var(self.idx[nd - 1], z);
        if nd > 2 {
            // the last of the tiles done is the one the carry moves past
            let at = self.b.use_var(self.idx[nd - 3]);
            let last = self.b.ins().iadd(at, tiles);
            let last = self.b.ins().iadd_imm_s(last, -1);
            self.b.def_var(self.idx[nd - 3], last);
        }
        let one = self.iconst(I8, 1);
        self.carry(0..nd - 2, one);
        let pv = self.b.use_var(p);
        let points = self.b.ins().imul_imm_s(tiles, tile);
        let pn = self.b.ins().iadd(pv, points);
        self.b.def_var(p, pn);
        self.b.ins().jump(head, &[]);

        self.b.switch_to_block(pointb);
        self.point()?;
        self.odometer(0..nd);
        let pv = self.b.use_var(p);
        let pn = self.b.ins().iadd_imm_s(pv, 1);
        self.b.def_var(p, pn);
        self.b.ins().jump(head, &[]);
        Ok(())
    }

    /// Whether the kernel's tiles are calls of the runtime's streamed transpose
    /// (an output of [`STREAM_MIN_BYTES`] or more).
    fn streams(&self) -> bool {
        let store = &self.k.stores[0];
        let p = &self.k.params[store.param.index()];
        (p.len * p.dtype.size_in_bytes()) as i64 >= STREAM_MIN_BYTES
    }

    /// The tile's load and store: the first element's addresses at the current
    /// indices (in-tile indices 0), the element size in bytes, the strides in bytes
    /// along the tile's rows and columns, load (`load_row`, `load_col`) and store
    /// (`store_row`, `store_col`), and whether the next tile along dim `nd - 3`
    /// continues this one's columns on both sides (`adjacent`).
    fn tile_access(&mut self) -> R<TileAccess> {
        let nd = self.k.dims.len();
        let store = self.k.stores[0].clone();
        let Expr::Load { param, index, .. } = self.k.exprs[store.value.0 as usize].expr.clone()
        else {
            unreachable!("transpose_block admits one load")
        };
        let size = self.k.params[param.index()].dtype.size_in_bytes() as i64;
        let from = self.address(param.index(), &index.offset, &index.strides, None)?;
        let to = self.address(
            store.param.index(),
            &store.index.offset,
            &store.index.strides,
            None,
        )?;
        Ok(TileAccess {
            from,
            to,
            size,
            load_row: index.strides[nd - 2] * size,
            load_col: index.strides[nd - 1] * size,
            store_row: store.index.strides[nd - 2] * size,
            store_col: store.index.strides[nd - 1] * size,
            // the next tile along dim nd - 3 continues this one's columns
            adjacent: nd > 2 && {
                let cols = self.k.dims[nd - 1] as i64;
                store.index.strides[nd - 3] == cols * store.index.strides[nd - 1]
                    && index.strides[nd - 3] == cols * index.strides[nd - 1]
            },
        })
    }

    /// The tiles from the current one (at its first point `p`) as one call of
    /// the runtime's streamed transpose: where the next tiles along dim `nd - 3`
    /// continue its columns, as many of them as that dim and the range (up to
    /// `end`) hold whole, one tile `cols × tiles` wide (its output rows longer
    /// runs of whole lines); returns how many tiles it wrote.
    fn stream_tiles(&mut self, p: Variable, end: Value) -> R<Value> {
        let nd = self.k.dims.len();
        let (rows, cols) = (self.k.dims[nd - 2] as i64, self.k.dims[nd - 1] as i64);
        let a = self.tile_access()?;
        let tiles = if a.adjacent {
            let tile = rows * cols;
            let pv = self.b.use_var(p);
            let left = self.b.ins().isub(end, pv);
            let in_range = self.b.ins().udiv_imm_s(left, tile);
            let at = self.b.use_var(self.idx[nd - 3]);
            let n = self.iconst(I64, self.k.dims[nd - 3] as i64);
            let in_dim = self.b.ins().isub(n, at);
            self.b.ins().umin(in_range, in_dim)
        } else {
            self.iconst(I64, 1)
        };
        let width = self.b.ins().imul_imm_s(tiles, cols);
        let symbol = format!("lf_transpose_stream_{}", a.size);
        let args = [a.store_row, a.load_col, rows].map(|v| self.iconst(I64, v));
        self.call_void(&symbol, &[a.to, args[0], a.from, args[1], args[2], width])?;
        Ok(tiles)
    }

    /// The tile at the current outer indices (its in-tile indices at 0), in
    /// `lanes × lanes` blocks: the tile's first load and store addresses once,
    /// each block's at constant steps from them (a row of blocks unrolled when
    /// it has at most [`UNROLL_BLOCKS`]).
    fn transpose_tile(&mut self, lanes: i64) -> R<()> {
        let nd = self.k.dims.len();
        let (rows, cols) = (self.k.dims[nd - 2] as i64, self.k.dims[nd - 1] as i64);
        let TileAccess {
            from: from0,
            to: to0,
            load_row,
            load_col,
            store_row,
            store_col,
            ..
        } = self.tile_access()?;
        let blocks = cols / lanes;
        self.counted_loop(rows / lanes, &mut |s, ib| {
            let from = s.b.ins().imul_imm_s(ib, lanes * load_row);
            let from = s.b.ins().iadd(from0, from);
            let to = s.b.ins().imul_imm_s(ib, lanes * store_row);
            let to = s.b.ins().iadd(to0, to);
            if blocks <= UNROLL_BLOCKS {
                for jb in 0..blocks {
                    let f = s.b.ins().iadd_imm_s(from, jb * lanes * load_col);
                    let t = s.b.ins().iadd_imm_s(to, jb * lanes * store_col);
                    s.transpose_block_at(f, t, lanes, load_col, store_row);
                }
                Ok(())
            } else {
                s.counted_loop(blocks, &mut |s, jb| {
                    let f = s.b.ins().imul_imm_s(jb, lanes * load_col);
                    let f = s.b.ins().iadd(from, f);
                    let t = s.b.ins().imul_imm_s(jb, lanes * store_col);
                    let t = s.b.ins().iadd(to, t);
                    s.transpose_block_at(f, t, lanes, load_col, store_row);
                    Ok(())
                })
            }
        })
    }

    /// One block: `lanes` vector loads `load_step` bytes apart from `from`,
    /// transposed, stored `store_step` bytes apart from `to`.
    fn transpose_block_at(
        &mut self,
        from: Value,
        to: Value,
        lanes: i64,
        load_step: i64,
        store_step: i64,
    ) {
        let loaded: Vec<Value> = (0..lanes)
            .map(|c| {
                let at = self.b.ins().iadd_imm_s(from, c * load_step);
                self.b.ins().load(I8X16, super::flags(), at, 0)
            })
            .collect();
        let rows_out = self.transpose_registers(&loaded);
        for (r, v) in rows_out.into_iter().enumerate() {
            let at = self.b.ins().iadd_imm_s(to, r as i64 * store_step);
            self.b.ins().store(super::flags(), v, at, 0);
        }
    }

    /// The transpose of the `L × L` block whose columns are `cols` (`L` vectors of
    /// `L` lanes): its rows.
    fn transpose_registers(&mut self, cols: &[Value]) -> Vec<Value> {
        let shuffle = |s: &mut Self, a: Value, b: Value, m: ConstantData| {
            let m = s.b.func.dfg.immediates.push(m);
            s.b.ins().shuffle(a, b, m)
        };
        // 8-byte halves: low halves of a and b, high halves of a and b
        let low64 = || mask((0..8).chain(16..24));
        let high64 = || mask((8..16).chain(24..32));
        if cols.len() == 2 {
            return vec![
                shuffle(self, cols[0], cols[1], low64()),
                shuffle(self, cols[0], cols[1], high64()),
            ];
        }
        // 4-byte lanes interleaved: [a0 b0 a1 b1] and [a2 b2 a3 b3]
        let low32 = || mask((0..4).chain(16..20).chain(4..8).chain(20..24));
        let high32 = || mask((8..12).chain(24..28).chain(12..16).chain(28..32));
        let ab_lo = shuffle(self, cols[0], cols[1], low32());
        let cd_lo = shuffle(self, cols[2], cols[3], low32());
        let ab_hi = shuffle(self, cols[0], cols[1], high32());
        let cd_hi = shuffle(self, cols[2], cols[3], high32());
        vec![
            shuffle(self, ab_lo, cd_lo, low64()),
            shuffle(self, ab_lo, cd_lo, high64()),
            shuffle(self, ab_hi, cd_hi, low64()),
            shuffle(self, ab_hi, cd_hi, high64()),
        ]
    }
}
