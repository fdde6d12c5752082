//! Reductions (`sum`, `prod`, `mean`, `amax`, `amin`, `var`, `std`, `argmax`,
//! `argmin`) and the scans and normalisations along one dim (`cumsum`, `softmax`,
//! `log_softmax`).

use crate::default_dtype;
use crate::error::Result;
use crate::store::with_store;
use crate::tensor::Tensor;
use lazyfuse_ir::shape::wrap_dim;
use lazyfuse_ir::{typing, ArgReduceOp, Error as IrError, Op, ReduceOp, Scalar};

/// The sorted, unique axes a dim list names (`[]` = all dims), with PyTorch's
/// duplicate-dim error.
pub(crate) fn reduction_axes(op: &str, dims: &[isize], ndim: usize) -> Result<Vec<usize>> {
    if dims.is_empty() {
        return Ok((0..ndim).collect());
    }
    let mut axes = Vec::with_capacity(dims.len());
    for &d in dims {
        let a = wrap_dim(d, ndim)?;
        if axes.contains(&a) {
            return Err(IrError::invalid(
                op,
                format!("dim {a} appears multiple times in the list of dims"),
            )
            .into());
        }
        axes.push(a);
    }
    // A zero-dim tensor accepts dim 0/-1 but has no axis to reduce.
    axes.retain(|&a| a < ndim);
    axes.sort_unstable();
    Ok(axes)
}

