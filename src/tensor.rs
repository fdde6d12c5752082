//! `Tensor`: a handle to a lazily computed tensor — a storage plus a layout.
//!
//! Constructors record source nodes; ops record more nodes (see `ops/`); nothing runs
//! until [`Tensor::realize`] or a read such as [`Tensor::to_vec`]. A clone is a second
//! name for the same tensor (it aliases the same storage), like a second Python name.

use crate::autograd::record::GradLink;
use crate::error::{Error, Result};
use crate::reading::Reading;
use crate::store::{with_store, Storage, Store};
use crate::{default_dtype, Device};
use lazyfuse_ir::{DType, Layout, NodeId, Op, Scalar};
use lazyfuse_runtime::{Buffer, Element};
use std::fmt;
use std::sync::{Arc, Mutex};

/// A lazy tensor: dtype, shape and layout are known at once; values are computed on
/// [`Tensor::realize`] or a read.
///
/// ```
/// use lazyfuse::Tensor;
/// let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// let b = a.mul(2.0).unwrap().add(&a).unwrap();
/// assert_eq!(b.to_vec::<f32>().unwrap(), vec![3.0, 6.0, 9.0, 12.0]);
/// assert_eq!(b.to_string(), "tensor([[ 3.,  6.],\n        [ 9., 12.]])");
/// ```
#[derive(Clone)]
pub struct Tensor(pub(crate) Arc<TensorImpl>);

pub(crate) struct TensorImpl {
    pub(crate) storage: Arc<Storage>,
    pub(crate) layout: Layout,
    pub(crate) dtype: DType,
    /// How the elements come from the storage (see `reading`).
    pub(crate) reading: Reading,
    /// How reads of it join gradient history (see `autograd::record`); a leaf
    /// changes it in place (`requires_grad_`).
    pub(crate) link: Mutex<GradLink>,
}

impl Tensor {
    /// A new tensor owning a fresh storage whose contents are `node`'s output.
    pub(crate) fn from_node(store: &mut Store, node: NodeId) -> Tensor {
        let n = store.graph.node(node);
        let (dtype, layout) = (n.dtype, Layout::contiguous(&n.shape));
        Tensor(Arc::new(TensorImpl {
            storage: Storage::new(store, node),
            layout,
            dtype,
            reading: Reading::DIRECT,
            link: Mutex::default(),
        }))
    }

    /// A new tensor owning `node`'s output under `strides`, dense strides that PyTorch
    /// would give the result (see `memory_format`); `None` means row-major. The
    /// storage holds the elements in the strides' own dim order: it is a permuted view
    /// of `node`, which the kernel that computes `node` writes directly.
    pub(crate) fn from_node_strided(
        store: &mut Store,
        node: NodeId,
        strides: Option<Vec<isize>>,
    ) -> Tensor {
        let n = store.graph.node(node);
        let (dtype, shape) = (n.dtype, n.shape.clone());
        let Some(strides) =
            strides.filter(|s| *s != lazyfuse_ir::shape::contiguous_strides(&shape))
        else {
            return Tensor::from_node(store, node);
        };
        let layout = Layout {
            shape: shape.clone(),
            strides,
            offset: 0,
        };
        debug_assert!(layout.is_non_overlapping_and_dense(), "{layout:?}");
        // Outermost first: the dims of size > 1 by decreasing stride, then the others
        // (whose strides address nothing).
        let mut order: Vec<usize> = (0..shape.len()).filter(|&d| shape[d] > 1).collect();
        order.sort_by_key(|&d| std::cmp::Reverse(layout.strides[d]));
        order.extend((0..shape.len()).filter(|&d| shape[d] <= 1));
        let stored = Layout {
            shape: order.iter().map(|&d| shape[d]).collect(),
            strides: {
                let row = lazyfuse_ir::shape::contiguous_strides(&shape);
                order.iter().map(|&d| row[d]).collect()
            },
            offset: 0,
        };
        let permuted = store.view_node(node, &stored);
        Tensor(Arc::new(TensorImpl {
            storage: Storage::new(store, permuted),
            layout,
            dtype,
            reading: Reading::DIRECT,
            link: Mutex::default(),
        }))
    }

    /// A view: the same storage under another layout, read the same way.
    pub(crate) fn with_layout(&self, layout: Layout) -> Tensor {
        self.reading_as(layout, self.0.dtype, self.0.reading)
    }

