//! Derivatives of the elementwise ops: `Unary`, `UnaryParam`, `Binary` and `Where`
//! nodes (every input has the node's shape; the builder's casts and broadcasts are
//! nodes of their own, differentiated by their own rules).

use super::{not_implemented, zeros_like, Ctx};
use crate::error::Result;
use crate::tensor::Tensor;
use lazyfuse_ir::{BinaryOp, Error as IrError, UnaryOp, UnaryParamOp};
use std::f64::consts::{LN_10, LN_2, PI};

/// `s - t`, which the rules need often (`1 - y²`, `1 - σ`).
trait Rsub {
    fn rsub(&self, s: f64) -> Result<Tensor>;
}

impl Rsub for Tensor {
    fn rsub(&self, s: f64) -> Result<Tensor> {
        // -t + s is s - t exactly (negation is exact)
        self.neg()?.add(s)
    }
}

fn complex(name: &str) -> crate::Error {
    IrError::Unsupported(format!("the derivative of {name} of complex values")).into()
}

/// The gradient of a unary node's input.
pub(super) fn unary(op: UnaryOp, c: &Ctx) -> Result<Option<Tensor>> {
    use UnaryOp::*;
    let (x, y, g) = (c.x(0), c.value, c.grad);
    if x.dtype().is_complex() {
        return Err(complex(&lazyfuse_ir::Op::Unary(op).name()));
    }
    c.when(0, || match op {
        Neg => g.neg(),
        Abs | Sgn if op == Abs => g.mul(&x.sign()?),
        Sign | Sgn | Floor | Ceil | Round | Trunc => zeros_like(g),
        Exp => g.mul(y),
        Log => g.div(x),
        Sqrt => g.div(&y.mul(2.0)?),
        // -0.5 g y³
        Rsqrt => g.mul(&y.mul(y)?.mul(y)?)?.mul(-0.5),
        Sin => g.mul(&x.cos()?),
        Cos => g.mul(&x.sin()?.neg()?),
        Tan => g.mul(&y.mul(y)?.add(1.0)?),
        // tanh_backward: g (1 - y²)
        Tanh => g.mul(&y.mul(y)?.rsub(1.0)?),
        // sigmoid_backward: g (1 - y) y
        Sigmoid => g.mul(&y.rsub(1.0)?)?.mul(y),
        // threshold_backward(g, y, 0): zero where y <= 0
        Relu => Tensor::where_cond(&y.le(0.0)?, 0.0, g),
        Reciprocal => g.neg()?.mul(&y.mul(y)?),
        // pow_backward(g, x, 2)
        Square => g.mul(&x.mul(2.0)?),
        Exp2 => g.mul(&y.mul(LN_2)?),
        Expm1 => g.mul(&y.add(1.0)?),
        Log2 => g.div(&x.mul(LN_2)?),
        Log10 => g.div(&x.mul(LN_10)?),
        Log1p => g.div(&x.add(1.0)?),
        Asin => g.mul(&x.mul(x)?.rsub(1.0)?.rsqrt()?),
        Acos => g.mul(&x.mul(x)?.rsub(1.0)?.rsqrt()?.neg()?),
        Atan => g.div(&x.mul(x)?.add(1.0)?),
        Sinh => g.mul(&x.cosh()?),
        Cosh => g.mul(&x.sinh()?),
        Asinh => g.mul(&x.mul(x)?.add(1.0)?.rsqrt()?),
        Acosh => g.mul(&x.mul(x)?.sub(1.0)?.rsqrt()?),
        Atanh => g.div(&x.mul(x)?.rsub(1.0)?),
        // 2/√π e^(-x²)
        Erf => g.mul(&x.mul(x)?.neg()?.exp()?.mul(2.0 / PI.sqrt())?),
        Erfc => g.mul(&x.mul(x)?.neg()?.exp()?.mul(-2.0 / PI.sqrt())?),
        // √π/2 e^(y²)
        Erfinv => g.mul(&y.mul(y)?.exp()?.mul(PI.sqrt() / 2.0)?),
        Frac => Ok(g.clone()),
        Silu => {
            // g σ(x) (1 + x (1 - σ(x)))
            let s = x.sigmoid()?;
            g.mul(&s.mul(&x.mul(&s.rsub(1.0)?)?.add(1.0)?)?)
        }
        Mish => {
            let s = x.sigmoid()?;
            let t = x.softplus(1.0, 20.0)?.tanh()?;
            // g (t + x σ(x) (1 - t²))
            g.mul(&t.add(&x.mul(&s)?.mul(&t.mul(&t)?.rsub(1.0)?)?)?)
        }
        // g/6 inside (-3, 3)
        Hardsigmoid => {
            let inside = x.gt(-3.0)?.logical_and(&x.lt(3.0)?)?;
            Tensor::where_cond(&inside, &g.div(6.0)?, 0.0)
        }
        Hardswish => {
            // 0 below -3, g (x/3 + 1/2) up to 3, g above
            let mid = g.mul(&x.div(3.0)?.add(0.5)?)?;
            let upper = Tensor::where_cond(&x.le(3.0)?, &mid, g)?;
            Tensor::where_cond(&x.lt(-3.0)?, 0.0, &upper)
        }
        other => Err(not_implemented(&lazyfuse_ir::Op::Unary(other).name())),
    })
}

