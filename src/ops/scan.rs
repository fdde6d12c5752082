//! Scans along one dim: `cumprod`, `cummax`, `cummin` (values and indices) and
//! `logcumsumexp`, each an `Op::Scan` node (the `(values, indices)` pairs are two
//! nodes reading the same input).
//!
//! Empty inputs: PyTorch skips the kernel of some ops on an empty tensor, so that
//! their dtype refusals do not fire (`softmax` of an empty `int64` tensor, `cummax` of
//! an empty complex tensor); [`Tensor::empty_along`] gives those ops their empty result.

use crate::error::Result;
use crate::store::with_store;
use crate::tensor::Tensor;
use lazyfuse_ir::shape::wrap_dim;
use lazyfuse_ir::{typing, DType, Op, Scalar, ScanOp};

impl Tensor {
    /// For an empty tensor: `dim` is checked and the result is the tensor itself
    /// (a new node of its dtype and shape), as PyTorch returns without running the
    /// kernel. `None` for a non-empty tensor.
    pub(crate) fn empty_along(&self, dim: isize) -> Result<Option<Tensor>> {
        if self.numel() != 0 {
            return Ok(None);
        }
        wrap_dim(dim, self.ndim())?;
        let shape = self.shape();
        with_store(|s| {
            let node = self.node_as(s, self.dtype(), &shape)?;
            Ok(Some(Tensor::from_node(s, node)))
        })
    }

    fn scan(&self, op: ScanOp, dim: isize) -> Result<Tensor> {
        let sig = typing::scan(op, self.dtype())?;
        self.along_dim(dim, sig, |axis| Op::Scan { op, axis })
    }

    /// Inclusive running product along `dim`; bool and integers multiply into `int64`
    /// (wrapping); float16/bfloat16 keep a float32 running product.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1u8, 2, 3, 4], &[2, 2]).unwrap();
    /// assert_eq!(t.cumprod(1).unwrap().to_vec::<i64>().unwrap(), vec![1, 2, 3, 12]);
    /// ```
    pub fn cumprod(&self, dim: isize) -> Result<Tensor> {
        self.scan(ScanOp::Cumprod, dim)
    }

    /// Running `log(sum(exp(x)))` along `dim`; floating and complex inputs only.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f64, 0.0], &[2]).unwrap();
    /// let v = t.logcumsumexp(0).unwrap().to_vec::<f64>().unwrap();
    /// assert_eq!(v[0], 0.0);
    /// assert!((v[1] - 2f64.ln()).abs() < 1e-15);
    /// ```
    pub fn logcumsumexp(&self, dim: isize) -> Result<Tensor> {
        self.scan(ScanOp::LogCumSumExp, dim)
    }

    /// `(values, indices)` of the running maximum along `dim`. Ties move the index to
    /// the later element; a NaN propagates and each further NaN takes the index, as
    /// in PyTorch. Complex is refused (unless the tensor is empty).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1i32, 3, 3, 2], &[4]).unwrap();
    /// let (v, i) = t.cummax(0).unwrap();
    /// assert_eq!(v.to_vec::<i32>().unwrap(), vec![1, 3, 3, 3]);
    /// assert_eq!(i.to_vec::<i64>().unwrap(), vec![0, 1, 2, 2]);
    /// ```
    pub fn cummax(&self, dim: isize) -> Result<(Tensor, Tensor)> {
        self.running_extreme(ScanOp::Cummax, ScanOp::CummaxIndices, dim)
    }

    /// `(values, indices)` of the running minimum along `dim` (see [`Tensor::cummax`]).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![2.0f32, 1.0, f32::NAN, 0.0], &[4]).unwrap();
    /// let (v, i) = t.cummin(0).unwrap();
    /// assert_eq!(i.to_vec::<i64>().unwrap(), vec![0, 1, 2, 2]);
    /// assert!(v.to_vec::<f32>().unwrap()[3].is_nan());
    /// ```
    pub fn cummin(&self, dim: isize) -> Result<(Tensor, Tensor)> {
        self.running_extreme(ScanOp::Cummin, ScanOp::CumminIndices, dim)
    }

    fn running_extreme(
        &self,
        values: ScanOp,
        indices: ScanOp,
        dim: isize,
    ) -> Result<(Tensor, Tensor)> {
        // PyTorch runs no kernel on an empty or zero-dim input: the values are the
        // input and the indices 0, whatever the dtype.
        let trivial = if self.ndim() == 0 {
            if dim != 0 && dim != -1 {
                let name = if values == ScanOp::Cummax {
                    "cummax"
                } else {
                    "cummin"
                };
                return Err(lazyfuse_ir::Error::invalid(
                    name,
                    format!("{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}"),
                )
                .into());
            }
            let shape = self.shape();
            Some(with_store(|s| {
                let node = self.node_as(s, self.dtype(), &shape)?;
                Ok::<_, crate::Error>(Tensor::from_node(s, node))
            })?)
        } else {
            self.empty_along(dim)?
        };
        if let Some(empty) = trivial {
            let shape = self.shape();
            let idx = with_store(|s| {
                let node = s.add(Op::Full(Scalar::Int(0)), DType::I64, shape, &[]);
                s.set_device(node, self.device());
                Tensor::from_node(s, node)
            });
            return Ok((empty, idx));
        }
        Ok((self.scan(values, dim)?, self.scan(indices, dim)?))
    }
}
