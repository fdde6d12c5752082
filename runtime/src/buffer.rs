//! `Buffer`: a flat, typed, host-memory array holding one storage's elements, and the
//! `Element` trait that ties each Rust element type to its `DType`.

use half::{bf16, f16};
use lazyfuse_ir::{DType, Layout};
use num_complex::Complex;

/// A flat array of one dtype. Storage-only dtypes (float8, complex32, bcomplex32)
/// are kept as raw little-endian bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum Buffer {
    /// `bool`
    Bool(Vec<bool>),
    /// `uint8`
    U8(Vec<u8>),
    /// `int8`
    I8(Vec<i8>),
    /// `int16`
    I16(Vec<i16>),
    /// `int32`
    I32(Vec<i32>),
    /// `int64`
    I64(Vec<i64>),
    /// `uint16`
    U16(Vec<u16>),
    /// `uint32`
    U32(Vec<u32>),
    /// `uint64`
    U64(Vec<u64>),
    /// `float16`
    F16(Vec<f16>),
    /// `bfloat16`
    BF16(Vec<bf16>),
    /// `float32`
    F32(Vec<f32>),
    /// `float64`
    F64(Vec<f64>),
    /// `complex64`
    C64(Vec<Complex<f32>>),
    /// `complex128`
    C128(Vec<Complex<f64>>),
    /// A storage-only dtype as raw bytes (`size_in_bytes` per element).
    Raw {
        /// the dtype
        dtype: DType,
        /// the bytes
        bytes: Vec<u8>,
    },
}

/// Applies `$body` to the typed vector inside a buffer, binding it to `$v`. The
/// `Raw` case runs `$raw`.
#[macro_export]
macro_rules! with_buffer {
    ($buf:expr, $v:ident => $body:expr, raw => $raw:expr) => {
        match $buf {
            $crate::Buffer::Bool($v) => $body,
            $crate::Buffer::U8($v) => $body,
            $crate::Buffer::I8($v) => $body,
            $crate::Buffer::I16($v) => $body,
            $crate::Buffer::I32($v) => $body,
            $crate::Buffer::I64($v) => $body,
            $crate::Buffer::U16($v) => $body,
            $crate::Buffer::U32($v) => $body,
            $crate::Buffer::U64($v) => $body,
            $crate::Buffer::F16($v) => $body,
            $crate::Buffer::BF16($v) => $body,
            $crate::Buffer::F32($v) => $body,
            $crate::Buffer::F64($v) => $body,
            $crate::Buffer::C64($v) => $body,
            $crate::Buffer::C128($v) => $body,
            $crate::Buffer::Raw { .. } => $raw,
        }
    };
}

impl Buffer {
    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        match self {
            Buffer::Bool(_) => DType::Bool,
            Buffer::U8(_) => DType::U8,
            Buffer::I8(_) => DType::I8,
            Buffer::I16(_) => DType::I16,
            Buffer::I32(_) => DType::I32,
            Buffer::I64(_) => DType::I64,
            Buffer::U16(_) => DType::U16,
            Buffer::U32(_) => DType::U32,
            Buffer::U64(_) => DType::U64,
            Buffer::F16(_) => DType::F16,
            Buffer::BF16(_) => DType::BF16,
            Buffer::F32(_) => DType::F32,
            Buffer::F64(_) => DType::F64,
            Buffer::C64(_) => DType::C64,
            Buffer::C128(_) => DType::C128,
            Buffer::Raw { dtype, .. } => *dtype,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        with_buffer!(self, v => v.len(), raw => match self {
            Buffer::Raw { dtype, bytes } => bytes.len() / dtype.size_in_bytes(),
            _ => unreachable!(),
        })
    }

