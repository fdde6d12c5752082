//! Computing and reading values: `realize`, `is_realized`, `to_vec`.

use super::Tensor;
use crate::error::{Error, Result};
use crate::store::with_store;
use lazyfuse_ir::Op;
use lazyfuse_runtime::{Buffer, Element};

impl Tensor {
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
        crate::realize::realize(&self.0.storage)?;
        Ok(self.clone())
    }

    /// The elements in logical row-major order, as a contiguous buffer.
    pub(crate) fn read_buffer(&self) -> Result<Buffer> {
        if !self.0.reading.is_direct() {
            // values that differ from the storage's: computed, then read
            return self.fresh_copy().read_buffer();
        }
        let buffer = crate::realize::realized_buffer(&self.0.storage)?;
        // A view may have far more elements than its storage (expand).
        lazyfuse_runtime::buffer::check_allocation(&self.0.layout.shape, self.0.dtype, false)?;
        Ok(buffer.gather(&self.0.layout))
    }

    /// The elements that printing shows: all of them, or for a tensor of more than
    /// 1000 elements only the summarized sub-tensor (`display::shown_indices`), read
    /// straight from the realized storage so that a huge (e.g. expanded) tensor is
    /// never materialized.
    pub(super) fn shown_buffer(&self) -> Result<Buffer> {
        let shown = crate::display::shown_indices(&self.0.layout.shape);
        let count = shown.iter().map(Vec::len).product::<usize>();
        if count == self.numel() || !self.0.reading.is_direct() {
            return self.read_buffer();
        }
        let buffer = crate::realize::realized_buffer(&self.0.storage)?;
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
}