    /// A view of the same storage with its own layout, dtype and reading.
    pub(crate) fn reading_as(&self, layout: Layout, dtype: DType, reading: Reading) -> Tensor {
        Tensor(Arc::new(TensorImpl {
            storage: Arc::clone(&self.0.storage),
            layout,
            dtype,
            reading,
            link: Mutex::new(self.link().of_view()),
        }))
    }

    /// How this handle joins gradient history.
    pub(crate) fn link(&self) -> GradLink {
        self.0
            .link
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The node of this view's elements read through `layout` (in this view's
    /// element space) from the storage's current version.
    pub(crate) fn read_through(&self, store: &mut Store, layout: &Layout) -> NodeId {
        let base = crate::autograd::history_base(self, store);
        self.0.reading.read(store, base, layout, self.0.dtype)
    }

    /// PyTorch's "Storage size calculation overflowed with sizes=[…]" for a tensor
    /// whose storage cannot exist (made by a constructor without a `Result`, such
    /// as `zeros(&[1 << 62, 4])`): the ops that would otherwise fail on a derived
    /// size ("numel: integer multiplication overflow", a suggestion to reshape)
    /// report the real cause. Cheap for every other tensor (no lock).
    pub(crate) fn check_size(&self) -> Result<()> {
        let numel = self.0.storage.numel;
        if lazyfuse_ir::shape::checked_numel(&[numel], self.0.dtype).is_ok() {
            return Ok(());
        }
        // the message names the sizes asked for, which the storage's node keeps
        let shape = with_store(|s| s.graph.node(self.0.storage.node()).shape.clone());
        lazyfuse_ir::shape::checked_numel(&shape, self.0.dtype)?;
        Ok(())
    }

    /// The node that reads this tensor's elements (in logical order) from the
    /// storage's current version.
    pub(crate) fn node(&self, store: &mut Store) -> NodeId {
        self.read_through(store, &self.0.layout)
    }

    /// The node reading this tensor converted to `dtype` and broadcast to `shape`
    /// (which the caller has checked is a broadcast of this tensor's shape).
    pub(crate) fn node_as(
        &self,
        store: &mut Store,
        dtype: DType,
        shape: &[usize],
    ) -> Result<NodeId> {
        let target = crate::ops::elementwise::to_isize(shape);
        if dtype == self.0.dtype {
            let layout = self.0.layout.expand(&target)?;
            return Ok(self.read_through(store, &layout));
        }
        let read = self.node(store);
        let cast = store.cast_node(read, dtype);
        let layout = Layout::contiguous(&self.0.layout.shape).expand(&target)?;
        Ok(store.view_node(cast, &layout))
    }

    /// A tensor holding `buffer` on `device` (uploaded there now, for a GPU).
    fn from_buffer(
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
    fn constant(shape: &[usize], value: Scalar, dtype: DType) -> Tensor {
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
            let node = s.add(Op::Full(value), dtype, shape.to_vec(), &[]);
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

    /// The shape.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32);
    /// assert_eq!(t.shape(), vec![2, 3]);
    /// assert_eq!(Tensor::scalar(1).shape(), Vec::<usize>::new());
    /// ```
    pub fn shape(&self) -> Vec<usize> {
        self.0.layout.shape.clone()
    }

    /// The element type.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert_eq!(Tensor::from_vec(vec![1u8, 2], &[2]).unwrap().dtype(), DType::U8);
    /// assert_eq!(Tensor::ones(&[2], DType::BF16).dtype(), DType::BF16);
    /// ```
    pub fn dtype(&self) -> DType {
        self.0.dtype
    }

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

    /// Number of dims.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert_eq!(Tensor::zeros(&[2, 3, 4], DType::F32).ndim(), 3);
    /// assert_eq!(Tensor::scalar(1.0).ndim(), 0);
    /// ```
    pub fn ndim(&self) -> usize {
        self.0.layout.ndim()
    }

    /// Number of elements (saturating at `usize::MAX` for a shape whose size overflows,
    /// see [`Tensor::zeros`]).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert_eq!(Tensor::zeros(&[2, 3, 4], DType::F32).numel(), 24);
    /// assert_eq!(Tensor::zeros(&[2, 0], DType::F32).numel(), 0);
    /// assert_eq!(Tensor::scalar(1.0).numel(), 1);
    /// ```
    pub fn numel(&self) -> usize {
        self.0.layout.numel()
    }

    /// Strides in elements, as PyTorch reports them (saturating at `isize::MAX` for a
    /// shape whose size overflows, never negative).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3, 4], DType::F32);
    /// assert_eq!(t.strides(), vec![12, 4, 1]);
    /// assert_eq!(t.transpose(0, 2).unwrap().strides(), vec![1, 4, 12]);
    /// ```
    pub fn strides(&self) -> Vec<isize> {
        self.0.layout.strides.clone()
    }

    /// Offset of the first element in the storage, in elements.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32);
    /// assert_eq!(t.storage_offset(), 0);
    /// assert_eq!(t.select(0, 1).unwrap().storage_offset(), 3);
    /// assert_eq!(t.narrow(1, 1, 2).unwrap().storage_offset(), 1);
    /// ```
    pub fn storage_offset(&self) -> usize {
        self.0.layout.offset
    }

    /// PyTorch's `is_contiguous` (row-major).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32);
    /// assert!(t.is_contiguous());
    /// assert!(!t.t().unwrap().is_contiguous());
    /// ```
    pub fn is_contiguous(&self) -> bool {
        self.0.layout.is_contiguous()
    }

    /// True when both tensors view the same storage.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::zeros(&[2, 3], DType::F32);
    /// assert!(a.t().unwrap().shares_storage(&a));
    /// assert!(!a.add(1).unwrap().shares_storage(&a));
    /// ```
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        self.0.storage.id == other.0.storage.id
    }

    /// The strided geometry (shape, strides, offset) over the storage.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32).narrow(1, 1, 2).unwrap();
    /// let l = t.strided_layout();
    /// assert_eq!((&l.shape[..], &l.strides[..], l.offset), (&[2, 2][..], &[3, 1][..], 1));
    /// ```
    pub fn strided_layout(&self) -> &Layout {
        &self.0.layout
    }

    /// PyTorch's `Tensor.layout`: how the elements are laid out in memory. Every
    /// lazyfuse tensor is strided ([`crate::Layout::Strided`]).
    ///
    /// ```
    /// use lazyfuse::{DType, Layout, Tensor};
    /// assert_eq!(Tensor::zeros(&[2], DType::F32).layout(), Layout::Strided);
    /// assert_eq!(Layout::Strided.to_string(), "torch.strided");
    /// ```
    pub fn layout(&self) -> crate::Layout {
        crate::Layout::Strided
    }

    /// Whether the storage's current contents are computed already.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2], DType::F32).add(1).unwrap();
    /// assert!(!t.is_realized());
    /// t.realize().unwrap();
    /// assert!(t.is_realized());
    /// ```
    pub fn is_realized(&self) -> bool {
        with_store(|s| matches!(s.graph.node(self.0.storage.node()).op, Op::Input(_)))
    }

    /// Computes the storage's contents (once) and returns this tensor.
    ///
    /// A realize computes and stores its target and nothing else: the temporaries
    /// of a method chain are fused into the kernels that compute the result, and an
    /// unrealized tensor that a live handle still names is not stored as a side
    /// effect (reading it later computes it then, from the inputs its node keeps
    /// alive). Several tensors wanted together are realized in one pass with
    /// [`crate::realize_all`]. A value realized once is never computed again.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::ones(&[3], DType::F32);
    /// let h = x.mul(2).unwrap();
    /// let y = h.add(1).unwrap().tanh().unwrap().realize().unwrap();
    /// assert!(y.is_realized());
    /// assert!(!h.is_realized()); // fused into y's kernel, not stored
    /// assert_eq!(h.to_vec::<f32>().unwrap(), vec![2.0; 3]); // computed now
    /// ```
    pub fn realize(&self) -> Result<Tensor> {
        crate::store::realize(&self.0.storage)?;
        Ok(self.clone())
    }

    /// The elements in logical row-major order, as a contiguous buffer.
    pub(crate) fn read_buffer(&self) -> Result<Buffer> {
        if !self.0.reading.is_direct() {
            // values that differ from the storage's: computed, then read
            return self.fresh_copy().read_buffer();
        }
        let buffer = crate::store::realized_buffer(&self.0.storage)?;
        // A view may have far more elements than its storage (expand).
        lazyfuse_runtime::buffer::check_allocation(&self.0.layout.shape, self.0.dtype, false)?;
        Ok(buffer.gather(&self.0.layout))
    }

    /// The elements that printing shows: all of them, or for a tensor of more than
    /// 1000 elements only the summarized sub-tensor (`display::shown_indices`), read
    /// straight from the realized storage so that a huge (e.g. expanded) tensor is
    /// never materialized.
    fn shown_buffer(&self) -> Result<Buffer> {
        let shown = crate::display::shown_indices(&self.0.layout.shape);
        let count = shown.iter().map(Vec::len).product::<usize>();
        if count == self.numel() || !self.0.reading.is_direct() {
            return self.read_buffer();
        }
        let buffer = crate::store::realized_buffer(&self.0.storage)?;
        {
            let layout = &self.0.layout;
            let mut offsets = vec![layout.offset as isize];
            for (indices, &stride) in shown.iter().zip(&layout.strides) {
                offsets = offsets
                    .iter()
                    .flat_map(|&base| indices.iter().map(move |&i| base + i as isize * stride))
                    .collect();
            }
            let offsets: Vec<usize> = offsets.into_iter().map(|o| o as usize).collect();
            Ok(buffer.take_offsets(&offsets)?)
        }
    }

    /// The elements in logical row-major order. `T` must be the dtype's element type.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 6.0, 1.0, DType::F64).unwrap().view(&[2, 3]).unwrap();
    /// assert_eq!(t.t().unwrap().to_vec::<f64>().unwrap(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    /// assert!(t.to_vec::<f32>().is_err());
    /// ```
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.0.dtype {
            return Err(Error::ElementType {
                requested: T::DTYPE,
                actual: self.0.dtype,
            });
        }
        let buffer = self.read_buffer()?;
        Ok(buffer
            .as_slice::<T>()
            .map(<[T]>::to_vec)
            .unwrap_or_default())
    }

    /// The text form of the graph this tensor's storage depends on (what
    /// `LAZYFUSE_DUMP_IR` prints), for inspection and golden tests.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2], DType::F32).exp().unwrap();
    /// assert_eq!(t.graph_text(), "%0 = full(value=0) : float32[2]\n%1 = exp(%0) : float32[2]  -> t0\n");
    /// ```
    pub fn graph_text(&self) -> String {
        with_store(|s| s.graph.dump(&[self.0.storage.node()]))
    }

    /// The text form of the same graph after the graph passes
    /// (`lazyfuse_ir::passes::optimize`), as `LAZYFUSE_DUMP_IR` prints it "after
    /// passes" when this tensor alone is realized. The passes run even when
    /// [`crate::set_passes`] turned them off for realize.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[2], DType::F32);
    /// let t = x.exp().unwrap().add(&x.exp().unwrap()).unwrap();
    /// assert_eq!(
    ///     t.optimized_graph_text(),
    ///     "%0 = full(value=0) : float32[2]\n%1 = exp(%0) : float32[2]\n%2 = add(%1, %1) : float32[2]  -> t0\n"
    /// );
    /// ```
    pub fn optimized_graph_text(&self) -> String {
        with_store(|s| {
            let opt = lazyfuse_ir::passes::optimize(&s.graph, &[self.0.storage.node()]);
            opt.graph.dump(&opt.targets)
        })
    }

    /// The schedule of this tensor's graph alone (after the passes): the kernels
    /// with the graph nodes each holds and their loop IR, as `LAZYFUSE_DUMP_IR`
    /// prints it. `Err` when the scheduler refuses the graph.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::ones(&[4], DType::F32);
    /// let y = x.mul(2.0).unwrap().exp().unwrap();
    /// assert!(y.schedule_text().unwrap().contains("step 0: loop"));
    /// ```
    pub fn schedule_text(&self) -> Result<String> {
        let on_gpu = self.device() != Device::CPU;
        with_store(|s| {
            let opt = lazyfuse_ir::passes::optimize(&s.graph, &[self.0.storage.node()]);
            Ok(crate::backend::schedule_of(&opt.graph, &opt.targets, &[], on_gpu)?.text())
        })
    }

    /// The Cranelift IR of every loop kernel of [`Tensor::schedule_text`]'s schedule.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let y = Tensor::ones(&[4], DType::F32).neg().unwrap();
    /// assert!(y.clif_text().unwrap().contains("function"));
    /// ```
    pub fn clif_text(&self) -> Result<String> {
        self.loop_kernel_texts(lazyfuse_runtime::exec::clif_text)
    }

    /// The machine code that Cranelift makes of every loop kernel of
    /// [`Tensor::schedule_text`]'s schedule (after register allocation, as
    /// `LAZYFUSE_DUMP_IR=asm` prints it): to see what the CPU runs per element.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let y = Tensor::ones(&[4], DType::F32).neg().unwrap();
    /// assert!(y.asm_text().unwrap().contains("ret"));
    /// ```
    pub fn asm_text(&self) -> Result<String> {
        self.loop_kernel_texts(lazyfuse_runtime::exec::asm_text)
    }

    /// `text` of each loop kernel of this tensor's schedule with the current math
    /// mode, each after a line naming the kernel.
    fn loop_kernel_texts(&self, text: crate::backend::KernelText) -> Result<String> {
        let on_gpu = self.device() != Device::CPU;
        with_store(|s| {
            let opt = lazyfuse_ir::passes::optimize(&s.graph, &[self.0.storage.node()]);
            let sched = crate::backend::schedule_of(&opt.graph, &opt.targets, &[], on_gpu)?;
            let mut out = String::new();
            for step in &sched.steps {
                if let lazyfuse_ir::kernel::Step::Loop(k) = step {
                    out.push_str(&format!("; {}\n", k.name));
                    out.push_str(&text(k, crate::math_mode()?)?);
                }
            }
            Ok(out)
        })
    }

    /// The CUDA C (`lazyfuse_codegen::cuda`) of every loop kernel of
    /// [`Tensor::schedule_text`]'s schedule: what the GPU backend compiles with NVRTC,
    /// without the shared prelude of device functions.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let y = Tensor::ones(&[4], DType::F32).exp().unwrap();
    /// assert!(y.cuda_text().unwrap().contains("__global__"));
    /// ```
    pub fn cuda_text(&self) -> Result<String> {
        let on_gpu = self.device() != Device::CPU;
        with_store(|s| {
            let opt = lazyfuse_ir::passes::optimize(&s.graph, &[self.0.storage.node()]);
            let sched = crate::backend::schedule_of(&opt.graph, &opt.targets, &[], on_gpu)?;
            let math = crate::math_mode()?;
            let mut out = String::new();
            for step in &sched.steps {
                if let lazyfuse_ir::kernel::Step::Loop(k) = step {
                    let src = lazyfuse_codegen::cuda::kernel_source(k, math).map_err(|e| {
                        lazyfuse_runtime::Error::Unsupported(format!(
                            "compiling kernel {} to CUDA C: {e}",
                            k.name
                        ))
                    })?;
                    out.push_str(&src.function);
                }
            }
            Ok(out)
        })
    }

    /// Number of kernels (loop kernels and extern steps) that realizing this tensor
    /// alone takes on the JIT.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::ones(&[8], DType::F32);
    /// let w1 = a.mul(&a).unwrap().add(&a).unwrap().relu().unwrap().mul(0.5).unwrap().add(&a).unwrap().tanh().unwrap();
    /// assert_eq!(w1.kernel_count().unwrap(), 1);
    /// ```
    pub fn kernel_count(&self) -> Result<usize> {
        let on_gpu = self.device() != Device::CPU;
        with_store(|s| {
            let opt = lazyfuse_ir::passes::optimize(&s.graph, &[self.0.storage.node()]);
            Ok(crate::backend::schedule_of(&opt.graph, &opt.targets, &[], on_gpu)?.kernel_count())
        })
    }
}

/// A double as PyTorch prints it in messages (C++ `ostream` defaults, i.e. `%g` with
/// 6 significant digits): `1`, `0.5`, `1e+30`, `nan`, `-inf`.
fn fmt_py(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{x:.5e}"); // d.ddddde±x, rounded to 6 significant digits
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa.to_string()), exp.abs())
    } else {
        trim(format!("{x:.*}", (5 - exp) as usize))
    }
}

