//! Splits by count or by boundaries: `tensor_split` and the direction-named
//! `hsplit`, `vsplit`, `dsplit` of PyTorch (numpy's splits), and `split_with_sizes`.
//! Every piece is a view (`lazyfuse_ir::view_split`); nothing is copied.

use crate::error::Result;
use crate::Tensor;
use lazyfuse_ir::view_split::Sections;

impl Tensor {
    /// PyTorch's `tensor_split(sections, dim)`: `sections` views along `dim`, as
    /// equal as they can be (the first `size % sections` one element longer).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 7.0, 1.0, DType::I64).unwrap();
    /// let p = t.tensor_split(3, 0).unwrap();
    /// assert_eq!(p.iter().map(|p| p.numel()).collect::<Vec<_>>(), vec![3, 2, 2]);
    /// assert_eq!(p[1].to_vec::<i64>().unwrap(), vec![3, 4]);
    /// ```
    pub fn tensor_split(&self, sections: usize, dim: isize) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.tensor_split(Sections::Count(sections), dim)?))
    }

    /// PyTorch's `tensor_split(indices, dim)`: views cut before each index (Python
    /// slice bounds: negatives count from the end, out-of-range ones are clamped).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 7.0, 1.0, DType::I64).unwrap();
    /// let p = t.tensor_split_indices(&[1, 5], 0).unwrap();
    /// assert_eq!(p[1].to_vec::<i64>().unwrap(), vec![1, 2, 3, 4]);
    /// ```
    pub fn tensor_split_indices(&self, indices: &[isize], dim: isize) -> Result<Vec<Tensor>> {
        Ok(self.views(
            self.0
                .layout
                .tensor_split(Sections::Indices(indices), dim)?,
        ))
    }

    /// PyTorch's `hsplit(sections)`: [`Tensor::tensor_split`] along dim 1 (dim 0 of a
    /// 1-D tensor); the count must divide that dim.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[3, 4], DType::F32);
    /// assert_eq!(t.hsplit(2).unwrap()[0].shape(), vec![3, 2]);
    /// assert!(t.hsplit(3).is_err());
    /// ```
    pub fn hsplit(&self, sections: usize) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.hsplit(Sections::Count(sections))?))
    }

    /// PyTorch's `hsplit(indices)`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[3, 4], DType::F32);
    /// assert_eq!(t.hsplit_indices(&[1]).unwrap()[1].shape(), vec![3, 3]);
    /// ```
    pub fn hsplit_indices(&self, indices: &[isize]) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.hsplit(Sections::Indices(indices))?))
    }

    /// PyTorch's `vsplit(sections)`: [`Tensor::tensor_split`] along dim 0 of a tensor
    /// of at least 2 dims; the count must divide that dim.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[4, 3], DType::F32);
    /// assert_eq!(t.vsplit(2).unwrap()[1].shape(), vec![2, 3]);
    /// assert!(Tensor::zeros(&[4], DType::F32).vsplit(2).is_err());
    /// ```
    pub fn vsplit(&self, sections: usize) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.vsplit(Sections::Count(sections))?))
    }

    /// PyTorch's `vsplit(indices)`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[4, 3], DType::F32);
    /// assert_eq!(t.vsplit_indices(&[3]).unwrap()[1].shape(), vec![1, 3]);
    /// ```
    pub fn vsplit_indices(&self, indices: &[isize]) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.vsplit(Sections::Indices(indices))?))
    }

    /// PyTorch's `dsplit(sections)`: [`Tensor::tensor_split`] along dim 2 of a tensor
    /// of at least 3 dims; the count must divide that dim.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3, 4], DType::F32);
    /// assert_eq!(t.dsplit(4).unwrap()[3].shape(), vec![2, 3, 1]);
    /// ```
    pub fn dsplit(&self, sections: usize) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.dsplit(Sections::Count(sections))?))
    }

    /// PyTorch's `dsplit(indices)`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2, 3, 4], DType::F32);
    /// assert_eq!(t.dsplit_indices(&[1, 3]).unwrap()[1].shape(), vec![2, 3, 2]);
    /// ```
    pub fn dsplit_indices(&self, indices: &[isize]) -> Result<Vec<Tensor>> {
        Ok(self.views(self.0.layout.dsplit(Sections::Indices(indices))?))
    }

    /// PyTorch's `split_with_sizes`: [`Tensor::split_sizes`] by its PyTorch name.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 5.0, 1.0, DType::I64).unwrap();
    /// assert_eq!(t.split_with_sizes(&[2, 3], 0).unwrap()[1].numel(), 3);
    /// ```
    pub fn split_with_sizes(&self, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        self.split_sizes(sizes, dim)
    }
}
