//! Kernel IR → CUDA C: the source that NVRTC compiles for NVIDIA GPUs.
//!
//! Every [`LoopKernel`] becomes one `extern "C" __global__` function over a
//! grid-stride loop: each thread takes parallel points (the row-major flattening of
//! the parallel dims) and runs the point exactly as the CPU backend's scalar code
//! does: the outer stage, then each phase's loop over the reduction dims (row-major,
//! with its accumulators and scans), then the next outer stage, with every store at
//! its value's stage. The scalar semantics are the kernel IR's (the interpreter's):
//! [`PRELUDE`] holds them as device functions (`lf_*`), and the generated code calls
//! them by name, so the per-op text stays one line each.
//!
//! Two layouts refine that one: elementwise kernels with contiguous, aligned accesses
//! take groups of four points per step, with one vector load or store per param
//! ([`CudaKernel::group`]); fast-math reductions along rows give each point a block
//! whose threads share the reduction points and combine their partials
//! ([`CudaKernel::block_per_point`]).
//!
//! ABI: the kernel's parameters are one device pointer per [`LoopKernel::params`]
//! entry (in order, typed by the param's storage dtype: `u16` for float16/bfloat16,
//! `u8` for bool and float8), then `u64* status` (the kernel IR's status block of
//! [`STATUS_SLOTS`](lazyfuse_ir::kernel::STATUS_SLOTS) words, zeroed before the
//! launch). Buffers must be aligned to 32 bytes (four elements of the widest dtype):
//! elementwise kernels whose accesses allow it take groups of four consecutive points
//! per step ([`CudaKernel::group`]) and load and store them as one vector. Any grid and block shape is
//! correct; [`CudaKernel::n_points`] is the number of parallel points.
//!
//! Numerics: float32 sums accumulate in double, float16/bfloat16 values are computed in
//! float and rounded after every op, integers wrap, integer division by zero sets
//! [`Status::ZeroDivision`], gather-like loads out of range set
//! [`Status::IndexOutOfRange`] and read nothing. Transcendentals are CUDA's libdevice
//! functions (within the conformance tolerances of the interpreter's libm, not bit
//! for bit); the source must be compiled with `--fmad=false`, so that `a * b + c`
//! rounds twice as on the CPU.
//!
//! ```
//! use lazyfuse_codegen::cuda::kernel_source;
//! use lazyfuse_ir::kernel::{Affine, Expr, ExprNode, LoopKernel, MathMode, Param, Stage, StoreOp, BufId, ExprId};
//! use lazyfuse_ir::{DType, UnaryOp};
//! let load = Expr::Load { param: 0, index: Affine { offset: 0, strides: vec![1] }, dynamic: None };
//! let k = LoopKernel {
//!     name: "k0_exp".into(),
//!     nodes: vec![],
//!     params: vec![
//!         Param { buf: BufId(0), dtype: DType::F32, len: 8, writes: false },
//!         Param { buf: BufId(1), dtype: DType::F32, len: 8, writes: true },
//!     ],
//!     dims: vec![8],
//!     n_parallel: 1,
//!     exprs: vec![
//!         ExprNode { expr: load, dtype: DType::F32, stage: Stage::Outer(0) },
//!         ExprNode { expr: Expr::Unary { op: UnaryOp::Exp, x: ExprId(0) }, dtype: DType::F32, stage: Stage::Outer(0) },
//!     ],
//!     stores: vec![StoreOp { param: 1, index: Affine { offset: 0, strides: vec![1] }, value: ExprId(1) }],
//! };
//! let src = kernel_source(&k, MathMode::Fast).unwrap();
//! // contiguous and a multiple of four points: groups of four, one vector load each
//! assert!(src.function.contains("lf_vload4(&p0[i0])"));
//! assert!(src.function.contains("lf_exp(v0_0)"));
//! assert_eq!((src.n_points, src.group), (8, 4));
//! ```

use crate::cpu::CodegenError;
use half::{bf16, f16};
use lazyfuse_ir::kernel::{
    Accum, Affine, Const, Expr, LoopKernel, MathMode, ScanAccum, Stage, Status, StoreOp,
};
use lazyfuse_ir::{BinaryOp, DType, Op, UnaryOp, UnaryParamOp};
use std::fmt::Write as _;

/// The device functions and typedefs every generated kernel uses (the scalar
/// semantics of the kernel IR); compiled once per translation unit, before the
/// kernels.
pub const PRELUDE: &str = include_str!("prelude.cu");

/// Threads per block the launcher uses (the kernels declare it as their launch bound).
pub const BLOCK_THREADS: u32 = 256;

/// One loop kernel as CUDA C.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaKernel {
    /// the `extern "C"` symbol (the kernel's name, made a C identifier)
    pub symbol: String,
    /// the `__global__` function, without [`PRELUDE`]
    pub function: String,
    /// parallel points the kernel computes
    pub n_points: u64,
    /// points each step of the grid-stride loop takes (a vectorized kernel's groups
    /// of 4, else 1): a launch needs `n_points / group` threads to give each one step
    pub group: u64,
    /// device pointers the kernel takes before the status pointer
    pub n_params: usize,
    /// whether the threads of a block share each point's reductions (launch many
    /// threads per block, one block per point up to the grid's size); otherwise each
    /// thread takes its own steps of the grid-stride loop
    pub block_per_point: bool,
}

impl CudaKernel {
    /// A complete translation unit: [`PRELUDE`] and this kernel.
    pub fn translation_unit(&self) -> String {
        translation_unit(std::slice::from_ref(self))
    }
}

/// One translation unit holding [`PRELUDE`] once and every kernel of `kernels`
/// (compile the kernels of one realize together).
pub fn translation_unit(kernels: &[CudaKernel]) -> String {
    let mut out = String::with_capacity(PRELUDE.len() + kernels.len() * 2048);
    out.push_str(PRELUDE);
    for k in kernels {
        out.push('\n');
        out.push_str(&k.function);
    }
    out
}

fn unsupported(what: impl std::fmt::Display, dt: DType) -> CodegenError {
    CodegenError::CudaUnsupported(format!("{what} on {dt}"))
}

/// How a dtype's values live in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rep {
    Bool,
    Int {
        c: &'static str,
        signed: bool,
        bits: u32,
    },
    F32,
    F64,
    F8,
}

fn rep(dt: DType) -> Result<Rep, CodegenError> {
    let int = |c, signed, bits| Rep::Int { c, signed, bits };
    Ok(match dt {
        DType::Bool => Rep::Bool,
        DType::U8 => int("u8", false, 8),
        DType::I8 => int("i8", true, 8),
        DType::I16 => int("i16", true, 16),
        DType::U16 => int("u16", false, 16),
        DType::I32 => int("i32", true, 32),
        DType::U32 => int("u32", false, 32),
        DType::I64 => int("i64", true, 64),
        DType::U64 => int("u64", false, 64),
        DType::F16 | DType::BF16 | DType::F32 => Rep::F32,
        DType::F64 => Rep::F64,
        d if d.is_float8() => Rep::F8,
        d => return Err(unsupported("values in a loop kernel", d)),
    })
}

/// The C type of a register value.
fn reg(r: Rep) -> &'static str {
    match r {
        Rep::Bool => "bool",
        Rep::Int { c, .. } => c,
        Rep::F32 => "float",
        Rep::F64 => "double",
        Rep::F8 => "u8",
    }
}

/// The C type of a stored element.
fn storage(dt: DType) -> Result<&'static str, CodegenError> {
    Ok(match dt {
        DType::Bool => "u8",
        DType::F16 | DType::BF16 => "u16",
        _ => reg(rep(dt)?),
    })
}

