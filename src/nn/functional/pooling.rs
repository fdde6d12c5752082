//! The pooling functions of `torch.nn.functional` over `[N, C, H, W]` (or
//! `[C, H, W]`): `max_pool2d` (with its indices), `avg_pool2d`, and the adaptive
//! `adaptive_avg_pool2d` and `adaptive_max_pool2d`.
//!
//! A fixed window is a view: the input padded (−∞ for max, 0 for the average: a
//! lazy pad, fused into the reading kernel), `unfold` along H and W (overlapping
//! windows are strides, not copies), then a reduction over the window dims. The
//! maximum's gradient goes to the first maximal element of each window, as in
//! PyTorch (`max(dim)`'s rule). Adaptive windows vary in size: the average is
//! separable, a product with an averaging matrix on each side; the maximum is
//! taken over slices, rows then columns.

use super::{invalid, is_channels_last, keep_format, require_float};
use crate::{Result, Tensor};
use lazyfuse_ir::DType;

/// One spatial dim's window: kernel, stride, padding, dilation.
#[derive(Clone, Copy, Debug)]
struct Window {
    kernel: usize,
    stride: usize,
    padding: usize,
    dilation: usize,
}

impl Window {
    /// The extent the dilated kernel covers.
    fn extent(self) -> usize {
        self.dilation * (self.kernel - 1) + 1
    }

    /// PyTorch's `pooling_output_shape`: the number of windows over `n`, with
    /// `ceil_mode` counting a last partial window that starts inside the input or
    /// its left padding.
    fn outputs(self, n: usize, ceil_mode: bool) -> i64 {
        let (n, s, p) = (n as i64, self.stride as i64, self.padding as i64);
        let span = n + 2 * p - self.extent() as i64 + if ceil_mode { s - 1 } else { 0 };
        let mut out = span.div_euclid(s) + 1;
        if ceil_mode && (out - 1) * s >= n + p {
            out -= 1;
        }
        out
    }
}

/// The 1 or 2 values of a pooling argument, for H and W.
fn pair(op: &str, what: &str, v: &[usize], default: Option<&[usize]>) -> Result<[usize; 2]> {
    let v = if v.is_empty() {
        default.unwrap_or(v)
    } else {
        v
    };
    match v {
        [a] => Ok([*a, *a]),
        [a, b] => Ok([*a, *b]),
        _ => Err(invalid(
            op,
            format!("{op}: {what} must either be a single int, or a tuple of two ints"),
        )),
    }
}

/// The checked windows of a pooling op over an input of `shape` (`[C, H, W]` or
/// `[N, C, H, W]`), and the output's spatial sizes.
fn windows_of(
    op: &str,
    shape: &[usize],
    kernel_size: &[usize],
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
    ceil_mode: bool,
) -> Result<([Window; 2], [usize; 2])> {
    if shape.len() != 3 && shape.len() != 4 {
        return Err(invalid(
            op,
            format!(
                "non-empty 3D or 4D (batch mode) tensor expected for input, but got a tensor of {} dims",
                shape.len()
            ),
        ));
    }
    let k = pair(op, "kernel_size", kernel_size, None)?;
    let s = pair(op, "stride", stride, Some(&k))?;
    let p = pair(op, "padding", padding, None)?;
    let d = pair(op, "dilation", dilation, None)?;
    if k.contains(&0) {
        return Err(invalid(
            op,
            format!(
                "kernel size should be greater than zero, but got kH: {} kW: {}",
                k[0], k[1]
            ),
        ));
    }
    if s.contains(&0) {
        return Err(invalid(
            op,
            format!(
                "stride should be greater than zero, but got dH: {} dW: {}",
                s[0], s[1]
            ),
        ));
    }
    if d.contains(&0) {
        return Err(invalid(
            op,
            format!(
                "dilation should be greater than zero, but got dilationH: {} dilationW: {}",
                d[0], d[1]
            ),
        ));
    }
    let w = [0, 1].map(|i| Window {
        kernel: k[i],
        stride: s[i],
        padding: p[i],
        dilation: d[i],
    });
    for x in w {
        if x.padding > x.extent() / 2 {
            return Err(invalid(
                op,
                format!(
                    "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and dilation={}",
                    x.padding, x.kernel, x.dilation
                ),
            ));
        }
    }
    let (h, wd) = (shape[shape.len() - 2], shape[shape.len() - 1]);
    let out = [w[0].outputs(h, ceil_mode), w[1].outputs(wd, ceil_mode)];
    if out[0] < 1 || out[1] < 1 {
        let c = shape[shape.len() - 3];
        return Err(invalid(
            op,
            format!(
                "Given input size: ({c}x{h}x{wd}). Calculated output size: ({c}x{}x{}). Output size is too small",
                out[0], out[1]
            ),
        ));
    }
    Ok((w, [out[0] as usize, out[1] as usize]))
}

