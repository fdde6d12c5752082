//! The classification losses of `torch.nn.functional`: `nll_loss`, `cross_entropy`
//! (class indices, with class weights, `ignore_index` and label smoothing, or class
//! probabilities), `binary_cross_entropy` (and `_with_logits`) and `kl_div`.
//!
//! They are compositions (log-softmax, a gather of each target's entry, masks and
//! reductions) in the arrangement of PyTorch's own composite implementations, so
//! autograd differentiates them as PyTorch does. Class indices are read when the
//! loss is built, as PyTorch reads them: a target out of range is its error.

use super::Reduction;
use super::{invalid, require_float};
use crate::{Result, Tensor};
use lazyfuse_ir::DType;

/// How `kl_div` reduces: PyTorch's `reduction=` strings, `"batchmean"` included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KlReduction {
    /// the elementwise values (`"none"`)
    None,
    /// the mean over every element (`"mean"`, the default; PyTorch warns that it is
    /// not the KL divergence's mean)
    #[default]
    Mean,
    /// the sum over every element (`"sum"`)
    Sum,
    /// the sum divided by the batch size, `input.size(0)` (`"batchmean"`: the KL
    /// divergence's mean)
    BatchMean,
}

impl std::str::FromStr for KlReduction {
    type Err = crate::Error;

    /// `"none"`, `"mean"`, `"sum"`, `"batchmean"`.
    ///
    /// ```
    /// use lazyfuse::nn::functional::KlReduction;
    /// assert_eq!("batchmean".parse::<KlReduction>()?, KlReduction::BatchMean);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<KlReduction> {
        match s {
            "batchmean" => Ok(KlReduction::BatchMean),
            other => Ok(match other.parse::<Reduction>()? {
                Reduction::None => KlReduction::None,
                Reduction::Mean => KlReduction::Mean,
                Reduction::Sum => KlReduction::Sum,
            }),
        }
    }
}

/// The class dim of an `input` of `[C]` or `[N, C, d1, …]`.
fn class_dim(input: &Tensor) -> isize {
    if input.ndim() == 1 {
        0
    } else {
        1
    }
}

/// Checks the shapes and dtype of a class-index `target` against `input` as
/// PyTorch's `nll_loss` does, and reads the target to check its classes.
fn check_class_target(
    op: &str,
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
) -> Result<()> {
    let (shape, tshape) = (input.shape(), target.shape());
    if shape.is_empty() {
        return Err(invalid(op, "input tensor should be 1D or 2D"));
    }
    if target.dtype() != DType::I64 {
        return Err(invalid(
            op,
            format!(
                "expected scalar type Long but found {}",
                target.dtype().torch_name()
            ),
        ));
    }
    let batch_ok = if shape.len() == 1 {
        tshape.is_empty()
    } else {
        tshape.len() == shape.len() - 1 && tshape[0] == shape[0] && tshape[1..] == shape[2..]
    };
    if !batch_ok {
        if shape.len() >= 2 && tshape.first() != Some(&shape[0]) {
            return Err(invalid(
                op,
                format!(
                    "Expected input batch_size ({}) to match target batch_size ({}).",
                    shape[0],
                    tshape.first().copied().unwrap_or(0)
                ),
            ));
        }
        return Err(invalid(
            op,
            format!("size mismatch (got input: {shape:?} , target: {tshape:?})"),
        ));
    }
    let classes = shape[class_dim(input) as usize];
    if let Some(w) = weight {
        if w.shape() != [classes] {
            return Err(invalid(
                op,
                format!(
                    "weight tensor should be defined either for all {classes} classes or no classes but got weight tensor of shape: {:?}",
                    w.shape()
                ),
            ));
        }
    }
    for t in target.to_vec::<i64>()? {
        if t != ignore_index && (t < 0 || t >= classes as i64) {
            return Err(invalid(op, format!("Target {t} is out of bounds.")));
        }
    }
    Ok(())
}

/// Per target position: the weight of its class (0 where ignored), the target
/// with ignored positions sent to class 0 (a valid index), and where it is
/// ignored.
fn target_weights(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let ignored = target.eq(ignore_index)?;
    let safe = target.masked_fill(&ignored, 0)?;
    let per_target = match weight {
        Some(w) => w
            .index_select(0, &safe.reshape(&[-1])?)?
            .reshape(&shape_of(target))?,
        None => Tensor::ones_like(target, Some(input.dtype()))?,
    };
    Ok((per_target.masked_fill(&ignored, 0.0)?, safe, ignored))
}