/// A float literal of the compute type `r` (F32 or F64) for the f64 value `x`
/// converted as the interpreter's `c::<R>(x)` does.
fn flit(x: f64, r: Rep) -> String {
    if r == Rep::F64 {
        if x.is_nan() {
            "lf_nan<double>()".into()
        } else if x.is_infinite() {
            format!("{}lf_inf<double>()", if x < 0.0 { "-" } else { "" })
        } else {
            let s = format!("{x:?}");
            // `1e300` is already a double literal; `1` needs a point.
            if s.contains(['.', 'e']) {
                s
            } else {
                format!("{s}.0")
            }
        }
    } else {
        let f = x as f32;
        if f.is_nan() {
            "lf_nan<float>()".into()
        } else if f.is_infinite() {
            format!("{}lf_inf<float>()", if f < 0.0 { "-" } else { "" })
        } else {
            let s = format!("{f:?}");
            if s.contains(['.', 'e']) {
                format!("{s}f")
            } else {
                format!("{s}.0f")
            }
        }
    }
}

/// An integer literal of C type `c` holding the two's complement bits of `v`.
fn ilit(v: i128, c: &str) -> String {
    let bits = v as i64 as u64;
    if (v as i64) >= 0 && v <= i64::MAX as i128 && c != "u64" {
        if v <= i32::MAX as i128 {
            format!("({c}){v}")
        } else {
            format!("({c}){v}ll")
        }
    } else {
        format!("({c})0x{bits:x}ull")
    }
}

/// Rounds a float register holding a `dt` value to `dt` (float16/bfloat16).
fn round(v: String, dt: DType) -> String {
    match dt {
        DType::F16 => format!("lf_round_f16({v})"),
        DType::BF16 => format!("lf_round_bf16({v})"),
        _ => v,
    }
}

/// The float8 codec arguments of `dt`: (mantissa bits, bias, specials), or `None`
/// for e8m0.
fn f8_layout(dt: DType) -> Option<(u32, i32, u32)> {
    Some(match dt {
        DType::F8E4M3FN => (3, 7, 0),
        DType::F8E5M2 => (2, 15, 1),
        DType::F8E4M3FNUZ => (3, 8, 2),
        DType::F8E5M2FNUZ => (2, 16, 2),
        _ => return None,
    })
}

fn f8_decode(code: &str, dt: DType) -> String {
    match f8_layout(dt) {
        Some((m, b, s)) => format!("lf_f8_decode({code}, {m}, {b}, {s})"),
        None => format!("lf_e8m0_decode({code})"),
    }
}

fn f8_encode(f: &str, dt: DType) -> String {
    match f8_layout(dt) {
        Some((m, b, s)) => format!("lf_f8_encode({f}, {m}, {b}, {s})"),
        None => format!("lf_e8m0_encode({f})"),
    }
}

/// Translates `k` to CUDA C. `math` is the CPU's math mode: exact math also
/// compensates float sums as the interpreter does (the transcendentals are
/// CUDA's in both modes).
pub fn kernel_source(k: &LoopKernel, math: MathMode) -> Result<CudaKernel, CodegenError> {
    kernel_source_as(k, math, &k.name)
}

/// [`kernel_source`] under the symbol `name` (made a C identifier): kernels of one
/// translation unit need distinct symbols.
pub fn kernel_source_as(
    k: &LoopKernel,
    math: MathMode,
    name: &str,
) -> Result<CudaKernel, CodegenError> {
    k.verify()
        .map_err(|e| CodegenError::Malformed(e.to_string()))?;
    let symbol: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let symbol = if symbol.starts_with(|c: char| c.is_ascii_digit()) || symbol.is_empty() {
        format!("k_{symbol}")
    } else {
        symbol
    };
    let needed = k.needed_exprs();
    let mut e = Emit {
        k,
        math,
        wide: !fits_i32(k),
        lane: None,
        block: false,
        needed,
        out: String::new(),
        depth: 0,
    };
    e.function(&symbol)?;
    Ok(CudaKernel {
        symbol,
        function: e.out,
        n_points: k.parallel_points() as u64,
        group: if vectorizes(k) && k.parallel_points() > 0 {
            LANES as u64
        } else {
            1
        },
        n_params: k.params.len(),
        block_per_point: block_reduces(k, math) && !vectorizes(k),
    })
}

struct Emit<'a> {
    k: &'a LoopKernel,
    math: MathMode,
    /// whether indices need 64-bit arithmetic (see [`fits_i32`])
    wide: bool,
    /// in a vectorized kernel ([`vectorizes`]), the lane being emitted: expression
    /// `i` of lane `l` is `v{i}_{l}`
    lane: Option<usize>,
    /// a block-per-point kernel ([`block_reduces`]): outer-stage stores are thread 0's
    block: bool,
    needed: Vec<bool>,
    out: String,
    depth: usize,
}

