//! Where a tensor lives: `device`, `to_device`, and the rules that move or refuse
//! operands on different devices.

use super::Tensor;
use crate::error::{Error, Result};
use crate::Device;

impl Tensor {
    /// The device its storage lives on.
    ///
    /// ```
    /// use lazyfuse::{DType, Device, Tensor};
    /// assert_eq!(Tensor::zeros(&[2], DType::F32).device(), Device::CPU);
    /// ```
    pub fn device(&self) -> Device {
        self.0.storage.device
    }

    /// PyTorch's `Tensor.get_device()`: the CUDA ordinal, or -1 on the CPU.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert_eq!(Tensor::zeros(&[2], DType::F32).get_device(), -1);
    /// ```
    pub fn get_device(&self) -> i64 {
        self.device().ordinal().map_or(-1, |n| n as i64)
    }

    /// This tensor's values on `device` (PyTorch's `Tensor.to(device)`): the tensor
    /// itself when it is there already, else a new contiguous tensor there. A copy
    /// between devices is made now (the values are computed first, on their own
    /// device): a transfer is where a graph of one device ends and the next begins.
    ///
    /// # Errors
    /// "CUDA driver not found: …" without an NVIDIA driver, an invalid ordinal where
    /// the device does not exist, and what computing the values or the copy reports.
    ///
    /// The device may be given as PyTorch's `Tensor.to` takes it: a [`Device`], a
    /// string (`"cuda:1"`), or a CUDA ordinal (`1`); a malformed one is PyTorch's
    /// error.
    ///
    /// ```
    /// use lazyfuse::{DType, Device, Tensor};
    /// let x = Tensor::ones(&[2], DType::F32);
    /// assert_eq!(x.to_device(Device::CPU).unwrap().to_vec::<f32>().unwrap(), vec![1.0, 1.0]);
    /// assert!(x.to_device("cpu").unwrap().shares_storage(&x));
    /// assert!(x.to_device("cuda:+1").is_err());
    /// match x.to_device(Device::cuda(0)) {
    ///     Ok(g) => assert_eq!(g.mul(2).unwrap().to_vec::<f32>().unwrap(), vec![2.0, 2.0]),
    ///     Err(e) => println!("no GPU here: {e}"),
    /// }
    /// ```
    pub fn to_device(&self, device: impl crate::IntoDevice) -> Result<Tensor> {
        let device = device.into_device()?.resolve()?;
        if device == self.device() {
            return Ok(self.clone());
        }
        if let Some(n) = device.ordinal() {
            lazyfuse_runtime::resident::check_device(n)?;
        }
        let host = self.read_buffer()?;
        Tensor::from_buffer(host, &self.shape(), "to_device", device)
    }

    /// Checks that `tensors` may meet in op `op` (PyTorch's rule: all on one device,
    /// except zero-dim CPU tensors, which join an op on a CUDA device) and returns,
    /// by position, the copy to read in place of a tensor that had to move (`None`:
    /// read the tensor itself; empty when nothing moved, the usual case, which
    /// allocates nothing). Call it before taking the store's lock: a move realizes
    /// its tensor.
    pub(crate) fn align_devices(
        op: &str,
        tensors: &[Option<&Tensor>],
    ) -> Result<Vec<Option<Tensor>>> {
        let mut device = Device::CPU;
        for t in tensors.iter().flatten() {
            let d = t.device();
            if d != Device::CPU {
                if device != Device::CPU && device != d {
                    return Err(Error::device_mismatch(op, device, d));
                }
                device = d;
            }
        }
        Tensor::align_to(op, device, tensors)
    }

    /// [`Tensor::align_devices`] for an op whose device is fixed (an in-place op runs
    /// on its destination's device): every tensor must be on `device`, except
    /// zero-dim CPU tensors, which move there.
    pub(crate) fn align_to(
        op: &str,
        device: Device,
        tensors: &[Option<&Tensor>],
    ) -> Result<Vec<Option<Tensor>>> {
        if tensors.iter().flatten().all(|t| t.device() == device) {
            return Ok(Vec::new());
        }
        tensors
            .iter()
            .map(|t| match t {
                Some(t) if t.device() != device => {
                    if t.device() == Device::CPU && t.ndim() == 0 {
                        t.to_device(device).map(Some)
                    } else {
                        Err(Error::device_mismatch(op, device, t.device()))
                    }
                }
                _ => Ok(None),
            })
            .collect()
    }

    /// Whether every tensor given is on the CPU (nothing to check or move).
    pub(crate) fn all_on_cpu(tensors: &[Option<&Tensor>]) -> bool {
        tensors.iter().flatten().all(|t| t.device() == Device::CPU)
    }

    /// Checks that `tensors` are all on one device, with no exception (the indexing
    /// ops: PyTorch moves no CPU index to the GPU either).
    pub(crate) fn same_device(op: &str, tensors: &[&Tensor]) -> Result<()> {
        let Some(first) = tensors.first() else {
            return Ok(());
        };
        match tensors.iter().find(|t| t.device() != first.device()) {
            Some(t) => Err(Error::device_mismatch(op, first.device(), t.device())),
            None => Ok(()),
        }
    }

    /// The tensor an op reads at position `i` after [`Tensor::align_devices`]: the
    /// moved copy, else this tensor.
    pub(crate) fn or_moved<'a>(&'a self, moved: &'a [Option<Tensor>], i: usize) -> &'a Tensor {
        moved.get(i).and_then(Option::as_ref).unwrap_or(self)
    }
}
