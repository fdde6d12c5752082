//! The JIT from several threads at once: realizes run outside the store's lock and
//! share the kernel cache and the thread pool; every thread must get its own values.

use lazyfuse::{DType, RoundingMode, Tensor};

#[test]
fn threads_realize_at_once_and_get_their_own_values() {
    let n = 1 << 18; // large enough that kernels split across the pool
    std::thread::scope(|s| {
        for t in 0..4i64 {
            s.spawn(move || {
                for round in 0..5i64 {
                    let k = (t * 10 + round) as f64;
                    let x = Tensor::arange(0.0, n as f64, 1.0, DType::F64).unwrap();
                    let y = x.mul(2.0).unwrap().add(k).unwrap().sub(&x).unwrap();
                    let total = y.sum(&[], false).unwrap().to_vec::<f64>().unwrap()[0];
                    let nf = n as f64;
                    assert_eq!(
                        total,
                        nf * (nf - 1.0) / 2.0 + k * nf,
                        "thread {t} round {round}"
                    );
                    let v = y.to_vec::<f64>().unwrap();
                    assert_eq!(v[n - 1], (n - 1) as f64 + k);
                }
            });
        }
    });
}

#[test]
fn integer_division_by_zero_is_an_error_on_any_chunk() {
    let n = 1 << 18;
    let x = Tensor::arange(0.0, n as f64, 1.0, DType::I64).unwrap();
    // Only the last element divides by zero: the error must survive the split.
    let d = x.sub((n - 1) as i64).unwrap();
    let err = x
        .div_mode(&d, RoundingMode::Floor)
        .and_then(|q| q.realize())
        .unwrap_err();
    assert_eq!(err.to_string(), "ZeroDivisionError");
}
