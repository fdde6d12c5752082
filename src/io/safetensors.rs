//! safetensors files: `load_safetensors` and `save_safetensors`.

use super::{cpu_tensor, file_error};
use crate::{DType, Result, Tensor};
use lazyfuse_runtime::{Buffer, MappedFile};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use std::collections::HashMap;
use std::path::Path;

/// lazyfuse's dtype for a safetensors dtype (`None`: lazyfuse has no such dtype).
fn from_safetensors(dtype: Dtype) -> Option<DType> {
    Some(match dtype {
        Dtype::BOOL => DType::Bool,
        Dtype::U8 => DType::U8,
        Dtype::I8 => DType::I8,
        Dtype::I16 => DType::I16,
        Dtype::U16 => DType::U16,
        Dtype::I32 => DType::I32,
        Dtype::U32 => DType::U32,
        Dtype::I64 => DType::I64,
        Dtype::U64 => DType::U64,
        Dtype::F16 => DType::F16,
        Dtype::BF16 => DType::BF16,
        Dtype::F32 => DType::F32,
        Dtype::F64 => DType::F64,
        Dtype::C64 => DType::C64,
        Dtype::F8_E4M3 => DType::F8E4M3FN,
        Dtype::F8_E5M2 => DType::F8E5M2,
        Dtype::F8_E4M3FNUZ => DType::F8E4M3FNUZ,
        Dtype::F8_E5M2FNUZ => DType::F8E5M2FNUZ,
        Dtype::F8_E8M0 => DType::F8E8M0FNU,
        _ => return None,
    })
}

/// The safetensors dtype for a lazyfuse dtype (`None`: the format has none).
fn to_safetensors(dtype: DType) -> Option<Dtype> {
    [
        Dtype::BOOL,
        Dtype::U8,
        Dtype::I8,
        Dtype::I16,
        Dtype::U16,
        Dtype::I32,
        Dtype::U32,
        Dtype::I64,
        Dtype::U64,
        Dtype::F16,
        Dtype::BF16,
        Dtype::F32,
        Dtype::F64,
        Dtype::C64,
        Dtype::F8_E4M3,
        Dtype::F8_E5M2,
        Dtype::F8_E4M3FNUZ,
        Dtype::F8_E5M2FNUZ,
        Dtype::F8_E8M0,
    ]
    .into_iter()
    .find(|d| from_safetensors(*d) == Some(dtype))
}

/// Reads every tensor of a safetensors file (PyTorch's
/// `safetensors.torch.load_file`): the file is memory-mapped, its header and
/// offsets checked by the `safetensors` crate, and each tensor copied out into a
/// CPU tensor of its dtype and shape. The `__metadata__` strings are not kept.
///
/// ```
/// use lazyfuse::io::{load_safetensors, save_safetensors};
/// use lazyfuse::{DType, Tensor};
/// use std::collections::HashMap;
/// let path = std::env::temp_dir().join("lazyfuse_load_doc.safetensors");
/// let t = Tensor::ones(&[2], DType::BF16);
/// save_safetensors(&path, &HashMap::from([("t".to_string(), t)]))?;
/// assert_eq!(load_safetensors(&path)?["t"].dtype(), DType::BF16);
/// std::fs::write(&path, b"not a safetensors file").unwrap();
/// assert!(load_safetensors(&path).is_err());
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn load_safetensors(path: impl AsRef<Path>) -> Result<HashMap<String, Tensor>> {
    let path = path.as_ref();
    let op = "load_safetensors";
    let map = MappedFile::open(path).map_err(|e| file_error(op, path, e))?;
    let file = SafeTensors::deserialize(map.bytes()).map_err(|e| file_error(op, path, e))?;
    let mut out = HashMap::new();
    for (name, view) in file.tensors() {
        let dtype = from_safetensors(view.dtype()).ok_or_else(|| {
            file_error(
                op,
                path,
                format!(
                    "tensor \"{name}\" has dtype {:?}, which lazyfuse does not support",
                    view.dtype()
                ),
            )
        })?;
        let shape = view.shape().to_vec();
        let bytes = view.data();
        let expected = shape
            .iter()
            .try_fold(dtype.size_in_bytes(), |n, &d| n.checked_mul(d));
        if expected != Some(bytes.len()) {
            return Err(file_error(
                op,
                path,
                format!(
                    "tensor \"{name}\" of shape {shape:?} and dtype {dtype} has {} bytes",
                    bytes.len()
                ),
            ));
        }
        let buffer = Buffer::from_vec(bytes.to_vec()).bitcast(dtype)?;
        out.insert(name, cpu_tensor(buffer, &shape, op)?);
    }
    Ok(out)
}

/// Writes `tensors` to a safetensors file (PyTorch's
/// `safetensors.torch.save_file`): each computed if it is not yet, in its dtype,
/// its elements in row-major order whatever its strides. A dtype the format
/// lacks (complex128, complex32, …) is an error and nothing is written.
///
/// ```
/// use lazyfuse::io::{load_safetensors, save_safetensors};
/// use lazyfuse::{DType, Tensor};
/// use std::collections::HashMap;
/// let path = std::env::temp_dir().join("lazyfuse_save_doc.safetensors");
/// let x = Tensor::arange(0.0, 6.0, 1.0, DType::F64)?.view(&[2, 3])?;
/// save_safetensors(&path, &HashMap::from([("x".to_string(), x.exp()?)]))?;
/// assert_eq!(load_safetensors(&path)?["x"].shape(), vec![2, 3]);
/// let c = Tensor::zeros(&[1], DType::C128);
/// assert!(save_safetensors(&path, &HashMap::from([("c".to_string(), c)])).is_err());
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn save_safetensors(path: impl AsRef<Path>, tensors: &HashMap<String, Tensor>) -> Result<()> {
    let path = path.as_ref();
    let op = "save_safetensors";
    let mut entries: Vec<(&String, Dtype, Vec<usize>, Buffer)> = Vec::new();
    for (name, t) in tensors {
        let dtype = to_safetensors(t.dtype()).ok_or_else(|| {
            file_error(
                op,
                path,
                format!(
                    "tensor \"{name}\" has dtype {}, which safetensors cannot store",
                    t.dtype()
                ),
            )
        })?;
        let bytes = t.read_buffer()?.bitcast(DType::U8)?;
        entries.push((name, dtype, t.shape(), bytes));
    }
    let mut views = Vec::with_capacity(entries.len());
    for (name, dtype, shape, bytes) in &entries {
        let data = bytes.as_slice::<u8>().unwrap_or(&[]);
        let view = TensorView::new(*dtype, shape.clone(), data)
            .map_err(|e| file_error(op, path, format!("tensor \"{name}\": {e}")))?;
        views.push((name.as_str(), view));
    }
    safetensors::serialize_to_file(views, None, path).map_err(|e| file_error(op, path, e))
}
