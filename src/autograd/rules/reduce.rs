//! Derivatives of reductions, softmax and scans.

use super::{not_implemented, reduced_count, unreduce, zeros_like, Ctx};
use crate::error::Result;
use crate::tensor::Tensor;
use lazyfuse_ir::{DType, ReduceOp, ScanOp};

/// The gradient of a reduction's input.
pub(super) fn reduce(
    op: ReduceOp,
    axes: &[usize],
    keepdim: bool,
    c: &Ctx,
) -> Result<Vec<Option<Tensor>>> {
    let (x, y, g) = (c.x(0), c.value, c.grad);
    let shape = x.shape();
    let spread = |t: &Tensor| unreduce(t, &shape, axes, keepdim);
    let dims: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
    let count = reduced_count(&shape, axes) as f64;
    let gx = c.when(0, || match op {
        ReduceOp::Sum => spread(g),
        ReduceOp::NanSum => Tensor::where_cond(&x.isnan()?, 0.0, &spread(g)?),
        ReduceOp::Mean | ReduceOp::RunningMean => spread(g)?.div(count),
        ReduceOp::NanMean => {
            let present = x.isnan()?.logical_not()?;
            let n = present.sum(&keep_dims(&dims, &shape), true)?;
            let share = spread(g)?.div(&n.expand(&isize_shape(&shape))?)?;
            Tensor::where_cond(&present, &share, 0.0)
        }
        // ties share the gradient evenly
        ReduceOp::Amax | ReduceOp::Amin => {
            let mask = x.eq(&spread(y)?)?;
            let n = mask.sum(&keep_dims(&dims, &shape), true)?;
            let share = spread(g)?.div(&n.expand(&isize_shape(&shape))?)?;
            share.mul(&mask)
        }
        ReduceOp::Prod => prod(x, &spread(g)?, axes),
        ReduceOp::Var { correction } => var(x, &spread(g)?, axes, correction),
        ReduceOp::Std { correction } => {
            // std_backward: var_backward of g / (2 std), 0 where std == 0
            let scaled = g.div(&y.mul(2.0)?)?.masked_fill(&y.eq(0.0)?, 0.0)?;
            var(x, &spread(&scaled)?, axes, correction)
        }
        ReduceOp::LogSumExp => spread(g)?.mul(&x.sub(&spread(y)?)?.exp()?),
        ReduceOp::Norm { ord } => norm(x, &spread(g)?, &spread(y)?, &dims, ord.value()),
        other => Err(not_implemented(
            &lazyfuse_ir::Op::Reduce {
                op: other,
                axes: axes.to_vec(),
                keepdim,
            }
            .name(),
        )),
    })?;
    Ok(vec![gx])
}

fn isize_shape(shape: &[usize]) -> Vec<isize> {
    shape.iter().map(|&n| n as isize).collect()
}

/// The dims to reduce for a statistic kept beside `x` (none of a zero-dim tensor).
fn keep_dims(dims: &[isize], shape: &[usize]) -> Vec<isize> {
    if shape.is_empty() {
        Vec::new()
    } else if dims.is_empty() {
        (0..shape.len() as isize).collect()
    } else {
        dims.to_vec()
    }
}

/// `var_backward`: `2 / (N - correction) · g · (x - mean)`; with all dims reduced
/// and `N <= correction`, NaN where `x` is its mean and infinity elsewhere.
fn var(x: &Tensor, g: &Tensor, axes: &[usize], correction: i64) -> Result<Tensor> {
    let shape = x.shape();
    let dims: Vec<isize> = keep_dims(
        &axes.iter().map(|&a| a as isize).collect::<Vec<_>>(),
        &shape,
    );
    let n = reduced_count(&shape, axes) as f64;
    let dof = n - correction as f64;
    let mean = if shape.is_empty() {
        x.clone()
    } else {
        x.mean(&dims, true)?.expand(&isize_shape(&shape))?
    };
    let full = shape.is_empty() || axes.len() == shape.len();
    if full && dof <= 0.0 {
        let f = Tensor::where_cond(&x.eq(&mean)?, f64::NAN, f64::INFINITY)?;
        return g.mul(&f.to_dtype(x.dtype())?);
    }
    g.mul(&x.sub(&mean)?)?.mul(2.0 / dof)
}

