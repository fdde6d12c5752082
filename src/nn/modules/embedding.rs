//! `nn.Embedding`: a lookup table of rows, initialized as PyTorch does.

use crate::nn::functional as F;
use crate::nn::init::parameter;
use crate::nn::{Module, TrainingFlag};
use crate::{Result, Tensor};
use lazyfuse_ir::Error as IrError;

/// PyTorch's `nn.Embedding(num_embeddings, embedding_dim, padding_idx)`: `weight`
/// `[num_embeddings, embedding_dim]` drawn from N(0, 1), the padding row (a
/// negative index counts from the end) zeroed and given no gradient.
///
/// ```
/// use lazyfuse::nn::{Embedding, Module};
/// use lazyfuse::Tensor;
/// let emb = Embedding::new(10, 3, Some(0))?;
/// let ids = Tensor::from_vec(vec![0i64, 4, 4], &[3])?;
/// let y = emb.forward(&ids)?;
/// assert_eq!(y.shape(), vec![3, 3]);
/// assert_eq!(y.to_vec::<f32>()?[..3], [0.0, 0.0, 0.0]);
/// assert!(Embedding::new(10, 3, Some(10)).is_err());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Debug)]
pub struct Embedding {
    /// `[num_embeddings, embedding_dim]`
    pub weight: Tensor,
    /// the row without gradient, as a non-negative index
    pub padding_idx: Option<i64>,
    training: TrainingFlag,
}

impl Embedding {
    /// A table with freshly drawn rows.
    pub fn new(
        num_embeddings: usize,
        embedding_dim: usize,
        padding_idx: Option<i64>,
    ) -> Result<Embedding> {
        let n = num_embeddings as i64;
        let padding_idx = match padding_idx {
            Some(p) if p >= n || p < -n => {
                return Err(IrError::invalid(
                    "Embedding",
                    "Padding_idx must be within num_embeddings",
                )
                .into())
            }
            Some(p) if p < 0 => Some(p + n),
            other => other,
        };
        let weight = Tensor::zeros(&[num_embeddings, embedding_dim], crate::default_dtype());
        weight.normal_(0.0, 1.0)?;
        if let Some(p) = padding_idx {
            weight.select(0, p as isize)?.fill_(0)?;
        }
        Ok(Embedding {
            weight: parameter(&weight)?,
            padding_idx,
            training: TrainingFlag::new(),
        })
    }
}

impl Module for Embedding {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        F::embedding(input, &self.weight, self.padding_idx)
    }

    fn own_parameters(&self) -> Vec<(String, Tensor)> {
        vec![("weight".to_string(), self.weight.clone())]
    }

    fn training_flag(&self) -> Option<&TrainingFlag> {
        Some(&self.training)
    }
}
