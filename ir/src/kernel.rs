//! The kernel IR: backend-neutral loop kernels, the unit that codegen translates.
//!
//! A [`Schedule`] is what the scheduler makes of one realize: buffers ([`BufDecl`]:
//! the realize's inputs, its outputs, and the temporaries between kernels) and an
//! ordered list of [`Step`]s. A step is either a [`LoopKernel`], compiled to native
//! code, or an [`ExternStep`], one graph node run by a Rust routine (matmul, and the
//! ops that the loop IR does not express yet; the dump names every one).
//!
//! # A loop kernel
//! - An **iteration space** `dims`: the first `n_parallel` dims are parallel (any
//!   order, any thread), the rest are reduction dims, iterated in row-major order.
//! - **Params**: the buffers the kernel reads or writes, each with its dtype and its
//!   exact element count (the verifier proves every access inside it).
//! - An **expression DAG** `exprs`, in topological order (an expression only names
//!   earlier ones). Each has a dtype and a [`Stage`]:
//!   - `Stage::Outer(k)`: evaluated once per parallel point, after the first `k`
//!     *phases* have run; it may use the results of reductions of those phases;
//!   - `Stage::Inner(k)`: evaluated inside phase `k`'s loop over every reduction dim.
//!
//!   A phase is one pass over the reduction dims (softmax: max, then sum of exps,
//!   then the stores: three phases in one kernel). An `Expr::Reduce` of an
//!   `Inner(k)` value has stage `Outer(k + 1)`.
//! - **Stores** write an expression's value at an affine index, at the expression's
//!   stage (inside phase `k`'s loop for an `Inner(k)` value).
//!
//! Loads and stores index with an [`Affine`] map: `offset + Σ strides[d] · i_d` over
//! every dim of the iteration space, computed in 64-bit. A load may add a
//! data-dependent term ([`DynIndex`], for gather-like reads): an index value out of
//! range sets the kernel's status and is never dereferenced.
//!
//! # Scalar semantics
//! Expression ops are the graph's own `UnaryOp`, `UnaryParamOp` and `BinaryOp`, with
//! the interpreter's numerics: integers wrap; integer division and remainder by zero
//! set a status code ([`Status`]) and never trap (nor does `MIN / -1`, which wraps);
//! an integer power with a negative exponent is 0, 1 or -1, as in the interpreter
//! (the builder refuses negative host exponents); `float16`/`bfloat16` values are
//! computed in `float32` and rounded to their dtype after every op; `Cast` follows
//! the interpreter's conversion rules (`lazyfuse_runtime::interp::cast`). Float8
//! dtypes appear only in loads, stores and casts. Complex dtypes never appear in a
//! loop kernel (the scheduler makes them extern steps).
//!
//! # Reductions
//! [`Accum`] names the combining rule. `Sum` of `float32` accumulates in `float64`
//! (more accurate than PyTorch's cascade sum, never less); other accumulators use the
//! expression's dtype. `Max`/`Min` propagate NaN; `ArgMax`/`ArgMin` give the row-major
//! position over the reduction dims of the first maximum (a NaN counts as the maximum,
//! the first NaN wins), as an `int64`. An empty reduction yields the identity
//! (`Sum` 0, `Prod` 1, `Any` false, `All` true); the scheduler refuses empty
//! `Max`/`Min`/`ArgMax` before a kernel exists.
//!
//! # Scans
//! An [`Expr::Scan`] is an inclusive running value: an `Inner(k)` expression of an
//! `Inner(k)` operand whose value at reduction point `j` (row-major over the
//! reduction dims) combines the operand's values at points `0..=j` of the same
//! parallel point ([`ScanAccum`]: cumsum, cumprod, cummax/cummin values and indices,
//! logcumsumexp). It is usable by later `Inner(k)` expressions and stores of phase
//! `k`, and its numerics are the interpreter's scans (`interp::scan`): `Sum`/`Prod`
//! keep a wide running value (`float16`/`bfloat16` in `float32`, `float32` in
//! `float64`; integers wrap in their own dtype) and round each element from it;
//! `Max`/`Min` take an element that is NaN or at least as large (small) as the
//! running one, unless the running one is NaN (ties move to the later element, the
//! latest NaN wins); `ArgMax`/`ArgMin` are that element's position, as `int64`;
//! `LogAddExp` runs PyTorch's `_log_add_exp_helper` in `float64` from `-inf` and
//! rounds each element through the dtype's accumulation type.

use crate::dtype::DType;
use crate::graph::NodeId;
use crate::op::{BinaryOp, InputId, Op, UnaryOp, UnaryParamOp};
use crate::shape::fmt_shape;
use std::fmt::{self, Write as _};

/// Index of a buffer of a [`Schedule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufId(pub u32);

impl fmt::Display for BufId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b{}", self.0)
    }
}

/// Index of an expression of a [`LoopKernel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

impl fmt::Display for ExprId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// Where a buffer of a schedule comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufKind {
    /// A realized buffer of the graph (an `input` node).
    Input(InputId),
    /// The result for target `i` of the realize.
    Output(usize),
    /// A value between kernels, freed after its last reader.
    Temp,
    /// A realized buffer of the graph (an `input` node) that the realize may
    /// overwrite: the old version it holds is read by nobody after the realize, and
    /// every kernel reading it runs before the first store into it (or reads only the
    /// elements it stores, at the same points). The caller gave it up (an in-place
    /// write stores into it instead of copying the whole storage); a caller that did
    /// not is served a private copy by the executor.
    Donated(InputId),
}