/// The windows of `x` (`[.., H, W]`) as `[.., OH, OW, kh, kw]`: padded with `fill`
/// on both sides as far as the last window reaches, unfolded, and thinned by
/// the dilation.
fn window_view(x: &Tensor, w: [Window; 2], out: [usize; 2], fill: f64) -> Result<Tensor> {
    let shape = x.shape();
    let n = [shape[shape.len() - 2], shape[shape.len() - 1]];
    // (left, right) per dim: the right side reaches the last window's end
    let sides = [0, 1].map(|i| {
        let end = (out[i] - 1) * w[i].stride + w[i].extent();
        (
            w[i].padding as i64,
            end as i64 - n[i] as i64 - w[i].padding as i64,
        )
    });
    let padded = x.pad(&[sides[1].0, sides[1].1, sides[0].0, sides[0].1], fill)?;
    let r = padded.ndim() as isize;
    let mut v = padded.unfold(r - 2, w[0].extent(), w[0].stride)?.unfold(
        r - 1,
        w[1].extent(),
        w[1].stride,
    )?;
    for (i, win) in w.iter().enumerate() {
        if win.dilation > 1 {
            v = v.slice(r + i as isize, None, None, win.dilation)?;
        }
    }
    Ok(v)
}

/// The windows flattened to one last dim `[.., OH, OW, kh·kw]`.
fn flat_windows(v: &Tensor) -> Result<Tensor> {
    let mut s: Vec<isize> = v.shape().iter().map(|&d| d as isize).collect();
    s.truncate(s.len() - 2);
    s.push(-1);
    v.reshape(&s)
}

/// PyTorch's `F.max_pool2d(input, kernel_size, stride, padding, dilation,
/// ceil_mode)`: the maximum of each window (NaN wins, as in PyTorch). `stride`
/// empty is the kernel size; one value stands for both dims.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec((0..16).map(|v| v as f32).collect(), &[1, 1, 4, 4])?;
/// let y = F::max_pool2d(&x, &[2], &[], &[0], &[1], false)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![5.0, 7.0, 13.0, 15.0]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn max_pool2d(
    input: &Tensor,
    kernel_size: &[usize],
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
    ceil_mode: bool,
) -> Result<Tensor> {
    max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
        .map(|(values, _)| values)
}

/// [`max_pool2d`] with its indices (PyTorch's `return_indices=True`): for each
/// window, the position of its first maximal element in the input's `H·W` plane
/// (int64).
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec((0..16).map(|v| v as f32).collect(), &[1, 1, 4, 4])?;
/// let (_, i) = F::max_pool2d_with_indices(&x, &[2], &[], &[0], &[1], false)?;
/// assert_eq!(i.to_vec::<i64>()?, vec![5, 7, 13, 15]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn max_pool2d_with_indices(
    input: &Tensor,
    kernel_size: &[usize],
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
    ceil_mode: bool,
) -> Result<(Tensor, Tensor)> {
    let op = "max_pool2d";
    let shape = input.shape();
    let (w, out) = windows_of(
        op,
        &shape,
        kernel_size,
        stride,
        padding,
        dilation,
        ceil_mode,
    )?;
    require_float("max_pool2d", input.dtype())?;
    let windows = flat_windows(&window_view(input, w, out, f64::NEG_INFINITY)?)?;
    let (values, arg) = windows.max_dim(-1, false)?;
    // the window's element `arg` → its row and column in the input
    let device = input.device();
    let kw = w[1].kernel as i64;
    let rows = Tensor::arange_on(0.0, out[0] as f64, 1.0, DType::I64, device)?
        .mul(w[0].stride as i64)?
        .sub(w[0].padding as i64)?
        .unsqueeze(-1)?;
    let cols = Tensor::arange_on(0.0, out[1] as f64, 1.0, DType::I64, device)?
        .mul(w[1].stride as i64)?
        .sub(w[1].padding as i64)?;
    let ih = rows.add(&arg.floor_divide(kw)?.mul(w[0].dilation as i64)?)?;
    let iw = cols.add(&arg.remainder(kw)?.mul(w[1].dilation as i64)?)?;
    let width = shape[shape.len() - 1] as i64;
    let cl = is_channels_last(input);
    Ok((
        keep_format(values, cl)?,
        keep_format(ih.mul(width)?.add(&iw)?, cl)?,
    ))
}