impl Emit<'_> {
    fn line(&mut self, s: impl AsRef<str>) {
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    fn open(&mut self, s: impl AsRef<str>) {
        let s = s.as_ref();
        self.line(if s.is_empty() {
            "{".to_string()
        } else {
            format!("{s} {{")
        });
        self.depth += 1;
    }

    fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
    }

    /// The C type of the loop indices.
    fn index_type(&self) -> &'static str {
        if self.wide {
            "i64"
        } else {
            "i32"
        }
    }

    /// The suffix of index constants.
    fn suffix(&self) -> &'static str {
        if self.wide {
            "ll"
        } else {
            ""
        }
    }

    fn dtype(&self, i: usize) -> DType {
        self.k.exprs[i].dtype
    }

    /// The variable holding expression `i` (of the current lane).
    fn var(&self, i: usize) -> String {
        match self.lane {
            Some(l) => format!("v{i}_{l}"),
            None => format!("v{i}"),
        }
    }

    fn function(&mut self, symbol: &str) -> Result<(), CodegenError> {
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
        self.point()?;
        self.close();
        self.close();
        Ok(())
    }

    /// Declares the multi-index of step `var` of the grid-stride loop, innermost dim
    /// fastest (each step takes `group` consecutive points of the last parallel dim),
    /// in 32-bit arithmetic where every index fits (`Emit::wide`: a 64-bit division
    /// is many instructions on a GPU); the reduction dims' indices start at 0.
    fn point_indices(&mut self, var: &str, group: usize) {
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
    fn block_function(&mut self) -> Result<(), CodegenError> {
        let k = self.k;
        let np = k.n_parallel;
        let nd = k.dims.len();
        let it = self.index_type();
        self.line(format!(
            "const i64 n_points = {}ll; // one block per point",
            k.parallel_points()
        ));
        self.open(
            "for (i64 pt = LF_BLOCK_FIRST; pt < LF_GRID_END(n_points); pt += LF_BLOCK_STRIDE)",
        );
        self.point_indices("pt", 1);
        let total: usize = k.reduce_dims().iter().product();
        self.stage(Stage::Outer(0))?;
        for ph in 0..k.phases() {
            self.init_accs(ph)?;
            // Thread 0's outer-stage stores are visible before the phase reads.
            self.line("__syncthreads();");
            if total > 0 {
                self.open(format!(
                    "for (i64 r = threadIdx.x; r < {total}ll; r += blockDim.x)"
                ));
                let mut rest = "r".to_string();
                for d in (np..nd).rev() {
                    if d == np {
                        self.line(format!("i{d} = ({it}){rest};"));
                    } else {
                        self.line(format!("i{d} = ({it})({rest} % {}ll);", k.dims[d]));
                        self.line(format!("const i64 r{d} = {rest} / {}ll;", k.dims[d]));
                        rest = format!("r{d}");
                    }
                }
                self.stage(Stage::Inner(ph))?;
                self.update_accs(ph)?;
                self.close();
                for d in np..nd {
                    self.line(format!("i{d} = 0;"));
                }
            }
            // What this phase's threads stored is visible to the whole block before
            // anything later reads it (`lf_block_reduce` synchronizes too, but a
            // phase may reduce nothing).
            self.line("__syncthreads();");
            self.combine_accs(ph)?;
            self.stage(Stage::Outer(ph + 1))?;
        }
        self.close();
        self.close();
        Ok(())
    }

    /// Combines the block's partial accumulators of phase `phase`'s reductions.
    fn combine_accs(&mut self, phase: u32) -> Result<(), CodegenError> {
        for (i, op, x) in self.k.phase_reductions(phase) {
            if !self.needed[i] {
                continue;
            }
            let xdt = self.dtype(x.0 as usize);
            let ty = Self::acc_type(op, xdt)?;
            let r = rep(xdt)?;
            let f = combine(op, r, xdt, "x", "y")
                .ok_or_else(|| unsupported(format!("a block reduction {op:?}"), xdt))?;
            self.line(format!("__shared__ {ty} sm{i}[32];"));
            self.line(format!(
                "a{i} = lf_block_reduce(a{i}, []({ty} x, {ty} y) {{ return ({ty}){f}; }}, sm{i});"
            ));
        }
        Ok(())
    }

    /// The body of a vectorized elementwise kernel: each step of the grid-stride loop
    /// takes a group of [`LANES`] consecutive points of the last parallel dim, loads
    /// each contiguous param once as a vector, computes the lanes, and stores each
    /// contiguous output as a vector.
    fn vector_function(&mut self) -> Result<(), CodegenError> {
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
                    let t = storage(k.params[*param].dtype)?;
                    let at = index(ix, sfx);
                    self.line(format!(
                        "const lf_v4<{t}> L{i} = lf_vload4(&p{param}[{at}]);"
                    ));
                }
            }
        }
        for l in 0..LANES {
            self.lane = Some(l);
            for i in 0..k.exprs.len() {
                if self.needed[i] {
                    self.expr(i)?;
                }
            }
        }
        self.lane = None;
        for st in &k.stores {
            let dt = k.params[st.param].dtype;
            let t = storage(dt)?;
            let lanes: Vec<String> = (0..LANES)
                .map(|l| stored_bits(&format!("v{}_{l}", st.value.0), dt))
                .collect();
            let at = index(&st.index, sfx);
            self.line(format!(
                "lf_vstore4(&p{}[{at}], lf_v4<{t}>{{{{{}}}}});",
                st.param,
                lanes.join(", ")
            ));
        }
        self.close();
        self.close();
        Ok(())
    }

    fn point(&mut self) -> Result<(), CodegenError> {
        let k = self.k;
        let nd = k.dims.len();
        let np = k.n_parallel;
        self.stage(Stage::Outer(0))?;
        for ph in 0..k.phases() {
            self.init_accs(ph)?;
            self.init_scans(ph)?;
            let total: usize = k.reduce_dims().iter().product();
            if total > 0 {
                self.open("");
                self.line("i64 pos = 0;");
                for d in np..nd {
                    self.open(format!(
                        "for (i{d} = 0; i{d} < {}{}; ++i{d})",
                        k.dims[d],
                        self.suffix()
                    ));
                }
                self.stage(Stage::Inner(ph))?;
                self.update_accs(ph)?;
                self.line("++pos;");
                for _ in np..nd {
                    self.close();
                }
                for d in np..nd {
                    self.line(format!("i{d} = 0;"));
                }
                self.line("(void)pos;");
                self.close();
            }
            self.stage(Stage::Outer(ph + 1))?;
        }
        let last = k
            .exprs
            .iter()
            .filter_map(|e| match e.stage {
                Stage::Outer(s) => Some(s),
                Stage::Inner(_) => None,
            })
            .max()
            .unwrap_or(0);
        for s in k.phases() + 1..=last {
            self.stage(Stage::Outer(s))?;
        }
        Ok(())
    }

    fn stage(&mut self, stage: Stage) -> Result<(), CodegenError> {
        for i in 0..self.k.exprs.len() {
            if self.k.exprs[i].stage == stage && self.needed[i] {
                self.expr(i)?;
            }
        }
        let stores: Vec<StoreOp> = self
            .k
            .stores
            .iter()
            .filter(|s| self.k.exprs[s.value.0 as usize].stage == stage)
            .cloned()
            .collect();
        let guard = if self.block && matches!(stage, Stage::Outer(_)) {
            "if (threadIdx.x == 0) "
        } else {
            ""
        };
        for s in stores {
            let dt = self.k.params[s.param].dtype;
            let bits = stored_bits(&format!("v{}", s.value.0), dt);
            let idx = index(&s.index, self.suffix());
            self.line(format!("{guard}p{}[{idx}] = {bits};", s.param));
        }
        Ok(())
    }

    fn expr(&mut self, i: usize) -> Result<(), CodegenError> {
        let e = self.k.exprs[i].clone();
        let dt = e.dtype;
        let r = rep(dt)?;
        let ty = reg(r);
        let value = match e.expr {
            Expr::Load {
                param,
                index: ix,
                dynamic,
            } => {
                let base = index(&ix, self.suffix());
                let Some(d) = dynamic else {
                    let v = match self.lane {
                        // A contiguous load: lane `l` of the group's vector load.
                        Some(l) if ix.strides[self.k.n_parallel - 1] == 1 => {
                            lane_value(&format!("L{i}.v[{l}]"), dt)
                        }
                        _ => load(param, &base, dt),
                    };
                    let name = self.var(i);
                    self.line(format!("const {ty} {name} = {v};"));
                    return Ok(());
                };
                let vdt = self.dtype(d.value.0 as usize);
                let x = format!("v{}", d.value.0);
                let w = match rep(vdt)? {
                    Rep::Int { signed: true, .. } => format!("(i64){x}"),
                    Rep::Int { .. } | Rep::Bool => format!("(i64)(u64){x}"),
                    _ => return Err(unsupported("an index", vdt)),
                };
                let wrap = d.wrap && !vdt.is_unsigned() && vdt != DType::Bool;
                self.line(format!("const i64 w{i} = {w};"));
                if wrap {
                    self.line(format!(
                        "const i64 x{i} = w{i} < 0 ? w{i} + {}ll : w{i};",
                        d.size
                    ));
                } else {
                    self.line(format!("const i64 x{i} = w{i};"));
                }
                self.line(format!("{ty} v{i};"));
                self.open(format!("if ((u64)x{i} < {}ull)", d.size));
                let at = format!("{base} + x{i} * {}ll", d.stride);
                let v = load(param, &at, dt);
                self.line(format!("v{i} = {v};"));
                self.depth -= 1;
                self.open("} else");
                self.line(format!("v{i} = ({ty})0;"));
                self.line(format!(
                    "lf_set_status(status, {}ull, (u64)w{i}, {}ull, {i}ull);",
                    Status::IndexOutOfRange as u64,
                    d.size
                ));
                self.close();
                return Ok(());
            }
            Expr::Const(c) => constant(c, dt)?,
            Expr::LoopIndex { dim } => match (r, self.lane) {
                (Rep::Int { c, .. }, Some(l)) if dim + 1 == self.k.n_parallel => {
                    format!("({c})(i{dim} + {l})")
                }
                (Rep::Int { c, .. }, _) => format!("({c})i{dim}"),
                _ => return Err(CodegenError::Malformed("a non-integer loop index".into())),
            },
            Expr::Unary { op, x } => {
                let xdt = self.dtype(x.0 as usize);
                unary(op, &self.var(x.0 as usize), xdt)?
            }
            Expr::UnaryParam { op, x } => unary_param(op, &self.var(x.0 as usize), dt)?,
            Expr::Binary { op, a, b } => {
                let adt = self.dtype(a.0 as usize);
                let (x, y) = (self.var(a.0 as usize), self.var(b.0 as usize));
                binary(op, &x, &y, adt)?
            }
            Expr::Where { cond, a, b } => format!(
                "({} ? {} : {})",
                self.var(cond.0 as usize),
                self.var(a.0 as usize),
                self.var(b.0 as usize)
            ),
            Expr::Cast { x } => {
                let from = self.dtype(x.0 as usize);
                cast(&self.var(x.0 as usize), from, dt)?
            }
            Expr::Reduce { op, x } => self.finish_acc(i, op, x.0 as usize)?,
            Expr::Scan { op, x } => {
                self.scan_step(i, op, x.0 as usize)?;
                return Ok(());
            }
        };
        let name = self.var(i);
        self.line(format!("const {ty} {name} = {value};"));
        Ok(())
    }

    /// The C type a reduction of `xdt` values accumulates in.
    fn acc_type(op: Accum, xdt: DType) -> Result<&'static str, CodegenError> {
        Ok(match op {
            Accum::Sum if xdt == DType::F32 => "double",
            _ => reg(rep(xdt)?),
        })
    }

    fn init_accs(&mut self, phase: u32) -> Result<(), CodegenError> {
        for (i, op, x) in self.k.phase_reductions(phase) {
            if !self.needed[i] {
                continue;
            }
            let xdt = self.dtype(x.0 as usize);
            let r = rep(xdt)?;
            if r == Rep::F8 || (matches!(op, Accum::Any | Accum::All) && r != Rep::Bool) {
                return Err(unsupported(format!("reduce {op:?}"), xdt));
            }
            let ty = Self::acc_type(op, xdt)?;
            let init = match (r, op) {
                (_, Accum::ArgMax | Accum::ArgMin) => format!("({ty})0"),
                (Rep::Bool, Accum::Sum | Accum::Any | Accum::Max) => "false".into(),
                (Rep::Bool, _) => "true".into(),
                (_, Accum::Sum | Accum::Any) => format!("({ty})0"),
                (_, Accum::Prod | Accum::All) => format!("({ty})1"),
                (Rep::F32 | Rep::F64, Accum::Max) => format!("-lf_inf<{ty}>()"),
                (Rep::F32 | Rep::F64, Accum::Min) => format!("lf_inf<{ty}>()"),
                (Rep::Int { c, signed, bits }, Accum::Max) => {
                    if signed {
                        ilit(-(1i128 << (bits - 1)), c)
                    } else {
                        format!("({c})0")
                    }
                }
                (Rep::Int { c, signed, bits }, Accum::Min) => {
                    if signed {
                        ilit((1i128 << (bits - 1)) - 1, c)
                    } else {
                        ilit((1i128 << bits) - 1, c)
                    }
                }
                _ => return Err(unsupported(format!("reduce {op:?}"), xdt)),
            };
            self.line(format!("{ty} a{i} = {init};"));
            if op == Accum::Sum
                && self.math == MathMode::Exact
                && matches!(xdt, DType::F32 | DType::F64)
            {
                self.line(format!("{ty} c{i} = ({ty})0;"));
            }
            if matches!(op, Accum::ArgMax | Accum::ArgMin) {
                self.line(format!("i64 ai{i} = 0;"));
            }
        }
        Ok(())
    }

    fn compensated(&self, op: Accum, xdt: DType) -> bool {
        op == Accum::Sum && self.math == MathMode::Exact && matches!(xdt, DType::F32 | DType::F64)
    }

    fn update_accs(&mut self, phase: u32) -> Result<(), CodegenError> {
        for (i, op, x) in self.k.phase_reductions(phase) {
            if !self.needed[i] {
                continue;
            }
            let xi = x.0 as usize;
            let xdt = self.dtype(xi);
            let r = rep(xdt)?;
            let v = format!("v{xi}");
            let a = format!("a{i}");
            let float = matches!(r, Rep::F32 | Rep::F64);
            let next = match (op, r) {
                (Accum::Sum, _) if float => {
                    let w = if xdt == DType::F32 {
                        format!("(double){v}")
                    } else {
                        v.clone()
                    };
                    if self.compensated(op, xdt) {
                        // Neumaier: the add's rounding error joins c, taken from the
                        // operand of larger magnitude (interp::reduce::sum).
                        let ty = Self::acc_type(op, xdt)?;
                        self.open("");
                        self.line(format!("const {ty} x = {w};"));
                        self.line(format!("const {ty} t = {a} + x;"));
                        self.line(format!(
                            "c{i} += lf_fabs({a}) >= lf_fabs(x) ? ({a} - t) + x : (x - t) + {a};"
                        ));
                        self.line(format!("{a} = t;"));
                        self.close();
                        continue;
                    }
                    // (float32 values widened into the double accumulator)
                    combine(op, r, xdt, &a, &w).expect("float sums combine")
                }
                (Accum::ArgMax | Accum::ArgMin, _) => {
                    let gt = if op == Accum::ArgMax { ">" } else { "<" };
                    let better = if float {
                        format!("(({v} {gt} {a} || {v} != {v}) && {a} == {a})")
                    } else {
                        format!("({v} {gt} {a})")
                    };
                    self.open("");
                    self.line(format!("const bool take = pos == 0 || {better};"));
                    self.line(format!("if (take) {{ {a} = {v}; ai{i} = pos; }}"));
                    self.close();
                    continue;
                }
                _ => combine(op, r, xdt, &a, &v)
                    .ok_or_else(|| unsupported(format!("reduce {op:?}"), xdt))?,
            };
            self.line(format!("{a} = {next};"));
        }
        Ok(())
    }

    /// The reduction's value after its loop (the expression's value in its dtype).
    fn finish_acc(&mut self, i: usize, op: Accum, xi: usize) -> Result<String, CodegenError> {
        let xdt = self.dtype(xi);
        if matches!(op, Accum::ArgMax | Accum::ArgMin) {
            return Ok(format!("ai{i}"));
        }
        let mut v = format!("a{i}");
        if self.compensated(op, xdt) {
            // s + c, except where that is NaN from an infinite s: then s.
            let ty = Self::acc_type(op, xdt)?;
            self.line(format!("const {ty} s{i} = a{i} + c{i};"));
            v = format!("((s{i} != s{i} && a{i} == a{i}) ? a{i} : s{i})");
        }
        Ok(if op == Accum::Sum && self.dtype(i) == DType::F32 {
            format!("(float){v}")
        } else {
            v
        })
    }

    fn scan_type(op: ScanAccum, xdt: DType) -> Result<&'static str, CodegenError> {
        Ok(match op {
            ScanAccum::LogAddExp => "double",
            ScanAccum::Sum | ScanAccum::Prod if xdt == DType::F32 => "double",
            _ => reg(rep(xdt)?),
        })
    }

    fn init_scans(&mut self, phase: u32) -> Result<(), CodegenError> {
        for i in 0..self.k.exprs.len() {
            let e = &self.k.exprs[i];
            let (Expr::Scan { op, x }, Stage::Inner(s)) = (&e.expr, e.stage) else {
                continue;
            };
            if s != phase || !self.needed[i] {
                continue;
            }
            let (op, xdt, dt) = (*op, self.dtype(x.0 as usize), e.dtype);
            if op.output_dtype(xdt) != Some(dt) {
                return Err(unsupported(format!("scan {op:?}"), xdt));
            }
            let ty = Self::scan_type(op, xdt)?;
            let init = match op {
                ScanAccum::Prod => format!("({ty})1"),
                ScanAccum::LogAddExp => "-lf_inf<double>()".into(),
                _ => format!("({ty})0"),
            };
            self.line(format!("{ty} a{i} = {init};"));
            if matches!(op, ScanAccum::ArgMax | ScanAccum::ArgMin) {
                self.line(format!("i64 ai{i} = 0;"));
            }
        }
        Ok(())
    }

    fn scan_step(&mut self, i: usize, op: ScanAccum, xi: usize) -> Result<(), CodegenError> {
        let xdt = self.dtype(xi);
        let dt = self.dtype(i);
        let r = rep(xdt)?;
        let v = format!("v{xi}");
        let a = format!("a{i}");
        let float = matches!(r, Rep::F32 | Rep::F64);
        let out_ty = reg(rep(dt)?);
        match op {
            ScanAccum::Sum | ScanAccum::Prod => {
                let sym = if op == ScanAccum::Sum { "+" } else { "*" };
                let next = if float {
                    let w = if xdt == DType::F32 {
                        format!("(double){v}")
                    } else {
                        v.clone()
                    };
                    format!("{a} {sym} {w}")
                } else if let Rep::Int { c, .. } = r {
                    format!("({c})((u64){a} {sym} (u64){v})")
                } else {
                    return Err(unsupported(format!("scan {op:?}"), xdt));
                };
                self.line(format!("{a} = {next};"));
                let out = if xdt == DType::F32 {
                    format!("(float){a}")
                } else {
                    round(a.clone(), xdt)
                };
                self.line(format!("const {out_ty} v{i} = {out};"));
            }
            ScanAccum::Max | ScanAccum::Min | ScanAccum::ArgMax | ScanAccum::ArgMin => {
                let max = matches!(op, ScanAccum::Max | ScanAccum::ArgMax);
                let cmp = if max { ">=" } else { "<=" };
                // Ties move to the later element; each NaN takes over; an ordered
                // compare with a NaN running value is false.
                let wins = if float {
                    format!("({v} {cmp} {a} || {v} != {v})")
                } else {
                    format!("({v} {cmp} {a})")
                };
                self.line(format!("const bool t{i} = pos == 0 || {wins};"));
                self.line(format!("if (t{i}) {a} = {v};"));
                if matches!(op, ScanAccum::ArgMax | ScanAccum::ArgMin) {
                    self.line(format!("if (t{i}) ai{i} = pos;"));
                    self.line(format!("const i64 v{i} = ai{i};"));
                } else {
                    self.line(format!("const {out_ty} v{i} = {a};"));
                }
            }
            ScanAccum::LogAddExp => {
                let w = if r == Rep::F64 {
                    v.clone()
                } else {
                    format!("(double){v}")
                };
                self.line(format!("{a} = lf_scan_log_add_exp({w}, {a});"));
                let out = if r == Rep::F64 {
                    a.clone()
                } else {
                    round(format!("(float){a}"), xdt)
                };
                self.line(format!("const {out_ty} v{i} = {out};"));
            }
        }
        Ok(())
    }
}

