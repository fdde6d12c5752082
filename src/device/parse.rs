//! Parsing a device as PyTorch does: device strings (`"cuda:1"`), CUDA ordinals,
//! everything `Tensor::to_device` accepts ([`IntoDevice`]), and resolving a parsed
//! device to the one tensors live on.

use super::{Device, DeviceType};
use crate::error::Error;
use lazyfuse_ir::Error as IrError;
use std::str::FromStr;

impl Device {
    /// The device tensors made for this one live on: `cpu` for any CPU index, the
    /// current CUDA device (`cuda:0`) for `cuda`; a type lazyfuse cannot run is an
    /// error naming it.
    ///
    /// ```
    /// use lazyfuse::Device;
    /// assert_eq!("cpu:0".parse::<Device>()?.resolve()?, Device::CPU);
    /// assert_eq!("cuda".parse::<Device>()?.resolve()?, Device::cuda(0));
    /// assert!("mps".parse::<Device>()?.resolve().is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn resolve(self) -> Result<Device, Error> {
        match self.kind {
            DeviceType::Cpu => Ok(Device::CPU),
            DeviceType::Cuda => Ok(Device::cuda(self.index.unwrap_or(0))),
            other => Err(IrError::Unsupported(format!("tensors on device type '{other}'")).into()),
        }
    }
}

impl FromStr for Device {
    type Err = Error;

    /// PyTorch's grammar: a device type, then optionally `:` and an index of decimal
    /// digits without sign or leading zero. A known type with a malformed rest is
    /// "Invalid device string: '…'"; an unknown type is the "Expected one of …" error.
    ///
    /// ```
    /// use lazyfuse::Device;
    /// assert_eq!("cpu:0".parse::<Device>().unwrap().index(), Some(0));
    /// assert_eq!(
    ///     "cuda:+1".parse::<Device>().unwrap_err().to_string(),
    ///     "Invalid device string: 'cuda:+1'"
    /// );
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // PyTorch's regex: `([a-zA-Z_]+)(?::([1-9]\d*|0))?`, matched in full.
        let invalid = || Error::InvalidDevice(s.to_string());
        if s.is_empty() {
            return Err(IrError::invalid("device", "Device string must not be empty").into());
        }
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
        let index = match index {
            // (PyTorch reads an `int`, then keeps its low 8 bits; an index stays as given here)
            Some(i) => Some(i.parse::<i32>().map_err(|_| {
                crate::Error::from(IrError::invalid(
                    "device",
                    format!("Could not parse device index '{i}' in device string '{s}'"),
                ))
            })? as usize),
            None => None,
        };
        match DeviceType::ALL.iter().find(|t| t.name() == kind) {
            Some(&kind) => Ok(Device { kind, index }),
            None => Err(Error::Device(kind.to_string())),
        }
    }
}

/// A CUDA ordinal given as a signed integer: negative is PyTorch's error.
///
/// ```
/// use lazyfuse::Device;
/// assert_eq!(Device::try_from(2i64).unwrap(), Device::cuda(2));
/// assert_eq!(
///     Device::try_from(-1i64).unwrap_err().to_string(),
///     "Device index must not be negative"
/// );
/// ```
impl TryFrom<i64> for Device {
    type Error = Error;

    fn try_from(ordinal: i64) -> Result<Device, Error> {
        usize::try_from(ordinal)
            .map(Device::cuda)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case checked against PyTorch 2.15's `torch.device`.
    #[test]
    fn parses_as_pytorch() {
        let parse = |s: &str| s.parse::<Device>().unwrap();
        assert_eq!(parse("cpu"), Device::CPU);
        assert_eq!(parse("cpu:0"), Device::new(DeviceType::Cpu, Some(0)));
        assert_eq!(parse("cpu:1").to_string(), "cpu:1");
        assert_ne!(parse("cpu"), parse("cpu:0"));
        assert_eq!(parse("cuda"), Device::new(DeviceType::Cuda, None));
        assert_eq!(parse("cuda:10"), Device::cuda(10));
        for t in DeviceType::ALL {
            assert_eq!(parse(t.name()).kind(), t);
            assert_eq!(parse(&format!("{t}:3")).to_string(), format!("{t}:3"));
        }
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
        for bad in ["cpux:0", "CUDA", "msnpu", "fake"] {
            let err = bad.parse::<Device>().unwrap_err().to_string();
            let kind = bad.split(':').next().unwrap();
            assert_eq!(
                err,
                format!("Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: {kind}")
            );
        }
    }
}
