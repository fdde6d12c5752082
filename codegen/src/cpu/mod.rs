//! The CPU backend: [`LoopKernel`]s compiled to native functions with Cranelift.
//!
//! [`CpuModule::compile`] translates a batch of kernels into one `JITModule` (one
//! finalize for the batch is cheaper than one module each) and hands out their entry
//! points as [`KernelFn`]s. The translation itself lives in `lower`; this file owns
//! the module, the ISA and the error type.
//!
//! Generated code calls Rust `extern "C"` functions for the long tail of scalar math
//! (transcendentals, float8 codes, float16 rounding); their addresses come from the
//! `symbols` lookup given to [`CpuModule::compile`] (`lazyfuse_runtime::jit_symbols`),
//! so this crate never depends on the runtime.

mod lower;
mod phase_reuse;
mod vmath;

pub use crate::CodegenError;
pub use lazyfuse_ir::kernel::KernelFn;

use cranelift_codegen::ir::{AbiParam, Function, Signature, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use lazyfuse_ir::kernel::{KernelCode, KernelSignature, LoopKernel, MathMode};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

/// A batch of compiled kernels. Owns the machine code: the [`KernelFn`]s that
/// [`CpuModule::entry`] returns must not be called after the module is dropped.
pub struct CpuModule {
    module: Option<JITModule>,
    entries: Vec<KernelFn>,
    /// what each entry was compiled for (the [`KernelCode`] contract)
    signatures: Vec<KernelSignature>,
}

// SAFETY: after `finalize_definitions` the module's code is immutable memory that
// nothing mutates until `Drop` (which takes `&mut self`, so no call through `&self` is
// in flight); the entry points are plain functions that touch only the buffers passed
// to them, so calling them from several threads at once is sound.
unsafe impl Send for CpuModule {}
// SAFETY: see `Send`: `&CpuModule` only hands out copies of immutable entry points.
unsafe impl Sync for CpuModule {}

impl std::fmt::Debug for CpuModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuModule")
            .field("kernels", &self.entries.len())
            .finish()
    }
}

/// The host ISA with our flags (verifier on in debug builds only: it costs a third
/// of a small kernel's compile time), built once per process: detecting the host's
/// features and building the flags is work every compile would otherwise repeat.
fn host_isa() -> Result<OwnedTargetIsa, CodegenError> {
    static ISA: OnceLock<Result<OwnedTargetIsa, String>> = OnceLock::new();
    ISA.get_or_init(|| build_host_isa().map_err(|e| e.to_string()))
        .clone()
        .map_err(CodegenError::Backend)
}

fn build_host_isa() -> Result<OwnedTargetIsa, CodegenError> {
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| {
        f.set(k, v)
            .map_err(|e| CodegenError::Backend(format!("flag {k}={v}: {e}")))
    };
    set(&mut flags, "opt_level", "speed")?;
    set(
        &mut flags,
        "enable_verifier",
        if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        },
    )?;
    set(&mut flags, "is_pic", "false")?;
    let isa =
        cranelift_native::builder().map_err(|e| CodegenError::Backend(format!("host ISA: {e}")))?;
    isa.finish(settings::Flags::new(flags))
        .map_err(|e| CodegenError::Backend(format!("host ISA: {e}")))
}

/// The kernel function's signature: `(params, status, begin, end)`.
fn kernel_signature(module: &dyn Module) -> Signature {
    let ptr = module.target_config().pointer_type();
    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(ptr));
    sig.params
        .push(AbiParam::new(cranelift_codegen::ir::types::I64));
    sig.params
        .push(AbiParam::new(cranelift_codegen::ir::types::I64));
    sig
}

/// Translates `kernel` into `ctx.func` (declaring the runtime functions it calls in
/// `module`); returns the names of those functions.
fn translate(
    module: &mut JITModule,
    ctx: &mut Context,
    kernel: &LoopKernel,
    index: u32,
    math: MathMode,
) -> Result<Vec<String>, CodegenError> {
    kernel.verify().map_err(CodegenError::Malformed)?;
    let reused = phase_reuse::reuse_phase_values(kernel);
    let kernel = match &reused {
        Some(r) => {
            r.verify().map_err(CodegenError::Malformed)?;
            r
        }
        None => kernel,
    };
    ctx.func =
        Function::with_name_signature(UserFuncName::user(0, index), kernel_signature(module));
    lower::lower(module, &mut ctx.func, kernel, math)
}

