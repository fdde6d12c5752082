//! Property tests of `passes::compose_layouts`, the view-chain folding of the graph
//! passes: random chains of view ops make a first layout `l1` over a random base,
//! and a second chain over `l1`'s contiguous output makes `l2`.
//!
//! Whenever a composed layout comes back, it must read exactly the storage elements
//! the chain reads, in the same order, and stay inside the base. And it must come
//! back whenever it obviously exists: when `l1` is contiguous (any offset), and when
//! `l2` was made by ops that never reshape (permute, select, narrow, slice, expand,
//! unsqueeze, squeeze, diagonal, unfold), which are strided over any layout.

use lazyfuse_ir::passes::compose_layouts;
use lazyfuse_ir::Layout;
use proptest::prelude::*;

/// One view op with its raw arguments (reduced modulo what the layout allows).
#[derive(Clone, Debug)]
enum ViewOp {
    Transpose(usize, usize),
    Permute(usize),
    Select(usize, usize),
    Narrow(usize, usize, usize),
    Slice(usize, usize, usize),
    Expand,
    Unsqueeze(usize),
    Squeeze,
    Diagonal(usize, usize),
    Unfold(usize, usize, usize),
    // Reshaping ops (views only when the layout allows; refused ones are skipped).
    Flatten,
    Unflatten(usize),
}

fn view_op() -> impl Strategy<Value = ViewOp> {
    let i = || 0..8usize;
    prop_oneof![
        (i(), i()).prop_map(|(a, b)| ViewOp::Transpose(a, b)),
        i().prop_map(ViewOp::Permute),
        (i(), i()).prop_map(|(d, k)| ViewOp::Select(d, k)),
        (i(), i(), i()).prop_map(|(d, s, l)| ViewOp::Narrow(d, s, l)),
        (i(), i(), 1..4usize).prop_map(|(d, s, st)| ViewOp::Slice(d, s, st)),
        Just(ViewOp::Expand),
        i().prop_map(ViewOp::Unsqueeze),
        Just(ViewOp::Squeeze),
        (i(), i()).prop_map(|(a, b)| ViewOp::Diagonal(a, b)),
        (i(), 1..4usize, 1..3usize).prop_map(|(d, s, st)| ViewOp::Unfold(d, s, st)),
        Just(ViewOp::Flatten),
        i().prop_map(ViewOp::Unflatten),
    ]
}

fn reshapes(op: &ViewOp) -> bool {
    matches!(op, ViewOp::Flatten | ViewOp::Unflatten(_))
}

/// Applies `op` to `l`, or `None` when the op refuses (or has no dim to act on).
fn apply(l: &Layout, op: &ViewOp) -> Option<Layout> {
    let nd = l.ndim();
    let dim = |d: usize| {
        if nd == 0 {
            None
        } else {
            Some((d % nd) as isize)
        }
    };
    let size = |d: isize| l.shape[d as usize];
    match *op {
        ViewOp::Transpose(a, b) => l.transpose(dim(a)?, dim(b)?).ok(),
        ViewOp::Permute(r) => {
            let perm: Vec<isize> = (0..nd).map(|k| ((k + r) % nd.max(1)) as isize).collect();
            l.permute(&perm).ok()
        }
        ViewOp::Select(d, k) => {
            let d = dim(d)?;
            l.select(d, (k % size(d).max(1)) as isize).ok()
        }
        ViewOp::Narrow(d, s, len) => {
            let d = dim(d)?;
            let n = size(d);
            let s = s % (n + 1);
            // Mostly non-empty: empty chains say nothing about composition.
            l.narrow(d, s as isize, (len % (n - s + 1)).max(1).min(n - s))
                .ok()
        }
        ViewOp::Slice(d, s, step) => l.slice(dim(d)?, Some(s as isize), None, step).ok(),
        ViewOp::Expand => {
            let u = l.unsqueeze(0).ok()?;
            let mut shape: Vec<isize> = vec![-1; nd + 1];
            shape[0] = 2;
            u.expand(&shape).ok()
        }
        ViewOp::Unsqueeze(d) => l.unsqueeze((d % (nd + 1)) as isize).ok(),
        ViewOp::Squeeze => Some(l.squeeze()),
        ViewOp::Diagonal(a, b) => l.diagonal(0, dim(a)?, dim(b)?).ok(),
        ViewOp::Unfold(d, s, step) => l.unfold(dim(d)?, s, step).ok(),
        ViewOp::Flatten => l.view(&[-1]).ok(),
        ViewOp::Unflatten(d) => {
            let d = dim(d)?;
            if size(d) % 2 != 0 {
                return None;
            }
            l.unflatten(d, &[2, -1]).ok()
        }
    }
}

fn chain(start: Layout, ops: &[ViewOp]) -> Layout {
    ops.iter().fold(start, |l, op| apply(&l, op).unwrap_or(l))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn composition_reads_what_the_chain_reads(
        base in proptest::collection::vec(1..5usize, 0..4),
        first in proptest::collection::vec(view_op(), 0..5),
        second in proptest::collection::vec(view_op(), 1..5),
    ) {
        let storage = Layout::contiguous(&base);
        let l1 = chain(storage.clone(), &first);
        let l2 = chain(Layout::contiguous(&l1.shape), &second);
        if l2.numel() == 0 {
            return Ok(()); // nothing to read: the passes keep such chains as they are
        }
        let firsts: Vec<usize> = l1.offsets().collect();
        let expected: Vec<usize> = l2.offsets().map(|p| firsts[p]).collect();
        match compose_layouts(&l1, &l2) {
            Some(l) => {
                prop_assert_eq!(&l.shape, &l2.shape);
                prop_assert!(l.required_storage() <= storage.numel());
                prop_assert_eq!(l.offsets().collect::<Vec<_>>(), expected);
            }
            None => {
                prop_assert!(!l1.is_contiguous(), "{} over contiguous {} was refused", l2, l1);
                // A chain that never reshapes is strided over any layout; only the
                // no-op (an op refused and skipped) cases are allowed here.
                let applied: Vec<&ViewOp> = second.iter().collect();
                prop_assert!(
                    applied.iter().any(|op| reshapes(op)),
                    "{} over {} was refused though no op reshaped",
                    l2,
                    l1
                );
            }
        }
    }
}
