//! The reductions and scans of `src/ops/reduce_special.rs` and `src/ops/scan.rs` through
//! the public API: several dims and keepdim on non-contiguous views, zero-dim and
//! empty inputs, complex32 (storage-only) handling, the graph text of the new nodes,
//! and the empty-tensor rules of `amax`, `max`, `softmax`. The PyTorch-generated
//! table `tests/ops_reduce_oracle.rs` covers the dtype tables and special values.

use lazyfuse::{DType, Tensor};

fn arange(n: usize, shape: &[usize]) -> Tensor {
    let v: Vec<f32> = (0..n).map(|i| i as f32).collect();
    Tensor::from_vec(v, shape).unwrap()
}

/// `x.permute(2, 0, 1)[:, :, ::2]` of `arange(24).reshape(2, 3, 4)`: shape [4, 2, 2].
fn strided() -> Tensor {
    arange(24, &[2, 3, 4])
        .permute(&[2, 0, 1])
        .unwrap()
        .slice(2, None, None, 2)
        .unwrap()
}

#[test]
fn several_dims_of_a_non_contiguous_view() {
    lazyfuse::set_verify(true);
    let x = strided();
    assert!(!x.is_contiguous());
    let s = x.nansum(&[0, 2], false).unwrap();
    assert_eq!(s.to_vec::<f32>().unwrap(), vec![44.0, 140.0]);
    let l = x.logsumexp(&[0, -1], true).unwrap();
    assert_eq!(l.shape(), vec![1, 2, 1]);
    let got = l.to_vec::<f32>().unwrap();
    assert!((got[0] - 11.440_525).abs() < 1e-5 && (got[1] - 23.440_525).abs() < 1e-5);
    let c = arange(24, &[2, 3, 4])
        .transpose(0, 2)
        .unwrap()
        .slice(0, None, None, 2)
        .unwrap()
        .cumprod(1)
        .unwrap();
    assert_eq!(c.shape(), vec![2, 3, 2]);
    assert_eq!(
        c.to_vec::<f32>().unwrap(),
        vec![0.0, 12.0, 0.0, 192.0, 0.0, 3840.0, 2.0, 14.0, 12.0, 252.0, 120.0, 5544.0]
    );
    let (v, i) = x.max_dim(1, true).unwrap();
    assert_eq!(v.shape(), vec![4, 1, 2]);
    assert_eq!(i.to_vec::<i64>().unwrap(), vec![1; 8]);
    let (lo, hi) = x.aminmax(None, true).unwrap();
    assert_eq!(lo.shape(), vec![1, 1, 1]);
    assert_eq!(
        (lo.to_vec::<f32>().unwrap(), hi.to_vec::<f32>().unwrap()),
        (vec![0.0], vec![23.0])
    );
}

#[test]
fn dim_errors_are_pytorchs() {
    let x = arange(24, &[2, 3, 4]);
    let e = x.nansum(&[1, 1], false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "dim 1 appears multiple times in the list of dims"
    );
    let e = x.any(&[5], false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Dimension out of range (expected to be in range of [-3, 2], but got 5)"
    );
    let e = Tensor::zeros(&[0], DType::F32).softmax(3).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Dimension out of range (expected to be in range of [-1, 0], but got 3)"
    );
}

#[test]
fn zero_dim_inputs() {
    let z = Tensor::scalar(0.0f32);
    assert_eq!(z.count_nonzero(&[]).unwrap().shape(), Vec::<usize>::new());
    assert_eq!(
        z.count_nonzero(&[]).unwrap().to_vec::<i64>().unwrap(),
        vec![0]
    );
    let s = Tensor::from_vec(vec![3.0f64], &[]).unwrap();
    let (v, i) = s.max_dim(0, true).unwrap();
    assert_eq!(v.shape(), Vec::<usize>::new());
    assert_eq!(
        (v.to_vec::<f64>().unwrap(), i.to_vec::<i64>().unwrap()),
        (vec![3.0], vec![0])
    );
    let (v, i) = s.cummin(-1).unwrap();
    assert_eq!(
        (v.to_vec::<f64>().unwrap(), i.to_vec::<i64>().unwrap()),
        (vec![3.0], vec![0])
    );
    assert_eq!(
        s.logcumsumexp(0).unwrap().to_vec::<f64>().unwrap(),
        vec![3.0]
    );
    assert_eq!(
        s.logsumexp(&[0], false).unwrap().to_vec::<f64>().unwrap(),
        vec![3.0]
    );
}

