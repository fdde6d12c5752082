//! More reductions: `nansum`, `nanmean`, `any`, `all`, `logsumexp`, `count_nonzero`,
//! `norm`, `max`/`min` (over everything, or along a dim with indices), `aminmax`,
//! `var_mean` and `std_mean`.
//!
//! Each is one `Reduce` node (the tuple results are one node per output, reading the
//! same input), with the dims/keepdim conventions of [`Tensor::sum`]: `dims = []`
//! reduces every dim. Dtype rules and refusals are PyTorch's (`lazyfuse_ir::typing`).

use super::reduce::{empty_full_reduction, reduced_shape};
use crate::autograd::record::Custom;
use crate::error::Result;
use crate::store::with_store;
use crate::tensor::Tensor;
use lazyfuse_ir::shape::wrap_dim;
use lazyfuse_ir::{typing, ArgReduceOp, DType, Error as IrError, NormOrd, Op, ReduceOp};

fn invalid(name: &str, message: String) -> crate::Error {
    IrError::invalid(name, message).into()
}

impl Tensor {
    /// Sum over `dims` (`[]` = all) treating NaN as zero; bool and integers sum into
    /// `int64`; complex is refused (as by PyTorch on the CPU).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32, f32::NAN, 2.0, 4.0], &[2, 2]).unwrap();
    /// assert_eq!(t.nansum(&[1], false).unwrap().to_vec::<f32>().unwrap(), vec![1.0, 6.0]);
    /// assert_eq!(t.nansum(&[], false).unwrap().to_vec::<f32>().unwrap(), vec![7.0]);
    /// ```
    pub fn nansum(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce("nansum", ReduceOp::NanSum, dims, keepdim)
    }

    /// Mean of the non-NaN elements over `dims` (`[]` = all); NaN where all are NaN.
    /// Floating inputs only.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f64, f64::NAN, 3.0], &[3]).unwrap();
    /// assert_eq!(t.nanmean(&[], false).unwrap().to_vec::<f64>().unwrap(), vec![2.0]);
    /// assert!(Tensor::from_vec(vec![1i32], &[1]).unwrap().nanmean(&[], false).is_err());
    /// ```
    pub fn nanmean(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce("nanmean", ReduceOp::NanMean, dims, keepdim)
    }

    /// Whether any element over `dims` (`[]` = all) is nonzero (NaN is nonzero).
    /// The result is `bool`, or `uint8` for a `uint8` input, as in PyTorch.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::from_vec(vec![0.0f32, f32::NAN, 0.0, 0.0], &[2, 2]).unwrap();
    /// assert_eq!(t.any(&[1], false).unwrap().to_vec::<bool>().unwrap(), vec![true, false]);
    /// let u = Tensor::from_vec(vec![0u8, 7], &[2]).unwrap();
    /// assert_eq!(u.any(&[], false).unwrap().dtype(), DType::U8);
    /// ```
    pub fn any(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce("any", ReduceOp::Any, dims, keepdim)
    }

    /// Whether every element over `dims` (`[]` = all) is nonzero; `true` for an
    /// empty reduction. The result is `bool`, or `uint8` for a `uint8` input.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::from_vec(vec![1i64, 2, 0, 3], &[2, 2]).unwrap();
    /// assert_eq!(t.all(&[1], false).unwrap().to_vec::<bool>().unwrap(), vec![true, false]);
    /// let empty = Tensor::zeros(&[0], DType::F32);
    /// assert_eq!(empty.all(&[], false).unwrap().to_vec::<bool>().unwrap(), vec![true]);
    /// ```
    pub fn all(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce("all", ReduceOp::All, dims, keepdim)
    }

    /// `log(sum(exp(x)))` over `dims` (`[]` = all), computed stably around the
    /// maximum; bool and integers give the default float dtype. An empty reduction
    /// gives `-inf`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1000.0f64, 1000.0], &[2]).unwrap();
    /// let v = t.logsumexp(&[0], false).unwrap().to_vec::<f64>().unwrap();
    /// assert!((v[0] - (1000.0 + 2f64.ln())).abs() < 1e-9);
    /// ```
    pub fn logsumexp(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce("logsumexp", ReduceOp::LogSumExp, dims, keepdim)
    }

    /// The number of nonzero elements over `dims` (`[]` = all), as `int64`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0i32, 1, 2, 3], &[2, 2]).unwrap();
    /// assert_eq!(t.count_nonzero(&[1]).unwrap().to_vec::<i64>().unwrap(), vec![1, 2]);
    /// assert_eq!(t.count_nonzero(&[]).unwrap().to_vec::<i64>().unwrap(), vec![3]);
    /// ```
    pub fn count_nonzero(&self, dims: &[isize]) -> Result<Tensor> {
        self.reduce("count_nonzero", ReduceOp::CountNonzero, dims, false)
    }

