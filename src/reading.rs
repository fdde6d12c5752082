//! How a tensor reads its storage: directly, or as PyTorch's views that change the
//! values on the way: the storage's bytes as another dtype (`view(dtype)`), the real
//! parts of a complex storage (`real`, `imag`,
//! `view_as_real`: two floats per element), the complex values of a float storage
//! (`view_as_complex`: one element per two floats), the conjugate (`conj`'s
//! conjugate bit) and the negation (`imag` of a conjugated tensor, PyTorch's negative
//! bit).
//!
//! A read goes storage → (real parts) → the view's layout → (conjugate) → (negation);
//! a write goes back the other way, so a write through any of these views reaches the
//! storage, as it does in PyTorch.

use crate::store::Store;
use lazyfuse_ir::{BinaryOp, DType, Layout, NodeId, Op, UnaryOp};

/// The conversions between a tensor's storage and its elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reading {
    /// The storage's bytes are read as this dtype first (`view(dtype)`): the layout
    /// counts elements of it over the flat bytes.
    pub(crate) as_dtype: Option<DType>,
    /// The storage is complex and the view addresses its parts (the layout counts
    /// floats: element `i`'s real part is float `2i`, its imaginary part `2i + 1`).
    pub(crate) parts: bool,
    /// The storage is real and the view addresses pairs of its floats as complex
    /// values (element `k` is floats `2k` and `2k + 1`).
    pub(crate) pairs: bool,
    /// The values are conjugated.
    pub(crate) conj: bool,
    /// The values are negated.
    pub(crate) neg: bool,
}

impl Reading {
    /// The storage's elements as they are.
    pub(crate) const DIRECT: Reading = Reading {
        as_dtype: None,
        parts: false,
        pairs: false,
        conj: false,
        neg: false,
    };

    /// The reading of a float view of the same storage as a complex view read as
    /// `complex` (`real`, `imag`, `view_as_real`): the parts of a complex storage, or
    /// the floats of a float storage seen as complex (`view_as_complex`) directly.
    pub(crate) fn floats_of(complex: Reading) -> Reading {
        Reading {
            as_dtype: complex.as_dtype,
            parts: !complex.pairs,
            ..Reading::DIRECT
        }
    }

    /// Whether values pass unchanged (a plain strided view).
    pub(crate) fn is_direct(self) -> bool {
        self == Reading::DIRECT
    }

    /// The node of the view's elements: `base` (the storage's current version) read
    /// through `layout`, converted as this reading says. `dtype` is the view's.
    pub(crate) fn read(
        self,
        store: &mut Store,
        base: NodeId,
        layout: &Layout,
        dtype: DType,
    ) -> NodeId {
        let base = match self.as_dtype {
            Some(d) => bitcast(store, base, d),
            None => base,
        };
        let source = if self.parts {
            parts_of(store, base)
        } else if self.pairs {
            pairs_of(store, base)
        } else {
            base
        };
        let mut node = store.view_node(source, layout);
        if self.conj {
            node = store.add(Op::Unary(UnaryOp::Conj), dtype, &layout.shape, &[node]);
        }
        if self.neg {
            node = store.add(Op::Unary(UnaryOp::Neg), dtype, &layout.shape, &[node]);
        }
        node
    }

    /// The storage's next version: `base` with the view's elements (addressed by
    /// `layout`) replaced by `value`, a node of the view's dtype and shape.
    pub(crate) fn write(
        self,
        store: &mut Store,
        base: NodeId,
        layout: &Layout,
        value: NodeId,
    ) -> NodeId {
        let Some(as_dtype) = self.as_dtype else {
            return self.write_values(store, base, layout, value);
        };
        // the write in the reinterpreted bytes, then those bytes as the storage's dtype
        let b = store.graph.node(base);
        let (dtype, shape) = (b.dtype, b.shape.clone());
        // (bool bytes are written as bytes: the other bytes keep their values, which
        // reading them as bool would turn into 0 and 1)
        let (as_dtype, value) = if as_dtype == DType::Bool {
            (DType::U8, store.cast_node(value, DType::U8))
        } else {
            (as_dtype, value)
        };
        let space = bitcast(store, base, as_dtype);
        let plain = Reading {
            as_dtype: None,
            ..self
        };
        let written = plain.write_values(store, space, layout, value);
        let m =
            store.graph.node(written).numel() * as_dtype.size_in_bytes() / dtype.size_in_bytes();
        let back = store.add(Op::Bitcast, dtype, vec![m], &[written]);
        // the bytes past the last whole element stay as they were
        let back = with_tail_of(store, back, base);
        store.view_node(back, &Layout::contiguous(&shape))
    }

