//! The indexing and shaping ops through the public API: index errors found when the
//! graph runs (never a panic or an access outside a buffer), duplicates in scatter,
//! in-place forms through views, laziness, and the graph the ops record. Values and
//! messages for every dtype class are in `ops_index_data.rs` (PyTorch-generated).

use lazyfuse::{Complex, DType, Error, ScatterReduce, Tensor};

fn ints(v: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

fn message<T: std::fmt::Debug>(r: lazyfuse::Result<T>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn extreme_index_values_are_errors_when_realized() {
    lazyfuse::set_verify(true);
    let x = Tensor::arange(0.0, 6.0, 1.0, DType::F32)
        .unwrap()
        .view(&[2, 3])
        .unwrap();
    for v in [i64::MIN, -1, 3, i64::MAX] {
        let i = ints(&[0, v], &[1, 2]);
        // the op builds (values are data), the read reports the index and the size
        let g = x.gather(1, &i).unwrap();
        let err = g.to_vec::<f32>().unwrap_err();
        assert!(matches!(err, Error::Runtime(_)), "{err:?}");
        assert!(!err.is_unsupported());
        assert_eq!(
            err.to_string(),
            format!("index {v} is out of bounds for dimension 1 with size 3")
        );
        let s = x.scatter_add(1, &i, &x).unwrap();
        assert_eq!(
            message(s.to_vec::<f32>()),
            format!("index {v} is out of bounds for dimension 1 with size 3")
        );
        let sel = x.index_select(1, &ints(&[v], &[1])).unwrap();
        assert_eq!(
            message(sel.to_vec::<f32>()),
            format!("INDICES element is out of DATA bounds, id={v} axis_dim=3")
        );
    }
    for v in [i64::MIN, -7, 6, i64::MAX] {
        let t = x.take(&ints(&[v], &[1])).unwrap();
        assert_eq!(
            message(t.to_vec::<f32>()),
            format!("out of range: tried to access index {v} on a tensor of 6 elements.")
        );
    }
}

#[test]
fn a_failed_realize_leaves_the_inputs_usable() {
    let x = Tensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
    let bad = x.gather(0, &ints(&[5], &[1])).unwrap();
    assert!(bad.to_vec::<i32>().is_err());
    assert!(bad.to_vec::<i32>().is_err()); // still an error, still no panic
    let good = x.gather(0, &ints(&[2, 2, 0], &[3])).unwrap();
    assert_eq!(good.to_vec::<i32>().unwrap(), vec![3, 3, 1]);
}

#[test]
fn in_place_scatter_with_a_bad_index_fails_on_read() {
    let x = Tensor::zeros(&[3], DType::F64);
    x.scatter_value_(0, &ints(&[3], &[1]), 1.0).unwrap();
    assert_eq!(
        message(x.to_vec::<f64>()),
        "index 3 is out of bounds for dimension 0 with size 3"
    );
}

#[test]
fn scatter_duplicates_last_write_wins_and_add_sums() {
    let x = Tensor::zeros(&[2], DType::I64);
    let i = ints(&[1, 0, 1, 1], &[4]);
    let src = ints(&[10, 20, 30, 40], &[4]);
    // PyTorch leaves the winner unspecified; lazyfuse takes the last in row-major order.
    assert_eq!(
        x.scatter(0, &i, &src).unwrap().to_vec::<i64>().unwrap(),
        vec![20, 40]
    );
    assert_eq!(
        x.scatter_add(0, &i, &src).unwrap().to_vec::<i64>().unwrap(),
        vec![20, 80]
    );
    let r = x
        .scatter_reduce(0, &i, &src, ScatterReduce::Amax, false)
        .unwrap();
    assert_eq!(r.to_vec::<i64>().unwrap(), vec![20, 40]);
}

#[test]
fn scatter_reduce_of_bool_and_complex() {
    let b = Tensor::from_vec(vec![true, false, false], &[3]).unwrap();
    let i = ints(&[1, 1, 2], &[3]);
    let src = Tensor::from_vec(vec![true, false, false], &[3]).unwrap();
    let sum = b.scatter_reduce(0, &i, &src, ScatterReduce::Sum, true);
    assert_eq!(
        sum.unwrap().to_vec::<bool>().unwrap(),
        vec![true, true, false]
    );
    let prod = b.scatter_reduce(0, &i, &src, ScatterReduce::Prod, false);
    assert_eq!(
        prod.unwrap().to_vec::<bool>().unwrap(),
        vec![true, false, false]
    );
    assert_eq!(
        message(b.scatter_reduce(0, &i, &src, ScatterReduce::Mean, true)),
        "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"
    );
    let c = Tensor::from_vec(vec![Complex::new(1.0f64, 1.0); 2], &[2]).unwrap();
    let csrc = Tensor::from_vec(vec![Complex::new(0.0f64, 1.0); 2], &[2]).unwrap();
    let m = c
        .scatter_reduce(0, &ints(&[0, 0], &[2]), &csrc, ScatterReduce::Prod, true)
        .unwrap();
    // (1 + i) * i * i = -1 - i
    assert_eq!(
        m.to_vec::<Complex<f64>>().unwrap(),
        vec![Complex::new(-1.0, -1.0), Complex::new(1.0, 1.0)]
    );
}

#[test]
fn in_place_forms_write_through_views() {
    let base = Tensor::zeros(&[3, 3], DType::F32);
    let col = base.select(1, 1).unwrap(); // non-contiguous
    col.scatter_value_(0, &ints(&[2, 0], &[2]), 7.0).unwrap();
    assert_eq!(
        base.to_vec::<f32>().unwrap(),
        vec![0.0, 7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0, 0.0]
    );
    let ones = Tensor::ones(&[2, 4], DType::I32);
    ones.narrow(1, 1, 3).unwrap().triu_(1).unwrap();
    assert_eq!(ones.to_vec::<i32>().unwrap(), vec![1, 0, 1, 1, 1, 0, 0, 1]);
    // an expanded destination is refused, as in PyTorch
    let e = Tensor::zeros(&[3], DType::F32).expand(&[2, 3]).unwrap();
    assert!(message(e.scatter_value_(1, &ints(&[0], &[1, 1]), 1.0))
        .starts_with("unsupported operation: more than one element"));
}

#[test]
fn in_place_scatter_refuses_a_source_or_index_in_its_own_memory() {
    let x = Tensor::arange(0.0, 4.0, 1.0, DType::F32).unwrap();
    let i = ints(&[1, 0], &[2]);
    let overlap = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.";
    assert_eq!(message(x.scatter_(0, &i, &x)), overlap);
    let head = x.narrow(0, 0, 2).unwrap();
    assert_eq!(
        message(head.scatter_(0, &i, &x.narrow(0, 1, 2).unwrap())),
        overlap
    );
    let w = Tensor::arange(0.0, 4.0, 1.0, DType::I64).unwrap();
    let ones = Tensor::ones(&[2], DType::I64);
    assert_eq!(
        message(w.scatter_add_(0, &w.narrow(0, 0, 2).unwrap(), &ones)),
        overlap
    );
    // a disjoint part of the same storage is fine, and so is the out-of-place form
    let tail = x.narrow(0, 2, 2).unwrap();
    head.scatter_(0, &i, &tail).unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![3.0, 2.0, 2.0, 3.0]);
    assert!(x.scatter(0, &i, &x).is_ok());
}

#[test]
fn values_computed_before_an_in_place_scatter_keep_the_old_version() {
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let before = x.mul(10).unwrap();
    x.scatter_add_(0, &ints(&[0], &[1]), &Tensor::ones(&[1], DType::F32))
        .unwrap();
    assert_eq!(before.to_vec::<f32>().unwrap(), vec![10.0, 20.0]);
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![2.0, 2.0]);
}

