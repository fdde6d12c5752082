//! `interpolate`: resampling the spatial dims of `[N, C, *]` by nearest neighbour
//! or bilinearly, as index selections along each dim (so the gradient is their
//! scatter) with the source positions and weights of PyTorch's kernels.

use super::{invalid, require_float};
use crate::{Result, Tensor};
use lazyfuse_ir::{DType, Error as IrError};

/// The resampling of `interpolate`: PyTorch's `mode=` strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterpolateMode {
    /// `"nearest"`: the source element at `floor(dst · in/out)`
    Nearest,
    /// `"bilinear"` (4-D inputs): the two nearest rows and columns, weighted
    Bilinear,
}

impl std::str::FromStr for InterpolateMode {
    type Err = crate::Error;

    /// `"nearest"` or `"bilinear"`; PyTorch's other modes are a clear error.
    ///
    /// ```
    /// use lazyfuse::nn::functional::InterpolateMode;
    /// assert_eq!("bilinear".parse::<InterpolateMode>()?, InterpolateMode::Bilinear);
    /// assert!("bicubic".parse::<InterpolateMode>().is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<InterpolateMode> {
        match s {
            "nearest" => Ok(InterpolateMode::Nearest),
            "bilinear" => Ok(InterpolateMode::Bilinear),
            "linear" | "bicubic" | "trilinear" | "area" | "nearest-exact" => {
                Err(IrError::Unsupported(format!("interpolate with mode '{s}'")).into())
            }
            other => Err(IrError::invalid(
                "interpolate",
                format!("{other} is not a valid interpolation mode"),
            )
            .into()),
        }
    }
}

/// PyTorch's `F.interpolate(input, size, scale_factor, mode, align_corners)` for
/// `[N, C, *]` inputs: exactly one of `size` (the output's spatial sizes) and
/// `scale_factor` (one per spatial dim, or one for all: the output size is
/// `floor(in · factor)`, and the kernel maps positions by `1/factor`, as PyTorch
/// does without `recompute_scale_factor`). `align_corners` only with `Bilinear`
/// (`None` is `false`).
///
/// ```
/// use lazyfuse::nn::functional::{self as F, InterpolateMode};
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 1, 1, 2])?;
/// let y = F::interpolate(&x, None, Some(&[2.0]), InterpolateMode::Nearest, None)?;
/// assert_eq!(y.shape(), vec![1, 1, 2, 4]);
/// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0]);
/// let z = F::interpolate(&x, Some(&[1, 3]), None, InterpolateMode::Bilinear, Some(true))?;
/// assert_eq!(z.to_vec::<f32>()?, vec![1.0, 1.5, 2.0]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn interpolate(
    input: &Tensor,
    size: Option<&[usize]>,
    scale_factor: Option<&[f64]>,
    mode: InterpolateMode,
    align_corners: Option<bool>,
) -> Result<Tensor> {
    let shape = input.shape();
    if shape.len() < 3 || shape.len() > 5 {
        return Err(invalid("interpolate", format!(
            "Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {})",
            shape.len(),
            match mode {
                InterpolateMode::Nearest => "nearest",
                InterpolateMode::Bilinear => "bilinear",
            }
        )));
    }
    let spatial = shape.len() - 2;
    if mode == InterpolateMode::Nearest && align_corners.is_some() {
        return Err(invalid("interpolate", 
            "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear",
        ));
    }
    if mode == InterpolateMode::Bilinear && shape.len() != 4 {
        return Err(invalid(
            "interpolate",
            format!(
                "Got {}D input, but bilinear mode needs 4D input",
                shape.len()
            ),
        ));
    }
    if mode == InterpolateMode::Bilinear {
        require_float("upsample_bilinear2d_out_frame", input.dtype())?;
    }
    // per spatial dim: the output size and the scale the kernel maps by (None:
    // in/out)
    let plan: Vec<(usize, Option<f64>)> = match (size, scale_factor) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "interpolate",
                "only one of size or scale_factor should be defined",
            ))
        }
        (None, None) => {
            return Err(invalid(
                "interpolate",
                "either size or scale_factor should be defined",
            ))
        }
        (Some(size), None) => {
            let size = broadcast(size, spatial, "size")?;
            size.into_iter().map(|s| (s, None)).collect()
        }
        (None, Some(factors)) => {
            let factors = broadcast(factors, spatial, "scale_factor")?;
            factors
                .into_iter()
                .zip(&shape[2..])
                .map(|(f, &n)| ((n as f64 * f).floor() as usize, Some(1.0 / f)))
                .collect()
        }
    };
    let device = input.device();
    let mut out = input.clone();
    match mode {
        InterpolateMode::Nearest => {
            for (d, &(out_size, scale)) in plan.iter().enumerate() {
                let n = shape[2 + d];
                let index = nearest_sources(n, out_size, scale);
                let index = Tensor::from_vec_on(index, &[out_size], device)?;
                out = out.index_select(2 + d as isize, &index)?;
            }
            Ok(out)
        }
        InterpolateMode::Bilinear => {
            let corners = align_corners.unwrap_or(false);
            let double = input.dtype() == DType::F64;
            let mut parts = Vec::new();
            for (d, &(out_size, scale)) in plan.iter().enumerate() {
                parts.push(linear_sources(
                    shape[2 + d],
                    out_size,
                    scale,
                    corners,
                    double,
                ));
            }
            let weights = |w: &[f64], shape: &[usize]| -> Result<Tensor> {
                Tensor::from_vec_on(w.to_vec(), shape, device)?.to_dtype(input.dtype())
            };
            let (h, w) = (&parts[0], &parts[1]);
            let (oh, ow) = (plan[0].0, plan[1].0);
            let index = |i: &[i64], n: usize| Tensor::from_vec_on(i.to_vec(), &[n], device);
            let rows0 = input.index_select(2, &index(&h.first, oh)?)?;
            let rows1 = input.index_select(2, &index(&h.second, oh)?)?;
            let (w0, w1) = (index(&w.first, ow)?, index(&w.second, ow)?);
            let (lw0, lw1) = (weights(&w.weight0, &[ow])?, weights(&w.weight1, &[ow])?);
            let (lh0, lh1) = (
                weights(&h.weight0, &[oh, 1])?,
                weights(&h.weight1, &[oh, 1])?,
            );
            let blend = |rows: &Tensor| -> Result<Tensor> {
                rows.index_select(3, &w0)?
                    .mul(&lw0)?
                    .add(&rows.index_select(3, &w1)?.mul(&lw1)?)
            };
            blend(&rows0)?.mul(&lh0)?.add(&blend(&rows1)?.mul(&lh1)?)
        }
    }
}

