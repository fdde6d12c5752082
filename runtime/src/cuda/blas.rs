//! Matmul through cuBLAS on device-resident buffers: the library's strided batched
//! GEMM for float32, float64, float16 and bfloat16 (the latter two accumulate in
//! float32, as PyTorch's CUDA matmul does).
//!
//! `libcublas.so.13` is loaded at run time like NVRTC, probed before cudarc is asked
//! for a symbol (cudarc panics on a missing library). Where it is missing, or
//! `LAZYFUSE_CUBLAS=0` turns it off, float matmul on a device is a generated kernel
//! instead (`lazyfuse_ir::schedule::ScheduleOptions::library_float_matmul` is off),
//! with one line saying why under `LAZYFUSE_DEBUG`.
//!
//! Row-major products through a column-major library: `C = A B` with `A` `[M, K]`,
//! `B` `[K, N]` and `C` `[M, N]` row-major is `Cᵀ = Bᵀ Aᵀ` column-major, and a
//! row-major matrix read column-major is its transpose; so the call is a plain
//! (untransposed) GEMM of `B` (`N x K`, leading dim `N`) by `A` (`K x M`, leading dim
//! `K`) into `C` (`N x M`, leading dim `N`).

use super::cuda_err;
use super::device::{CudaDevice, DeviceBuffer};
use crate::error::{Error, Result};
use cudarc::cublas::sys as blas_sys;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, StridedBatchedConfig};
use cudarc::driver::CudaStream;
use lazyfuse_ir::DType;
use std::ffi::c_int;
use std::sync::{Arc, OnceLock};

/// The cuBLAS major version lazyfuse is built for (cudarc's `cuda-13000` bindings).
const REQUIRED_MAJOR: c_int = 13;

/// Whether cuBLAS can be used: `Ok` with its version, or why not (missing library,
/// another major version, turned off by `LAZYFUSE_CUBLAS=0`). Probed once.
///
/// ```
/// match lazyfuse_runtime::cuda::blas::cublas_version() {
///     Ok((major, _, _)) => assert_eq!(major, 13),
///     Err(why) => println!("matmul on a GPU is a generated kernel here: {why}"),
/// }
/// ```
pub fn cublas_version() -> std::result::Result<(i32, i32, i32), String> {
    static VERSION: OnceLock<std::result::Result<(i32, i32, i32), String>> = OnceLock::new();
    VERSION.get_or_init(probe).clone()
}

fn probe() -> std::result::Result<(i32, i32, i32), String> {
    if std::env::var_os("LAZYFUSE_CUBLAS").is_some_and(|v| v == "0") {
        return Err("turned off by LAZYFUSE_CUBLAS=0".into());
    }
    // SAFETY: `is_culib_present` only tries to dlopen the candidate library names and
    // closes what it opened; it calls no cuBLAS symbol.
    if !unsafe { blas_sys::is_culib_present() } {
        return Err("cuBLAS not found: libcublas.so.13 is not on the library path".into());
    }
    let mut v = [0 as c_int; 3];
    for (slot, prop) in v.iter_mut().zip([
        blas_sys::libraryPropertyType::MAJOR_VERSION,
        blas_sys::libraryPropertyType::MINOR_VERSION,
        blas_sys::libraryPropertyType::PATCH_LEVEL,
    ]) {
        // SAFETY: a library was found just above, so cudarc's loader (the same
        // candidate list) does not panic; `cublasGetProperty` exists in every cuBLAS
        // release and writes one int through a pointer to a live local.
        let status = unsafe { blas_sys::cublasGetProperty(prop, slot) };
        if status != blas_sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(format!("cublasGetProperty failed: {status:?}"));
        }
    }
    if v[0] != REQUIRED_MAJOR {
        return Err(format!(
            "cuBLAS {}.{} loaded, lazyfuse needs {REQUIRED_MAJOR}.x",
            v[0], v[1]
        ));
    }
    Ok((v[0], v[1], v[2]))
}

/// Whether float matmul of `dtype` goes to cuBLAS.
pub fn handles(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
}

/// One cuBLAS handle per device, bound to the device's stream.
#[derive(Debug)]
pub(crate) struct Blas(CudaBlas);

impl Blas {
    pub(crate) fn new(stream: Arc<CudaStream>) -> Result<Self> {
        cublas_version().map_err(Error::Cuda)?;
        CudaBlas::new(stream)
            .map(Blas)
            .map_err(|e| cuda_err("cublasCreate", e))
    }
}

/// The sizes of one batched product `[batch, m, k] @ [batch, k, n]`.
#[derive(Clone, Copy, Debug)]
pub struct MatmulDims {
    /// batch
    pub batch: usize,
    /// rows of the left operand
    pub m: usize,
    /// the contracted dim
    pub k: usize,
    /// columns of the right operand
    pub n: usize,
}

impl CudaDevice {
    /// `out = a @ b` for contiguous row-major `a` `[batch, m, k]` and `b`
    /// `[batch, k, n]` of `dtype` into `out` `[batch, m, n]`, through cuBLAS, queued on
    /// the device's stream.
    ///
    /// # Errors
    /// cuBLAS missing (see [`cublas_version`]), a dtype it does not take, buffers
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_says_why_and_never_panics() {
        match cublas_version() {
            Ok((major, _, _)) => assert_eq!(major, REQUIRED_MAJOR),
            Err(why) => assert!(
                why.contains("cuBLAS") || why.contains("LAZYFUSE_CUBLAS"),
                "{why}"
            ),
        }
        assert!(handles(DType::BF16) && !handles(DType::I32) && !handles(DType::C64));
    }
}
