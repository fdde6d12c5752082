//! What a tensor knows without computing: shape, dtype, strides, offset,
//! contiguity, storage sharing, layout.

use super::Tensor;
use lazyfuse_ir::{DType, Layout};

impl Tensor {
    /// The shape.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], DType::F32);
    /// assert_eq!(t.shape(), vec![2, 3]);
    /// assert_eq!(Tensor::scalar(1).shape(), Vec::<usize>::new());
    /// ```
    pub fn shape(&self) -> Vec<usize> {
        self.0.layout.shape.to_vec()
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
        self.0.layout.strides.to_vec()
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
}
