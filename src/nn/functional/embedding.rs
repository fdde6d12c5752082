//! Index-to-vector functions: `embedding` (rows of a weight matrix) and `one_hot`.

use crate::{Result, Tensor};
use lazyfuse_ir::{DType, Error as IrError};

/// PyTorch's `F.embedding(indices, weight, padding_idx)`: row `indices[...]` of
/// the `[num_embeddings, dim]` matrix `weight`, so the result is `indices.shape +
/// [dim]`. `indices` are int64 or int32; one out of range is PyTorch's "index out
/// of range in self" when the result is realized. The row `padding_idx` (negative
/// counts from the end) gets no gradient; its value is read as any other.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let w = Tensor::from_vec(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[3, 2])?;
/// let i = Tensor::from_vec(vec![2i64, 0], &[2])?;
/// let e = F::embedding(&i, &w, None)?;
/// assert_eq!(e.shape(), vec![2, 2]);
/// assert_eq!(e.to_vec::<f32>()?, vec![4.0, 5.0, 0.0, 1.0]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn embedding(indices: &Tensor, weight: &Tensor, padding_idx: Option<i64>) -> Result<Tensor> {
    let op = "embedding";
    if weight.ndim() != 2 {
        return Err(IrError::invalid(op, "'weight' must be 2-D").into());
    }
    if !matches!(indices.dtype(), DType::I64 | DType::I32) {
        return Err(IrError::invalid(
            op,
            format!(
                "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.{}Tensor instead (while checking arguments for embedding)",
                indices.dtype().torch_name()
            ),
        )
        .into());
    }
    let rows = weight.shape()[0] as i64;
    let padding = match padding_idx {
        Some(p) if p >= rows || p < -rows => {
            return Err(IrError::invalid(op, "Padding_idx must be within num_embeddings").into())
        }
        Some(p) if p < 0 => Some(p + rows),
        other => other,
    };
    let mut shape: Vec<isize> = indices.shape().iter().map(|&d| d as isize).collect();
    shape.push(weight.shape()[1] as isize);
    let rows_read = weight
        .index_select(0, &indices.reshape(&[-1])?)?
        .reshape(&shape)?;
    match padding {
        None => Ok(rows_read),
        Some(p) => {
            // The padding row's positions take the value without its history.
            let at_padding = indices.eq(p)?.unsqueeze(-1)?;
            Tensor::where_cond(&at_padding, &rows_read.detach(), &rows_read)
        }
    }
}

/// PyTorch's `F.one_hot(indices, num_classes)`: an int64 tensor of shape
/// `indices.shape + [num_classes]`, 1 at each index. `num_classes = -1` takes
/// the largest index + 1 (reading `indices`). `indices` must be int64 with values
/// in `[0, num_classes)`; they are read to check that, as PyTorch checks them.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let i = Tensor::from_vec(vec![0i64, 2], &[2])?;
/// assert_eq!(F::one_hot(&i, -1)?.to_vec::<i64>()?, vec![1, 0, 0, 0, 0, 1]);
/// assert_eq!(
///     F::one_hot(&i, 2).unwrap_err().to_string(),
///     "Class values must be smaller than num_classes."
/// );
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn one_hot(indices: &Tensor, num_classes: i64) -> Result<Tensor> {
    let op = "one_hot";
    let invalid = |m: &str| -> crate::Error { IrError::invalid(op, m.to_string()).into() };
    if indices.dtype() != DType::I64 {
        return Err(invalid(
            "one_hot is only applicable to index tensor of type LongTensor.",
        ));
    }
    let values = indices.to_vec::<i64>()?;
    let classes = if num_classes == -1 {
        match values.iter().max() {
            None => {
                return Err(invalid(
                    "Can not infer total number of classes from empty tensor.",
                ))
            }
            Some(&m) => m + 1,
        }
    } else if num_classes < -1 {
        return Err(invalid("num_classes should be positive"));
    } else {
        num_classes
    };
    if values.iter().any(|&v| v < 0) {
        return Err(invalid("Class values must be non-negative."));
    }
    if values.iter().any(|&v| v >= classes) {
        return Err(invalid("Class values must be smaller than num_classes."));
    }
    let range = Tensor::arange_on(0.0, classes as f64, 1.0, DType::I64, indices.device())?;
    indices.unsqueeze(-1)?.eq(&range)?.to_dtype(DType::I64)
}