/// Points per group of a vectorized kernel (one 4-element vector per contiguous
/// param: 16 bytes of float32).
const LANES: usize = 4;

/// Whether `k` runs vectorized ([`Emit::vector_function`]): an elementwise kernel (no
/// reduction phase, no data-dependent load) whose last parallel dim is a multiple of
/// [`LANES`], every access contiguous (stride 1) or broadcast (stride 0, loads only)
/// along it, every contiguous access starting at a multiple of [`LANES`] elements
/// (with the other strides, so each vector is aligned when the buffer is), and no
/// buffer both read and written (a group loads before it stores, but another
/// thread's group might not have).
fn vectorizes(k: &LoopKernel) -> bool {
    let np = k.n_parallel;
    if np == 0 || k.phases() > 0 || k.dims.len() != np || !k.dims[np - 1].is_multiple_of(LANES) {
        return false;
    }
    let last = np - 1;
    let aligned = |a: &Affine| {
        a.offset % LANES as i64 == 0 && a.strides[..last].iter().all(|s| s % LANES as i64 == 0)
    };
    let written = k.written_bufs();
    let loads_ok = k.exprs.iter().all(|e| match &e.expr {
        Expr::Load {
            param,
            index,
            dynamic,
        } => {
            dynamic.is_none()
                && !written.contains(&k.params[*param].buf)
                && match index.strides[last] {
                    0 => true,
                    1 => aligned(index),
                    _ => false,
                }
        }
        Expr::Reduce { .. } | Expr::Scan { .. } => false,
        _ => true,
    });
    loads_ok
        && k.stores
            .iter()
            .all(|s| s.index.strides[last] == 1 && aligned(&s.index))
}

