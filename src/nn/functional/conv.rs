//! Convolutions of `torch.nn.functional`: `conv1d`, `conv2d` (explicit padding or
//! PyTorch's `padding="same"`, as `conv2d_same`) and `conv_transpose2d`.
//!
//! A convolution is a window view and a product: the input padded lazily,
//! unfolded along H and W (thinned by the dilation), its windows copied once as
//! the columns of a matrix `[N, G, Cg·kh·kw, OH·OW]` (the im2col copy), and the
//! weights `[G, Og, Cg·kh·kw]` multiplied by it, one batched product for all
//! groups that lands in the output's own layout. The transposed convolution is
//! the convolution of the input spread by the stride (zeros between its
//! elements, by views and a lazy pad) with the flipped, transposed weights. A
//! convolution carries its own derivative (`Custom::Conv2d`): the input's
//! gradient is a transposed convolution and the weight's a product with the
//! windows, as PyTorch's `convolution_backward`, rather than the chain rule
//! through the window view (a scatter-add of every window). Results keep their
//! input's memory format (channels-last in, channels-last out).

use super::{invalid, is_channels_last, keep_format};
use crate::autograd::record::{ConvGeometry, Custom};
use crate::{Result, Tensor};

/// One value per spatial dim (a single value stands for all).
fn per_dim(op: &str, what: &str, v: &[usize], dims: usize) -> Result<Vec<usize>> {
    match v.len() {
        1 => Ok(vec![v[0]; dims]),
        n if n == dims => Ok(v.to_vec()),
        n => Err(invalid(
            op,
            format!("expected {what} to be a single integer value or a list of {dims} values to match the convolution dimensions, but got {what}={v:?} ({n} values)"),
        )),
    }
}

fn sizes(t: &Tensor) -> String {
    format!("{:?}", t.shape())
}

/// The checks PyTorch's `conv2d` makes before computing; `padding` is the
/// (before, after) padding of H and W.
fn check_conv(
    op: &str,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    padding: [(usize, usize); 2],
    dilation: [usize; 2],
    groups: usize,
) -> Result<()> {
    if input.ndim() != 4 {
        return Err(invalid(
            op,
            format!(
                "Expected 3D (unbatched) or 4D (batched) input to {op}, but got input of size: {}",
                sizes(input)
            ),
        ));
    }
    check_weight(op, weight)?;
    if groups == 0 {
        return Err(invalid(op, "non-positive groups is not supported"));
    }
    let (ws, xs) = (weight.shape(), input.shape());
    if !ws[0].is_multiple_of(groups) {
        return Err(invalid(
            op,
            format!(
                "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size {} instead",
                sizes(weight)
            ),
        ));
    }
    if xs[1] != ws[1] * groups {
        return Err(invalid(
            op,
            format!(
                "Given groups={groups}, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
                sizes(weight),
                sizes(input),
                ws[1] * groups,
                xs[1]
            ),
        ));
    }
    if let Some(b) = bias {
        if b.shape() != [ws[0]] {
            return Err(invalid(
                op,
                format!(
                    "Given weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias of size {} instead",
                    sizes(weight),
                    ws[0],
                    sizes(b)
                ),
            ));
        }
    }
    let padded = [0, 1].map(|i| xs[2 + i] + padding[i].0 + padding[i].1);
    let extent = [0, 1].map(|i| dilation[i] * (ws[2 + i] - 1) + 1);
    if padded[0] < extent[0] || padded[1] < extent[1] {
        return Err(invalid(
            op,
            format!(
                "Calculated padded input size per channel: ({} x {}). Kernel size: ({} x {}). Kernel size can't be greater than actual input size",
                padded[0], padded[1], extent[0], extent[1]
            ),
        ));
    }
    Ok(())
}

/// The windows of a 4-D `input` a convolution with kernel `k` reads, as a
/// contiguous `[N, C, kh, kw, OH, OW]`: the input padded lazily, unfolded along H
/// and W (thinned by the dilation) and copied once in that order.
fn windows(input: &Tensor, k: [usize; 2], g: ConvGeometry) -> Result<Tensor> {
    let [(top, bottom), (left, right)] = g.padding.map(|(a, b)| (a as i64, b as i64));
    let x = if top + bottom + left + right > 0 {
        input.pad(&[left, right, top, bottom], 0)?
    } else {
        input.clone()
    };
    let extent = [0, 1].map(|i| g.dilation[i] * (k[i] - 1) + 1);
    let mut windows = x
        .unfold(2, extent[0], g.stride[0])?
        .unfold(3, extent[1], g.stride[1])?;
    for (i, &d) in g.dilation.iter().enumerate() {
        if d > 1 {
            windows = windows.slice(4 + i as isize, None, None, d)?;
        }
    }
    windows.permute(&[0, 1, 4, 5, 2, 3])?.contiguous()
}