/// A buffer of a schedule: `len` elements of `dtype`, contiguous.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BufDecl {
    /// element type
    pub dtype: DType,
    /// number of elements
    pub len: usize,
    /// input, output or temporary
    pub kind: BufKind,
}

/// `offset + Σ strides[d] · i_d` over the kernel's dims (64-bit arithmetic).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Affine {
    /// the constant term
    pub offset: i64,
    /// one coefficient per dim of the iteration space (0: the index ignores it)
    pub strides: Vec<i64>,
}

impl Affine {
    /// The smallest and largest value over the iteration space `dims`, or `None`
    /// when the space is empty (no access happens).
    ///
    /// ```
    /// use lazyfuse_ir::kernel::Affine;
    /// let a = Affine { offset: 5, strides: vec![-1, 3] };
    /// assert_eq!(a.range(&[4, 2]), Some((2, 8)));
    /// assert_eq!(a.range(&[0, 2]), None);
    /// ```
    pub fn range(&self, dims: &[usize]) -> Option<(i128, i128)> {
        if dims.contains(&0) {
            return None;
        }
        let (mut lo, mut hi) = (self.offset as i128, self.offset as i128);
        for (&s, &n) in self.strides.iter().zip(dims) {
            let span = s as i128 * (n as i128 - 1);
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        Some((lo, hi))
    }

    /// Whether the index ignores every dim from `first` on.
    pub fn ignores_from(&self, first: usize) -> bool {
        self.strides.iter().skip(first).all(|&s| s == 0)
    }
}

impl fmt::Display for Affine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.offset != 0 || self.strides.iter().all(|&s| s == 0) {
            parts.push(self.offset.to_string());
        }
        for (d, &s) in self.strides.iter().enumerate() {
            match s {
                0 => {}
                1 => parts.push(format!("i{d}")),
                _ => parts.push(format!("{s}*i{d}")),
            }
        }
        f.write_str(&parts.join(" + "))
    }
}

/// A data-dependent index term: `wrap(value) · stride` is added to a load's affine
/// index, where `value` is an integer expression. With `wrap`, `wrap(v)` is
/// `v + size` for `-size <= v < 0` (a value outside `[-size, size)` is out of
/// range); without it every negative value is out of range (a value outside
/// `[0, size)`). An out-of-range value sets [`Status::IndexOutOfRange`] (the status
/// block's slots 1, 2 and 3 hold the value, `size` and the load's [`ExprId`]), is
/// never dereferenced, and the load yields 0.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DynIndex {
    /// the index expression (an integer dtype)
    pub value: ExprId,
    /// the size of the indexed dim
    pub size: u64,
    /// the element stride of the indexed dim
    pub stride: i64,
    /// whether negative values in `[-size, 0)` count from the end
    pub wrap: bool,
    /// which op's error an out-of-range value is (the executor's message)
    pub error: IndexError,
}

/// The graph op a [`DynIndex`] load comes from: what the executor needs to word an
/// out-of-range value exactly as the interpreter does ([`IndexError::message`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexError {
    /// `gather` along `axis`
    Gather {
        /// the graph op's axis
        axis: usize,
    },
    /// `index_select` (of a zero-dim input when `zero_dim`)
    IndexSelect {
        /// whether the input is zero-dim (PyTorch words that case differently)
        zero_dim: bool,
    },
    /// `take` (`size` is the input's element count)
    Take,
}

impl IndexError {
    /// The interpreter's message for index `value` out of range of `size`
    /// (`runtime/src/interp/index.rs`).
    ///
    /// ```
    /// use lazyfuse_ir::kernel::IndexError;
    /// assert_eq!(
    ///     IndexError::Gather { axis: 1 }.message(-1, 3),
    ///     "index -1 is out of bounds for dimension 1 with size 3"
    /// );
    /// assert_eq!(
    ///     IndexError::Take.message(7, 6),
    ///     "out of range: tried to access index 7 on a tensor of 6 elements."
    /// );
    /// ```
    pub fn message(&self, value: i64, size: u64) -> String {
        match self {
            IndexError::Gather { axis } => {
                format!("index {value} is out of bounds for dimension {axis} with size {size}")
            }
            IndexError::IndexSelect { zero_dim: true } => "index out of range in self".into(),
            IndexError::IndexSelect { zero_dim: false } => {
                format!("INDICES element is out of DATA bounds, id={value} axis_dim={size}")
            }
            IndexError::Take => {
                format!(
                    "out of range: tried to access index {value} on a tensor of {size} elements."
                )
            }
        }
    }
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexError::Gather { axis } => write!(f, "gather axis={axis}"),
            IndexError::IndexSelect { zero_dim } => {
                write!(
                    f,
                    "index_select{}",
                    if *zero_dim { " zero_dim" } else { "" }
                )
            }
            IndexError::Take => f.write_str("take"),
        }
    }
}

/// A constant. Its expression's dtype says how to read it: `Bool` for bool, `Int`
/// for integer dtypes (the value fits the dtype), `Float` for float dtypes (the value
/// is exactly representable in the dtype).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    /// a bool
    Bool(bool),
    /// an integer
    Int(i128),
    /// a float
    Float(f64),
}

impl fmt::Display for Const {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Const::Bool(b) => write!(f, "{b}"),
            Const::Int(i) => write!(f, "{i}"),
            Const::Float(x) => write!(f, "{x:?}"),
        }
    }
}

