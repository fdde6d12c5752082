//! In-place ops (`add_`, `mul_`, `fill_`, `copy_`, …) by functionalization.
//!
//! An in-place op computes its value from the storage's current version, then
//! records a `write_view` node: the old version with the elements this tensor's
//! layout addresses replaced. The storage moves to that new version, so the write
//! reaches the base and every other view of the storage, while values computed
//! earlier from the old version keep it. PyTorch's rules hold: the result must be
//! castable to the destination dtype, broadcasting may not change the destination's
//! shape, and a destination whose elements share memory, or an input that partly
//! overlaps it, is refused.

use crate::default_dtype;
use crate::error::Result;
use crate::operand::{operand_node, Operand};
use crate::ops::elementwise::{
    check_scalar_value, pow_shortcut, pow_shortcut_node, PowShortcut, RoundingMode,
};
use crate::store::{with_store, Store};
use crate::tensor::{check_fill_value, Tensor};
use lazyfuse_ir::broadcast::inplace_shape;
use lazyfuse_ir::promote::result_type;
use lazyfuse_ir::{typing, BinaryOp, DType, Error as IrError, NodeId, Op, Scalar};

/// PyTorch's `get_overlap_status(a, b) == Partial`: the two tensors share storage,
/// are not the very same view, and their memory ranges intersect.
fn partially_overlaps(dest: &Tensor, src: &Tensor) -> bool {
    if !dest.shares_storage(src) || dest.numel() == 0 || src.numel() == 0 {
        return false;
    }
    let (a, b) = (dest.strided_layout(), src.strided_layout());
    if !a.is_non_overlapping_and_dense() || !b.is_non_overlapping_and_dense() {
        return false; // PyTorch: "too hard" to tell, so it lets the op run.
    }
    // A complex view and a float view of one storage (`real`, `view_as_complex`)
    // count in different units: both are measured in floats then.
    let units = |t: &Tensor| if t.dtype().is_complex() { 2 } else { 1 };
    let (ua, ub) = if units(dest) == units(src) {
        (1, 1)
    } else {
        (units(dest), units(src))
    };
    let (a_begin, b_begin) = (a.offset * ua, b.offset * ub);
    let (a_end, b_end) = (a_begin + a.numel() * ua, b_begin + b.numel() * ub);
    if a_begin == b_begin && a_end == b_end {
        return ua != ub || a.strides != b.strides;
    }
    a_begin < b_end && b_begin < a_end
}

impl Tensor {
    /// Moves the storage to a version in which this view's elements are `value`
    /// (a node of this tensor's shape and dtype).
    pub(crate) fn write(&self, store: &mut Store, value: NodeId) {
        let storage = &self.0.storage;
        let old = storage.node();
        let new = self.0.reading.write(store, old, &self.0.layout, value);
        store.move_storage(storage, new);
    }

    pub(crate) fn check_destination(&self, src: Option<&Tensor>) -> Result<()> {
        crate::autograd::check_inplace(self)?;
        if self.0.layout.has_internal_overlap() {
            return Err(IrError::InternalOverlap.into());
        }
        if src.is_some_and(|s| partially_overlaps(self, s)) {
            return Err(IrError::PartialOverlap.into());
        }
        Ok(())
    }

