//! Finite differences against autograd, in float64, for every differentiable op
//! (JAX's `check_vjp`): for random inputs `x` (random shapes, broadcasts and views
//! applied after the leaves), a random output weighting `r` and a random direction
//! `u`, the derivative of `Σ r·f(x)` along `u` by central differences must equal
//! `Σ grad·u` from `backward`, within gradcheck's tolerances. Inputs keep away from
//! kinks and poles (each op draws from its own domain), so the one-sided
//! subgradient cases live in `gradients.jsonl` instead.

use lazyfuse::{DType, GeluApproximate, Tensor};

/// xorshift64*: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545F4914F6CDD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
}

/// Where an op's inputs are drawn from.
#[derive(Clone, Copy)]
enum Domain {
    /// `(lo, hi)`
    Range(f64, f64),
    /// `±(lo, hi)`: away from zero
    Away(f64, f64),
}

fn draw(rng: &mut Rng, d: Domain, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| match d {
            Domain::Range(lo, hi) => rng.uniform(lo, hi),
            Domain::Away(lo, hi) => {
                let v = rng.uniform(lo, hi);
                if rng.next() < 0.5 {
                    -v
                } else {
                    v
                }
            }
        })
        .collect()
}

type Op = fn(&[Tensor]) -> lazyfuse::Result<Tensor>;

/// One op under test: its inputs' shapes (before views) and domains.
struct Case {
    name: &'static str,
    shapes: &'static [&'static [usize]],
    domain: Domain,
    f: Op,
}

/// Applies a random view to a leaf of shape `[a, b]` (or leaves it): a transpose
/// of a transposed copy, a stepped slice of a wider base, or nothing.
fn leaf_and_input(rng: &mut Rng, shape: &[usize], domain: Domain) -> (Tensor, Tensor) {
    let n: usize = shape.iter().product();
    if shape.len() == 2 && rng.next() < 0.3 {
        // the leaf is the transpose; the op reads it transposed back
        let t = [shape[1], shape[0]];
        let leaf = Tensor::from_vec(draw(rng, domain, n), &t)
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let input = leaf.t().unwrap();
        return (leaf, input);
    }
    if shape.len() == 1 && rng.next() < 0.3 {
        let leaf = Tensor::from_vec(draw(rng, domain, 2 * n), &[2 * n])
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let input = leaf.slice(0, Some(1), None, 2).unwrap();
        return (leaf, input);
    }
    let leaf = Tensor::from_vec(draw(rng, domain, n), shape)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    (leaf.clone(), leaf)
}

fn dot(a: &Tensor, b: &Tensor) -> f64 {
    a.mul(b)
        .unwrap()
        .sum(&[], false)
        .unwrap()
        .to_vec::<f64>()
        .unwrap()[0]
}

/// Checks one case with inputs drawn by `seed`.
fn check(case: &Case, seed: u64) {
    let mut rng = Rng(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1);
    let mut leaves = Vec::new();
    let mut inputs = Vec::new();
    for &shape in case.shapes {
        let (leaf, input) = leaf_and_input(&mut rng, shape, case.domain);
        leaves.push(leaf);
        inputs.push(input);
    }
    let out = (case.f)(&inputs).unwrap_or_else(|e| panic!("{}: forward: {e}", case.name));
    let r = Tensor::from_vec(
        draw(&mut rng, Domain::Range(-1.0, 1.0), out.numel()),
        &out.shape(),
    )
    .unwrap();
    let loss = out
        .to_dtype(DType::F64)
        .unwrap()
        .mul(&r)
        .unwrap()
        .sum(&[], false)
        .unwrap();
    loss.backward()
        .unwrap_or_else(|e| panic!("{}: backward: {e}", case.name));
    // a direction per leaf, and the directional derivative both ways
    let dirs: Vec<Tensor> = leaves
        .iter()
        .map(|l| {
            Tensor::from_vec(
                draw(&mut rng, Domain::Range(-1.0, 1.0), l.numel()),
                &l.shape(),
            )
            .unwrap()
        })
        .collect();
    let analytic: f64 = leaves
        .iter()
        .zip(&dirs)
        .map(|(l, u)| l.grad().map_or(0.0, |g| dot(&g, u)))
        .sum();
    let eps = 1e-6;
    let at = |sign: f64| -> f64 {
        lazyfuse::no_grad(|| {
            let moved: Vec<Tensor> = case
                .shapes
                .iter()
                .enumerate()
                .map(|(i, _)| {
                    let base = leaves[i]
                        .detach()
                        .add(&dirs[i].mul(sign * eps).unwrap())
                        .unwrap();
                    // the same view as the leaf's input
                    if inputs[i].shape() == base.shape() && inputs[i].strides() == base.strides() {
                        base
                    } else if inputs[i].ndim() == 2 {
                        base.t().unwrap()
                    } else {
                        base.slice(0, Some(1), None, 2).unwrap()
                    }
                })
                .collect();
            let y = (case.f)(&moved).unwrap().to_dtype(DType::F64).unwrap();
            dot(&y, &r)
        })
    };
    let numeric = (at(1.0) - at(-1.0)) / (2.0 * eps);
    let tol = 1e-5 + 1e-4 * numeric.abs().max(analytic.abs());
    assert!(
        (numeric - analytic).abs() <= tol,
        "{} (seed {seed}): finite differences {numeric}, autograd {analytic}",
        case.name
    );
}