    /// True when the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Address of element 0 (the bytes of a storage-only dtype), for compiled kernels.
    /// Reading through it is sound for `len() * dtype().size_in_bytes()` bytes while
    /// the buffer lives and is not mutated.
    ///
    /// ```
    /// let b = lazyfuse_runtime::Buffer::from_vec(vec![1.0f32, 2.0]);
    /// assert!(!b.as_ptr().is_null());
    /// ```
    pub fn as_ptr(&self) -> *const u8 {
        with_buffer!(self, v => v.as_ptr().cast::<u8>(), raw => match self {
            Buffer::Raw { bytes, .. } => bytes.as_ptr(),
            _ => unreachable!(),
        })
    }

    /// Address of element 0 for writing, for compiled kernels. Every element type
    /// but `bool` accepts any bit pattern; a kernel writes only 0 or 1 into a `bool`
    /// buffer.
    ///
    /// ```
    /// let mut b = lazyfuse_runtime::Buffer::from_vec(vec![1u8, 2]);
    /// assert!(!b.as_mut_ptr().is_null());
    /// ```
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        match self {
            Buffer::Raw { bytes, .. } => bytes.as_mut_ptr(),
            other => with_buffer!(other, v => v.as_mut_ptr().cast::<u8>(), raw => unreachable!()),
        }
    }

    /// These bytes (row-major, little-endian) read as `dtype`: PyTorch's
    /// `view(dtype)`. The byte count must be a whole number of `dtype` elements; bool
    /// elements read any nonzero byte as `true`.
    ///
    /// ```
    /// use lazyfuse_ir::DType;
    /// use lazyfuse_runtime::Buffer;
    /// let b = Buffer::from_vec(vec![1.0f32]).bitcast(DType::I32).unwrap();
    /// assert_eq!(b.as_slice::<i32>().unwrap(), &[0x3f80_0000]);
    /// assert!(Buffer::from_vec(vec![1u8; 3]).bitcast(DType::I16).is_err());
    /// ```
    pub fn bitcast(&self, dtype: DType) -> crate::Result<Buffer> {
        let nbytes = self.len() * self.dtype().size_in_bytes();
        let size = dtype.size_in_bytes();
        if size == 0 || !nbytes.is_multiple_of(size) {
            return Err(crate::Error::Malformed(format!(
                "a bitcast of {nbytes} bytes to {dtype}"
            )));
        }
        if dtype == DType::Bool {
            let bytes = self.bitcast(DType::U8)?;
            let bools: Vec<bool> = bytes
                .as_slice::<u8>()
                .unwrap_or(&[])
                .iter()
                .map(|&b| b != 0)
                .collect();
            return Ok(Buffer::from_vec(bools));
        }
        let mut out = Buffer::zeros(dtype, nbytes / size);
        // SAFETY: `self` holds `nbytes` initialized bytes and `out` was allocated with
        // exactly `nbytes` (`nbytes / size` elements of `size` bytes); they are two
        // allocations, so the ranges do not overlap. Every bit pattern is a valid
        // value of the non-bool dtypes (bool is handled above).
        unsafe {
            std::ptr::copy_nonoverlapping(self.as_ptr(), out.as_mut_ptr(), nbytes);
        }
        Ok(out)
    }
    /// A buffer of `len` zeros (false, 0, +0.0) of `dtype`.
    pub fn zeros(dtype: DType, len: usize) -> Buffer {
        match dtype {
            DType::Bool => Buffer::Bool(vec![false; len]),
            DType::U8 => Buffer::U8(vec![0; len]),
            DType::I8 => Buffer::I8(vec![0; len]),
            DType::I16 => Buffer::I16(vec![0; len]),
            DType::I32 => Buffer::I32(vec![0; len]),
            DType::I64 => Buffer::I64(vec![0; len]),
            DType::U16 => Buffer::U16(vec![0; len]),
            DType::U32 => Buffer::U32(vec![0; len]),
            DType::U64 => Buffer::U64(vec![0; len]),
            DType::F16 => Buffer::F16(vec![f16::ZERO; len]),
            DType::BF16 => Buffer::BF16(vec![bf16::ZERO; len]),
            DType::F32 => Buffer::F32(vec![0.0; len]),
            DType::F64 => Buffer::F64(vec![0.0; len]),
            DType::C64 => Buffer::C64(vec![Complex::new(0.0, 0.0); len]),
            DType::C128 => Buffer::C128(vec![Complex::new(0.0, 0.0); len]),
            other => Buffer::Raw {
                dtype: other,
                bytes: vec![0; len * other.size_in_bytes()],
            },
        }
    }

    /// Sets every element to zero (false, 0, +0.0), keeping the memory: what
    /// [`Buffer::zeros`] gives, without allocating.
    ///
    /// ```
    /// let mut b = lazyfuse_runtime::Buffer::from_vec(vec![1.5f32, -2.0]);
    /// b.fill_zero();
    /// assert_eq!(b, lazyfuse_runtime::Buffer::from_vec(vec![0.0f32, 0.0]));
    /// ```
    pub fn fill_zero(&mut self) {
        match self {
            Buffer::Raw { bytes, .. } => bytes.fill(0),
            other => with_buffer!(other, v => v.fill(Default::default()), raw => unreachable!()),
        }
    }

    /// Wraps a vector of elements.
    pub fn from_vec<T: Element>(data: Vec<T>) -> Buffer {
        T::into_buffer(data)
    }

    /// The elements as a slice, if `T` is the buffer's element type.
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        T::slice(self)
    }

    /// Copies the elements a layout addresses, in the layout's row-major order, into a
    /// new contiguous buffer. The caller guarantees `layout.required_storage() <=
    /// self.len()` (the graph verifier checks it for every `View`).
    pub fn gather(&self, layout: &Layout) -> Buffer {
        if layout.is_identity_of(self.len()) {
            return self.clone();
        }
        match self {
            Buffer::Raw { dtype, bytes } => {
                let size = dtype.size_in_bytes();
                let mut out = Vec::with_capacity(layout.numel() * size);
                for o in layout.offsets() {
                    out.extend_from_slice(&bytes[o * size..(o + 1) * size]);
                }
                Buffer::Raw {
                    dtype: *dtype,
                    bytes: out,
                }
            }
            _ => with_buffer!(self, v => {
                let out: Vec<_> = layout.offsets().map(|o| v[o]).collect();
                Buffer::from_vec(out)
            }, raw => unreachable!()),
        }
    }
}

