//! The compiler's work counter: a per-thread count of bookkeeping steps (nodes
//! visited by an order or a pass, expressions built by the scheduler, kernels looked
//! up or compiled), so that tests can assert that a realize's cost grows linearly
//! with its graph without timing anything.
//!
//! Each stage adds what it visits; the count is per thread because a realize plans,
//! schedules and compiles on the thread that asked for it (kernels run elsewhere and
//! are not counted).

use std::cell::Cell;

thread_local! {
    static WORK: Cell<u64> = const { Cell::new(0) };
}

/// Adds `steps` to the calling thread's count.
///
/// ```
/// let before = lazyfuse_ir::work::total();
/// lazyfuse_ir::work::add(3);
/// assert_eq!(lazyfuse_ir::work::total() - before, 3);
/// ```
#[inline]
pub fn add(steps: u64) {
    WORK.with(|w| w.set(w.get().wrapping_add(steps)));
}

/// The calling thread's count so far (compare two readings around the work).
///
/// ```
/// use lazyfuse_ir::{DType, Graph, InputId, Op};
/// let mut g = Graph::new();
/// let a = g.add(Op::Input(InputId(0)), DType::F32, vec![2], &[]);
/// let before = lazyfuse_ir::work::total();
/// g.topo_order(&[a]);
/// assert!(lazyfuse_ir::work::total() > before);
/// ```
pub fn total() -> u64 {
    WORK.with(Cell::get)
}
