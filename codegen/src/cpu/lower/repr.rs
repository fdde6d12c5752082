//! How kernel values sit in Cranelift registers: a representation per dtype
//! ([`Rep`]), its register type, and the memory flags of every load and store.

use crate::CodegenError;
use cranelift_codegen::ir::types::{F32, F64, I16, I32, I64, I8};
use cranelift_codegen::ir::{MemFlagsData, Type};
use lazyfuse_ir::DType;

pub(super) type R<T> = Result<T, CodegenError>;

/// How a dtype's values sit in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rep {
    Bool,
    Int {
        ty: Type,
        signed: bool,
    },
    /// f16, bf16 and f32
    F32,
    F64,
    /// a float8 code
    F8,
}

pub(super) fn rep(dt: DType) -> R<Rep> {
    Ok(match dt {
        DType::Bool => Rep::Bool,
        DType::U8 => Rep::Int {
            ty: I8,
            signed: false,
        },
        DType::I8 => Rep::Int {
            ty: I8,
            signed: true,
        },
        DType::I16 => Rep::Int {
            ty: I16,
            signed: true,
        },
        DType::U16 => Rep::Int {
            ty: I16,
            signed: false,
        },
        DType::I32 => Rep::Int {
            ty: I32,
            signed: true,
        },
        DType::U32 => Rep::Int {
            ty: I32,
            signed: false,
        },
        DType::I64 => Rep::Int {
            ty: I64,
            signed: true,
        },
        DType::U64 => Rep::Int {
            ty: I64,
            signed: false,
        },
        DType::F16 | DType::BF16 | DType::F32 => Rep::F32,
        DType::F64 => Rep::F64,
        d if d.is_float8() => Rep::F8,
        d => {
            return Err(CodegenError::Unsupported(format!(
                "{d} values in a loop kernel"
            )))
        }
    })
}

pub(super) fn reg(r: Rep) -> Type {
    match r {
        Rep::Bool | Rep::F8 => I8,
        Rep::Int { ty, .. } => ty,
        Rep::F32 => F32,
        Rep::F64 => F64,
    }
}

/// The suffix of the runtime functions for a float compute type.
pub(super) fn fsuffix(r: Rep) -> &'static str {
    if r == Rep::F64 {
        "f64"
    } else {
        "f32"
    }
}

pub(super) fn unsupported(what: impl std::fmt::Display, dt: DType) -> CodegenError {
    CodegenError::Unsupported(format!("{what} on {dt}"))
}

pub(super) fn flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}
