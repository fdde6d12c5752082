//! Integration tests of the public API's contract: laziness, aliasing, in-place
//! writes through views, errors as values, bounded graph memory, thread safety.

use lazyfuse::{DType, Error, Scalar, Tensor};

#[test]
fn nothing_runs_until_realize() {
    lazyfuse::set_verify(true);
    let a = Tensor::ones(&[4], DType::F32);
    let b = a.add(1).unwrap().mul(3).unwrap();
    assert!(!b.is_realized());
    // Shape and dtype are known without computing.
    assert_eq!((b.shape(), b.dtype()), (vec![4], DType::F32));
    let b = b.realize().unwrap();
    assert!(b.is_realized());
    assert_eq!(b.to_vec::<f32>().unwrap(), vec![6.0; 4]);
}

#[test]
fn tensor_is_send_sync_and_clones_alias() {
    lazyfuse::set_verify(true);
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Tensor>();
    let a = Tensor::zeros(&[3], DType::I64);
    let b = a.clone();
    b.add_(2).unwrap();
    assert_eq!(a.to_vec::<i64>().unwrap(), vec![2, 2, 2]);
    assert!(a.shares_storage(&b));
}

#[test]
fn tensors_cross_threads() {
    lazyfuse::set_verify(true);
    let a = Tensor::arange(0.0, 100.0, 1.0, DType::F64).unwrap();
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let a = a.clone();
            std::thread::spawn(move || {
                a.mul(i as f64)
                    .unwrap()
                    .sum(&[], false)
                    .unwrap()
                    .to_vec::<f64>()
                    .unwrap()[0]
            })
        })
        .collect();
    let sums: Vec<f64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(sums, vec![0.0, 4950.0, 9900.0, 14850.0]);
}

#[test]
fn writes_reach_base_and_other_views_but_not_earlier_results() {
    lazyfuse::set_verify(true);
    let base = Tensor::arange(0.0, 6.0, 1.0, DType::I64)
        .unwrap()
        .view(&[2, 3])
        .unwrap();
    let before = base.mul(10).unwrap(); // recorded before the write: keeps the old values
    let col = base.select(1, 1).unwrap();
    let row = base.select(0, 1).unwrap();
    col.mul_(100).unwrap();
    assert_eq!(base.to_vec::<i64>().unwrap(), vec![0, 100, 2, 3, 400, 5]);
    assert_eq!(row.to_vec::<i64>().unwrap(), vec![3, 400, 5]);
    assert_eq!(before.to_vec::<i64>().unwrap(), vec![0, 10, 20, 30, 40, 50]);
}

#[test]
fn inplace_rules_match_pytorch() {
    lazyfuse::set_verify(true);
    let ints = Tensor::zeros(&[2], DType::I32);
    let err = ints.add_(1.5).unwrap_err();
    assert_eq!(
        err.to_string(),
        "result type Float can't be cast to the desired output type Int"
    );
    let small = Tensor::zeros(&[1, 3], DType::F32);
    let err = small.add_(&Tensor::zeros(&[2, 3], DType::F32)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "output with shape [1, 3] doesn't match the broadcast shape [2, 3]"
    );
    let expanded = Tensor::zeros(&[1, 3], DType::F32).expand(&[2, 3]).unwrap();
    assert!(
        matches!(expanded.add_(1), Err(Error::Build(lazyfuse_ir_error)) if lazyfuse_ir_error.to_string().starts_with("unsupported operation: more than one element"))
    );
    expanded.fill_(2.0).unwrap();
    assert_eq!(expanded.to_vec::<f32>().unwrap(), vec![2.0; 6]);
    let square = Tensor::zeros(&[2, 2], DType::F32);
    assert!(
        square.add_(&square.t().unwrap()).is_err(),
        "partial overlap is refused"
    );
    square.add_(&square).unwrap(); // full overlap is fine
}

#[test]
fn integer_division_by_zero_is_an_error() {
    lazyfuse::set_verify(true);
    let a = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    assert!(
        a.floor_divide(0).is_err(),
        "a zero scalar is refused at build time"
    );
    let zero = Tensor::from_vec(vec![1i32, 0], &[2]).unwrap();
    let q = a.remainder(&zero).unwrap(); // data-dependent: found at realize
    assert_eq!(q.realize().unwrap_err().to_string(), "ZeroDivisionError");
    let f = a.to_dtype(DType::F32).unwrap().div(&zero).unwrap();
    assert_eq!(f.to_vec::<f32>().unwrap(), vec![1.0, f32::INFINITY]);
}

