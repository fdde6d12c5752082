//! Tiled transposes: a copy (or elementwise kernel) through a permuted view that the
//! scheduler runs in tiles must give exactly the permutation of its input, for tiled
//! shapes, shapes the tile does not divide (left untiled), 3-d permutes and small ones.

use lazyfuse::Tensor;

/// `x` of `shape` (row-major) read through `perm`, computed by index arithmetic.
fn permuted(x: &[f64], shape: &[usize], perm: &[usize]) -> Vec<f64> {
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let mut strides = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let n: usize = out_shape.iter().product();
    (0..n)
        .map(|mut i| {
            let mut src = 0;
            for d in (0..out_shape.len()).rev() {
                src += (i % out_shape[d]) * strides[perm[d]];
                i /= out_shape[d];
            }
            x[src]
        })
        .collect()
}

fn check(shape: &[usize], perm: &[usize]) {
    let n: usize = shape.iter().product();
    let x: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 7.0).collect();
    let want = permuted(&x, shape, perm);
    let perm_i: Vec<isize> = perm.iter().map(|&p| p as isize).collect();
    let t = Tensor::from_vec(x.clone(), shape).unwrap();
    let copy = t.permute(&perm_i).unwrap().contiguous().unwrap();
    assert_eq!(
        copy.to_vec::<f64>().unwrap(),
        want,
        "{shape:?} {perm:?} copy"
    );
    // An elementwise kernel through the same view, in float32 and int32.
    let plus = t.permute(&perm_i).unwrap().add(1.0).unwrap();
    let want_plus: Vec<f64> = want.iter().map(|v| v + 1.0).collect();
    assert_eq!(
        plus.to_vec::<f64>().unwrap(),
        want_plus,
        "{shape:?} {perm:?} +1"
    );
    let xi: Vec<i32> = (0..n as i32).collect();
    let ti = Tensor::from_vec(xi, shape).unwrap();
    let got = ti.permute(&perm_i).unwrap().contiguous().unwrap();
    let want_i: Vec<i32> = permuted(&(0..n).map(|i| i as f64).collect::<Vec<_>>(), shape, perm)
        .into_iter()
        .map(|v| v as i32)
        .collect();
    assert_eq!(
        got.to_vec::<i32>().unwrap(),
        want_i,
        "{shape:?} {perm:?} int32"
    );
}

#[test]
fn tiled_transposes_equal_the_permutation() {
    check(&[320, 768], &[1, 0]); // tile 256 × 16
    check(&[512, 384], &[1, 0]); // tile 64 × 16
    check(&[272, 400], &[1, 0]); // tile 16 × 16 (400 = 16 · 25)
    check(&[264, 256], &[1, 0]); // tile 8 × 8 (264 = 8 · 33)
    check(&[3, 256, 320], &[0, 2, 1]); // batched
    check(&[256, 3, 320], &[2, 1, 0]);
    check(&[128, 96, 8], &[1, 2, 0]);
}

#[test]
fn untiled_shapes_stay_correct() {
    check(&[517, 389], &[1, 0]); // no tile divides both
    check(&[5, 7], &[1, 0]); // small
    check(&[1, 1], &[1, 0]);
    check(&[2, 3, 4], &[2, 0, 1]);
    check(&[300, 1], &[1, 0]);
}

#[test]
fn a_large_transpose_is_tiled() {
    let x = Tensor::from_vec(vec![0f32; 512 * 384], &[512, 384]).unwrap();
    let text = x
        .t()
        .unwrap()
        .contiguous()
        .unwrap()
        .schedule_text()
        .unwrap();
    // [384, 512] in 64 × 16 tiles (256 does not divide 384): [6, 32, 64, 16].
    assert!(text.contains("dims [6, 32, 64, 16] parallel 4"), "{text}");
    let x = Tensor::from_vec(vec![0f32; 512 * 1024], &[512, 1024]).unwrap();
    let text = x
        .t()
        .unwrap()
        .contiguous()
        .unwrap()
        .schedule_text()
        .unwrap();
    // [1024, 512] in 256 × 16 tiles: [4, 32, 256, 16].
    assert!(text.contains("dims [4, 32, 256, 16] parallel 4"), "{text}");
}

