//! `Device`: where a tensor lives, as PyTorch's `torch.device`: a device type and an
//! optional index. Every type PyTorch 2.15 parses parses and prints (`"mps:1"`,
//! `"meta"`); lazyfuse runs the CPU and CUDA, and asking for another device is an
//! error when a tensor is made or moved there, not when the device is parsed.
//! Tensors move with `Tensor::to_device`; ops on tensors of two devices are an error,
//! except zero-dim CPU tensors, which join an op on a GPU.

use crate::error::Error;
use lazyfuse_ir::Error as IrError;
use std::cell::Cell;
use std::fmt;
use std::str::FromStr;

/// A device type, as PyTorch's `torch.device(...).type`, in PyTorch's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceType {
    /// the host CPU
    Cpu,
    /// an NVIDIA GPU
    Cuda,
    /// a Graphcore IPU
    Ipu,
    /// an Intel GPU
    Xpu,
    /// oneDNN tensors (deprecated in PyTorch)
    Mkldnn,
    /// OpenGL
    Opengl,
    /// OpenCL
    Opencl,
    /// IDEEP
    Ideep,
    /// an AMD GPU through HIP
    Hip,
    /// NEC SX-Aurora
    Ve,
    /// an FPGA
    Fpga,
    /// Microsoft MAIA
    Maia,
    /// XLA devices (TPUs)
    Xla,
    /// the lazy tensor core
    Lazy,
    /// Vulkan
    Vulkan,
    /// Apple Metal
    Mps,
    /// shapes and dtypes without data
    Meta,
    /// Intel Gaudi
    Hpu,
    /// Meta's training and inference accelerator
    Mtia,
    /// an out-of-tree backend
    PrivateUseOne,
}

impl DeviceType {
    /// Every type, in PyTorch's order.
    pub const ALL: [DeviceType; 20] = [
        DeviceType::Cpu,
        DeviceType::Cuda,
        DeviceType::Ipu,
        DeviceType::Xpu,
        DeviceType::Mkldnn,
        DeviceType::Opengl,
        DeviceType::Opencl,
        DeviceType::Ideep,
        DeviceType::Hip,
        DeviceType::Ve,
        DeviceType::Fpga,
        DeviceType::Maia,
        DeviceType::Xla,
        DeviceType::Lazy,
        DeviceType::Vulkan,
        DeviceType::Mps,
        DeviceType::Meta,
        DeviceType::Hpu,
        DeviceType::Mtia,
        DeviceType::PrivateUseOne,
    ];

    /// PyTorch's name of the type (`"cuda"`).
    pub fn name(self) -> &'static str {
        match self {
            DeviceType::Cpu => "cpu",
            DeviceType::Cuda => "cuda",
            DeviceType::Ipu => "ipu",
            DeviceType::Xpu => "xpu",
            DeviceType::Mkldnn => "mkldnn",
            DeviceType::Opengl => "opengl",
            DeviceType::Opencl => "opencl",
            DeviceType::Ideep => "ideep",
            DeviceType::Hip => "hip",
            DeviceType::Ve => "ve",
            DeviceType::Fpga => "fpga",
            DeviceType::Maia => "maia",
            DeviceType::Xla => "xla",
            DeviceType::Lazy => "lazy",
            DeviceType::Vulkan => "vulkan",
            DeviceType::Mps => "mps",
            DeviceType::Meta => "meta",
            DeviceType::Hpu => "hpu",
            DeviceType::Mtia => "mtia",
            DeviceType::PrivateUseOne => "privateuseone",
        }
    }
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A device: a type and an optional index, as `torch.device`. `"cuda"` (no index)
/// is the current CUDA device, a different value from `"cuda:0"`, where tensors made
/// there live; CPU tensors are on `cpu` whatever index was asked.
///
/// ```
/// use lazyfuse::{Device, DeviceType};
/// assert_eq!("cuda:1".parse::<Device>().unwrap(), Device::cuda(1));
/// let any: Device = "cuda".parse().unwrap();
/// assert_eq!((any.kind(), any.index(), any.to_string()), (DeviceType::Cuda, None, "cuda".into()));
/// assert_ne!(any, Device::cuda(0));
/// assert_eq!("cpu:0".parse::<Device>().unwrap().to_string(), "cpu:0");
/// assert_eq!(Device::CPU.to_string(), "cpu");
/// assert_eq!("mps".parse::<Device>().unwrap().kind(), DeviceType::Mps);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    kind: DeviceType,
    index: Option<usize>,
}

impl Default for Device {
    fn default() -> Device {
        Device::CPU
    }
}

impl Device {
    /// The host CPU (`"cpu"`).
    pub const CPU: Device = Device {
        kind: DeviceType::Cpu,
        index: None,
    };

    /// A device of `kind`, with an index or none (PyTorch's `torch.device(type, index)`).
    ///
    /// ```
    /// use lazyfuse::{Device, DeviceType};
    /// assert_eq!(Device::new(DeviceType::Cuda, Some(1)), Device::cuda(1));
    /// assert_eq!(Device::new(DeviceType::Meta, None).to_string(), "meta");
    /// ```
    pub const fn new(kind: DeviceType, index: Option<usize>) -> Device {
        Device { kind, index }
    }

    /// The CUDA device of this ordinal (`"cuda:N"`).
    ///
    /// ```
    /// assert_eq!(lazyfuse::Device::cuda(2).to_string(), "cuda:2");
    /// ```
    pub const fn cuda(ordinal: usize) -> Device {
        Device {
            kind: DeviceType::Cuda,
            index: Some(ordinal),
        }
    }

    /// The device type (`torch.device.type`).
    pub fn kind(self) -> DeviceType {
        self.kind
    }

    /// The index, if one was given (`torch.device.index`).
    pub fn index(self) -> Option<usize> {
        self.index
    }

    /// Whether this is a CUDA device (any index).
    pub fn is_cuda(self) -> bool {
        self.kind == DeviceType::Cuda
    }

    /// Whether this is the CPU (any index).
    pub fn is_cpu(self) -> bool {
        self.kind == DeviceType::Cpu
    }

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

    /// The CUDA ordinal of a resolved device (`None` on the CPU).
    pub(crate) fn ordinal(self) -> Option<usize> {
        match self.kind {
            DeviceType::Cuda => Some(self.index.unwrap_or(0)),
            _ => None,
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}:{i}", self.kind),
            None => write!(f, "{}", self.kind),
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

/// `Device::from(1)` is `cuda:1`, as PyTorch's `torch.device(1)`.
///
/// ```
/// use lazyfuse::Device;
/// assert_eq!(Device::from(1), Device::cuda(1));
/// ```
impl From<usize> for Device {
    fn from(ordinal: usize) -> Device {
        Device::cuda(ordinal)
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