/// How a reduction combines values (see the module doc for NaN and empty rules).
/// On `bool` values `Sum` is a logical or and `Prod` a logical and.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Accum {
    /// `+` (identity 0; `float32` accumulates in `float64`)
    Sum,
    /// `*` (identity 1)
    Prod,
    /// largest value, NaN propagates
    Max,
    /// smallest value, NaN propagates
    Min,
    /// row-major position of the first largest value (NaN is largest), `int64`
    ArgMax,
    /// row-major position of the first smallest value (NaN is smallest), `int64`
    ArgMin,
    /// logical or of `bool` values (identity false)
    Any,
    /// logical and of `bool` values (identity true)
    All,
}

/// How a running value ([`Expr::Scan`]) combines (see the module doc for the
/// accumulation types, NaN and tie rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanAccum {
    /// running sum (`cumsum`): integers and floats
    Sum,
    /// running product (`cumprod`): integers and floats
    Prod,
    /// running maximum (`cummax` values)
    Max,
    /// running minimum (`cummin` values)
    Min,
    /// position of the running maximum (`cummax` indices), `int64`
    ArgMax,
    /// position of the running minimum (`cummin` indices), `int64`
    ArgMin,
    /// running `log(Σ exp)` (`logcumsumexp`): floats
    LogAddExp,
}

impl ScanAccum {
    /// The dtype of a scan of a `x` value, or `None` when the scan does not take
    /// that dtype.
    ///
    /// ```
    /// use lazyfuse_ir::kernel::ScanAccum;
    /// use lazyfuse_ir::DType;
    /// assert_eq!(ScanAccum::ArgMax.output_dtype(DType::F16), Some(DType::I64));
    /// assert_eq!(ScanAccum::Sum.output_dtype(DType::Bool), None);
    /// assert_eq!(ScanAccum::LogAddExp.output_dtype(DType::I64), None);
    /// ```
    pub fn output_dtype(self, x: DType) -> Option<DType> {
        if x.is_complex() || x.is_float8() {
            return None;
        }
        let float = matches!(x, DType::F16 | DType::BF16 | DType::F32 | DType::F64);
        match self {
            ScanAccum::Sum | ScanAccum::Prod if x == DType::Bool => None,
            ScanAccum::Sum | ScanAccum::Prod | ScanAccum::Max | ScanAccum::Min => Some(x),
            ScanAccum::ArgMax | ScanAccum::ArgMin => Some(DType::I64),
            ScanAccum::LogAddExp if float => Some(x),
            ScanAccum::LogAddExp => None,
        }
    }
}

/// An expression of a loop kernel.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// The element of param `param` at `index` (plus `dynamic`).
    Load {
        /// index into [`LoopKernel::params`]
        param: usize,
        /// the affine part of the index
        index: Affine,
        /// a data-dependent part, for gather-like reads
        dynamic: Option<DynIndex>,
    },
    /// A constant of the expression's dtype.
    Const(Const),
    /// The loop variable of dim `dim`, as the expression's (integer) dtype.
    LoopIndex {
        /// the dim of the iteration space
        dim: usize,
    },
    /// A unary graph op on a value of the op's input dtype.
    Unary {
        /// the op
        op: UnaryOp,
        /// the operand
        x: ExprId,
    },
    /// A unary graph op with host parameters.
    UnaryParam {
        /// the op
        op: UnaryParamOp,
        /// the operand
        x: ExprId,
    },
    /// A binary graph op; both operands have one dtype.
    Binary {
        /// the op
        op: BinaryOp,
        /// left operand
        a: ExprId,
        /// right operand
        b: ExprId,
    },
    /// `cond ? a : b` with a `bool` condition.
    Where {
        /// the condition (bool)
        cond: ExprId,
        /// the value where true
        a: ExprId,
        /// the value where false
        b: ExprId,
    },
    /// The operand converted to the expression's dtype.
    Cast {
        /// the operand
        x: ExprId,
    },
    /// The reduction of an `Inner(k)` value over all reduction dims; stage `Outer(k+1)`.
    Reduce {
        /// how values combine
        op: Accum,
        /// the value reduced
        x: ExprId,
    },
    /// The inclusive running value of an `Inner(k)` value over the reduction
    /// points so far; stage `Inner(k)` (see the module doc).
    Scan {
        /// how values combine
        op: ScanAccum,
        /// the value scanned
        x: ExprId,
    },
}

/// When an expression is evaluated (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// once per parallel point, after phases `0..k`
    Outer(u32),
    /// inside the loop of phase `k`
    Inner(u32),
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stage::Outer(k) => write!(f, "outer{k}"),
            Stage::Inner(k) => write!(f, "phase{k}"),
        }
    }
}

/// An expression with its dtype and stage.
#[derive(Clone, Debug, PartialEq)]
pub struct ExprNode {
    /// what it computes
    pub expr: Expr,
    /// its value's dtype
    pub dtype: DType,
    /// when it is evaluated
    pub stage: Stage,
}

/// A buffer a kernel reads or writes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    /// the schedule's buffer
    pub buf: BufId,
    /// its element type
    pub dtype: DType,
    /// its exact element count
    pub len: usize,
    /// whether the kernel stores into it
    pub writes: bool,
}

/// A store of `value` at `index` of param `param`, at the value's stage.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StoreOp {
    /// index into [`LoopKernel::params`]
    pub param: usize,
    /// where
    pub index: Affine,
    /// what (its dtype is the param's)
    pub value: ExprId,
}

