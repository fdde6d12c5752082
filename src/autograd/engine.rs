//! The backward walk: from outputs and their gradients, through the records of the
//! nodes they depend on (outputs first, each node after every consumer), to the
//! leaves, whose gradients are accumulated into `.grad` or returned.

use super::record::{GradLink, LeafCell, Rule};
use super::rules::{self, Ctx};
use super::saved;
use super::with_grad_mode;
use crate::error::Result;
use crate::store::with_store;
use crate::tensor::Tensor;
use lazyfuse_ir::{Error as IrError, Layout, NodeId};
use std::collections::HashMap;
use std::sync::Arc;

/// What a walk produces.
pub(crate) enum Want<'a> {
    /// gradients added to the leaves' `.grad` (`backward`)
    Accumulate,
    /// the gradient of each of these tensors, returned (`autograd::grad`)
    Inputs(&'a [&'a Tensor]),
}

/// An output and the gradient it starts from.
pub(crate) struct Seed {
    output: Tensor,
    grad: Tensor,
}

/// The seeds of `outputs` with PyTorch's checks: a given gradient has its output's
/// shape (another dtype is converted); without one, the output has one element and
/// starts from 1; every output requires grad.
pub(crate) fn seeds(outputs: &[&Tensor], grads: Option<&[&Tensor]>) -> Result<Vec<Seed>> {
    if let Some(g) = grads.filter(|g| g.len() != outputs.len()) {
        return Err(invalid(format!(
            "grad requires one gradient per output: {} outputs, {} gradients",
            outputs.len(),
            g.len()
        )));
    }
    let mut seeds = Vec::with_capacity(outputs.len());
    for (i, out) in outputs.iter().enumerate() {
        let grad = match grads {
            Some(g) => {
                let g = g[i];
                if g.shape() != out.shape() {
                    return Err(invalid(format!(
                        "Mismatch in shape: grad_output[{i}] has a shape of {} and output[{i}] \
                         has a shape of {}.",
                        torch_size(&g.shape()),
                        torch_size(&out.shape())
                    )));
                }
                g.to_dtype(out.dtype())?
            }
            None => {
                if out.requires_grad() && out.numel() != 1 {
                    return Err(invalid(
                        "grad can be implicitly created only for scalar outputs",
                    ));
                }
                out.ones_like(None)?
            }
        };
        seeds.push(Seed {
            output: (*out).clone(),
            grad,
        });
    }
    for (i, seed) in seeds.iter().enumerate() {
        if !seed.output.requires_grad() {
            return Err(invalid(format!(
                "element {i} of tensors does not require grad and does not have a grad_fn"
            )));
        }
    }
    Ok(seeds)
}

/// `torch.Size([2, 3])`, as PyTorch prints a shape in its messages.
fn torch_size(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    format!("torch.Size([{}])", dims.join(", "))
}

fn invalid(message: impl Into<String>) -> crate::Error {
    IrError::invalid("backward", message).into()
}

/// One recorded node of the walk, with the values its rule reads.
struct Item {
    node: NodeId,
    rule: Rule,
    inputs: Vec<NodeId>,
    /// which inputs have a record (need a gradient)
    needs: Vec<bool>,
    /// the node's value, and its inputs' (handles that pin them during the walk)
    value: Tensor,
    input_values: Vec<Tensor>,
    /// the inputs before promotion (see `GradRecord::sources`)
    originals: Vec<Tensor>,
}

/// What `autograd::grad` asked for, per input tensor.
enum Target {
    /// the leaf behind this cell, read through this layout
    Leaf(Arc<LeafCell>, Layout),
    /// the node a non-leaf's storage holds, read through this layout
    Node(NodeId, Layout),
}

