//! The scheduler's unit tests.

#[test]
fn constant_casts_fold_to_the_interpreter_value() {
    use super::fold::fold_cast;
    use crate::kernel::Const;
    use crate::DType;
    // 0.1 rounds once to float32; float16 goes through float32 as the
    // interpreter does; out-of-range integers and float -> int are left alone.
    assert_eq!(
        fold_cast(Const::Float(0.1), DType::F32),
        Some(Const::Float(f64::from(0.1f32)))
    );
    assert_eq!(
        fold_cast(Const::Float(0.1), DType::F16),
        Some(Const::Float(half::f16::from_f32(0.1).to_f64()))
    );
    assert_eq!(fold_cast(Const::Int(300), DType::U8), None);
    assert_eq!(fold_cast(Const::Int(-3), DType::I8), Some(Const::Int(-3)));
    assert_eq!(fold_cast(Const::Float(1.5), DType::I32), None);
    assert_eq!(
        fold_cast(Const::Bool(true), DType::F32),
        Some(Const::Float(1.0))
    );
    assert_eq!(fold_cast(Const::Int(1 << 40), DType::F32), None);
}

use super::*;
use crate::dtype::DType;
use crate::op::Op;

/// How each option set schedules a float and an integer matmul: extern (the
/// host's by default, the device BLAS's with `library_float_matmul`) or a kernel.
#[test]
fn matmul_is_extern_or_a_kernel_as_the_options_say() {
    use crate::op::InputId;
    for (dtype, kernels, library, want) in [
        (DType::F32, false, false, "extern"),
        (DType::I32, false, false, "extern"),
        (DType::F32, true, false, "kernel"),
        (DType::I64, true, false, "kernel"),
        (DType::F32, true, true, "device's BLAS"),
        (DType::BF16, true, true, "device's BLAS"),
        (DType::I32, true, true, "kernel"),
    ] {
        let mut g = Graph::new();
        let a = g.add(Op::Input(InputId(0)), dtype, vec![1, 2, 3], &[]);
        let b = g.add(Op::Input(InputId(1)), dtype, vec![1, 3, 4], &[]);
        let m = g.add(Op::Matmul, dtype, vec![1, 2, 4], &[a, b]);
        let opts = ScheduleOptions {
            matmul_kernels: kernels,
            library_float_matmul: library,
            ..Default::default()
        };
        let text = schedule(&g, &[m], &opts).unwrap().text();
        let is_extern = text.contains("extern matmul");
        match want {
            "kernel" => assert!(!is_extern, "{dtype}:\n{text}"),
            reason => assert!(is_extern && text.contains(reason), "{dtype}:\n{text}"),
        }
    }
}

fn aff(off: i64, c: &[i64]) -> Affine {
    Affine {
        offset: off,
        strides: c.to_vec(),
    }
}

#[test]
fn unravel_splits_only_carry_free_indices() {
    // a transpose of a [2, 3] tensor read as [3, 2]: i0 moves dim 1, i1 dim 0
    let f = aff(0, &[1, 3]);
    assert_eq!(
        unravel(&f, &[2, 3], &[3, 2]),
        Some(vec![aff(0, &[0, 1]), aff(0, &[1])])
    );
    // a flat walk over [2, 3] as one dim of 6 crosses rows: no split
    assert_eq!(unravel(&aff(0, &[1]), &[2, 3], &[6]), None);
    // an offset inside the row, and a size-1 dim that takes no variable
    assert_eq!(
        unravel(&aff(4, &[1]), &[2, 1, 3], &[2]),
        Some(vec![aff(1, &[]), aff(0, &[]), aff(1, &[1])])
    );
    // the same walk one element further would leave the row
    assert_eq!(unravel(&aff(5, &[1]), &[2, 1, 3], &[2]), None);
    // nothing is read over an empty space
    assert!(unravel(&aff(0, &[1]), &[2, 3], &[0]).is_some());
}

#[test]
fn canonical_drops_size_one_dims() {
    assert_eq!(canonical(&[1, 4, 1, 0]), vec![4, 0]);
    assert_eq!(
        Builder::identity_coords(&[1, 4, 3], 0),
        vec![aff(0, &[]), Affine::var(0), Affine::var(1)]
    );
}
