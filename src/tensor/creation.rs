//! Tensors made from host data and constants: `from_vec`, `from_slice`, `scalar`,
//! `zeros`, `ones`, `full`, `arange`.

use super::{check_fill_value, fmt_py, Tensor};
use crate::error::{Error, Result};
use crate::store::with_store;
use crate::{default_dtype, Device};
use lazyfuse_ir::{DType, Op, Scalar};
use lazyfuse_runtime::{Buffer, Element};

impl Tensor {
    /// A tensor holding `buffer` on `device` (uploaded there now, for a GPU).
    pub(crate) fn from_buffer(
        buffer: Buffer,
        shape: &[usize],
        op: &'static str,
        device: Device,
    ) -> Result<Tensor> {
        let expected = lazyfuse_ir::shape::checked_numel(shape, buffer.dtype())?;
        if buffer.len() != expected {
            return Err(Error::DataLength {
                op,
                shape: shape.to_vec(),
                expected,
                actual: buffer.len(),
            });
        }
        if let Some(n) = device.ordinal() {
            let array = lazyfuse_runtime::resident::DeviceArray::upload(n, &buffer)?;
            return Ok(with_store(|s| {
                let node = s.add_device_input(array, shape.to_vec());
                Tensor::from_node(s, node)
            }));
        }
        Ok(with_store(|s| {
            let node = s.add_input(buffer, shape.to_vec());
            Tensor::from_node(s, node)
        }))
    }

