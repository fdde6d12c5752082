//! Scalar values of one point: addresses, loads,
//! constants, runtime calls, the status block, and rounding of narrow floats.

use super::CodegenError;
use super::{flags, reg, rep, unsupported, Lower, Rep, R};
use crate::emitter;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::types::{F32, F32X4, I16, I32, I32X4, I64, I8};
use cranelift_codegen::ir::{AbiParam, BlockArg, FuncRef, InstBuilder, MemFlagsData, Type, Value};
use cranelift_module::{Linkage, Module};
use lazyfuse_ir::kernel::{Const, ExprId};
use lazyfuse_ir::DType;

impl Lower<'_, '_> {
    pub(super) fn iconst(&mut self, ty: Type, v: i64) -> Value {
        self.b.ins().iconst(ty, v)
    }
}

impl Lower<'_, '_> {
    pub(super) fn val(&self, id: ExprId) -> Value {
        self.vals[id.0 as usize].expect("operands are evaluated before their users")
    }

    pub(super) fn dtype(&self, id: ExprId) -> DType {
        self.k.exprs[id.0 as usize].dtype
    }

    /// `base + (offset + Σ strides·i_d + extra) · size`
    pub(super) fn address(
        &mut self,
        param: usize,
        offset: &i64,
        strides: &[i64],
        extra: Option<Value>,
    ) -> R<Value> {
        // (each term scaled to bytes as it is made, and no product by one nor
        // sum with zero: fewer instructions for Cranelift to build and fold)
        let size = self.k.params[param].dtype.size_in_bytes() as i64;
        let mut terms: Vec<(Value, i64)> = strides
            .iter()
            .enumerate()
            .filter(|&(_, &s)| s != 0)
            .map(|(d, &s)| (self.b.use_var(self.idx[d]), s))
            .collect();
        terms.extend(extra.map(|e| (e, 1)));
        let mut addr = self.bases[param];
        for (v, s) in terms {
            let bytes = s.wrapping_mul(size);
            let t = if bytes == 1 {
                v
            } else {
                self.b.ins().imul_imm_s(v, bytes)
            };
            addr = self.b.ins().iadd(addr, t);
        }
        let off = offset.wrapping_mul(size);
        Ok(if off == 0 {
            addr
        } else {
            self.b.ins().iadd_imm_s(addr, off)
        })
    }

    /// [`Lower::address`] of the point `shift` points along the last dim.
    pub(super) fn shifted_address(
        &mut self,
        param: usize,
        offset: &i64,
        strides: &[i64],
        shift: i64,
    ) -> R<Value> {
        let last = strides[self.k.n_parallel - 1];
        let extra = (shift != 0).then(|| self.iconst(I64, shift * last));
        self.address(param, offset, strides, extra)
    }

    /// Calls runtime function `name` (declared on first use).
    pub(super) fn call(&mut self, name: &str, args: &[Value], ret: Type) -> R<Value> {
        let f = self.import(name, args, Some(ret))?;
        let inst = self.b.ins().call(f, args);
        Ok(self.b.inst_results(inst)[0])
    }

    /// Calls runtime function `name`, which returns nothing.
    pub(super) fn call_void(&mut self, name: &str, args: &[Value]) -> R<()> {
        let f = self.import(name, args, None)?;
        self.b.ins().call(f, args);
        Ok(())
    }

    /// Runtime function `name` taking `args`' types and returning `ret`, declared
    /// on first use.
    fn import(&mut self, name: &str, args: &[Value], ret: Option<Type>) -> R<FuncRef> {
        if let Some(f) = self.imports.get(name) {
            return Ok(*f);
        }
        let mut sig = self.module.make_signature();
        for &a in args {
            sig.params
                .push(AbiParam::new(self.b.func.dfg.value_type(a)));
        }
        sig.returns.extend(ret.map(AbiParam::new));
        let id = self
            .module
            .declare_function(name, Linkage::Import, &sig)
            .map_err(|e| CodegenError::Backend(format!("import {name}: {e}")))?;
        let f = self.module.declare_func_in_func(id, self.b.func);
        self.imports.insert(name.to_string(), f);
        self.names.push(name.to_string());
        Ok(f)
    }

    /// Sets the status (code and details) unless one is already set; emitted in a
    /// cold block the caller branches to, ending with a jump to `cont`. The code is
    /// claimed with a compare-and-swap, so that of threads sharing one status block
    /// exactly one writes its details.
    pub(super) fn set_status(
        &mut self,
        code: i64,
        details: [Value; 3],
        cont: cranelift_codegen::ir::Block,
        args: &[BlockArg],
    ) {
        let write = self.b.create_block();
        self.b.set_cold_block(write);
        let zero = self.iconst(I64, 0);
        let c = self.iconst(I64, code);
        // The status block is an aligned `[u64; STATUS_SLOTS]`.
        let old = self
            .b
            .ins()
            .atomic_cas(MemFlagsData::trusted(), self.status, zero, c);
        self.b.ins().brif(old, cont, args, write, &[]);
        self.b.switch_to_block(write);
        for (slot, d) in details.into_iter().enumerate() {
            self.b
                .ins()
                .store(flags(), d, self.status, 8 * (slot as i32 + 1));
        }
        self.b.ins().jump(cont, args);
    }