/// PyTorch's `checked_convert` of a fill value (`full`, `fill_`): the value must fit
/// the dtype. Integer targets refuse NaN, infinities and out-of-range values (a negative
/// integer may wrap into an unsigned type whose range holds its magnitude); floating
/// targets refuse finite values beyond their largest (infinities and NaN pass where the
/// format has them); real targets refuse a complex value with an imaginary part; bool
/// takes anything.
pub(crate) fn check_fill_value(value: Scalar, dtype: DType) -> Result<()> {
    let fits = match (value, dtype) {
        (_, DType::Bool) => true,
        (Scalar::Complex(_, im), d) if im != 0.0 && !d.is_complex() => false,
        (Scalar::Bool(_), _) => true,
        (v, d) if d.is_integer() => integer_fits(v, d),
        (v, d) => {
            let part = |x: f64| {
                x.is_nan() || (x.is_infinite() && has_infinity(d)) || x.abs() <= largest_finite(d)
            };
            match v {
                Scalar::Complex(re, im) => part(re) && part(im),
                other => part(other.to_f64()),
            }
        }
    };
    if fits {
        return Ok(());
    }
    Err(lazyfuse_ir::Error::invalid(
        "fill",
        format!(
            "value cannot be converted to type {} without overflow",
            c_type_name(dtype)
        ),
    )
    .into())
}