    /// [`Reading::write`] on a storage whose bytes are read as they are.
    fn write_values(
        self,
        store: &mut Store,
        base: NodeId,
        layout: &Layout,
        value: NodeId,
    ) -> NodeId {
        let mut value = value;
        let (dtype, shape) = {
            let v = store.graph.node(value);
            (v.dtype, v.shape.clone())
        };
        if self.neg {
            value = store.add(Op::Unary(UnaryOp::Neg), dtype, &shape, &[value]);
        }
        if self.conj {
            value = store.add(Op::Unary(UnaryOp::Conj), dtype, &shape, &[value]);
        }
        let b = store.graph.node(base);
        let (base_dtype, base_shape, n) = (b.dtype, b.shape.clone(), b.numel());
        if self.pairs {
            // the complex values of the float storage, written, and back to floats;
            // an odd last float is no element's part and stays
            let complex = pairs_of(store, base);
            let k = n / 2;
            let written = store.add(
                Op::write_view(layout.clone()),
                dtype,
                vec![k],
                &[complex, value],
            );
            let floats = parts_of(store, written);
            let floats = with_tail_of(store, floats, base);
            return store.view_node(floats, &Layout::contiguous(&base_shape));
        }
        if !self.parts {
            return store.add(
                Op::write_view(layout.clone()),
                base_dtype,
                &base_shape,
                &[base, value],
            );
        }
        let floats = parts_of(store, base);
        let real = base_dtype.to_real();
        let written = store.add(
            Op::write_view(layout.clone()),
            real,
            vec![2 * n],
            &[floats, value],
        );
        let complex = pairs_of(store, written);
        store.view_node(complex, &Layout::contiguous(&base_shape))
    }
}

/// `head` (the first elements of `base`'s flat storage, rewritten) followed by the
/// rest of `base` as it was: the elements past the last whole element of another
/// dtype (an odd last float, the last bytes of a `view(dtype)`), which no view of it
/// addresses.
fn with_tail_of(store: &mut Store, head: NodeId, base: NodeId) -> NodeId {
    let (m, n, dtype) = (
        store.graph.node(head).numel(),
        store.graph.node(base).numel(),
        store.graph.node(base).dtype,
    );
    if m >= n {
        return head;
    }
    let flat = store.view_node(base, &Layout::contiguous(&[n]));
    let tail = Layout {
        shape: vec![n - m].into(),
        strides: vec![1].into(),
        offset: m,
    };
    let tail = store.view_node(flat, &tail);
    store.add(Op::Cat { axis: 0 }, dtype, vec![n], &[head, tail])
}

/// A node's bytes as a flat vector of `dtype` (the whole elements of it they hold).
fn bitcast(store: &mut Store, node: NodeId, dtype: DType) -> NodeId {
    let x = store.graph.node(node);
    let (n, size) = (x.numel(), x.dtype.size_in_bytes());
    let m = n * size / dtype.size_in_bytes();
    let used = m * dtype.size_in_bytes() / size;
    let flat = store.view_node(node, &Layout::contiguous(&[used]));
    store.add(Op::Bitcast, dtype, vec![m], &[flat])
}

/// A float node's elements as a flat vector of complex values: element `k` is
/// `floats[2k] + i floats[2k + 1]`.
fn pairs_of(store: &mut Store, floats: NodeId) -> NodeId {
    let f = store.graph.node(floats);
    let (k, dtype) = (f.numel() / 2, f.dtype);
    let complex = dtype.to_complex().unwrap_or(dtype);
    let part = |store: &mut Store, offset: usize| {
        let l = Layout {
            shape: vec![k].into(),
            strides: vec![2].into(),
            offset,
        };
        store.view_node(floats, &l)
    };
    let (re, im) = (part(store, 0), part(store, 1));
    store.add(Op::Binary(BinaryOp::ComplexOf), complex, vec![k], &[re, im])
}

/// A complex node's elements as a flat vector of floats: re, im, re, im, …
fn parts_of(store: &mut Store, complex: NodeId) -> NodeId {
    let c = store.graph.node(complex);
    let (n, real) = (c.numel(), c.dtype.to_real());
    let flat = store.view_node(complex, &Layout::contiguous(&[n]));
    let column = |store: &mut Store, op: UnaryOp| {
        let part = store.add(Op::Unary(op), real, vec![n], &[flat]);
        store.view_node(part, &Layout::contiguous(&[n, 1]))
    };
    let re = column(store, UnaryOp::RealPart);
    let im = column(store, UnaryOp::ImagPart);
    let pairs = store.add(Op::Cat { axis: 1 }, real, vec![n, 2], &[re, im]);
    store.view_node(pairs, &Layout::contiguous(&[2 * n]))
}