/// The convolution of a 4-D `input` with `weight` (`[O, C/groups, kh, kw]`),
/// after padding H and W by `padding` (before, after), once `check_conv` has
/// accepted them for `op`.
#[allow(clippy::too_many_arguments)]
fn convolve(
    op: &str,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: [usize; 2],
    padding: [(usize, usize); 2],
    dilation: [usize; 2],
    groups: usize,
) -> Result<Tensor> {
    check_conv(op, input, weight, bias, padding, dilation, groups)?;
    let (xs, ws) = (input.shape(), weight.shape());
    let (n, out_channels) = (xs[0], ws[0]);
    let og = out_channels / groups;
    let k = [ws[2], ws[3]];
    let extent = [0, 1].map(|i| dilation[i] * (k[i] - 1) + 1);
    let padded = [0, 1].map(|i| xs[2 + i] + padding[i].0 + padding[i].1);
    let out = [0, 1].map(|i| (padded[i] - extent[i]) / stride[i] + 1);
    let geometry = ConvGeometry {
        stride,
        padding,
        dilation,
        groups,
    };
    // the columns, per group, one window element per row and one output point
    // per column: [N, G, Cg·kh·kw, OH·OW] (rows along OW: unit stride in the
    // input for stride 1)
    let points = (out[0] * out[1]) as isize;
    let columns =
        windows(input, k, geometry)?.reshape(&[n as isize, groups as isize, -1, points])?;
    // weights per group as [G, Og, Cg·kh·kw]: [G, Og, Cg·kh·kw] @ columns is
    // [N, G, Og, OH·OW], the output's own layout
    let w = weight.reshape(&[groups as isize, og as isize, -1])?;
    let y = w.matmul(&columns)?.reshape(&[
        n as isize,
        out_channels as isize,
        out[0] as isize,
        out[1] as isize,
    ])?;
    let y = crate::autograd::with_custom_rule(
        &y,
        Custom::Conv2d {
            geometry,
            grads: convolution_grads,
        },
        &[input, weight],
    )?;
    match bias {
        Some(b) => y.add(&b.reshape(&[-1, 1, 1])?),
        None => Ok(y),
    }
}

/// A 4-D convolution weight, or PyTorch's refusal.
fn check_weight(op: &str, weight: &Tensor) -> Result<()> {
    if weight.ndim() == 4 {
        return Ok(());
    }
    Err(invalid(
        op,
        format!(
            "weight should have at least three dimensions, but got weight of size {}",
            sizes(weight)
        ),
    ))
}

/// The result of a [`batched`] input: without its batch dim where the input had
/// none.
fn unbatch(y: Tensor, unbatched: bool) -> Result<Tensor> {
    if unbatched {
        y.squeeze_dim(0)
    } else {
        Ok(y)
    }
}

/// A 2-D convolution's result as PyTorch returns it: without the batch dim of
/// an unbatched input, channels-last where the input or the weight is.
fn finish(y: Tensor, unbatched: bool, input: &Tensor, weight: &Tensor) -> Result<Tensor> {
    keep_format(
        unbatch(y, unbatched)?,
        is_channels_last(input) || is_channels_last(weight),
    )
}

/// An unbatched input (one spatial dim fewer) as a batch of one, and whether it
/// was ([`unbatch`] undoes it).
fn batched(op: &str, input: &Tensor, spatial: usize) -> Result<(Tensor, bool)> {
    match input.ndim() {
        n if n == spatial + 2 => Ok((input.clone(), false)),
        n if n == spatial + 1 => Ok((input.unsqueeze(0)?, true)),
        _ => Err(invalid(
            op,
            format!(
                "Expected {}D (unbatched) or {}D (batched) input to {op}, but got input of size: {}",
                spatial + 1,
                spatial + 2,
                sizes(input)
            ),
        )),
    }
}

