//! Graphviz DOT pictures of a realize: the graph after passes, one cluster per
//! kernel of its schedule (`LAZYFUSE_DUMP_IR=dot`). Render with `dot -Tpng`.

use crate::graph::{Graph, NodeId};
use crate::kernel::{Schedule, Step};
use crate::op::Op;
use crate::shape::fmt_shape;
use hashbrown::HashMap;
use std::fmt::Write as _;

/// The DOT text of `graph` (the nodes `targets` need) with each step of `schedule`
/// as a cluster of the nodes it computes. Deterministic: nodes are numbered in
/// topological order, as in [`Graph::dump`].
///
/// ```
/// use lazyfuse_ir::{dot::schedule_dot, kernel::Schedule, DType, Graph, Op, Scalar};
/// let mut g = Graph::new();
/// let a = g.add(Op::Full(Scalar::Int(1)), DType::I64, vec![2], &[]);
/// let empty = Schedule { buffers: vec![], steps: vec![], outputs: vec![], notes: vec![] };
/// let text = schedule_dot(&g, &[a], &empty);
/// assert!(text.starts_with("digraph lazyfuse {"));
/// assert!(text.contains("n0 [label=\"%0 full(value=1)\\nint64[2]\""));
/// ```
pub fn schedule_dot(graph: &Graph, targets: &[NodeId], schedule: &Schedule) -> String {
    let order = graph.topo_order(targets);
    let names: HashMap<NodeId, usize> = order.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut out = String::from(
        "digraph lazyfuse {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n",
    );
    let mut placed: HashMap<NodeId, ()> = HashMap::new();
    for (i, step) in schedule.steps.iter().enumerate() {
        let (label, nodes): (String, Vec<NodeId>) = match step {
            Step::Loop(k) => (format!("step {i}: {}", k.name), k.nodes.clone()),
            Step::Extern(e) => (format!("step {i}: extern {}", e.op.name()), vec![e.node]),
        };
        let _ = writeln!(
            out,
            "  subgraph cluster_{i} {{\n    label=\"{label}\";\n    style=rounded;"
        );
        for n in nodes {
            if names.contains_key(&n) && placed.insert(n, ()).is_none() {
                let _ = writeln!(out, "    {}", node_line(graph, &names, n));
            }
        }
        out.push_str("  }\n");
    }
    for n in &order {
        if !placed.contains_key(n) {
            let _ = writeln!(out, "  {}", node_line(graph, &names, *n));
        }
    }
    for n in &order {
        for &i in graph.inputs(*n) {
            let _ = writeln!(out, "  n{} -> n{};", names[&i], names[n]);
        }
    }
    out.push_str("}\n");
    out
}

fn node_line(graph: &Graph, names: &HashMap<NodeId, usize>, n: NodeId) -> String {
    let node = graph.node(n);
    let attrs = match node.op {
        Op::Input(_) => String::new(),
        _ => node.op.attributes(),
    };
    let call = if attrs.is_empty() {
        node.op.name()
    } else {
        format!("{}({attrs})", node.op.name())
    };
    let label = format!(
        "%{} {call}\\n{}{}",
        names[&n],
        node.dtype,
        fmt_shape(&node.shape)
    )
    .replace('"', "\\\"");
    format!("n{} [label=\"{label}\"];", names[&n])
}
