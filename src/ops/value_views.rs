//! The views of `tensor-views.rst` that see a storage's values differently:
//! `view_dtype` (its bytes as another dtype), `real` and `imag` (the parts of a
//! complex tensor, strides doubled), `view_as_real` and `view_as_complex`, and `conj`
//! (PyTorch's lazy conjugate: a view with the conjugate bit) with `is_conj`,
//! `resolve_conj`, `is_neg` and `resolve_neg`. All alias their input: a write
//! through one reaches the other (see `reading`).

use crate::error::Result;
use crate::reading::Reading;
use crate::store::with_store;
use crate::{MemoryFormat, Tensor};
use lazyfuse_ir::{DType, Error as IrError, Layout};

/// A complex layout counted in floats: strides and offset doubled, plus `extra`
/// (0 for the real part, 1 for the imaginary one).
fn in_floats(l: &Layout, extra: usize) -> Layout {
    Layout {
        shape: l.shape.clone(),
        strides: l.strides.iter().map(|s| 2 * s).collect(),
        offset: 2 * l.offset + extra,
    }
}

impl Tensor {
    /// PyTorch's `Tensor.view(dtype)`: the same bytes read as `dtype`, sharing the
    /// storage. With a different element size the last dim (stride 1) scales by the
    /// ratio and the other strides and the offset with it, under PyTorch's checks
    /// and messages; a conjugate or negative view is refused, as PyTorch does.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f32, -2.0], &[2])?;
    /// let bits = x.view_dtype(DType::I32)?;
    /// assert_eq!(bits.to_vec::<i32>()?, vec![0x3f80_0000, 0xc000_0000u32 as i32]);
    /// let halves = x.view_dtype(DType::I16)?;
    /// assert_eq!((halves.shape(), halves.to_vec::<i16>()?[1]), (vec![4], 0x3f80));
    /// bits.bitwise_xor_(i32::MIN)?; // flips the sign bits of x
    /// assert_eq!(x.to_vec::<f32>()?, vec![-1.0, 2.0]);
    /// assert_eq!(
    ///     x.view_dtype(DType::F64)?.shape(),
    ///     vec![1]
    /// );
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn view_dtype(&self, dtype: DType) -> Result<Tensor> {
        let r = self.0.reading;
        if r.conj {
            return Err(IrError::invalid(
                "view",
                "torch.Tensor.view is not supported for conjugate view tensors when converting to a different dtype.",
            )
            .into());
        }
        if r.neg {
            return Err(IrError::invalid(
                "view",
                "torch.Tensor.view is not supported for tensors with negative bit set when converting to a different dtype.",
            )
            .into());
        }
        let from = self.dtype();
        if dtype == from {
            return Ok(self.clone());
        }
        if r.parts || r.pairs {
            return Err(IrError::Unsupported(
                "view(dtype) of a real/imag/view_as_real/view_as_complex view (view the base, then take the parts)".into(),
            )
            .into());
        }
        let (old, new) = (from.size_in_bytes(), dtype.size_in_bytes());
        let what = format!(
            "to view {} as {} (different element sizes)",
            from.torch_name(),
            dtype.torch_name()
        );
        let bad = |m: String| Err(IrError::invalid("view", m).into());
        let l = &self.0.layout;
        let n = l.shape.len();
        let layout = if old == new {
            l.clone()
        } else if n == 0 {
            return bad(format!("self.dim() cannot be 0 {what}"));
        } else if old > new {
            let ratio = (old / new) as isize;
            if l.strides[n - 1] != 1 {
                return bad(format!(
                    "self.stride(-1) must be 1 {what}, but got {}",
                    l.strides[n - 1]
                ));
            }
            let mut out = l.clone();
            for s in &mut out.strides[..n - 1] {
                *s *= ratio;
            }
            out.shape[n - 1] *= ratio as usize;
            out.offset *= ratio as usize;
            out
        } else {
            let ratio = new / old;
            if !l.shape[n - 1].is_multiple_of(ratio) {
                return bad(format!(
                    "self.size(-1) must be divisible by {ratio} {what}, but got {}",
                    l.shape[n - 1]
                ));
            }
            if !l.offset.is_multiple_of(ratio) {
                return bad(format!(
                    "self.storage_offset() must be divisible by {ratio} {what}, but got {}",
                    l.offset
                ));
            }
            if l.strides[n - 1] != 1 {
                return bad(format!(
                    "self.stride(-1) must be 1 {what}, but got {}",
                    l.strides[n - 1]
                ));
            }
            let mut out = l.clone();
            for (d, s) in out.strides[..n - 1].iter_mut().enumerate() {
                if *s % ratio as isize != 0 {
                    return bad(format!(
                        "self.stride({d}) must be divisible by {ratio} {what}, but got {s}"
                    ));
                }
                *s /= ratio as isize;
            }
            out.shape[n - 1] /= ratio;
            out.offset /= ratio;
            out
        };
        // the storage's own bytes, reinterpreted once (a view of a view included);
        // its own dtype is no reinterpretation
        let stored = with_store(|s| s.graph.node(self.0.storage.node()).dtype);
        let reading = Reading {
            as_dtype: (dtype != stored).then_some(dtype),
            ..Reading::DIRECT
        };
        Ok(self.reading_as(layout, dtype, reading))
    }