/// Reduction points per parallel point from which a block shares them (below, one
/// thread per point keeps more points in flight).
const BLOCK_REDUCE_MIN: usize = 64;

/// Whether `k` runs one block per parallel point ([`Emit::block_function`]): a
/// reducing kernel in fast math (the partials combine in a tree, not in the
/// interpreter's order; exact math keeps each point on one thread) whose every
/// reduction has an identity for threads without points and combines associatively
/// (sum, prod, max, min, any, all: not the arg reductions), without scans (a running
/// value is sequential), over at least [`BLOCK_REDUCE_MIN`] points, and not along
/// columns ([`column_like`]).
fn block_reduces(k: &LoopKernel, math: MathMode) -> bool {
    math == MathMode::Fast
        && k.phases() > 0
        && k.reduce_dims().iter().product::<usize>() >= BLOCK_REDUCE_MIN
        && !column_like(k)
        && k.exprs.iter().all(|e| match e.expr {
            Expr::Scan { .. } => false,
            Expr::Reduce { op, .. } => !matches!(op, Accum::ArgMax | Accum::ArgMin),
            _ => true,
        })
}

/// Whether `k` reduces along columns: many parallel points, and a reduction-phase
/// load contiguous along the last parallel dim. There one thread per point is the
/// better layout: neighbouring threads read neighbouring elements (coalesced), where
/// a block per point would read one element per column stride.
fn column_like(k: &LoopKernel) -> bool {
    let np = k.n_parallel;
    np > 0
        && k.parallel_points() >= 1024
        && k.exprs.iter().any(|e| {
            matches!(e.stage, Stage::Inner(_))
                && matches!(&e.expr, Expr::Load { index, .. } if index.strides[np - 1] == 1)
        })
}

/// A register value of `dt` as the bits it is stored as.
fn stored_bits(v: &str, dt: DType) -> String {
    match dt {
        DType::Bool => format!("(u8){v}"),
        DType::F16 => format!("lf_f16_bits({v})"),
        DType::BF16 => format!("lf_bf16_bits({v})"),
        _ => v.to_string(),
    }
}

/// The register value of a stored element `raw` of `dt`.
fn lane_value(raw: &str, dt: DType) -> String {
    match dt {
        DType::Bool => format!("({raw} != 0)"),
        DType::F16 => format!("lf_f16_load({raw})"),
        DType::BF16 => format!("lf_bf16_load({raw})"),
        _ => raw.to_string(),
    }
}