/// `prod`'s gradient without dividing by the input: each element's gradient is the
/// product of the others, from exclusive products forwards and backwards (exact
/// with one or several zeros).
fn prod(x: &Tensor, g: &Tensor, axes: &[usize]) -> Result<Tensor> {
    let shape = x.shape();
    if shape.is_empty() {
        return Ok(g.clone());
    }
    let all: Vec<usize> = if axes.is_empty() {
        (0..shape.len()).collect()
    } else {
        axes.to_vec()
    };
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !all.contains(d)).collect();
    let r: usize = all.iter().map(|&a| shape[a]).product();
    if r == 0 {
        return zeros_like(x);
    }
    // the reduced dims last, flattened into one
    let perm: Vec<usize> = kept.iter().chain(all.iter()).copied().collect();
    let mut flat: Vec<isize> = kept.iter().map(|&d| shape[d] as isize).collect();
    flat.push(r as isize);
    let perm_i: Vec<isize> = perm.iter().map(|&d| d as isize).collect();
    let xp = x.permute(&perm_i)?.reshape(&flat)?;
    let others = if r == 1 {
        xp.ones_like(None)?
    } else {
        let one = xp.narrow(-1, 0, 1)?.ones_like(None)?;
        let before = Tensor::cat(&[&one, &xp.narrow(-1, 0, r - 1)?], -1)?.cumprod(-1)?;
        let rest = xp.narrow(-1, 1, r - 1)?.flip(&[-1])?;
        let after = Tensor::cat(&[&one, &rest], -1)?.cumprod(-1)?.flip(&[-1])?;
        before.mul(&after)?
    };
    // back to x's dim order
    let unflat: Vec<isize> = perm.iter().map(|&d| shape[d] as isize).collect();
    let mut inverse = vec![0isize; perm.len()];
    for (k, &d) in perm.iter().enumerate() {
        inverse[d] = k as isize;
    }
    g.mul(&others.reshape(&unflat)?.permute(&inverse)?)
}

/// `norm_backward` for the vector p-norm (`g` and `norm` spread over `x`).
fn norm(x: &Tensor, g: &Tensor, norm: &Tensor, dims: &[isize], p: f64) -> Result<Tensor> {
    let shape = x.shape();
    if p == 0.0 {
        return zeros_like(x);
    }
    if p == 1.0 {
        return x.sign()?.mul(g);
    }
    if p == 2.0 {
        let ratio = x.div(norm)?.masked_fill(&norm.eq(0.0)?, 0.0)?;
        return g.mul(&ratio);
    }
    if p.is_infinite() {
        // the elements at the norm share the gradient evenly
        let mask = x.abs()?.eq(norm)?;
        let n = mask.sum(&keep_dims(dims, &shape), true)?;
        let share = g.div(&n.expand(&isize_shape(&shape))?)?.mul(&mask)?;
        return x.sign()?.mul(&share);
    }
    let zero_norm = norm.eq(0.0)?;
    if p < 1.0 {
        let scaled = x
            .sign()?
            .mul(&x.abs()?.pow(p - 1.0)?.masked_fill(&x.eq(0.0)?, 0.0)?)?;
        return scaled.mul(g)?.mul(&norm.pow(1.0 - p)?);
    }
    let scaled = if p < 2.0 {
        x.sign()?.mul(&x.abs()?.pow(p - 1.0)?)?
    } else {
        x.mul(&x.abs()?.pow(p - 2.0)?)?
    };
    let scale = g.div(&norm.pow(p - 1.0)?)?.masked_fill(&zero_norm, 0.0)?;
    scaled.mul(&scale)
}

/// The gradient of softmax (`log`: log_softmax) along `axis`, from its output.
pub(super) fn softmax(axis: usize, log: bool, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let (y, g) = (c.value, c.grad);
    let d = [axis as isize];
    let d: &[isize] = if y.ndim() == 0 { &[] } else { &d };
    Ok(vec![c.when(0, || {
        if log {
            g.sub(&y.exp()?.mul(&g.sum(d, true)?)?)
        } else {
            y.mul(&g.sub(&g.mul(y)?.sum(d, true)?)?)
        }
    })?])
}

