//! The executor's unit tests.

use super::loops::{chunk_count, MIN_WORK_PER_CHUNK};
use super::*;
use lazyfuse_ir::kernel::{Affine, BufId, Expr, LoopKernel, ParamId};

#[test]
fn small_loops_are_one_chunk_and_large_ones_split() {
    assert_eq!(chunk_count(1000, 1, 2), 1);
    assert_eq!(chunk_count(2 * MIN_WORK_PER_CHUNK - 1, 1, 16), 1);
    assert_eq!(chunk_count(10, MIN_WORK_PER_CHUNK / 10, 16), 1);
    assert_eq!(chunk_count(1 << 24, 1, 2), 8);
    assert_eq!(chunk_count(1 << 24, 1, 1), 1);
    // A few rows of much work each: no more chunks than rows.
    assert_eq!(chunk_count(3, 1 << 20, 2), 3);
}

/// `out[i] = x[i] + x[i]` over `[2, 3]`, `x` and `out` in buffers 0 and `out_buf`.
fn add_kernel(out_buf: u32, store: Affine) -> LoopKernel {
    use lazyfuse_ir::kernel::{ExprId, ExprNode, Param, Stage, StoreOp};
    use lazyfuse_ir::DType;
    LoopKernel {
        name: "k".into(),
        nodes: vec![],
        params: vec![
            Param {
                buf: BufId(0),
                dtype: DType::F32,
                len: 6,
                writes: false,
            },
            Param {
                buf: BufId(out_buf),
                dtype: DType::F32,
                len: 6,
                writes: true,
            },
        ],
        dims: vec![2, 3],
        n_parallel: 2,
        exprs: vec![
            ExprNode {
                expr: Expr::Load {
                    param: ParamId(0),
                    index: Affine {
                        offset: 0,
                        strides: vec![3, 1],
                    },
                    dynamic: None,
                },
                dtype: DType::F32,
                stage: Stage::Outer(0),
            },
            ExprNode {
                expr: Expr::Binary {
                    op: lazyfuse_ir::BinaryOp::Add,
                    a: ExprId(0),
                    b: ExprId(0),
                },
                dtype: DType::F32,
                stage: Stage::Outer(0),
            },
        ],
        stores: vec![StoreOp {
            param: ParamId(1),
            index: store,
            value: ExprId(1),
        }],
    }
}

#[test]
fn only_provable_full_overwrites_skip_zeroing() {
    let row_major = Affine {
        offset: 0,
        strides: vec![3, 1],
    };
    assert!(fully_overwrites(&add_kernel(1, row_major.clone()), 1));
    // A transposed store (and so a tiled transpose's) covers every element once.
    let transposed = Affine {
        offset: 0,
        strides: vec![1, 2],
    };
    assert!(fully_overwrites(&add_kernel(1, transposed), 1));
    // Permuted strides that leave gaps (and so run past the end).
    let gapped = Affine {
        offset: 0,
        strides: vec![1, 3],
    };
    assert!(!fully_overwrites(&add_kernel(1, gapped), 1));
    // Row-major strides shifted by one element.
    let shifted = Affine {
        offset: 1,
        strides: vec![3, 1],
    };
    assert!(!fully_overwrites(&add_kernel(1, shifted), 1));
    // A store of half the elements, twice each.
    let half = Affine {
        offset: 0,
        strides: vec![0, 1],
    };
    assert!(!fully_overwrites(&add_kernel(1, half), 1));
    // The written buffer is also read (through param 0): its contents matter.
    assert!(!fully_overwrites(&add_kernel(0, row_major.clone()), 1));
    // A param that is only read.
    assert!(!fully_overwrites(&add_kernel(1, row_major.clone()), 0));
    // Reduction dims: stores of outer values run once per parallel point, not
    // per element of the loop.
    let mut r = add_kernel(1, row_major);
    r.n_parallel = 1;
    assert!(!fully_overwrites(&r, 1));
    // A store of values computed inside the reduction loop (a softmax's output)
    // runs at every point of it.
    for e in &mut r.exprs {
        e.stage = lazyfuse_ir::kernel::Stage::Inner(0);
    }
    assert!(fully_overwrites(&r, 1));
    r.stores[0].index.strides = vec![0, 1];
    assert!(!fully_overwrites(&r, 1));
}
