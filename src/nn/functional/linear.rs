//! `F.linear`: an affine map of the last dim.

use crate::{Result, Tensor};

/// `input @ weight.T + bias`, as PyTorch's `F.linear`: `input` is `[*, in]`,
/// `weight` `[out, in]`, `bias` (broadcast) `[out]`; the result is `[*, out]`.
/// Shape and dtype errors are the matmul's and the add's.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2])?;
/// let w = Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2])?;
/// let b = Tensor::from_vec(vec![0.5f32, 0.5, 0.5], &[3])?;
/// let y = F::linear(&x, &w, Some(&b))?;
/// assert_eq!(y.shape(), vec![1, 3]);
/// assert_eq!(y.to_vec::<f32>()?, vec![1.5, 2.5, 3.5]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn linear(input: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    let y = input.matmul(&weight.t()?)?;
    match bias {
        Some(b) => y.add(b),
        None => Ok(y),
    }
}
