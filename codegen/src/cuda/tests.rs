//! The CUDA generator's unit tests.

use super::*;
use lazyfuse_ir::kernel::{Affine, Expr, ParamId, Stage, StoreOp};
use lazyfuse_ir::DType;

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
                param: ParamId(0),
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
            param: ParamId(1),
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