#[test]
fn graph_memory_stays_bounded_in_a_loop() {
    lazyfuse::set_verify(true);
    let x = Tensor::ones(&[16], DType::F32);
    let mut acc = x.clone();
    for i in 0..2000 {
        let y = x.mul(i as f64).unwrap().add(&acc).unwrap().tanh().unwrap();
        acc = y.realize().unwrap();
    }
    // Only a handful of nodes stay alive (other tests may run concurrently, so the
    // bound is loose; without collection there would be >10k).
    assert!(
        lazyfuse::live_graph_nodes() < 2000,
        "{} live nodes",
        lazyfuse::live_graph_nodes()
    );
    assert_eq!(acc.numel(), 16);
}

#[test]
fn scalar_constructors_and_display() {
    lazyfuse::set_verify(true);
    assert_eq!(Tensor::scalar(2.5).to_string(), "tensor(2.5000)");
    assert_eq!(Tensor::scalar(true).dtype(), DType::Bool);
    let t = Tensor::full(&[2], Scalar::Int(3), DType::I32).unwrap();
    assert_eq!(t.to_string(), "tensor([3, 3], dtype=torch.int32)");
    assert!(format!("{t:?}").contains("dtype=int32"));
}

#[test]
fn to_vec_checks_the_element_type() {
    lazyfuse::set_verify(true);
    let t = Tensor::zeros(&[2], DType::F16);
    assert!(t.to_vec::<f32>().is_err());
    assert_eq!(t.to_vec::<lazyfuse::half::f16>().unwrap().len(), 2);
}

#[test]
fn realize_computes_its_target_only() {
    lazyfuse::set_verify(true);
    let x = Tensor::arange(0.0, 4.0, 1.0, DType::F32).unwrap();
    let y = x.mul(2).unwrap().exp().unwrap();
    let total = y.sum(&[], false).unwrap();
    assert!(!y.is_realized());
    total.realize().unwrap();
    // `y` is named by a live tensor, but only the target is stored ...
    assert!(!y.is_realized());
    // ... and `total`'s node is now an input: its graph is one node.
    assert_eq!(
        total.graph_text().lines().count(),
        1,
        "{}",
        total.graph_text()
    );
    let expected: f32 = (0..4).map(|i| ((2 * i) as f32).exp()).sum();
    assert!((total.to_vec::<f32>().unwrap()[0] - expected).abs() < 1e-3);
    // `y` is computed when it is read, from the inputs its node kept alive.
    let ys = y.to_vec::<f32>().unwrap();
    for (i, v) in ys.iter().enumerate() {
        let want = ((2 * i) as f32).exp();
        assert!((v - want).abs() <= 1e-6 * want, "{i}: {v} vs {want}");
    }
    assert!(y.is_realized());
}

#[test]
fn fill_values_must_fit_the_dtype() {
    lazyfuse::set_verify(true);
    let msg = |r: lazyfuse::Result<Tensor>| r.unwrap_err().to_string();
    assert_eq!(
        msg(Tensor::full(&[2], 300, DType::U8)),
        "value cannot be converted to type uint8_t without overflow"
    );
    // A negative integer wraps into an unsigned type that holds its magnitude.
    assert_eq!(
        Tensor::full(&[1], -3, DType::U8)
            .unwrap()
            .to_vec::<u8>()
            .unwrap(),
        vec![253]
    );
    assert!(Tensor::full(&[1], -300, DType::U8).is_err());
    assert!(Tensor::full(&[1], f64::NAN, DType::I32).is_err());
    assert!(Tensor::full(&[1], 1e5, DType::F16).is_err());
    assert!(Tensor::full(&[1], f64::INFINITY, DType::F16).is_ok());
    assert!(Tensor::full(&[1], 1000.0, DType::F8E4M3FN).is_err());
    assert!(Tensor::full(&[1], 2.5, DType::Bool).is_ok());
    let t = Tensor::zeros(&[2], DType::I8);
    assert!(t.fill_(128).is_err());
    t.fill_(-128).unwrap();
    assert_eq!(t.to_vec::<i8>().unwrap(), vec![-128, -128]);
}