impl Buffer {
    /// The elements at these storage offsets, in order (a printer reading only what it
    /// shows). Offsets must be inside the buffer; one outside is
    /// [`crate::Error::Malformed`].
    ///
    /// ```
    /// use lazyfuse_runtime::Buffer;
    /// let b = Buffer::from_vec(vec![10i32, 11, 12, 13]);
    /// assert_eq!(b.take_offsets(&[3, 0]).unwrap(), Buffer::from_vec(vec![13i32, 10]));
    /// assert!(b.take_offsets(&[4]).is_err());
    /// ```
    pub fn take_offsets(&self, offsets: &[usize]) -> crate::Result<Buffer> {
        if let Some(o) = offsets.iter().find(|&&o| o >= self.len()) {
            return Err(crate::Error::Malformed(format!(
                "offset {o} outside a buffer of {} elements",
                self.len()
            )));
        }
        Ok(match self {
            Buffer::Raw { dtype, bytes } => {
                let size = dtype.size_in_bytes();
                let mut out = Vec::with_capacity(offsets.len() * size);
                for &o in offsets {
                    out.extend_from_slice(&bytes[o * size..(o + 1) * size]);
                }
                Buffer::Raw {
                    dtype: *dtype,
                    bytes: out,
                }
            }
            _ => with_buffer!(self, v => {
                Buffer::from_vec(offsets.iter().map(|&o| v[o]).collect::<Vec<_>>())
            }, raw => unreachable!()),
        })
    }
}

/// A Rust type that is the element type of one dtype.
pub trait Element: Copy + Send + Sync + std::fmt::Debug + 'static {
    /// The dtype whose elements are `Self`.
    const DTYPE: DType;
    /// Wraps a vector into a [`Buffer`].
    fn into_buffer(data: Vec<Self>) -> Buffer;
    /// The buffer's elements, if it holds `Self`.
    fn slice(buffer: &Buffer) -> Option<&[Self]>;
    /// The buffer's vector of elements, if it holds `Self` (else the buffer back).
    fn into_vec(buffer: Buffer) -> Result<Vec<Self>, Buffer>;
}

