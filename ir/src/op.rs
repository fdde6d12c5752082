//! The graph's operations: small `Copy` enums grouped by arity, and `Op`, the payload
//! of a graph node.
//!
//! By the time a node exists, promotion and broadcasting are resolved: an elementwise
//! node's inputs all have the node's *compute* dtype and the node's shape (the builder
//! inserted `Cast` and `View` nodes). The interpreter and later backends never derive
//! types again; they read them off the nodes.

use crate::dtype::{Category, DType};
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
    /// `-1`, `0` or `1` (NaN gives 0, as PyTorch's `(0 < x) - (x < 0)`); refused for complex
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
    // --- unary math, predicates and parameterless activations ---
    /// `x / |x|` for complex (0 for 0); `sign` for real inputs
    Sgn,
    /// `x * x` (bool inputs are computed in int64, as PyTorch's `pow(x, 2)`)
    Square,
    /// `2^x`
    Exp2,
    /// `e^x - 1`, accurate near 0
    Expm1,
    /// base-2 logarithm
    Log2,
    /// base-10 logarithm
    Log10,
    /// `ln(1 + x)`, accurate near 0
    Log1p,
    /// tangent
    Tan,
    /// arc sine
    Asin,
    /// arc cosine
    Acos,
    /// arc tangent
    Atan,
    /// hyperbolic sine
    Sinh,
    /// hyperbolic cosine
    Cosh,
    /// inverse hyperbolic sine
    Asinh,
    /// inverse hyperbolic cosine
    Acosh,
    /// inverse hyperbolic tangent
    Atanh,
    /// error function (real floating only)
    Erf,
    /// complementary error function `1 - erf(x)` (real floating only)
    Erfc,
    /// inverse error function (real floating only)
    Erfinv,
    /// `x - trunc(x)` (real floating only)
    Frac,
    /// `|x| == inf` (bool output; complex: either part)
    IsInf,
    /// `x == +inf` (bool output; real only)
    IsPosInf,
    /// `x == -inf` (bool output; real only)
    IsNegInf,
    /// neither NaN nor infinite (bool output; complex: both parts)
    IsFinite,
    /// imaginary part is 0 (bool output; true for real dtypes)
    IsReal,
    /// the sign bit is set (bool output; `-0.0` is true; real only)
    Signbit,
    /// `x / (1 + e^-x)` (SiLU / swish)
    Silu,
    /// `x * tanh(ln(1 + e^x))`
    Mish,
    /// `min(max(x + 3, 0), 6) / 6`
    Hardsigmoid,
    /// `x * min(max(x + 3, 0), 6) / 6`
    Hardswish,
    /// the real part of a complex value (real output)
    RealPart,
    /// the imaginary part of a complex value (real output)
    ImagPart,
    /// the complex conjugate `re - i im` (complex only)
    Conj,
}