#[test]
fn overflowing_shapes_are_refused() {
    lazyfuse::set_verify(true);
    let err = Tensor::full(&[usize::MAX, 2], 0, DType::F32).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("Storage size calculation overflowed"),
        "{err}"
    );
    assert!(Tensor::from_vec(Vec::<f32>::new(), &[1 << 62, 4]).is_err());
    // A constructor without a `Result` defers the error: every op on the tensor,
    // and every read, reports the real cause with the sizes asked for.
    let huge = Tensor::zeros(&[1 << 62, 4], DType::F32);
    let want = "Storage size calculation overflowed with sizes=[4611686018427387904, 4]";
    let msg = |r: lazyfuse::Result<Tensor>| r.unwrap_err().to_string();
    assert_eq!(msg(huge.add(1)), want);
    assert_eq!(msg(Tensor::ones(&[4], DType::F32).add(&huge)), want);
    assert_eq!(msg(huge.sum(&[], false)), want);
    assert_eq!(msg(huge.exp()), want);
    assert_eq!(msg(huge.view(&[-1])), want);
    assert_eq!(msg(huge.reshape(&[-1])), want);
    assert_eq!(msg(huge.realize()), want);
    assert_eq!(huge.to_vec::<f32>().unwrap_err().to_string(), want);
    // an overflow of a size derived from valid tensors stays PyTorch's numel error
    let wide = Tensor::ones(&[1], DType::F32);
    assert_eq!(
        msg(wide.expand(&[1 << 62, 1 << 40])),
        "numel: integer multiplication overflow"
    );
}

