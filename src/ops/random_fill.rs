//! In-place random fills, for initializing parameters: `uniform_` and `normal_`
//! (PyTorch's `Tensor.uniform_`/`normal_`, which `torch.nn.init` calls under
//! `no_grad`), drawn from the global Philox generator like `rand`/`randn`.

use crate::{Result, Tensor};
use lazyfuse_ir::Error as IrError;

impl Tensor {
    /// Fills `self` with values uniform in `[from, to)`, as PyTorch's
    /// `uniform_(from, to)`: floating dtypes only, `from <= to`. Like every
    /// in-place op, a leaf that requires grad takes it only under `no_grad`.
    ///
    /// ```
    /// use lazyfuse::{manual_seed, DType, Tensor};
    /// manual_seed(0);
    /// let w = Tensor::zeros(&[100], DType::F32);
    /// w.uniform_(-0.5, 0.5)?;
    /// assert!(w.to_vec::<f32>()?.iter().all(|v| (-0.5..0.5).contains(v)));
    /// assert!(w.uniform_(1.0, 0.0).is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn uniform_(&self, from: f64, to: f64) -> Result<()> {
        let dtype = self.dtype();
        if !dtype.is_floating_point() {
            return Err(IrError::not_implemented("check_uniform_bounds", dtype).into());
        }
        if from > to {
            return Err(IrError::invalid(
                "uniform_",
                format!("uniform_ expects to return a [from, to) range, but found from={from} > to={to}"),
            )
            .into());
        }
        let u = Tensor::rand_on(&self.shape(), dtype, self.device())?;
        self.copy_(&u.mul(to - from)?.add(from)?)
    }

    /// Fills `self` with normal values of mean `mean` and standard deviation
    /// `std`, as PyTorch's `normal_(mean, std)`: floating dtypes only, `std >= 0`.
    ///
    /// ```
    /// use lazyfuse::{manual_seed, DType, Tensor};
    /// manual_seed(0);
    /// let w = Tensor::zeros(&[1000], DType::F32);
    /// w.normal_(3.0, 0.1)?;
    /// let mean = w.mean(&[], false)?.to_vec::<f32>()?[0];
    /// assert!((mean - 3.0).abs() < 0.05);
    /// assert!(w.normal_(0.0, -1.0).is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn normal_(&self, mean: f64, std: f64) -> Result<()> {
        let dtype = self.dtype();
        if !dtype.is_floating_point() {
            return Err(IrError::not_implemented("normal_kernel_cpu", dtype).into());
        }
        if std < 0.0 {
            return Err(IrError::invalid(
                "normal_",
                format!("normal expects std >= 0.0, but found std {std}"),
            )
            .into());
        }
        let z = Tensor::randn_on(&self.shape(), dtype, self.device())?;
        self.copy_(&z.mul(std)?.add(mean)?)
    }
}
