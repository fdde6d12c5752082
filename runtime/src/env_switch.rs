//! `EnvSwitch`: a process-wide on/off setting whose initial value an environment
//! variable gives, read once, and which a setter overrides.
//!
//! Settings asked on every realize (the CUDA compile check, the device emulation)
//! must not call `getenv` each time, and a setter called before the first read
//! must win over the variable.

use std::sync::atomic::{AtomicU8, Ordering};

/// An on/off setting: `set` if called, else the environment variable `var`
/// (set and not `0`: on), read on the first `get`.
///
/// ```
/// use lazyfuse_runtime::env_switch::EnvSwitch;
/// static S: EnvSwitch = EnvSwitch::new("LAZYFUSE_DOC_EXAMPLE_SWITCH");
/// assert!(!S.get()); // the variable is not set
/// S.set(true);
/// assert!(S.get());
/// ```
#[derive(Debug)]
pub struct EnvSwitch {
    /// the variable that gives the initial value
    var: &'static str,
    /// 0: not chosen yet (read `var`), 1: on, 2: off
    state: AtomicU8,
}

impl EnvSwitch {
    /// A switch whose initial value `var` gives.
    pub const fn new(var: &'static str) -> EnvSwitch {
        EnvSwitch {
            var,
            state: AtomicU8::new(0),
        }
    }

    /// Turns the switch on or off from now on.
    pub fn set(&self, on: bool) {
        self.state.store(if on { 1 } else { 2 }, Ordering::Relaxed);
    }

    /// Whether the switch is on.
    pub fn get(&self) -> bool {
        match self.state.load(Ordering::Relaxed) {
            1 => true,
            2 => false,
            _ => {
                // A racing `set` wins (the exchange only replaces "not chosen").
                let on = std::env::var_os(self.var).is_some_and(|v| v != "0");
                let _ = self.state.compare_exchange(
                    0,
                    if on { 1 } else { 2 },
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                self.state.load(Ordering::Relaxed) == 1
            }
        }
    }
}
