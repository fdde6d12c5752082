//! cuBLAS, the library behind matmul on device-resident buffers: its probe, the
//! dtypes it takes, the handle a device keeps, and the sizes of one product. The
//! product itself is [`CudaDevice::matmul`](super::CudaDevice::matmul) (`matmul.rs`).
//!
//! `libcublas.so.13` is loaded at run time like NVRTC, probed before cudarc is asked
//! for a symbol (cudarc panics on a missing library). Where it is missing, or
//! `LAZYFUSE_CUBLAS=0` turns it off, float matmul on a device is a generated kernel
//! instead (`lazyfuse_ir::schedule::ScheduleOptions::library_float_matmul` is off),
//! with one line saying why under `LAZYFUSE_DEBUG`.

use super::cuda_err;
use crate::error::{Error, Result};
use cudarc::cublas::sys as blas_sys;
use cudarc::cublas::CudaBlas;
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
pub(crate) struct Blas(pub(super) CudaBlas);

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