/// Walks from `seeds` to the leaves. With `create_graph`, the gradients are built
/// with grad mode on, so they have history of their own.
pub(crate) fn run(seeds: &[Seed], want: Want, create_graph: bool) -> Result<Vec<Option<Tensor>>> {
    let targets = match &want {
        Want::Accumulate => Vec::new(),
        Want::Inputs(inputs) => inputs.iter().map(|t| target(t)).collect::<Result<_>>()?,
    };
    // Reading the outputs with grad mode on gives nodes with history (a leaf output
    // reads through an anchor).
    let (roots, items) = with_grad_mode(true, || {
        with_store(|s| {
            let roots: Vec<Tensor> = seeds
                .iter()
                .map(|seed| {
                    let n = seed.output.node(s);
                    Tensor::from_node(s, n)
                })
                .collect();
            let root_nodes: Vec<NodeId> = roots.iter().map(|t| t.0.storage.node()).collect();
            let items = collect(s, &root_nodes)?;
            Ok::<_, crate::Error>((root_nodes, items))
        })
    })?;
    with_grad_mode(create_graph, || {
        let mut grads: HashMap<NodeId, Tensor> = HashMap::new();
        for (root, seed) in roots.iter().zip(seeds) {
            accumulate(&mut grads, *root, seed.grad.clone())?;
        }
        let mut found: Vec<Option<Tensor>> = vec![None; targets.len()];
        for item in &items {
            let Some(g) = grads.remove(&item.node) else {
                continue;
            };
            for (k, t) in targets.iter().enumerate() {
                if let Target::Node(n, layout) = t {
                    if *n == item.node {
                        add_found(&mut found[k], read_as(&g, layout)?)?;
                    }
                }
            }
            if let Rule::Leaf(cell) = &item.rule {
                match &want {
                    Want::Accumulate => {
                        let g = read_as(&g, &cell.layout)?;
                        let sum = match cell.grad() {
                            Some(old) => old.add(&g)?,
                            None => g,
                        };
                        cell.set_grad(Some(sum));
                    }
                    Want::Inputs(_) => {
                        for (k, t) in targets.iter().enumerate() {
                            if let Target::Leaf(c, layout) = t {
                                if Arc::ptr_eq(c, cell) {
                                    add_found(&mut found[k], read_as(&g, layout)?)?;
                                }
                            }
                        }
                    }
                }
                continue;
            }
            let ctx = Ctx {
                value: &item.value,
                inputs: &item.input_values,
                originals: &item.originals,
                needs: &item.needs,
                grad: &g,
            };
            let input_grads = rules::input_grads(&item.rule, &ctx)?;
            for (j, ig) in input_grads.into_iter().enumerate() {
                let (Some(ig), true) = (ig, item.needs[j]) else {
                    continue;
                };
                let input = &item.input_values[j];
                if ig.shape() != input.shape() {
                    return Err(IrError::Unsupported(format!(
                        "lazyfuse bug: the gradient of {} input {j} has shape {:?}, its input {:?}",
                        rule_name(&item.rule),
                        ig.shape(),
                        input.shape()
                    ))
                    .into());
                }
                let ig = ig.to_dtype(input.dtype())?;
                accumulate(&mut grads, item.inputs[j], ig)?;
            }
        }
        Ok(found)
    })
}

/// The name of what a rule differentiates, for messages.
pub(crate) fn rule_name(rule: &Rule) -> String {
    match rule {
        Rule::Op(op) => op.name(),
        Rule::Leaf(_) => "leaf".into(),
        Rule::Custom(c) => format!("{c:?}"),
    }
}

fn accumulate(grads: &mut HashMap<NodeId, Tensor>, node: NodeId, g: Tensor) -> Result<()> {
    let sum = match grads.remove(&node) {
        Some(old) => old.add(&g)?,
        None => g,
    };
    grads.insert(node, sum);
    Ok(())
}

fn add_found(slot: &mut Option<Tensor>, g: Tensor) -> Result<()> {
    *slot = Some(match slot.take() {
        Some(old) => old.add(&g)?,
        None => g,
    });
    Ok(())
}

/// `g`, a storage-shaped gradient, read through `layout` (the layout by which a
/// tensor reads that storage).
fn read_as(g: &Tensor, layout: &Layout) -> Result<Tensor> {
    if layout.shape == g.strided_layout().shape && layout.is_identity_of(g.numel()) {
        return Ok(g.clone());
    }
    g.as_strided(&layout.shape, &layout.strides, layout.offset)
}