pub(crate) fn reduced_shape(shape: &[usize], axes: &[usize], keepdim: bool) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .filter_map(|(i, &s)| match (axes.contains(&i), keepdim) {
            (false, _) => Some(s),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

/// PyTorch's refusal of a full `amax`/`amin`/`max`/`min` of an empty tensor.
pub(crate) fn empty_full_reduction(name: &str) -> String {
    format!("{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.")
}

impl Tensor {
    pub(crate) fn reduce(
        &self,
        name: &str,
        op: ReduceOp,
        dims: &[isize],
        keepdim: bool,
    ) -> Result<Tensor> {
        self.check_size()?;
        if matches!(op, ReduceOp::Amax | ReduceOp::Amin) && dims.is_empty() && self.numel() == 0 {
            // PyTorch checks this before the dtype (an empty complex tensor gets it too).
            return Err(IrError::invalid(name, empty_full_reduction(name)).into());
        }
        let shape = self.shape();
        let axes = reduction_axes(name, dims, shape.len())?;
        let extreme = matches!(op, ReduceOp::Amax | ReduceOp::Amin);
        if extreme {
            if let Some(&a) = axes.iter().find(|&&a| shape[a] == 0) {
                return Err(IrError::invalid(
                    name,
                    format!("{name}(): Expected reduction dim {a} to have non-zero size."),
                )
                .into());
            }
        }
        let out_shape = reduced_shape(&shape, &axes, keepdim);
        if extreme && self.numel() == 0 && self.dtype().is_complex() {
            // PyTorch runs no kernel for an empty result, so its complex refusal
            // does not fire either: the result is empty, of the input dtype.
            return with_store(|s| {
                let node = s.add(Op::Full(Scalar::Int(0)), self.dtype(), out_shape, &[]);
                s.set_device(node, self.device());
                Ok(Tensor::from_node(s, node))
            });
        }
        let sig = typing::reduce(op, self.dtype(), default_dtype())?;
        with_store(|s| {
            let input = self.node_as(s, sig.compute, &shape)?;
            let node = s.add(
                Op::Reduce { op, axes, keepdim },
                sig.output,
                out_shape,
                &[input],
            );
            Ok(Tensor::from_node(s, node))
        })
    }

    /// Sum over `dims` (`[]` = all); bool and integers sum into `int64`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1i32, 2, 3, 4], &[2, 2]).unwrap();
    /// assert_eq!(t.sum(&[1], false).unwrap().to_vec::<i64>().unwrap(), vec![3, 7]);
    /// assert_eq!(t.sum(&[], false).unwrap().to_vec::<i64>().unwrap(), vec![10]);
    /// ```
    pub fn sum(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce("sum", ReduceOp::Sum, dims, keepdim)
    }

    /// Product over `dims` (`[]` = all); bool and integers multiply into `int64`.
    /// (PyTorch's `prod` takes one dim; several are accepted here, like `sum`.)
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1u8, 2, 3, 4], &[2, 2]).unwrap();
    /// assert_eq!(t.prod(&[0], false).unwrap().to_vec::<i64>().unwrap(), vec![3, 8]);
    /// assert_eq!(t.prod(&[], false).unwrap().to_vec::<i64>().unwrap(), vec![24]);
    /// ```
    pub fn prod(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce("prod", ReduceOp::Prod, dims, keepdim)
    }

    /// Mean over `dims` (`[]` = all); floating and complex inputs only.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    /// assert_eq!(t.mean(&[1], false).unwrap().to_vec::<f32>().unwrap(), vec![1.5, 3.5]);
    /// assert_eq!(t.mean(&[], true).unwrap().shape(), vec![1, 1]);
    /// assert!(Tensor::from_vec(vec![1i64], &[1]).unwrap().mean(&[], false).is_err());
    /// ```
    pub fn mean(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce("mean", ReduceOp::Mean, dims, keepdim)
    }

    /// Maximum over `dims` (`[]` = all); NaN propagates.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1i32, 5, 3, 2], &[2, 2]).unwrap();
    /// assert_eq!(t.amax(&[0], false).unwrap().to_vec::<i32>().unwrap(), vec![3, 5]);
    /// let n = Tensor::from_vec(vec![1.0f32, f32::NAN], &[2]).unwrap();
    /// assert!(n.amax(&[], false).unwrap().to_vec::<f32>().unwrap()[0].is_nan());
    /// ```
    pub fn amax(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce("amax", ReduceOp::Amax, dims, keepdim)
    }

    /// Minimum over `dims` (`[]` = all); NaN propagates.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1i32, 5, 3, 2], &[2, 2]).unwrap();
    /// let m = t.amin(&[1], true).unwrap();
    /// assert_eq!((m.shape(), m.to_vec::<i32>().unwrap()), (vec![2, 1], vec![1, 2]));
    /// ```
    pub fn amin(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce("amin", ReduceOp::Amin, dims, keepdim)
    }

    /// Variance over `dims` (`[]` = all) with divisor `N - correction`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[4]).unwrap();
    /// assert_eq!(t.var(&[], 1, false).unwrap().to_vec::<f64>().unwrap(), vec![5.0 / 3.0]);
    /// ```
    pub fn var(&self, dims: &[isize], correction: i64, keepdim: bool) -> Result<Tensor> {
        self.reduce("var", ReduceOp::Var { correction }, dims, keepdim)
    }

    /// Standard deviation over `dims` (`[]` = all) with divisor `N - correction`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f64, 3.0], &[2]).unwrap();
    /// assert_eq!(t.std(&[], 0, false).unwrap().to_vec::<f64>().unwrap(), vec![1.0]);
    /// assert_eq!(t.std(&[], 1, false).unwrap().to_vec::<f64>().unwrap(), vec![2f64.sqrt()]);
    /// ```
    pub fn std(&self, dims: &[isize], correction: i64, keepdim: bool) -> Result<Tensor> {
        self.reduce("std", ReduceOp::Std { correction }, dims, keepdim)
    }

    fn arg_reduce(&self, op: ArgReduceOp, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        let name = match op {
            ArgReduceOp::ArgMax => "argmax",
            ArgReduceOp::ArgMin => "argmin",
        };
        typing::arg_reduce(op, self.dtype())?;
        let shape = self.shape();
        let (axis, out_shape) = match dim {
            None => {
                if self.numel() == 0 {
                    return Err(IrError::invalid(
                        name,
                        format!("{name}(): Expected reduction dim to be specified for input.numel() == 0."),
                    )
                    .into());
                }
                let out = if keepdim {
                    vec![1; shape.len()]
                } else {
                    Vec::new()
                };
                (None, out)
            }
            Some(d) => {
                let a = wrap_dim(d, shape.len())?;
                if shape.is_empty() {
                    (None, Vec::new())
                } else {
                    if shape[a] == 0 {
                        return Err(IrError::invalid(
                            name,
                            format!("{name}(): Expected reduction dim {a} to have non-zero size."),
                        )
                        .into());
                    }
                    (Some(a), reduced_shape(&shape, &[a], keepdim))
                }
            }
        };
        with_store(|s| {
            let input = self.node(s);
            let node = s.add(
                Op::ArgReduce { op, axis, keepdim },
                lazyfuse_ir::DType::I64,
                out_shape,
                &[input],
            );
            Ok(Tensor::from_node(s, node))
        })
    }

    /// Index of the maximum along `dim` (`None`: into the flattened tensor); the
    /// first on ties; NaN counts as the maximum.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32, 3.0, 3.0, 0.0], &[2, 2]).unwrap();
    /// assert_eq!(t.argmax(None, false).unwrap().to_vec::<i64>().unwrap(), vec![1]);
    /// assert_eq!(t.argmax(Some(0), false).unwrap().to_vec::<i64>().unwrap(), vec![1, 0]);
    /// ```
    pub fn argmax(&self, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        self.arg_reduce(ArgReduceOp::ArgMax, dim, keepdim)
    }

    /// Index of the minimum along `dim` (`None`: into the flattened tensor); the
    /// first on ties; NaN counts as the minimum.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![2i32, 1, 1, 5], &[2, 2]).unwrap();
    /// assert_eq!(t.argmin(None, false).unwrap().to_vec::<i64>().unwrap(), vec![1]); // first tie
    /// assert_eq!(t.argmin(Some(1), true).unwrap().to_vec::<i64>().unwrap(), vec![1, 0]);
    /// let n = Tensor::from_vec(vec![1.0f32, f32::NAN], &[2]).unwrap();
    /// assert_eq!(n.argmin(None, false).unwrap().to_vec::<i64>().unwrap(), vec![1]);
    /// ```
    pub fn argmin(&self, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        self.arg_reduce(ArgReduceOp::ArgMin, dim, keepdim)
    }

    /// Whether `dim` names the last dim (PyTorch's softmax errors name a different
    /// kernel otherwise); out-of-range dims are reported later by `wrap_dim`.
    fn is_last_dim(&self, dim: isize) -> bool {
        wrap_dim(dim, self.ndim()).is_ok_and(|d| d + 1 >= self.ndim())
    }

    pub(crate) fn along_dim(
        &self,
        dim: isize,
        sig: typing::Signature,
        op: impl FnOnce(usize) -> Op,
    ) -> Result<Tensor> {
        let shape = self.shape();
        let axis = wrap_dim(dim, shape.len())?;
        if shape.is_empty() {
            // A zero-dim tensor is one element along its "dim": no axis to scan.
            return with_store(|s| {
                let input = self.node_as(s, sig.compute, &[1])?;
                let node = s.add(op(0), sig.output, vec![1], &[input]);
                let back = s.view_node(node, &lazyfuse_ir::Layout::contiguous(&[]));
                Ok(Tensor::from_node(s, back))
            });
        }
        with_store(|s| {
            let input = self.node_as(s, sig.compute, &shape)?;
            let node = s.add(op(axis), sig.output, shape, &[input]);
            Ok(Tensor::from_node(s, node))
        })
    }

    /// Inclusive prefix sum along `dim`; bool and integers sum into `int64`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1u8, 2, 3], &[3]).unwrap();
    /// assert_eq!(t.cumsum(0).unwrap().to_vec::<i64>().unwrap(), vec![1, 3, 6]);
    /// ```
    pub fn cumsum(&self, dim: isize) -> Result<Tensor> {
        let sig = typing::cumsum(self.dtype())?;
        self.along_dim(dim, sig, |axis| Op::Cumsum { axis })
    }

    /// Softmax along `dim` (floating inputs only).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f64, 0.0], &[2]).unwrap();
    /// assert_eq!(t.softmax(-1).unwrap().to_vec::<f64>().unwrap(), vec![0.5, 0.5]);
    /// ```
    pub fn softmax(&self, dim: isize) -> Result<Tensor> {
        if let Some(empty) = self.empty_along(dim)? {
            return Ok(empty);
        }
        let sig = typing::softmax_along(self.dtype(), false, self.is_last_dim(dim))?;
        self.along_dim(dim, sig, |axis| Op::Softmax { axis, log: false })
    }

    /// Log-softmax along `dim` (floating inputs only).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f64, 0.0], &[2]).unwrap();
    /// assert_eq!(t.log_softmax(-1).unwrap().to_vec::<f64>().unwrap(), vec![-2f64.ln(); 2]);
    /// assert!(Tensor::from_vec(vec![1i64], &[1]).unwrap().log_softmax(0).is_err());
    /// ```
    pub fn log_softmax(&self, dim: isize) -> Result<Tensor> {
        if let Some(empty) = self.empty_along(dim)? {
            return Ok(empty);
        }
        let sig = typing::softmax_along(self.dtype(), true, self.is_last_dim(dim))?;
        self.along_dim(dim, sig, |axis| Op::Softmax { axis, log: true })
    }
}