fn shape_of(t: &Tensor) -> Vec<isize> {
    t.shape().iter().map(|&d| d as isize).collect()
}

/// The negative log-likelihood terms `-w[t]·input[t]` per target position, their
/// weights, and where the target is ignored.
fn nll_terms(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let (w, safe, ignored) = target_weights(input, target, weight, ignore_index)?;
    let dim = class_dim(input);
    let picked = input.gather(dim, &safe.unsqueeze(dim)?)?.squeeze_dim(dim)?;
    Ok((picked.mul(&w)?.neg()?, w, ignored))
}

/// `reduction` of per-position values, `Mean` dividing their sum by the summed
/// target weights `w` (as `nll_loss` and its label-smoothing term divide).
fn weighted_reduce(values: Tensor, w: &Tensor, reduction: Reduction) -> Result<Tensor> {
    match reduction {
        Reduction::Mean => values.sum(&[], false)?.div(&w.sum(&[], false)?),
        other => other.apply(values),
    }
}

/// The class weights `[C]` shaped to broadcast along `input`'s class dim.
fn along_classes(w: &Tensor, input: &Tensor) -> Result<Tensor> {
    let mut s = vec![1isize; input.ndim()];
    s[class_dim(input) as usize] = -1;
    w.reshape(&s)
}

/// PyTorch's `F.nll_loss(input, target, weight, ignore_index, reduction)`: `input`
/// holds log-probabilities, `[C]` or `[N, C, d1, …]`, `target` the class of each
/// position (int64, `[]` or `[N, d1, …]`). Each position's loss is
/// `-weight[t]·input[t]` (0 where `t == ignore_index`); `Mean` divides the sum by
/// the summed weights of the positions not ignored (NaN when all are).
///
/// ```
/// use lazyfuse::nn::functional::{self as F, Reduction};
/// use lazyfuse::Tensor;
/// let logp = Tensor::from_vec(vec![-0.5f32, -1.0, -2.0, -0.25], &[2, 2])?;
/// let t = Tensor::from_vec(vec![1i64, 0], &[2])?;
/// let l = F::nll_loss(&logp, &t, None, -100, Reduction::Mean)?;
/// assert_eq!(l.to_vec::<f32>()?, vec![1.5]);
/// let bad = Tensor::from_vec(vec![2i64, 0], &[2])?;
/// assert_eq!(
///     F::nll_loss(&logp, &bad, None, -100, Reduction::Mean).unwrap_err().to_string(),
///     "Target 2 is out of bounds."
/// );
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn nll_loss(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
    reduction: Reduction,
) -> Result<Tensor> {
    check_class_target("nll_loss", input, target, weight, ignore_index)?;
    let (terms, w, _) = nll_terms(input, target, weight, ignore_index)?;
    weighted_reduce(terms, &w, reduction)
}

/// PyTorch's `F.cross_entropy`. With class-index targets (int64): `nll_loss` of
/// `log_softmax(input)` along the class dim, and with `label_smoothing` ε the
/// mix `(1 − ε)·nll + ε/C·smooth`, where a position's smooth term is
/// `−Σ_c weight[c]·log_softmax(input)[c]` (0 where ignored) and `Mean` divides its
/// sum as `nll_loss` divides (PyTorch's `cross_entropy_loss_label_smoothing`).
/// With a floating `target` of `input`'s shape, class probabilities:
/// `−Σ_c weight[c]·target[c]·log_softmax(input)[c]` per position, the targets
/// first smoothed to `(1 − ε)·target + ε/C`, `Mean` dividing by the number of
/// positions (`ignore_index` must then be negative, as in PyTorch).
///
/// ```
/// use lazyfuse::nn::functional::{self as F, Reduction};
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![0.0f32, 0.0], &[1, 2])?;
/// let t = Tensor::from_vec(vec![1i64], &[1])?;
/// let l = F::cross_entropy(&x, &t, None, -100, Reduction::Mean, 0.0)?;
/// assert!((l.to_vec::<f32>()?[0] - std::f32::consts::LN_2).abs() < 1e-6);
/// let p = Tensor::from_vec(vec![0.5f32, 0.5], &[1, 2])?;
/// let l = F::cross_entropy(&x, &p, None, -100, Reduction::Sum, 0.0)?;
/// assert!((l.to_vec::<f32>()?[0] - std::f32::consts::LN_2).abs() < 1e-6);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn cross_entropy(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
    reduction: Reduction,
    label_smoothing: f64,
) -> Result<Tensor> {
    let op = "cross_entropy";
    if !(0.0..=1.0).contains(&label_smoothing) {
        return Err(invalid(
            op,
            format!("label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"),
        ));
    }
    if target.dtype().is_floating_point() {
        if ignore_index >= 0 {
            return Err(invalid(
                op,
                "ignore_index is not supported for floating point target",
            ));
        }
        return probability_targets(input, target, weight, reduction, label_smoothing);
    }
    check_class_target(op, input, target, weight, ignore_index)?;
    let dim = class_dim(input);
    let logp = input.log_softmax(dim)?;
    let (terms, w, ignored) = nll_terms(&logp, target, weight, ignore_index)?;
    let nll = weighted_reduce(terms, &w, reduction)?;
    if label_smoothing == 0.0 {
        return Ok(nll);
    }
    let classes = input.shape()[dim as usize] as f64;
    let weighted = match weight {
        Some(cw) => logp.mul(&along_classes(cw, input)?)?,
        None => logp,
    };
    let smooth = weighted
        .sum(&[dim], false)?
        .neg()?
        .masked_fill(&ignored, 0.0)?;
    let smooth = weighted_reduce(smooth, &w, reduction)?;
    nll.mul(1.0 - label_smoothing)?
        .add(&smooth.mul(label_smoothing / classes)?)
}

