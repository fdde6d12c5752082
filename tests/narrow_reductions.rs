//! float16 and bfloat16 reductions in the JIT's vector code: a row or column
//! extremum of a narrow tensor runs in float32 lanes (the extremum is one of
//! its inputs, exactly), and a column sum widens its narrow loads; both give the
//! reference interpreter's bits over every code of the dtype (subnormals,
//! infinities, signed zeros, NaNs with payloads in a few rows and columns), in
//! either math mode. A float16 or bfloat16 softmax over rows runs its phases
//! through routines with the bits of the vector loops, and over an output
//! larger than the caches streams its codes with the same bits. One test: the
//! backend is a process-wide setting.

use lazyfuse::half::{bf16, f16};
use lazyfuse::{CpuBackend, DType, MathMode, Tensor};

/// Rows and columns of the sweep: 256 × 256 = every 16-bit code once.
const SIDE: usize = 256;

/// Every 16-bit code of `dt` once, shuffled (an odd multiplier permutes the
/// codes), its NaNs made finite but for a few placed by hand: NaNs with
/// payloads in rows 3 and 7 and in column 5, rows of signed zeros (the
/// signs in a different order in each), a row of infinities of both signs and
/// a row of one value.
fn codes(dt: DType) -> Vec<u16> {
    let is_nan = |c: u16| match dt {
        DType::F16 => c & 0x7C00 == 0x7C00 && c & 0x03FF != 0,
        _ => c & 0x7F80 == 0x7F80 && c & 0x007F != 0,
    };
    let mut v: Vec<u16> = (0..SIDE * SIDE)
        .map(|i| (i as u32).wrapping_mul(40503) as u16)
        .map(|c| if is_nan(c) { c & 0x83FF } else { c })
        .collect();
    let (nan_a, nan_b) = match dt {
        DType::F16 => (0x7E01, 0xFD55),
        _ => (0x7FC1, 0xFF95),
    };
    v[3 * SIDE + 200] = nan_a;
    v[7 * SIDE + 9] = nan_b;
    v[7 * SIDE + 100] = nan_a;
    v[40 * SIDE + 5] = nan_b;
    for c in 0..SIDE {
        // (signs from bits of a hash of the column, a different bit per row)
        for (r, bit) in [(10, 3), (13, 5), (14, 7), (15, 11), (16, 13)] {
            let h = (c as u32).wrapping_mul(0x9E37_79B9) >> bit;
            v[r * SIDE + c] = if h & 1 == 1 { 0x8000 } else { 0 };
        }
        v[11 * SIDE + c] = if c % 2 == 0 { 0xFC00 } else { 0x7C00 };
        v[12 * SIDE + c] = 0x3C00;
    }
    if dt == DType::BF16 {
        // (bfloat16's infinities and one)
        for c in 0..SIDE {
            v[11 * SIDE + c] = if c % 2 == 0 { 0xFF80 } else { 0x7F80 };
            v[12 * SIDE + c] = 0x3F80;
        }
    }
    v
}

/// The sweep of `dt` as a [SIDE, SIDE] tensor.
fn sweep(dt: DType) -> Tensor {
    let c = codes(dt);
    match dt {
        DType::F16 => Tensor::from_vec(c.into_iter().map(f16::from_bits).collect(), &[SIDE, SIDE]),
        _ => Tensor::from_vec(c.into_iter().map(bf16::from_bits).collect(), &[SIDE, SIDE]),
    }
    .unwrap()
}

/// The bits of `y` (float16 or bfloat16 codes, float32 bits).
fn bits(y: &Tensor) -> Vec<u32> {
    match y.dtype() {
        DType::F16 => y
            .to_vec::<f16>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits().into())
            .collect(),
        DType::BF16 => y
            .to_vec::<bf16>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits().into())
            .collect(),
        _ => y
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect(),
    }
}

/// A reduction of the sweep.
type Reduction = fn(&Tensor) -> Tensor;