/// Elementwise functions of one tensor with host-number parameters. The
/// input has the compute dtype and the node's shape; the output dtype is the node's
/// (the input's, for all of them today). Parameters are `f64` as PyTorch's Python
/// numbers are; kernels convert them to the compute type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UnaryParamOp {
    /// `nan_to_num`: NaN, +inf and -inf replaced by these values (the builder has
    /// filled in PyTorch's defaults: 0 and the dtype's largest/lowest finite values).
    /// The identity on bool and integers.
    NanToNum {
        /// replacement of NaN
        nan: f64,
        /// replacement of +inf
        posinf: f64,
        /// replacement of -inf
        neginf: f64,
    },
    /// `ln(x / (1 - x))`, the input clamped to `[eps, 1 - eps]` when `eps >= 0`
    /// (`None`: no clamping).
    Logit {
        /// the clamping bound
        eps: Option<f64>,
    },
    /// Rounds half to even at `decimals` decimal digits (negative: tens, hundreds, …)
    /// with PyTorch's formula `nearbyint(x * 10^d) / 10^d`.
    RoundDecimals {
        /// the number of decimal digits
        decimals: i64,
    },
    /// GELU: `x * Φ(x)` exactly (`tanh: false`) or with PyTorch's tanh approximation.
    Gelu {
        /// the tanh approximation
        tanh: bool,
    },
    /// `ln(1 + e^(beta x)) / beta`, or `x` where `beta x > threshold`.
    Softplus {
        /// the slope factor
        beta: f64,
        /// above this `beta x` the function is linear
        threshold: f64,
    },
    /// `x > 0 ? scale x : alpha scale (e^(input_scale x) - 1)` (`elu` has
    /// `scale = input_scale = 1`).
    Elu {
        /// the negative saturation value
        alpha: f64,
        /// the overall scale
        scale: f64,
        /// the scale of the input on the negative side
        input_scale: f64,
    },
    /// `x > 0 ? x : negative_slope x`
    LeakyRelu {
        /// the slope for negative inputs
        negative_slope: f64,
    },
    /// `clamp(x, min_val, max_val)` (NaN propagates; on integers the bounds are
    /// already truncated by the builder).
    Hardtanh {
        /// the lower bound
        min_val: f64,
        /// the upper bound
        max_val: f64,
    },
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
    /// elementwise max that ignores NaN (returns the non-NaN operand); refused for complex
    Fmax,
    /// elementwise min that ignores NaN (returns the non-NaN operand); refused for complex
    Fmin,
    /// `sqrt(a² + b²)` without undue overflow (real floats only)
    Hypot,
    /// `|a|` with the sign of `b` (real floats; the builder lifts integers)
    Copysign,
    /// `log(e^a + e^b)` (real floats and complex)
    Logaddexp,
    /// `log2(2^a + 2^b)` (real floats)
    Logaddexp2,
    /// `a * log(b)`, 0 where `a == 0` unless `b` is NaN (the builder lifts integers)
    Xlogy,
    /// the next representable value after `a` toward `b` (real floats)
    Nextafter,
    /// `a << b`; shifts that are negative or at least the bit width give 0
    BitwiseLeftShift,
    /// `a >> b` (arithmetic for signed types); out-of-range shifts give 0, or -1 for
    /// negative `a`
    BitwiseRightShift,
    /// greatest common divisor (integers; C's `abs` semantics at the minimum)
    Gcd,
    /// least common multiple (integers; wraps as PyTorch's kernel does)
    Lcm,
    /// the complex value `a + i b` of two real parts (the output is the complex dtype
    /// of the inputs' real dtype)
    ComplexOf,
}

impl UnaryOp {
    /// Whether the op exists for `dtype` where the builder does not already decide it
    /// (the complex parts and the conjugate exist for complex values only).
    ///
    /// ```
    /// use lazyfuse_ir::{DType, UnaryOp};
    /// assert!(UnaryOp::ImagPart.accepts(DType::C64) && !UnaryOp::ImagPart.accepts(DType::F32));
    /// assert!(UnaryOp::Exp.accepts(DType::F32));
    /// ```
    pub fn accepts(self, dtype: DType) -> bool {
        match self {
            UnaryOp::RealPart | UnaryOp::ImagPart | UnaryOp::Conj => dtype.is_complex(),
            _ => true,
        }
    }

    /// True for ops whose output is `bool` whatever the input dtype.
    ///
    /// ```
    /// use lazyfuse_ir::UnaryOp;
    /// assert!(UnaryOp::IsFinite.is_predicate());
    /// assert!(!UnaryOp::Erf.is_predicate());
    /// ```
    pub fn is_predicate(self) -> bool {
        use UnaryOp::*;
        matches!(
            self,
            LogicalNot | IsNan | IsInf | IsPosInf | IsNegInf | IsFinite | IsReal | Signbit
        )
    }
}

