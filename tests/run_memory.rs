//! Where the kernels' routines meet memory, read off their Cranelift text: the
//! one routine per row that fetches a row kernel's next row, the inputs a
//! streaming elementwise kernel asks for ahead of its runs, and the stack
//! slots the routines work in, placed on cache lines. (These are hints and
//! placements: the values are the same either way, which `output_runs.rs`
//! checks bit for bit.)

use lazyfuse::{DType, MathMode, Tensor};
use std::sync::Mutex;

/// Held while a test sets the math mode and reads a kernel.
static MODE: Mutex<()> = Mutex::new(());

/// `n` values of a smooth wave (the hints do not depend on them).
fn wave(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.37).sin() * 4.0).collect()
}

/// For each call of `routine` in `clif`, whether its last argument (the next
/// row a routine fetches) is a constant zero: no row.
fn fetches_none(clif: &str, routine: &str) -> Vec<bool> {
    let import = clif
        .lines()
        .find_map(|l| {
            let (i, name) = l.strip_prefix("; import ")?.split_once(": ")?;
            (name == routine).then(|| i.to_string())
        })
        .unwrap_or_else(|| panic!("{routine} is not called:\n{clif}"));
    let call = format!("call fn{import}(");
    clif.lines()
        .filter_map(|l| {
            let (args, comment) = l.split_once(&call)?.1.split_once(')')?;
            let last = args.rsplit(", ").next()?.trim();
            let consts = comment.trim_start().strip_prefix(';').unwrap_or("");
            Some(
                consts
                    .split(", ")
                    .any(|c| c.trim() == format!("{last} = 0")),
            )
        })
        .collect()
}

/// One routine per row fetches a softmax kernel's next row: the exp routine,
/// line by line, over rows of at most 32 KiB (float32 and float64), while the
/// max routine fetches none and, its row in the cache, is the one that steps
/// blocks of it side by side; over longer rows neither fetches, and the max
/// routine steps the row in order. Float16 and bfloat16 rows alike, their exp
/// routine reading the codes. A layer norm, with no phase run, keeps its first
/// reduction routine fetching.
#[test]
fn one_routine_fetches_the_next_row() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    for (dt, cols, exp_fetches) in [
        (DType::F32, 1024, true),
        (DType::F32, 4096, true),
        (DType::F64, 4096, true),
        (DType::F32, 16384, false),
        (DType::F64, 8192, false),
    ] {
        let x = Tensor::ones(&[4, cols], dt).realize().unwrap();
        let clif = x.softmax(1).unwrap().clif_text().unwrap();
        let name = if dt == DType::F32 { "f32" } else { "f64" };
        let what = format!("softmax {dt:?} [4, {cols}]");
        let cached = if exp_fetches { "cached_" } else { "" };
        let max = fetches_none(&clif, &format!("lf_reduce_max_{cached}{name}"));
        let exp = fetches_none(&clif, &format!("lf_row_exp_{name}"));
        assert_eq!(max, vec![true], "{what}: max");
        assert_eq!(exp, vec![!exp_fetches], "{what}: exp");
    }
    // Float16 and bfloat16 rows: the exp routine over the codes (a kept
    // row's run) fetches, the max routine none.
    for (dt, name) in [(DType::F16, "f16"), (DType::BF16, "bf16")] {
        for cols in [1024, 4096] {
            let x = Tensor::ones(&[4, cols], dt).realize().unwrap();
            let clif = x.softmax(1).unwrap().clif_text().unwrap();
            let what = format!("softmax {dt:?} [4, {cols}]");
            let max = fetches_none(&clif, &format!("lf_reduce_max_{name}"));
            let exp = fetches_none(&clif, &format!("lf_row_exp_{name}"));
            assert_eq!(max, vec![true], "{what}: max");
            assert_eq!(exp, vec![false], "{what}: exp\n{clif}");
        }
    }
    let x = Tensor::ones(&[4, 1024], DType::F32).realize().unwrap();
    let y = lazyfuse::nn::functional::layer_norm(&x, &[1024], None, None, 1e-5).unwrap();
    let clif = y.clif_text().unwrap();
    let first = fetches_none(&clif, "lf_reduce_sum_f32_f64");
    assert_eq!(first, vec![false], "layer norm's mean:\n{clif}");
}