#[test]
fn narrow_reductions_match_the_interpreter_bit_for_bit() {
    let reductions: [(&str, Reduction); 7] = [
        ("amax over rows", |x| x.amax(&[1], true).unwrap()),
        ("amin over rows", |x| x.amin(&[1], false).unwrap()),
        ("amax over columns", |x| x.amax(&[0], false).unwrap()),
        ("amin over columns", |x| x.amin(&[0], true).unwrap()),
        // the extremum of a value cast to float32 and back
        ("amax of x as float32, rounded back", |x| {
            let m = x.to_dtype(DType::F32).unwrap().amax(&[0], false).unwrap();
            m.to_dtype(x.dtype()).unwrap()
        }),
        // summed in float32 from widened loads, rounded to the dtype
        ("sum over columns", |x| x.sum(&[0], false).unwrap()),
        ("mean over columns, as float32", |x| {
            let m = x.mean(&[0], false).unwrap();
            m.to_dtype(DType::F32).unwrap()
        }),
    ];
    for math in [MathMode::Fast, MathMode::Exact] {
        lazyfuse::set_math_mode(math);
        for dt in [DType::F16, DType::BF16] {
            for (name, f) in &reductions {
                let run = |b: CpuBackend| {
                    lazyfuse::set_cpu_backend(b);
                    bits(&f(&sweep(dt)).realize().unwrap())
                };
                let (want, got) = (run(CpuBackend::Interp), run(CpuBackend::Jit));
                // A float32 column sum in fast math adds blocks of rows in
                // float32 first: compared as values, to the dtype's precision.
                // A sum's NaN is any NaN: which operand's payload an addition
                // of two NaNs keeps is the compiler's choice in the
                // interpreter's Rust code.
                let sums = name.contains("over columns") && !name.contains("am");
                let value = |c: u32| -> f32 {
                    match (dt, name.contains("float32")) {
                        (_, true) => f32::from_bits(c),
                        (DType::F16, _) => f16::from_bits(c as u16).to_f32(),
                        _ => bf16::from_bits(c as u16).to_f32(),
                    }
                };
                let bad: Vec<String> = want
                    .iter()
                    .zip(&got)
                    .enumerate()
                    .filter(|(_, (&a, &b))| {
                        let (va, vb) = (value(a), value(b));
                        if !sums {
                            a != b
                        } else if va.is_nan() || vb.is_nan() {
                            va.is_nan() != vb.is_nan()
                        } else if math == MathMode::Fast {
                            let ulp = if dt == DType::F16 { 1e-3 } else { 8e-3 };
                            va != vb && (va - vb).abs() > ulp * va.abs().max(1e-6)
                        } else {
                            a != b
                        }
                    })
                    .take(10)
                    .map(|(i, (a, b))| format!("#{i}: interpreter {a:#06x}, JIT {b:#06x}"))
                    .collect();
                assert!(bad.is_empty(), "{math:?} {dt} {name}:\n{}", bad.join("\n"));
            }
        }
    }
    // The extrema run in vector code: the columns' in 4 narrow lanes per
    // load in both math modes, the rows' in fast math only, through the
    // routine that widens a block of the row at a time.
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    for math in [MathMode::Fast, MathMode::Exact] {
        lazyfuse::set_math_mode(math);
        for dt in [DType::F16, DType::BF16] {
            let x = sweep(dt).realize().unwrap();
            let rows = x.amax(&[1], false).unwrap().clif_text().unwrap();
            let cols = x.amin(&[0], false).unwrap().clif_text().unwrap();
            assert!(cols.contains("uload16x4"), "{math:?} {dt} columns:\n{cols}");
            let routine = format!("lf_reduce_max_{}", suffix(dt));
            assert_eq!(
                rows.contains(&routine),
                math == MathMode::Fast,
                "{math:?} {dt} rows:\n{rows}"
            );
        }
    }
    lazyfuse::set_math_mode(MathMode::Fast);
    narrow_softmax_rows_run_as_routines_with_the_loops_bits();
    large_narrow_softmax_streams_its_codes();
}

/// Whether a row of `cols` points of `dt` takes `routine`: the reductions
/// (but a sum of exps) and a bfloat16 row's affine output only from rows of
/// 256 points (128 for a float16 row's reductions), shorter rows keeping the
/// kernel's own loop (`lazyfuse_codegen`'s `MIN_ROUTINE_ROW`).
fn takes_routine(routine: &str, dt: DType, cols: usize) -> bool {
    let reduction = routine.starts_with("lf_reduce_") && !routine.starts_with("lf_reduce_sumexp_");
    if reduction {
        cols >= if dt == DType::F16 { 128 } else { 256 }
    } else if routine.starts_with("lf_row_affine_") {
        dt == DType::F16 || cols >= 256
    } else {
        true
    }
}

