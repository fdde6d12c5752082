//! The deterministic text forms of kernels and schedules (`LAZYFUSE_DUMP_IR`,
//! golden tests), and a kernel's structure, the kernel cache's key.

use super::{BufKind, Expr, LoopKernel, Schedule, Step};
use crate::op::Op;
use crate::shape::fmt_shape;
use std::fmt::Write as _;

impl LoopKernel {
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
            let _ = writeln!(out, "  store {}[{}] = {}", s.param, s.index, s.value);
        }
        out
    }
}

impl Schedule {
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
                    let epilogue: String =
                        e.epilogue.iter().map(|o| format!(" then {o}")).collect();
                    let _ = writeln!(
                        out,
                        "step {i}: extern {}({}{}){epilogue} : {}{} -> {}  (node {}; {})",
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
}

pub(super) fn expr_text(e: &Expr) -> String {
    match e {
        Expr::Load {
            param,
            index,
            dynamic,
        } => match dynamic {
            None => format!("load {param}[{index}]"),
            Some(d) => format!(
                "load {param}[{index} + {}({}, {})*{}; {}]",
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