/// Runtime functions a module's code calls, by name: filled after the module's
/// kernels are translated (translation is what finds the names) and before
/// `finalize_definitions` resolves the calls through it.
type SymbolTable = Arc<Mutex<HashMap<String, usize>>>;

/// A module whose imports resolve through `table` (then `dlsym`, Cranelift's
/// fallback, for the libcalls Cranelift itself emits).
fn jit_module(isa: OwnedTargetIsa, table: &SymbolTable) -> JITModule {
    let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
    let table = table.clone();
    builder.symbol_lookup_fn(Box::new(move |name| {
        table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .map(|&p| p as *const u8)
    }));
    JITModule::new(builder)
}

impl CpuModule {
    /// Compiles `kernels` into one module with [`MathMode::Exact`] (values bit for
    /// bit the interpreter's); see [`CpuModule::compile_with`].
    pub fn compile(
        kernels: &[&LoopKernel],
        symbols: &dyn Fn(&str) -> Option<*const u8>,
    ) -> Result<CpuModule, CodegenError> {
        Self::compile_with(kernels, symbols, MathMode::Exact)
    }

    /// Compiles `kernels` into one module; `symbols` resolves the runtime functions
    /// the code calls (`lazyfuse_runtime::jit_symbols::lookup`); `math` says whether
    /// float math may be approximated and reordered.
    ///
    /// A name the lookup does not know is [`CodegenError::MissingSymbol`]; an op or
    /// dtype without a CPU kernel is [`CodegenError::Unsupported`].
    pub fn compile_with(
        kernels: &[&LoopKernel],
        symbols: &dyn Fn(&str) -> Option<*const u8>,
        math: MathMode,
    ) -> Result<CpuModule, CodegenError> {
        // One translation per kernel: the runtime functions the code calls are
        // collected while translating and resolved into the module's symbol table
        // before `finalize_definitions` links them (an unresolved import would panic
        // there, so a missing one is an error first).
        let table = SymbolTable::default();
        let mut module = jit_module(host_isa()?, &table);
        let result = Self::define_all(&mut module, kernels, math, &|names| {
            let mut t = table.lock().unwrap_or_else(|p| p.into_inner());
            for name in names {
                let ptr = symbols(name).ok_or_else(|| CodegenError::MissingSymbol(name.clone()))?;
                t.insert(name.clone(), ptr as usize);
            }
            Ok(())
        });
        let ids = match result {
            Ok(ids) => ids,
            Err(e) => {
                // SAFETY: no function of this module was handed out.
                unsafe { module.free_memory() };
                return Err(e);
            }
        };
        let entries = ids
            .into_iter()
            .map(|id| {
                let ptr = module.get_finalized_function(id);
                // SAFETY: the function was defined with `kernel_signature`, the
                // default (C) calling convention of the host, which is `KernelFn`'s.
                unsafe { std::mem::transmute::<*const u8, KernelFn>(ptr) }
            })
            .collect();
        Ok(CpuModule {
            module: Some(module),
            entries,
            signatures: kernels.iter().map(|k| KernelSignature::of(k)).collect(),
        })
    }