impl BinaryOp {
    /// Whether a node of this op may compute in `dtype`: the invariant the verifier
    /// checks for the binary math ops (`fmax` … `lcm`), whose kernels exist for one
    /// dtype category only. The older ops answer `true` (their builder checks hold).
    ///
    /// ```
    /// use lazyfuse_ir::{BinaryOp, DType};
    /// assert!(BinaryOp::Gcd.accepts(DType::U8));
    /// assert!(!BinaryOp::Gcd.accepts(DType::F32));
    /// assert!(BinaryOp::Logaddexp.accepts(DType::C64));
    /// ```
    pub fn accepts(self, dtype: DType) -> bool {
        use BinaryOp::*;
        let cat = dtype.category();
        let float = cat == Category::Floating;
        match self {
            Fmax | Fmin | Copysign | Xlogy if cat == Category::Complex => false,
            Copysign | Xlogy | Hypot | Logaddexp2 | Nextafter => float,
            Logaddexp => float || cat == Category::Complex,
            BitwiseLeftShift | BitwiseRightShift | Gcd | Lcm => cat == Category::Integer,
            ComplexOf => dtype.to_complex().is_some() && float,
            _ => true,
        }
    }

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
    /// sum ignoring NaN (NaN counts as zero)
    NanSum,
    /// mean of the non-NaN elements (NaN where there are none)
    NanMean,
    /// whether any element is nonzero (output bool, or uint8 for a uint8 input)
    Any,
    /// whether every element is nonzero (output bool, or uint8 for a uint8 input)
    All,
    /// `log(sum(exp(x)))`, computed as `m + log(sum(exp(x - m)))` with `m` the
    /// maximum (an infinite `m` is replaced by 0, as PyTorch does)
    LogSumExp,
    /// number of nonzero elements (output int64)
    CountNonzero,
    /// vector p-norm of the absolute values (output the real dtype)
    Norm {
        /// the order `p`
        ord: NormOrd,
    },
    /// arithmetic mean by Welford's running update (per part for complex), as
    /// PyTorch's `var_mean`/`std_mean` return it: an infinity followed by a finite
    /// value gives NaN where `Mean` gives the infinity
    RunningMean,
}

/// The order `p` of a vector norm, stored by its bits so that ops stay `Eq + Hash`.
///
/// ```
/// use lazyfuse_ir::op::NormOrd;
/// assert_eq!(NormOrd::new(f64::INFINITY).value(), f64::INFINITY);
/// assert_eq!(NormOrd::new(2.0).to_string(), "2");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NormOrd(u64);

impl NormOrd {
    /// The order `p` (`-0.0` is taken as `0.0`).
    pub fn new(p: f64) -> Self {
        NormOrd(if p == 0.0 { 0.0f64 } else { p }.to_bits())
    }

    /// The order as a float.
    pub fn value(self) -> f64 {
        f64::from_bits(self.0)
    }
}

impl fmt::Display for NormOrd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.value();
        if p.is_infinite() {
            f.write_str(if p > 0.0 { "inf" } else { "-inf" })
        } else {
            write!(f, "{p}")
        }
    }
}

/// Inclusive scans along one axis (the output has the input's shape).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanOp {
    /// running product (integers wrap; float16/bfloat16 accumulate in float32)
    Cumprod,
    /// running maximum; NaN propagates
    Cummax,
    /// running minimum; NaN propagates
    Cummin,
    /// index of the running maximum (int64 output): the last index of an equal
    /// maximum, the last NaN once a NaN was seen
    CummaxIndices,
    /// index of the running minimum (int64 output), as `CummaxIndices`
    CumminIndices,
    /// running `log(sum(exp(x)))`
    LogCumSumExp,
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
    /// (Boxed: a layout is four times the size of any other op's attributes, and
    /// every node of the graph, views or not, would carry and move its bytes.)
    View(Box<Layout>),
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
    WriteView(Box<Layout>),
    /// `out[m] = input0[m with m[axis] = input1[m]]`: input 1 is an `int64` index of the
    /// node's shape and input 0's number of dims (zero-dim counts as one), no larger than
    /// input 0 in every dim but `axis`. An index outside `[0, size)` of `axis` is an
    /// execution error (PyTorch's "index 5 is out of bounds for dimension 0 with size 3").
    Gather {
        /// the indexed axis
        axis: usize,
    },
    /// Input 0 with `axis` replaced by the `int64` vector input 1 (`index_select`): the
    /// output's slice `j` along `axis` is input 0's slice `input1[j]`.
    IndexSelect {
        /// the indexed axis
        axis: usize,
    },
    /// Input 0 read as a flat vector at the positions held by the `int64` input 1, whose
    /// shape is the node's (`take`); negative positions count from the end.
    Take,
    /// Input 0 (the node's shape and dtype) with, for every position `m` of the `int64`
    /// index input 1, the element `m with m[axis] = input1[m]` combined with input 2's
    /// element `m` (input 2 has input 1's shape and the node's dtype). `reduce: None`
    /// assigns (the last write in row-major order wins); otherwise the contributions
    /// and, when `include_self`, the old value are reduced.
    Scatter {
        /// the indexed axis
        axis: usize,
        /// how contributions combine (`None`: plain assignment)
        reduce: Option<ScatterReduce>,
        /// whether the old element takes part in the reduction
        include_self: bool,
    },
    /// Input 0 with the order of the elements reversed along each of `axes` (sorted,
    /// unique). Its own node rather than a view: layouts have no negative strides, and
    /// PyTorch's `flip` copies too; for a compiler it is a static index map.
    Flip {
        /// the reversed axes
        axes: Vec<usize>,
    },
    /// An inclusive scan of input 0 along `axis` (shape kept).
    Scan {
        /// the scan
        op: ScanOp,
        /// the axis
        axis: usize,
    },
    /// Elementwise function of input 0 with host-number parameters.
    UnaryParam(UnaryParamOp),
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
    /// The input's bytes (row-major, little-endian) read as the node's dtype, flat:
    /// `view(dtype)`. The input and the node hold the same number of bytes.
    Bitcast,
}