fn two(op: &str, what: &str, v: &[usize]) -> Result<[usize; 2]> {
    let v = per_dim(op, what, v, 2)?;
    Ok([v[0], v[1]])
}

fn check_positive(op: &str, stride: [usize; 2], dilation: [usize; 2]) -> Result<()> {
    if stride.contains(&0) {
        return Err(invalid(op, "non-positive stride is not supported"));
    }
    if dilation.contains(&0) {
        return Err(invalid(op, "dilation should be greater than zero"));
    }
    Ok(())
}

/// PyTorch's `F.conv2d(input, weight, bias, stride, padding, dilation, groups)`:
/// `input` `[N, C, H, W]` (or `[C, H, W]`), `weight` `[O, C/groups, kh, kw]`,
/// `bias` `[O]`; one value of `stride`, `padding` or `dilation` stands for both
/// dims. The result is `[N, O, OH, OW]` with `OH = (H + 2·pad − dil·(kh − 1) −
/// 1)/stride + 1`.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec((1..=9).map(|v| v as f32).collect(), &[1, 1, 3, 3])?;
/// let w = Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 1.0], &[1, 1, 2, 2])?;
/// let y = F::conv2d(&x, &w, None, &[1], &[0], &[1], 1)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![6.0, 8.0, 12.0, 14.0]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn conv2d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
    groups: usize,
) -> Result<Tensor> {
    let op = "conv2d";
    let (stride, padding, dilation) = (
        two(op, "stride", stride)?,
        two(op, "padding", padding)?,
        two(op, "dilation", dilation)?,
    );
    check_positive(op, stride, dilation)?;
    let (x, unbatched) = batched(op, input, 2)?;
    let padding = padding.map(|p| (p, p));
    let y = convolve(op, &x, weight, bias, stride, padding, dilation, groups)?;
    finish(y, unbatched, input, weight)
}

/// PyTorch's `F.conv2d(..., padding="same")`: the padding that keeps H and W
/// (`dil·(k − 1)` in all, the odd one after), stride 1 only.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::ones(&[1, 1, 4, 5], lazyfuse::DType::F32);
/// let w = Tensor::ones(&[2, 1, 2, 3], lazyfuse::DType::F32);
/// assert_eq!(F::conv2d_same(&x, &w, None, &[1], &[1], 1)?.shape(), vec![1, 2, 4, 5]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn conv2d_same(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[usize],
    dilation: &[usize],
    groups: usize,
) -> Result<Tensor> {
    let op = "conv2d";
    let (stride, dilation) = (two(op, "stride", stride)?, two(op, "dilation", dilation)?);
    check_positive(op, stride, dilation)?;
    if stride != [1, 1] {
        return Err(invalid(
            op,
            "padding='same' is not supported for strided convolutions",
        ));
    }
    let (x, unbatched) = batched(op, input, 2)?;
    check_weight(op, weight)?;
    let ws = weight.shape();
    let padding = [0, 1].map(|i| {
        let total = dilation[i] * (ws[2 + i] - 1);
        (total / 2, total - total / 2)
    });
    let y = convolve(op, &x, weight, bias, stride, padding, dilation, groups)?;
    finish(y, unbatched, input, weight)
}

/// PyTorch's `F.conv1d(input, weight, bias, stride, padding, dilation, groups)`:
/// `input` `[N, C, L]` (or `[C, L]`), `weight` `[O, C/groups, k]`; the 2-D
/// convolution of a height-1 image.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[1, 1, 3])?;
/// let w = Tensor::from_vec(vec![1.0f32, 1.0], &[1, 1, 2])?;
/// assert_eq!(F::conv1d(&x, &w, None, &[1], &[0], &[1], 1)?.to_vec::<f32>()?, vec![3.0, 5.0]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn conv1d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
    groups: usize,
) -> Result<Tensor> {
    let op = "conv1d";
    let one = |what: &str, v: &[usize]| -> Result<usize> { Ok(per_dim(op, what, v, 1)?[0]) };
    let (s, p, d) = (
        one("stride", stride)?,
        one("padding", padding)?,
        one("dilation", dilation)?,
    );
    let (x, unbatched) = batched(op, input, 1)?;
    if weight.ndim() != 3 {
        return Err(invalid(
            op,
            format!(
                "Expected 3-dimensional weight for 3-dimensional input {}, but got {}-dimensional weight of size {} instead",
                sizes(&x),
                weight.ndim(),
                sizes(weight)
            ),
        ));
    }
    check_positive(op, [1, s], [1, d])?;
    let (x2, w2) = (x.unsqueeze(2)?, weight.unsqueeze(2)?);
    let padding = [(0, 0), (p, p)];
    let y = convolve(op, &x2, &w2, bias, [1, s], padding, [1, d], groups)?.squeeze_dim(2)?;
    unbatch(y, unbatched)
}

