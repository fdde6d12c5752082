//! `dropout`: zeroing elements at random (the global Philox generator) and
//! scaling the rest, in training only.

use crate::{Result, Tensor};
use lazyfuse_ir::{DType, Error as IrError};

/// PyTorch's `F.dropout(input, p, training)`: in training, each element is zeroed
/// with probability `p` and the others scaled by `1/(1 − p)` (so the expected
/// value stays), from a mask drawn from the global generator (`manual_seed`
/// repeats it); the gradient passes through the same mask. With `p = 0` or out
/// of training the input itself; `p = 1` zeroes everything.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::{manual_seed, DType, Tensor};
/// manual_seed(1);
/// let x = Tensor::ones(&[1000], DType::F32);
/// let y = F::dropout(&x, 0.25, true)?.to_vec::<f32>()?;
/// assert!(y.iter().all(|&v| v == 0.0 || (v - 4.0 / 3.0).abs() < 1e-6));
/// let kept = y.iter().filter(|&&v| v != 0.0).count();
/// assert!((650..850).contains(&kept));
/// assert_eq!(F::dropout(&x, 0.25, false)?.to_vec::<f32>()?, vec![1.0; 1000]);
/// assert!(F::dropout(&x, 1.5, true).is_err());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn dropout(input: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    if !(0.0..=1.0).contains(&p) {
        return Err(IrError::invalid(
            "dropout",
            format!("dropout probability has to be between 0 and 1, but got {p}"),
        )
        .into());
    }
    if !training || p == 0.0 {
        return Ok(input.clone());
    }
    if p == 1.0 {
        return input.mul(0.0);
    }
    let draw = match input.dtype() {
        DType::F64 => DType::F64,
        _ => DType::F32,
    };
    let keep = Tensor::rand_on(&input.shape(), draw, input.device())?.lt(1.0 - p)?;
    input.mul(&keep)?.div(1.0 - p)
}
