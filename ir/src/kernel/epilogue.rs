//! `EpilogueOp`: what a host matrix product does to each element of its result
//! block while the block is in cache, in place of the elementwise kernel that
//! would read the stored product back: a convolution's or a linear layer's bias
//! (a strided operand added), and the following ReLU.

use std::fmt;

/// One step of an [`ExternStep`](super::ExternStep)'s epilogue, applied in order
/// to each element `(b, m, n)` of its `[b, m, n]` product after the product's own
/// `+ 0` (which turns a `-0` sum into PyTorch's `+0`): the same operations, in
/// the same order and dtype, as the kernels they replace.
///
/// ```
/// use lazyfuse_ir::kernel::EpilogueOp;
/// // a bias per row of the product (a convolution's output channel)
/// let bias = EpilogueOp::Add { slot: 2, offset: 0, strides: [0, 1, 0] };
/// assert_eq!(bias.last_index(&[32, 64, 1024]), Some(63));
/// assert_eq!(bias.to_string(), "add(in2[offset=0, strides=[0, 1, 0]])");
/// assert_eq!(EpilogueOp::Relu.to_string(), "relu");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EpilogueOp {
    /// adds element `offset + strides · (b, m, n)` of the step's input `slot`
    /// (one past the op's own inputs), of the product's dtype
    Add {
        /// the step's input holding the operand
        slot: usize,
        /// the operand's index of element `(0, 0, 0)`
        offset: usize,
        /// the operand's step per batch, row and column
        strides: [usize; 3],
    },
    /// `x < 0 ? 0 : x` (`relu`: NaN and `-0` kept)
    Relu,
}

impl EpilogueOp {
    /// The input slot the op reads, if any.
    pub fn slot(&self) -> Option<usize> {
        match self {
            EpilogueOp::Add { slot, .. } => Some(*slot),
            EpilogueOp::Relu => None,
        }
    }

    /// The largest index an `Add` reads over a product of `shape` (`None` for
    /// other ops, an empty product, or an overflow).
    pub fn last_index(&self, shape: &[usize; 3]) -> Option<usize> {
        let EpilogueOp::Add {
            offset, strides, ..
        } = self
        else {
            return None;
        };
        if shape.contains(&0) {
            return None;
        }
        shape
            .iter()
            .zip(strides)
            .try_fold(*offset, |acc, (&n, &st)| {
                acc.checked_add((n - 1).checked_mul(st)?)
            })
    }
}

impl fmt::Display for EpilogueOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EpilogueOp::Add {
                slot,
                offset,
                strides,
            } => write!(f, "add(in{slot}[offset={offset}, strides={strides:?}])"),
            EpilogueOp::Relu => f.write_str("relu"),
        }
    }
}