/// The gradient of `cumsum`: the reversed cumulative sum.
pub(super) fn cumsum(axis: usize, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let g = c.grad;
    Ok(vec![c.when(0, || {
        if g.ndim() == 0 {
            return Ok(g.clone());
        }
        let d = axis as isize;
        g.flip(&[d])?.cumsum(d)?.flip(&[d])
    })?])
}

/// The gradients of the scans.
pub(super) fn scan(op: ScanOp, axis: usize, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let (x, y, g) = (c.x(0), c.value, c.grad);
    let d = axis as isize;
    Ok(vec![c.when(0, || {
        if x.ndim() == 0 {
            return Ok(g.clone());
        }
        match op {
            ScanOp::Cumprod => cumprod(x, g, d),
            ScanOp::LogCumSumExp => {
                let lowest = lowest(x.dtype());
                let reverse =
                    |t: &Tensor| -> Result<Tensor> { t.flip(&[d])?.logcumsumexp(d)?.flip(&[d]) };
                let log_abs = g.abs()?.log()?;
                let pos = Tensor::where_cond(&g.gt(0.0)?, &log_abs, lowest)?;
                let neg = Tensor::where_cond(&g.lt(0.0)?, &log_abs, lowest)?;
                let out_pos = reverse(&pos.sub(y)?)?.add(x)?.exp()?;
                let out_neg = reverse(&neg.sub(y)?)?.add(x)?.exp()?;
                out_pos.sub(&out_neg)
            }
            ScanOp::Cummax | ScanOp::Cummin => {
                let (_, indices) = if op == ScanOp::Cummax {
                    x.cummax(d)?
                } else {
                    x.cummin(d)?
                };
                zeros_like(x)?.scatter_add(d, &indices, g)
            }
            other => Err(not_implemented(&format!("{other:?}"))),
        }
    })?])
}

/// The lowest finite value of a float dtype.
fn lowest(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => -65504.0,
        DType::BF16 => -3.3895313892515355e38,
        DType::F32 => f32::MIN as f64,
        _ => f64::MIN,
    }
}

/// `cumprod`'s gradient without dividing by the input (exact with zeros):
/// `∂/∂x_j = Σ_{k≥j} g_k Π_{i≤k, i≠j} x_i`, the exclusive product before `j` times
/// `Σ_{k≥j} g_k Π_{j<i≤k} x_i`, which an `n × n` table of products gives.
fn cumprod(x: &Tensor, g: &Tensor, d: isize) -> Result<Tensor> {
    let n = x.shape()[d.rem_euclid(x.ndim() as isize) as usize];
    if n <= 1 {
        return Ok(g.clone());
    }
    let xt = x.transpose(d, -1)?;
    let gt = g.transpose(d, -1)?;
    let one = xt.narrow(-1, 0, 1)?.ones_like(None)?;
    let before = Tensor::cat(&[&one, &xt.narrow(-1, 0, n - 1)?], -1)?.cumprod(-1)?;
    let i = Tensor::arange_on(0.0, n as f64, 1.0, DType::I64, x.device())?;
    let (row, col) = (i.reshape(&[n as isize, 1])?, i.reshape(&[1, n as isize])?);
    // table[j, i] = x_i for i > j, else 1; its running product along i
    let mut wide = xt.shape();
    wide.insert(wide.len() - 1, n);
    let wide: Vec<isize> = wide.iter().map(|&s| s as isize).collect();
    let xs = xt.unsqueeze(-2)?.expand(&wide)?;
    let products = Tensor::where_cond(&col.gt(&row)?, &xs, 1.0)?.cumprod(-1)?;
    let terms = products.mul(&gt.unsqueeze(-2)?)?;
    let after = Tensor::where_cond(&col.ge(&row)?, &terms, 0.0)?.sum(&[-1], false)?;
    before.mul(&after)?.transpose(d, -1)
}
