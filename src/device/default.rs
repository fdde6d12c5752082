//! The thread's default device (PyTorch's `torch.set_default_device`) and the
//! switch of the host emulation of `cuda:0`.

use super::{Device, IntoDevice};
use crate::error::Error;
use std::cell::Cell;

thread_local! {
    static DEFAULT_DEVICE: Cell<Device> = const { Cell::new(Device::CPU) };
}

/// Where the factories (`zeros`, `ones`, `full`, `arange`, `linspace`, `eye`, `rand*`,
/// `from_vec`, `scalar`) put tensors when no device is named: PyTorch's
/// `torch.set_default_device`, for this thread. A device lazyfuse cannot run (another
/// type, a CUDA device this machine lacks) is an error here already.
///
/// ```
/// use lazyfuse::{DType, Device, Tensor};
/// lazyfuse::set_default_device("cpu")?;
/// assert_eq!(lazyfuse::get_default_device(), Device::CPU);
/// assert!(lazyfuse::set_default_device("meta").is_err());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn set_default_device(device: impl IntoDevice) -> Result<(), Error> {
    let device = device.into_device()?.resolve()?;
    if let Some(n) = device.ordinal() {
        lazyfuse_runtime::resident::check_device(n)?;
    }
    DEFAULT_DEVICE.with(|d| d.set(device));
    Ok(())
}

/// The device factories use when none is named (see [`set_default_device`]).
pub fn get_default_device() -> Device {
    DEFAULT_DEVICE.with(Cell::get)
}

/// A scope in which factories allocate on a device, as Python's
/// `with torch.device(...)`: the previous default comes back when the guard drops.
///
/// ```
/// use lazyfuse::{DType, Device, DeviceGuard, Tensor};
/// lazyfuse::set_cuda_emulation(true);
/// {
///     let _on_gpu = DeviceGuard::new("cuda")?;
///     assert_eq!(Tensor::zeros(&[2], DType::F32).device(), Device::cuda(0));
/// }
/// assert_eq!(Tensor::zeros(&[2], DType::F32).device(), Device::CPU);
/// lazyfuse::set_cuda_emulation(false);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[must_use = "the device is the default only while the guard lives"]
pub struct DeviceGuard {
    previous: Device,
}

impl DeviceGuard {
    /// Makes `device` the default until the guard drops.
    pub fn new(device: impl IntoDevice) -> Result<DeviceGuard, Error> {
        let previous = get_default_device();
        set_default_device(device)?;
        Ok(DeviceGuard { previous })
    }
}

impl Drop for DeviceGuard {
    fn drop(&mut self) {
        DEFAULT_DEVICE.with(|d| d.set(self.previous));
    }
}

/// Turns the host emulation of `cuda:0` on or off: with it on, CUDA tensors live in
/// host memory and their kernels (the same generated CUDA C) are compiled by the
/// system C++ compiler and run on the CPU. A test instrument for machines without a
/// GPU, off by default (`LAZYFUSE_CUDA_EMULATION=1` sets the initial value): it checks
/// everything of the CUDA path but the driver calls. Without it, and without a
/// driver, CUDA tensors are "CUDA driver not found: …".
///
/// ```
/// use lazyfuse::{DType, Device, Tensor};
/// lazyfuse::set_cuda_emulation(true);
/// let x = Tensor::ones(&[2], DType::F32).to_device(Device::cuda(0)).unwrap();
/// assert_eq!(x.device(), Device::cuda(0));
/// # // Compiling C++ takes a while; the run itself is what the tests check.
/// lazyfuse::set_cuda_emulation(false);
/// ```
pub fn set_cuda_emulation(on: bool) {
    lazyfuse_runtime::resident::set_emulation(on);
}

/// Whether `cuda:0` is the host emulation (see [`set_cuda_emulation`]).
///
/// ```
/// lazyfuse::set_cuda_emulation(false);
/// assert!(!lazyfuse::cuda_emulation());
/// ```
pub fn cuda_emulation() -> bool {
    lazyfuse_runtime::resident::emulated()
}
