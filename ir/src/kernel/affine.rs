//! The [`Affine`] index map of a load or store over the iteration space. A
//! gather-like load adds a data-dependent term (`dynamic.rs`).

use std::fmt;

/// `offset + Σ strides[d] · i_d` over the kernel's dims (64-bit arithmetic).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Affine {
    /// the constant term
    pub offset: i64,
    /// one coefficient per dim of the iteration space (0: the index ignores it)
    pub strides: Vec<i64>,
}

impl Affine {
    /// The smallest and largest value over the iteration space `dims`, or `None`
    /// when the space is empty (no access happens).
    ///
    /// ```
    /// use lazyfuse_ir::kernel::Affine;
    /// let a = Affine { offset: 5, strides: vec![-1, 3] };
    /// assert_eq!(a.range(&[4, 2]), Some((2, 8)));
    /// assert_eq!(a.range(&[0, 2]), None);
    /// ```
    pub fn range(&self, dims: &[usize]) -> Option<(i128, i128)> {
        if dims.contains(&0) {
            return None;
        }
        let (mut lo, mut hi) = (self.offset as i128, self.offset as i128);
        for (&s, &n) in self.strides.iter().zip(dims) {
            let span = s as i128 * (n as i128 - 1);
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        Some((lo, hi))
    }

    /// Whether the index ignores every dim from `first` on.
    pub fn ignores_from(&self, first: usize) -> bool {
        self.strides.iter().skip(first).all(|&s| s == 0)
    }

    /// The constant map `offset`. While a kernel is built, a map's strides stop at
    /// its last nonzero one (the dims past them have coefficient 0), so that equal
    /// maps are equal values; [`Affine::over`] gives it one stride per dim.
    ///
    /// ```
    /// use lazyfuse_ir::kernel::Affine;
    /// let flat = Affine::var(0).scaled_add(4, &Affine::var(1)); // 4·i0 + i1
    /// assert_eq!(flat.scaled_add(1, &Affine::constant(2)).to_string(), "2 + 4*i0 + i1");
    /// assert_eq!(flat.coef(5), 0);
    /// assert_eq!(flat.over(3).strides, vec![4, 1, 0]);
    /// ```
    pub fn constant(offset: i64) -> Affine {
        Affine {
            offset,
            strides: vec![],
        }
    }

    /// The map `i_d`.
    ///
    /// ```
    /// use lazyfuse_ir::kernel::Affine;
    /// assert_eq!(Affine::var(1).strides, vec![0, 1]);
    /// ```
    pub fn var(d: usize) -> Affine {
        let mut strides = vec![0; d + 1];
        strides[d] = 1;
        Affine { offset: 0, strides }
    }

    /// The coefficient of dim `d` (0 past the strides).
    ///
    /// ```
    /// use lazyfuse_ir::kernel::Affine;
    /// assert_eq!((Affine::var(1).coef(1), Affine::var(1).coef(7)), (1, 0));
    /// ```
    pub fn coef(&self, d: usize) -> i64 {
        self.strides.get(d).copied().unwrap_or(0)
    }

    /// `self · k + other`, its trailing zero strides dropped.
    ///
    /// ```
    /// use lazyfuse_ir::kernel::Affine;
    /// let a = Affine::var(1).scaled_add(3, &Affine::constant(1));
    /// assert_eq!((a.offset, a.strides), (1, vec![0, 3]));
    /// ```
    pub fn scaled_add(&self, k: i64, other: &Affine) -> Affine {
        let n = self.strides.len().max(other.strides.len());
        let mut strides: Vec<i64> = (0..n).map(|d| self.coef(d) * k + other.coef(d)).collect();
        while strides.last() == Some(&0) {
            strides.pop();
        }
        Affine {
            offset: self.offset * k + other.offset,
            strides,
        }
    }

    /// The same map with exactly `nd` strides (padded with zeros, or cut): the
    /// form a kernel's loads and stores hold.
    ///
    /// ```
    /// use lazyfuse_ir::kernel::Affine;
    /// assert_eq!(Affine::var(0).over(2).strides, vec![1, 0]);
    /// ```
    pub fn over(&self, nd: usize) -> Affine {
        Affine {
            offset: self.offset,
            strides: (0..nd).map(|d| self.coef(d)).collect(),
        }
    }
}

impl fmt::Display for Affine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.offset != 0 || self.strides.iter().all(|&s| s == 0) {
            parts.push(self.offset.to_string());
        }
        for (d, &s) in self.strides.iter().enumerate() {
            match s {
                0 => {}
                1 => parts.push(format!("i{d}")),
                _ => parts.push(format!("{s}*i{d}")),
            }
        }
        f.write_str(&parts.join(" + "))
    }
}
