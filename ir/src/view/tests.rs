//! The view ops' unit tests.

use super::*;
use crate::layout::Layout;

fn l(shape: &[usize], strides: &[isize], offset: usize) -> Layout {
    Layout {
        shape: shape.to_vec().into(),
        strides: strides.to_vec().into(),
        offset,
    }
}

#[test]
fn view_strides_of_size_one_dims_follow_their_chunk() {
    // A diagonal of a 1x1 matrix has stride 2; splitting it keeps 2 everywhere.
    let diag = l(&[1], &[2], 0);
    assert_eq!(diag.view(&[1, 1]).unwrap(), l(&[1, 1], &[2, 2], 0));
    // Size-1 dims inserted inside a contiguous block take the running stride.
    let c = Layout::contiguous(&[2, 3]);
    assert_eq!(
        c.view(&[2, 1, 3, 1]).unwrap().strides,
        crate::layout::Steps::from_slice(&[3, 3, 1, 1])
    );
    // A 0-d input gives stride 1 everywhere.
    assert_eq!(
        Layout::contiguous(&[]).view(&[1, 1]).unwrap().strides,
        crate::layout::Steps::from_slice(&[1, 1])
    );
}

#[test]
fn view_of_empty_tensor() {
    let e = l(&[2, 0, 3], &[7, 5, 1], 4);
    // Same shape keeps the strides; another shape gets max(size, 1) row-major ones.
    assert_eq!(
        e.view(&[2, 0, 3]).unwrap().strides,
        crate::layout::Steps::from_slice(&[7, 5, 1])
    );
    assert_eq!(
        e.view(&[0, 6]).unwrap().strides,
        crate::layout::Steps::from_slice(&[6, 1])
    );
    assert_eq!(
        e.view(&[3, 0, 2]).unwrap().strides,
        crate::layout::Steps::from_slice(&[2, 2, 1])
    );
    assert!(e.view(&[-1, 0]).is_err());
}

#[test]
fn view_fails_across_chunks_and_reshape_copies() {
    let t = Layout::contiguous(&[2, 3]).t().unwrap();
    assert_eq!(t.view(&[6]), Err(Error::ViewIncompatible));
    assert_eq!(t.reshape(&[6]).unwrap(), None);
    // Splitting a dim of a transposed tensor is a view.
    let v = t.reshape(&[3, 2, 1]).unwrap().unwrap();
    assert_eq!(v, l(&[3, 2, 1], &[1, 3, 3], 0));
    // Merging two dims that are contiguous with each other is a view too.
    let p = Layout::contiguous(&[2, 3, 4]).permute(&[1, 2, 0]).unwrap();
    let m = p.reshape(&[12, 2]).unwrap().unwrap();
    assert_eq!(m, l(&[12, 2], &[1, 12], 0));
}

#[test]
fn infer_shape_errors() {
    assert_eq!(
        Layout::infer_shape(&[2, 5], 6).unwrap_err().to_string(),
        "shape '[2, 5]' is invalid for input of size 6"
    );
    assert_eq!(
        Layout::infer_shape(&[-1, -1], 6).unwrap_err().to_string(),
        "only one dimension can be inferred"
    );
    assert!(Layout::infer_shape(&[4, -1], 6).is_err());
    assert!(Layout::infer_shape(&[-2, 3], 6).is_err());
    assert_eq!(Layout::infer_shape(&[0, -1, 2], 0).unwrap_err().to_string(),
        "cannot reshape tensor of 0 elements into shape [0, -1, 2] because the unspecified dimension size -1 can be any value and is ambiguous");
    assert_eq!(Layout::infer_shape(&[-1, 2], 0).unwrap(), vec![0, 2]);
}