/// A fused loop kernel (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct LoopKernel {
    /// a readable name (`k2_add_tanh`); not part of the structure
    pub name: String,
    /// the graph nodes whose values it computes, for dumps; not part of the structure
    pub nodes: Vec<NodeId>,
    /// the buffers it touches
    pub params: Vec<Param>,
    /// the iteration space: parallel dims first
    pub dims: Vec<usize>,
    /// how many of `dims` are parallel
    pub n_parallel: usize,
    /// the expression DAG, in topological order
    pub exprs: Vec<ExprNode>,
    /// the stores, in order
    pub stores: Vec<StoreOp>,
}

/// One graph node run by a Rust routine on whole buffers: matmul (its own kernel
/// kind), and the ops the loop IR does not express yet.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternStep {
    /// the node (in the graph the schedule was made from)
    pub node: NodeId,
    /// its op
    pub op: Op,
    /// its dtype
    pub dtype: DType,
    /// its shape
    pub shape: Vec<usize>,
    /// one buffer per input slot, holding that input's value
    pub inputs: Vec<BufId>,
    /// the shape of each input
    pub input_shapes: Vec<Vec<usize>>,
    /// how each input lies in its buffer: `None`, row-major (the buffer is the
    /// input); else a strided view of the buffer (a transposed matmul operand,
    /// which the float matmul reads in place; other routines gather it first)
    pub input_views: Vec<Option<ExternView>>,
    /// where the result goes (contiguous)
    pub output: BufId,
    /// why this node is not in a loop kernel
    pub reason: String,
}

/// A strided read of an extern step's input from its buffer: element
/// `(i_0, i_1, …)` of the input is `buffer[offset + Σ strides[d] · i_d]`.
///
/// ```
/// use lazyfuse_ir::kernel::ExternView;
/// // a [3, 2] transpose of a row-major [2, 3] buffer
/// let t = ExternView { offset: 0, strides: vec![1, 3] };
/// assert_eq!(t.last_index(&[3, 2]), Some(5));
/// assert_eq!(t.to_string(), "view(offset=0, strides=[1, 3])");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExternView {
    /// the buffer index of element 0
    pub offset: usize,
    /// the buffer step of each dim
    pub strides: Vec<usize>,
}

impl ExternView {
    /// The largest buffer index the view reads over `shape` (`None` when it reads
    /// nothing, or the index overflows).
    pub fn last_index(&self, shape: &[usize]) -> Option<usize> {
        if shape.contains(&0) {
            return None;
        }
        shape
            .iter()
            .zip(&self.strides)
            .try_fold(self.offset, |acc, (&n, &st)| {
                acc.checked_add((n - 1).checked_mul(st)?)
            })
    }
}

impl fmt::Display for ExternView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "view(offset={}, strides={:?})",
            self.offset, self.strides
        )
    }
}

/// A step of a schedule.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// a compiled loop kernel
    Loop(LoopKernel),
    /// a Rust routine
    Extern(ExternStep),
}

/// A realize, cut into steps.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// every buffer the steps touch
    pub buffers: Vec<BufDecl>,
    /// in execution order
    pub steps: Vec<Step>,
    /// the buffer holding each target's value (contiguous, the target's shape)
    pub outputs: Vec<BufId>,
    /// one line per value that was materialized, saying why (`LAZYFUSE_DEBUG=3`)
    pub notes: Vec<String>,
}

/// A status code a kernel sets instead of trapping; the executor turns it into the
/// op's error. Codes are ordered: a kernel keeps the first one it sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum Status {
    /// every element computed
    Ok = 0,
    /// an integer division or remainder by zero
    ZeroDivision = 1,
    /// a [`DynIndex`] value out of range (the status block's slots 1, 2 and 3 hold
    /// the value, the size and the id of the failing load expression)
    IndexOutOfRange = 3,
}

impl Status {
    /// The status of a code, `None` for an unknown one.
    pub fn from_code(code: u64) -> Option<Status> {
        Some(match code {
            0 => Status::Ok,
            1 => Status::ZeroDivision,
            3 => Status::IndexOutOfRange,
            _ => return None,
        })
    }
}

/// Number of `u64` slots of a kernel's status block: `[code, detail0, detail1, detail2]`.
pub const STATUS_SLOTS: usize = 4;

impl LoopKernel {
    /// The reduction dims' sizes.
    pub fn reduce_dims(&self) -> &[usize] {
        &self.dims[self.n_parallel..]
    }

    /// The parallel dims' sizes.
    pub fn parallel_dims(&self) -> &[usize] {
        &self.dims[..self.n_parallel]
    }

    /// Number of parallel points (the range a kernel call covers is a slice of
    /// `0..parallel_points()` in row-major order).
    pub fn parallel_points(&self) -> usize {
        self.parallel_dims().iter().product()
    }

