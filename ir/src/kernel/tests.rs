//! The kernel IR's unit tests.

use super::*;
use crate::dtype::DType;

/// `out[i] = table[idx[i]]` through a dynamic index into `table_len` elements.
fn gather(table_len: usize, size: u64, stride: i64, wrap: bool) -> LoopKernel {
    let param = |len, dtype, writes| Param {
        buf: BufId(0),
        dtype,
        len,
        writes,
    };
    LoopKernel {
        name: "gather".into(),
        nodes: vec![],
        params: vec![
            param(table_len, DType::F32, false),
            param(4, DType::I64, false),
            param(4, DType::F32, true),
        ],
        dims: vec![4],
        n_parallel: 1,
        exprs: vec![
            ExprNode {
                expr: Expr::Load {
                    param: ParamId(1),
                    index: Affine {
                        offset: 0,
                        strides: vec![1],
                    },
                    dynamic: None,
                },
                dtype: DType::I64,
                stage: Stage::Outer(0),
            },
            ExprNode {
                expr: Expr::Load {
                    param: ParamId(0),
                    index: Affine {
                        offset: 0,
                        strides: vec![0],
                    },
                    dynamic: Some(DynIndex {
                        value: ExprId(0),
                        size,
                        stride,
                        wrap,
                        error: IndexError::Take,
                    }),
                },
                dtype: DType::F32,
                stage: Stage::Outer(0),
            },
        ],
        stores: vec![StoreOp {
            param: ParamId(2),
            index: Affine {
                offset: 0,
                strides: vec![1],
            },
            value: ExprId(1),
        }],
    }
}

#[test]
fn dynamic_loads_are_bounded_by_size_and_stride() {
    for wrap in [false, true] {
        // values pass the check only in [0, size): 3 elements of stride 2
        assert!(gather(5, 3, 2, wrap).verify().is_ok());
        let err = gather(4, 3, 2, wrap).verify().unwrap_err();
        assert!(err.contains("out of bounds"), "{err}");
        // an empty dim: no value passes, no access happens
        assert!(gather(0, 0, 1, wrap).verify().is_ok());
    }
    let text = gather(5, 3, 2, false).structure();
    assert!(text.contains("check(v0, 3)*2; take"), "{text}");
    assert!(gather(5, 3, 2, true).structure().contains("wrap(v0, 3)*2"));
    assert!(gather(5, 1 << 63, 1, true).verify().is_err());
}

#[test]
fn index_errors_word_the_interpreters_messages() {
    assert_eq!(
        IndexError::IndexSelect { in_self: false }.message(-1, 3),
        "INDICES element is out of DATA bounds, id=-1 axis_dim=3"
    );
    assert_eq!(
        IndexError::IndexSelect { in_self: true }.message(4, 1),
        "index out of range in self"
    );
}