macro_rules! element {
    ($t:ty, $variant:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            fn into_buffer(data: Vec<Self>) -> Buffer {
                Buffer::$variant(data)
            }
            fn slice(buffer: &Buffer) -> Option<&[Self]> {
                match buffer {
                    Buffer::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn into_vec(buffer: Buffer) -> Result<Vec<Self>, Buffer> {
                match buffer {
                    Buffer::$variant(v) => Ok(v),
                    other => Err(other),
                }
            }
        }
    };
}

element!(bool, Bool);
element!(u8, U8);
element!(i8, I8);
element!(i16, I16);
element!(i32, I32);
element!(i64, I64);
element!(u16, U16);
element!(u32, U32);
element!(u64, U64);
element!(f16, F16);
element!(bf16, BF16);
element!(f32, F32);
element!(f64, F64);
element!(Complex<f32>, C64);
element!(Complex<f64>, C128);

/// Checks that a buffer of `numel` elements of `dtype` with this shape can be
/// allocated, before a kernel builds it: the size must fit memory arithmetic
/// ([`crate::Error::SizeOverflow`], with PyTorch's message for a creation op (`creation`:
/// "Storage size calculation overflowed…") or a computed result ("numel: integer
/// multiplication overflow" when the element count itself overflows)), and the
/// allocator must grant the bytes ([`crate::Error::OutOfMemory`]).
///
/// The grant is probed with `try_reserve_exact` and released at once: the kernels
/// then allocate with ordinary (aborting) `Vec`s, which on an over-committing host
/// only fail for sizes the probe already refused. A probe of a few bytes costs one
/// `malloc`/`free`; a large one an `mmap`/`munmap`, small beside the kernel.
///
/// ```
/// use lazyfuse_runtime::buffer::check_allocation;
/// use lazyfuse_ir::DType;
/// assert!(check_allocation(&[4], DType::F32, true).is_ok());
/// let e = check_allocation(&[1 << 62, 4], DType::F32, true).unwrap_err();
/// assert_eq!(e.to_string(), "Storage size calculation overflowed with sizes=[4611686018427387904, 4]");
/// let e = check_allocation(&[1 << 50], DType::U8, false).unwrap_err();
/// assert!(e.to_string().starts_with("DefaultCPUAllocator: can't allocate memory: you tried to allocate 1125899906842624 bytes."));
/// ```
pub fn check_allocation(shape: &[usize], dtype: DType, creation: bool) -> crate::Result<()> {
    use crate::Error;
    let storage = || {
        Error::SizeOverflow(format!(
            "Storage size calculation overflowed with sizes={}",
            lazyfuse_ir::shape::fmt_shape(shape)
        ))
    };
    let count = match lazyfuse_ir::shape::checked_count(shape) {
        Ok(n) => n,
        Err(e) if !creation => return Err(Error::SizeOverflow(e.to_string())),
        Err(_) => return Err(storage()),
    };
    let bytes = count
        .checked_mul(dtype.size_in_bytes())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(storage)?;
    if bytes == 0 {
        return Ok(());
    }
    let mut probe: Vec<u8> = Vec::new();
    probe
        .try_reserve_exact(bytes)
        .map_err(|_| Error::OutOfMemory { bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_transposed() {
        let b = Buffer::from_vec(vec![0i64, 1, 2, 3, 4, 5]);
        let l = Layout {
            shape: vec![3, 2].into(),
            strides: vec![1, 3].into(),
            offset: 0,
        };
        assert_eq!(b.gather(&l), Buffer::from_vec(vec![0i64, 3, 1, 4, 2, 5]));
        assert_eq!(b.dtype(), DType::I64);
        assert_eq!(Buffer::zeros(DType::F8E5M2, 3).len(), 3);
    }
}
