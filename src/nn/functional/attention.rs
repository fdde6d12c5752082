//! `scaled_dot_product_attention`: softmax(q·kᵀ·scale + mask)·v, as one lazy graph
//! that the scheduler fuses (the product, the masked softmax, the second product).

use crate::{Result, Tensor};
use lazyfuse_ir::{DType, Error as IrError};

/// PyTorch's `F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p,
/// is_causal, scale)`, its reference ("math") form: `q` is `[…, L, E]`, `k`
/// `[…, S, E]`, `v` `[…, S, Ev]`; the weights `softmax(q·kᵀ·scale + bias)` over
/// `S`, with `scale` `1/sqrt(E)` when `None`, and `bias` −∞ where a boolean
/// `attn_mask` is false or above the diagonal when `is_causal`, or a float
/// `attn_mask` added. The result is `[…, L, Ev]`. A row whose every key is
/// masked is NaN, as in PyTorch's reference. With `dropout_p > 0` the weights go
/// through [`dropout`](super::dropout) (in training, as PyTorch's function
/// applies it).
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let q = Tensor::from_vec(vec![1.0f32, 0.0], &[1, 1, 2])?;
/// let k = Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 1.0], &[1, 2, 2])?;
/// let v = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2, 1])?;
/// let out = F::scaled_dot_product_attention(&q, &k, &v, None, 0.0, false, Some(0.0))?;
/// assert_eq!(out.to_vec::<f32>()?, vec![1.5]); // equal weights
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn scaled_dot_product_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    attn_mask: Option<&Tensor>,
    dropout_p: f64,
    is_causal: bool,
    scale: Option<f64>,
) -> Result<Tensor> {
    let op = "scaled_dot_product_attention";
    if is_causal && attn_mask.is_some() {
        return Err(IrError::invalid(
            op,
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
        )
        .into());
    }
    if q.ndim() < 2 || k.ndim() < 2 || v.ndim() < 2 {
        return Err(IrError::invalid(
            op,
            format!(
                "{op}: expected query, key and value of at least 2 dims, got {}, {} and {}",
                q.ndim(),
                k.ndim(),
                v.ndim()
            ),
        )
        .into());
    }
    let (qs, ks) = (q.shape(), k.shape());
    let (l, s, e) = (qs[qs.len() - 2], ks[ks.len() - 2], qs[qs.len() - 1]);
    let scale = scale.unwrap_or(1.0 / (e as f64).sqrt());
    let mut weights = q.matmul(&k.transpose(-2, -1)?)?.mul(scale)?;
    if is_causal {
        let keep = Tensor::ones_on(&[l, s], DType::Bool, q.device())?.tril(0)?;
        weights = weights.masked_fill(&keep.logical_not()?, f64::NEG_INFINITY)?;
    }
    if let Some(mask) = attn_mask {
        weights = if mask.dtype() == DType::Bool {
            weights.masked_fill(&mask.logical_not()?, f64::NEG_INFINITY)?
        } else {
            weights.add(mask)?
        };
    }
    let weights = super::dropout(&weights.softmax(-1)?, dropout_p, true)?;
    weights.matmul(v)
}
