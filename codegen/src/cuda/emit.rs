//! The emitter of one kernel's CUDA C function: its signature and the grid-stride
//! loop over the parallel points (vector groups or one block per point where those
//! apply); each point is the shared lowering's ([`emitter::point`]), rendered by
//! `super::emitter`.

use super::{block_reduces, index, storage, stored_bits, vectorizes, BLOCK_THREADS, LANES};
use crate::emitter::{self, Emitter};
use crate::CodegenError;
use lazyfuse_ir::kernel::{Expr, LoopKernel, MathMode};
use lazyfuse_ir::DType;
use std::fmt::Write as _;

pub(super) struct Emit<'a> {
    pub(super) k: &'a LoopKernel,
    pub(super) math: MathMode,
    /// whether indices need 64-bit arithmetic (see [`fits_i32`](super::fits_i32))
    pub(super) wide: bool,
    /// in a vectorized kernel ([`vectorizes`]), the lane being emitted: expression
    /// `i` of lane `l` is `v{i}_{l}`
    pub(super) lane: Option<usize>,
    /// a block-per-point kernel ([`block_reduces`]): outer-stage stores are thread 0's
    pub(super) block: bool,
    pub(super) needed: Vec<bool>,
    pub(super) out: String,
    pub(super) depth: usize,
}