    /// Rounds an f32 register to `dt` when `dt` is float16/bfloat16 (`vnarrow`'s
    /// vector rounding on a splat, lane 0: the vector tiers' bits).
    pub(super) fn round(&mut self, v: Value, dt: DType) -> R<Value> {
        Ok(match dt {
            DType::F16 | DType::BF16 => {
                let s = self.b.ins().splat(F32X4, v);
                let r = self.vround_narrow(s, dt);
                self.b.ins().extractlane(r, 0)
            }
            _ => v,
        })
    }

    /// Expression `i`'s value ([`emitter::value`]: dispatched by its kind to the
    /// [`Emitter`](crate::emitter::Emitter) methods of `super::emitter`).
    pub(super) fn expr(&mut self, i: usize) -> R<Value> {
        emitter::value(self, i)
    }

    pub(super) fn zero(&mut self, r: Rep) -> Value {
        match r {
            Rep::F32 => self.b.ins().f32const(0.0),
            Rep::F64 => self.b.ins().f64const(0.0),
            other => self.iconst(reg(other), 0),
        }
    }

    pub(super) fn load(&mut self, addr: Value, dt: DType) -> R<Value> {
        Ok(match dt {
            DType::F16 => {
                let bits = self.b.ins().load(I16, flags(), addr, 0);
                let w = self.b.ins().uextend(I32, bits);
                // the vector conversion on a splat, lane 0
                let s = self.b.ins().splat(I32X4, w);
                let f = self.vf16_to_f32(s);
                self.b.ins().extractlane(f, 0)
            }
            // bfloat16 is the upper half of a float32.
            DType::BF16 => {
                let bits = self.b.ins().load(I16, flags(), addr, 0);
                let w = self.b.ins().uextend(I32, bits);
                let w = self.b.ins().ishl_imm_s(w, 16);
                self.b.ins().bitcast(F32, MemFlagsData::new(), w)
            }
            _ => self.b.ins().load(reg(rep(dt)?), flags(), addr, 0),
        })
    }

    /// The register value of `dt` as stored bits.
    pub(super) fn storage_bits(&mut self, v: Value, dt: DType) -> R<Value> {
        Ok(match dt {
            DType::F16 => {
                let bits = self.f16_code(v);
                self.b.ins().ireduce(I16, bits)
            }
            // Values of bfloat16 exprs are already rounded: their low half is zero.
            DType::BF16 => {
                let x = self.b.ins().bitcast(I32, MemFlagsData::new(), v);
                let hi = self.b.ins().ushr_imm_s(x, 16);
                self.b.ins().ireduce(I16, hi)
            }
            _ => v,
        })
    }

    pub(super) fn constant(&mut self, c: Const, dt: DType) -> R<Value> {
        let r = rep(dt)?;
        Ok(match (r, c) {
            (Rep::Bool, Const::Bool(b)) => self.iconst(I8, b as i64),
            (Rep::Int { ty, .. }, Const::Int(i)) => self.iconst(ty, i as i64),
            (Rep::F32, Const::Float(f)) => self.b.ins().f32const(f as f32),
            (Rep::F64, Const::Float(f)) => self.b.ins().f64const(f),
            _ => return Err(CodegenError::Malformed(format!("constant {c} of {dt}"))),
        })
    }

    /// An i64 as a value of representation `r` (loop indices).
    pub(super) fn index_value(&mut self, v: Value, r: Rep) -> R<Value> {
        Ok(match r {
            Rep::Int { ty: I64, .. } => v,
            Rep::Int { ty, .. } => self.b.ins().ireduce(ty, v),
            _ => return Err(CodegenError::Malformed("a non-integer loop index".into())),
        })
    }

    /// An integer (or bool) value widened to i64 by its signedness.
    pub(super) fn widen_int(&mut self, v: Value, dt: DType) -> R<Value> {
        Ok(match rep(dt)? {
            Rep::Int { ty: I64, .. } => v,
            Rep::Int { signed: true, .. } => self.b.ins().sextend(I64, v),
            Rep::Int { signed: false, .. } | Rep::Bool => self.b.ins().uextend(I64, v),
            _ => return Err(unsupported("an integer view", dt)),
        })
    }

    pub(super) fn bool_of(&mut self, c: Value) -> Value {
        // icmp/fcmp already give i8 0/1.
        c
    }

    pub(super) fn ftruthy(&mut self, v: Value, r: Rep) -> Value {
        let z = self.zero(r);
        self.b.ins().fcmp(FloatCC::NotEqual, v, z)
    }

    pub(super) fn fconst(&mut self, r: Rep, x: f64) -> Value {
        if r == Rep::F64 {
            self.b.ins().f64const(x)
        } else {
            self.b.ins().f32const(x as f32)
        }
    }
}
