//! PyTorch's `torch.layout`: how a tensor's elements sit in memory. lazyfuse tensors
//! are strided (a storage, a shape, strides and an offset: [`crate::StridedLayout`]);
//! the sparse and jagged layouts parse and print, and asking for one is a clear error.

use crate::error::{Error, Result};
use lazyfuse_ir::Error as IrError;
use std::fmt;
use std::str::FromStr;

/// A memory layout, as `torch.layout`.
///
/// ```
/// use lazyfuse::Layout;
/// let l: Layout = "torch.sparse_coo".parse().unwrap();
/// assert_eq!((l, l.to_string()), (Layout::SparseCoo, "torch.sparse_coo".to_string()));
/// assert_eq!("strided".parse::<Layout>().unwrap(), Layout::Strided);
/// assert!(Layout::SparseCoo.check_supported("zeros").is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// dense elements addressed through strides (every lazyfuse tensor)
    Strided,
    /// sparse coordinate format
    SparseCoo,
    /// compressed sparse rows
    SparseCsr,
    /// compressed sparse columns
    SparseCsc,
    /// block-compressed sparse rows
    SparseBsr,
    /// block-compressed sparse columns
    SparseBsc,
    /// nested tensors of ragged rows
    Jagged,
}

impl Layout {
    /// Every layout, in PyTorch's order.
    pub const ALL: [Layout; 7] = [
        Layout::Strided,
        Layout::SparseCoo,
        Layout::SparseCsr,
        Layout::SparseCsc,
        Layout::SparseBsr,
        Layout::SparseBsc,
        Layout::Jagged,
    ];

    /// The name after `torch.` (`strided`, `sparse_coo`, …).
    pub fn name(self) -> &'static str {
        match self {
            Layout::Strided => "strided",
            Layout::SparseCoo => "sparse_coo",
            Layout::SparseCsr => "sparse_csr",
            Layout::SparseCsc => "sparse_csc",
            Layout::SparseBsr => "sparse_bsr",
            Layout::SparseBsc => "sparse_bsc",
            Layout::Jagged => "jagged",
        }
    }

    /// `Ok` for the strided layout; for the others the error an op asked for one
    /// (`op`) gives: lazyfuse has strided tensors only.
    pub fn check_supported(self, op: &str) -> Result<()> {
        match self {
            Layout::Strided => Ok(()),
            other => Err(other.unsupported(op)),
        }
    }

    /// The error of `op` asked for this layout when lazyfuse cannot make it.
    pub(crate) fn unsupported(self, op: &str) -> Error {
        Error::from(IrError::Unsupported(format!(
            "{op}: layout {self} is not supported: lazyfuse tensors are strided (torch.strided)"
        )))
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "torch.{}", self.name())
    }
}

impl FromStr for Layout {
    type Err = Error;

    /// `"strided"` or `"torch.strided"`, and likewise for the other layouts.
    fn from_str(s: &str) -> Result<Layout> {
        let name = s.strip_prefix("torch.").unwrap_or(s);
        Layout::ALL
            .into_iter()
            .find(|l| l.name() == name)
            .ok_or_else(|| {
                Error::from(IrError::invalid(
                    "layout",
                    format!("unknown layout '{s}' (expected one of torch.strided, torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc, torch.jagged)"),
                ))
            })
    }
}
