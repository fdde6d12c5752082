//! What the scheduler may do ([`ScheduleOptions`]) and the bounds that keep its work
//! and its kernels' sizes linear in the graph.

use crate::kernel::MathMode;

/// The size past which a kernel stops inlining producers (see `Builder::gen`).
pub(super) const MAX_EXPRS: usize = 4096;

/// How deep a kernel inlines producers into one another (see `Builder::gen`).
pub(super) const MAX_DEPTH: usize = 160;

/// How deep the planner lets values inline before it stores one (half the builder's
/// bound, `MAX_DEPTH`, which lowered composites approach faster than one level a
/// node).
pub(super) const PLANNED_DEPTH: usize = MAX_DEPTH / 2;

/// The most nodes a value read by two or more consumers inlines before it is stored
/// (the cost rule by size, see [`Planner::new`]).
pub(super) const MAX_SHARED_CONE: usize = 64;

/// The most roots (stored values) one loop kernel takes; the next root of the same
/// iteration space starts a new kernel, so that a kernel's size, its compile time
/// and the scheduler's work per join stay bounded however many targets share a
/// space.
pub(super) const MAX_ROOTS: usize = 64;

/// The most elements a row kernel computes whatever its number of rows (see
/// `Builder::row_dims`). A row kernel saves kernels, which is what small tensors
/// (a training step's) pay for, and on larger ones a pass over its input: a
/// layer norm as one row kernel ran faster than its statistics and normalize
/// kernels apart from [256, 256] to [4096, 4096].
pub(super) const ROW_KERNEL_POINTS: usize = 1 << 15;

/// The fewest rows a row kernel over more than [`ROW_KERNEL_POINTS`] elements
/// has: its rows are its parallel points, and with fewer of them the threads
/// would sit idle where the two kernels apart (the second parallel over every
/// element) keep them busy.
pub(super) const ROW_KERNEL_MIN_ROWS: usize = 64;

/// The most inputs a `cat` lowers to loop kernels (one per input); a larger one is
/// an extern step (see `extern_reason`).
pub(super) const MAX_CAT_KERNELS: usize = 64;

/// What the scheduler may do.
///
/// ```
/// use lazyfuse_ir::schedule::ScheduleOptions;
/// use lazyfuse_ir::kernel::MathMode;
/// let opts = ScheduleOptions { fuse: true, ..Default::default() };
/// assert!(opts.fuse);
/// assert_eq!(opts.math, MathMode::Fast);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduleOptions {
    /// fuse producers into consumers (`false`: one step per non-view node)
    pub fuse: bool,
    /// whether kernels may reorder float math (see [`MathMode`])
    pub math: MathMode,
    /// matmul of integer and float dtypes as a generated loop kernel (a reduction
    /// over the contracted dim, one output element per point) rather than an extern
    /// step: for a device, where an extern step would cross to the host
    pub matmul_kernels: bool,
    /// with `matmul_kernels`: float matmul (float32/64, float16, bfloat16) stays an
    /// extern step all the same, for a library on the device (cuBLAS) to run
    pub library_float_matmul: bool,
}

impl Default for ScheduleOptions {
    fn default() -> Self {
        ScheduleOptions {
            fuse: true,
            math: MathMode::Fast,
            matmul_kernels: false,
            library_float_matmul: false,
        }
    }
}