/// `cross_entropy` with class-probability targets (`target` of `input`'s shape and
/// a floating dtype): `−Σ_c weight[c]·target[c]·log_softmax(input)[c]` per
/// position, the targets first smoothed to `(1 − ε)·target + ε/C`; `Mean` divides
/// by the number of positions.
fn probability_targets(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: Reduction,
    label_smoothing: f64,
) -> Result<Tensor> {
    let op = "cross_entropy";
    if input.shape() != target.shape() {
        return Err(invalid(
            op,
            format!(
                "Expected input batch_size ({}) to match target batch_size ({}).",
                input.shape().first().copied().unwrap_or(1),
                target.shape().first().copied().unwrap_or(1)
            ),
        ));
    }
    if !target.dtype().is_floating_point() {
        return Err(invalid(
            op,
            format!(
                "Expected floating point type for target with class probabilities, got {}",
                target.dtype().torch_name()
            ),
        ));
    }
    let dim = class_dim(input);
    let classes = input.shape()[dim as usize];
    let target = if label_smoothing > 0.0 {
        target
            .mul(1.0 - label_smoothing)?
            .add(label_smoothing / classes as f64)?
    } else {
        target.clone()
    };
    let mut terms = input.log_softmax(dim)?.mul(&target)?;
    if let Some(w) = weight {
        terms = terms.mul(&along_classes(w, input)?)?;
    }
    let loss = terms.sum(&[dim], false)?.neg()?;
    match reduction {
        Reduction::None => Ok(loss),
        Reduction::Sum => loss.sum(&[], false),
        Reduction::Mean => {
            let positions = (input.numel() / classes.max(1)) as f64;
            loss.sum(&[], false)?.div(positions)
        }
    }
}

/// PyTorch's `F.binary_cross_entropy(input, target, weight, reduction)`: `input`
/// holds probabilities, each term `−(t·log(x) + (1 − t)·log(1 − x))` with each log
/// clamped at −100 (PyTorch's kernel), times `weight` where given. An input
/// outside `[0, 1]` is PyTorch's error; the input is read to check it, as
/// PyTorch's kernel reads it.
///
/// ```
/// use lazyfuse::nn::functional::{self as F, Reduction};
/// use lazyfuse::Tensor;
/// let p = Tensor::from_vec(vec![0.5f32], &[1])?;
/// let t = Tensor::from_vec(vec![1.0f32], &[1])?;
/// let l = F::binary_cross_entropy(&p, &t, None, Reduction::Mean)?;
/// assert!((l.to_vec::<f32>()?[0] - std::f32::consts::LN_2).abs() < 1e-6);
/// let bad = Tensor::from_vec(vec![1.5f32], &[1])?;
/// assert!(F::binary_cross_entropy(&bad, &t, None, Reduction::Mean).is_err());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn binary_cross_entropy(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: Reduction,
) -> Result<Tensor> {
    let op = "binary_cross_entropy";
    if input.shape() != target.shape() {
        return Err(invalid(
            op,
            format!(
                "Using a target size (torch.Size({:?})) that is different to the input size (torch.Size({:?})) is deprecated. Please ensure they have the same size.",
                target.shape(),
                input.shape()
            ),
        ));
    }
    require_float("binary_cross_entropy", input.dtype())?;
    let outside = input
        .lt(0.0)?
        .logical_or(&input.gt(1.0)?)?
        .any(&[], false)?;
    if outside.to_vec::<bool>()?[0] {
        return Err(invalid(
            op,
            "all elements of input should be between 0 and 1",
        ));
    }
    let log_x = input.log()?.clamp_min(-100.0)?;
    let log_1mx = input.neg()?.log1p()?.clamp_min(-100.0)?;
    let mut loss = target.sub(1.0)?.mul(&log_1mx)?.sub(&target.mul(&log_x)?)?;
    if let Some(w) = weight {
        loss = loss.mul(w)?;
    }
    reduction.apply(loss)
}