const M: &[usize] = &[3, 4];
const V: &[usize] = &[4];
const ALL: Domain = Domain::Range(-2.0, 2.0);
const POS: Domain = Domain::Range(0.2, 2.0);
const AWAY: Domain = Domain::Away(0.3, 2.0);
const SMALL: Domain = Domain::Range(-0.8, 0.8);

macro_rules! cases {
    ($($name:literal, $shapes:expr, $domain:expr, |$x:ident| $body:expr;)*) => {
        &[$(Case { name: $name, shapes: $shapes, domain: $domain, f: |$x: &[Tensor]| $body },)*]
    };
}

const CASES: &[Case] = cases![
    "neg", &[M], ALL, |x| x[0].neg();
    "abs", &[M], AWAY, |x| x[0].abs();
    "exp", &[M], ALL, |x| x[0].exp();
    "log", &[M], POS, |x| x[0].log();
    "sqrt", &[M], POS, |x| x[0].sqrt();
    "rsqrt", &[M], POS, |x| x[0].rsqrt();
    "sin", &[M], ALL, |x| x[0].sin();
    "cos", &[M], ALL, |x| x[0].cos();
    "tan", &[M], SMALL, |x| x[0].tan();
    "tanh", &[M], ALL, |x| x[0].tanh();
    "sigmoid", &[M], ALL, |x| x[0].sigmoid();
    "relu", &[M], AWAY, |x| x[0].relu();
    "reciprocal", &[M], AWAY, |x| x[0].reciprocal();
    "square", &[M], ALL, |x| x[0].square();
    "exp2", &[M], ALL, |x| x[0].exp2();
    "expm1", &[M], ALL, |x| x[0].expm1();
    "log2", &[M], POS, |x| x[0].log2();
    "log10", &[M], POS, |x| x[0].log10();
    "log1p", &[M], POS, |x| x[0].log1p();
    "asin", &[M], SMALL, |x| x[0].asin();
    "acos", &[M], SMALL, |x| x[0].acos();
    "atan", &[M], ALL, |x| x[0].atan();
    "sinh", &[M], ALL, |x| x[0].sinh();
    "cosh", &[M], ALL, |x| x[0].cosh();
    "asinh", &[M], ALL, |x| x[0].asinh();
    "acosh", &[M], Domain::Range(1.2, 3.0), |x| x[0].acosh();
    "atanh", &[M], SMALL, |x| x[0].atanh();
    "erf", &[M], ALL, |x| x[0].erf();
    "erfc", &[M], ALL, |x| x[0].erfc();
    "erfinv", &[M], SMALL, |x| x[0].erfinv();
    "silu", &[M], ALL, |x| x[0].silu();
    "mish", &[M], ALL, |x| x[0].mish();
    "hardsigmoid", &[M], ALL, |x| x[0].hardsigmoid();
    "hardswish", &[M], Domain::Range(-2.5, 2.5), |x| x[0].hardswish();
    "gelu", &[M], ALL, |x| x[0].gelu(GeluApproximate::None);
    "gelu_tanh", &[M], ALL, |x| x[0].gelu(GeluApproximate::Tanh);
    "softplus", &[M], ALL, |x| x[0].softplus(2.0, 3.0);
    "elu", &[M], AWAY, |x| x[0].elu(0.7);
    "leaky_relu", &[M], AWAY, |x| x[0].leaky_relu(0.1);
    "hardtanh", &[M], Domain::Range(-0.9, 0.9), |x| x[0].hardtanh(-1.0, 1.0);
    "logit", &[M], Domain::Range(0.1, 0.9), |x| x[0].logit(None);
    "clamp", &[M], Domain::Range(-0.9, 0.9), |x| x[0].clamp(Some((-0.5).into()), Some(0.5.into()));
    "add_broadcast", &[M, V], ALL, |x| x[0].add(&x[1]);
    "sub", &[M, M], ALL, |x| x[0].sub(&x[1]);
    "mul_broadcast", &[&[3, 1], V], ALL, |x| x[0].mul(&x[1]);
    "div", &[M, M], AWAY, |x| x[0].div(&x[1]);
    "pow", &[M, M], POS, |x| x[0].pow(&x[1]);
    "pow_scalar", &[M], POS, |x| x[0].pow(2.5);
    "maximum", &[M, M], ALL, |x| x[0].maximum(&x[1]);
    "minimum", &[M, M], ALL, |x| x[0].minimum(&x[1]);
    "fmax", &[M, M], ALL, |x| x[0].fmax(&x[1]);
    "atan2", &[M, M], AWAY, |x| x[0].atan2(&x[1]);
    "hypot", &[M, M], AWAY, |x| x[0].hypot(&x[1]);
    "logaddexp", &[M, M], ALL, |x| x[0].logaddexp(&x[1]);
    "logaddexp2", &[M, M], ALL, |x| x[0].logaddexp2(&x[1]);
    "xlogy", &[M, M], POS, |x| x[0].xlogy(&x[1]);
    "copysign", &[M, M], AWAY, |x| x[0].copysign(&x[1]);
    "where", &[M, M], ALL, |x| Tensor::where_cond(&x[0].gt(0.0)?, &x[0], &x[1]);
    "lerp", &[M, M, M], ALL, |x| x[0].lerp(&x[1], &x[2]);
    "addcmul", &[M, M, M], ALL, |x| x[0].addcmul(&x[1], &x[2], 0.5);
    "addcdiv", &[M, M, M], AWAY, |x| x[0].addcdiv(&x[1], &x[2], 0.5);
    "sum", &[M], ALL, |x| x[0].sum(&[1], false);
    "mean", &[M], ALL, |x| x[0].mean(&[0], true);
    "nansum", &[M], ALL, |x| x[0].nansum(&[], false);
    "prod", &[M], AWAY, |x| x[0].prod(&[1], false);
    "prod_all", &[M], AWAY, |x| x[0].prod(&[], false);
    "var", &[M], ALL, |x| x[0].var(&[1], 1, false);
    "std", &[M], ALL, |x| x[0].std(&[0], 0, true);
    "amax", &[M], ALL, |x| x[0].amax(&[1], false);
    "amin", &[M], ALL, |x| x[0].amin(&[], false);
    "max_dim", &[M], ALL, |x| Ok(x[0].max_dim(0, false)?.0);
    "logsumexp", &[M], ALL, |x| x[0].logsumexp(&[1], true);
    "norm2", &[M], ALL, |x| x[0].norm(2.0, &[1], false);
    "norm1", &[M], AWAY, |x| x[0].norm(1.0, &[], false);
    "norm3", &[M], AWAY, |x| x[0].norm(3.0, &[0], false);
    "norm_half", &[M], AWAY, |x| x[0].norm(0.5, &[1], false);
    "softmax", &[M], ALL, |x| x[0].softmax(1);
    "log_softmax", &[M], ALL, |x| x[0].log_softmax(0);
    "cumsum", &[M], ALL, |x| x[0].cumsum(1);
    "cumprod", &[M], AWAY, |x| x[0].cumprod(1);
    "logcumsumexp", &[M], ALL, |x| x[0].logcumsumexp(0);
    "cummax", &[M], ALL, |x| Ok(x[0].cummax(1)?.0);
    "matmul", &[M, &[4, 2]], ALL, |x| x[0].matmul(&x[1]);
    "matmul_vec", &[M, V], ALL, |x| x[0].matmul(&x[1]);
    "matmul_batched", &[&[2, 3, 4], &[4, 2]], ALL, |x| x[0].matmul(&x[1]);
    "cat", &[M, M], ALL, |x| Tensor::cat(&[&x[0], &x[1]], 1);
    "stack", &[M, M], ALL, |x| Tensor::stack(&[&x[0], &x[1]], 0);
    "flip", &[M], ALL, |x| x[0].flip(&[0, 1]);
    "roll", &[M], ALL, |x| x[0].roll(&[1], &[1]);
    "repeat", &[M], ALL, |x| x[0].repeat(&[2, 1]);
    "pad", &[M], ALL, |x| x[0].pad(&[1, -1], 0.5);
    "tril", &[M], ALL, |x| x[0].tril(0);
    "unfold", &[V], ALL, |x| x[0].unfold(0, 2, 1)?.contiguous();
    "expand", &[&[3, 1]], ALL, |x| x[0].expand(&[3, 4])?.contiguous();
    "diagonal", &[M], ALL, |x| x[0].diagonal(0, 0, 1)?.contiguous();
    "gather", &[M], ALL, |x| x[0].gather(1, &Tensor::from_vec(vec![0i64, 3, 3, 1, 2, 2], &[3, 2])?);
    "index_select", &[M], ALL, |x| x[0].index_select(1, &Tensor::from_vec(vec![3i64, 0, 3], &[3])?);
    "take", &[M], ALL, |x| x[0].take(&Tensor::from_vec(vec![0i64, -1, 5, 5], &[2, 2])?);
    "scatter_add", &[M, &[3, 2]], ALL, |x| x[0].scatter_add(1, &Tensor::from_vec(vec![0i64, 3, 3, 3, 2, 1], &[3, 2])?, &x[1]);
    "masked_fill", &[M], ALL, |x| x[0].masked_fill(&x[0].gt(0.5)?, 2.0);
];

#[test]
fn autograd_matches_finite_differences() {
    for case in CASES {
        for seed in 1..=6 {
            check(case, seed);
        }
    }
}

#[test]
fn inplace_writes_match_finite_differences() {
    // y = x * 1; y[:, 1:3] *= w: through a view, with a broadcast operand
    let case = Case {
        name: "mul_ through a view",
        shapes: &[M, &[2]],
        domain: ALL,
        f: |x| {
            let y = x[0].mul(1.0)?;
            y.narrow(1, 1, 2)?.mul_(&x[1])?;
            Ok(y)
        },
    };
    for seed in 1..=6 {
        check(&case, seed);
    }
}
