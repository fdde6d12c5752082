//! The kernel IR's entities: buffer and expression ids, buffer declarations, a
//! kernel's params and its stores.

use super::Affine;
use crate::dtype::DType;
use crate::op::InputId;
use std::fmt;

/// Index of a buffer of a [`Schedule`](super::Schedule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufId(pub u32);

impl fmt::Display for BufId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b{}", self.0)
    }
}

/// Index of an expression of a [`LoopKernel`](super::LoopKernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

impl fmt::Display for ExprId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// Index of a param of a [`LoopKernel`](super::LoopKernel) (one of the buffers it
/// reads or writes, [`LoopKernel::params`](super::LoopKernel::params)).
///
/// ```
/// use lazyfuse_ir::kernel::ParamId;
/// assert_eq!((ParamId(2).to_string(), ParamId(2).index()), ("p2".to_string(), 2));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamId(pub u32);

impl ParamId {
    /// The position in [`LoopKernel::params`](super::LoopKernel::params).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ParamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "p{}", self.0)
    }
}

/// Where a buffer of a schedule comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufKind {
    /// A realized buffer of the graph (an `input` node).
    Input(InputId),
    /// The result for target `i` of the realize.
    Output(usize),
    /// A value between kernels, freed after its last reader.
    Temp,
    /// A realized buffer of the graph (an `input` node) that the realize may
    /// overwrite: the old version it holds is read by nobody after the realize, and
    /// every kernel reading it runs before the first store into it (or reads only the
    /// elements it stores, at the same points). The caller gave it up (an in-place
    /// write stores into it instead of copying the whole storage); a caller that did
    /// not is served a private copy by the executor.
    Donated(InputId),
}

/// A buffer of a schedule: `len` elements of `dtype`, contiguous.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BufDecl {
    /// element type
    pub dtype: DType,
    /// number of elements
    pub len: usize,
    /// input, output or temporary
    pub kind: BufKind,
}

/// A buffer a kernel reads or writes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    /// the schedule's buffer
    pub buf: BufId,
    /// its element type
    pub dtype: DType,
    /// its exact element count
    pub len: usize,
    /// whether the kernel stores into it
    pub writes: bool,
}

/// A store of `value` at `index` of param `param`, at the value's stage.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StoreOp {
    /// the param stored into
    pub param: ParamId,
    /// where
    pub index: Affine,
    /// what (its dtype is the param's)
    pub value: ExprId,
}