/// How `scatter_reduce` combines the values that land on one element.
///
/// ```
/// use lazyfuse_ir::{Op, ScatterReduce};
/// let op = Op::Scatter { axis: 0, reduce: Some(ScatterReduce::Mean), include_self: false };
/// assert_eq!(op.name(), "scatter_reduce");
/// assert_eq!(op.attributes(), "axis=0, reduce=mean, include_self=false");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScatterReduce {
    /// sum (`scatter_add`); integers wrap, bool is logical or
    Sum,
    /// product; bool is logical and
    Prod,
    /// arithmetic mean; integers divide with floor rounding
    Mean,
    /// maximum, NaN propagates
    Amax,
    /// minimum, NaN propagates
    Amin,
}

impl ScatterReduce {
    /// PyTorch's name of the reduction (`"sum"`, `"amax"`, …).
    ///
    /// ```
    /// assert_eq!(lazyfuse_ir::ScatterReduce::Amax.name(), "amax");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ScatterReduce::Sum => "sum",
            ScatterReduce::Prod => "prod",
            ScatterReduce::Mean => "mean",
            ScatterReduce::Amax => "amax",
            ScatterReduce::Amin => "amin",
        }
    }
}

impl Op {
    /// A view through `layout` ([`Op::View`]).
    ///
    /// ```
    /// use lazyfuse_ir::{layout::Layout, Op};
    /// let op = Op::view(Layout::contiguous(&[2, 3]));
    /// assert!(matches!(op, Op::View(l) if l.shape.as_slice() == [2, 3]));
    /// ```
    pub fn view(layout: Layout) -> Op {
        Op::View(Box::new(layout))
    }