/// The accumulator `a` combined with `v` by `op` on values of `xdt` (held as `r`):
/// one step of a reduction's loop, or of `lf_block_reduce`'s tree. `None` for the arg
/// reductions (which also keep an index) and rules `xdt` has none of.
fn combine(op: Accum, r: Rep, xdt: DType, a: &str, v: &str) -> Option<String> {
    let float = matches!(r, Rep::F32 | Rep::F64);
    Some(match (op, r) {
        (Accum::Sum | Accum::Any | Accum::Max, Rep::Bool) => format!("({a} || {v})"),
        (Accum::Prod | Accum::All | Accum::Min, Rep::Bool) => format!("({a} && {v})"),
        (Accum::Sum, _) if float => round(format!("({a} + {v})"), xdt),
        (Accum::Prod, _) if float => round(format!("({a} * {v})"), xdt),
        (Accum::Sum, Rep::Int { c, .. }) => format!("({c})((u64){a} + (u64){v})"),
        (Accum::Prod, Rep::Int { c, .. }) => format!("({c})((u64){a} * (u64){v})"),
        (Accum::Max, _) if float => format!("lf_maximum({a}, {v})"),
        (Accum::Min, _) if float => format!("lf_minimum({a}, {v})"),
        (Accum::Max, Rep::Int { .. }) => format!("({a} < {v} ? {v} : {a})"),
        (Accum::Min, Rep::Int { .. }) => format!("({v} < {a} ? {v} : {a})"),
        _ => return None,
    })
}

/// `offset + Σ strides·i_d`, with constants of suffix `sfx` (`ll`: 64-bit; none:
/// 32-bit, where [`fits_i32`] proved every partial sum fits).
fn index(a: &Affine, sfx: &str) -> String {
    let mut parts = Vec::new();
    if a.offset != 0 || a.strides.iter().all(|&s| s == 0) {
        parts.push(format!("{}{sfx}", a.offset));
    }
    for (d, &s) in a.strides.iter().enumerate() {
        match s {
            0 => {}
            1 => parts.push(format!("i{d}")),
            _ => parts.push(format!("{s}{sfx} * i{d}")),
        }
    }
    parts.join(" + ")
}

/// Whether every index of `k` fits 32-bit arithmetic: the dims and the parallel point
/// count, and for each affine access its constant, every term `s·i` over its range
/// and (so) every partial sum, since a partial sum lies between the access's
/// smallest and largest value when the terms are added to the constant in order.
fn fits_i32(k: &LoopKernel) -> bool {
    let small = |v: i128| (i128::from(i32::MIN)..=i128::from(i32::MAX)).contains(&v);
    if !small(k.parallel_points() as i128) || !k.dims.iter().all(|&n| small(n as i128)) {
        return false;
    }
    let affine_ok = |a: &Affine| {
        small(a.offset as i128)
            && a.strides
                .iter()
                .zip(&k.dims)
                .all(|(&s, &n)| small(s as i128) && small(s as i128 * (n as i128 - 1).max(0)))
            && a.range(&k.dims)
                .is_none_or(|(lo, hi)| small(lo) && small(hi))
    };
    let loads_ok = k.exprs.iter().all(|e| match &e.expr {
        Expr::Load { index, .. } => affine_ok(index),
        _ => true,
    });
    loads_ok && k.stores.iter().all(|s| affine_ok(&s.index))
}

/// The register value of element `at` of param `param` (of dtype `dt`).
fn load(param: usize, at: &str, dt: DType) -> String {
    lane_value(&format!("p{param}[{at}]"), dt)
}

fn constant(c: Const, dt: DType) -> Result<String, CodegenError> {
    let r = rep(dt)?;
    Ok(match (r, c) {
        (Rep::Bool, Const::Bool(b)) => b.to_string(),
        (Rep::Int { c, .. }, Const::Int(i)) => ilit(i, c),
        (Rep::F32 | Rep::F64, Const::Float(f)) => flit(f, r),
        _ => return Err(CodegenError::Malformed(format!("constant {c} of {dt}"))),
    })
}

fn unary(op: UnaryOp, x: &str, dt: DType) -> Result<String, CodegenError> {
    use UnaryOp::*;
    let r = rep(dt)?;
    let name = Op::Unary(op).name();
    Ok(match r {
        Rep::Bool => match op {
            Sign | Sgn | Relu | Floor | Ceil | Round | Trunc => x.to_string(),
            LogicalNot | BitwiseNot => format!("(!{x})"),
            IsNan | IsInf | IsPosInf | IsNegInf | Signbit => "false".into(),
            IsFinite | IsReal => "true".into(),
            _ => return Err(unsupported(name, dt)),
        },
        Rep::Int { c, signed, .. } => match op {
            Neg => format!("({c})(0ull - (u64){x})"),
            Abs if signed => format!("({x} < 0 ? ({c})(0ull - (u64){x}) : {x})"),
            Relu if signed => format!("({x} < 0 ? ({c})0 : {x})"),
            Abs | Relu | Floor | Ceil | Round | Trunc => x.to_string(),
            Sign | Sgn if signed => format!("({c})({x} > 0 ? 1 : ({x} < 0 ? -1 : 0))"),
            Sign | Sgn => format!("({c})({x} != 0)"),
            LogicalNot => format!("({x} == 0)"),
            BitwiseNot => format!("({c})(~{x})"),
            Square => format!("({c})((u64){x} * (u64){x})"),
            IsNan | IsInf | IsPosInf | IsNegInf => "false".into(),
            IsFinite | IsReal => "true".into(),
            Signbit if signed => format!("({x} < 0)"),
            Signbit => "false".into(),
            _ => return Err(unsupported(name, dt)),
        },
        Rep::F32 | Rep::F64 => {
            let ty = reg(r);
            let out = match op {
                Neg => format!("(-{x})"),
                Abs => format!("lf_fabs({x})"),
                Sqrt => format!("lf_sqrt({x})"),
                Rsqrt => format!("(({ty})1 / lf_sqrt({x}))"),
                Reciprocal => format!("(({ty})1 / {x})"),
                Floor => format!("lf_floor({x})"),
                Ceil => format!("lf_ceil({x})"),
                Trunc => format!("lf_trunc({x})"),
                Round => format!("lf_rint({x})"),
                Frac => format!("({x} - lf_trunc({x}))"),
                Square => format!("({x} * {x})"),
                Relu => format!("({x} < ({ty})0 ? ({ty})0 : {x})"),
                Sign | Sgn => {
                    format!("({x} > ({ty})0 ? ({ty})1 : ({x} < ({ty})0 ? ({ty})-1 : ({ty})0))")
                }
                LogicalNot => return Ok(format!("({x} == ({ty})0)")),
                IsNan => return Ok(format!("({x} != {x})")),
                IsInf => return Ok(format!("(lf_fabs({x}) == lf_inf<{ty}>())")),
                IsFinite => return Ok(format!("(lf_fabs({x}) < lf_inf<{ty}>())")),
                IsPosInf => return Ok(format!("({x} == lf_inf<{ty}>())")),
                IsNegInf => return Ok(format!("({x} == -lf_inf<{ty}>())")),
                IsReal => return Ok("true".into()),
                Signbit => return Ok(format!("lf_signbit({x})")),
                BitwiseNot => return Err(unsupported(name, dt)),
                Exp | Log | Sin | Cos | Tanh | Sigmoid | Exp2 | Expm1 | Log2 | Log10 | Log1p
                | Tan | Asin | Acos | Atan | Sinh | Cosh | Asinh | Acosh | Atanh | Erf | Erfc
                | Erfinv | Silu | Mish | Hardsigmoid | Hardswish => format!("lf_{name}({x})"),
                // complex values never enter loop kernels
                RealPart | ImagPart | Conj => return Err(unsupported(name, dt)),
            };
            round(out, dt)
        }
        Rep::F8 => return Err(unsupported(name, dt)),
    })
}

/// A value of `dt` (the stored type) converted from f64 in one rounding, then held
/// in its compute type: `nan_to_num`'s replacements.
fn stored_from_f64(x: f64, dt: DType) -> f64 {
    match dt {
        DType::F16 => f16::from_f64(x).to_f64(),
        DType::BF16 => bf16::from_f64(x).to_f64(),
        DType::F32 => x as f32 as f64,
        _ => x,
    }
}