/// One value per spatial dim (a single value stands for all).
fn broadcast<T: Copy>(values: &[T], spatial: usize, what: &str) -> Result<Vec<T>> {
    match values.len() {
        1 => Ok(vec![values[0]; spatial]),
        n if n == spatial => Ok(values.to_vec()),
        n => Err(invalid("interpolate", format!(
            "Input and {what} must have the same number of spatial dimensions, but got input with spatial dimensions of {spatial} and {what} of length {n}."
        ))),
    }
}

/// PyTorch's scale of a spatial dim: `1/scale_factor` where one was given, else
/// `in/out`, in float32 (the kernels' `compute_scales_value<float>`).
fn scale_of(n: usize, out: usize, scale: Option<f64>) -> f32 {
    match scale {
        Some(s) if s > 0.0 => s as f32,
        _ => n as f32 / out as f32,
    }
}

/// The source index of each output position for `nearest` (PyTorch's
/// `nearest_idx`: the identity for equal sizes, a halving for double sizes, else
/// `min(floor(dst · scale), n − 1)` in float32).
fn nearest_sources(n: usize, out: usize, scale: Option<f64>) -> Vec<i64> {
    let scale = scale_of(n, out, scale);
    (0..out)
        .map(|dst| {
            if out == n {
                dst as i64
            } else if out == 2 * n {
                (dst >> 1) as i64
            } else {
                ((dst as f32 * scale).floor() as i64).min(n as i64 - 1)
            }
        })
        .collect()
}

/// The two source indices and weights of each output position for `bilinear`.
struct Linear {
    first: Vec<i64>,
    second: Vec<i64>,
    weight0: Vec<f64>,
    weight1: Vec<f64>,
}

/// PyTorch's `area_pixel_compute_source_index` and its neighbours: with
/// `align_corners` the source is `dst·(n − 1)/(out − 1)`, else
/// `max((dst + 0.5)·scale − 0.5, 0)`; the second index is the next one inside the
/// input, the weights `1 − λ` and `λ` for `λ` the source's fraction. Computed in
/// the kernel's precision: float64 for float64 inputs, else float32.
fn linear_sources(n: usize, out: usize, scale: Option<f64>, corners: bool, double: bool) -> Linear {
    let round = |v: f64| if double { v } else { f64::from(v as f32) };
    let scale = if corners {
        if out > 1 {
            round((n as f64 - 1.0) / (out as f64 - 1.0))
        } else {
            0.0
        }
    } else if double {
        match scale {
            Some(s) if s > 0.0 => s,
            _ => n as f64 / out as f64,
        }
    } else {
        f64::from(scale_of(n, out, scale))
    };
    let mut l = Linear {
        first: Vec::with_capacity(out),
        second: Vec::with_capacity(out),
        weight0: Vec::with_capacity(out),
        weight1: Vec::with_capacity(out),
    };
    for dst in 0..out {
        let src = if corners {
            round(scale * dst as f64)
        } else {
            round(round(scale * round(dst as f64 + 0.5)) - 0.5).max(0.0)
        };
        let i0 = (src as i64).min(n as i64 - 1);
        let i1 = i0 + i64::from(i0 < n as i64 - 1);
        let lambda = round(src - i0 as f64);
        l.first.push(i0);
        l.second.push(i1);
        l.weight0.push(round(1.0 - lambda));
        l.weight1.push(lambda);
    }
    l
}