    /// The vector `p`-norm over `dims` (`[]` = all), PyTorch's
    /// `torch.linalg.vector_norm(x, p, dims, keepdim)`: `p = 2` is also `torch.norm`'s
    /// default and its `"fro"`; `p = 1` sums magnitudes; `p = ±inf` takes the largest
    /// (smallest) magnitude; `p = 0` counts nonzero elements. Floating and complex
    /// inputs only; complex gives the real dtype.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![3.0f32, -4.0], &[2]).unwrap();
    /// assert_eq!(t.norm(2.0, &[], false).unwrap().to_vec::<f32>().unwrap(), vec![5.0]);
    /// assert_eq!(t.norm(1.0, &[], false).unwrap().to_vec::<f32>().unwrap(), vec![7.0]);
    /// assert_eq!(t.norm(f64::INFINITY, &[], false).unwrap().to_vec::<f32>().unwrap(), vec![4.0]);
    /// ```
    pub fn norm(&self, p: f64, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        let op = ReduceOp::Norm {
            ord: NormOrd::new(p),
        };
        typing::reduce(op, self.dtype(), crate::default_dtype())?;
        // Norms without an identity (p < 0, inf) refuse empty reductions.
        if (p < 0.0 || p == f64::INFINITY) && self.numel() == 0 {
            let ord = NormOrd::new(p);
            let shape = self.shape();
            if dims.is_empty() {
                return Err(invalid(
                    "linalg.vector_norm",
                    format!("linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the operation does not have an identity"),
                ));
            }
            for &d in dims {
                let a = wrap_dim(d, shape.len())?;
                if shape.get(a) == Some(&0) {
                    return Err(invalid(
                        "linalg.vector_norm",
                        format!("linalg.vector_norm cannot compute the {ord} norm on the dimension {d}because this dimension is empty and the operation does not have an identity"),
                    ));
                }
            }
        }
        self.reduce("norm", op, dims, keepdim)
    }

    /// The maximum of all elements (PyTorch's `max()` without a dim); NaN
    /// propagates. An empty tensor is refused, as in PyTorch.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1i32, 5, 3], &[3]).unwrap();
    /// assert_eq!(t.max().unwrap().to_vec::<i32>().unwrap(), vec![5]);
    /// ```
    pub fn max(&self) -> Result<Tensor> {
        self.extreme_all("max", ReduceOp::Amax)
    }

    /// The minimum of all elements (PyTorch's `min()` without a dim); NaN propagates.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32, -5.0, 3.0], &[3]).unwrap();
    /// assert_eq!(t.min().unwrap().to_vec::<f32>().unwrap(), vec![-5.0]);
    /// ```
    pub fn min(&self) -> Result<Tensor> {
        self.extreme_all("min", ReduceOp::Amin)
    }

    fn extreme_all(&self, name: &str, op: ReduceOp) -> Result<Tensor> {
        if self.numel() == 0 {
            return Err(invalid(name, empty_full_reduction(name)));
        }
        typing::max_min(name, false, self.dtype())?;
        self.reduce(name, op, &[], false)
    }

