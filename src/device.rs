//! `Device`: where a tensor lives. Parsing follows PyTorch (`"cpu"`, `"cuda"`,
//! `"cuda:1"`). Tensors move with `Tensor::to_device`; ops on tensors of two devices
//! are an error, except zero-dim CPU tensors, which join an op on a GPU.

use crate::error::Error;
use std::fmt;
use std::str::FromStr;

/// A compute device.
///
/// ```
/// use lazyfuse::Device;
/// assert_eq!("cuda:1".parse::<Device>().unwrap(), Device::Cuda(1));
/// assert_eq!(Device::Cpu.to_string(), "cpu");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Device {
    /// The host CPU.
    #[default]
    Cpu,
    /// An NVIDIA GPU by ordinal (`"cuda"` means ordinal 0).
    Cuda(usize),
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

impl FromStr for Device {
    type Err = Error;

    /// PyTorch's grammar: a device type, then optionally `:` and an index of decimal
    /// digits without sign or leading zero. `"cpu:N"` is valid (PyTorch keeps the
    /// index; lazyfuse has one host device, so every CPU index names [`Device::Cpu`]).
    /// A known type with a malformed rest is "Invalid device string: '…'"; an unknown
    /// type is the "Expected one of …" error.
    ///
    /// ```
    /// use lazyfuse::Device;
    /// assert_eq!("cpu:0".parse::<Device>().unwrap(), Device::Cpu);
    /// assert_eq!(
    ///     "cuda:+1".parse::<Device>().unwrap_err().to_string(),
    ///     "Invalid device string: 'cuda:+1'"
    /// );
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // PyTorch's regex: `([a-zA-Z_]+)(?::([1-9]\d*|0))?`, matched in full.
        let invalid = || Error::InvalidDevice(s.to_string());
        let (kind, index) = match s.split_once(':') {
            Some((kind, index)) => (kind, Some(index)),
            None => (s, None),
        };
        let kind_ok =
            !kind.is_empty() && kind.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_');
        let index_ok = index.is_none_or(|i| {
            !i.is_empty()
                && i.bytes().all(|b| b.is_ascii_digit())
                && (i == "0" || !i.starts_with('0'))
        });
        if !kind_ok || !index_ok {
            return Err(invalid());
        }
        let i: usize = match index {
            Some(i) => i.parse().map_err(|_| invalid())?,
            None => 0,
        };
        match kind {
            "cpu" => Ok(Device::Cpu),
            "cuda" => Ok(Device::Cuda(i)),
            other => Err(Error::Device(other.to_string())),
        }
    }
}

/// `Device::from(1)` is `cuda:1`, as PyTorch's `torch.device(1)`.
///
/// ```
/// use lazyfuse::Device;
/// assert_eq!(Device::from(1), Device::Cuda(1));
/// ```
impl From<usize> for Device {
    fn from(ordinal: usize) -> Device {
        Device::Cuda(ordinal)
    }
}

/// A CUDA ordinal given as a signed integer: negative is PyTorch's error.
///
/// ```
/// use lazyfuse::Device;
/// assert_eq!(Device::try_from(2i64).unwrap(), Device::Cuda(2));
/// assert_eq!(
///     Device::try_from(-1i64).unwrap_err().to_string(),
///     "Device index must not be negative"
/// );
/// ```
impl TryFrom<i64> for Device {
    type Error = Error;

    fn try_from(ordinal: i64) -> Result<Device, Error> {
        usize::try_from(ordinal)
            .map(Device::Cuda)
            .map_err(|_| Error::InvalidDeviceIndex)
    }
}

/// What [`crate::Tensor::to_device`] accepts, as PyTorch's `Tensor.to`: a [`Device`],
/// a device string (`"cuda:1"`, `"cpu"`), or a CUDA ordinal (`1`).
pub trait IntoDevice {
    /// The device meant, or PyTorch's error for a malformed one.
    fn into_device(self) -> Result<Device, Error>;
}

impl IntoDevice for Device {
    fn into_device(self) -> Result<Device, Error> {
        Ok(self)
    }
}

impl IntoDevice for &str {
    fn into_device(self) -> Result<Device, Error> {
        self.parse()
    }
}

impl IntoDevice for &String {
    fn into_device(self) -> Result<Device, Error> {
        self.parse()
    }
}

impl IntoDevice for usize {
    fn into_device(self) -> Result<Device, Error> {
        Ok(Device::from(self))
    }
}

impl IntoDevice for i64 {
    fn into_device(self) -> Result<Device, Error> {
        Device::try_from(self)
    }
}

impl IntoDevice for i32 {
    fn into_device(self) -> Result<Device, Error> {
        Device::try_from(i64::from(self))
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
/// let x = Tensor::ones(&[2], DType::F32).to_device(Device::Cuda(0)).unwrap();
/// assert_eq!(x.device(), Device::Cuda(0));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case checked against PyTorch 2.15's `torch.device`.
    #[test]
    fn parses_as_pytorch() {
        assert_eq!("cpu".parse::<Device>().unwrap(), Device::Cpu);
        assert_eq!("cpu:0".parse::<Device>().unwrap(), Device::Cpu);
        assert_eq!("cpu:1".parse::<Device>().unwrap(), Device::Cpu);
        assert_eq!("cuda".parse::<Device>().unwrap(), Device::Cuda(0));
        assert_eq!("cuda:10".parse::<Device>().unwrap(), Device::Cuda(10));
        for bad in [
            "cuda:+1", "cuda:-1", "cpu:01", "cuda:", "cpu:0:0", "cuda:1a", " cpu", "cpu ", "cuda1",
            "1cpu", "cuda:00",
        ] {
            let err = bad.parse::<Device>().unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("Invalid device string: '{bad}'"),
                "{bad}"
            );
        }
        let err = "cpux:0".parse::<Device>().unwrap_err().to_string();
        assert!(
            err.ends_with("device type at start of device string: cpux"),
            "{err}"
        );
    }
}