/// `x` (`[N, C, H, W]`) with `stride − 1` zeros between neighbours along `dim`
/// (2 or 3): views and a lazy pad.
fn spread(x: &Tensor, dim: usize, stride: usize) -> Result<Tensor> {
    if stride == 1 {
        return Ok(x.clone());
    }
    let shape = x.shape();
    let n = shape[dim];
    // [.., n, 1, ..] padded to [.., n, stride, ..], merged to n·stride
    let opened = x.unsqueeze(dim as isize + 1)?;
    let mut pad = vec![0i64; 2 * (opened.ndim() - dim - 2)];
    pad.extend([0, stride as i64 - 1]);
    let mut merged: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    merged[dim] = (n * stride) as isize;
    opened
        .pad(&pad, 0)?
        .reshape(&merged)?
        .narrow(dim as isize, 0, (n - 1) * stride + 1)
}

/// The transposed convolution of a 4-D `x` with `weight` (`[C, O/groups, kh,
/// kw]`): the convolution of `x` spread by the stride with the flipped, per-group
/// transposed weights, padded by `dil·(k − 1)` less the forward's `padding` on
/// each side (a negative amount crops) and `output_padding` more at the end.
#[allow(clippy::too_many_arguments)]
fn transposed(
    op: &str,
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: [usize; 2],
    padding: [(usize, usize); 2],
    output_padding: [usize; 2],
    dilation: [usize; 2],
    groups: usize,
) -> Result<Tensor> {
    let ws = weight.shape();
    let (cg, og) = (ws[0] / groups, ws[1]);
    // the convolution's weights: per group transposed ([O/g, C/g]) and flipped
    let w = weight
        .reshape(&[
            groups as isize,
            cg as isize,
            og as isize,
            ws[2] as isize,
            ws[3] as isize,
        ])?
        .transpose(1, 2)?
        .reshape(&[
            (groups * og) as isize,
            cg as isize,
            ws[2] as isize,
            ws[3] as isize,
        ])?
        .flip(&[2, 3])?;
    let spread = spread(&spread(x, 2, stride[0])?, 3, stride[1])?;
    // each side: dil·(k − 1) − pad (negative crops), the end also output_padding
    let mut pads = [(0i64, 0i64); 2];
    for i in 0..2 {
        let edge = (dilation[i] * (ws[2 + i] - 1)) as i64;
        pads[i] = (
            edge - padding[i].0 as i64,
            edge - padding[i].1 as i64 + output_padding[i] as i64,
        );
    }
    let cropped = if pads.iter().any(|&(a, b)| a < 0 || b < 0) {
        let crop = pads.map(|(a, b)| (a.min(0), b.min(0)));
        spread.pad(&[crop[1].0, crop[1].1, crop[0].0, crop[0].1], 0)?
    } else {
        spread
    };
    let padding = pads.map(|(a, b)| (a.max(0) as usize, b.max(0) as usize));
    convolve(op, &cropped, &w, bias, [1, 1], padding, dilation, groups)
}