/// How many calls of `routine` `clif` makes (none where it imports none).
fn calls_of(clif: &str, routine: &str) -> usize {
    let Some(import) = clif.lines().find_map(|l| {
        let (i, name) = l.strip_prefix("; import ")?.split_once(": ")?;
        (name == routine).then(|| i.to_string())
    }) else {
        return 0;
    };
    let call = format!("call fn{import}(");
    clif.lines().filter(|l| l.contains(&call)).count()
}

/// A streaming elementwise kernel with an output run asks for the lines of
/// each input it loads along the row a few runs ahead, once per run: W1's
/// shape reads `a` twice, `b` and `c` once (three inputs, three calls), a
/// broadcast row (the same element along the row) is not a stream, and a
/// kernel whose buffers fit in L1 asks for none.
#[test]
fn streaming_runs_fetch_their_inputs_ahead() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    let w1 = |n: usize| {
        let t = |s: f32| {
            let v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37 + s).sin()).collect();
            Tensor::from_vec(v, &[n]).unwrap()
        };
        let (a, b, c) = (t(0.1), t(0.2), t(0.3));
        let y = a.mul(&b).unwrap().add(&c).unwrap().relu().unwrap();
        y.mul(0.5).unwrap().add(&a).unwrap().tanh().unwrap()
    };
    let clif = w1(1 << 14).clif_text().unwrap();
    assert!(clif.contains("lf_run_tanh_f32"), "{clif}");
    assert_eq!(calls_of(&clif, "lf_prefetch_lines"), 3, "{clif}");
    assert_eq!(
        calls_of(&w1(1000).clif_text().unwrap(), "lf_prefetch_lines"),
        0
    );
    let x = Tensor::from_vec(wave(1 << 14), &[16, 1024]).unwrap();
    let col = Tensor::from_vec(wave(16), &[16, 1]).unwrap();
    let clif = x.mul(&col).unwrap().exp().unwrap().clif_text().unwrap();
    assert!(clif.contains("lf_run_exp_f32"), "{clif}");
    assert_eq!(calls_of(&clif, "lf_prefetch_lines"), 1, "{clif}");
}

/// The stack slots the routines read and write 64 bytes at a time (a float16
/// softmax's kept row, a float16 tile program's tiles, a float16 output
/// run's tile) are rounded up to a cache line at run time: each slot's
/// address, taken from `stack_addr`, goes through `+ 63` and `& -64` before
/// any use (Cranelift keeps slot alignments of 16 bytes only).
#[test]
fn routine_slots_sit_on_cache_lines() {
    let _g = MODE.lock().unwrap_or_else(|p| p.into_inner());
    lazyfuse::set_math_mode(MathMode::Fast);
    let x16 = Tensor::from_vec(wave(1 << 14), &[16, 1024])
        .unwrap()
        .to_dtype(DType::F16)
        .unwrap()
        .realize()
        .unwrap();
    let softmax = x16.softmax(1).unwrap().clif_text().unwrap();
    let tiles = x16.mul(&x16).unwrap().tanh().unwrap().clif_text().unwrap();
    let run = x16.exp().unwrap().mul(&x16).unwrap().exp().unwrap();
    let run = run.clif_text().unwrap();
    for (what, clif) in [("kept row", softmax), ("tiles", tiles), ("run tile", run)] {
        let lines: Vec<&str> = clif.lines().collect();
        let big = |l: &str| {
            l.split_once("= explicit_slot ")
                .and_then(|(_, r)| r.split(',').next()?.trim().parse::<u32>().ok())
                .is_some_and(|bytes| bytes > 64)
        };
        let slots: Vec<&str> = lines
            .iter()
            .filter(|l| big(l))
            .filter_map(|l| l.trim().split(' ').next())
            .collect();
        assert!(!slots.is_empty(), "{what}: no slot\n{clif}");
        for slot in slots {
            let uses: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].ends_with(&format!("stack_addr.i64 {slot}")))
                .collect();
            assert!(!uses.is_empty(), "{what}: {slot} unused");
            for i in uses {
                let next = &lines[i + 1..(i + 5).min(lines.len())];
                let rounded = next.iter().any(|l| l.contains("= 63"))
                    && next
                        .iter()
                        .any(|l| l.contains("band") && l.contains("= -64"));
                assert!(rounded, "{what}: {slot} at line {i} is not rounded\n{clif}");
            }
        }
    }
}