impl Emit<'_> {
    pub(super) fn line(&mut self, s: impl AsRef<str>) {
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    pub(super) fn open(&mut self, s: impl AsRef<str>) {
        let s = s.as_ref();
        self.line(if s.is_empty() {
            "{".to_string()
        } else {
            format!("{s} {{")
        });
        self.depth += 1;
    }

    pub(super) fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
    }

    /// The C type of the loop indices.
    pub(super) fn index_type(&self) -> &'static str {
        if self.wide {
            "i64"
        } else {
            "i32"
        }
    }

    /// The suffix of index constants.
    pub(super) fn suffix(&self) -> &'static str {
        if self.wide {
            "ll"
        } else {
            ""
        }
    }

    pub(super) fn dtype(&self, i: usize) -> DType {
        self.k.exprs[i].dtype
    }

    /// The variable holding expression `i` (of the current lane).
    pub(super) fn var(&self, i: usize) -> String {
        match self.lane {
            Some(l) => format!("v{i}_{l}"),
            None => format!("v{i}"),
        }
    }

    pub(super) fn function(&mut self, symbol: &str) -> Result<(), CodegenError> {
        let k = self.k;
        let mut args = Vec::new();
        for (i, p) in k.params.iter().enumerate() {
            let t = storage(p.dtype)?;
            args.push(if p.writes {
                format!("{t}* __restrict__ p{i}")
            } else {
                format!("const {t}* __restrict__ p{i}")
            });
        }
        args.push("u64* __restrict__ status".into());
        let _ = writeln!(
            self.out,
            "// {} ({} params, dims {:?}, {} parallel)",
            k.name,
            k.params.len(),
            k.dims,
            k.n_parallel
        );
        self.line(format!(
            "extern \"C\" __global__ void __launch_bounds__({BLOCK_THREADS}) {symbol}({})",
            args.join(", ")
        ));
        self.open("");
        if k.parallel_points() == 0 {
            // No point exists: nothing to do (and no dim to divide by).
            self.line("// no parallel point");
            self.close();
            return Ok(());
        }
        if vectorizes(k) {
            return self.vector_function();
        }
        if block_reduces(k, self.math) {
            self.block = true;
            return self.block_function();
        }
        self.line(format!("const i64 n_points = {}ll;", k.parallel_points()));
        self.open("for (i64 pt = LF_GRID_FIRST; pt < LF_GRID_END(n_points); pt += LF_GRID_STRIDE)");
        // The multi-index of the point, innermost dim fastest; in 32-bit arithmetic
        // where every index fits (`Emit::wide`): a 64-bit division is many
        // instructions on a GPU.
        self.point_indices("pt", 1);
        emitter::point(self)?;
        self.close();
        self.close();
        Ok(())
    }

    /// Declares the multi-index of step `var` of the grid-stride loop, innermost dim
    /// fastest (each step takes `group` consecutive points of the last parallel dim),
    /// in 32-bit arithmetic where every index fits (`Emit::wide`: a 64-bit division
    /// is many instructions on a GPU); the reduction dims' indices start at 0.
    pub(super) fn point_indices(&mut self, var: &str, group: usize) {
        let k = self.k;
        let np = k.n_parallel;
        let (it, sfx) = (self.index_type(), self.suffix());
        let mut rest = if self.wide {
            var.to_string()
        } else {
            format!("(i32){var}")
        };
        for d in (0..np).rev() {
            let (n, scale) = if d + 1 == np && group > 1 {
                (k.dims[d] / group, format!(" * {group}"))
            } else {
                (k.dims[d], String::new())
            };
            if d == 0 {
                self.line(format!("const {it} i{d} = {rest}{scale};"));
            } else {
                self.line(format!("const {it} i{d} = {rest} % {n}{sfx}{scale};"));
                self.line(format!("const {it} q{d} = {rest} / {n}{sfx};"));
                rest = format!("q{d}");
            }
        }
        if np == 0 {
            self.line(format!("(void){var};"));
        }
        for d in np..k.dims.len() {
            self.line(format!("{it} i{d} = 0;"));
        }
    }

    /// A kernel whose reductions the threads of a block share ([`block_reduces`]):
    /// each block takes parallel points in turn; its threads split each phase's
    /// reduction points (thread `t` takes `t`, `t + blockDim.x`, …), keep partial
    /// accumulators, and combine them with `lf_block_reduce` (warp shuffles, then
    /// shared memory), which also gives every thread the result for the later
    /// stages. Outer-stage stores are thread 0's. Any block size that is 1 or a
    /// multiple of 32 is correct.
    pub(super) fn block_function(&mut self) -> Result<(), CodegenError> {
        let k = self.k;
        self.line(format!(
            "const i64 n_points = {}ll; // one block per point",
            k.parallel_points()
        ));
        self.open(
            "for (i64 pt = LF_BLOCK_FIRST; pt < LF_GRID_END(n_points); pt += LF_BLOCK_STRIDE)",
        );
        self.point_indices("pt", 1);
        emitter::point(self)?;
        self.close();
        self.close();
        Ok(())
    }

    /// The body of a vectorized elementwise kernel: each step of the grid-stride loop
    /// takes a group of [`LANES`] consecutive points of the last parallel dim, loads
    /// each contiguous param once as a vector, computes the lanes, and stores each
    /// contiguous output as a vector.
    pub(super) fn vector_function(&mut self) -> Result<(), CodegenError> {
        let k = self.k;
        let np = k.n_parallel;
        let sfx = self.suffix();
        let groups = k.parallel_points() / LANES;
        self.line(format!(
            "const i64 n_groups = {groups}ll; // of {LANES} points"
        ));
        self.open("for (i64 g = LF_GRID_FIRST; g < LF_GRID_END(n_groups); g += LF_GRID_STRIDE)");
        self.point_indices("g", LANES);
        // The contiguous loads, one vector each (loads depend on indices only).
        for i in 0..k.exprs.len() {
            if let (
                true,
                Expr::Load {
                    param, index: ix, ..
                },
            ) = (self.needed[i], &k.exprs[i].expr)
            {
                if ix.strides[np - 1] == 1 {
                    let t = storage(k.params[param.index()].dtype)?;
                    let at = index(ix, sfx);
                    self.line(format!(
                        "const lf_v4<{t}> L{i} = lf_vload4(&{param}[{at}]);"
                    ));
                }
            }
        }
        for l in 0..LANES {
            self.lane = Some(l);
            for i in 0..k.exprs.len() {
                if self.needed[i] {
                    let v = emitter::value(self, i)?;
                    self.define(i, v)?;
                }
            }
        }
        self.lane = None;
        for st in &k.stores {
            let dt = k.params[st.param.index()].dtype;
            let t = storage(dt)?;
            let lanes: Vec<String> = (0..LANES)
                .map(|l| stored_bits(&format!("v{}_{l}", st.value.0), dt))
                .collect();
            let at = index(&st.index, sfx);
            self.line(format!(
                "lf_vstore4(&{}[{at}], lf_v4<{t}>{{{{{}}}}});",
                st.param,
                lanes.join(", ")
            ));
        }
        self.close();
        self.close();
        Ok(())
    }
}