/// The gradients of [`convolve`]'s input `x` and `weight` from its output's
/// `grad` (PyTorch's `convolution_backward`): the input's is the transposed
/// convolution of `grad` (its output padding restoring the input's size), the
/// weight's the product of `grad` with the input's windows, summed over the
/// batch and the output points.
fn convolution_grads(
    g: ConvGeometry,
    x: &Tensor,
    weight: &Tensor,
    grad: &Tensor,
    needs: [bool; 2],
) -> Result<[Option<Tensor>; 2]> {
    let (xs, ws, gs) = (x.shape(), weight.shape(), grad.shape());
    let input = if needs[0] {
        // the transposed convolution's output size is (OH − 1)·s + dil·(k − 1) + 1
        // − padding: the rows the forward's windows never reached come back as
        // output padding
        let output_padding = [0, 1].map(|i| {
            let reached = (gs[2 + i] - 1) * g.stride[i] + g.dilation[i] * (ws[2 + i] - 1) + 1;
            (xs[2 + i] + g.padding[i].0 + g.padding[i].1).saturating_sub(reached)
        });
        let t = transposed(
            "conv2d_backward",
            grad,
            weight,
            None,
            g.stride,
            g.padding,
            output_padding,
            g.dilation,
            g.groups,
        )?;
        Some(t)
    } else {
        None
    };
    let weight_grad = if needs[1] {
        let (n, groups) = (xs[0] as isize, g.groups as isize);
        let og = (ws[0] / g.groups) as isize;
        let points = (gs[2] * gs[3]) as isize;
        // [N, G, Cg·kh·kw, P] → [G, Cg·kh·kw, N·P]; the gradient [N, G, Og, P] →
        // [G, Og, N·P]: one product per group over every batch and point
        let columns = windows(x, [ws[2], ws[3]], g)?
            .reshape(&[n, groups, -1, points])?
            .permute(&[1, 2, 0, 3])?
            .reshape(&[groups, -1, n * points])?;
        let gr = grad
            .reshape(&[n, groups, og, points])?
            .permute(&[1, 2, 0, 3])?
            .reshape(&[groups, og, n * points])?;
        // the columns on the left: a product's left operand is read a row at a
        // time, here a run of output points (contiguous along OW), where on the
        // right each row would be one point's window (runs of kw)
        let dw = columns.matmul(&gr.transpose(1, 2)?)?.transpose(1, 2)?;
        Some(dw.reshape(&ws.iter().map(|&d| d as isize).collect::<Vec<_>>())?)
    } else {
        None
    };
    Ok([input, weight_grad])
}

/// PyTorch's `F.conv_transpose2d(input, weight, bias, stride, padding,
/// output_padding, groups, dilation)`: `weight` `[C, O/groups, kh, kw]`; the
/// result is `[N, O, OH, OW]` with `OH = (H − 1)·stride − 2·pad + dil·(kh − 1) +
/// output_padding + 1` (the gradient of `conv2d` with respect to its input).
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 1, 1, 2])?;
/// let w = Tensor::from_vec(vec![1.0f32, 10.0], &[1, 1, 1, 2])?;
/// let y = F::conv_transpose2d(&x, &w, None, &[1, 2], &[0], &[0], 1, &[1])?;
/// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 10.0, 2.0, 20.0]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose2d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[usize],
    padding: &[usize],
    output_padding: &[usize],
    groups: usize,
    dilation: &[usize],
) -> Result<Tensor> {
    let op = "conv_transpose2d";
    let (stride, padding, output_padding, dilation) = (
        two(op, "stride", stride)?,
        two(op, "padding", padding)?,
        two(op, "output_padding", output_padding)?,
        two(op, "dilation", dilation)?,
    );
    check_positive(op, stride, dilation)?;
    if (0..2).any(|i| output_padding[i] >= stride[i] && output_padding[i] >= dilation[i]) {
        return Err(invalid(
            op,
            format!(
                "output padding must be smaller than either stride or dilation, but got output_padding_height: {} output_padding_width: {} stride_height: {} stride_width: {} dilation_height: {} dilation_width: {}",
                output_padding[0], output_padding[1], stride[0], stride[1], dilation[0], dilation[1]
            ),
        ));
    }
    let (x, unbatched) = batched(op, input, 2)?;
    check_weight(op, weight)?;
    if groups == 0 {
        return Err(invalid(op, "non-positive groups is not supported"));
    }
    let ws = weight.shape();
    let xs = x.shape();
    if xs[1] != ws[0] || !ws[0].is_multiple_of(groups) {
        return Err(invalid(
            op,
            format!(
                "Given transposed=1, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
                sizes(weight),
                sizes(&x),
                ws[0],
                xs[1]
            ),
        ));
    }
    let og = ws[1];
    if let Some(b) = bias {
        if b.shape() != [og * groups] {
            return Err(invalid(
                op,
                format!(
                    "Given transposed=1, weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias of size {} instead",
                    sizes(weight),
                    og * groups,
                    sizes(b)
                ),
            ));
        }
    }
    let padding = padding.map(|p| (p, p));
    let y = transposed(
        op,
        &x,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        dilation,
        groups,
    )?;
    finish(y, unbatched, input, weight)
}
