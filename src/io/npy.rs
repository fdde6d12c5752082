//! numpy's files: `.npy` (one array) and `.npz` (a zip of `.npy` files by name).

use super::{cpu_tensor, file_error};
use crate::{Complex, Result, Tensor};
use lazyfuse_runtime::half::f16;
use lazyfuse_runtime::Buffer;
use npyz::{NpyFile, Order, TypeChar, WriterBuilder};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read};
use std::path::Path;

/// A `.npy` array as a tensor: its dtype mapped to lazyfuse's, a Fortran-order
/// array returned as the transposed view numpy's strides describe.
fn npy_to_tensor<R: Read>(npy: NpyFile<R>, op: &'static str, path: &Path) -> Result<Tensor> {
    let fail = |what: String| file_error(op, path, what);
    let io = |e: std::io::Error| file_error(op, path, e);
    let shape: Vec<usize> = npy
        .shape()
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| fail(format!("dimension {d} is too large"))))
        .collect::<Result<_>>()?;
    let fortran = npy.order() == Order::Fortran;
    let npyz::DType::Plain(ts) = npy.dtype() else {
        return Err(fail(format!(
            "structured or array dtype {:?} is not supported",
            npy.dtype().descr()
        )));
    };
    let buffer = match (ts.type_char(), ts.size_field()) {
        (TypeChar::Bool, 1) => Buffer::from_vec(npy.into_vec::<bool>().map_err(io)?),
        (TypeChar::Uint, 1) => Buffer::from_vec(npy.into_vec::<u8>().map_err(io)?),
        (TypeChar::Uint, 2) => Buffer::from_vec(npy.into_vec::<u16>().map_err(io)?),
        (TypeChar::Uint, 4) => Buffer::from_vec(npy.into_vec::<u32>().map_err(io)?),
        (TypeChar::Uint, 8) => Buffer::from_vec(npy.into_vec::<u64>().map_err(io)?),
        (TypeChar::Int, 1) => Buffer::from_vec(npy.into_vec::<i8>().map_err(io)?),
        (TypeChar::Int, 2) => Buffer::from_vec(npy.into_vec::<i16>().map_err(io)?),
        (TypeChar::Int, 4) => Buffer::from_vec(npy.into_vec::<i32>().map_err(io)?),
        (TypeChar::Int, 8) => Buffer::from_vec(npy.into_vec::<i64>().map_err(io)?),
        (TypeChar::Float, 2) => Buffer::from_vec(npy.into_vec::<f16>().map_err(io)?),
        (TypeChar::Float, 4) => Buffer::from_vec(npy.into_vec::<f32>().map_err(io)?),
        (TypeChar::Float, 8) => Buffer::from_vec(npy.into_vec::<f64>().map_err(io)?),
        (TypeChar::Complex, 8) => Buffer::from_vec(npy.into_vec::<Complex<f32>>().map_err(io)?),
        (TypeChar::Complex, 16) => Buffer::from_vec(npy.into_vec::<Complex<f64>>().map_err(io)?),
        _ => return Err(fail(format!("numpy dtype '{ts}' has no lazyfuse dtype"))),
    };
    if !fortran {
        return cpu_tensor(buffer, &shape, op);
    }
    let reversed: Vec<usize> = shape.iter().rev().copied().collect();
    let dims: Vec<isize> = (0..shape.len() as isize).rev().collect();
    cpu_tensor(buffer, &reversed, op)?.permute(&dims)
}

/// Runs `$body` with `$v` bound to the elements of a buffer whose dtype numpy
/// has, else `$other`.
macro_rules! with_npy_elements {
    ($buf:expr, $v:ident => $body:expr, other => $other:expr) => {
        match $buf {
            Buffer::Bool($v) => $body,
            Buffer::U8($v) => $body,
            Buffer::I8($v) => $body,
            Buffer::I16($v) => $body,
            Buffer::I32($v) => $body,
            Buffer::I64($v) => $body,
            Buffer::U16($v) => $body,
            Buffer::U32($v) => $body,
            Buffer::U64($v) => $body,
            Buffer::F16($v) => $body,
            Buffer::F32($v) => $body,
            Buffer::F64($v) => $body,
            Buffer::C64($v) => $body,
            Buffer::C128($v) => $body,
            _ => $other,
        }
    };
}

/// `t`'s elements in row-major order and its shape, for writing; a dtype numpy
/// lacks (bfloat16, float8, complex32) is an error.
fn npy_elements(t: &Tensor, op: &str, path: &Path) -> Result<(Buffer, Vec<u64>)> {
    let buffer = t.read_buffer()?;
    let supported = with_npy_elements!(&buffer, _v => true, other => false);
    if !supported {
        return Err(file_error(
            op,
            path,
            format!("numpy has no dtype for {}", t.dtype()),
        ));
    }
    Ok((buffer, t.shape().iter().map(|&d| d as u64).collect()))
}

