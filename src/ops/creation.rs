//! Creation ops: `eye`, `linspace`, `zeros_like`/`ones_like`/`full_like`, and the
//! random constructors `rand`, `randn`, `randint` with the global generator
//! ([`manual_seed`]).
//!
//! The generator is counter-based (Philox4x32-10, `lazyfuse_ir::philox`): its whole
//! state is `(seed, offset)`. A random constructor records one `random` node with the
//! current state and advances the offset by the number of elements it made, so two
//! calls differ, re-seeding reproduces them, and element `i` of a node depends only
//! on `(seed, offset, i)` — any backend, any order, the same numbers. The numbers are
//! not PyTorch's: its CPU generator is a sequential Mersenne Twister, which no
//! parallel backend could reproduce; the distributions, dtype rules and messages are
//! PyTorch's.

use crate::error::Result;
use crate::memory_format::{self, MemoryFormat};
use crate::store::with_store;
use crate::tensor::Tensor;
use lazyfuse_ir::philox::Distribution;
use lazyfuse_ir::shape::checked_numel;
use lazyfuse_ir::{typing, BinaryOp, DType, Error as IrError, Layout, Op, Scalar};
use std::sync::Mutex;

/// PyTorch's default seed (`default_rng_seed_val`), the seed before any
/// [`manual_seed`].
const DEFAULT_SEED: u64 = 67_280_421_310_721;

/// The generator state: `(seed, offset)`.
static GENERATOR: Mutex<(u64, u64)> = Mutex::new((DEFAULT_SEED, 0));

fn generator() -> std::sync::MutexGuard<'static, (u64, u64)> {
    // The state is two integers updated together; a panic cannot leave it torn.
    GENERATOR
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Seeds the global generator (and restarts its counter), as `torch.manual_seed`:
/// the random constructors called after it produce the same numbers in every run.
///
/// ```
/// use lazyfuse::{manual_seed, DType, Tensor};
/// manual_seed(7);
/// let a = Tensor::rand(&[3], DType::F32)?.to_vec::<f32>()?;
/// manual_seed(7);
/// let b = Tensor::rand(&[3], DType::F32)?.to_vec::<f32>()?;
/// assert_eq!(a, b);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn manual_seed(seed: u64) {
    *generator() = (seed, 0);
}

/// The seed of the global generator (`torch.initial_seed`).
///
/// ```
/// lazyfuse::manual_seed(123);
/// assert_eq!(lazyfuse::initial_seed(), 123);
/// ```
pub fn initial_seed() -> u64 {
    generator().0
}

/// Takes `count` numbers from the generator: the state to record, then advanced.
fn draw(count: usize) -> (u64, u64) {
    let mut state = generator();
    let taken = *state;
    state.1 = state.1.wrapping_add(count as u64);
    taken
}

impl Tensor {
    /// A tensor of `dtype` with `shape` whose contents are one node without inputs.
    /// A node with no inputs, on the default device ([`crate::set_default_device`]).
    fn source(shape: &[usize], dtype: DType, op: Op) -> Tensor {
        with_store(|s| {
            let node = s.add(op, dtype, shape, &[]);
            s.set_device(node, crate::get_default_device());
            Tensor::from_node(s, node)
        })
    }

    /// Random node of `shape` (checked) drawing from `distribution`.
    fn random(shape: &[usize], dtype: DType, distribution: Distribution) -> Result<Tensor> {
        let n = checked_numel(shape, dtype)?;
        if n == 0 {
            // PyTorch skips the kernel; nothing is drawn.
            return Ok(Tensor::zeros(shape, dtype));
        }
        let (seed, offset) = draw(n);
        Ok(Tensor::source(
            shape,
            dtype,
            Op::Random {
                seed,
                offset,
                distribution,
            },
        ))
    }

