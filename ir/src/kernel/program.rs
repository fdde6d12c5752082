//! Programs: a [`LoopKernel`], an [`ExternStep`], the [`Schedule`] of one realize,
//! the queries codegen asks of them, and the [`MathMode`] they are lowered for.

use super::{Accum, BufDecl, BufId, BufKind, Expr, ExprId, ExprNode, Param, ScanAccum, Stage};
use super::{Affine, EpilogueOp, ParamId, StoreOp, ZeroPadded};
use crate::dtype::DType;
use crate::graph::NodeId;
use crate::op::{InputId, Op};
use std::fmt;

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

    /// Whether the kernel reads its reductions as columns: some load of a phase
    /// steps contiguously along the last parallel dim and with a longer stride along
    /// a reduction dim (`x.sum(0)` of a row-major matrix). Each input row is then
    /// read in runs as long as the range of the last parallel dim one call covers.
    ///
    /// ```
    /// use lazyfuse_ir::kernel::{Accum, Affine, BufId, Expr, ExprId, ExprNode, LoopKernel, Param, ParamId, Stage, StoreOp};
    /// use lazyfuse_ir::DType;
    /// // Column sums of a [64, 32] matrix: dims [32 (parallel), 64 (reduced)].
    /// let load = |strides: Vec<i64>| Expr::Load { param: ParamId(0), index: Affine { offset: 0, strides }, dynamic: None };
    /// let kernel = |strides: Vec<i64>| LoopKernel {
    ///     name: "k".into(),
    ///     nodes: vec![],
    ///     params: vec![
    ///         Param { buf: BufId(0), dtype: DType::F32, len: 2048, writes: false },
    ///         Param { buf: BufId(1), dtype: DType::F32, len: 32, writes: true },
    ///     ],
    ///     dims: vec![32, 64],
    ///     n_parallel: 1,
    ///     exprs: vec![
    ///         ExprNode { expr: load(strides), dtype: DType::F32, stage: Stage::Inner(0) },
    ///         ExprNode { expr: Expr::Reduce { op: Accum::Sum, x: ExprId(0) }, dtype: DType::F32, stage: Stage::Outer(1) },
    ///     ],
    ///     stores: vec![StoreOp { param: ParamId(1), index: Affine { offset: 0, strides: vec![1, 0] }, value: ExprId(1) }],
    /// };
    /// assert!(kernel(vec![1, 32]).reads_columns());
    /// // Row sums of a [32, 64] matrix read each row contiguously.
    /// assert!(!kernel(vec![64, 1]).reads_columns());
    /// ```
    pub fn reads_columns(&self) -> bool {
        let np = self.n_parallel;
        if np == 0 || np == self.dims.len() {
            return false;
        }
        self.exprs.iter().any(|e| match &e.expr {
            Expr::Load {
                index,
                dynamic: None,
                ..
            } => {
                matches!(e.stage, Stage::Inner(_))
                    && index.strides.get(np - 1) == Some(&1)
                    && index.strides.iter().skip(np).any(|&s| s.abs() > 1)
            }
            _ => false,
        })
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

    /// The scans phase `phase` runs (stage `Inner(phase)`): each expression's index,
    /// its rule and its operand.
    pub fn phase_scans(&self, phase: u32) -> Vec<(usize, ScanAccum, ExprId)> {
        self.exprs
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match (&e.expr, e.stage) {
                (Expr::Scan { op, x }, Stage::Inner(s)) if s == phase => Some((i, *op, *x)),
                _ => None,
            })
            .collect()
    }

    /// The last outer stage of any expression (0 when there is none). Stages past
    /// the last phase reduce nothing, but the verifier allows them, and a point
    /// runs them in order after its last phase.
    pub fn last_outer_stage(&self) -> u32 {
        self.exprs
            .iter()
            .filter_map(|e| match e.stage {
                Stage::Outer(k) => Some(k),
                Stage::Inner(_) => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// The stores made at `stage` (each after its value), in order.
    pub fn stage_stores(&self, stage: Stage) -> Vec<StoreOp> {
        self.stores
            .iter()
            .filter(|s| self.exprs[s.value.0 as usize].stage == stage)
            .cloned()
            .collect()
    }

    /// A load that can be taken a vector at a time along dim `d`: its param and
    /// index, for a load with no data-dependent term, of a buffer no store of this
    /// kernel writes (`written`, from [`LoopKernel::written_bufs`]: another point's
    /// vector could store before this one loads), whose stride along `d` is 0 (one
    /// element for the whole vector) or 1 (consecutive elements). `None` for any
    /// other expression.
    pub fn vector_load<'k>(
        &'k self,
        e: &'k Expr,
        d: usize,
        written: &[BufId],
    ) -> Option<(ParamId, &'k Affine)> {
        match e {
            Expr::Load {
                param,
                index,
                dynamic: None,
            } if (0..=1).contains(index.strides.get(d)?)
                && !written.contains(&self.params.get(param.index())?.buf) =>
            {
                Some((*param, index))
            }
            _ => None,
        }
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
    /// what a matmul does to its result before storing it (the elementwise
    /// readers it took in); the operands of its `Add`s are inputs after the op's
    /// own
    pub epilogue: Vec<EpilogueOp>,
}

impl ExternStep {
    /// How many of the inputs are the op's own (the rest are its epilogue's).
    pub fn op_inputs(&self) -> usize {
        let extra = self.epilogue.iter().filter(|o| o.slot().is_some()).count();
        self.inputs.len().saturating_sub(extra)
    }
}

/// A strided read of an extern step's input from its buffer: element
/// `(i_0, i_1, …)` of the input is `buffer[offset + Σ strides[d] · i_d]`.
/// With `dims`, the strides are those of the view's own dims, of which each of
/// the input's dims is a run of consecutive ones (a row-major reshape of a
/// strided view: a convolution's windows `[N, C, kh, kw, OH, OW]` read as the
/// `[N, C·kh·kw, OH·OW]` operand of its product). With `padded`, the offset and
/// strides index a zero-padded buffer that is never stored, whose interior the
/// step's buffer holds ([`ZeroPadded`]).
///
/// ```
/// use lazyfuse_ir::kernel::ExternView;
/// // a [3, 2] transpose of a row-major [2, 3] buffer
/// let t = ExternView { offset: 0, strides: vec![1, 3], dims: None, padded: None };
/// assert_eq!(t.last_index(&[3, 2]), Some(5));
/// assert_eq!(t.to_string(), "view(offset=0, strides=[1, 3])");
/// // [2, 3, 2] windows of a row-major [2, 4] buffer, read as [2, 6]
/// let w = ExternView { offset: 0, strides: vec![4, 1, 1], dims: Some(vec![2, 3, 2]), padded: None };
/// assert_eq!(w.last_index(&[2, 6]), Some(7));
/// assert_eq!(w.groups(&[2, 6]), Some(vec![0..1, 1..3]));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExternView {
    /// the buffer index of element 0
    pub offset: usize,
    /// the buffer step of each dim (of `dims` where given)
    pub strides: Vec<usize>,
    /// the view's own dims, where the input's dims are runs of them
    pub dims: Option<Vec<usize>>,
    /// the zero-padded buffer the view reads in place of the step's buffer, which
    /// holds its interior
    pub padded: Option<ZeroPadded>,
}

impl ExternView {
    /// Whether the view, as an input of `shape`, reads only inside a buffer of
    /// `len` elements: its last index (or, padded, its padded buffer's, with the
    /// interior's last source index) in range, and a padded view's coordinates
    /// exact ([`ZeroPadded::holds_view`]).
    pub fn reads_within(&self, shape: &[usize], len: usize) -> bool {
        let dims = self.dims.as_deref().unwrap_or(shape);
        if dims.contains(&0) || shape.contains(&0) {
            return self.offset <= len;
        }
        match &self.padded {
            None => self.last_index(shape).is_some_and(|last| last < len),
            Some(p) => {
                p.holds_view(self.offset, &self.strides, dims)
                    && p.source_last().is_none_or(|last| last < len)
            }
        }
    }

    /// The largest index the view reads as an input of `shape` (`None` when it
    /// reads nothing, or the index overflows): of the step's buffer, or of the
    /// padded buffer where the view is `padded`.
    pub fn last_index(&self, shape: &[usize]) -> Option<usize> {
        let dims = self.dims.as_deref().unwrap_or(shape);
        if dims.contains(&0) || shape.contains(&0) {
            return None;
        }
        dims.iter()
            .zip(&self.strides)
            .try_fold(self.offset, |acc, (&n, &st)| {
                acc.checked_add((n - 1).checked_mul(st)?)
            })
    }

    /// The run of the view's dims that each dim of an input of `shape` spans
    /// (one dim each without `dims`); `None` where the dims do not group so, or
    /// the strides do not match them.
    pub fn groups(&self, shape: &[usize]) -> Option<Vec<std::ops::Range<usize>>> {
        let Some(dims) = &self.dims else {
            return (self.strides.len() == shape.len())
                .then(|| (0..shape.len()).map(|d| d..d + 1).collect());
        };
        if self.strides.len() != dims.len() {
            return None;
        }
        let mut runs = Vec::with_capacity(shape.len());
        let mut at = 0;
        for &n in shape {
            let start = at;
            let mut size = 1usize;
            // a run takes dims while its size stays below the input dim's; size-1
            // dims after it join it (they move nothing)
            while at < dims.len() && (size < n || (dims[at] == 1 && size == n && n > 0)) {
                size = size.checked_mul(dims[at])?;
                at += 1;
            }
            if size != n {
                return None;
            }
            runs.push(start..at);
        }
        (at == dims.len()).then_some(runs)
    }
}

impl fmt::Display for ExternView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "view(offset={}, strides={:?}", self.offset, self.strides)?;
        if let Some(dims) = &self.dims {
            write!(f, ", dims={dims:?}")?;
        }
        if let Some(p) = &self.padded {
            write!(f, " of {p}")?;
        }
        f.write_str(")")
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