    /// PyTorch's `Tensor.real`: the real parts of a complex tensor as a view of its
    /// storage (for a `[2, 3]` complex tensor: strides `[6, 2]`, offset 0); this
    /// tensor itself for a real dtype.
    ///
    /// ```
    /// use lazyfuse::{Complex, Tensor};
    /// let z = Tensor::from_vec(vec![Complex::new(1.0f32, 2.0), Complex::new(3.0, -4.0)], &[2])?;
    /// let re = z.real()?;
    /// assert_eq!((re.strides(), re.to_vec::<f32>()?), (vec![2], vec![1.0, 3.0]));
    /// re.mul_(10)?; // writes reach the complex tensor
    /// assert_eq!(z.to_vec::<Complex<f32>>()?, vec![Complex::new(10.0, 2.0), Complex::new(30.0, -4.0)]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn real(&self) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return Ok(self.clone());
        }
        self.part(0)
    }

    /// PyTorch's `Tensor.imag`: the imaginary parts of a complex tensor as a view
    /// (offset 1 into the float storage); refused for real dtypes, as PyTorch.
    ///
    /// ```
    /// use lazyfuse::{Complex, DType, Tensor};
    /// let z = Tensor::from_vec(vec![Complex::new(1.0f64, 2.0)], &[1])?;
    /// assert_eq!((z.imag()?.storage_offset(), z.imag()?.to_vec::<f64>()?), (1, vec![2.0]));
    /// assert_eq!(z.conj()?.imag()?.to_vec::<f64>()?, vec![-2.0]);
    /// assert_eq!(
    ///     Tensor::zeros(&[2], DType::F32).imag().unwrap_err().to_string(),
    ///     "imag is not implemented for tensors with non-complex dtypes."
    /// );
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn imag(&self) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return Err(IrError::invalid(
                "imag",
                "imag is not implemented for tensors with non-complex dtypes.",
            )
            .into());
        }
        self.part(1)
    }

    /// The real (`which = 0`) or imaginary (`1`) parts of this complex tensor.
    fn part(&self, which: usize) -> Result<Tensor> {
        self.half_complex_refused("real")?;
        let r = self.0.reading;
        // the imaginary part of a conjugate is negated; the real part is unchanged
        let reading = Reading {
            neg: which == 1 && r.conj,
            ..Reading::floats_of(r)
        };
        let layout = in_floats(&self.0.layout, which);
        Ok(self.reading_as(layout, self.dtype().to_real(), reading))
    }

    /// complex32 and bcomplex32 values have no arithmetic here yet, not even a
    /// conjugate or a part.
    fn half_complex_refused(&self, op: &str) -> Result<()> {
        if matches!(self.dtype(), DType::C32 | DType::BC32) {
            return Err(IrError::Unsupported(format!(
                "{op} of a {} tensor (complex32 has no arithmetic yet)",
                self.dtype()
            ))
            .into());
        }
        Ok(())
    }

    /// PyTorch's `torch.view_as_real`: a complex tensor as floats with a last dim of
    /// 2 (real, imaginary), sharing its storage. Refused for real dtypes and for an
    /// unresolved conjugate, as PyTorch.
    ///
    /// ```
    /// use lazyfuse::{Complex, Tensor};
    /// let z = Tensor::from_vec(vec![Complex::new(1.0f32, 2.0); 6], &[2, 3])?;
    /// let f = z.view_as_real()?;
    /// assert_eq!((f.shape(), f.strides()), (vec![2, 3, 2], vec![6, 2, 1]));
    /// assert!(z.conj()?.view_as_real().is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn view_as_real(&self) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return Err(IrError::invalid(
                "view_as_real",
                "view_as_real is only supported for complex tensors",
            )
            .into());
        }
        if self.0.reading.conj {
            return Err(IrError::invalid(
                "view_as_real",
                "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so you can view it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT alias the original.",
            )
            .into());
        }
        self.half_complex_refused("view_as_real")?;
        let mut layout = in_floats(&self.0.layout, 0);
        layout.shape.push(2);
        layout.strides.push(1);
        let reading = Reading::floats_of(self.0.reading);
        Ok(self.reading_as(layout, self.dtype().to_real(), reading))
    }

    /// PyTorch's `torch.view_as_complex`: a float tensor whose last dim is 2 (with
    /// stride 1, other strides and the offset even) as complex values sharing its
    /// storage.
    ///
    /// ```
    /// use lazyfuse::{Complex, DType, Tensor};
    /// let f = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let z = f.view_as_complex()?;
    /// assert_eq!(z.to_vec::<Complex<f32>>()?, vec![Complex::new(1.0, 2.0), Complex::new(3.0, 4.0)]);
    /// z.mul_(2)?;
    /// assert_eq!(f.to_vec::<f32>()?, vec![2.0, 4.0, 6.0, 8.0]);
    /// assert!(f.t()?.view_as_complex().is_err()); // the last dim's stride is 2
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn view_as_complex(&self) -> Result<Tensor> {
        let bad = |m: &str| Err(IrError::invalid("view_as_complex", m).into());
        let complex = match self.dtype() {
            DType::F16 => DType::C32,
            DType::F32 => DType::C64,
            DType::F64 => DType::C128,
            other => {
                return bad(&format!(
                    "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: {}",
                    other.torch_name()
                ));
            }
        };
        let l = &self.0.layout;
        let n = l.shape.len();
        if n == 0 {
            return bad("Input tensor must have one or more dimensions");
        }
        if l.shape[n - 1] != 2 {
            return bad("Tensor must have a last dimension of size 2");
        }
        if l.strides[n - 1] != 1 {
            return bad("Tensor must have a last dimension with stride 1");
        }
        if l.strides[..n - 1].iter().any(|s| s % 2 != 0) {
            return bad("Tensor must have a stride divisible by 2 for all but last dimension");
        }
        if !l.offset.is_multiple_of(2) {
            return bad("Tensor must have a storage_offset divisible by 2");
        }
        if self.0.reading.neg || self.0.reading.conj {
            return Err(IrError::Unsupported(
                "view_as_complex of a negated view (resolve_neg() first)".into(),
            )
            .into());
        }
        if complex == DType::C32 {
            return Err(IrError::Unsupported(
                "view_as_complex of a float16 tensor (complex32 has no arithmetic yet)".into(),
            )
            .into());
        }
        let layout = Layout {
            shape: lazyfuse_ir::layout::Dims::from_slice(&l.shape[..n - 1]),
            strides: l.strides[..n - 1].iter().map(|s| s / 2).collect(),
            offset: l.offset / 2,
        };
        // the floats of a complex storage are its parts again: read it directly
        let reading = if self.0.reading.parts {
            Reading::DIRECT
        } else {
            Reading {
                pairs: true,
                ..Reading::DIRECT
            }
        };
        Ok(self.reading_as(layout, complex, reading))
    }

    /// PyTorch's `Tensor.conj()`: the complex conjugate as a view with the conjugate
    /// bit (nothing is computed until read; writes through it are conjugated back);
    /// this tensor itself for a real dtype.
    ///
    /// ```
    /// use lazyfuse::{Complex, Tensor};
    /// let z = Tensor::from_vec(vec![Complex::new(1.0f32, 2.0)], &[1])?;
    /// let c = z.conj()?;
    /// assert!(c.is_conj() && c.shares_storage(&z));
    /// assert_eq!(c.to_vec::<Complex<f32>>()?, vec![Complex::new(1.0, -2.0)]);
    /// let r = c.resolve_conj()?;
    /// assert!(!r.is_conj() && !r.shares_storage(&z));
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn conj(&self) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return Ok(self.clone());
        }
        self.half_complex_refused("conj")?;
        let reading = Reading {
            conj: !self.0.reading.conj,
            ..self.0.reading
        };
        Ok(self.reading_as(self.0.layout.clone(), self.dtype(), reading))
    }

    /// Whether this is a view with the conjugate bit ([`Tensor::conj`]).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// assert!(!Tensor::zeros(&[1], DType::C64).is_conj());
    /// assert!(Tensor::zeros(&[1], DType::C64).conj().unwrap().is_conj());
    /// ```
    pub fn is_conj(&self) -> bool {
        self.0.reading.conj
    }

    /// PyTorch's `resolve_conj()`: a conjugate view's values in a new tensor without
    /// the bit (it no longer aliases; strided as `clone` strides); any other tensor
    /// itself.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[1], DType::C128);
    /// assert!(x.resolve_conj().unwrap().shares_storage(&x));
    /// ```
    pub fn resolve_conj(&self) -> Result<Tensor> {
        if self.is_conj() {
            self.clone_in(MemoryFormat::Preserve)
        } else {
            Ok(self.clone())
        }
    }

    /// Whether this is a view with PyTorch's negative bit (the imaginary part of a
    /// conjugate).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let z = Tensor::zeros(&[1], DType::C64);
    /// assert!(z.conj()?.imag()?.is_neg() && !z.imag()?.is_neg());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn is_neg(&self) -> bool {
        self.0.reading.neg
    }

    /// PyTorch's `resolve_neg()`: a negative view's values in a new tensor without
    /// the bit; any other tensor itself.
    ///
    /// ```
    /// use lazyfuse::{Complex, Tensor};
    /// let z = Tensor::from_vec(vec![Complex::new(0.0f32, 5.0)], &[1])?;
    /// let im = z.conj()?.imag()?.resolve_neg()?;
    /// assert_eq!((im.is_neg(), im.to_vec::<f32>()?), (false, vec![-5.0]));
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn resolve_neg(&self) -> Result<Tensor> {
        if self.is_neg() {
            self.clone_in(MemoryFormat::Preserve)
        } else {
            Ok(self.clone())
        }
    }
}