fn unary_param(op: UnaryParamOp, x: &str, dt: DType) -> Result<String, CodegenError> {
    let r = rep(dt)?;
    match (r, op) {
        (Rep::Bool | Rep::Int { .. }, UnaryParamOp::NanToNum { .. }) => Ok(x.to_string()),
        (Rep::Bool | Rep::Int { .. }, UnaryParamOp::Hardtanh { min_val, max_val }) => {
            let (lo, hi) = (min_val as i128, max_val as i128);
            let (tmin, tmax) = if dt == DType::Bool {
                (0, 1)
            } else {
                dt.integer_range().unwrap_or((0, 0))
            };
            let c = reg(r);
            let lit = |v: i128| {
                if dt == DType::Bool {
                    (v != 0).to_string()
                } else {
                    ilit(v, c)
                }
            };
            // The interpreter: clamp in i128, keep `a` where the result does not
            // fit the dtype.
            if lo > hi {
                return Ok(if (tmin..=tmax).contains(&hi) {
                    lit(hi)
                } else {
                    x.to_string()
                });
            }
            if lo > tmax || hi < tmin {
                return Ok(x.to_string());
            }
            let mut v = x.to_string();
            if lo > tmin {
                let l = lit(lo);
                v = format!("({v} < {l} ? {l} : {v})");
            }
            if hi < tmax {
                let h = lit(hi);
                v = format!("({v} > {h} ? {h} : {v})");
            }
            Ok(v)
        }
        (
            Rep::F32 | Rep::F64,
            UnaryParamOp::NanToNum {
                nan,
                posinf,
                neginf,
            },
        ) => {
            let ty = reg(r);
            let n = flit(stored_from_f64(nan, dt), r);
            let p = flit(stored_from_f64(posinf, dt), r);
            let m = flit(stored_from_f64(neginf, dt), r);
            Ok(format!(
                "({x} != {x} ? {n} : ({x} == lf_inf<{ty}>() ? {p} : ({x} == -lf_inf<{ty}>() ? {m} : {x})))"
            ))
        }
        (Rep::F32 | Rep::F64, _) => {
            // Parameters convert to the compute type as the interpreter's `c(...)`;
            // where it computes a parameter in the compute type, so does this.
            let f = |v: f64| flit(v, r);
            let out = match op {
                UnaryParamOp::NanToNum { .. } => unreachable!("matched above"),
                UnaryParamOp::Logit { eps } => match eps {
                    Some(e) if e >= 0.0 => {
                        let hi = if r == Rep::F64 {
                            1.0 - e
                        } else {
                            f64::from(1.0f32 - e as f32)
                        };
                        format!("lf_logit({x}, 1, {}, {})", f(e), f(hi))
                    }
                    _ => format!("lf_logit({x}, 0, {}, {})", f(0.0), f(1.0)),
                },
                UnaryParamOp::RoundDecimals { decimals } => {
                    let ten = 10f64.powf(decimals.unsigned_abs() as f64);
                    format!(
                        "lf_round_decimals({x}, {}, {})",
                        i32::from(decimals < 0),
                        f(ten)
                    )
                }
                UnaryParamOp::Gelu { tanh: false } => {
                    format!("lf_gelu({x}, {})", f(std::f64::consts::FRAC_1_SQRT_2))
                }
                UnaryParamOp::Gelu { tanh: true } => {
                    let beta = std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5;
                    format!("lf_gelu_tanh({x}, {}, {})", f(beta), f(0.044715))
                }
                UnaryParamOp::Softplus { beta, threshold } => {
                    format!("lf_softplus({x}, {}, {})", f(beta), f(threshold))
                }
                UnaryParamOp::Elu {
                    alpha,
                    scale,
                    input_scale,
                } => format!(
                    "lf_elu({x}, {}, {}, {})",
                    f(input_scale),
                    f(alpha * scale),
                    f(scale)
                ),
                UnaryParamOp::LeakyRelu { negative_slope } => {
                    format!("lf_leaky_relu({x}, {})", f(negative_slope))
                }
                UnaryParamOp::Hardtanh { min_val, max_val } => {
                    format!("lf_hardtanh({x}, {}, {})", f(min_val), f(max_val))
                }
            };
            Ok(round(out, dt))
        }
        _ => Err(unsupported(op.name(), dt)),
    }
}

fn binary(op: BinaryOp, x: &str, y: &str, dt: DType) -> Result<String, CodegenError> {
    use BinaryOp::*;
    let r = rep(dt)?;
    let name = Op::Binary(op).name();
    Ok(match r {
        Rep::Bool => match op {
            Add | Maximum | LogicalOr | BitwiseOr | Fmax => format!("({x} || {y})"),
            Mul | Minimum | LogicalAnd | BitwiseAnd | Fmin => format!("({x} && {y})"),
            Eq => format!("({x} == {y})"),
            Ne | LogicalXor | BitwiseXor => format!("({x} != {y})"),
            Lt => format!("((int){x} < (int){y})"),
            Le => format!("((int){x} <= (int){y})"),
            Gt => format!("((int){x} > (int){y})"),
            Ge => format!("((int){x} >= (int){y})"),
            _ => return Err(unsupported(name, dt)),
        },
        Rep::Int { c, signed, bits } => match op {
            Add => format!("({c})((u64){x} + (u64){y})"),
            Sub => format!("({c})((u64){x} - (u64){y})"),
            Mul => format!("({c})((u64){x} * (u64){y})"),
            DivFloor | DivTrunc | Remainder | Fmod => {
                let kind = match op {
                    DivFloor => 0,
                    DivTrunc => 1,
                    Remainder => 2,
                    _ => 3,
                };
                let min = if signed {
                    ilit(-(1i128 << (bits - 1)), c)
                } else {
                    format!("({c})0")
                };
                format!(
                    "lf_idiv<{c}>({x}, {y}, {kind}, {min}, {}, status)",
                    i32::from(signed)
                )
            }
            Maximum | Fmax => format!("({x} < {y} ? {y} : {x})"),
            Minimum | Fmin => format!("({y} < {x} ? {y} : {x})"),
            Eq => format!("({x} == {y})"),
            Ne => format!("({x} != {y})"),
            Lt => format!("({x} < {y})"),
            Le => format!("({x} <= {y})"),
            Gt => format!("({x} > {y})"),
            Ge => format!("({x} >= {y})"),
            LogicalAnd => format!("({x} != 0 && {y} != 0)"),
            LogicalOr => format!("({x} != 0 || {y} != 0)"),
            LogicalXor => format!("(({x} != 0) != ({y} != 0))"),
            BitwiseAnd => format!("({c})({x} & {y})"),
            BitwiseOr => format!("({c})({x} | {y})"),
            BitwiseXor => format!("({c})({x} ^ {y})"),
            Pow => format!("lf_int_pow<{c}>({x}, {y})"),
            BitwiseLeftShift => format!("lf_shift_left<{c}>({x}, {y}, {bits})"),
            BitwiseRightShift => {
                format!(
                    "lf_shift_right<{c}>({x}, {y}, {bits}, {})",
                    i32::from(signed)
                )
            }
            Gcd => format!("lf_gcd<{c}>({x}, {y})"),
            Lcm => format!("lf_lcm<{c}>({x}, {y}, {bits})"),
            _ => return Err(unsupported(name, dt)),
        },
        Rep::F32 | Rep::F64 => {
            let ty = reg(r);
            let out = match op {
                Add => format!("({x} + {y})"),
                Sub => format!("({x} - {y})"),
                Mul => format!("({x} * {y})"),
                Div => format!("({x} / {y})"),
                DivTrunc => format!("lf_trunc({x} / {y})"),
                Maximum => format!("lf_maximum({x}, {y})"),
                Minimum => format!("lf_minimum({x}, {y})"),
                Eq => return Ok(format!("({x} == {y})")),
                Ne => return Ok(format!("({x} != {y})")),
                Lt => return Ok(format!("({x} < {y})")),
                Le => return Ok(format!("({x} <= {y})")),
                Gt => return Ok(format!("({x} > {y})")),
                Ge => return Ok(format!("({x} >= {y})")),
                LogicalAnd => return Ok(format!("({x} != ({ty})0 && {y} != ({ty})0)")),
                LogicalOr => return Ok(format!("({x} != ({ty})0 || {y} != ({ty})0)")),
                LogicalXor => return Ok(format!("(({x} != ({ty})0) != ({y} != ({ty})0))")),
                // On the stored type's bits: one function per dtype, no rounding after.
                Nextafter => {
                    let sfx = match dt {
                        DType::F16 => "f16",
                        DType::BF16 => "bf16",
                        DType::F32 => "f32",
                        _ => "f64",
                    };
                    return Ok(format!("lf_nextafter_{sfx}({x}, {y})"));
                }
                DivFloor | Remainder | Fmod | Pow | Atan2 | Fmax | Fmin | Hypot | Copysign
                | Logaddexp | Logaddexp2 | Xlogy => format!("lf_{name}({x}, {y})"),
                _ => return Err(unsupported(name, dt)),
            };
            round(out, dt)
        }
        Rep::F8 => return Err(unsupported(name, dt)),
    })
}