#[test]
fn expand_stride_rule() {
    let a = l(&[4, 1], &[1, 1], 0);
    // Expanded dim: 0; kept dim: its stride; new leading size-1 dims: size*stride.
    assert_eq!(
        a.expand(&[1, 1, 4, 2]).unwrap(),
        l(&[1, 1, 4, 2], &[4, 4, 1, 0], 0)
    );
    assert_eq!(a.expand(&[3, -1, 1]).unwrap(), l(&[3, 4, 1], &[0, 1, 1], 0));
    // A 0-d input: stride 0 everywhere, size-1 dims included.
    assert_eq!(
        Layout::contiguous(&[]).expand(&[1, 3]).unwrap().strides,
        crate::layout::Steps::from_slice(&[0, 0])
    );
    let err = a.expand(&[4, 3, 2]).unwrap_err();
    assert!(matches!(err, Error::Expand { dim: 1, .. }), "{err}");
    assert!(a.expand(&[-1, 4, 1]).is_err());
    assert!(a.expand(&[2]).is_err());
}

#[test]
fn unsqueeze_stride_rule() {
    let a = l(&[3, 4], &[1, 3], 2);
    assert_eq!(a.unsqueeze(0).unwrap(), l(&[1, 3, 4], &[3, 1, 3], 2));
    assert_eq!(a.unsqueeze(1).unwrap(), l(&[3, 1, 4], &[1, 12, 3], 2));
    assert_eq!(a.unsqueeze(-1).unwrap(), l(&[3, 4, 1], &[1, 3, 1], 2));
    assert_eq!(
        Layout::contiguous(&[]).unsqueeze(-1).unwrap(),
        l(&[1], &[1], 0)
    );
    assert!(a.unsqueeze(3).is_err());
    assert!(a.unsqueeze(-4).is_err());
}

#[test]
fn slice_narrow_select_offsets() {
    let a = Layout::contiguous(&[3, 2, 3]);
    // An empty slice still moves the offset by start * stride.
    assert_eq!(
        a.slice(2, Some(-1), Some(-1), 1).unwrap(),
        l(&[3, 2, 0], &[6, 3, 1], 2)
    );
    assert_eq!(
        a.slice(0, None, None, 2).unwrap(),
        l(&[2, 2, 3], &[12, 3, 1], 0)
    );
    assert_eq!(a.slice(0, Some(-10), Some(10), 1).unwrap(), a);
    assert_eq!(a.narrow(1, -1, 1).unwrap(), l(&[3, 1, 3], &[6, 3, 1], 3));
    assert!(a.narrow(1, 1, 2).is_err());
    assert!(a.narrow(1, 3, 0).is_err());
    assert_eq!(a.select(0, -1).unwrap(), l(&[2, 3], &[3, 1], 12));
    assert_eq!(
        a.select(0, 5).unwrap_err().to_string(),
        "select(): index 5 out of range for tensor of size [3, 2, 3] at dimension 0"
    );
    assert!(Layout::contiguous(&[]).select(0, 0).is_err());
}

#[test]
fn diagonal_offsets_and_errors() {
    let a = Layout::contiguous(&[3, 4]);
    assert_eq!(a.diagonal(1, 0, 1).unwrap(), l(&[3], &[5], 1));
    assert_eq!(a.diagonal(-2, 0, 1).unwrap(), l(&[1], &[5], 8));
    // An empty diagonal leaves the offset alone.
    assert_eq!(a.diagonal(9, 0, 1).unwrap(), l(&[0], &[5], 0));
    assert_eq!(
        a.diagonal(0, 1, -1).unwrap_err().to_string(),
        "diagonal dimensions cannot be identical 1, -1"
    );
}

