//! Affine index arithmetic over a kernel's loop variables: [`Aff`], the flat index
//! of a coordinate list, and its inverse where no carry between dims can happen.

use crate::kernel::Affine;
use crate::shape::contiguous_strides;

/// `shape` without its size-1 dims: the loop dims it needs.
pub(crate) fn canonical(shape: &[usize]) -> Vec<usize> {
    shape.iter().copied().filter(|&s| s != 1).collect()
}

/// An affine function of the loop variables (coefficients beyond `c.len()` are 0).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Aff {
    pub(crate) off: i64,
    pub(crate) c: Vec<i64>,
}

impl Aff {
    pub(crate) fn constant(off: i64) -> Aff {
        Aff { off, c: vec![] }
    }

    pub(crate) fn var(d: usize) -> Aff {
        let mut c = vec![0; d + 1];
        c[d] = 1;
        Aff { off: 0, c }
    }

    fn trimmed(mut self) -> Aff {
        while self.c.last() == Some(&0) {
            self.c.pop();
        }
        self
    }

    pub(crate) fn coef(&self, d: usize) -> i64 {
        self.c.get(d).copied().unwrap_or(0)
    }

    /// `self * k + other`
    pub(crate) fn scaled_add(&self, k: i64, other: &Aff) -> Aff {
        let n = self.c.len().max(other.c.len());
        let c = (0..n).map(|d| self.coef(d) * k + other.coef(d)).collect();
        Aff {
            off: self.off * k + other.off,
            c,
        }
        .trimmed()
    }

    /// The smallest and largest value over loops of sizes `dims` (`None`: empty space).
    fn range(&self, dims: &[usize]) -> Option<(i128, i128)> {
        if dims.contains(&0) {
            return None;
        }
        let (mut lo, mut hi) = (self.off as i128, self.off as i128);
        for (d, &n) in dims.iter().enumerate() {
            let span = self.coef(d) as i128 * (n as i128 - 1);
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        Some((lo, hi))
    }

    pub(super) fn uses_from(&self, first: usize) -> bool {
        self.c.iter().skip(first).any(|&x| x != 0)
    }

    pub(super) fn to_affine(&self, nd: usize) -> Affine {
        Affine {
            offset: self.off,
            strides: (0..nd).map(|d| self.coef(d)).collect(),
        }
    }
}

/// The contiguous flat index of element `coords` of a tensor of `shape`.
pub(crate) fn flat(shape: &[usize], coords: &[Aff]) -> Aff {
    let strides = contiguous_strides(shape);
    coords
        .iter()
        .zip(&strides)
        .fold(Aff::constant(0), |acc, (c, &s)| {
            c.scaled_add(s as i64, &acc)
        })
}

/// Splits a flat index into the coordinates of a contiguous tensor of `shape`, if
/// every loop variable moves exactly one dim and no carry between dims can happen
/// over the iteration space `dims`.
pub(super) fn unravel(f: &Aff, shape: &[usize], dims: &[usize]) -> Option<Vec<Aff>> {
    let strides = contiguous_strides(shape);
    let numel: usize = shape.iter().product();
    let empty = dims.contains(&0);
    if shape.is_empty() {
        return (empty || f.range(dims) == Some((0, 0))).then(Vec::new);
    }
    if numel == 0 {
        return empty.then(|| vec![Aff::constant(0); shape.len()]);
    }
    let mut out: Vec<Aff> = Vec::with_capacity(shape.len());
    let mut rest = f.off;
    if rest < 0 {
        return None;
    }
    for (d, &s) in strides.iter().enumerate() {
        let s = s as i64;
        let v = rest / s;
        rest %= s;
        out.push(Aff::constant(v));
        let _ = d;
    }
    for (k, &a) in f.c.iter().enumerate() {
        if a == 0 || dims.get(k) == Some(&1) {
            continue;
        }
        // the outermost non-1 dim whose stride divides the coefficient
        let d = (0..shape.len()).find(|&d| shape[d] != 1 && a % strides[d] as i64 == 0)?;
        let mut c = Aff::var(k);
        c.c[k] = a / strides[d] as i64;
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