/// `x` of `from` converted to `to` with the interpreter's cast rules (the CPU
/// backend's `cast`).
fn cast(x: &str, from: DType, to: DType) -> Result<String, CodegenError> {
    let (fr, tr) = (rep(from)?, rep(to)?);
    if from == to {
        return Ok(x.to_string());
    }
    if fr == Rep::F8 {
        let f = f8_decode(x, from);
        return cast(&f, DType::F32, to);
    }
    // An integer or bool value widened to 64 bits by its signedness.
    let wide = |x: &str| match fr {
        Rep::Int { signed: true, .. } => format!("(i64){x}"),
        _ => format!("(u64){x}"),
    };
    Ok(match tr {
        Rep::Bool => match fr {
            Rep::Bool => x.to_string(),
            Rep::Int { .. } => format!("({x} != 0)"),
            _ => format!("({x} != 0)"),
        },
        Rep::Int { c, .. } => match fr {
            Rep::Bool | Rep::Int { .. } => format!("({c}){}", wide(x)),
            Rep::F32 | Rep::F64 if to == DType::U64 => format!("lf_f2u64({x})"),
            Rep::F32 | Rep::F64 => format!("({c})lf_f2i64({x})"),
            Rep::F8 => unreachable!("decoded above"),
        },
        Rep::F32 | Rep::F64 | Rep::F8 => {
            let target = if tr == Rep::F64 { "double" } else { "float" };
            let f = match fr {
                Rep::Bool | Rep::Int { .. } => format!("({target}){}", wide(x)),
                _ => format!("({target}){x}"),
            };
            if tr == Rep::F8 {
                f8_encode(&f, to)
            } else {
                round(f, to)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_exact_and_typed() {
        assert_eq!(flit(0.5, Rep::F32), "0.5f");
        assert_eq!(flit(1.0, Rep::F64), "1.0");
        assert_eq!(flit(1e300, Rep::F64), "1e300");
        assert_eq!(flit(1e300, Rep::F32), "lf_inf<float>()");
        assert_eq!(flit(f64::NEG_INFINITY, Rep::F64), "-lf_inf<double>()");
        assert_eq!(flit(0.1, Rep::F32), "0.1f");
        assert_eq!(ilit(-1, "i8"), "(i8)0xffffffffffffffffull");
        assert_eq!(ilit(7, "u8"), "(u8)7");
        assert_eq!(ilit(u64::MAX as i128, "u64"), "(u64)0xffffffffffffffffull");
        assert_eq!(ilit(1 << 40, "i64"), "(i64)1099511627776ll");
    }

    /// `out[i] = in[stride·i]` over `n` points (a strided copy).
    fn strided_copy(n: usize, stride: i64) -> LoopKernel {
        use lazyfuse_ir::kernel::{BufId, ExprId, ExprNode, Param};
        let len = (n - 1) * stride as usize + 1;
        LoopKernel {
            name: "k0_copy".into(),
            nodes: vec![],
            params: vec![
                Param {
                    buf: BufId(0),
                    dtype: DType::F32,
                    len,
                    writes: false,
                },
                Param {
                    buf: BufId(1),
                    dtype: DType::F32,
                    len: n,
                    writes: true,
                },
            ],
            dims: vec![n],
            n_parallel: 1,
            exprs: vec![ExprNode {
                expr: Expr::Load {
                    param: 0,
                    index: Affine {
                        offset: 0,
                        strides: vec![stride],
                    },
                    dynamic: None,
                },
                dtype: DType::F32,
                stage: Stage::Outer(0),
            }],
            stores: vec![StoreOp {
                param: 1,
                index: Affine {
                    offset: 0,
                    strides: vec![1],
                },
                value: ExprId(0),
            }],
        }
    }

    #[test]
    fn indices_are_32_bit_where_every_access_fits() {
        let small = kernel_source(&strided_copy(1000, 3), MathMode::Fast).unwrap();
        assert!(
            small.function.contains("const i32 i0 = (i32)pt;"),
            "{}",
            small.function
        );
        assert!(small.function.contains("p0[3 * i0]"));
        // 2^30 points at stride 4 reach past 2^31: 64-bit.
        let big = kernel_source(&strided_copy(1 << 30, 4), MathMode::Fast).unwrap();
        assert!(
            big.function.contains("const i64 i0 = pt;"),
            "{}",
            big.function
        );
        assert!(big.function.contains("p0[4ll * i0]"));
    }

    #[test]
    fn contiguous_aligned_elementwise_kernels_take_groups_of_four() {
        let copy = kernel_source(&strided_copy(64, 1), MathMode::Fast).unwrap();
        assert_eq!(copy.group, 4);
        assert!(
            copy.function.contains("lf_vload4(&p0[i0])"),
            "{}",
            copy.function
        );
        assert!(copy.function.contains("lf_vstore4(&p1[i0]"));
        // not a multiple of four points, a strided read, an unaligned start: scalar
        assert_eq!(
            kernel_source(&strided_copy(62, 1), MathMode::Fast)
                .unwrap()
                .group,
            1
        );
        assert_eq!(
            kernel_source(&strided_copy(64, 2), MathMode::Fast)
                .unwrap()
                .group,
            1
        );
        let mut shifted = strided_copy(64, 1);
        shifted.params[0].len += 1;
        if let Expr::Load { index, .. } = &mut shifted.exprs[0].expr {
            index.offset = 1;
        }
        assert_eq!(kernel_source(&shifted, MathMode::Fast).unwrap().group, 1);
    }

    #[test]
    fn casts_follow_the_cpu_rules() {
        assert_eq!(
            cast("v0", DType::F64, DType::F16).unwrap(),
            "lf_round_f16((float)v0)"
        );
        assert_eq!(cast("v0", DType::F32, DType::U64).unwrap(), "lf_f2u64(v0)");
        assert_eq!(cast("v0", DType::U8, DType::I8).unwrap(), "(i8)(u64)v0");
        assert!(cast("v0", DType::F8E4M3FN, DType::F32)
            .unwrap()
            .starts_with("lf_f8_decode(v0, 3, 7, 0)"));
        assert!(matches!(
            cast("v0", DType::C64, DType::F32),
            Err(CodegenError::CudaUnsupported(_))
        ));
    }
}
