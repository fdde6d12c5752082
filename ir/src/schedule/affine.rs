//! Affine index arithmetic over a kernel's loop variables (each an [`Affine`] map):
//! the flat index of a coordinate list, and its inverse where no carry between
//! dims can happen.

use crate::kernel::Affine;
use crate::shape::contiguous_strides;

/// `shape` without its size-1 dims: the loop dims it needs.
pub(crate) fn canonical(shape: &[usize]) -> Vec<usize> {
    shape.iter().copied().filter(|&s| s != 1).collect()
}

/// The contiguous flat index of element `coords` of a tensor of `shape`.
pub(crate) fn flat(shape: &[usize], coords: &[Affine]) -> Affine {
    let strides = contiguous_strides(shape);
    coords
        .iter()
        .zip(&strides)
        .fold(Affine::constant(0), |acc, (c, &s)| {
            c.scaled_add(s as i64, &acc)
        })
}

/// Splits a flat index into the coordinates of a contiguous tensor of `shape`, if
/// every loop variable moves exactly one dim and no carry between dims can happen
/// over the iteration space `dims`.
pub(super) fn unravel(f: &Affine, shape: &[usize], dims: &[usize]) -> Option<Vec<Affine>> {
    let strides = contiguous_strides(shape);
    let numel: usize = shape.iter().product();
    let empty = dims.contains(&0);
    if shape.is_empty() {
        return (empty || f.range(dims) == Some((0, 0))).then(Vec::new);
    }
    if numel == 0 {
        return empty.then(|| vec![Affine::constant(0); shape.len()]);
    }
    let mut out: Vec<Affine> = Vec::with_capacity(shape.len());
    let mut rest = f.offset;
    if rest < 0 {
        return None;
    }
    for (d, &s) in strides.iter().enumerate() {
        let s = s as i64;
        let v = rest / s;
        rest %= s;
        out.push(Affine::constant(v));
        let _ = d;
    }
    for (k, &a) in f.strides.iter().enumerate() {
        if a == 0 || dims.get(k) == Some(&1) {
            continue;
        }
        // the outermost non-1 dim whose stride divides the coefficient
        let d = (0..shape.len()).find(|&d| shape[d] != 1 && a % strides[d] as i64 == 0)?;
        let mut c = Affine::var(k);
        c.strides[k] = a / strides[d] as i64;
        out[d] = out[d].scaled_add(1, &c);
    }
    if !empty {
        for (d, c) in out.iter().enumerate() {
            let (lo, hi) = c.range(dims)?;
            if lo < 0 || hi >= shape[d] as i128 {
                return None;
            }
        }
    }
    Some(out)
}