    /// Translates and defines every kernel, hands the runtime functions they call to
    /// `resolve` (which registers them), then links the module.
    fn define_all(
        module: &mut JITModule,
        kernels: &[&LoopKernel],
        math: MathMode,
        resolve: &dyn Fn(&BTreeSet<String>) -> Result<(), CodegenError>,
    ) -> Result<Vec<cranelift_module::FuncId>, CodegenError> {
        // The thread's last context: its register allocator's and analyses'
        // tables keep their capacity from one compile to the next, where a new
        // context would allocate and initialize them again for every batch.
        thread_local! {
            static CONTEXT: std::cell::Cell<Option<Context>> = const { std::cell::Cell::new(None) };
        }
        let mut ctx = CONTEXT.take().unwrap_or_else(|| module.make_context());
        module.clear_context(&mut ctx);
        let mut ids = Vec::with_capacity(kernels.len());
        let mut names = BTreeSet::new();
        let defined = kernels.iter().enumerate().try_for_each(|(i, k)| {
            names.extend(translate(module, &mut ctx, k, i as u32, math)?);
            let id = module
                .declare_function(
                    &format!("lf_kernel_{i}"),
                    Linkage::Local,
                    &ctx.func.signature,
                )
                .map_err(|e| CodegenError::Backend(e.to_string()))?;
            let defined = module
                .define_function(id, &mut ctx)
                .map_err(|e| CodegenError::Backend(format!("kernel {}: {e:?}", k.name)));
            module.clear_context(&mut ctx);
            ids.push(id);
            defined
        });
        CONTEXT.set(Some(ctx));
        defined?;
        resolve(&names)?;
        module
            .finalize_definitions()
            .map_err(|e| CodegenError::Backend(e.to_string()))?;
        Ok(ids)
    }

    /// The entry point of kernel `i` of the batch. It is valid only while `self`
    /// lives. Panics if `i` is not below the batch's size (a caller bug).
    pub fn entry(&self, i: usize) -> KernelFn {
        self.entries[i]
    }

    /// Number of kernels in the module.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the module holds no kernel.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

// SAFETY: `translate` verifies every kernel before lowering it (and its rewrite by
// `phase_reuse`, whose added accesses repeat a verified store's), the lowering keeps
// every access of the verified kernel's affine maps (data-dependent ones are checked
// in the code), and `signatures[j]` is taken from kernel `j`; the code lives until
// `Drop`, which `&self` excludes.
unsafe impl KernelCode for CpuModule {
    fn kernels(&self) -> usize {
        self.entries.len()
    }

    fn kernel(&self, j: usize) -> Option<(KernelFn, &KernelSignature)> {
        Some((*self.entries.get(j)?, self.signatures.get(j)?))
    }
}

impl Drop for CpuModule {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: the entry points must not outlive the module (documented on
            // `CpuModule` and `entry`); `&mut self` means no call through this
            // module's references is running.
            unsafe { m.free_memory() };
        }
    }
}

/// The Cranelift IR of `kernel`, as text (deterministic: equal kernels give equal
/// text), for `LAZYFUSE_DUMP_IR`, compiled with `math`. The runtime functions it
/// calls are listed first.
pub fn clif_text(kernel: &LoopKernel, math: MathMode) -> Result<String, CodegenError> {
    translated(kernel, math, |ctx, names| {
        let mut out = String::new();
        for (i, n) in names.iter().enumerate() {
            out.push_str(&format!("; import {i}: {n}\n"));
        }
        out.push_str(&ctx.func.display().to_string());
        Ok(out)
    })
}

/// The machine code Cranelift makes of `kernel` (its VCode after register
/// allocation, as text), for `LAZYFUSE_DUMP_IR=asm`: what the CPU actually runs, to
/// see what a lowering costs (constants reloaded in a loop, a pattern not matched).
pub fn asm_text(kernel: &LoopKernel, math: MathMode) -> Result<String, CodegenError> {
    let isa = host_isa()?;
    translated(kernel, math, |ctx, _| {
        ctx.set_disasm(true);
        let code = ctx
            .compile(&*isa, &mut Default::default())
            .map_err(|e| CodegenError::Backend(format!("kernel {}: {e:?}", kernel.name)))?;
        Ok(code.vcode.clone().unwrap_or_default())
    })
}