/// `to_device`: the CPU is the tensor itself; a CUDA device holds a copy where a GPU
/// exists, and is a clear error where none does (never a silent CPU tensor). The host
/// emulation is off here, as it is by default.
#[test]
fn to_device_cpu_is_identity_and_cuda_is_a_copy_or_a_clear_error() {
    lazyfuse::set_cuda_emulation(false);
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let y = x.to_device(lazyfuse::Device::CPU).unwrap();
    assert!(y.shares_storage(&x));
    // what PyTorch's `Tensor.to` takes: strings and ordinals too
    assert!(x.to_device("cpu").unwrap().shares_storage(&x));
    assert!(x
        .to_device(&"cpu:0".to_string())
        .unwrap()
        .shares_storage(&x));
    assert_eq!(
        x.to_device("cuda:01").unwrap_err().to_string(),
        "Invalid device string: 'cuda:01'"
    );
    assert_eq!(
        x.to_device(-1i64).unwrap_err().to_string(),
        "Device index must not be negative"
    );
    assert_eq!(lazyfuse::Device::from(1), lazyfuse::Device::cuda(1));
    assert_eq!(x.get_device(), -1);
    for ordinal in [x.to_device(0usize), x.to_device(0i32), x.to_device("cuda")] {
        match ordinal {
            Ok(g) => assert_eq!(g.get_device(), 0),
            Err(e) => assert!(e.to_string().starts_with("CUDA driver not found"), "{e}"),
        }
    }
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    match x.to_device(lazyfuse::Device::cuda(0)) {
        Ok(g) => {
            assert_eq!(g.device(), lazyfuse::Device::cuda(0));
            assert_eq!(g.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
        }
        Err(e) => {
            let e = e.to_string();
            assert!(
                e.starts_with("CUDA driver not found") || e.contains("invalid device ordinal"),
                "{e}"
            );
        }
    }
}

/// The conjugate transposes need a conjugate for complex tensors, which lazyfuse
/// does not have yet: a clear error, never a plain transpose passed off as one.
#[test]
fn conjugate_transposes_of_complex_tensors_conjugate() {
    use lazyfuse::Complex;
    lazyfuse::set_verify(true);
    let values: Vec<Complex<f32>> = (0..6)
        .map(|i| Complex::new(i as f32, 1.0 + i as f32))
        .collect();
    let c = Tensor::from_vec(values.clone(), &[2, 3]).unwrap();
    for r in [c.mh(), c.h(), c.adjoint()] {
        let r = r.unwrap();
        assert!(r.is_conj() && r.shares_storage(&c));
        assert_eq!((r.shape(), r.strides()), (vec![3, 2], vec![1, 3]));
        let got = r.to_vec::<Complex<f32>>().unwrap();
        let want: Vec<Complex<f32>> = [0, 3, 1, 4, 2, 5]
            .iter()
            .map(|&i| values[i].conj())
            .collect();
        assert_eq!(got, want);
    }
    assert!(!c.mt().unwrap().is_conj());
    assert_eq!(c.mt().unwrap().shape(), vec![3, 2]);
    // complex32 values have no conjugate yet: a clear error
    let h = Tensor::zeros(&[2, 2], DType::C32);
    assert!(h.mh().unwrap_err().is_unsupported());
    // real tensors: the transposes themselves (a 0-D tensor stays as it is)
    let s = Tensor::scalar(1.5f32);
    for r in [s.mt(), s.mh(), s.h(), s.adjoint(), s.T()] {
        assert_eq!(r.unwrap().shape(), Vec::<usize>::new());
    }
}

/// `torch.add(5, 5)` and the other ops PyTorch lets take two numbers: the first is a
/// zero-dim tensor of its number's dtype, so the pair promotes as two wrapped numbers
/// (values and dtypes from PyTorch 2.15). Ops without such an overload refuse.
#[test]
fn two_numbers_make_a_zero_dim_tensor_where_pytorch_takes_them() {
    use lazyfuse::{BinaryOp, Scalar};
    lazyfuse::set_verify(true);
    let r = Tensor::binary(BinaryOp::Add, 5i64, 5i64).unwrap();
    assert_eq!(
        (r.dtype(), r.shape(), r.to_vec::<i64>().unwrap()),
        (DType::I64, vec![], vec![10])
    );
    let r = Tensor::binary(BinaryOp::Add, 5i64, 2.5).unwrap();
    assert_eq!(
        (r.dtype(), r.to_vec::<f32>().unwrap()),
        (DType::F32, vec![7.5])
    );
    let r = Tensor::binary(BinaryOp::Add, true, true).unwrap();
    assert_eq!(
        (r.dtype(), r.to_vec::<bool>().unwrap()),
        (DType::Bool, vec![true])
    );
    let r = Tensor::binary(BinaryOp::Div, 5i64, 2i64).unwrap();
    assert_eq!(
        (r.dtype(), r.to_vec::<f32>().unwrap()),
        (DType::F32, vec![2.5])
    );
    let r = Tensor::binary(BinaryOp::DivFloor, 5i64, 2i64).unwrap();
    assert_eq!(
        (r.dtype(), r.to_vec::<i64>().unwrap()),
        (DType::I64, vec![2])
    );
    let r = Tensor::binary(BinaryOp::Mul, 2.5, Scalar::Complex(0.0, 1.0)).unwrap();
    assert_eq!(r.dtype(), DType::C64);
    assert!(Tensor::binary(BinaryOp::Sub, true, false)
        .unwrap_err()
        .to_string()
        .starts_with("Subtraction, the `-` operator, with two bool tensors is not supported"));
    for op in [
        BinaryOp::Pow,
        BinaryOp::BitwiseAnd,
        BinaryOp::Remainder,
        BinaryOp::Maximum,
    ] {
        assert!(Tensor::binary(op, 2i64, 3i64).is_err(), "{op:?}");
    }
    // the dtype helpers PyTorch's dtype objects have
    assert!(DType::F8E5M2.is_signed() && !DType::U8.is_signed());
    assert_eq!(DType::C128.itemsize(), 16);
    assert_eq!(
        lazyfuse::promote_types(DType::U8, DType::I8).unwrap(),
        DType::I16
    );
    assert!(lazyfuse::can_cast(DType::Bool, DType::U8));
}

/// `Tensor.layout` is PyTorch's `torch.layout` (strided); the geometry is
/// `strided_layout()`; the sparse layouts parse and print, and are refused.
#[test]
fn layouts_are_pytorchs() {
    use lazyfuse::Layout;
    let t = Tensor::zeros(&[2, 3], DType::F32).t().unwrap();
    assert_eq!(t.layout(), Layout::Strided);
    assert_eq!(t.strided_layout().strides[..], [1, 3]);
    for l in Layout::ALL {
        assert_eq!(l.to_string().parse::<Layout>().unwrap(), l);
        assert_eq!(l.check_supported("zeros").is_ok(), l == Layout::Strided);
    }
    assert_eq!(Layout::SparseCsr.to_string(), "torch.sparse_csr");
    assert!("torch.dense".parse::<Layout>().is_err());
    let e = t.to_sparse().unwrap_err().to_string();
    assert!(e.contains("torch.sparse_coo is not supported"), "{e}");
    assert!(t.to_dense().unwrap().shares_storage(&t));
}

#[test]
fn devices_parse_print_and_refuse_what_lazyfuse_cannot_run() {
    use lazyfuse::{Device, DeviceType};
    let cuda: Device = "cuda".parse().unwrap();
    assert_eq!((cuda.kind(), cuda.index()), (DeviceType::Cuda, None));
    assert_ne!(cuda, Device::cuda(0));
    assert_eq!("cpu:0".parse::<Device>().unwrap().to_string(), "cpu:0");
    assert_eq!(Device::from(1).to_string(), "cuda:1");
    // parsing succeeds; using a device lazyfuse cannot run fails, saying which
    for s in ["mps", "meta", "xpu:1"] {
        let d: Device = s.parse().unwrap();
        assert_eq!(d.to_string(), s);
        let kind = d.kind().name();
        let message = format!("lazyfuse does not support tensors on device type '{kind}' yet");
        let x = Tensor::zeros(&[2], DType::F32);
        assert_eq!(x.to_device(d).unwrap_err().to_string(), message);
        assert_eq!(
            Tensor::zeros_on(&[2], DType::F32, d)
                .unwrap_err()
                .to_string(),
            message
        );
        assert!(lazyfuse::set_default_device(d).is_err());
        assert!(lazyfuse::DeviceGuard::new(s).is_err());
    }
    assert_eq!(lazyfuse::get_default_device(), Device::CPU);
    // a CPU tensor asked for on "cpu:0" is on the CPU, as PyTorch's
    let t = Tensor::ones_on(&[1], DType::F32, "cpu:0").unwrap();
    assert_eq!((t.device(), t.get_device()), (Device::CPU, -1));
    assert!(t.to_device("cpu:0").unwrap().shares_storage(&t));
}

/// complex32 (`chalf`) as PyTorch 2.15's CPU: storage, views, casts, and the
/// arithmetic it has kernels for, computed through complex64 and rounded to half
/// parts (values from PyTorch).
#[test]
fn complex32_computes_what_pytorch_computes() {
    use lazyfuse::Complex;
    lazyfuse::set_verify(true);
    let c64 = |t: &Tensor| -> Vec<(f32, f32)> {
        let v = t
            .to_dtype(DType::C64)
            .unwrap()
            .to_vec::<Complex<f32>>()
            .unwrap();
        v.iter().map(|c| (c.re, c.im)).collect()
    };
    let h = Tensor::from_vec(vec![1.0f32, 2.5], &[2])
        .unwrap()
        .to_dtype(DType::F16)
        .unwrap();
    let r = h.add(lazyfuse::Scalar::Complex(0.0, 1.0)).unwrap();
    assert_eq!(
        (r.dtype(), c64(&r)),
        (DType::C32, vec![(1.0, 1.0), (2.5, 1.0)])
    );
    let c = Tensor::from_vec(
        vec![Complex::new(1.0f32, 2.0), Complex::new(3.0, -1.0)],
        &[2],
    )
    .unwrap()
    .to_dtype(DType::C32)
    .unwrap();
    assert_eq!(c64(&c.mul(&c).unwrap()), vec![(-3.0, 4.0), (8.0, -6.0)]);
    assert_eq!(c64(&c.sub(&h).unwrap()), vec![(0.0, 2.0), (0.5, -1.0)]);
    // the number is rounded to half parts first, the product rounded once
    assert_eq!(
        c64(&c.mul(1000.3).unwrap()),
        vec![(1000.5, 2001.0), (3002.0, -1000.5)]
    );
    assert_eq!(Tensor::cat(&[&c, &c], 0).unwrap().dtype(), DType::C32);
    let z = Tensor::zeros(&[2, 2], DType::C32);
    z.fill_(lazyfuse::Scalar::Complex(1.0, 1.0)).unwrap();
    assert_eq!(
        c64(&z.t().unwrap().contiguous().unwrap()),
        vec![(1.0, 1.0); 4]
    );
    assert_eq!(c.abs().unwrap().dtype(), DType::F16);
    // what PyTorch refuses stays refused
    let e = c.div(&c).unwrap_err().to_string();
    assert_eq!(e, "\"div_cpu\" not implemented for 'ComplexHalf'");
    assert!(c.exp().is_err());
    // where selects half-complex values, bcomplex32 included (bfloat16 with a
    // complex number promotes to it)
    let cond = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    let b = h.to_dtype(DType::BF16).unwrap();
    let w = Tensor::where_cond(&cond, &b, lazyfuse::Scalar::Complex(1.0, 2.0)).unwrap();
    assert_eq!(
        (w.dtype(), c64(&w)),
        (DType::BC32, vec![(1.0, 0.0), (1.0, 2.0)])
    );
    let w = Tensor::where_cond(&cond, &c, &h).unwrap();
    assert_eq!(
        (w.dtype(), c64(&w)),
        (DType::C32, vec![(1.0, 2.0), (2.5, 0.0)])
    );
}

/// float4_e2m1fn_x2 as PyTorch 2.15: a storage dtype (two 4-bit floats per byte)
/// that parses and prints, is made by `zeros` or by viewing bytes, moves through
/// views, `cat`, `contiguous` and indexing, and converts to and computes nothing.
#[test]
fn float4_is_storage_as_in_pytorch() {
    lazyfuse::set_verify(true);
    let d: DType = "float4_e2m1fn_x2".parse().unwrap();
    assert_eq!(
        (d.to_string(), d.torch_name(), d.itemsize()),
        ("float4_e2m1fn_x2".into(), "Float4_e2m1fn_x2", 1)
    );
    assert!(d.is_floating_point() && d.is_signed());
    let bytes = |t: &Tensor| t.view_dtype(DType::U8).unwrap().to_vec::<u8>().unwrap();
    assert_eq!(bytes(&Tensor::zeros(&[2], d)), vec![0, 0]);
    let v = Tensor::from_vec(vec![1u8, 2, 3, 4], &[2, 2])
        .unwrap()
        .view_dtype(d)
        .unwrap();
    assert_eq!(
        bytes(&v.t().unwrap().contiguous().unwrap()),
        vec![1, 3, 2, 4]
    );
    assert_eq!(
        bytes(&Tensor::cat(&[&v, &v], 0).unwrap()),
        vec![1, 2, 3, 4, 1, 2, 3, 4]
    );
    let row = v
        .index_select(0, &Tensor::from_vec(vec![1i64], &[1]).unwrap())
        .unwrap();
    assert_eq!(bytes(&row), vec![3, 4]);
    // PyTorch's refusals
    assert_eq!(
        v.to_dtype(DType::F32).unwrap_err().to_string(),
        "\"copy_kernel\" not implemented for 'Float4_e2m1fn_x2'"
    );
    assert!(Tensor::ones(&[1], DType::F32).to_dtype(d).is_err());
    assert!(v.add(&v).is_err() && !v.add(&v).unwrap_err().is_unsupported());
    assert_eq!(
        v.fill_(0).unwrap_err().to_string(),
        "\"fill_out\" not implemented for 'Float4_e2m1fn_x2'"
    );
    assert!(lazyfuse::promote_types(d, DType::F32).is_err());
}

/// An unrealized constant tensor broadcast as an operand (`Tensor::scalar`,
/// `full`) is recorded as one constant of the broadcast shape, as a number
/// operand is, not a view of the constant; a constant of another dtype, one
/// that requires grad, and one written in place keep the reading path, with
/// the same values and gradients.
#[test]
fn constant_operands_are_one_node_of_the_broadcast_shape() {
    lazyfuse::set_verify(true);
    let x = Tensor::from_vec(vec![0.05f32, 0.5, -1.0], &[3]).unwrap();
    let floor = Tensor::scalar(0.1f32);
    let y = x.maximum(&floor).unwrap();
    let text = y.graph_text();
    assert!(!text.contains("view("), "{text}");
    assert_eq!(text.matches("full(value=0.1").count(), 1, "{text}");
    assert_eq!(y.to_vec::<f32>().unwrap(), [0.1, 0.5, 0.1]);
    assert!(
        floor.graph_text().contains("full("),
        "the constant itself stays"
    );
    // another dtype: the reading path (a cast of the float32 constant)
    let x64 = x.to_dtype(DType::F64).unwrap();
    let y64 = x64.maximum(&floor).unwrap();
    assert_eq!(y64.to_vec::<f64>().unwrap()[0], 0.1f32 as f64);
    // a constant written in place reads its new version
    let c = Tensor::scalar(0.1f32);
    c.add_(1.0).unwrap();
    assert_eq!(x.maximum(&c).unwrap().to_vec::<f32>().unwrap(), [1.1; 3]);
    // a leaf that requires grad keeps its history
    let w = Tensor::scalar(0.25f32).requires_grad_(true).unwrap();
    let loss = x.mul(&w).unwrap().sum(&[], false).unwrap();
    loss.backward().unwrap();
    let g = w.grad().unwrap().to_vec::<f32>().unwrap();
    assert!((g[0] - (0.05 + 0.5 - 1.0)).abs() < 1e-6, "{g:?}");
}