    pub(crate) fn inplace_binary(&self, op: BinaryOp, other: Operand) -> Result<()> {
        let moved = if Tensor::all_on_cpu(&[Some(self), other.tensor()]) {
            Vec::new()
        } else {
            Tensor::align_to(
                &format!("{}_", Op::Binary(op).name()),
                self.device(),
                &[other.tensor()],
            )?
        };
        let other = other.or_moved(&moved, 0);
        let me = Operand::Tensor(self);
        let shape = self.shape();
        inplace_shape(&shape, other.shape())?;
        let src = match other {
            Operand::Tensor(t) => Some(t),
            Operand::Scalar(_) => None,
        };
        // (the exponent's short cuts only where their nodes compute in the
        // tensor's dtype)
        let shortcut = pow_shortcut(op, &me, &other).filter(|&s| {
            matches!(s, PowShortcut::Ones | PowShortcut::Base) || s.applies_to(self.dtype())
        });
        if let Some(shortcut) = shortcut {
            let dtype = result_type(&[me.operand_type(), other.operand_type()], default_dtype())?;
            typing::inplace(dtype, self.dtype())?;
            self.check_destination(src)?;
            return with_store(|s| {
                let value = pow_shortcut_node(s, shortcut, &me, self.dtype(), &shape)?;
                self.write(s, value);
                Ok(())
            });
        }
        if self.dtype().is_float8() {
            // the float8 kernels (`mul_`) compute as the out-of-place op, then write
            let common = result_type(&[me.operand_type(), other.operand_type()], default_dtype())?;
            if let Some(r) = crate::ops::float8::binary(op, &me, &other, common, &shape) {
                typing::inplace(r.as_ref().map_or(common, Tensor::dtype), self.dtype())?;
                self.check_destination(src)?;
                return self.copy_(&r?);
            }
        }
        let sig =
            typing::binary_inplace(op, me.operand_type(), other.operand_type(), default_dtype())?;
        check_scalar_value(op, sig.compute, &other)?;
        self.check_destination(src)?;
        if sig.compute == DType::C32 {
            // computed through complex64 as the out-of-place op, then written
            let value = crate::ops::complex32::binary(op, &me, &other, sig, &shape)?;
            return self.copy_(&value);
        }
        with_store(|s| {
            let a = operand_node(s, &me, sig.compute, &shape)?;
            let b = operand_node(s, &other, sig.compute, &shape)?;
            let value = s.add(Op::Binary(op), sig.output, shape.clone(), &[a, b]);
            let value = s.cast_node(value, self.dtype());
            self.write(s, value);
            Ok(())
        })
    }

    /// Sets every element to `value` (converted to this dtype). Allowed even where
    /// elements share memory (an expanded view).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let base = Tensor::zeros(&[2, 2], DType::I64);
    /// base.select(0, 1).unwrap().fill_(7).unwrap();
    /// assert_eq!(base.to_vec::<i64>().unwrap(), vec![0, 0, 7, 7]);
    /// ```
    pub fn fill_(&self, value: impl Into<Scalar>) -> Result<()> {
        let value = value.into();
        if self.dtype() == DType::F4E2M1FNX2 {
            return Err(IrError::not_implemented("fill_out", DType::F4E2M1FNX2).into());
        }
        check_fill_value(value, self.dtype())?;
        crate::autograd::check_inplace(self)?;
        with_store(|s| {
            let v = s.add(Op::Full(value), self.dtype(), self.shape(), &[]);
            self.write(s, v);
            Ok(())
        })
    }

    /// Copies `src` (broadcast to this shape, converted to this dtype by the rules of
    /// [`Tensor::to_dtype`], float8 included) into this tensor.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let dst = Tensor::zeros(&[2, 2], DType::I32);
    /// dst.copy_(&Tensor::from_vec(vec![1.9f32, -2.9], &[2]).unwrap()).unwrap();
    /// assert_eq!(dst.to_vec::<i32>().unwrap(), vec![1, -2, 1, -2]);
    /// ```
    pub fn copy_(&self, src: &Tensor) -> Result<()> {
        let shape = self.shape();
        inplace_shape(&shape, &src.shape())?;
        if src.device() != self.device() {
            // `copy_` is PyTorch's way across devices: the source's values move first.
            return self.copy_(&src.to_device(self.device())?);
        }
        let same_view = self.shares_storage(src)
            && self.strided_layout() == src.strided_layout()
            && self.dtype() == src.dtype();
        if same_view {
            return Ok(());
        }
        if self.dtype() != src.dtype() && matches!(self.dtype(), DType::C32 | DType::BC32) {
            return Err(IrError::Unsupported(format!(
                "copy_ from {} to {}",
                src.dtype(),
                self.dtype()
            ))
            .into());
        }
        self.check_destination(Some(src))?;
        with_store(|s| {
            let value = src.node_as(s, self.dtype(), &shape)?;
            self.write(s, value);
            Ok(())
        })
    }

    /// In-place division with a rounding mode.
    ///
    /// ```
    /// use lazyfuse::{RoundingMode, Tensor};
    /// let a = Tensor::from_vec(vec![-7i32, 7], &[2]).unwrap();
    /// a.div_mode_(2, RoundingMode::Floor).unwrap();
    /// assert_eq!(a.to_vec::<i32>().unwrap(), vec![-4, 3]);
    /// ```
    pub fn div_mode_<'a>(&self, other: impl Into<Operand<'a>>, mode: RoundingMode) -> Result<()> {
        let op = match mode {
            RoundingMode::Floor => BinaryOp::DivFloor,
            RoundingMode::Trunc => BinaryOp::DivTrunc,
        };
        self.inplace_binary(op, other.into())
    }
}