    /// A tensor holding `data` (row-major) with the given shape.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
    /// assert_eq!(t.dtype(), DType::I32);
    /// assert!(Tensor::from_vec(vec![1i32, 2, 3], &[2, 2]).is_err());
    /// ```
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        // on the default device, as PyTorch's `torch.tensor`
        let device = crate::get_default_device();
        Tensor::from_buffer(Buffer::from_vec(data), shape, "from_vec", device)
    }

    /// A tensor holding a copy of `data` (row-major) with the given shape.
    ///
    /// ```
    /// let t = lazyfuse::Tensor::from_slice(&[true, false], &[2]).unwrap();
    /// assert_eq!(t.to_vec::<bool>().unwrap(), vec![true, false]);
    /// ```
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Tensor> {
        Tensor::from_vec(data.to_vec(), shape)
    }

    /// A zero-dim tensor: floats get the default dtype, integers `int64`, bools `bool`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert_eq!(Tensor::scalar(1.5).dtype(), DType::F32);
    /// assert_eq!(Tensor::scalar(3).dtype(), DType::I64);
    /// assert_eq!(Tensor::scalar(3).shape(), Vec::<usize>::new());
    /// ```
    pub fn scalar(value: impl Into<Scalar>) -> Tensor {
        let value = value.into();
        let dtype = value.natural_dtype(default_dtype());
        Tensor::constant(&[], value, dtype)
    }

    /// A constant on the default device ([`crate::set_default_device`]).
    pub(super) fn constant(shape: &[usize], value: Scalar, dtype: DType) -> Tensor {
        Tensor::constant_on(shape, value, dtype, crate::get_default_device())
    }

    /// A constant on `device`: computed there when realized, nothing transferred.
    pub(crate) fn constant_on(
        shape: &[usize],
        value: Scalar,
        dtype: DType,
        device: Device,
    ) -> Tensor {
        with_store(|s| {
            let node = s.add(Op::Full(value), dtype, shape, &[]);
            s.set_device(node, device);
            Tensor::from_node(s, node)
        })
    }

    /// A tensor of zeros.
    ///
    /// A shape whose size overflows (`[1 << 62, 4]` of `float32`) cannot exist, but
    /// this constructor has no `Result` to say so. It returns a tensor that reports
    /// the shape it was asked for, with sane accessors (`numel()` saturates at
    /// `usize::MAX`, strides saturate at `isize::MAX`, never wrap or go negative),
    /// and whose first realize or read — of it or of anything computed from it —
    /// returns PyTorch's error "Storage size calculation overflowed with sizes=[…]".
    /// It never yields a value. [`Tensor::try_zeros`] returns that error at once.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert_eq!(Tensor::zeros(&[2], DType::I8).to_vec::<i8>().unwrap(), vec![0, 0]);
    /// let huge = Tensor::zeros(&[1 << 62, 4], DType::F32);
    /// assert_eq!(huge.numel(), usize::MAX);
    /// assert!(huge.sum(&[], false).and_then(|s| s.realize()).is_err());
    /// ```
    pub fn zeros(shape: &[usize], dtype: DType) -> Tensor {
        Tensor::constant(shape, Scalar::Int(0), dtype)
    }

    /// A tensor of ones (see [`Tensor::zeros`] for shapes whose size overflows).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert_eq!(Tensor::ones(&[2], DType::Bool).to_vec::<bool>().unwrap(), vec![true, true]);
    /// ```
    pub fn ones(shape: &[usize], dtype: DType) -> Tensor {
        Tensor::constant(shape, Scalar::Int(1), dtype)
    }

    /// [`Tensor::zeros`], refusing a shape whose size overflows with PyTorch's error.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert!(Tensor::try_zeros(&[2, 3], DType::F32).is_ok());
    /// assert_eq!(
    ///     Tensor::try_zeros(&[3, usize::MAX], DType::F32).unwrap_err().to_string(),
    ///     format!("Storage size calculation overflowed with sizes=[3, {}]", usize::MAX)
    /// );
    /// ```
    pub fn try_zeros(shape: &[usize], dtype: DType) -> Result<Tensor> {
        lazyfuse_ir::shape::checked_numel(shape, dtype)?;
        Ok(Tensor::zeros(shape, dtype))
    }

    /// [`Tensor::ones`], refusing a shape whose size overflows with PyTorch's error.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert!(Tensor::try_ones(&[1 << 62, 4], DType::F32).is_err());
    /// ```
    pub fn try_ones(shape: &[usize], dtype: DType) -> Result<Tensor> {
        lazyfuse_ir::shape::checked_numel(shape, dtype)?;
        Ok(Tensor::ones(shape, dtype))
    }

    /// A tensor filled with `value` converted to `dtype`. A complex value with a
    /// nonzero imaginary part cannot fill a real tensor (PyTorch's error).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::full(&[2], 2.5, DType::I32).unwrap();
    /// assert_eq!(t.to_vec::<i32>().unwrap(), vec![2, 2]);
    /// ```
    pub fn full(shape: &[usize], value: impl Into<Scalar>, dtype: DType) -> Result<Tensor> {
        let value = value.into();
        check_fill_value(value, dtype)?;
        lazyfuse_ir::shape::checked_numel(shape, dtype)?;
        Ok(Tensor::constant(shape, value, dtype))
    }

    /// Values `start, start + step, …` below `end` (above, for a negative step).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 5.0, 2.0, DType::I64).unwrap();
    /// assert_eq!(t.to_vec::<i64>().unwrap(), vec![0, 2, 4]);
    /// ```
    pub fn arange(start: f64, end: f64, step: f64, dtype: DType) -> Result<Tensor> {
        let bad = |m: &str| Err(lazyfuse_ir::Error::invalid("arange", m).into());
        // PyTorch checks finiteness first (so a NaN step is not "nonzero").
        if !step.is_finite() {
            return bad(&format!("step must be finite but got {}", fmt_py(step)));
        }
        if step == 0.0 {
            return bad("step must be nonzero");
        }
        if !start.is_finite() || !end.is_finite() {
            return bad(&format!(
                "unsupported range: {} -> {}",
                fmt_py(start),
                fmt_py(end)
            ));
        }
        if (step > 0.0 && end < start) || (step < 0.0 && end > start) {
            return bad("upper bound and larger bound inconsistent with step sign");
        }
        if dtype == DType::Bool || dtype.is_complex() || dtype.is_float8() {
            return Err(lazyfuse_ir::Error::not_implemented("arange_cpu", dtype).into());
        }
        // PyTorch: the length is computed in double and must fit int64 before the
        // storage size is checked.
        let len_f = ((end - start) / step).ceil();
        // `i64::MAX as f64` rounds up to 2^63, which does not fit: the bound is open.
        if !(0.0..i64::MAX as f64).contains(&len_f) {
            return bad("invalid size, possible overflow?");
        }
        let len = len_f as usize;
        lazyfuse_ir::shape::checked_numel(&[len], dtype)?;
        Ok(with_store(|s| {
            let node = s.add(Op::Arange { start, step }, dtype, vec![len], &[]);
            s.set_device(node, crate::get_default_device());
            Tensor::from_node(s, node)
        }))
    }
}