/// The routines' suffix of a narrow dtype.
fn suffix(dt: DType) -> &'static str {
    if dt == DType::F16 {
        "f16"
    } else {
        "bf16"
    }
}

/// A float16 or bfloat16 softmax over rows (fast math) runs its phases as
/// routines: the max through `lf_reduce_max_<dtype>`, the exps through
/// `lf_row_exp_<dtype>` (the codes widened in the routine, its float32 exps in
/// the kept row's slot or the float32 output); a
/// log-softmax's sum of exps through `lf_reduce_sumexp_<dtype>`; a layer
/// norm's mean and variance through `lf_reduce_sum_<dtype>_f64` and
/// `lf_reduce_sumsq_<dtype>_widened`, its output (weighted and biased or not)
/// through `lf_row_affine_<dtype>`. The same
/// softmax of `x` times a tensor of ones in float32, rounded back (the same
/// values; the phases then compute a product and keep the kernel's own
/// vector loops) gives the reference bits, on rows
/// of every length class (one step of the loop, a scalar tail, long rows),
/// NaN payloads, infinities and signed zeros among them. (Called by the one
/// test: the backend and math mode are process-wide.)
fn narrow_softmax_rows_run_as_routines_with_the_loops_bits() {
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    lazyfuse::set_math_mode(MathMode::Fast);
    type Rowwise = fn(&Tensor) -> Tensor;
    // (each op and the routines it calls, `{}` the dtype's suffix, `?` where
    // the scheduler may cut the phase off)
    let ops: [(&str, Rowwise, &[&str]); 6] = [
        (
            "softmax",
            |x| x.softmax(1).unwrap(),
            &["reduce_max_{}", "row_exp_{}"],
        ),
        (
            "log_softmax",
            |x| x.log_softmax(1).unwrap(),
            &["reduce_max_{}", "reduce_sumexp_{}"],
        ),
        (
            "softmax as float32",
            |x| x.to_dtype(DType::F32).unwrap().softmax(1).unwrap(),
            &["reduce_max_{}", "row_exp_{}"],
        ),
        ("amin", |x| x.amin(&[1], true).unwrap(), &["reduce_min_{}"]),
        (
            "layer_norm",
            |x| {
                let cols = x.shape()[1];
                lazyfuse::nn::functional::layer_norm(x, &[cols], None, None, 1e-5).unwrap()
            },
            &[
                "reduce_sum_{}_f64",
                "reduce_sumsq_{}_widened",
                "?row_affine_{}",
            ],
        ),
        (
            "layer_norm weighted",
            |x| {
                let cols = x.shape()[1];
                let ramp = |a: f64, b: f64| {
                    Tensor::arange(0.0, cols as f64, 1.0, x.dtype())
                        .unwrap()
                        .mul(a)
                        .unwrap()
                        .add(b)
                        .unwrap()
                        .realize()
                        .unwrap()
                };
                let (w, b) = (ramp(0.01, 0.5), ramp(-0.003, 0.25));
                lazyfuse::nn::functional::layer_norm(x, &[cols], Some(&w), Some(&b), 1e-5).unwrap()
            },
            &[
                "reduce_sum_{}_f64",
                "reduce_sumsq_{}_widened",
                "?row_affine_{}",
            ],
        ),
    ];
    for dt in [DType::F16, DType::BF16] {
        let codes = codes(dt);
        for cols in [16, 17, 40, 128, 256, 257, 1000, 4099] {
            let rows = codes.len() / cols;
            let c = codes[..rows * cols].to_vec();
            let x = match dt {
                DType::F16 => {
                    Tensor::from_vec(c.into_iter().map(f16::from_bits).collect(), &[rows, cols])
                }
                _ => Tensor::from_vec(c.into_iter().map(bf16::from_bits).collect(), &[rows, cols]),
            }
            .unwrap()
            .realize()
            .unwrap();
            let one = Tensor::ones(&[rows, cols], DType::F32).realize().unwrap();
            // (the product in float32, rounded back: a float16 product would
            // keep the phases out of the vector loops altogether)
            let same = x
                .to_dtype(DType::F32)
                .unwrap()
                .mul(&one)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            for (name, f, routines) in &ops {
                let run = f(&x);
                let text = run.clif_text().unwrap();
                let sfx = suffix(dt);
                let looped = f(&same);
                let loop_text = looped.clif_text().unwrap();
                for routine in routines.iter() {
                    // (`?`: the output phase's routine, where the scheduler
                    // keeps the phase in the kernel: over few long rows it
                    // makes the output a kernel of its own)
                    let optional = routine.starts_with('?') && rows < 16;
                    let routine =
                        format!("lf_{}", routine.trim_start_matches('?').replace("{}", sfx));
                    if !takes_routine(&routine, dt, cols) {
                        assert!(
                            !text.contains(&routine),
                            "{dt} {name} {cols}: {routine}\n{text}"
                        );
                        continue;
                    }
                    assert!(
                        text.contains(&routine) || optional,
                        "{dt} {name} {cols}: {routine}\n{text}"
                    );
                    assert!(
                        !loop_text.contains(&routine),
                        "{dt} {name} {cols}: {routine}\n{loop_text}"
                    );
                }
                assert!(
                    loop_text.contains("uload16x4"),
                    "{dt} {name} {cols}:\n{loop_text}"
                );
                let (got, want) = (
                    bits(&run.realize().unwrap()),
                    bits(&looped.realize().unwrap()),
                );
                // A NaN is any NaN: the loop subtracts the max from each
                // value in its own code, the routine in compiled Rust, and
                // which NaN's payload `NaN - NaN` keeps is each compiler's.
                let nan = |c: u32| match run.dtype() {
                    DType::F16 => f16::from_bits(c as u16).is_nan(),
                    DType::BF16 => bf16::from_bits(c as u16).is_nan(),
                    _ => f32::from_bits(c).is_nan(),
                };
                let bad: Vec<String> = want
                    .iter()
                    .zip(&got)
                    .enumerate()
                    .filter(|(_, (&a, &b))| a != b && !(nan(a) && nan(b)))
                    .take(10)
                    .map(|(i, (a, b))| format!("#{i}: loop {a:#010x}, routines {b:#010x}"))
                    .collect();
                assert!(bad.is_empty(), "{dt} {name} {cols}:\n{}", bad.join("\n"));
            }
        }
    }
}

