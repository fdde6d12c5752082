//! The schedule cache (a graph's structure after the passes → its schedule and
//! kernels, `src/realize/schedule_cache.rs`) answers the graphs that the realize
//! cache does not record, those whose schedule stores into a donated buffer: a
//! repeated in-place step is scheduled once. Its key is structural, so graphs that
//! differ only where the key's words do not spell an op out (a reduction's axes)
//! or in a float zero's sign never share a schedule.

use lazyfuse::{last_realize_stats, Tensor};
use std::sync::Mutex;

/// `last_realize_stats` is per thread, the caches process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// A realized `[4, 4]` float tensor holding `start..start + 16`.
fn square(start: f32) -> Tensor {
    let x = Tensor::from_vec((0..16).map(|v| v as f32 + start).collect(), &[4, 4]).unwrap();
    x.realize().unwrap();
    x
}

/// Writes `row` into row 0 of `x` in place, realizes, and returns row 0 and
/// whether the realize scheduled the graph (a schedule cache miss).
fn write_row(x: &Tensor, row: &Tensor) -> (Vec<f32>, bool) {
    x.select(0, 0).unwrap().copy_(row).unwrap();
    x.realize().unwrap();
    let scheduled = last_realize_stats().scheduled;
    let first = x.select(0, 0).unwrap().to_vec::<f32>().unwrap();
    (first, scheduled)
}

#[test]
fn a_repeated_in_place_step_is_scheduled_once_and_never_confused() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let x = square(0.0);
    let z = square(100.0);
    // Column sums and row sums of `z` have the same shape and dtype: only the
    // reduction's axes tell the two graphs apart.
    let columns: Vec<f32> = (0..4)
        .map(|j| (0..4).map(|i| 100.0 + (4 * i + j) as f32).sum())
        .collect();
    let rows: Vec<f32> = (0..4)
        .map(|i| (0..4).map(|j| 100.0 + (4 * i + j) as f32).sum())
        .collect();
    for step in 0..3 {
        let (got, scheduled) = write_row(&x, &z.sum(&[0], false).unwrap());
        assert_eq!(got, columns, "step {step}");
        assert_eq!(scheduled, step == 0, "step {step}: column sums");
        assert_eq!(
            last_realize_stats().in_place,
            1,
            "the write donates x's buffer"
        );
        let (got, scheduled) = write_row(&x, &z.sum(&[1], false).unwrap());
        assert_eq!(got, rows, "step {step}");
        assert_eq!(scheduled, step == 0, "step {step}: row sums");
    }
    // `0.0 == -0.0`, yet their kernels differ: each keeps its own schedule.
    for step in 0..2 {
        let (pos, _) = write_row(&x, &z.select(0, 1).unwrap().mul(0.0).unwrap());
        let (neg, scheduled) = write_row(&x, &z.select(0, 1).unwrap().mul(-0.0).unwrap());
        assert!(
            pos.iter().all(|v| *v == 0.0 && v.is_sign_positive()),
            "{pos:?}"
        );
        assert!(
            neg.iter().all(|v| *v == 0.0 && v.is_sign_negative()),
            "{neg:?}"
        );
        assert_eq!(scheduled, step == 0, "step {step}: the -0.0 write");
    }
}
