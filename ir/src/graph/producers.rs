//! A node's producers in slot order, stored inline when there are at most
//! three (every elementwise op, `where` included): a graph built op by op
//! adds a node per op, and a heap list per node was an allocation and a free
//! per op on the recording path.

use super::NodeId;
use std::ops::Deref;

/// Most producers kept inline.
const INLINE: usize = 3;

/// The producers of one node (see the module doc).
#[derive(Clone, Debug)]
pub(super) enum Producers {
    /// `len` producers in `ids[..len]` (the rest repeat the first, unread)
    Inline { len: u8, ids: [NodeId; INLINE] },
    /// more than [`INLINE`]
    Heap(Vec<NodeId>),
}

impl Producers {
    /// The producers `ids`, in slot order.
    #[inline]
    pub(super) fn of(ids: &[NodeId]) -> Producers {
        // (the ids loaded as values: copied into the array as a slice, they
        // are read back by a load as wide as two of the copy's stores, which
        // waits for both to land)
        let inline = match *ids {
            [] => return Producers::default(),
            [a] => [a; INLINE],
            [a, b] => [a, b, a],
            [a, b, c] => [a, b, c],
            _ => return Producers::Heap(ids.to_vec()),
        };
        Producers::Inline {
            len: ids.len() as u8,
            ids: inline,
        }
    }
}

impl Default for Producers {
    fn default() -> Producers {
        Producers::Heap(Vec::new())
    }
}

impl Deref for Producers {
    type Target = [NodeId];

    fn deref(&self) -> &[NodeId] {
        match self {
            Producers::Inline { len, ids } => &ids[..*len as usize],
            Producers::Heap(v) => v,
        }
    }
}

impl PartialEq for Producers {
    fn eq(&self, other: &Producers) -> bool {
        **self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use petgraph::stable_graph::NodeIndex;

    fn ids(n: u32) -> Vec<NodeId> {
        (0..n)
            .map(|i| NodeId(NodeIndex::new(i as usize + 7)))
            .collect()
    }

    #[test]
    fn every_length_reads_back_in_order() {
        for n in 0..6 {
            let want = ids(n);
            let p = Producers::of(&want);
            assert_eq!(&*p, want.as_slice(), "{n}");
            assert_eq!(matches!(p, Producers::Inline { .. }), (1..=3).contains(&n));
            assert_eq!(p.clone(), Producers::of(&want));
        }
        assert!(Producers::default().is_empty());
        assert_ne!(Producers::of(&ids(2)), Producers::of(&ids(3)));
    }
}