/// `log(sigmoid(x))` as PyTorch's kernel computes it: `min(x, 0) − log1p(exp(−|x|))`.
fn log_sigmoid(x: &Tensor) -> Result<Tensor> {
    x.minimum(0.0)?.sub(&x.abs()?.neg()?.exp()?.log1p()?)
}

/// PyTorch's `F.binary_cross_entropy_with_logits(input, target, weight, reduction,
/// pos_weight)`: `(1 − t)·x − log_weight·log_sigmoid(x)` with `log_weight =
/// (pos_weight − 1)·t + 1` (1 without `pos_weight`), times `weight` where given.
///
/// ```
/// use lazyfuse::nn::functional::{self as F, Reduction};
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![0.0f32], &[1])?;
/// let t = Tensor::from_vec(vec![1.0f32], &[1])?;
/// let l = F::binary_cross_entropy_with_logits(&x, &t, None, Reduction::Mean, None)?;
/// assert!((l.to_vec::<f32>()?[0] - std::f32::consts::LN_2).abs() < 1e-6);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn binary_cross_entropy_with_logits(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: Reduction,
    pos_weight: Option<&Tensor>,
) -> Result<Tensor> {
    if input.shape() != target.shape() {
        return Err(invalid(
            "binary_cross_entropy_with_logits",
            format!(
                "Target size ({:?}) must be the same as input size ({:?})",
                target.shape(),
                input.shape()
            ),
        ));
    }
    let mut log_sig = log_sigmoid(input)?;
    if let Some(pw) = pos_weight {
        log_sig = log_sig.mul(&pw.sub(1.0)?.mul(target)?.add(1.0)?)?;
    }
    let mut loss = target.neg()?.add(1.0)?.mul(input)?.sub(&log_sig)?;
    if let Some(w) = weight {
        loss = loss.mul(w)?;
    }
    reduction.apply(loss)
}

/// PyTorch's `F.kl_div(input, target, reduction, log_target)`: `input` holds
/// log-probabilities; each term is `target·(log target − input)` (`xlogy(t, t) −
/// t·input`, 0 where `t = 0`), or `exp(target)·(target − input)` when the target
/// is given as log-probabilities too.
///
/// ```
/// use lazyfuse::nn::functional::{self as F, KlReduction};
/// use lazyfuse::Tensor;
/// let logq = Tensor::from_vec(vec![(0.5f32).ln(), (0.5f32).ln()], &[1, 2])?;
/// let p = Tensor::from_vec(vec![0.5f32, 0.5], &[1, 2])?;
/// let d = F::kl_div(&logq, &p, KlReduction::BatchMean, false)?;
/// assert!(d.to_vec::<f32>()?[0].abs() < 1e-7);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn kl_div(
    input: &Tensor,
    target: &Tensor,
    reduction: KlReduction,
    log_target: bool,
) -> Result<Tensor> {
    let terms = if log_target {
        target.exp()?.mul(&target.sub(input)?)?
    } else {
        target.xlogy(target)?.sub(&target.mul(input)?)?
    };
    match reduction {
        KlReduction::None => Ok(terms),
        KlReduction::Mean => terms.mean(&[], false),
        KlReduction::Sum => terms.sum(&[], false),
        KlReduction::BatchMean => {
            let batch = if input.ndim() == 0 {
                1
            } else {
                input.shape()[0]
            };
            terms.sum(&[], false)?.div(batch as f64)
        }
    }
}
