//! The dtype rules' unit tests.

use super::binary::{SUB_ONE_BOOL, SUB_TWO_BOOLS};
use super::*;
use crate::dtype::DType;
use crate::op::{BinaryOp, UnaryOp};
use crate::promote::OperandType;

fn t(d: DType) -> OperandType {
    OperandType::dimensioned(d)
}

#[test]
fn sub_refuses_bool_operands() {
    let err = binary(BinaryOp::Sub, t(DType::Bool), t(DType::Bool), DType::F32);
    assert_eq!(err.unwrap_err().to_string(), SUB_TWO_BOOLS);
    let err = binary(
        BinaryOp::Sub,
        t(DType::F32),
        OperandType::wrapped(DType::Bool),
        DType::F32,
    );
    assert_eq!(err.unwrap_err().to_string(), SUB_ONE_BOOL);
    assert_eq!(
        binary(BinaryOp::Add, t(DType::Bool), t(DType::Bool), DType::F32)
            .unwrap()
            .output,
        DType::Bool
    );
}

#[test]
fn scalar_on_the_left_names_the_mirrored_kernel() {
    let s = OperandType::wrapped(DType::I64);
    let err = binary(BinaryOp::Ge, s, t(DType::C64), DType::F32).unwrap_err();
    assert_eq!(
        err.to_string(),
        "\"le_cpu\" not implemented for 'ComplexFloat'"
    );
    let err = binary(BinaryOp::Ge, t(DType::C64), s, DType::F32).unwrap_err();
    assert_eq!(
        err.to_string(),
        "\"ge_cpu\" not implemented for 'ComplexFloat'"
    );
}

#[test]
fn storage_only_dtypes_are_unsupported_not_refused() {
    let c = OperandType::wrapped(DType::C128);
    // complex32 add is computed (through complex64, by the facade)
    let sig = binary(BinaryOp::Add, t(DType::F16), c, DType::F32).unwrap();
    assert_eq!(sig.compute, DType::C32);
    let err = binary(BinaryOp::Remainder, t(DType::F16), c, DType::F32).unwrap_err();
    assert!(!err.is_unsupported()); // PyTorch's own refusal
                                    // ...unless PyTorch refuses the op for that dtype itself.
    let err = binary(BinaryOp::Atan2, t(DType::F16), c, DType::F32).unwrap_err();
    assert_eq!(
        err.to_string(),
        "\"atan2_cpu\" not implemented for 'ComplexHalf'"
    );
    assert!(unary(UnaryOp::Exp, DType::F8E4M3FN, DType::F32)
        .unwrap_err()
        .is_unsupported());
}

#[test]
fn wide_unsigned_computes_where_promotion_allows() {
    let u = t(DType::U64);
    assert_eq!(
        binary(BinaryOp::Add, u, u, DType::F32).unwrap().output,
        DType::U64
    );
    assert_eq!(
        unary(UnaryOp::Neg, DType::U16, DType::F32).unwrap().output,
        DType::U16
    );
    assert!(binary(BinaryOp::Add, u, t(DType::I64), DType::F32).is_err());
}

#[test]
fn mm_message_uses_type_meta_names() {
    let err = matmul(DType::I64, DType::F16).unwrap_err();
    assert_eq!(
        err.to_string(),
        "expected m1 and m2 to have the same dtype, but got: long int != c10::Half"
    );
}
