//! Index maps: the [`Affine`] map of a load or store over the iteration space, the
//! data-dependent term of a gather-like load ([`DynIndex`]) and what an index out
//! of range reports ([`IndexError`]).

use super::ExprId;
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

/// A data-dependent index term: `wrap(value) · stride` is added to a load's affine
/// index, where `value` is an integer expression. With `wrap`, `wrap(v)` is
/// `v + size` for `-size <= v < 0` (a value outside `[-size, size)` is out of
/// range); without it every negative value is out of range (a value outside
/// `[0, size)`). An out-of-range value sets [`Status::IndexOutOfRange`](super::Status::IndexOutOfRange) (the status
/// block's slots 1, 2 and 3 hold the value, `size` and the load's [`ExprId`]), is
/// never dereferenced, and the load yields 0.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DynIndex {
    /// the index expression (an integer dtype)
    pub value: ExprId,
    /// the size of the indexed dim
    pub size: u64,
    /// the element stride of the indexed dim
    pub stride: i64,
    /// whether negative values in `[-size, 0)` count from the end
    pub wrap: bool,
    /// which op's error an out-of-range value is (the executor's message)
    pub error: IndexError,
}

/// The graph op a [`DynIndex`] load comes from: what the executor needs to word an
/// out-of-range value exactly as the interpreter does ([`IndexError::message`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexError {
    /// `gather` along `axis`
    Gather {
        /// the graph op's axis
        axis: usize,
    },
    /// `index_select` (of a zero-dim input when `zero_dim`)
    IndexSelect {
        /// whether the input is zero-dim (PyTorch words that case differently)
        zero_dim: bool,
    },
    /// `take` (`size` is the input's element count)
    Take,
}

impl IndexError {
    /// The interpreter's message for index `value` out of range of `size`
    /// (`runtime/src/interp/index.rs`).
    ///
    /// ```
    /// use lazyfuse_ir::kernel::IndexError;
    /// assert_eq!(
    ///     IndexError::Gather { axis: 1 }.message(-1, 3),
    ///     "index -1 is out of bounds for dimension 1 with size 3"
    /// );
    /// assert_eq!(
    ///     IndexError::Take.message(7, 6),
    ///     "out of range: tried to access index 7 on a tensor of 6 elements."
    /// );
    /// ```
    pub fn message(&self, value: i64, size: u64) -> String {
        match self {
            IndexError::Gather { axis } => {
                format!("index {value} is out of bounds for dimension {axis} with size {size}")
            }
            IndexError::IndexSelect { zero_dim: true } => "index out of range in self".into(),
            IndexError::IndexSelect { zero_dim: false } => {
                format!("INDICES element is out of DATA bounds, id={value} axis_dim={size}")
            }
            IndexError::Take => {
                format!(
                    "out of range: tried to access index {value} on a tensor of {size} elements."
                )
            }
        }
    }
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexError::Gather { axis } => write!(f, "gather axis={axis}"),
            IndexError::IndexSelect { zero_dim } => {
                write!(
                    f,
                    "index_select{}",
                    if *zero_dim { " zero_dim" } else { "" }
                )
            }
            IndexError::Take => f.write_str("take"),
        }
    }
}