/// The gradient of a parameterised unary node's input.
pub(super) fn unary_param(op: UnaryParamOp, c: &Ctx) -> Result<Option<Tensor>> {
    use UnaryParamOp::*;
    let (x, g) = (c.x(0), c.grad);
    c.when(0, || match op {
        NanToNum { .. } => Tensor::where_cond(&x.isfinite()?, g, 0.0),
        // logit_backward: g / (x (1 - x)); outside [eps, 1 - eps] zero, or NaN
        // outside [0, 1] without eps
        Logit { eps } => {
            let d = g.div(&x.mul(&x.rsub(1.0)?)?)?;
            match eps {
                None => {
                    let outside = x.lt(0.0)?.logical_or(&x.gt(1.0)?)?;
                    Tensor::where_cond(&outside, f64::NAN, &d)
                }
                Some(e) => {
                    let outside = x.lt(e)?.logical_or(&x.gt(1.0 - e)?)?;
                    Tensor::where_cond(&outside, 0.0, &d)
                }
            }
        }
        RoundDecimals { .. } => zeros_like(g),
        Gelu { tanh: false } => {
            // Φ(x) + x φ(x)
            let cdf = x
                .mul(std::f64::consts::FRAC_1_SQRT_2)?
                .erf()?
                .add(1.0)?
                .mul(0.5)?;
            let pdf = x.mul(x)?.mul(-0.5)?.exp()?.mul(1.0 / (2.0 * PI).sqrt())?;
            g.mul(&cdf.add(&x.mul(&pdf)?)?)
        }
        Gelu { tanh: true } => {
            let beta = (2.0 / PI).sqrt();
            let kappa = 0.044715;
            let x2 = x.mul(x)?;
            let inner = x.add(&x2.mul(x)?.mul(kappa)?)?.mul(beta)?;
            let t = inner.tanh()?;
            let left = x.mul(0.5)?;
            let right = t.add(1.0)?;
            let left_d = right.mul(0.5)?;
            let right_d = left.mul(&t.mul(&t)?.rsub(1.0)?)?;
            let inner_d = x2.mul(3.0 * kappa)?.add(1.0)?.mul(beta)?;
            g.mul(&left_d.add(&right_d.mul(&inner_d)?)?)
        }
        Softplus { beta, threshold } => {
            // z = e^(βx): g z / (z + 1), or g where βx > threshold
            let bx = x.mul(beta)?;
            let z = bx.exp()?;
            let d = g.mul(&z)?.div(&z.add(1.0)?)?;
            Tensor::where_cond(&bx.gt(threshold)?, g, &d)
        }
        Elu {
            alpha,
            scale,
            input_scale,
        } => {
            // elu_backward(is_result = false)
            let neg = g.mul(
                &x.mul(input_scale)?
                    .exp()?
                    .mul(input_scale * alpha * scale)?,
            )?;
            Tensor::where_cond(&x.le(0.0)?, &neg, &g.mul(scale)?)
        }
        LeakyRelu { negative_slope } => Tensor::where_cond(&x.gt(0.0)?, g, &g.mul(negative_slope)?),
        // hardtanh_backward: zero at and beyond the bounds
        Hardtanh { min_val, max_val } => {
            let outside = x.le(min_val)?.logical_or(&x.ge(max_val)?)?;
            Tensor::where_cond(&outside, 0.0, g)
        }
    })
}

