//! `Operand`: the right-hand side of a binary op — a tensor or a host scalar.
//!
//! A host scalar is PyTorch's "wrapped number": in promotion it has the lowest
//! priority and only its category counts (`int32 tensor + 2.5` is `float32`).

use crate::error::Result;
use crate::store::Store;
use crate::tensor::Tensor;
use lazyfuse_ir::promote::{OperandType, Priority};
use lazyfuse_ir::Scalar;
use lazyfuse_ir::{DType, NodeId};

/// A tensor or a host scalar used as an operand.
///
/// ```
/// use lazyfuse::{DType, Operand, Tensor};
/// let t = Tensor::ones(&[2], DType::I32);
/// assert_eq!(t.mul(2.5).unwrap().dtype(), DType::F32);
/// let _: Operand = (&t).into();
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Operand<'a> {
    /// A tensor (dimensioned or zero-dim).
    Tensor(&'a Tensor),
    /// A wrapped host number.
    Scalar(Scalar),
}

impl<'a> Operand<'a> {
    /// The tensor, if the operand is one.
    pub(crate) fn tensor(&self) -> Option<&'a Tensor> {
        match self {
            Operand::Tensor(t) => Some(t),
            Operand::Scalar(_) => None,
        }
    }

    /// The operand an op reads at position `i` after `Tensor::align_devices`: the
    /// moved copy of a tensor, else the operand itself.
    pub(crate) fn or_moved<'b>(self, moved: &'b [Option<Tensor>], i: usize) -> Operand<'b>
    where
        'a: 'b,
    {
        match moved.get(i) {
            Some(Some(t)) => Operand::Tensor(t),
            _ => self,
        }
    }

    /// The operand's shape (`[]` for scalars).
    pub(crate) fn shape(&self) -> &'a [usize] {
        match self {
            Operand::Tensor(t) => &t.0.layout.shape,
            Operand::Scalar(_) => &[],
        }
    }

    /// How the operand takes part in promotion.
    pub(crate) fn operand_type(&self) -> OperandType {
        match self {
            Operand::Tensor(t) => OperandType {
                dtype: t.dtype(),
                priority: if t.ndim() == 0 {
                    Priority::ZeroDim
                } else {
                    Priority::Dimensioned
                },
            },
            Operand::Scalar(s) => OperandType {
                dtype: s.wrapped_dtype(),
                priority: Priority::Wrapped,
            },
        }
    }
}

impl<'a> From<&'a Tensor> for Operand<'a> {
    fn from(t: &'a Tensor) -> Self {
        Operand::Tensor(t)
    }
}

macro_rules! scalar_operand {
    ($($t:ty),*) => {$(
        impl From<$t> for Operand<'_> {
            fn from(v: $t) -> Self {
                Operand::Scalar(Scalar::from(v))
            }
        }
    )*};
}
scalar_operand!(bool, i32, i64, f32, f64);

impl From<Scalar> for Operand<'_> {
    fn from(s: Scalar) -> Self {
        Operand::Scalar(s)
    }
}

/// Reads an operand as a node of `dtype` broadcast to `shape`.
pub(crate) fn operand_node(
    store: &mut Store,
    operand: &Operand,
    dtype: DType,
    shape: &[usize],
) -> Result<NodeId> {
    match operand {
        Operand::Tensor(t) => t.node_as(store, dtype, shape),
        // One constant node of the broadcast shape (what the graph passes would
        // fold a 0-d constant and its expanding view into), from the store's
        // constant pool: a scalar operand costs nothing to fold, and in a graph
        // rebuilt with the same constants, nothing to build.
        Operand::Scalar(s) => Ok(store.constant(*s, dtype, shape)),
    }
}