/// Whether a host number converts to an integer dtype without overflow.
fn integer_fits(value: Scalar, dtype: DType) -> bool {
    let Some((lo, hi)) = dtype.integer_range() else {
        return false;
    };
    match value {
        // Negative integers wrap into unsigned types whose range holds their magnitude.
        Scalar::Int(v) if lo == 0 && v < 0 => -(v as i128) <= hi,
        Scalar::Int(v) => (lo..=hi).contains(&(v as i128)),
        Scalar::Float(f) | Scalar::Complex(f, _) => !f.is_nan() && f >= lo as f64 && f <= hi as f64,
        Scalar::Bool(_) => true,
    }
}

fn has_infinity(dtype: DType) -> bool {
    !matches!(
        dtype,
        DType::F8E4M3FN | DType::F8E4M3FNUZ | DType::F8E5M2FNUZ | DType::F8E8M0FNU
    )
}

/// The largest finite value of a floating (or complex part's) dtype.
fn largest_finite(dtype: DType) -> f64 {
    match dtype.to_real() {
        DType::F16 => 65504.0,
        DType::BF16 => 3.3895313892515355e38,
        DType::F32 => f32::MAX as f64,
        DType::F8E4M3FN => 448.0,
        DType::F8E5M2 | DType::F8E5M2FNUZ => 57344.0,
        DType::F8E4M3FNUZ => 240.0,
        DType::F8E8M0FNU => 2f64.powi(127),
        _ => f64::MAX,
    }
}