/// A float16 or bfloat16 softmax whose output is one that passes the caches
/// (`lazyfuse_codegen`'s `STREAM_BYTES`: 16 MiB) narrows rows of 2 KiB of
/// codes and more with `lf_narrow_<dtype>_stream` and rows of 1 KiB with the
/// plain `lf_narrow_<dtype>`; either way its first and last rows have the
/// codes that the same rows give alone in a small tensor, whose kernel
/// narrows plainly: the sweep's codes (NaN payloads, infinities, signed
/// zeros) cycled through the rows. (Called by the one test.)
fn large_narrow_softmax_streams_its_codes() {
    lazyfuse::set_cpu_backend(CpuBackend::Jit);
    lazyfuse::set_math_mode(MathMode::Fast);
    for dt in [DType::F16, DType::BF16] {
        let codes = codes(dt);
        let tensor = |c: &[u16], rows: usize, cols: usize| {
            let c = c.to_vec();
            match dt {
                DType::F16 => {
                    Tensor::from_vec(c.into_iter().map(f16::from_bits).collect(), &[rows, cols])
                }
                _ => Tensor::from_vec(c.into_iter().map(bf16::from_bits).collect(), &[rows, cols]),
            }
            .unwrap()
            .realize()
            .unwrap()
        };
        for (cols, streams) in [(4096, true), (1024, true), (512, false)] {
            let rows = (16 << 20) / 2 / cols;
            let all: Vec<u16> = codes.iter().cycle().take(rows * cols).copied().collect();
            let y = tensor(&all, rows, cols).softmax(1).unwrap();
            let text = y.clif_text().unwrap();
            let stream = format!("lf_narrow_{}_stream", suffix(dt));
            assert_eq!(
                text.contains(&stream),
                streams,
                "{dt} rows of {cols}:\n{text}"
            );
            let got = bits(&y.realize().unwrap());
            for first in [0, rows - 16] {
                let part = &all[first * cols..(first + 16) * cols];
                let want = bits(
                    &tensor(part, 16, cols)
                        .softmax(1)
                        .unwrap()
                        .realize()
                        .unwrap(),
                );
                assert!(
                    got[first * cols..(first + 16) * cols] == want[..],
                    "{dt} rows of {cols}, from row {first}"
                );
            }
        }
    }
}
