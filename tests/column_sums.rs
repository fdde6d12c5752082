//! Column sums (fast math): a column chunk whose only work is the sum of a
//! load contiguous along the columns (`x.sum(0)`, a mean, a bias gradient)
//! calls the runtime's `lf_column_sum_<f32|f64>` for its rows. The routine
//! must give the bits of the chunk's own loops: every case is computed once
//! with it and once over `x * 1` (which keeps the loops: the phase then reads
//! two inputs and multiplies), on the same values, and compared bit for bit.

use lazyfuse::{DType, MathMode, Tensor};

/// Values of mixed magnitudes with a NaN, an infinity and signed zeros.
fn values(n: usize) -> Vec<f32> {
    let mut xs: Vec<f32> = (0..n)
        .map(|i| (i as f32 * 0.731).sin() * [1.0, 1e3, 1e-3][i % 3] + (i % 7) as f32 * 0.25)
        .collect();
    xs[n / 2] = f32::NAN;
    xs[n / 3 + 1] = f32::INFINITY;
    xs[n - 1] = -0.0;
    xs[3] = -0.0;
    xs
}

fn bits(t: &Tensor) -> Vec<u64> {
    let t = t.realize().unwrap().to_dtype(DType::F64).unwrap();
    t.to_vec::<f64>()
        .unwrap()
        .iter()
        .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
        .collect()
}

type Columns = fn(&Tensor) -> Tensor;

/// The column reductions: over dim 0 of a matrix, its mean, and over the
/// middle dim of a batch.
const CASES: [(&str, Columns); 3] = [
    ("sum(0)", |x| x.sum(&[0], false).unwrap()),
    ("mean(0)", |x| x.mean(&[0], true).unwrap()),
    ("sum(-2)", |x| x.sum(&[-2], false).unwrap()),
];

#[test]
fn column_sums_give_the_chunk_loops_bits() {
    lazyfuse::set_math_mode(MathMode::Fast);
    for (rows, cols) in [
        (2, 256),
        (7, 1024),
        (8, 4096),
        (9, 300),
        (100, 4100),
        (1001, 1024),
    ] {
        for dt in [DType::F32, DType::F64] {
            for (name, f) in CASES {
                let shape: Vec<usize> = if name == "sum(-2)" {
                    vec![2, rows, cols]
                } else {
                    vec![rows, cols]
                };
                let n: usize = shape.iter().product();
                let x = Tensor::from_vec(values(n), &shape).unwrap();
                let x = x.to_dtype(dt).unwrap().realize().unwrap();
                let ones = Tensor::from_vec(vec![1.0f32; n], &shape).unwrap();
                let ones = ones.to_dtype(dt).unwrap().realize().unwrap();
                let at = format!("{name} {shape:?} {dt:?}");
                let run = f(&x);
                // (a mean widens each float32 before it sums)
                let symbol = match (dt, name) {
                    (DType::F64, _) => "lf_column_sum_f64",
                    (_, "mean(0)") => "lf_column_sum_widened_f32",
                    _ => "lf_column_sum_f32",
                };
                assert!(
                    run.clif_text().unwrap().contains(symbol),
                    "{at}: no {symbol}"
                );
                let inline = f(&x.mul(&ones).unwrap());
                assert!(
                    !inline.clif_text().unwrap().contains("lf_column_sum_"),
                    "{at}"
                );
                assert_eq!(bits(&run), bits(&inline), "{at}");
            }
        }
    }
}

/// Column reductions that keep the loops: of more than a load, a max, of a
/// broadcast row, and narrower than a chunk. (Exact math keeps its
/// compensated scalar sums: no column loop at all.)
#[test]
fn only_a_plain_column_sum_takes_the_routine() {
    let x = Tensor::from_vec(values(64 * 512), &[64, 512]).unwrap();
    let takes = |t: Tensor| t.clif_text().unwrap().contains("lf_column_sum_");
    lazyfuse::set_math_mode(MathMode::Fast);
    assert!(takes(x.sum(&[0], false).unwrap()));
    assert!(!takes(x.exp().unwrap().sum(&[0], false).unwrap()));
    assert!(!takes(x.amax(&[0], false).unwrap()));
    let row = Tensor::from_vec(values(512), &[1, 512]).unwrap();
    let wide = row.expand(&[64, 512]).unwrap();
    assert!(!takes(wide.sum(&[0], false).unwrap()));
    let narrow = Tensor::from_vec(values(64 * 40), &[64, 40]).unwrap();
    assert!(!takes(narrow.sum(&[0], false).unwrap()));
}