macro_rules! inplace_methods {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name<'a>(&self, other: impl Into<Operand<'a>>) -> Result<()> {
                    self.inplace_binary(BinaryOp::$op, other.into())
                }
            )*
        }
    };
}

inplace_methods! {
    /// `self += other`; the write reaches every view of the storage.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let base = Tensor::zeros(&[2, 3], DType::F32);
    /// let col = base.select(1, 0).unwrap();
    /// col.add_(5).unwrap();
    /// assert_eq!(base.to_vec::<f32>().unwrap(), vec![5.0, 0.0, 0.0, 5.0, 0.0, 0.0]);
    /// let ints = Tensor::zeros(&[2], DType::I32);
    /// assert!(ints.add_(0.5).is_err()); // float result can't be cast to int
    /// ```
    add_ => Add;
    /// `self -= other`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![5i32, 1], &[2]).unwrap();
    /// a.sub_(2).unwrap();
    /// assert_eq!(a.to_vec::<i32>().unwrap(), vec![3, -1]);
    /// ```
    sub_ => Sub;
    /// `self *= other`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1.5f32, -2.0], &[2]).unwrap();
    /// a.mul_(2).unwrap();
    /// assert_eq!(a.to_vec::<f32>().unwrap(), vec![3.0, -4.0]);
    /// assert!(Tensor::from_vec(vec![1i32], &[1]).unwrap().mul_(1.5).is_err());
    /// ```
    mul_ => Mul;
    /// `self /= other` (true division).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::from_vec(vec![3.0f32], &[1]).unwrap();
    /// a.div_(2).unwrap();
    /// assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.5]);
    /// assert!(Tensor::ones(&[1], DType::I64).div_(2).is_err()); // Float can't be cast to Long
    /// ```
    div_ => Div;
    /// `self //= other`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![7i64, -7], &[2]).unwrap();
    /// a.floor_divide_(2).unwrap();
    /// assert_eq!(a.to_vec::<i64>().unwrap(), vec![3, -4]);
    /// ```
    floor_divide_ => DivFloor;
    /// `self %= other` (Python modulo).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![-3i32, 3], &[2]).unwrap();
    /// a.remainder_(2).unwrap();
    /// assert_eq!(a.to_vec::<i32>().unwrap(), vec![1, 1]);
    /// ```
    remainder_ => Remainder;
    /// C modulo in place.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![-3i32, 3], &[2]).unwrap();
    /// a.fmod_(2).unwrap();
    /// assert_eq!(a.to_vec::<i32>().unwrap(), vec![-1, 1]);
    /// ```
    fmod_ => Fmod;
    /// `self **= other`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![2.0f32, 3.0], &[2]).unwrap();
    /// a.pow_(2).unwrap();
    /// assert_eq!(a.to_vec::<f32>().unwrap(), vec![4.0, 9.0]);
    /// ```
    pow_ => Pow;
    /// `self &= other`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![12u8], &[1]).unwrap();
    /// a.bitwise_and_(10).unwrap();
    /// assert_eq!(a.to_vec::<u8>().unwrap(), vec![8]);
    /// ```
    bitwise_and_ => BitwiseAnd;
    /// `self |= other`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![12u8], &[1]).unwrap();
    /// a.bitwise_or_(3).unwrap();
    /// assert_eq!(a.to_vec::<u8>().unwrap(), vec![15]);
    /// ```
    bitwise_or_ => BitwiseOr;
    /// `self ^= other`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![12u8], &[1]).unwrap();
    /// a.bitwise_xor_(10).unwrap();
    /// assert_eq!(a.to_vec::<u8>().unwrap(), vec![6]);
    /// ```
    bitwise_xor_ => BitwiseXor;
    /// `self = atan2(self, other)`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::from_vec(vec![0.0f64], &[1]).unwrap();
    /// a.atan2_(-1.0).unwrap();
    /// assert_eq!(a.to_vec::<f64>().unwrap(), vec![std::f64::consts::PI]);
    /// assert!(Tensor::ones(&[1], DType::I32).atan2_(1).is_err()); // Float can't be cast to Int
    /// ```
    atan2_ => Atan2;
}