/// Reads a numpy `.npy` file (numpy's `np.load` of one array): booleans,
/// integers, float16/32/64 and complex64/128, in either byte order, C or Fortran
/// order, as a CPU tensor.
///
/// ```
/// use lazyfuse::io::{load_npy, save_npy};
/// use lazyfuse::Tensor;
/// let path = std::env::temp_dir().join("lazyfuse_npy_doc.npy");
/// save_npy(&path, &Tensor::from_vec(vec![1i64, 2, 3], &[3])?)?;
/// assert_eq!(load_npy(&path)?.to_vec::<i64>()?, vec![1, 2, 3]);
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn load_npy(path: impl AsRef<Path>) -> Result<Tensor> {
    let path = path.as_ref();
    let op = "load_npy";
    let file = File::open(path).map_err(|e| file_error(op, path, e))?;
    let npy = NpyFile::new(BufReader::new(file)).map_err(|e| file_error(op, path, e))?;
    npy_to_tensor(npy, op, path)
}

/// Writes `tensor` to a numpy `.npy` file (numpy's `np.save`), C order, computed
/// first if it is not yet. bfloat16, float8 and complex32 have no numpy dtype:
/// an error, with no file written.
///
/// ```
/// use lazyfuse::io::{load_npy, save_npy};
/// use lazyfuse::{DType, Tensor};
/// let path = std::env::temp_dir().join("lazyfuse_save_npy_doc.npy");
/// let x = Tensor::arange(0.0, 6.0, 1.0, DType::F32)?.view(&[2, 3])?.t()?;
/// save_npy(&path, &x)?;
/// let back = load_npy(&path)?;
/// assert_eq!((back.shape(), back.to_vec::<f32>()?), (vec![3, 2], x.to_vec::<f32>()?));
/// assert!(save_npy(&path, &Tensor::ones(&[1], DType::BF16)).is_err());
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn save_npy(path: impl AsRef<Path>, tensor: &Tensor) -> Result<()> {
    let path = path.as_ref();
    let op = "save_npy";
    let io = |e: std::io::Error| file_error(op, path, e);
    let (buffer, shape) = npy_elements(tensor, op, path)?;
    let w = BufWriter::new(File::create(path).map_err(io)?);
    with_npy_elements!(&buffer, v => {
        let mut writer = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&shape)
            .writer(w)
            .begin_nd()
            .map_err(io)?;
        writer.extend(v.iter().copied()).map_err(io)?;
        writer.finish().map_err(io)
    }, other => unreachable!("checked by npy_elements"))
}

/// Reads every array of a numpy `.npz` file (numpy's `np.load` of an archive,
/// compressed or not), by name, as [`load_npy`] reads one.
///
/// ```
/// use lazyfuse::io::{load_npz, save_npz};
/// use lazyfuse::{DType, Tensor};
/// use std::collections::HashMap;
/// let path = std::env::temp_dir().join("lazyfuse_npz_doc.npz");
/// let arrays = HashMap::from([
///     ("a".to_string(), Tensor::ones(&[2, 2], DType::F32)),
///     ("b".to_string(), Tensor::zeros(&[3], DType::I32)),
/// ]);
/// save_npz(&path, &arrays)?;
/// let back = load_npz(&path)?;
/// assert_eq!(back["b"].to_vec::<i32>()?, vec![0, 0, 0]);
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn load_npz(path: impl AsRef<Path>) -> Result<HashMap<String, Tensor>> {
    let path = path.as_ref();
    let op = "load_npz";
    let io = |e: std::io::Error| file_error(op, path, e);
    let mut archive = npyz::npz::NpzArchive::open(path).map_err(io)?;
    let names: Vec<String> = archive.array_names().map(str::to_string).collect();
    let mut out = HashMap::new();
    for name in names {
        let npy = archive
            .by_name(&name)
            .map_err(io)?
            .ok_or_else(|| file_error(op, path, format!("array \"{name}\" vanished")))?;
        let tensor = npy_to_tensor(npy, op, path)?;
        out.insert(name, tensor);
    }
    Ok(out)
}

/// Writes `tensors` to a numpy `.npz` file (numpy's `np.savez`, uncompressed),
/// each as [`save_npy`] writes one; every dtype is checked before the file is
/// made.
///
/// ```
/// use lazyfuse::io::save_npz;
/// use lazyfuse::{DType, Tensor};
/// use std::collections::HashMap;
/// let path = std::env::temp_dir().join("lazyfuse_save_npz_doc.npz");
/// let bad = HashMap::from([("h".to_string(), Tensor::ones(&[1], DType::BF16))]);
/// assert!(save_npz(&path, &bad).is_err());
/// ```
pub fn save_npz(path: impl AsRef<Path>, tensors: &HashMap<String, Tensor>) -> Result<()> {
    let path = path.as_ref();
    let op = "save_npz";
    let io = |e: std::io::Error| file_error(op, path, e);
    let mut names: Vec<&String> = tensors.keys().collect();
    names.sort();
    let mut arrays = Vec::with_capacity(names.len());
    for name in names {
        arrays.push((name, npy_elements(&tensors[name], op, path)?));
    }
    let mut npz = npyz::npz::NpzWriter::create(path).map_err(io)?;
    for (name, (buffer, shape)) in &arrays {
        with_npy_elements!(buffer, v => {
            let mut writer = npz
                .array(name, Default::default())
                .map_err(io)?
                .default_dtype()
                .shape(shape)
                .begin_nd()
                .map_err(io)?;
            writer.extend(v.iter().copied()).map_err(io)?;
            writer.finish().map_err(io)?;
        }, other => unreachable!("checked by npy_elements"));
    }
    Ok(())
}