#[test]
fn unfold_as_strided_and_splits() {
    let a = Layout::contiguous(&[5]);
    assert_eq!(a.unfold(0, 2, 2).unwrap(), l(&[2, 2], &[2, 1], 0));
    assert_eq!(
        Layout::contiguous(&[3])
            .unfold(0, 4, 1)
            .unwrap_err()
            .to_string(),
        "maximum size for tensor at dimension 0 is 3 but size is 4"
    );
    assert!(a.unfold(0, 2, 0).is_err());
    assert_eq!(
        Layout::contiguous(&[]).unfold(0, 1, 1).unwrap(),
        l(&[1], &[1], 0)
    );
    assert!(a.as_strided(&[2, 2], &[2, 1], 1, 5).is_ok());
    assert_eq!(
        a.as_strided(&[2, 2], &[2, 1], 2, 5).unwrap_err().to_string(),
        "setStorage: sizes [2, 2], strides [2, 1], storage offset 2, and itemsize 8 requiring a storage size of 48 are out of bounds for storage of size 40"
    );
    assert!(a.as_strided(&[0, 2], &[100, 1], 100, 5).is_ok());
    let parts = a.split(2, 0).unwrap();
    assert_eq!(
        parts.iter().map(|p| p.shape[0]).collect::<Vec<_>>(),
        vec![2, 2, 1]
    );
    assert_eq!(parts[2].offset, 4);
    let chunks = Layout::contiguous(&[0, 2]).chunk(3, 0).unwrap();
    assert_eq!(chunks.len(), 3);
    assert_eq!(a.chunk(3, 0).unwrap().len(), 3);
    assert_eq!(Layout::contiguous(&[6]).chunk(4, 0).unwrap().len(), 3);
    assert!(a.split_sizes(&[2, 2], 0).is_err());
    assert_eq!(a.unbind(0).unwrap()[3], l(&[], &[], 3));
}

#[test]
fn absurd_arguments_are_errors_not_panics() {
    let a = Layout::contiguous(&[4]);
    let big = usize::MAX;
    assert!(a
        .as_strided(&[big, big, big], &[isize::MAX; 3], big, 4)
        .is_err());
    assert!(Layout::infer_shape(&[isize::MAX, isize::MAX, -1], 4).is_err());
    assert!(a.narrow(0, isize::MIN, big).is_err());
    assert!(a.slice(0, Some(isize::MIN), Some(isize::MAX), big).is_err()); // stride 1 * usize::MAX overflows isize
    assert!(a.diagonal(isize::MIN, 0, 1).is_err());
    assert!(a.unsqueeze(0).unwrap().diagonal(isize::MIN, 0, 1).is_ok());
    // PyTorch: "numel: integer multiplication overflow"
    assert!(a.expand(&[isize::MAX, 4]).is_err());
    assert!(a.expand(&[-2, 4]).is_err());
    assert!(a.unfold(0, big, 1).is_err());
    assert!(a.split(big, 0).is_ok());
    assert!(a.split_sizes(&[big, 5], 0).is_err());
    assert!(a.chunk(big, 0).is_ok());
}

#[test]
fn flatten_movedim_t() {
    let a = Layout::contiguous(&[2, 3, 4]);
    assert_eq!(a.flatten(0, 1).unwrap().unwrap(), l(&[6, 4], &[4, 1], 0));
    assert_eq!(a.flatten(1, 1).unwrap().unwrap(), a);
    assert_eq!(
        Layout::contiguous(&[]).flatten(0, -1).unwrap().unwrap(),
        l(&[1], &[1], 0)
    );
    let p = a.movedim(0, -1).unwrap();
    assert_eq!(p, l(&[3, 4, 2], &[4, 1, 12], 0));
    assert_eq!(p.flatten(1, 2).unwrap(), None);
    assert_eq!(p.flatten_shape(1, 2).unwrap(), vec![3, 8]);
    assert!(a.flatten(2, 1).is_err());
    assert!(a.t().is_err());
    assert_eq!(a.mt().unwrap(), l(&[2, 4, 3], &[12, 1, 4], 0));
    assert!(Layout::contiguous(&[3]).mt().is_err());
    assert_eq!(
        a.unflatten(-1, &[2, -1]).unwrap(),
        l(&[2, 3, 2, 2], &[12, 4, 2, 1], 0)
    );
    assert!(a.unflatten(0, &[3, -1]).is_err());
}
