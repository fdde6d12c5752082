//! The builder the interpreter's hand-built graph tests share: a graph under
//! construction plus the buffers of its input nodes. Each test file adds the node
//! helpers it needs in an `impl G` of its own.

use lazyfuse_ir::{Graph, InputId, NodeId, Op};
use lazyfuse_runtime::{Buffer, Element};
use std::collections::HashMap;
use std::sync::Arc;

/// A graph under construction plus its input buffers.
#[derive(Default)]
pub struct G {
    /// the graph
    pub g: Graph,
    /// the buffer of every `Input` node, by its id
    pub inputs: HashMap<InputId, Arc<Buffer>>,
}

impl G {
    /// An input node holding `data` with `shape`.
    pub fn input<T: Element>(&mut self, shape: &[usize], data: Vec<T>) -> NodeId {
        self.buffer(shape, Buffer::from_vec(data))
    }

    /// An input node holding a ready buffer (any dtype, float8 included).
    pub fn buffer(&mut self, shape: &[usize], b: Buffer) -> NodeId {
        let id = InputId(self.inputs.len() as u64);
        let dtype = b.dtype();
        self.inputs.insert(id, Arc::new(b));
        self.g.add(Op::Input(id), dtype, shape, &[])
    }
}
