//! The factories on a named device: `zeros_on`, `ones_on`, `full_on`, `arange_on`,
//! `linspace_on`, `eye_on`, `rand_on`, `randn_on`, `randint_on`, `from_vec_on`,
//! `from_slice_on` and `scalar_on`, PyTorch's `device=` argument. Each takes what
//! `Device` parses from (a `Device`, `"cuda:1"`, an ordinal) and makes the tensor
//! there: a computed one (a constant, a range, random numbers) is computed there when
//! realized, with nothing transferred; data from the host is uploaded now. The plain
//! factories use the default device ([`crate::set_default_device`]).

use crate::device::{DeviceGuard, IntoDevice};
use crate::error::Result;
use crate::Tensor;
use lazyfuse_ir::{DType, Scalar};
use lazyfuse_runtime::Element;

/// Runs a factory with `device` as the default device.
fn on<R>(device: impl IntoDevice, make: impl FnOnce() -> Result<R>) -> Result<R> {
    let _scope = DeviceGuard::new(device)?;
    make()
}

impl Tensor {
    /// [`Tensor::zeros`] on `device`.
    ///
    /// ```
    /// use lazyfuse::{DType, Device, Tensor};
    /// let z = Tensor::zeros_on(&[2], DType::F32, "cpu")?;
    /// assert_eq!((z.device(), z.to_vec::<f32>()?), (Device::CPU, vec![0.0, 0.0]));
    /// assert!(Tensor::zeros_on(&[2], DType::F32, "mps").is_err()); // not a lazyfuse device
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn zeros_on(shape: &[usize], dtype: DType, device: impl IntoDevice) -> Result<Tensor> {
        on(device, || Tensor::try_zeros(shape, dtype))
    }

    /// [`Tensor::ones`] on `device`.
    ///
    /// ```
    /// use lazyfuse::{DType, Device, Tensor};
    /// lazyfuse::set_cuda_emulation(true);
    /// assert_eq!(Tensor::ones_on(&[2], DType::I8, "cuda")?.device(), Device::cuda(0));
    /// lazyfuse::set_cuda_emulation(false);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn ones_on(shape: &[usize], dtype: DType, device: impl IntoDevice) -> Result<Tensor> {
        on(device, || Tensor::try_ones(shape, dtype))
    }

    /// [`Tensor::full`] on `device`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert_eq!(Tensor::full_on(&[2], 7, DType::I64, "cpu:0")?.to_vec::<i64>()?, vec![7, 7]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn full_on(
        shape: &[usize],
        value: impl Into<Scalar>,
        dtype: DType,
        device: impl IntoDevice,
    ) -> Result<Tensor> {
        on(device, || Tensor::full(shape, value, dtype))
    }

    /// [`Tensor::arange`] on `device`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let r = Tensor::arange_on(0.0, 3.0, 1.0, DType::I32, lazyfuse::Device::CPU)?;
    /// assert_eq!(r.to_vec::<i32>()?, vec![0, 1, 2]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn arange_on(
        start: f64,
        end: f64,
        step: f64,
        dtype: DType,
        device: impl IntoDevice,
    ) -> Result<Tensor> {
        on(device, || Tensor::arange(start, end, step, dtype))
    }

    /// [`Tensor::linspace`] on `device`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let l = Tensor::linspace_on(0.0, 1.0, 3, DType::F64, "cpu")?;
    /// assert_eq!(l.to_vec::<f64>()?, vec![0.0, 0.5, 1.0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn linspace_on(
        start: f64,
        end: f64,
        steps: i64,
        dtype: DType,
        device: impl IntoDevice,
    ) -> Result<Tensor> {
        on(device, || Tensor::linspace(start, end, steps, dtype))
    }

    /// [`Tensor::eye`] on `device`.
    ///
    /// ```
    /// use lazyfuse::{DType, Device, Tensor};
    /// lazyfuse::set_cuda_emulation(true);
    /// assert_eq!(Tensor::eye_on(2, None, DType::F32, 0usize)?.device(), Device::cuda(0));
    /// lazyfuse::set_cuda_emulation(false);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn eye_on(
        n: usize,
        m: Option<usize>,
        dtype: DType,
        device: impl IntoDevice,
    ) -> Result<Tensor> {
        on(device, || Tensor::eye(n, m, dtype))
    }

    /// [`Tensor::rand`] on `device`: the same numbers as on the CPU for the same seed.
    ///
    /// ```
    /// use lazyfuse::{manual_seed, DType, Tensor};
    /// manual_seed(3);
    /// let a = Tensor::rand_on(&[4], DType::F32, "cpu")?.to_vec::<f32>()?;
    /// manual_seed(3);
    /// assert_eq!(Tensor::rand(&[4], DType::F32)?.to_vec::<f32>()?, a);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn rand_on(shape: &[usize], dtype: DType, device: impl IntoDevice) -> Result<Tensor> {
        on(device, || Tensor::rand(shape, dtype))
    }

    /// [`Tensor::randn`] on `device`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert_eq!(Tensor::randn_on(&[3], DType::F64, "cpu")?.shape(), vec![3]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn randn_on(shape: &[usize], dtype: DType, device: impl IntoDevice) -> Result<Tensor> {
        on(device, || Tensor::randn(shape, dtype))
    }

    /// [`Tensor::randint`] on `device`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let r = Tensor::randint_on(0, 2, &[8], DType::I64, "cpu")?;
    /// assert!(r.to_vec::<i64>()?.iter().all(|v| (0..2).contains(v)));
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn randint_on(
        low: i64,
        high: i64,
        shape: &[usize],
        dtype: DType,
        device: impl IntoDevice,
    ) -> Result<Tensor> {
        on(device, || Tensor::randint(low, high, shape, dtype))
    }

    /// [`Tensor::from_vec`] on `device` (uploaded now).
    ///
    /// ```
    /// use lazyfuse::{Device, Tensor};
    /// lazyfuse::set_cuda_emulation(true);
    /// let g = Tensor::from_vec_on(vec![1.0f32, 2.0], &[2], "cuda:0")?;
    /// assert_eq!((g.device(), g.get_device()), (Device::cuda(0), 0));
    /// lazyfuse::set_cuda_emulation(false);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn from_vec_on<T: Element>(
        data: Vec<T>,
        shape: &[usize],
        device: impl IntoDevice,
    ) -> Result<Tensor> {
        on(device, || Tensor::from_vec(data, shape))
    }

    /// [`Tensor::from_slice`] on `device`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// assert_eq!(Tensor::from_slice_on(&[1u8, 2], &[2], "cpu")?.to_vec::<u8>()?, vec![1, 2]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn from_slice_on<T: Element>(
        data: &[T],
        shape: &[usize],
        device: impl IntoDevice,
    ) -> Result<Tensor> {
        on(device, || Tensor::from_slice(data, shape))
    }

    /// [`Tensor::scalar`] on `device`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let s = Tensor::scalar_on(2.5, "cpu")?;
    /// assert_eq!((s.dtype(), s.to_vec::<f32>()?), (DType::F32, vec![2.5]));
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn scalar_on(value: impl Into<Scalar>, device: impl IntoDevice) -> Result<Tensor> {
        on(device, || Ok(Tensor::scalar(value)))
    }
}