/// The register-transpose path (`codegen/src/cpu/lower/vtranspose.rs`) moves 4- and
/// 8-byte elements as bits in 4×4 and 2×2 blocks; other widths, flipped sources
/// and in-place copies take the scalar path. [264, 328] splits into two thread
/// ranges that end mid-tile (86592 points, 64-point tiles), and so does [112, 768]
/// (86016 points, 4096-point tiles), so both paths meet.
#[test]
fn register_transposes_cover_widths_ranges_and_flips() {
    use lazyfuse::DType;
    for shape in [[264usize, 328], [112, 768], [512, 384], [8, 8]] {
        let n = shape[0] * shape[1];
        let x: Vec<f64> = (0..n).map(|i| (i % 251) as f64).collect();
        let want = permuted(&x, &shape, &[1, 0]);
        let src = Tensor::from_vec(x.clone(), &shape).unwrap();
        for dtype in [
            DType::F32,
            DType::I32,
            DType::U32,
            DType::F64,
            DType::I64,
            DType::F16,
            DType::U8,
            DType::Bool,
        ] {
            // (each realized in its own dtype: a cast fused into the copy
            // would make it a conversion, which no register transpose takes)
            let t = src.to_dtype(dtype).unwrap().realize().unwrap();
            let got = t.t().unwrap().contiguous().unwrap().realize().unwrap();
            let got = got.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            let want: Vec<f64> = if dtype == DType::Bool {
                want.iter().map(|&v| f64::from(v != 0.0)).collect()
            } else {
                want.clone()
            };
            assert_eq!(got, want, "{shape:?} {dtype:?}");
        }
        // A flipped source: stride -1 along the load's dim, so no vector loads.
        let flipped = src.flip(&[1]).unwrap().t().unwrap().contiguous().unwrap();
        let fx: Vec<f64> = (0..n)
            .map(|i| x[(i / shape[1]) * shape[1] + shape[1] - 1 - i % shape[1]])
            .collect();
        assert_eq!(
            flipped.to_vec::<f64>().unwrap(),
            permuted(&fx, &shape, &[1, 0]),
            "{shape:?} flipped"
        );
    }
    // Into an existing tensor (the write goes to its own buffer).
    let side = 256;
    let x: Vec<f32> = (0..side * side).map(|i| i as f32).collect();
    let src = Tensor::from_vec(x.clone(), &[side, side]).unwrap();
    let dst = Tensor::from_vec(vec![0f32; side * side], &[side, side]).unwrap();
    dst.copy_(&src.t().unwrap()).unwrap();
    let want: Vec<f32> = (0..side * side)
        .map(|i| x[(i % side) * side + i / side])
        .collect();
    assert_eq!(dst.to_vec::<f32>().unwrap(), want, "copy_");
}

/// A transposed copy whose output is larger than the caches (32 MiB and up)
/// runs its tiles as calls of the runtime's streamed transpose (streaming
/// stores), each call the tiles of a thread's range along one row of tiles:
/// 4-byte and 8-byte elements, a batch of transposes, and a shape whose
/// threads' ranges start and end inside rows of tiles (3 × 704 tiles cut into
/// the pool's chunks), each realized in its own dtype and compared element by
/// element.
#[test]
fn transposes_larger_than_the_caches_stream() {
    use lazyfuse::DType;
    let cases: [(&[usize], &[isize], DType, &str); 4] = [
        (&[2048, 4096], &[1, 0], DType::F32, "lf_transpose_stream_4"),
        (&[11264, 768], &[1, 0], DType::F32, "lf_transpose_stream_4"),
        (&[2048, 2048], &[1, 0], DType::I64, "lf_transpose_stream_8"),
        (
            &[2, 2048, 2048],
            &[0, 2, 1],
            DType::I32,
            "lf_transpose_stream_4",
        ),
    ];
    for (shape, perm, dtype, routine) in cases {
        let n: usize = shape.iter().product();
        let x: Vec<i32> = (0..n as i32).collect();
        let t = Tensor::from_vec(x, shape)
            .unwrap()
            .to_dtype(dtype)
            .unwrap()
            .realize()
            .unwrap();
        let copy = t.permute(perm).unwrap().contiguous().unwrap();
        assert!(copy.clif_text().unwrap().contains(routine), "{shape:?}");
        let copy = copy.realize().unwrap();
        let got = copy.to_dtype(DType::I64).unwrap().to_vec::<i64>().unwrap();
        let perm_u: Vec<usize> = perm.iter().map(|&p| p as usize).collect();
        let idx: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let want = permuted(&idx, shape, &perm_u);
        assert!(
            got.iter().zip(&want).all(|(&g, &w)| g as f64 == w),
            "{shape:?} {dtype:?}"
        );
    }
    // a smaller output keeps the register transposes
    let small = Tensor::from_vec(vec![0f32; 512 * 1024], &[512, 1024]).unwrap();
    let copy = small.t().unwrap().contiguous().unwrap();
    assert!(!copy.clif_text().unwrap().contains("lf_transpose_stream_"));
}
