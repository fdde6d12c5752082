//! The data-dependent term of a gather-like load's index ([`DynIndex`]) and what an
//! index out of range reports ([`IndexError`]).

use super::ExprId;
use std::fmt;

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
    /// `index_select` ([`IndexError::index_select`] says which of PyTorch's two
    /// messages)
    IndexSelect {
        /// "index out of range in self" (else PyTorch's "INDICES element …")
        in_self: bool,
    },
    /// `take` (`size` is the input's element count)
    Take,
}

impl IndexError {
    /// The error of `index_select` along `axis` of an input of `shape`. PyTorch's
    /// CPU kernel words it by the path it takes: "index out of range in self" for a
    /// zero-dim input and for rows (axis 0) of an input of two or more dims (as
    /// `F.embedding` reports), "INDICES element is out of DATA bounds" otherwise.
    ///
    /// ```
    /// use lazyfuse_ir::kernel::IndexError;
    /// assert_eq!(IndexError::index_select(&[5, 2], 0).message(7, 5), "index out of range in self");
    /// assert_eq!(
    ///     IndexError::index_select(&[3, 4], 1).message(4, 4),
    ///     "INDICES element is out of DATA bounds, id=4 axis_dim=4"
    /// );
    /// ```
    pub fn index_select(shape: &[usize], axis: usize) -> IndexError {
        IndexError::IndexSelect {
            in_self: shape.is_empty() || (axis == 0 && shape.len() > 1),
        }
    }

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
            IndexError::IndexSelect { in_self: true } => "index out of range in self".into(),
            IndexError::IndexSelect { in_self: false } => {
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
            IndexError::IndexSelect { in_self } => {
                write!(f, "index_select{}", if *in_self { " in_self" } else { "" })
            }
            IndexError::Take => f.write_str("take"),
        }
    }
}