    /// Uniform random numbers on `[0, 1)` (`torch.rand`), from the global generator
    /// ([`manual_seed`]). Floating and complex dtypes only (complex: both parts
    /// uniform); others are PyTorch's `"check_uniform_bounds" not implemented for
    /// 'Long'`. Values use the dtype's significand bits, so they are exact and never 1.
    ///
    /// ```
    /// use lazyfuse::{manual_seed, DType, Tensor};
    /// manual_seed(0);
    /// let x = Tensor::rand(&[2, 3], DType::F64)?;
    /// assert!(x.to_vec::<f64>()?.iter().all(|v| (0.0..1.0).contains(v)));
    /// assert!(Tensor::rand(&[2], DType::I64).is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn rand(shape: &[usize], dtype: DType) -> Result<Tensor> {
        let n = checked_numel(shape, dtype)?;
        typing::rand(dtype, n)?;
        Tensor::random(shape, dtype, Distribution::Uniform)
    }

    /// Standard normal random numbers (`torch.randn`, Box–Muller), from the global
    /// generator. Floating and complex dtypes (complex: variance 1 split evenly
    /// between the parts); others are `"normal_kernel_cpu" not implemented for …`
    /// unless the result is empty.
    ///
    /// ```
    /// use lazyfuse::{manual_seed, DType, Tensor};
    /// manual_seed(0);
    /// let x = Tensor::randn(&[1000], DType::F32)?;
    /// let mean = x.mean(&[0], false)?.to_vec::<f32>()?[0];
    /// assert!(mean.abs() < 0.2);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn randn(shape: &[usize], dtype: DType) -> Result<Tensor> {
        let n = checked_numel(shape, dtype)?;
        typing::randn(dtype, n)?;
        Tensor::random(shape, dtype, Distribution::Normal)
    }

    /// Uniform random integers in `[low, high)` (`torch.randint`) as `dtype` (PyTorch's
    /// default is `int64`): any integer, bool or floating dtype, with PyTorch's checks
    /// ("random_ expects 'from' to be less than 'to', …", "to - 1 is out of bounds
    /// for unsigned char"). Each value is `low + (64 random bits mod (high - low))`:
    /// the modulo bias is below `(high - low) / 2^64`.
    ///
    /// ```
    /// use lazyfuse::{manual_seed, DType, Tensor};
    /// manual_seed(0);
    /// let x = Tensor::randint(-2, 3, &[100], DType::I64)?;
    /// assert!(x.to_vec::<i64>()?.iter().all(|v| (-2..3).contains(v)));
    /// assert!(Tensor::randint(5, 5, &[1], DType::I64).is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn randint(low: i64, high: i64, shape: &[usize], dtype: DType) -> Result<Tensor> {
        typing::randint(low, high, dtype)?;
        Tensor::random(shape, dtype, Distribution::Integer { low, high })
    }

    /// The `n × m` identity (`torch.eye`; `m` defaults to `n`): ones on the main
    /// diagonal. Refused for `uint16`/`uint32`/`uint64` and complex32 as PyTorch
    /// (`"eye" not implemented for 'UInt16'`).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let e = Tensor::eye(2, Some(3), DType::I32)?;
    /// assert_eq!(e.to_vec::<i32>()?, vec![1, 0, 0, 0, 1, 0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn eye(n: usize, m: Option<usize>, dtype: DType) -> Result<Tensor> {
        let m = m.unwrap_or(n);
        typing::eye(dtype)?;
        let shape = [n, m];
        checked_numel(&shape, dtype)?;
        if n == 0 || m == 0 {
            return Ok(Tensor::zeros(&shape, dtype));
        }
        // A composition the compiler can fuse: (row index == column index) as dtype.
        Ok(with_store(|s| {
            let range = s.add(
                Op::Arange {
                    start: 0.0,
                    step: 1.0,
                },
                DType::I64,
                vec![n.max(m)],
                &[],
            );
            s.set_device(range, crate::get_default_device());
            let rows = Layout {
                shape: vec![n, m].into(),
                strides: vec![1, 0].into(),
                offset: 0,
            };
            let cols = Layout {
                shape: vec![n, m].into(),
                strides: vec![0, 1].into(),
                offset: 0,
            };
            let r = s.view_node(range, &rows);
            let c = s.view_node(range, &cols);
            let eq = s.add(Op::Binary(BinaryOp::Eq), DType::Bool, vec![n, m], &[r, c]);
            let out = s.cast_node(eq, dtype);
            Tensor::from_node(s, out)
        }))
    }

    /// `steps` values evenly spaced from `start` to `end` inclusive
    /// (`torch.linspace`), computed from both ends exactly as PyTorch's CPU kernel
    /// (see `lazyfuse_ir::Op::Linspace`). Integer dtypes truncate; bool, wide
    /// unsigned, complex32 and float8 are refused (`"linspace_cpu" not implemented …`)
    /// when `steps > 1`; negative `steps` is "number of steps must be non-negative".
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::linspace(0.0, 1.0, 5, DType::F32)?;
    /// assert_eq!(t.to_vec::<f32>()?, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    /// let t = Tensor::linspace(0.0, 10.0, 4, DType::I64)?;
    /// assert_eq!(t.to_vec::<i64>()?, vec![0, 3, 6, 10]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn linspace(start: f64, end: f64, steps: i64, dtype: DType) -> Result<Tensor> {
        let Ok(steps) = usize::try_from(steps) else {
            return Err(
                IrError::invalid("linspace", "number of steps must be non-negative").into(),
            );
        };
        checked_numel(&[steps], dtype)?;
        match steps {
            0 => Ok(Tensor::zeros(&[0], dtype)),
            1 => Tensor::full(&[1], start, dtype),
            _ => {
                typing::linspace(dtype)?;
                Ok(Tensor::source(&[steps], dtype, Op::Linspace { start, end }))
            }
        }
    }

    /// A tensor of zeros with this tensor's shape, in `dtype` or this tensor's dtype
    /// (`torch.zeros_like`). As PyTorch's default `preserve_format`, the result keeps
    /// the input's dim order: zeros like a transpose are strided like a transpose.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::ones(&[2, 3], DType::I8).t()?;
    /// let z = x.zeros_like(Some(DType::F64))?;
    /// assert_eq!((z.shape(), z.dtype()), (vec![3, 2], DType::F64));
    /// assert_eq!(z.strides(), vec![1, 3]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn zeros_like(&self, dtype: Option<DType>) -> Result<Tensor> {
        self.full_like(0, dtype)
    }

    /// A tensor of ones with this tensor's shape (`torch.ones_like`).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let o = Tensor::zeros(&[2], DType::Bool).ones_like(None)?;
    /// assert_eq!(o.to_vec::<bool>()?, vec![true, true]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn ones_like(&self, dtype: Option<DType>) -> Result<Tensor> {
        self.full_like(1, dtype)
    }

    /// A tensor filled with `value` with this tensor's shape (`torch.full_like`), with
    /// [`Tensor::full`]'s conversion checks.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[2], DType::I32);
    /// assert_eq!(x.full_like(7, None)?.to_vec::<i32>()?, vec![7, 7]);
    /// assert!(x.full_like(1e20, None).is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn full_like(&self, value: impl Into<Scalar>, dtype: Option<DType>) -> Result<Tensor> {
        self.full_like_in(value, dtype, MemoryFormat::Preserve)
    }

    /// [`Tensor::zeros_like`] in a memory format (`Preserve` is the default of
    /// `zeros_like`; the channels-last formats need a tensor of their rank).
    ///
    /// ```
    /// use lazyfuse::{DType, MemoryFormat, Tensor};
    /// let x = Tensor::ones(&[2, 3, 4, 5], DType::F32);
    /// let z = x.zeros_like_in(None, MemoryFormat::ChannelsLast)?;
    /// assert_eq!(z.strides(), vec![60, 1, 15, 3]);
    /// let flat = Tensor::ones(&[2, 3], DType::F32);
    /// assert!(flat.zeros_like_in(None, MemoryFormat::ChannelsLast).is_err()); // not 4-D
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn zeros_like_in(&self, dtype: Option<DType>, format: MemoryFormat) -> Result<Tensor> {
        self.full_like_in(0, dtype, format)
    }

    /// [`Tensor::ones_like`] in a memory format.
    ///
    /// ```
    /// use lazyfuse::{DType, MemoryFormat, Tensor};
    /// let x = Tensor::zeros(&[2, 3], DType::F32).t()?;
    /// assert_eq!(x.ones_like_in(None, MemoryFormat::Contiguous)?.strides(), vec![2, 1]);
    /// assert_eq!(x.ones_like_in(None, MemoryFormat::Preserve)?.strides(), vec![1, 3]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn ones_like_in(&self, dtype: Option<DType>, format: MemoryFormat) -> Result<Tensor> {
        self.full_like_in(1, dtype, format)
    }

    /// [`Tensor::full_like`] in a memory format.
    ///
    /// ```
    /// use lazyfuse::{DType, MemoryFormat, Tensor};
    /// let x = Tensor::zeros(&[1, 2, 2, 3], DType::F32);
    /// let f = x.full_like_in(7, Some(DType::I64), MemoryFormat::ChannelsLast)?;
    /// assert_eq!((f.strides(), f.to_vec::<i64>()?), (vec![12, 1, 6, 2], vec![7; 12]));
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn full_like_in(
        &self,
        value: impl Into<Scalar>,
        dtype: Option<DType>,
        format: MemoryFormat,
    ) -> Result<Tensor> {
        let dtype = dtype.unwrap_or(self.dtype());
        let value = value.into();
        // `Tensor::full`'s checks, then the constant on this tensor's device.
        crate::tensor::check_fill_value(value, dtype)?;
        checked_numel(&[self.numel()], dtype)?;
        let layout = &self.0.layout;
        let strides =
            memory_format::copy_strides(&layout.shape, &layout.strides, format, "empty_like")?;
        let flat = Tensor::constant_on(&[self.numel()], value, dtype, self.device());
        Ok(flat.with_layout(Layout {
            shape: self.shape().into(),
            strides: strides.into(),
            offset: 0,
        }))
    }
}