/// PyTorch's `F.avg_pool2d(input, kernel_size, stride, padding, ceil_mode,
/// count_include_pad, divisor_override)`: each window's sum divided by
/// `divisor_override`, or by the window's size clipped to the padded input
/// (`count_include_pad`) or to the input.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[1, 1, 2, 2])?;
/// let y = F::avg_pool2d(&x, &[2], &[], &[1], false, false, None)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
/// let z = F::avg_pool2d(&x, &[2], &[], &[1], false, true, None)?;
/// assert_eq!(z.to_vec::<f32>()?, vec![0.25, 0.5, 0.75, 1.0]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn avg_pool2d(
    input: &Tensor,
    kernel_size: &[usize],
    stride: &[usize],
    padding: &[usize],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<usize>,
) -> Result<Tensor> {
    let op = "avg_pool2d";
    let shape = input.shape();
    let (w, out) = windows_of(op, &shape, kernel_size, stride, padding, &[1], ceil_mode)?;
    if divisor_override == Some(0) {
        return Err(invalid(op, "divisor must be not zero"));
    }
    require_float("avg_pool2d", input.dtype())?;
    let sums = flat_windows(&window_view(input, w, out, 0.0)?)?.sum(&[-1], false)?;
    let n = [shape[shape.len() - 2], shape[shape.len() - 1]];
    // per output position, PyTorch's divisor
    let counts = |i: usize| -> Vec<(i64, i64)> {
        let (win, n) = (w[i], n[i] as i64);
        (0..out[i] as i64)
            .map(|o| {
                let start = o * win.stride as i64 - win.padding as i64;
                let end = (start + win.kernel as i64).min(n + win.padding as i64);
                let padded = end - start;
                let inside = end.min(n) - start.max(0);
                (padded, inside)
            })
            .collect()
    };
    let (ch, cw) = (counts(0), counts(1));
    let mut divisors = Vec::with_capacity(out[0] * out[1]);
    for &(ph, ih) in &ch {
        for &(pw, iw) in &cw {
            divisors.push(match divisor_override {
                Some(d) => d as f64,
                None if count_include_pad => (ph * pw) as f64,
                None => (ih * iw) as f64,
            });
        }
    }
    let divisors = Tensor::from_vec_on(divisors, &out, input.device())?.to_dtype(input.dtype())?;
    keep_format(sums.div(&divisors)?, is_channels_last(input))
}

/// The start and end of adaptive window `o` of `out` over `n` (PyTorch's
/// `start_index` and `end_index`).
fn adaptive_range(o: usize, out: usize, n: usize) -> (usize, usize) {
    let start = (o * n) / out;
    let end = ((o + 1) * n).div_ceil(out);
    (start, end)
}

/// The checked output size of an adaptive pooling op.
fn adaptive_out(op: &str, shape: &[usize], output_size: &[usize]) -> Result<[usize; 2]> {
    if shape.len() != 3 && shape.len() != 4 {
        return Err(invalid(
            op,
            format!(
                "{op}(): Expected 3D or 4D tensor, but got: {}",
                format!("{shape:?}").replace(' ', "")
            ),
        ));
    }
    if shape[shape.len() - 2..].contains(&0) {
        return Err(invalid(
            op,
            format!("{op}(): Expected input to have non-zero size for non-batch dimensions"),
        ));
    }
    pair(op, "output_size", output_size, None)
}

/// PyTorch's `F.adaptive_avg_pool2d(input, output_size)`: output `(oh, ow)` is
/// the mean of rows `floor(oh·H/OH)..ceil((oh+1)·H/OH)` and the columns likewise.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[1, 1, 2, 2])?;
/// assert_eq!(F::adaptive_avg_pool2d(&x, &[1])?.to_vec::<f32>()?, vec![2.5]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn adaptive_avg_pool2d(input: &Tensor, output_size: &[usize]) -> Result<Tensor> {
    let op = "adaptive_avg_pool2d";
    let shape = input.shape();
    let out = adaptive_out(op, &shape, output_size)?;
    require_float(op, input.dtype())?;
    // mean over a rectangle = averaging matrices on both sides
    let averaging = |i: usize| -> Result<Tensor> {
        let n = shape[shape.len() - 2 + i];
        let mut m = vec![0.0f64; out[i] * n];
        for o in 0..out[i] {
            let (start, end) = adaptive_range(o, out[i], n);
            for j in start..end {
                m[o * n + j] = 1.0 / (end - start) as f64;
            }
        }
        Tensor::from_vec_on(m, &[out[i], n], input.device())?.to_dtype(input.dtype())
    };
    let (rows, cols) = (averaging(0)?, averaging(1)?);
    keep_format(
        rows.matmul(&input.matmul(&cols.t()?)?)?,
        is_channels_last(input),
    )
}

/// PyTorch's `F.adaptive_max_pool2d(input, output_size)` (its values): the
/// maximum over the windows of [`adaptive_avg_pool2d`].
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, 5.0, 3.0, 4.0], &[1, 1, 2, 2])?;
/// assert_eq!(F::adaptive_max_pool2d(&x, &[1, 2])?.to_vec::<f32>()?, vec![3.0, 5.0]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn adaptive_max_pool2d(input: &Tensor, output_size: &[usize]) -> Result<Tensor> {
    let op = "adaptive_max_pool2d";
    let shape = input.shape();
    let out = adaptive_out(op, &shape, output_size)?;
    require_float(op, input.dtype())?;
    let r = shape.len() as isize;
    let mut x = input.clone();
    for i in [1, 0] {
        let dim = r - 2 + i as isize;
        let n = shape[shape.len() - 2 + i];
        let parts = (0..out[i])
            .map(|o| {
                let (start, end) = adaptive_range(o, out[i], n);
                let part = x.slice(dim, Some(start as isize), Some(end as isize), 1)?;
                part.max_dim(dim, true).map(|(values, _)| values)
            })
            .collect::<Result<Vec<_>>>()?;
        x = Tensor::cat(&parts.iter().collect::<Vec<_>>(), dim)?;
    }
    keep_format(x, is_channels_last(input))
}