#[test]
fn empty_tensors_follow_pytorch() {
    let e = Tensor::zeros(&[0], DType::I64);
    for (r, name) in [
        (e.amax(&[], false), "amax"),
        (e.max(), "max"),
        (e.min(), "min"),
    ] {
        assert_eq!(
            r.unwrap_err().to_string(),
            format!("{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.")
        );
    }
    // The kernel is skipped, so the int64 refusal of softmax does not fire.
    let s = e.softmax(0).unwrap();
    assert_eq!((s.dtype(), s.shape()), (DType::I64, vec![0]));
    let s = Tensor::zeros(&[2, 0], DType::Bool).log_softmax(0).unwrap();
    assert_eq!((s.dtype(), s.shape()), (DType::Bool, vec![2, 0]));
    assert_eq!(e.cumprod(0).unwrap().dtype(), DType::I64);
    // ...but logcumsumexp refuses integers before looking at the size.
    assert!(e.logcumsumexp(0).is_err());
    let c = Tensor::zeros(&[2, 0], DType::C64);
    let (v, i) = c.cummax(1).unwrap();
    assert_eq!(
        (v.dtype(), i.dtype(), v.shape()),
        (DType::C64, DType::I64, vec![2, 0])
    );
    let a = c.amax(&[0], false).unwrap();
    assert_eq!((a.dtype(), a.shape()), (DType::C64, vec![0]));
    assert_eq!(a.to_vec::<lazyfuse::Complex<f32>>().unwrap(), vec![]);
    let l = Tensor::zeros(&[0], DType::U8)
        .logsumexp(&[], false)
        .unwrap();
    assert_eq!(l.dtype(), DType::F32);
    assert_eq!(l.to_vec::<f32>().unwrap(), vec![f32::NEG_INFINITY]);
    let e = Tensor::zeros(&[0], DType::F32)
        .norm(-1.0, &[], false)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "linalg.vector_norm cannot compute the -1 norm on an empty tensor because the operation does not have an identity"
    );
    assert_eq!(
        Tensor::zeros(&[0], DType::F32)
            .norm(2.0, &[], false)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![0.0]
    );
}

#[test]
fn complex32_is_refused_as_pytorch_or_unsupported() {
    let c = Tensor::zeros(&[2], DType::C32);
    let msg = |r: lazyfuse::Result<Tensor>| r.unwrap_err().to_string();
    assert_eq!(
        msg(c.logsumexp(&[0], false)),
        "\"exp_vml_cpu\" not implemented for 'ComplexHalf'"
    );
    assert_eq!(
        msg(c.nansum(&[], false)),
        "nansum on CPU does not support complex inputs"
    );
    assert_eq!(
        msg(c.cumprod(0)),
        "\"cumprod_out_cpu\" not implemented for 'ComplexHalf'"
    );
    assert_eq!(
        msg(c.logcumsumexp(0)),
        "\"logcumsumexp_out_cpu\" not implemented for 'ComplexHalf'"
    );
    assert_eq!(
        msg(c.max()),
        "\"max_all\" not implemented for 'ComplexHalf'"
    );
    assert_eq!(
        c.cummax(0).unwrap_err().to_string(),
        "\"cummax_cpu\" not implemented for 'ComplexHalf'"
    );
    // PyTorch computes these; lazyfuse has no complex32 kernels.
    assert!(c.any(&[], false).unwrap_err().is_unsupported());
    assert!(c.norm(2.0, &[], false).unwrap_err().is_unsupported());
    assert!(c.var_mean(&[], 1, false).unwrap_err().is_unsupported());
    // A zero-dim complex32 cummax runs no kernel in PyTorch.
    let (v, i) = Tensor::zeros(&[], DType::C32).cummax(0).unwrap();
    assert_eq!(
        (v.dtype(), i.to_vec::<i64>().unwrap()),
        (DType::C32, vec![0])
    );
}

#[test]
fn graph_text_names_the_new_nodes() {
    let x = arange(6, &[2, 3]);
    let n = x.norm(f64::INFINITY, &[1], false).unwrap();
    assert!(
        n.graph_text()
            .contains("norm(%0; axes=[1], keepdim=false, p=inf)"),
        "{}",
        n.graph_text()
    );
    let l = x.logcumsumexp(0).unwrap();
    assert!(
        l.graph_text().contains("logcumsumexp(%0; axis=0)"),
        "{}",
        l.graph_text()
    );
    let (_, i) = x.cummin(1).unwrap();
    assert!(
        i.graph_text()
            .contains("cummin_indices(%0; axis=1) : int64[2, 3]"),
        "{}",
        i.graph_text()
    );
    let (_, m) = x.var_mean(&[], 1, false).unwrap();
    assert!(
        m.graph_text().contains("running_mean("),
        "{}",
        m.graph_text()
    );
}

#[test]
fn integer_extremes() {
    let x = Tensor::from_vec(vec![i64::MAX, 1, i64::MIN, -1], &[2, 2]).unwrap();
    assert_eq!(
        x.nansum(&[1], false).unwrap().to_vec::<i64>().unwrap(),
        vec![i64::MIN, i64::MAX]
    );
    assert_eq!(
        x.cumprod(0).unwrap().to_vec::<i64>().unwrap(),
        vec![i64::MAX, 1, i64::MIN, -1]
    );
    let (v, i) = x.max_dim(0, false).unwrap();
    assert_eq!(
        (v.to_vec::<i64>().unwrap(), i.to_vec::<i64>().unwrap()),
        (vec![i64::MAX, 1], vec![0, 0])
    );
    let u = Tensor::from_vec(vec![255u8, 255], &[2]).unwrap();
    assert_eq!(
        u.cumprod(0).unwrap().to_vec::<i64>().unwrap(),
        vec![255, 65025]
    );
    assert_eq!(u.all(&[], false).unwrap().to_vec::<u8>().unwrap(), vec![1]);
    let i8s = Tensor::from_vec(vec![i8::MIN, i8::MAX], &[2]).unwrap();
    assert_eq!(
        i8s.count_nonzero(&[]).unwrap().to_vec::<i64>().unwrap(),
        vec![2]
    );
    let l = i8s.logsumexp(&[0], false).unwrap();
    assert_eq!(l.dtype(), DType::F32);
    assert!((l.to_vec::<f32>().unwrap()[0] - 127.0).abs() < 1e-4);
}
