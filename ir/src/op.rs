//! The graph's operations: small `Copy` enums grouped by arity, and `Op`, the payload
//! of a graph node.
//!
//! By the time a node exists, promotion and broadcasting are resolved: an elementwise
//! node's inputs all have the node's *compute* dtype and the node's shape (the builder
//! inserted `Cast` and `View` nodes). The interpreter and later backends never derive
//! types again; they read them off the nodes.

use crate::layout::Layout;
use crate::scalar::Scalar;
use std::fmt;

/// Elementwise functions of one tensor. Input and output dtypes are on the nodes:
/// the output equals the input dtype except for the predicates (`IsNan`, `LogicalNot`:
/// bool output) and `Abs` of complex (real output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x` (integers wrap)
    Neg,
    /// `|x|` (integers wrap at the minimum; complex gives the modulus)
    Abs,
    /// `-1`, `0` or `1` (NaN stays NaN); refused for complex
    Sign,
    /// `e^x`
    Exp,
    /// natural logarithm
    Log,
    /// square root
    Sqrt,
    /// `1/sqrt(x)`
    Rsqrt,
    /// sine
    Sin,
    /// cosine
    Cos,
    /// hyperbolic tangent
    Tanh,
    /// `1/(1+e^-x)`
    Sigmoid,
    /// `max(x, 0)`
    Relu,
    /// round toward -inf (identity on integers)
    Floor,
    /// round toward +inf (identity on integers)
    Ceil,
    /// round half to even (identity on integers)
    Round,
    /// round toward zero (identity on integers)
    Trunc,
    /// `1/x`
    Reciprocal,
    /// `x == 0` (bool output)
    LogicalNot,
    /// `!x` (logical not for bool)
    BitwiseNot,
    /// `x != x` (bool output)
    IsNan,
}

/// Elementwise functions of two tensors of one dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// true division (float inputs; the builder casts integers first)
    Div,
    /// `floor(a / b)`; integer division by zero is an error
    DivFloor,
    /// `trunc(a / b)`; integer division by zero is an error
    DivTrunc,
    /// Python modulo: the result has the sign of `b`
    Remainder,
    /// C modulo: the result has the sign of `a`
    Fmod,
    /// `a ** b`; integers to negative integer powers are an error
    Pow,
    /// elementwise max, NaN propagates
    Maximum,
    /// elementwise min, NaN propagates
    Minimum,
    /// `atan2(a, b)`
    Atan2,
    /// `a == b` (bool output)
    Eq,
    /// `a != b` (bool output)
    Ne,
    /// `a < b` (bool output)
    Lt,
    /// `a <= b` (bool output)
    Le,
    /// `a > b` (bool output)
    Gt,
    /// `a >= b` (bool output)
    Ge,
    /// `a && b` (bool output)
    LogicalAnd,
    /// `a || b` (bool output)
    LogicalOr,
    /// `a ^ b` on truth values (bool output)
    LogicalXor,
    /// `a & b` (logical for bool)
    BitwiseAnd,
    /// `a | b` (logical for bool)
    BitwiseOr,
    /// `a ^ b` (logical for bool)
    BitwiseXor,
}

impl BinaryOp {
    /// True for ops whose output is `bool` whatever the input dtype.
    pub fn is_predicate(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge
                | BinaryOp::LogicalAnd
                | BinaryOp::LogicalOr
                | BinaryOp::LogicalXor
        )
    }
}

/// Reductions over a set of axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// sum (float16/bfloat16 accumulate in float32)
    Sum,
    /// product
    Prod,
    /// arithmetic mean (floating and complex only)
    Mean,
    /// maximum, NaN propagates
    Amax,
    /// minimum, NaN propagates
    Amin,
    /// variance with divisor `N - correction`
    Var {
        /// Bessel's correction
        correction: i64,
    },
    /// standard deviation with divisor `N - correction`
    Std {
        /// Bessel's correction
        correction: i64,
    },
}

/// Index-of-extremum reductions; output `int64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgReduceOp {
    /// index of the maximum (NaN counts as the maximum; first on ties)
    ArgMax,
    /// index of the minimum (NaN counts as the minimum; first on ties)
    ArgMin,
}

/// Stable integer handle of an input buffer held outside the graph (by the runtime).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InputId(pub u64);

impl fmt::Display for InputId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "buf{}", self.0)
    }
}

