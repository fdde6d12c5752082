//! `lazyfuse::io`: files written by PyTorch (every safetensors dtype) and numpy
//! (`.npy` in C and Fortran order, `.npz`), round trips of every dtype, and
//! truncated or corrupt files refused with an error.

use lazyfuse::io::{load_npy, load_npz, load_safetensors, save_npy, save_npz, save_safetensors};
use lazyfuse::{DType, Tensor};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/tests/data/training/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lazyfuse_io_{}_{name}", std::process::id()))
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

#[test]
fn every_dtype_pytorch_wrote() {
    let loaded = load_safetensors(data("dtypes.safetensors")).unwrap();
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(data("dtypes.json")).unwrap()).unwrap();
    let dtypes = [
        ("bool", DType::Bool),
        ("uint8", DType::U8),
        ("int8", DType::I8),
        ("int16", DType::I16),
        ("uint16", DType::U16),
        ("int32", DType::I32),
        ("uint32", DType::U32),
        ("int64", DType::I64),
        ("uint64", DType::U64),
        ("float16", DType::F16),
        ("bfloat16", DType::BF16),
        ("float32", DType::F32),
        ("float64", DType::F64),
        ("float8_e4m3fn", DType::F8E4M3FN),
        ("float8_e5m2", DType::F8E5M2),
        ("scalar", DType::F32),
        ("empty", DType::F32),
    ];
    assert_eq!(loaded.len(), dtypes.len());
    for (name, dtype) in dtypes {
        let t = &loaded[name];
        let w = &want[name];
        assert_eq!(t.dtype(), dtype, "{name}");
        let shape: Vec<usize> = w["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(t.shape(), shape, "{name}");
        let expected: Vec<f64> = w["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(values(t), expected, "{name}");
    }
}

#[test]
fn every_dtype_round_trips() {
    let base = Tensor::from_vec(vec![0.0f64, 1.5, -2.0, 3.0, 7.0, -0.5], &[2, 3]).unwrap();
    let mut tensors = HashMap::new();
    for dtype in [
        DType::Bool,
        DType::U8,
        DType::I8,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::F8E4M3FN,
        DType::F8E5M2,
    ] {
        let src = if dtype.is_floating_point() || dtype.is_complex() || dtype == DType::Bool {
            base.clone()
        } else {
            base.abs().unwrap()
        };
        // a transposed view: saved in row-major order of its shape
        tensors.insert(
            format!("{dtype}"),
            src.to_dtype(dtype).unwrap().t().unwrap(),
        );
    }
    let path = temp("round.safetensors");
    save_safetensors(&path, &tensors).unwrap();
    let back = load_safetensors(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(back.len(), tensors.len());
    for (name, t) in &tensors {
        let b = &back[name];
        assert_eq!((b.dtype(), b.shape()), (t.dtype(), t.shape()), "{name}");
        if t.dtype().is_complex() {
            let re = |x: &Tensor| values(&x.real().unwrap());
            assert_eq!(re(b), re(t), "{name}");
        } else {
            assert_eq!(values(b), values(t), "{name}");
        }
    }
}

#[test]
fn truncated_and_corrupt_safetensors_are_errors() {
    let good = std::fs::read(data("model.safetensors")).unwrap();
    let path = temp("bad.safetensors");
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("short header", good[..4].to_vec()),
        ("truncated data", good[..good.len() - 10].to_vec()),
        ("truncated header", good[..40].to_vec()),
    ];
    let mut huge = good.clone();
    huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    cases.push(("header length past the end", huge));
    let mut garbled = good.clone();
    for b in &mut garbled[8..20] {
        *b = b'#';
    }
    cases.push(("garbled header", garbled));
    for (what, bytes) in cases {
        std::fs::write(&path, bytes).unwrap();
        assert!(load_safetensors(&path).is_err(), "{what}");
    }
    std::fs::remove_file(&path).unwrap();
    let err = load_safetensors(temp("missing.safetensors")).unwrap_err();
    assert!(err.to_string().contains("missing.safetensors"), "{err}");
    let c = HashMap::from([("c".to_string(), Tensor::zeros(&[1], DType::C128))]);
    let path = temp("never.safetensors");
    assert!(save_safetensors(&path, &c).is_err());
    assert!(!path.exists());
}

#[test]
fn numpy_files() {
    let a = load_npy(data("c_f32.npy")).unwrap();
    assert_eq!((a.dtype(), a.shape()), (DType::F32, vec![3, 4]));
    assert_eq!(
        a.to_vec::<f32>().unwrap(),
        (0..12).map(|i| i as f32 / 4.0).collect::<Vec<_>>()
    );
    let f = load_npy(data("fortran_f64.npy")).unwrap();
    assert_eq!(f.shape(), vec![2, 3]);
    assert_eq!(
        f.to_vec::<f64>().unwrap(),
        vec![-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]
    );
    assert_eq!(
        load_npy(data("bool.npy"))
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![true, false, true]
    );
    let h = load_npy(data("f16.npy")).unwrap();
    assert_eq!(h.dtype(), DType::F16);
    assert_eq!(values(&h), vec![0.5, -1.0, 65504.0]);
    let z = load_npz(data("arrays.npz")).unwrap();
    assert_eq!(z.len(), 3);
    assert_eq!(
        z["weight"].to_vec::<f32>().unwrap(),
        a.to_vec::<f32>().unwrap()
    );
    assert_eq!(z["index"].to_vec::<i64>().unwrap(), vec![3, -1, 7]);
    assert_eq!(values(&z["half"]), vec![1.5]);
}

#[test]
fn numpy_round_trips_and_errors() {
    let path = temp("x.npy");
    for t in [
        Tensor::from_vec(vec![1.0f64, -2.0, 3.5, 4.0], &[2, 2])
            .unwrap()
            .t()
            .unwrap(),
        Tensor::from_vec(vec![true, false], &[2]).unwrap(),
        Tensor::from_vec(vec![-7i8, 5], &[2, 1]).unwrap(),
        Tensor::scalar(2.5f32),
    ] {
        save_npy(&path, &t).unwrap();
        let back = load_npy(&path).unwrap();
        assert_eq!((back.dtype(), back.shape()), (t.dtype(), t.shape()));
        assert_eq!(values(&back), values(&t));
    }
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 2]).unwrap();
    assert!(load_npy(&path).is_err(), "truncated");
    std::fs::write(&path, b"\x93NUMPY garbage").unwrap();
    assert!(load_npy(&path).is_err(), "corrupt");
    std::fs::remove_file(&path).unwrap();
    let npz = temp("x.npz");
    let arrays = HashMap::from([
        ("w".to_string(), Tensor::ones(&[2, 3], DType::F32)),
        ("n".to_string(), Tensor::from_vec(vec![5u32], &[1]).unwrap()),
    ]);
    save_npz(&npz, &arrays).unwrap();
    let back = load_npz(&npz).unwrap();
    assert_eq!(back["w"].to_vec::<f32>().unwrap(), vec![1.0; 6]);
    assert_eq!(back["n"].to_vec::<u32>().unwrap(), vec![5]);
    std::fs::write(&npz, b"PK not a zip").unwrap();
    assert!(load_npz(&npz).is_err());
    std::fs::remove_file(&npz).unwrap();
    assert!(save_npy(temp("bf.npy"), &Tensor::ones(&[1], DType::BF16)).is_err());
}
