//! Rewrites of a finished loop kernel that change its iteration order, never its
//! values: merging dims walked as one, and tiling transposes.

use crate::kernel::{Affine, Expr, LoopKernel};

/// Tile shapes for [`tile_transposes`] as (points along the load's contiguous dim,
/// points along the store's), first fit first. Long along the load: each of the
/// tile's 16 source rows is read as one 1 KiB run, which the prefetchers follow,
/// while each of its 256 destination rows gets one whole 64-byte line of stores.
/// Few rows along the store on purpose: the source rows of a power-of-two matrix
/// lie a multiple of 4 KiB apart, so the lines a column touches share L1 sets.
/// The smaller shapes serve dims that the first does not divide. The tile (at most
/// 4,096 points) also bounds the codegen's register-transpose path.
pub(super) const TRANSPOSE_TILES: [(usize, usize); 4] = [(256, 16), (64, 16), (16, 16), (8, 8)];

/// Elements below which a transposing kernel is left alone (its source fits in cache,
/// so the strided walk already hits it).
pub(super) const TRANSPOSE_MIN_POINTS: usize = 1 << 16;

/// Loads whose stride along the innermost dim is at least this many elements touch a
/// new cache line on every step: the walk that tiling fixes.
pub(super) const TRANSPOSE_MIN_STRIDE: i64 = 16;

/// Runs an elementwise kernel that transposes (a load walks a large stride along
/// the innermost dim, where the stores are contiguous, and is contiguous along an
/// outer dim `d`) in tiles of [`TRANSPOSE_TILES`]: dims `d` and the last are split
/// into `tile × in-tile` and reordered as `[others.., d_tile, last_tile, d_in, last_in]`,
/// so each tile's source lines are reused from cache before they are evicted. A
/// reordering of parallel points with rescaled affine strides: the codegen needs
/// nothing new, the verifier still proves every access, and the values (a copy or any
/// elementwise expression of each point) are unchanged. Only sizes that a tile
/// divides are tiled; other kernels stay as they are.
pub(super) fn tile_transposes(k: &mut LoopKernel) {
    let nd = k.dims.len();
    if nd < 2 || k.n_parallel != nd || k.stores.is_empty() {
        return;
    }
    if k.exprs.iter().any(|e| match &e.expr {
        Expr::LoopIndex { .. } => true,
        Expr::Load { dynamic, .. } => dynamic.is_some(),
        _ => false,
    }) {
        return;
    }
    let last = nd - 1;
    if k.stores.iter().any(|s| s.index.strides[last].abs() > 1) {
        return;
    }
    if k.dims.iter().product::<usize>() < TRANSPOSE_MIN_POINTS {
        return;
    }
    // The outer dim along which a strided load is contiguous.
    let d = k.exprs.iter().find_map(|e| match &e.expr {
        Expr::Load { index, .. } if index.strides[last].abs() >= TRANSPOSE_MIN_STRIDE => {
            (0..last).rev().find(|&d| index.strides[d].abs() == 1)
        }
        _ => None,
    });
    let Some(d) = d else { return };
    let Some((td, tl)) = TRANSPOSE_TILES.into_iter().find(|&(td, tl)| {
        k.dims[d].is_multiple_of(td)
            && k.dims[last].is_multiple_of(tl)
            && k.dims[d] > td
            && k.dims[last] > tl
    }) else {
        return;
    };
    let others: Vec<usize> = (0..last).filter(|&i| i != d).collect();
    let remap = |a: &mut Affine| {
        let st = a.strides.clone();
        let mut out: Vec<i64> = others.iter().map(|&i| st[i]).collect();
        out.extend([st[d] * td as i64, st[last] * tl as i64, st[d], st[last]]);
        a.strides = out;
    };
    for e in &mut k.exprs {
        if let Expr::Load { index, .. } = &mut e.expr {
            remap(index);
        }
    }
    for s in &mut k.stores {
        remap(&mut s.index);
    }
    let mut dims: Vec<usize> = others.iter().map(|&i| k.dims[i]).collect();
    dims.extend([k.dims[d] / td, k.dims[last] / tl, td, tl]);
    k.n_parallel = dims.len();
    k.dims = dims;
}

/// Merges adjacent dims of one kind (both parallel or both reduction) where every
/// load and store walks them as one dim (`stride[d] == stride[d+1] * size[d+1]`) and
/// no expression reads their loop indices: `[3, 4]` contiguous becomes `[12]`, so
/// that the innermost loop is long. Row-major order, and so `ArgMax` positions over
/// the reduction dims, is unchanged.
pub(super) fn merge_dims(k: &mut LoopKernel) {
    loop {
        let nd = k.dims.len();
        let indices: Vec<usize> = k
            .exprs
            .iter()
            .filter_map(|e| match e.expr {
                Expr::LoopIndex { dim } => Some(dim),
                _ => None,
            })
            .collect();
        let dynamic = k.exprs.iter().any(|e| {
            matches!(
                e.expr,
                Expr::Load {
                    dynamic: Some(_),
                    ..
                }
            )
        });
        let mergeable = |d: usize| {
            let same_kind = (d + 1 < k.n_parallel) || (d >= k.n_parallel);
            let walks = |a: &Affine| a.strides[d] == a.strides[d + 1] * k.dims[d + 1] as i64;
            same_kind
                && !dynamic
                && !indices.contains(&d)
                && !indices.contains(&(d + 1))
                && k.stores.iter().all(|s| walks(&s.index))
                && k.exprs.iter().all(|e| match &e.expr {
                    Expr::Load { index, .. } => walks(index),
                    _ => true,
                })
        };
        let Some(d) = (0..nd.saturating_sub(1)).find(|&d| mergeable(d)) else {
            return;
        };
        k.dims[d] *= k.dims[d + 1];
        k.dims.remove(d + 1);
        let drop = |a: &mut Affine| {
            a.strides[d] = a.strides[d + 1];
            a.strides.remove(d + 1);
        };
        for s in &mut k.stores {
            drop(&mut s.index);
        }
        for e in &mut k.exprs {
            match &mut e.expr {
                Expr::Load { index, .. } => drop(index),
                Expr::LoopIndex { dim } if *dim > d + 1 => *dim -= 1,
                _ => {}
            }
        }
        if d < k.n_parallel {
            k.n_parallel -= 1;
        }
    }
}