/// `text` of `kernel` translated alone (into a throwaway module, for the dumps),
/// given its context and the runtime functions it calls.
fn translated(
    kernel: &LoopKernel,
    math: MathMode,
    text: impl FnOnce(&mut Context, &[String]) -> Result<String, CodegenError>,
) -> Result<String, CodegenError> {
    let mut module = jit_module(host_isa()?, &SymbolTable::default());
    let mut ctx = module.make_context();
    let out =
        translate(&mut module, &mut ctx, kernel, 0, math).and_then(|names| text(&mut ctx, &names));
    // SAFETY: nothing was defined in this module.
    unsafe { module.free_memory() };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lazyfuse_ir::kernel::{
        Affine, BufId, Expr, ExprId, ExprNode, Param, ParamId, Stage, StoreOp,
    };
    use lazyfuse_ir::{BinaryOp, DType, UnaryOp};

    /// `out[i] = tanh(x[i]) + x[i]` over 8 points.
    fn kernel() -> LoopKernel {
        let index = Affine {
            offset: 0,
            strides: vec![1],
        };
        let node = |expr| ExprNode {
            expr,
            dtype: DType::F32,
            stage: Stage::Outer(0),
        };
        LoopKernel {
            name: "t".into(),
            nodes: vec![],
            params: vec![
                Param {
                    buf: BufId(0),
                    dtype: DType::F32,
                    len: 8,
                    writes: false,
                },
                Param {
                    buf: BufId(1),
                    dtype: DType::F32,
                    len: 8,
                    writes: true,
                },
            ],
            dims: vec![8],
            n_parallel: 1,
            exprs: vec![
                node(Expr::Load {
                    param: ParamId(0),
                    index: index.clone(),
                    dynamic: None,
                }),
                node(Expr::Unary {
                    op: UnaryOp::Tanh,
                    x: ExprId(0),
                }),
                node(Expr::Binary {
                    op: BinaryOp::Add,
                    a: ExprId(1),
                    b: ExprId(0),
                }),
            ],
            stores: vec![StoreOp {
                param: ParamId(1),
                index,
                value: ExprId(2),
            }],
        }
    }

    #[test]
    fn clif_text_is_deterministic_and_names_its_imports() {
        // Exact calls libm's tanh through jit_symbols; Fast computes it inline.
        let a = clif_text(&kernel(), MathMode::Exact).unwrap();
        let b = clif_text(&kernel(), MathMode::Exact).unwrap();
        assert_eq!(a, b);
        assert!(a.starts_with("; import 0: lf_tanh_f32\n"), "{a}");
        let fast = clif_text(&kernel(), MathMode::Fast).unwrap();
        assert!(
            !fast.contains("lf_tanh") && fast.contains("f32x4"),
            "{fast}"
        );
        assert!(a.contains("fadd"), "{a}");
        let mut other = kernel();
        other.exprs[2].expr = Expr::Binary {
            op: BinaryOp::Mul,
            a: ExprId(1),
            b: ExprId(0),
        };
        assert_ne!(clif_text(&other, MathMode::Exact).unwrap(), a);
    }

    #[test]
    fn malformed_kernels_and_complex_values_are_errors() {
        let mut bad = kernel();
        bad.params[0].len = 4;
        assert!(matches!(
            clif_text(&bad, MathMode::Fast),
            Err(CodegenError::Malformed(_))
        ));
        let mut c = kernel();
        c.params[0].dtype = DType::C64;
        c.params[1].dtype = DType::C64;
        for e in &mut c.exprs {
            e.dtype = DType::C64;
        }
        assert!(clif_text(&c, MathMode::Fast).is_err());
    }

    #[test]
    fn missing_symbols_are_errors_not_panics() {
        let e = CpuModule::compile(&[&kernel()], &|_| None).unwrap_err();
        assert!(matches!(e, CodegenError::MissingSymbol(ref n) if n == "lf_tanh_f32"));
    }

    #[test]
    fn a_batch_without_calls_compiles_and_runs() {
        let mut k = kernel();
        k.exprs[1].expr = Expr::Unary {
            op: UnaryOp::Neg,
            x: ExprId(0),
        };
        let m = CpuModule::compile(&[&k, &k], &|_| None).unwrap();
        assert_eq!(m.len(), 2);
        let x: Vec<f32> = (0..8).map(|v| v as f32).collect();
        let mut y = vec![0f32; 8];
        let params = [x.as_ptr() as *mut u8, y.as_mut_ptr() as *mut u8];
        let mut status = [0u64; lazyfuse_ir::kernel::STATUS_SLOTS];
        // SAFETY: both buffers hold 8 f32s, the status block 4 words, 0..8 are the
        // kernel's points, and `m` is alive.
        unsafe { m.entry(1)(params.as_ptr(), status.as_mut_ptr(), 0, 8) };
        assert_eq!(y, vec![0.0; 8]);
        assert_eq!(status, [0; 4]);
    }
}
