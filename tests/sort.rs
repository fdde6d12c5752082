//! `sort`, `argsort` and `topk` against a stable sort on the host, on rows with
//! ties and NaN (PyTorch's order: NaN after every number ascending, first
//! descending, ties in their original order), along every dim, and their
//! gradient (the values' gradient returns to the positions they came from).

use lazyfuse::Tensor;

/// A stable sort of `row` as PyTorch orders it: the permutation.
fn reference(row: &[f32], descending: bool) -> Vec<i64> {
    let mut idx: Vec<usize> = (0..row.len()).collect();
    let key = |v: f32| if v.is_nan() { f32::INFINITY } else { v };
    let nan_rank = |v: f32| v.is_nan() as u8;
    idx.sort_by(|&a, &b| {
        let (x, y) = (row[a], row[b]);
        let ord = nan_rank(x)
            .cmp(&nan_rank(y))
            .then(key(x).partial_cmp(&key(y)).unwrap());
        if descending {
            ord.reverse()
        } else {
            ord
        }
    });
    idx.into_iter().map(|i| i as i64).collect()
}

fn data(rows: usize, cols: usize) -> Vec<f32> {
    // a small value range: many ties; every 7th a NaN
    (0..rows * cols)
        .map(|i| {
            if i % 7 == 3 {
                f32::NAN
            } else {
                ((i * 37 + 11) % 9) as f32 - 4.0
            }
        })
        .collect()
}

#[test]
fn sort_matches_a_stable_host_sort_along_each_dim() {
    let (r, c) = (5, 23);
    let values = data(r, c);
    let x = Tensor::from_vec(values.clone(), &[r, c]).unwrap();
    for descending in [false, true] {
        // along the last dim
        let (v, i) = x.sort(-1, descending, true).unwrap();
        let (v, i) = (v.to_vec::<f32>().unwrap(), i.to_vec::<i64>().unwrap());
        for row in 0..r {
            let want = reference(&values[row * c..(row + 1) * c], descending);
            assert_eq!(&i[row * c..(row + 1) * c], &want[..], "row {row}");
            for (k, &j) in want.iter().enumerate() {
                let (got, exp) = (v[row * c + k], values[row * c + j as usize]);
                assert!(got == exp || (got.is_nan() && exp.is_nan()));
            }
        }
        // along dim 0: the columns
        let i0 = x
            .argsort(0, descending, true)
            .unwrap()
            .to_vec::<i64>()
            .unwrap();
        for col in 0..c {
            let column: Vec<f32> = (0..r).map(|row| values[row * c + col]).collect();
            let want = reference(&column, descending);
            let got: Vec<i64> = (0..r).map(|row| i0[row * c + col]).collect();
            assert_eq!(got, want, "column {col}");
        }
    }
}

#[test]
fn topk_and_integer_rows() {
    let x = Tensor::from_vec(vec![5i64, -2, 5, 9, 0, 9, 1], &[7]).unwrap();
    let (v, i) = x.sort(0, true, true).unwrap();
    assert_eq!(v.to_vec::<i64>().unwrap(), vec![9, 9, 5, 5, 1, 0, -2]);
    assert_eq!(i.to_vec::<i64>().unwrap(), vec![3, 5, 0, 2, 6, 4, 1]);
    let (v, i) = x.topk(3, 0, false, true).unwrap();
    assert_eq!(v.to_vec::<i64>().unwrap(), vec![-2, 0, 1]);
    assert_eq!(i.to_vec::<i64>().unwrap(), vec![1, 4, 6]);
    assert!(x.topk(8, 0, true, true).is_err());
    assert!(x.sort(1, false, true).is_err());
}

#[test]
fn sorted_values_send_their_gradient_back() {
    let x = Tensor::from_vec(vec![3.0f32, 1.0, 2.0], &[3])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let (v, _) = x.sort(0, false, true).unwrap();
    let w = Tensor::from_vec(vec![10.0f32, 20.0, 30.0], &[3]).unwrap();
    v.mul(&w)
        .unwrap()
        .sum(&[], false)
        .unwrap()
        .backward()
        .unwrap();
    // sorted order is [1, 2, 0]: x[1] got weight 10, x[2] 20, x[0] 30
    assert_eq!(
        x.grad().unwrap().to_vec::<f32>().unwrap(),
        vec![30.0, 10.0, 20.0]
    );
}
