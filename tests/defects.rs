//! Regression tests of issue 5's defects list: sizes that overflow, allocations that
//! fail, panics on user input, quadratic bookkeeping, `arange`/`Device` edge cases and
//! messages that differ from PyTorch's. Each expected message was checked against
//! PyTorch 2.15.

use lazyfuse::{DType, Device, Tensor};

fn err_text<T: std::fmt::Debug>(r: lazyfuse::Result<T>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn arange_non_finite_step_and_bounds() {
    let nan = f64::NAN;
    assert_eq!(
        err_text(Tensor::arange(0.0, 1.0, nan, DType::F32)),
        "step must be finite but got nan"
    );
    assert_eq!(
        err_text(Tensor::arange(0.0, 1.0, f64::INFINITY, DType::F32)),
        "step must be finite but got inf"
    );
    assert_eq!(
        err_text(Tensor::arange(nan, 1.0, 1.0, DType::F32)),
        "unsupported range: nan -> 1"
    );
    assert_eq!(
        err_text(Tensor::arange(0.0, f64::INFINITY, 1.0, DType::F32)),
        "unsupported range: 0 -> inf"
    );
    assert_eq!(
        err_text(Tensor::arange(0.0, 1.0, 0.0, DType::F32)),
        "step must be nonzero"
    );
}

#[test]
fn arange_huge_lengths_are_errors_not_panics() {
    for (end, step) in [(1e30, 1.0), (1e19, 1.0), (1.0, 1e-300)] {
        assert_eq!(
            err_text(Tensor::arange(0.0, end, step, DType::F32)),
            "invalid size, possible overflow?"
        );
    }
    // Fits int64 but not in bytes.
    let e = err_text(Tensor::arange(0.0, 9.223372036854774e18, 1.0, DType::F32));
    assert_eq!(
        e,
        "Storage size calculation overflowed with sizes=[9223372036854773760]"
    );
}

#[test]
fn device_strings_as_pytorch() {
    assert_eq!("cpu:0".parse::<Device>().unwrap(), Device::Cpu);
    assert_eq!(
        err_text("cuda:+1".parse::<Device>()),
        "Invalid device string: 'cuda:+1'"
    );
    assert_eq!(
        err_text("cuda:".parse::<Device>()),
        "Invalid device string: 'cuda:'"
    );
}