    /// Number of phases (passes over the reduction dims).
    pub fn phases(&self) -> u32 {
        self.exprs
            .iter()
            .filter_map(|e| match e.stage {
                Stage::Inner(k) => Some(k + 1),
                Stage::Outer(_) => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// Which expressions a store needs, directly or through its operands (the others
    /// are dead: code generators skip them).
    pub fn needed_exprs(&self) -> Vec<bool> {
        self.needed_exprs_given(&[])
    }

    /// [`LoopKernel::needed_exprs`] with the values of `given` supplied from
    /// elsewhere: what only they read is not needed.
    pub fn needed_exprs_given(&self, given: &[usize]) -> Vec<bool> {
        let mut needed = vec![false; self.exprs.len()];
        for s in &self.stores {
            needed[s.value.0 as usize] = true;
        }
        for i in (0..self.exprs.len()).rev() {
            if needed[i] && !given.contains(&i) {
                for o in Self::operands(&self.exprs[i].expr) {
                    needed[o.0 as usize] = true;
                }
            }
        }
        needed
    }

    /// The buffers the kernel stores into.
    pub fn written_bufs(&self) -> Vec<BufId> {
        self.params
            .iter()
            .filter(|p| p.writes)
            .map(|p| p.buf)
            .collect()
    }

    /// The reductions phase `phase` accumulates (stage `Outer(phase + 1)`): each
    /// expression's index, its rule and its operand.
    pub fn phase_reductions(&self, phase: u32) -> Vec<(usize, Accum, ExprId)> {
        self.exprs
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match (&e.expr, e.stage) {
                (Expr::Reduce { op, x }, Stage::Outer(s)) if s == phase + 1 => Some((i, *op, *x)),
                _ => None,
            })
            .collect()
    }

    /// The expression `id`.
    pub fn expr(&self, id: ExprId) -> &ExprNode {
        &self.exprs[id.0 as usize]
    }

    /// The operands of an expression.
    pub fn operands(expr: &Expr) -> Vec<ExprId> {
        match expr {
            Expr::Load { dynamic, .. } => dynamic.iter().map(|d| d.value).collect(),
            Expr::Const(_) | Expr::LoopIndex { .. } => vec![],
            Expr::Unary { x, .. }
            | Expr::UnaryParam { x, .. }
            | Expr::Cast { x }
            | Expr::Reduce { x, .. }
            | Expr::Scan { x, .. } => vec![*x],
            Expr::Binary { a, b, .. } => vec![*a, *b],
            Expr::Where { cond, a, b } => vec![*cond, *a, *b],
        }
    }

    /// The deterministic text form; the structural part (everything but the name and
    /// the node list) is also the kernel cache's key ([`LoopKernel::structure`]).
    pub fn text(&self) -> String {
        let mut out = String::new();
        let nodes: Vec<String> = self.nodes.iter().map(|n| n.to_string()).collect();
        let _ = writeln!(out, "kernel {} (nodes {})", self.name, nodes.join(" "));
        out.push_str(&self.structure());
        out
    }

    /// The kernel's structure as text: params (numbered by position), dims, exprs
    /// and stores. Two kernels with equal structure compile to the same code.
    pub fn structure(&self) -> String {
        let mut out = String::new();
        for (i, p) in self.params.iter().enumerate() {
            let _ = writeln!(
                out,
                "  p{i}: {}[{}] {}",
                p.dtype,
                p.len,
                if p.writes { "out" } else { "in" }
            );
        }
        let _ = writeln!(
            out,
            "  dims {} parallel {}",
            fmt_shape(&self.dims),
            self.n_parallel
        );
        for (i, e) in self.exprs.iter().enumerate() {
            let _ = writeln!(
                out,
                "  v{i} = {} : {} @{}",
                expr_text(&e.expr),
                e.dtype,
                e.stage
            );
        }
        for s in &self.stores {
            let _ = writeln!(out, "  store p{}[{}] = {}", s.param, s.index, s.value);
        }
        out
    }

    /// Checks the kernel: operands name earlier expressions of compatible stages and
    /// dtypes, params and dims are consistent, and every load and store stays inside
    /// its buffer over the whole iteration space.
    ///
    /// ```
    /// use lazyfuse_ir::kernel::*;
    /// use lazyfuse_ir::DType;
    /// let k = LoopKernel {
    ///     name: "copy".into(),
    ///     nodes: vec![],
    ///     params: vec![
    ///         Param { buf: BufId(0), dtype: DType::F32, len: 6, writes: false },
    ///         Param { buf: BufId(1), dtype: DType::F32, len: 6, writes: true },
    ///     ],
    ///     dims: vec![2, 3],
    ///     n_parallel: 2,
    ///     exprs: vec![ExprNode {
    ///         expr: Expr::Load { param: 0, index: Affine { offset: 0, strides: vec![1, 2] }, dynamic: None },
    ///         dtype: DType::F32,
    ///         stage: Stage::Outer(0),
    ///     }],
    ///     stores: vec![StoreOp { param: 1, index: Affine { offset: 0, strides: vec![3, 1] }, value: ExprId(0) }],
    /// };
    /// assert!(k.verify().is_ok());
    /// let mut bad = k.clone();
    /// bad.params[0].len = 5;
    /// assert!(bad.verify().unwrap_err().contains("out of bounds"));
    /// ```
    pub fn verify(&self) -> Result<(), String> {
        let name = &self.name;
        if self.n_parallel > self.dims.len() {
            return Err(format!("kernel {name}: n_parallel exceeds the dims"));
        }
        let nd = self.dims.len();
        // Outer stages run once per parallel point, whatever the reduction dims
        // (even when those are empty): their accesses range over the parallel
        // space only (they ignore the reduction dims, checked below).
        let outer_dims: Vec<usize> = self
            .dims
            .iter()
            .enumerate()
            .map(|(d, &n)| if d < self.n_parallel { n } else { 1 })
            .collect();
        let space = |stage: Stage, index: &Affine| match stage {
            Stage::Outer(_) if index.ignores_from(self.n_parallel) => &outer_dims[..],
            _ => &self.dims[..],
        };
        let check_index = |what: &str,
                           p: usize,
                           index: &Affine,
                           stage: Stage,
                           extra: Option<Option<(i128, i128)>>| {
            let param = self.params.get(p).ok_or_else(|| {
                format!("kernel {name}: {what} names param p{p}, which is absent")
            })?;
            if index.strides.len() != nd {
                return Err(format!(
                    "kernel {name}: {what} of p{p} has {} strides for {nd} dims",
                    index.strides.len()
                ));
            }
            if let (Some((lo, hi)), Some(extra)) = (index.range(space(stage, index)), extra) {
                let (dlo, dhi) = extra.unwrap_or((0, 0));
                if lo + dlo < 0 || hi + dhi >= param.len as i128 {
                    return Err(format!(
                        "kernel {name}: {what} of p{p} reaches [{}, {}], out of bounds of its {} elements",
                        lo + dlo,
                        hi + dhi,
                        param.len
                    ));
                }
            }
            Ok(param)
        };
        for (i, e) in self.exprs.iter().enumerate() {
            let here = || format!("kernel {name}: v{i}");
            for op in Self::operands(&e.expr) {
                if op.0 as usize >= i {
                    return Err(format!("{}: operand {op} is not earlier", here()));
                }
                let o = self.expr(op);
                let ok = match (&e.expr, e.stage) {
                    (Expr::Reduce { .. }, Stage::Outer(k)) => {
                        k >= 1 && o.stage == Stage::Inner(k - 1)
                    }
                    (Expr::Reduce { .. }, Stage::Inner(_)) => false,
                    (Expr::Scan { .. }, Stage::Inner(k)) => o.stage == Stage::Inner(k),
                    (Expr::Scan { .. }, Stage::Outer(_)) => false,
                    (_, Stage::Outer(k)) => matches!(o.stage, Stage::Outer(j) if j <= k),
                    (_, Stage::Inner(k)) => {
                        o.stage == Stage::Inner(k) || matches!(o.stage, Stage::Outer(j) if j <= k)
                    }
                };
                if !ok {
                    return Err(format!(
                        "{}: at stage {} cannot use {op} of stage {}",
                        here(),
                        e.stage,
                        o.stage
                    ));
                }
            }
            let dt = |x: &ExprId| self.expr(*x).dtype;
            match &e.expr {
                Expr::Load {
                    param,
                    index,
                    dynamic,
                } => {
                    if matches!(e.stage, Stage::Outer(_)) && !index.ignores_from(self.n_parallel) {
                        return Err(format!(
                            "{}: an outer load depends on a reduction dim",
                            here()
                        ));
                    }
                    // `None`: no access can happen (a dynamic index into an empty dim)
                    let extra = match dynamic {
                        None => Some(None),
                        Some(d) => {
                            if !dt(&d.value).is_integer() {
                                return Err(format!(
                                    "{}: a dynamic index is not an integer",
                                    here()
                                ));
                            }
                            if d.size > i64::MAX as u64 {
                                return Err(format!("{}: a dynamic index size overflows", here()));
                            }
                            // Wrapped or not, a value that passes the check is in
                            // `[0, size)`; with `size == 0` no value passes and the
                            // load never happens.
                            if d.size == 0 {
                                None
                            } else {
                                let span = d.stride as i128 * (d.size as i128 - 1);
                                Some(Some((span.min(0), span.max(0))))
                            }
                        }
                    };
                    let p = check_index("load", *param, index, e.stage, extra)?;
                    if p.dtype != e.dtype {
                        return Err(format!(
                            "{}: loads {} from a {} param",
                            here(),
                            e.dtype,
                            p.dtype
                        ));
                    }
                }
                Expr::LoopIndex { dim } => {
                    if *dim >= nd || !e.dtype.is_integer() {
                        return Err(format!("{}: bad loop index", here()));
                    }
                    if *dim >= self.n_parallel && matches!(e.stage, Stage::Outer(_)) {
                        return Err(format!("{}: an outer expr reads a reduction index", here()));
                    }
                }
                Expr::Binary { op, a, b } => {
                    if dt(a) != dt(b) {
                        return Err(format!("{}: {op:?} of {} and {}", here(), dt(a), dt(b)));
                    }
                    let want = if op.is_predicate() {
                        DType::Bool
                    } else {
                        dt(a)
                    };
                    if e.dtype != want {
                        return Err(format!(
                            "{}: {op:?} gives {}, not {}",
                            here(),
                            want,
                            e.dtype
                        ));
                    }
                }
                Expr::Where { cond, a, b } => {
                    if dt(cond) != DType::Bool || dt(a) != e.dtype || dt(b) != e.dtype {
                        return Err(format!("{}: where with mismatched dtypes", here()));
                    }
                }
                Expr::Reduce { op, x } => {
                    let want = match op {
                        Accum::ArgMax | Accum::ArgMin => DType::I64,
                        _ => dt(x),
                    };
                    if e.dtype != want {
                        return Err(format!("{}: {op:?} gives {want}, not {}", here(), e.dtype));
                    }
                    if matches!(op, Accum::Any | Accum::All) && want != DType::Bool {
                        return Err(format!("{}: {op:?} of a non-bool value", here()));
                    }
                }
                Expr::Scan { op, x } => {
                    if op.output_dtype(dt(x)) != Some(e.dtype) {
                        return Err(format!(
                            "{}: scan {op:?} of {} cannot give {}",
                            here(),
                            dt(x),
                            e.dtype
                        ));
                    }
                }
                Expr::Unary { .. }
                | Expr::UnaryParam { .. }
                | Expr::Cast { .. }
                | Expr::Const(_) => {}
            }
            if e.dtype.is_complex() {
                return Err(format!(
                    "{}: complex values do not enter loop kernels",
                    here()
                ));
            }
        }
        for (j, s) in self.stores.iter().enumerate() {
            let v = self
                .exprs
                .get(s.value.0 as usize)
                .ok_or_else(|| format!("kernel {name}: store {j} of an absent value"))?;
            let p = check_index("store", s.param, &s.index, v.stage, Some(None))?;
            if !p.writes {
                return Err(format!(
                    "kernel {name}: store {j} into read-only p{}",
                    s.param
                ));
            }
            if p.dtype != v.dtype {
                return Err(format!(
                    "kernel {name}: store {j} of {} into {}",
                    v.dtype, p.dtype
                ));
            }
            if matches!(v.stage, Stage::Outer(_)) && !s.index.ignores_from(self.n_parallel) {
                return Err(format!(
                    "kernel {name}: outer store {j} depends on a reduction dim"
                ));
            }
        }
        Ok(())
    }
}

fn expr_text(e: &Expr) -> String {
    match e {
        Expr::Load {
            param,
            index,
            dynamic,
        } => match dynamic {
            None => format!("load p{param}[{index}]"),
            Some(d) => format!(
                "load p{param}[{index} + {}({}, {})*{}; {}]",
                if d.wrap { "wrap" } else { "check" },
                d.value,
                d.size,
                d.stride,
                d.error
            ),
        },
        Expr::Const(c) => format!("const {c}"),
        Expr::LoopIndex { dim } => format!("index i{dim}"),
        Expr::Unary { op, x } => format!("{}({x})", Op::Unary(*op).name()),
        Expr::UnaryParam { op, x } => format!("{}({x}; {})", op.name(), op.attributes()),
        Expr::Binary { op, a, b } => format!("{}({a}, {b})", Op::Binary(*op).name()),
        Expr::Where { cond, a, b } => format!("where({cond}, {a}, {b})"),
        Expr::Cast { x } => format!("cast({x})"),
        Expr::Reduce { op, x } => format!("reduce_{}({x})", format!("{op:?}").to_lowercase()),
        Expr::Scan { op, x } => format!("scan_{}({x})", format!("{op:?}").to_lowercase()),
    }
}

impl Schedule {
    /// The inputs whose buffers this schedule writes ([`BufKind::Donated`]).
    pub fn donated(&self) -> Vec<InputId> {
        self.buffers
            .iter()
            .filter_map(|b| match b.kind {
                BufKind::Donated(id) => Some(id),
                _ => None,
            })
            .collect()
    }

    /// Number of steps (kernels, loop and extern).
    pub fn kernel_count(&self) -> usize {
        self.steps.len()
    }

    /// The deterministic text form: buffers, then each step (loop kernels in full).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (i, b) in self.buffers.iter().enumerate() {
            let kind = match b.kind {
                BufKind::Input(_) => "input".to_string(),
                BufKind::Donated(_) => "input donated".to_string(),
                BufKind::Output(t) => format!("output t{t}"),
                BufKind::Temp => "temp".to_string(),
            };
            let _ = writeln!(out, "b{i}: {}[{}] {kind}", b.dtype, b.len);
        }
        for (i, s) in self.steps.iter().enumerate() {
            match s {
                Step::Loop(k) => {
                    let bufs: Vec<String> = k
                        .params
                        .iter()
                        .enumerate()
                        .map(|(j, p)| format!("p{j}={}", p.buf))
                        .collect();
                    let _ = writeln!(out, "step {i}: loop ({})", bufs.join(", "));
                    out.push_str(&k.text());
                }
                Step::Extern(e) => {
                    let ins: Vec<String> = e
                        .inputs
                        .iter()
                        .zip(&e.input_views)
                        .map(|(b, v)| match v {
                            Some(v) => format!("{b} {v}"),
                            None => b.to_string(),
                        })
                        .collect();
                    let _ = writeln!(
                        out,
                        "step {i}: extern {}({}{}) : {}{} -> {}  (node {}; {})",
                        e.op.name(),
                        ins.join(", "),
                        if e.op.attributes().is_empty() {
                            String::new()
                        } else {
                            format!("; {}", e.op.attributes())
                        },
                        e.dtype,
                        fmt_shape(&e.shape),
                        e.output,
                        e.node,
                        e.reason
                    );
                }
            }
        }
        let outs: Vec<String> = self.outputs.iter().map(|b| b.to_string()).collect();
        let _ = writeln!(out, "outputs: {}", outs.join(", "));
        out
    }

