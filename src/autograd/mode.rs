//! Grad mode: whether the ops a thread records now are remembered for
//! differentiation (PyTorch's thread-local `torch.is_grad_enabled()`).

use std::cell::Cell;

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Whether this thread records gradient history (on unless [`no_grad`] or
/// [`set_grad_enabled`] turned it off).
///
/// ```
/// assert!(lazyfuse::is_grad_enabled());
/// lazyfuse::no_grad(|| assert!(!lazyfuse::is_grad_enabled()));
/// ```
pub fn is_grad_enabled() -> bool {
    ENABLED.with(Cell::get)
}

/// Turns gradient recording on or off for this thread (PyTorch's
/// `torch.set_grad_enabled`).
///
/// ```
/// use lazyfuse::{DType, Tensor};
/// let w = Tensor::ones(&[2], DType::F32).requires_grad_(true).unwrap();
/// lazyfuse::set_grad_enabled(false);
/// assert!(!w.mul(2.0).unwrap().requires_grad());
/// lazyfuse::set_grad_enabled(true);
/// assert!(w.mul(2.0).unwrap().requires_grad());
/// ```
pub fn set_grad_enabled(enabled: bool) {
    ENABLED.with(|e| e.set(enabled));
}

/// Runs `f` with gradient recording off on this thread (PyTorch's `with
/// torch.no_grad():`), then restores the previous mode, also when `f` panics. An
/// optimizer updates its parameters in place inside it.
///
/// ```
/// use lazyfuse::{DType, Tensor};
/// let w = Tensor::ones(&[2], DType::F32).requires_grad_(true).unwrap();
/// let y = lazyfuse::no_grad(|| w.mul(3.0).unwrap());
/// assert!(!y.requires_grad());
/// ```
pub fn no_grad<R>(f: impl FnOnce() -> R) -> R {
    with_grad_mode(false, f)
}

/// Runs `f` with gradient recording set to `enabled`, restoring the previous mode
/// after.
pub(crate) fn with_grad_mode<R>(enabled: bool, f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            set_grad_enabled(self.0);
        }
    }
    let _restore = Restore(is_grad_enabled());
    set_grad_enabled(enabled);
    f()
}
