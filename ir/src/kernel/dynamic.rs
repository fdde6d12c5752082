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
