//! `lazyfuse::io`: model files. safetensors (the format PyTorch and the Hugging
//! Face hub share weights in) through the `safetensors` crate, read from a
//! memory map; numpy's `.npy` and `.npz` through the `npyz` crate.
//!
//! Loaded tensors live on the CPU, as `safetensors.torch.load_file` and
//! `torch.from_numpy` put them. A truncated or corrupt file, a dtype the format
//! or lazyfuse lacks, or a name that is not a valid key is an `Err` naming the
//! file, never a panic or a read outside the file.
//!
//! ```
//! use lazyfuse::io::{load_safetensors, save_safetensors};
//! use lazyfuse::Tensor;
//! use std::collections::HashMap;
//! let path = std::env::temp_dir().join("lazyfuse_io_doc.safetensors");
//! let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! save_safetensors(&path, &HashMap::from([("w".to_string(), w.t()?)]))?;
//! let back = load_safetensors(&path)?;
//! assert_eq!(back["w"].to_vec::<f32>()?, vec![1.0, 3.0, 2.0, 4.0]);
//! # std::fs::remove_file(&path).unwrap();
//! # Ok::<(), lazyfuse::Error>(())
//! ```
//!
//! # Files
//! `safetensors` (`load_safetensors`, `save_safetensors`), `npy` (`load_npy`,
//! `save_npy`, `load_npz`, `save_npz`).

mod npy;
mod safetensors;

pub use self::safetensors::{load_safetensors, save_safetensors};
pub use npy::{load_npy, load_npz, save_npy, save_npz};

use crate::{Device, Result, Tensor};
use lazyfuse_ir::Error as IrError;
use lazyfuse_runtime::Buffer;
use std::path::Path;

/// A file error: the op, the file and what went wrong.
fn file_error(op: &str, path: &Path, what: impl std::fmt::Display) -> crate::Error {
    IrError::invalid(op, format!("{}: {what}", path.display())).into()
}

/// A CPU tensor of `shape` holding `buffer`.
fn cpu_tensor(buffer: Buffer, shape: &[usize], op: &'static str) -> Result<Tensor> {
    Tensor::from_buffer(buffer, shape, op, Device::CPU)
}