    /// Verifies every loop kernel ([`LoopKernel::verify`]) and that params and
    /// extern steps agree with the buffer table. Only outputs, temporaries and
    /// donated inputs are written; plain inputs are read-only.
    pub fn verify(&self) -> Result<(), String> {
        let decl = |b: BufId| {
            self.buffers
                .get(b.0 as usize)
                .ok_or_else(|| format!("buffer {b} is not declared"))
        };
        for s in &self.steps {
            match s {
                Step::Loop(k) => {
                    k.verify()?;
                    for p in &k.params {
                        let d = decl(p.buf)?;
                        if d.dtype != p.dtype || d.len != p.len {
                            return Err(format!(
                                "kernel {}: param {} is {}[{}], the buffer is {}[{}]",
                                k.name, p.buf, p.dtype, p.len, d.dtype, d.len
                            ));
                        }
                        if p.writes && matches!(d.kind, BufKind::Input(_)) {
                            return Err(format!(
                                "kernel {}: writes input buffer {}",
                                k.name, p.buf
                            ));
                        }
                    }
                }
                Step::Extern(e) => {
                    for b in e.inputs.iter().chain([&e.output]) {
                        decl(*b)?;
                    }
                    if e.input_views.len() != e.inputs.len()
                        || e.input_shapes.len() != e.inputs.len()
                    {
                        return Err(format!("extern {}: inputs mismatch", e.op.name()));
                    }
                    for ((b, shape), v) in e.inputs.iter().zip(&e.input_shapes).zip(&e.input_views)
                    {
                        let len = decl(*b)?.len;
                        let inside = match v {
                            None => crate::shape::numel(shape) == len,
                            Some(v) => {
                                v.strides.len() == shape.len()
                                    && v.last_index(shape).is_none_or(|last| last < len)
                                    && !(shape.contains(&0) && v.offset > len)
                            }
                        };
                        if !inside {
                            return Err(format!(
                                "extern {}: input {b} does not fit its buffer",
                                e.op.name()
                            ));
                        }
                    }
                    let out = decl(e.output)?;
                    // saturating, as `Node::numel`: a huge shape must not wrap or panic
                    let n = crate::shape::numel(&e.shape);
                    if out.dtype != e.dtype || out.len != n {
                        return Err(format!("extern {}: output buffer mismatch", e.op.name()));
                    }
                }
            }
        }
        for b in &self.outputs {
            decl(*b)?;
        }
        Ok(())
    }
}