/// What `autograd::grad` differentiates with respect to, for one input tensor.
fn target(t: &Tensor) -> Result<Target> {
    let layout = t.0.layout.clone();
    match t.link() {
        GradLink::Leaf { cell, .. } if cell.requires_grad() => Ok(Target::Leaf(cell, layout)),
        GradLink::Follow if t.requires_grad() => {
            Ok(Target::Node(with_store(|_| t.0.storage.node()), layout))
        }
        _ => Err(invalid(
            "One of the differentiated Tensors does not require grad",
        )),
    }
}

/// A handle to `input`'s value on the device of `node`, its consumer. An op on a
/// GPU reads constants the builder made on the CPU (a scalar operand): the handle of
/// such a constant is an identity view placed with its consumer, so that the rules'
/// ops see one device.
fn value_on(s: &mut crate::store::Store, input: NodeId, node: NodeId) -> Tensor {
    let device = s.device_of(node);
    let holds_buffer = matches!(s.graph.node(input).op, lazyfuse_ir::Op::Input(_));
    if s.device_of(input) == device || holds_buffer || s.records.contains(input) {
        return Tensor::from_node(s, input);
    }
    let n = s.graph.node(input);
    let (dtype, shape) = (n.dtype, n.shape.clone());
    let layout = Layout::contiguous(&shape);
    let placed = s.add_unrecorded(lazyfuse_ir::Op::view(layout), dtype, &shape, &[input]);
    s.set_device(placed, device);
    Tensor::from_node(s, placed)
}

/// The recorded nodes `roots` depend on, each after all of its consumers, with
/// handles to the values their rules read.
fn collect(s: &mut crate::store::Store, roots: &[NodeId]) -> Result<Vec<Item>> {
    // depth-first post-order over record inputs, then reversed
    let mut order: Vec<NodeId> = Vec::new();
    let mut state: HashMap<NodeId, bool> = HashMap::new();
    for &r in roots {
        if !s.records.contains(r) {
            continue;
        }
        let mut stack = vec![(r, false)];
        while let Some((n, expanded)) = stack.pop() {
            if expanded {
                state.insert(n, true);
                order.push(n);
                continue;
            }
            if state.contains_key(&n) {
                continue;
            }
            state.insert(n, false);
            stack.push((n, true));
            let record = s.records.get(n).expect("a recorded node");
            for &i in record.inputs.iter().rev() {
                if s.records.contains(i) && !state.contains_key(&i) {
                    stack.push((i, false));
                }
            }
        }
    }
    order.reverse();
    order
        .into_iter()
        .map(|n| -> Result<Item> {
            let record = s.records.get(n).expect("a recorded node");
            let (rule, inputs) = (record.rule.clone(), record.inputs.clone());
            let sources = record.sources.clone();
            let needs: Vec<bool> = inputs.iter().map(|&i| s.records.contains(i)).collect();
            // PyTorch's saved values must still be the versions recorded
            let kept = saved::saved(&rule, &needs);
            let read = if sources.is_empty() {
                &inputs
            } else {
                &sources
            };
            let mut used: Vec<NodeId> = read
                .iter()
                .zip(&kept.inputs)
                .filter(|(_, &k)| k)
                .map(|(&i, _)| i)
                .collect();
            if kept.output {
                used.push(n);
            }
            saved::check_versions(s, &used, record.seq)?;
            let value = Tensor::from_node(s, n);
            let input_values: Vec<Tensor> = inputs.iter().map(|&i| value_on(s, i, n)).collect();
            let originals = if sources.is_empty() {
                input_values.clone()
            } else {
                sources.iter().map(|&i| value_on(s, i, n)).collect()
            };
            Ok(Item {
                node: n,
                rule,
                inputs,
                needs,
                value,
                input_values,
                originals,
            })
        })
        .collect()
}
