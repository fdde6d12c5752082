//! `gather`, `index_select` and `take` as fused data-dependent loads on the JIT:
//! kernel counts (each fuses with its neighbours into one kernel), values equal to
//! the interpreter's for every dtype class and the awkward shapes (zero-dim inputs,
//! empty index tensors, size-0 dims, a gather index smaller than its input, inputs
//! read through views), and out-of-range indices reported with the interpreter's
//! exact messages (take wraps negative values, gather and index_select refuse them).
//!
//! The backend is process-wide: every test here holds `BACKEND` while it realizes.

use lazyfuse::{CpuBackend, DType, Tensor};
use std::sync::{Mutex, MutexGuard};

static BACKEND: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    let g = BACKEND.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_verify(true);
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    g
}

fn ints(v: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

fn ramp(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| ((i * 7 % 11) as f32 - 5.0) * 0.25).collect();
    Tensor::from_vec(v, shape).unwrap()
}

/// What `make()` prints (value or error) on `backend`, built afresh.
fn on(backend: CpuBackend, make: &dyn Fn() -> lazyfuse::Result<Tensor>) -> String {
    lazyfuse::set_cpu_backend(backend);
    let s = match make().and_then(|t| t.realize()) {
        Ok(r) => format!("{r} {:?} {:?}", r.dtype(), r.shape()),
        Err(e) => format!("error: {e}"),
    };
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    s
}

/// The JIT prints what the interpreter prints; returns it.
fn same(make: &dyn Fn() -> lazyfuse::Result<Tensor>) -> String {
    let interp = on(CpuBackend::Interp, make);
    let jit = on(CpuBackend::Jit, make);
    assert_eq!(jit, interp, "the JIT differs from the interpreter");
    jit
}

fn kernels(t: &Tensor) -> usize {
    t.kernel_count().unwrap()
}

#[test]
fn indexing_fuses_with_its_neighbours() {
    let _g = lock();
    let x = ramp(&[3, 4]);
    let idx = ints(&[3, 0, 1, 3, 2, 2], &[3, 2]);
    let y = x.gather(1, &idx).unwrap().mul(2.0).unwrap();
    assert_eq!(kernels(&y), 1, "{}", y.schedule_text().unwrap());
    let b = ramp(&[2, 4]);
    let s = x
        .index_select(0, &ints(&[2, 0], &[2]))
        .unwrap()
        .add(&b)
        .unwrap();
    assert_eq!(kernels(&s), 1, "{}", s.schedule_text().unwrap());
    let t = x.take(&ints(&[11, -1, 0, 5], &[2, 2])).unwrap();
    assert_eq!(kernels(&t), 1, "{}", t.schedule_text().unwrap());
    // a computed index (argmax) and a computed input fuse too: one kernel stores the
    // exp (read by position), the other reduces and gathers
    let am = x.argmax(Some(1), true).unwrap();
    let e = x.exp().unwrap();
    let r = e.gather(1, &am).unwrap().add(1.0).unwrap();
    assert!(kernels(&r) <= 2, "{}", r.schedule_text().unwrap());
    assert!(!y.schedule_text().unwrap().contains("extern"));
}