/// The gradients of a binary node's inputs.
pub(super) fn binary(op: BinaryOp, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    use BinaryOp::*;
    // PyTorch's formulas read the tensors the op was given, before promotion
    let (a, b, y, g) = (c.orig(0), c.orig(1), c.value, c.grad);
    if c.x(0).dtype().is_complex() {
        return Err(complex(&lazyfuse_ir::Op::Binary(op).name()));
    }
    let (ga, gb) = match op {
        Add => (c.when(0, || Ok(g.clone()))?, c.when(1, || Ok(g.clone()))?),
        Sub => (c.when(0, || Ok(g.clone()))?, c.when(1, || g.neg())?),
        Mul => (c.when(0, || g.mul(b))?, c.when(1, || g.mul(a))?),
        // div_tensor_other_backward: -g (a / b) / b
        Div => (
            c.when(0, || g.div(b))?,
            c.when(1, || g.neg()?.mul(&a.div(b)?.div(b)?))?,
        ),
        DivFloor | DivTrunc => (c.when(0, || zeros_like(g))?, c.when(1, || zeros_like(g))?),
        Remainder => (
            c.when(0, || Ok(g.clone()))?,
            c.when(1, || g.neg()?.mul(&a.div(b)?.floor()?))?,
        ),
        Fmod => (
            c.when(0, || Ok(g.clone()))?,
            c.when(1, || g.neg()?.mul(&a.div(b)?.trunc()?))?,
        ),
        Pow => (
            // pow_backward_self: 0 where the exponent is 0
            c.when(0, || {
                let d = g.mul(&b.mul(&a.pow(&b.sub(1.0)?)?)?)?;
                Tensor::where_cond(&b.eq(0.0)?, 0.0, &d)
            })?,
            // pow_backward_exponent: 0 where a == 0 and b >= 0
            c.when(1, || {
                let zero = a.eq(0.0)?.logical_and(&b.ge(0.0)?)?;
                let d = Tensor::where_cond(&zero, 0.0, &y.mul(&a.log()?)?)?;
                g.mul(&d)
            })?,
        ),
        // ties split the gradient in halves
        Maximum | Minimum => {
            let half = Tensor::where_cond(&a.eq(b)?, &g.div(2.0)?, g)?;
            let (lose_a, lose_b) = if op == Maximum {
                (a.lt(b)?, a.gt(b)?)
            } else {
                (a.gt(b)?, a.lt(b)?)
            };
            (
                c.when(0, || half.masked_fill(&lose_a, 0.0))?,
                c.when(1, || half.masked_fill(&lose_b, 0.0))?,
            )
        }
        Fmax | Fmin => {
            // ties split; a NaN loses to a number, and `a` takes a NaN pair
            let half = Tensor::where_cond(&a.eq(b)?, &g.div(2.0)?, g)?;
            let (keeps_a, beats_b) = if op == Fmax {
                (a.ge(b)?, a.gt(b)?)
            } else {
                (a.le(b)?, a.lt(b)?)
            };
            let b_nan = b.isnan()?;
            (
                c.when(0, || {
                    let keep = keeps_a.logical_or(&b_nan)?;
                    Tensor::where_cond(&keep, &half, 0.0)
                })?,
                c.when(1, || half.masked_fill(&beats_b.logical_or(&b_nan)?, 0.0))?,
            )
        }
        Atan2 => {
            // zero at the origin
            let denominator = a.mul(a)?.add(&b.mul(b)?)?;
            let recip = denominator
                .reciprocal()?
                .masked_fill(&denominator.eq(0.0)?, 0.0)?;
            (
                c.when(0, || g.mul(b)?.mul(&recip))?,
                c.when(1, || g.mul(&a.neg()?)?.mul(&recip))?,
            )
        }
        Hypot => (
            c.when(0, || g.mul(a)?.div(y))?,
            c.when(1, || g.mul(b)?.div(y))?,
        ),
        // copysign_tensor_self_backward: g y / a, 0 where a == 0
        Copysign => (
            c.when(0, || {
                let ratio = y.div(a)?.masked_fill(&a.eq(0.0)?, 0.0)?;
                g.mul(&ratio)
            })?,
            c.when(1, || zeros_like(g))?,
        ),
        Logaddexp => (
            c.when(0, || g.div(&b.sub(a)?.exp()?.add(1.0)?))?,
            c.when(1, || g.div(&a.sub(b)?.exp()?.add(1.0)?))?,
        ),
        Logaddexp2 => (
            c.when(0, || g.div(&b.sub(a)?.exp2()?.add(1.0)?))?,
            c.when(1, || g.div(&a.sub(b)?.exp2()?.add(1.0)?))?,
        ),
        Xlogy => (
            c.when(0, || {
                let zero = a.eq(0.0)?.logical_and(&b.le(0.0)?)?;
                g.xlogy(b)?.masked_fill(&zero, 0.0)
            })?,
            c.when(1, || g.mul(a)?.div(b))?,
        ),
        other => return Err(not_implemented(&lazyfuse_ir::Op::Binary(other).name())),
    };
    Ok(vec![ga, gb])
}

/// The gradients of `where(cond, a, b)`: `g` where each side was taken.
pub(super) fn where_(c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let (cond, g) = (c.x(0), c.grad);
    Ok(vec![
        None,
        c.when(1, || Tensor::where_cond(cond, g, 0.0))?,
        c.when(2, || Tensor::where_cond(cond, 0.0, g))?,
    ])
}