/// The payload of a graph node. Every node produces one contiguous row-major tensor
/// of the node's dtype and shape; `View` is how a consumer reads another layout.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A realized buffer held by the runtime (no inputs).
    Input(InputId),
    /// Every element equals the scalar, converted to the node dtype (no inputs).
    Full(Scalar),
    /// `start + i * step` for `i` in `0..shape[0]`, computed in f64 then converted
    /// (integer dtypes: computed exactly in i64) (no inputs).
    Arange {
        /// first value
        start: f64,
        /// increment
        step: f64,
    },
    /// Reads input 0's contiguous output through a layout (shape, strides, offset).
    View(Layout),
    /// Converts input 0 to the node dtype (PyTorch's `.to(dtype)` rules).
    Cast,
    /// Elementwise function of input 0.
    Unary(UnaryOp),
    /// Elementwise function of inputs 0 and 1 (same dtype, same shape).
    Binary(BinaryOp),
    /// `where(input0, input1, input2)`: input 0 is bool; 1 and 2 share the node dtype.
    Where,
    /// Reduces input 0 over `axes` (sorted, unique).
    Reduce {
        /// the reduction
        op: ReduceOp,
        /// reduced axes of the input
        axes: Vec<usize>,
        /// whether reduced axes stay as size 1
        keepdim: bool,
    },
    /// Index of the extremum of input 0 along `axis` (`None`: over the flattened input).
    ArgReduce {
        /// which extremum
        op: ArgReduceOp,
        /// the axis, or `None` for all
        axis: Option<usize>,
        /// whether the axis stays as size 1
        keepdim: bool,
    },
    /// Inclusive prefix sum of input 0 along `axis`.
    Cumsum {
        /// the axis
        axis: usize,
    },
    /// Softmax (or log-softmax) of input 0 along `axis`.
    Softmax {
        /// the axis
        axis: usize,
        /// log-softmax instead of softmax
        log: bool,
    },
    /// Batched matrix product of two 3-D inputs `[B, M, K] @ [B, K, N]` of one dtype.
    Matmul,
    /// Concatenation of all inputs (one dtype) along `axis`.
    Cat {
        /// the axis
        axis: usize,
    },
    /// Input 0 is a storage (flat, any shape); input 1 has `layout.shape`. The output is
    /// input 0 with the elements addressed by `layout` replaced by input 1's values.
    /// When several elements of the layout address one location, the last in row-major
    /// order wins (only `fill_`/`copy_` of equal values can reach that case).
    WriteView(Layout),
    /// Random numbers (no inputs): element `i` is
    /// [`crate::philox::sample`]`(distribution, dtype, seed, offset, i)` converted to
    /// the node dtype; it depends on nothing else, so any backend reproduces it.
    Random {
        /// the generator's key
        seed: u64,
        /// the counter of element 0
        offset: u64,
        /// what is drawn
        distribution: crate::philox::Distribution,
    },
    /// `torch.linspace` (no inputs): `steps = shape[0]` values from `start` to `end`
    /// computed from both ends with PyTorch's CPU kernel (see the interpreter's
    /// `creation::linspace` for the exact arithmetic per dtype).
    Linspace {
        /// first value
        start: f64,
        /// last value
        end: f64,
    },
}

impl Op {
    /// The op's name in the text form of the graph.
    pub fn name(&self) -> String {
        match self {
            Op::Input(_) => "input".into(),
            Op::Full(_) => "full".into(),
            Op::Arange { .. } => "arange".into(),
            Op::View(_) => "view".into(),
            Op::Cast => "cast".into(),
            Op::Unary(u) => snake(&format!("{u:?}")),
            Op::Binary(b) => snake(&format!("{b:?}")),
            Op::Where => "where".into(),
            Op::Reduce { op, .. } => match op {
                ReduceOp::Var { .. } => "var".into(),
                ReduceOp::Std { .. } => "std".into(),
                other => snake(&format!("{other:?}")),
            },
            Op::ArgReduce { op, .. } => snake(&format!("{op:?}")),
            Op::Cumsum { .. } => "cumsum".into(),
            Op::Softmax { log: false, .. } => "softmax".into(),
            Op::Softmax { log: true, .. } => "log_softmax".into(),
            Op::Matmul => "matmul".into(),
            Op::Cat { .. } => "cat".into(),
            Op::WriteView(_) => "write_view".into(),
            Op::Random { .. } => "random".into(),
            Op::Linspace { .. } => "linspace".into(),
        }
    }

    /// The op's attributes in the text form (`axes=[1], keepdim=false`), or "".
    pub fn attributes(&self) -> String {
        match self {
            Op::Input(id) => format!("{id}"),
            Op::Full(v) => format!("value={v}"),
            Op::Arange { start, step } => format!("start={start:?}, step={step:?}"),
            Op::View(l) | Op::WriteView(l) => format!("{l}"),
            Op::Reduce { op, axes, keepdim } => {
                let corr = match op {
                    ReduceOp::Var { correction } | ReduceOp::Std { correction } => {
                        format!(", correction={correction}")
                    }
                    _ => String::new(),
                };
                format!("axes={axes:?}, keepdim={keepdim}{corr}")
            }
            Op::ArgReduce { axis, keepdim, .. } => match axis {
                Some(a) => format!("axis={a}, keepdim={keepdim}"),
                None => "axis=all".into(),
            },
            Op::Cumsum { axis } | Op::Softmax { axis, .. } | Op::Cat { axis } => {
                format!("axis={axis}")
            }
            Op::Random {
                seed,
                offset,
                distribution,
            } => {
                let d = match distribution {
                    crate::philox::Distribution::Uniform => "uniform".to_string(),
                    crate::philox::Distribution::Normal => "normal".to_string(),
                    crate::philox::Distribution::Integer { low, high } => {
                        format!("integer, low={low}, high={high}")
                    }
                };
                format!("seed={seed}, offset={offset}, distribution={d}")
            }
            Op::Linspace { start, end } => format!("start={start:?}, end={end:?}"),
            _ => String::new(),
        }
    }
}

/// `DivFloor` → `div_floor`.
fn snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