/// How generated code may compute floating-point math.
///
/// `Fast` (the default) lets a backend use inline vector approximations of the
/// transcendentals, reorder reductions (several accumulators, split across
/// threads) and contract a product into the add that takes it (one `fma`):
/// results stay within the conformance tolerances but are not bit-identical to
/// the reference interpreter. `Exact` gives the interpreter's
/// values bit for bit (libm calls, sequential reductions), for differential
/// testing and for users who need reproducibility across backends.
///
/// ```
/// use lazyfuse_ir::kernel::MathMode;
/// assert_eq!("exact".parse::<MathMode>(), Ok(MathMode::Exact));
/// assert_eq!(MathMode::default().to_string(), "fast");
/// assert!("slow".parse::<MathMode>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MathMode {
    /// vector approximations and reordered reductions, within the tolerances
    #[default]
    Fast,
    /// bit-identical to the reference interpreter
    Exact,
}

impl std::fmt::Display for MathMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MathMode::Fast => "fast",
            MathMode::Exact => "exact",
        })
    }
}

impl std::str::FromStr for MathMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fast" => Ok(MathMode::Fast),
            "exact" => Ok(MathMode::Exact),
            other => Err(format!(
                "unknown math mode '{other}': expected 'fast' or 'exact'"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `out[i] = table[idx[i]]` through a dynamic index into `table_len` elements.
    fn gather(table_len: usize, size: u64, stride: i64, wrap: bool) -> LoopKernel {
        let param = |len, dtype, writes| Param {
            buf: BufId(0),
            dtype,
            len,
            writes,
        };
        LoopKernel {
            name: "gather".into(),
            nodes: vec![],
            params: vec![
                param(table_len, DType::F32, false),
                param(4, DType::I64, false),
                param(4, DType::F32, true),
            ],
            dims: vec![4],
            n_parallel: 1,
            exprs: vec![
                ExprNode {
                    expr: Expr::Load {
                        param: 1,
                        index: Affine {
                            offset: 0,
                            strides: vec![1],
                        },
                        dynamic: None,
                    },
                    dtype: DType::I64,
                    stage: Stage::Outer(0),
                },
                ExprNode {
                    expr: Expr::Load {
                        param: 0,
                        index: Affine {
                            offset: 0,
                            strides: vec![0],
                        },
                        dynamic: Some(DynIndex {
                            value: ExprId(0),
                            size,
                            stride,
                            wrap,
                            error: IndexError::Take,
                        }),
                    },
                    dtype: DType::F32,
                    stage: Stage::Outer(0),
                },
            ],
            stores: vec![StoreOp {
                param: 2,
                index: Affine {
                    offset: 0,
                    strides: vec![1],
                },
                value: ExprId(1),
            }],
        }
    }

    #[test]
    fn dynamic_loads_are_bounded_by_size_and_stride() {
        for wrap in [false, true] {
            // values pass the check only in [0, size): 3 elements of stride 2
            assert!(gather(5, 3, 2, wrap).verify().is_ok());
            let err = gather(4, 3, 2, wrap).verify().unwrap_err();
            assert!(err.contains("out of bounds"), "{err}");
            // an empty dim: no value passes, no access happens
            assert!(gather(0, 0, 1, wrap).verify().is_ok());
        }
        let text = gather(5, 3, 2, false).structure();
        assert!(text.contains("check(v0, 3)*2; take"), "{text}");
        assert!(gather(5, 3, 2, true).structure().contains("wrap(v0, 3)*2"));
        assert!(gather(5, 1 << 63, 1, true).verify().is_err());
    }

    #[test]
    fn index_errors_word_the_interpreters_messages() {
        assert_eq!(
            IndexError::IndexSelect { zero_dim: false }.message(-1, 3),
            "INDICES element is out of DATA bounds, id=-1 axis_dim=3"
        );
        assert_eq!(
            IndexError::IndexSelect { zero_dim: true }.message(4, 1),
            "index out of range in self"
        );
    }
}