/// The C++ element type PyTorch names in conversion errors.
pub(crate) fn c_type_name(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "bool",
        DType::U8 => "uint8_t",
        DType::I8 => "int8_t",
        DType::I16 => "int16_t",
        DType::I32 => "int",
        DType::I64 => "int64_t",
        DType::U16 => "uint16_t",
        DType::U32 => "uint32_t",
        DType::U64 => "uint64_t",
        DType::F16 => "c10::Half",
        DType::BF16 => "c10::BFloat16",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::C32 => "c10::complex<c10::Half>",
        DType::BC32 => "c10::complex<c10::BFloat16>",
        DType::C64 => "c10::complex<float>",
        DType::C128 => "c10::complex<double>",
        other => other.torch_name(),
    }
}

impl fmt::Debug for Tensor {
    /// Shape, dtype, device and whether the values are computed; computes nothing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor(shape={:?}, dtype={}, device={}, realized={})",
            self.0.layout.shape,
            self.0.dtype,
            self.device(),
            self.is_realized()
        )
    }
}

impl fmt::Display for Tensor {
    /// PyTorch's printing (`tensor([1., 2.])`), realizing the tensor first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shown_buffer() {
            Ok(buffer) => f.write_str(&crate::display::format_tensor_on(
                &buffer,
                &self.0.layout.shape,
                default_dtype(),
                self.device(),
            )),
            Err(e) => write!(f, "<tensor could not be computed: {e}>"),
        }
    }
}

// Test hook: the scheduler's tests take graphs built through the facade.
impl Tensor {
    /// For the scheduler's tests only: the optimized graph that computes these
    /// tensors (in logical order), its targets (one per tensor) and the input buffers
    /// it reads. The view nodes it may add to the store's graph stay unreferenced.
    #[doc(hidden)]
    pub fn debug_optimized_graph(
        tensors: &[&Tensor],
    ) -> (
        lazyfuse_ir::Graph,
        Vec<NodeId>,
        std::collections::HashMap<lazyfuse_ir::InputId, Arc<Buffer>>,
    ) {
        with_store(|s| {
            let nodes: Vec<NodeId> = tensors.iter().map(|t| t.node(s)).collect();
            let opt = lazyfuse_ir::passes::optimize(&s.graph, &nodes);
            (opt.graph, opt.targets, s.buffers.clone())
        })
    }
}