    /// A write of input 1 through `layout` into input 0 ([`Op::WriteView`]).
    ///
    /// ```
    /// use lazyfuse_ir::{layout::Layout, Op};
    /// let op = Op::write_view(Layout::contiguous(&[4]));
    /// assert_eq!(op.name(), "write_view");
    /// ```
    pub fn write_view(layout: Layout) -> Op {
        Op::WriteView(Box::new(layout))
    }

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
                ReduceOp::NanSum => "nansum".into(),
                ReduceOp::NanMean => "nanmean".into(),
                ReduceOp::LogSumExp => "logsumexp".into(),
                ReduceOp::Norm { .. } => "norm".into(),
                ReduceOp::RunningMean => "running_mean".into(),
                other => snake(&format!("{other:?}")),
            },
            Op::ArgReduce { op, .. } => snake(&format!("{op:?}")),
            Op::Cumsum { .. } => "cumsum".into(),
            Op::Softmax { log: false, .. } => "softmax".into(),
            Op::Softmax { log: true, .. } => "log_softmax".into(),
            Op::Matmul => "matmul".into(),
            Op::Cat { .. } => "cat".into(),
            Op::WriteView(_) => "write_view".into(),
            Op::Gather { .. } => "gather".into(),
            Op::IndexSelect { .. } => "index_select".into(),
            Op::Take => "take".into(),
            Op::Scatter { reduce: None, .. } => "scatter".into(),
            Op::Scatter {
                reduce: Some(_), ..
            } => "scatter_reduce".into(),
            Op::Flip { .. } => "flip".into(),
            Op::Scan { op, .. } => match op {
                ScanOp::LogCumSumExp => "logcumsumexp".into(),
                other => snake(&format!("{other:?}")),
            },
            Op::UnaryParam(p) => p.name().into(),
            Op::Random { .. } => "random".into(),
            Op::Linspace { .. } => "linspace".into(),
            Op::Bitcast => "bitcast".into(),
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
                    ReduceOp::Norm { ord } => format!(", p={ord}"),
                    _ => String::new(),
                };
                format!("axes={axes:?}, keepdim={keepdim}{corr}")
            }
            Op::ArgReduce { axis, keepdim, .. } => match axis {
                Some(a) => format!("axis={a}, keepdim={keepdim}"),
                None => "axis=all".into(),
            },
            Op::Cumsum { axis }
            | Op::Softmax { axis, .. }
            | Op::Cat { axis }
            | Op::Scan { axis, .. } => {
                format!("axis={axis}")
            }
            Op::Gather { axis } | Op::IndexSelect { axis } => format!("axis={axis}"),
            Op::Scatter {
                axis,
                reduce,
                include_self,
            } => match reduce {
                None => format!("axis={axis}"),
                Some(r) => format!(
                    "axis={axis}, reduce={}, include_self={include_self}",
                    r.name()
                ),
            },
            Op::Flip { axes } => format!("axes={axes:?}"),
            Op::UnaryParam(p) => p.attributes(),
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

impl UnaryParamOp {
    /// The op's name in the text form of the graph (PyTorch's function name).
    ///
    /// ```
    /// use lazyfuse_ir::UnaryParamOp;
    /// assert_eq!(UnaryParamOp::Logit { eps: None }.name(), "logit");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            UnaryParamOp::NanToNum { .. } => "nan_to_num",
            UnaryParamOp::Logit { .. } => "logit",
            UnaryParamOp::RoundDecimals { .. } => "round_decimals",
            UnaryParamOp::Gelu { .. } => "gelu",
            UnaryParamOp::Softplus { .. } => "softplus",
            UnaryParamOp::Elu { .. } => "elu",
            UnaryParamOp::LeakyRelu { .. } => "leaky_relu",
            UnaryParamOp::Hardtanh { .. } => "hardtanh",
        }
    }

    /// The parameters in the text form (`beta=1.0, threshold=20.0`).
    ///
    /// ```
    /// use lazyfuse_ir::UnaryParamOp;
    /// let op = UnaryParamOp::Softplus { beta: 1.0, threshold: 20.0 };
    /// assert_eq!(op.attributes(), "beta=1.0, threshold=20.0");
    /// ```
    pub fn attributes(&self) -> String {
        match *self {
            UnaryParamOp::NanToNum {
                nan,
                posinf,
                neginf,
            } => {
                format!("nan={nan:?}, posinf={posinf:?}, neginf={neginf:?}")
            }
            UnaryParamOp::Logit { eps: Some(e) } => format!("eps={e:?}"),
            UnaryParamOp::Logit { eps: None } => "eps=none".into(),
            UnaryParamOp::RoundDecimals { decimals } => format!("decimals={decimals}"),
            UnaryParamOp::Gelu { tanh } => {
                format!("approximate={}", if tanh { "tanh" } else { "none" })
            }
            UnaryParamOp::Softplus { beta, threshold } => {
                format!("beta={beta:?}, threshold={threshold:?}")
            }
            UnaryParamOp::Elu {
                alpha,
                scale,
                input_scale,
            } => format!("alpha={alpha:?}, scale={scale:?}, input_scale={input_scale:?}"),
            UnaryParamOp::LeakyRelu { negative_slope } => {
                format!("negative_slope={negative_slope:?}")
            }
            UnaryParamOp::Hardtanh { min_val, max_val } => {
                format!("min_val={min_val:?}, max_val={max_val:?}")
            }
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