#[test]
fn masked_select_realizes_only_its_mask() {
    let x = Tensor::ones(&[2, 2], DType::F32).add(1).unwrap();
    let mask = Tensor::from_vec(vec![false, true], &[2])
        .unwrap()
        .logical_not()
        .unwrap();
    let y = x.masked_select(&mask).unwrap();
    assert_eq!(y.shape(), vec![2]);
    assert!(!x.is_realized(), "the values stay lazy");
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![2.0, 2.0]);
    let none = x
        .masked_select(&Tensor::zeros(&[2, 2], DType::Bool))
        .unwrap();
    assert_eq!(none.shape(), vec![0]);
}

#[test]
fn the_recorded_graph() {
    let x = Tensor::zeros(&[2, 3], DType::F32);
    let i = Tensor::from_vec(vec![0i32, 1], &[1, 2]).unwrap();
    let g = x.gather(1, &i).unwrap();
    let text = g.graph_text();
    assert!(text.contains("= cast(%"), "int32 indices are cast: {text}");
    assert!(
        text.contains("= gather(%0, %2; axis=1) : float32[1, 2]"),
        "{text}"
    );
    let s = x
        .scatter_reduce(0, &ints(&[1], &[1, 1]), &x, ScatterReduce::Amin, false)
        .unwrap();
    assert!(s
        .graph_text()
        .contains("scatter_reduce(%0, %1, %2; axis=0, reduce=amin, include_self=false)"));
    let f = x.flip(&[-1, 0]).unwrap();
    assert!(f.graph_text().contains("flip(%0; axes=[0, 1])"));
    let r = x.roll(&[1], &[1]).unwrap();
    assert!(r.graph_text().contains("cat("));
    let p = x.pad(&[1, 1], 0).unwrap();
    assert!(p.graph_text().contains("write_view("));
}

#[test]
fn shape_errors_come_at_build_time() {
    let x = Tensor::zeros(&[2, 3], DType::F32);
    assert_eq!(
        message(x.gather(1, &ints(&[0; 6], &[3, 2]))),
        "Size does not match at dimension 0 expected index [3, 2] to be no larger than self [2, 3] apart from dimension 1"
    );
    assert_eq!(
        message(x.scatter(0, &ints(&[0; 2], &[2]), &x)),
        "Index tensor must have the same number of dimensions as self tensor"
    );
    assert_eq!(
        message(x.gather(-3, &ints(&[0], &[1, 1]))),
        "Dimension out of range (expected to be in range of [-2, 1], but got -3)"
    );
}

#[test]
fn sizes_that_overflow_are_errors() {
    let x = Tensor::zeros(&[2, 2], DType::F32);
    // PyTorch's int64 reads usize::MAX as -1 repeats
    assert_eq!(
        message(x.repeat(&[usize::MAX, 2, 1])),
        "Trying to create tensor with negative dimension -1: [-1, 4, 2]"
    );
    assert!(message(x.tile(&[1 << 62, 1 << 62]))
        .starts_with("Trying to create tensor with negative dimension"));
    assert!(message(x.tile(&[1 << 61, 1])).starts_with("Storage size calculation overflowed"));
    assert!(x.pad(&[i64::MAX, i64::MAX], 0).is_err());
    assert!(x.pad(&[i64::MIN, 0], 0).is_err());
    assert!(x.roll(&[i64::MIN], &[0]).is_ok());
    assert_eq!(
        x.roll(&[i64::MIN, i64::MAX], &[0, 1])
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![0.0; 4]
    );
}
