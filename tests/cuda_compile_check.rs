//! The CUDA compile check (`set_cuda_compile_check`) over every kernel layout and
//! dtype: one thread per point, groups of four (vector loads of 1-, 2-, 4- and 8-byte
//! elements), and a block per point (warp shuffles of every accumulator type), each
//! compiled by NVRTC to an sm_90 CUBIN while the values come from the JIT. Where
//! NVRTC is missing the test prints why and passes, unless
//! `LAZYFUSE_REQUIRE_NVRTC=1` (CI).

use lazyfuse::{DType, Tensor};

#[test]
fn every_layout_and_dtype_compiles_for_sm_90() {
    if let Err(e) = lazyfuse_runtime::cuda::nvrtc::global() {
        assert!(
            std::env::var_os("LAZYFUSE_REQUIRE_NVRTC").is_none_or(|v| v != "1"),
            "LAZYFUSE_REQUIRE_NVRTC=1 but NVRTC is unusable: {e}"
        );
        eprintln!("skipped: {e}");
        return;
    }
    lazyfuse::set_cuda_compile_check(true);
    let (units_before, _) = lazyfuse::cuda_compile_check_counts();
    let dtypes = [
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
    ];
    for dt in dtypes {
        let v: Vec<f64> = (0..3 * 128).map(|i| (i % 7) as f64).collect();
        let a = Tensor::from_vec(v, &[3, 128])
            .unwrap()
            .to_dtype(dt)
            .unwrap();
        let mut outs = vec![
            a.add(&a).unwrap(), // groups of four
            a.narrow(1, 1, 100)
                .unwrap()
                .mul(&a.narrow(1, 2, 100).unwrap())
                .unwrap(), // one per point
            a.amax(&[-1], false).unwrap(), // a block per point
            a.amin(&[-1], false).unwrap(),
            a.sum(&[-1], false).unwrap(),
        ];
        if dt != DType::Bool {
            outs.push(a.argmax(Some(-1), false).unwrap()); // one thread per point
            outs.push(a.prod(&[-1], false).unwrap());
            outs.push(a.cumsum(-1).unwrap());
        } else {
            outs.push(a.any(&[-1], false).unwrap());
            outs.push(a.all(&[-1], false).unwrap());
        }
        for t in outs {
            t.realize().unwrap_or_else(|e| panic!("{dt}: {e}"));
        }
    }
    let (units_after, _) = lazyfuse::cuda_compile_check_counts();
    lazyfuse::set_cuda_compile_check(false);
    assert!(units_after > units_before, "nothing was compiled");
}