#[test]
fn values_match_the_interpreter() {
    let _g = lock();
    let x = || ramp(&[3, 4]);
    // gather: index smaller than the input in the other dim, repeats
    same(&|| x().gather(1, &ints(&[3, 0, 1, 3, 2, 2], &[3, 2]))?.mul(2.0));
    same(&|| x().gather(0, &ints(&[2, 0, 1], &[1, 3])));
    // through a transposed view, and of a computed input
    same(&|| x().t()?.gather(1, &ints(&[2, 0, 1, 1], &[2, 2])));
    same(&|| x().exp()?.gather(0, &ints(&[1, 2, 0, 0], &[1, 4]))?.neg());
    // a computed index
    same(&|| x().gather(1, &x().argmax(Some(1), true)?));
    same(&|| x().gather(1, &ints(&[1, 2], &[2, 1]).add(1)?));
    // empty index tensors and size-0 dims
    same(&|| x().gather(1, &ints(&[], &[3, 0])));
    same(&|| x().gather(1, &ints(&[], &[0, 2])));
    same(&|| ramp(&[0, 4]).gather(1, &ints(&[], &[0, 4])));
    same(&|| x().index_select(1, &ints(&[], &[0])));
    same(&|| x().take(&ints(&[], &[0, 3])));
    // zero-dim inputs
    let z = || {
        Tensor::from_vec(vec![2.5f64], &[])
            .unwrap()
            .view(&[])
            .unwrap()
    };
    same(&|| z().gather(0, &ints(&[0], &[])));
    same(&|| z().index_select(0, &ints(&[0], &[1])));
    same(&|| z().take(&ints(&[0, -1, 0], &[3])));
    // index_select along each axis, through a view, with repeats
    same(&|| x().index_select(0, &ints(&[2, 2, 0], &[3]))?.add(1.0));
    same(&|| x().index_select(1, &ints(&[3, 1], &[2])));
    same(&|| x().t()?.index_select(1, &ints(&[1, 0, 2], &[3])));
    // take wraps negative values; through a non-row-major view it reads row-major
    same(&|| x().take(&ints(&[-1, -12, 11, 0, 5, -5], &[2, 3])));
    same(&|| x().t()?.take(&ints(&[1, 2, 3, -1], &[4])));
    // every dtype class a loop kernel handles
    for dt in [
        DType::Bool,
        DType::U8,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::F16,
        DType::BF16,
        DType::F64,
        DType::F8E4M3FN,
        DType::C64,
    ] {
        let xd = || x().to_dtype(dt);
        same(&|| xd()?.gather(1, &ints(&[3, 0, 1, 3, 2, 2], &[3, 2])));
        same(&|| xd()?.index_select(0, &ints(&[2, 0], &[2])));
        same(&|| xd()?.take(&ints(&[-1, 4, 7], &[3])));
    }
}

#[test]
fn out_of_range_indices_are_the_interpreters_errors() {
    let _g = lock();
    let x = || ramp(&[2, 3]);
    for v in [i64::MIN, -4, -1, 3, i64::MAX] {
        let msg = same(&|| x().gather(1, &ints(&[0, v], &[1, 2]))?.mul(2.0));
        assert_eq!(
            msg,
            format!("error: index {v} is out of bounds for dimension 1 with size 3")
        );
        let msg = same(&|| x().index_select(1, &ints(&[1, v], &[2]))?.add(1.0));
        assert_eq!(
            msg,
            format!("error: INDICES element is out of DATA bounds, id={v} axis_dim=3")
        );
    }
    for v in [i64::MIN, -7, 6, i64::MAX] {
        let msg = same(&|| x().take(&ints(&[0, v, -1], &[3])));
        assert_eq!(
            msg,
            format!("error: out of range: tried to access index {v} on a tensor of 6 elements.")
        );
    }
    // the first bad value in order is the one named
    let msg = same(&|| x().gather(0, &ints(&[0, 5, 1, 1, 7, 0], &[2, 3])));
    assert_eq!(
        msg,
        "error: index 5 is out of bounds for dimension 0 with size 2"
    );
    // the zero-dim form, an empty input, and an empty output that still checks
    let z = || Tensor::from_vec(vec![1i32], &[]).unwrap();
    let msg = same(&|| z().index_select(0, &ints(&[1], &[1])));
    assert_eq!(msg, "error: index out of range in self");
    let msg = same(&|| z().gather(0, &ints(&[-1], &[])));
    assert_eq!(
        msg,
        "error: index -1 is out of bounds for dimension 0 with size 1"
    );
    // (take from an empty input is refused when built)
    let msg = same(&|| ramp(&[0]).take(&ints(&[0], &[1])));
    assert_eq!(msg, "error: take(): tried to take from an empty tensor");
    let msg = same(&|| ramp(&[0, 3]).index_select(1, &ints(&[5], &[1])));
    assert_eq!(
        msg,
        "error: INDICES element is out of DATA bounds, id=5 axis_dim=3"
    );
    let msg = same(&|| ramp(&[2, 0]).gather(1, &ints(&[0, 0], &[2, 1])));
    assert_eq!(
        msg,
        "error: index 0 is out of bounds for dimension 1 with size 0"
    );
}
