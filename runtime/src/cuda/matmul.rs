//! Matmul on device-resident buffers through cuBLAS's strided batched GEMM, for
//! float32, float64, float16 and bfloat16 (the latter two accumulate in float32, as
//! PyTorch's CUDA matmul does).
//!
//! Row-major products through a column-major library: `C = A B` with `A` `[M, K]`,
//! `B` `[K, N]` and `C` `[M, N]` row-major is `Cᵀ = Bᵀ Aᵀ` column-major, and a
//! row-major matrix read column-major is its transpose; so the call is a plain
//! (untransposed) GEMM of `B` (`N x K`, leading dim `N`) by `A` (`K x M`, leading dim
//! `K`) into `C` (`N x M`, leading dim `N`).

use super::blas::{handles, MatmulDims};
use super::cuda_err;
use super::device::{CudaDevice, DeviceBuffer};
use crate::error::{Error, Result};
use cudarc::cublas::sys as blas_sys;
use cudarc::cublas::{Gemm, GemmConfig, StridedBatchedConfig};
use lazyfuse_ir::DType;
use std::ffi::c_int;

impl CudaDevice {
    /// `out = a @ b` for contiguous row-major `a` `[batch, m, k]` and `b`
    /// `[batch, k, n]` of `dtype` into `out` `[batch, m, n]`, through cuBLAS, queued on
    /// the device's stream.
    ///
    /// # Errors
    /// cuBLAS missing (see [`cublas_version`](super::blas::cublas_version)), a dtype it does not take, buffers
    /// smaller than the sizes say, a size past `i32`, or the library's error.
    pub fn matmul(
        &self,
        dtype: DType,
        a: &DeviceBuffer,
        b: &DeviceBuffer,
        out: &mut DeviceBuffer,
        d: MatmulDims,
    ) -> Result<()> {
        let size = dtype.size_in_bytes();
        let need = |rows: usize, cols: usize| {
            d.batch
                .checked_mul(rows)
                .and_then(|x| x.checked_mul(cols))
                .and_then(|x| x.checked_mul(size))
        };
        let fits =
            |buf: &DeviceBuffer, rows, cols| need(rows, cols).is_some_and(|n| n <= buf.len());
        if !handles(dtype) || !fits(a, d.m, d.k) || !fits(b, d.k, d.n) || !fits(out, d.m, d.n) {
            return Err(Error::Malformed(format!(
                "cuBLAS matmul of {dtype} {d:?} on buffers of {}, {} and {} bytes",
                a.len(),
                b.len(),
                out.len()
            )));
        }
        let int = |v: usize| {
            c_int::try_from(v)
                .map_err(|_| Error::Cuda(format!("cuBLAS matmul: size {v} exceeds int32")))
        };
        let long = |v: usize| {
            i64::try_from(v)
                .map_err(|_| Error::Cuda(format!("cuBLAS matmul: stride {v} exceeds int64")))
        };
        if d.batch == 0 || d.m == 0 || d.n == 0 {
            return Ok(());
        }
        if d.k == 0 {
            // An empty contraction is zeros; cuBLAS would only scale `out` by beta.
            return self.fill_zero(out);
        }
        let (m, n, k) = (int(d.m)?, int(d.n)?, int(d.k)?);
        let batch = int(d.batch)?;
        let (sa, sb, sc) = (long(d.k * d.n)?, long(d.m * d.k)?, long(d.m * d.n)?);
        let blas = self.blas()?;
        let (elems_a, elems_b, elems_c) = (
            d.batch * d.k * d.n,
            d.batch * d.m * d.k,
            d.batch * d.m * d.n,
        );
        macro_rules! gemm {
            ($t:ty, $one:expr, $zero:expr) => {{
                let cfg = StridedBatchedConfig {
                    gemm: GemmConfig {
                        transa: blas_sys::cublasOperation_t::CUBLAS_OP_N,
                        transb: blas_sys::cublasOperation_t::CUBLAS_OP_N,
                        m: n,
                        n: m,
                        k,
                        alpha: $one,
                        lda: n,
                        ldb: k,
                        beta: $zero,
                        ldc: n,
                    },
                    batch_size: batch,
                    stride_a: sa,
                    stride_b: sb,
                    stride_c: sc,
                };
                // SAFETY: each view covers exactly the elements the call reads or
                // writes (checked above against the buffers' byte lengths: `b` holds
                // `batch * k * n`, `a` `batch * m * k`, `out` `batch * m * n` elements
                // of `$t`), every byte pattern is a valid value of these float types,
                // and the buffers belong to this device (`slice_views` checks). The
                // configuration is the column-major form of the row-major product
                // (module doc): leading dims and strides match the views' extents.
                unsafe {
                    let (bv, av, mut cv) =
                        self.slice_views::<$t>(b, elems_a, a, elems_b, out, elems_c)?;
                    blas.0
                        .gemm_strided_batched(cfg, &bv, &av, &mut cv)
                        .map_err(|e| cuda_err("cublasGemmStridedBatched", e))
                }
            }};
        }
        match dtype {
            DType::F32 => gemm!(f32, 1.0f32, 0.0f32),
            DType::F64 => gemm!(f64, 1.0f64, 0.0f64),
            DType::F16 => gemm!(half::f16, half::f16::ONE, half::f16::ZERO),
            DType::BF16 => gemm!(half::bf16, half::bf16::ONE, half::bf16::ZERO),
            _ => unreachable!("checked by `handles`"),
        }
    }
}