    /// `(values, indices)` of the maximum along `dim` (PyTorch's `max(dim, keepdim)`):
    /// the first index on ties; NaN counts as the maximum (its first occurrence).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32, 7.0, 7.0, 2.0, f32::NAN, 0.0], &[2, 3]).unwrap();
    /// let (v, i) = t.max_dim(1, false).unwrap();
    /// assert_eq!(i.to_vec::<i64>().unwrap(), vec![1, 1]);
    /// assert!(v.to_vec::<f32>().unwrap()[1].is_nan());
    /// ```
    pub fn max_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        self.extreme_dim("max", dim, keepdim)
    }

    /// `(values, indices)` of the minimum along `dim` (PyTorch's `min(dim, keepdim)`):
    /// the first index on ties; NaN counts as the minimum.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![3i64, 1, 1], &[3]).unwrap();
    /// let (v, i) = t.min_dim(0, true).unwrap();
    /// assert_eq!((v.to_vec::<i64>().unwrap(), i.to_vec::<i64>().unwrap()), (vec![1], vec![1]));
    /// assert_eq!(i.shape(), vec![1]);
    /// ```
    pub fn min_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        self.extreme_dim("min", dim, keepdim)
    }

    fn extreme_dim(&self, name: &str, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let shape = self.shape();
        let axis = wrap_dim(dim, shape.len())?;
        if shape.get(axis) == Some(&0) {
            return Err(invalid(
                name,
                format!("{name}(): Expected reduction dim {axis} to have non-zero size."),
            ));
        }
        typing::max_min(name, true, self.dtype())?;
        let (op, arg) = if name == "max" {
            (ReduceOp::Amax, ArgReduceOp::ArgMax)
        } else {
            (ReduceOp::Amin, ArgReduceOp::ArgMin)
        };
        let values = self.reduce(name, op, &[dim], keepdim)?;
        let indices = self.arg_node(arg, axis, keepdim)?;
        // the gradient goes to the returned index, not to every tie
        with_store(|s| {
            let v = values.0.storage.node();
            if s.records.contains(v) {
                let x = self.node(s);
                let custom = Custom::ArgExtreme {
                    op: arg,
                    axis,
                    keepdim,
                };
                s.custom_rule(v, custom, vec![x]);
            }
        });
        Ok((values, indices))
    }

    /// The `ArgReduce` node along `axis`, without `argmax`'s dtype refusals (`max`
    /// with a dim accepts bool). A zero-dim input has one element at index 0.
    fn arg_node(&self, op: ArgReduceOp, axis: usize, keepdim: bool) -> Result<Tensor> {
        let shape = self.shape();
        let (axis, out_shape) = if shape.is_empty() {
            (None, Vec::new())
        } else {
            (Some(axis), reduced_shape(&shape, &[axis], keepdim))
        };
        with_store(|s| {
            let input = self.node(s);
            let node = s.add(
                Op::ArgReduce { op, axis, keepdim },
                DType::I64,
                out_shape,
                &[input],
            );
            Ok(Tensor::from_node(s, node))
        })
    }

    /// `(min, max)` over `dim` (`None`: over all elements), PyTorch's `aminmax`;
    /// NaN propagates; complex is refused.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32, 5.0, -1.0, 0.0], &[2, 2]).unwrap();
    /// let (lo, hi) = t.aminmax(Some(1), false).unwrap();
    /// assert_eq!(lo.to_vec::<f32>().unwrap(), vec![1.0, -1.0]);
    /// assert_eq!(hi.to_vec::<f32>().unwrap(), vec![5.0, 0.0]);
    /// ```
    pub fn aminmax(&self, dim: Option<isize>, keepdim: bool) -> Result<(Tensor, Tensor)> {
        typing::aminmax(self.dtype())?;
        let shape = self.shape();
        let dims: Vec<isize> = dim.into_iter().collect();
        match dim {
            None if self.numel() == 0 => {
                return Err(invalid(
                    "aminmax",
                    "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.".into(),
                ));
            }
            Some(d) => {
                let a = wrap_dim(d, shape.len())?;
                if shape.get(a) == Some(&0) {
                    return Err(invalid(
                        "aminmax",
                        format!("aminmax: Expected reduction dim {a} to have non-zero size."),
                    ));
                }
            }
            None => {}
        }
        let lo = self.reduce("aminmax", ReduceOp::Amin, &dims, keepdim)?;
        let hi = self.reduce("aminmax", ReduceOp::Amax, &dims, keepdim)?;
        Ok((lo, hi))
    }

    /// `(var, mean)` over `dims` (`[]` = all) with divisor `N - correction`, as
    /// PyTorch's `var_mean`; complex inputs give a real variance and a complex mean.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[4]).unwrap();
    /// let (v, m) = t.var_mean(&[], 0, false).unwrap();
    /// assert_eq!((v.to_vec::<f64>().unwrap(), m.to_vec::<f64>().unwrap()), (vec![1.25], vec![2.5]));
    /// ```
    pub fn var_mean(
        &self,
        dims: &[isize],
        correction: i64,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        typing::moments("var_mean", self.dtype())?;
        let var = self.reduce("var_mean", ReduceOp::Var { correction }, dims, keepdim)?;
        let mean = self.reduce("var_mean", ReduceOp::RunningMean, dims, keepdim)?;
        Ok((var, mean))
    }

    /// `(std, mean)` over `dims` (`[]` = all) with divisor `N - correction`, as
    /// PyTorch's `std_mean`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f64, 3.0], &[2]).unwrap();
    /// let (s, m) = t.std_mean(&[0], 0, true).unwrap();
    /// assert_eq!((s.to_vec::<f64>().unwrap(), m.to_vec::<f64>().unwrap()), (vec![1.0], vec![2.0]));
    /// ```
    pub fn std_mean(
        &self,
        dims: &[isize],
        correction: i64,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        typing::moments("std_mean", self.dtype())?;
        let std = self.reduce("std_mean", ReduceOp::Std { correction }, dims, keepdim)?;
        let mean = self.reduce("std_mean", ReduceOp::RunningMean, dims, keepdim)?;
        Ok((std, mean))
    }
}
