//! `Device`: where a tensor lives, as PyTorch's `torch.device`: a device type and an
//! optional index. Every type PyTorch 2.15 parses parses and prints (`"mps:1"`,
//! `"meta"`); lazyfuse runs the CPU and CUDA, and asking for another device is an
//! error when a tensor is made or moved there, not when the device is parsed.
//! Tensors move with `Tensor::to_device`; ops on tensors of two devices are an error,
//! except zero-dim CPU tensors, which join an op on a GPU.
//!
//! # Files
//! `mod.rs` (the `Device` value), `parse` (PyTorch's device strings and ordinals,
//! resolving a device to the one tensors live on), `default` (the thread's default
//! device and the CUDA emulation switch).

use std::fmt;

mod default;
mod parse;

pub use default::{
    cuda_emulation, get_default_device, set_cuda_emulation, set_default_device, DeviceGuard,
};
pub use parse::IntoDevice;

/// A device type, as PyTorch's `torch.device(...).type`, in PyTorch's order.
// (a word wide, so that a [`Device`] has no padding: copies of one, such as a
// new storage's, move padding bytes with loads and stores of mismatched
// widths, and the loads wait for the stores to land)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
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
