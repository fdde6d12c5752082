//! Golden tests of every IR level for representative graphs: the graph as built,
//! after the passes, the schedule (kernels with the nodes each holds, and their loop
//! IR), the Cranelift IR and the CUDA C, in `tests/golden/kernels/<name>.txt`
//! (`LAZYFUSE_BLESS=1` rewrites them). Each case also asserts its kernel count.
//! (Values are the differential tests' business: `tests/jit_differential.rs`.)

use lazyfuse::{DType, Tensor};
#[path = "support/golden.rs"]
mod golden;

/// Checks the golden text of `t` and asserts its kernel count is within `kernels`.
fn case(name: &str, t: &Tensor, kernels: std::ops::RangeInclusive<usize>) {
    lazyfuse::set_verify(true);
    let device = match t.device() {
        d if d.is_cpu() => String::new(),
        d => format!("== device: {d} ==\n"),
    };
    let text = format!(
        "{device}== graph as built ==\n{}== graph after passes ==\n{}== schedule ==\n{}== Cranelift IR ==\n{}== CUDA C ==\n{}",
        t.graph_text(),
        t.optimized_graph_text(),
        t.schedule_text().unwrap(),
        t.clif_text().unwrap(),
        t.cuda_text().unwrap()
    );
    golden::check(&format!("kernels/{name}"), &text);
    let n = t.kernel_count().unwrap();
    assert!(
        kernels.contains(&n),
        "{name}: {n} kernels, expected {kernels:?}\n{}",
        t.schedule_text().unwrap()
    );
}

fn ramp(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| ((i * 7 % 11) as f32 - 5.0) * 0.25).collect();
    Tensor::from_vec(v, shape).unwrap()
}

#[test]
fn elementwise_chain_is_one_kernel() {
    let (a, b, c) = (
        ramp(&[64]),
        ramp(&[64]).exp().unwrap(),
        ramp(&[64]).neg().unwrap(),
    );
    let (b, c) = (b.contiguous().unwrap(), c.contiguous().unwrap());
    b.realize().unwrap();
    c.realize().unwrap();
    let w1 = a.mul(&b).unwrap().add(&c).unwrap().relu().unwrap();
    let w1 = w1.mul(0.5).unwrap().add(&a).unwrap().tanh().unwrap();
    case("elementwise_chain", &w1, 1..=1);
}

/// W9's chain (sqrt, log, exp and tanh): one kernel whose runs take passes
/// (`vchain`): the vector loop up to `log`'s argument, the `log` routine, a
/// loop from `log`'s value read back to `exp`'s argument, the `exp` and `tanh`
/// routines.
#[test]
fn transcendental_chain_runs_in_passes() {
    let x = ramp(&[64]);
    let v = x.mul(1.5).unwrap().add(0.25).unwrap().abs().unwrap();
    let v = v.sqrt().unwrap().sub(0.5).unwrap();
    let v = v.mul(&v).unwrap().add(1.0).unwrap().log().unwrap();
    let v = v.maximum(&Tensor::scalar(0.1f32)).unwrap();
    let y = v.div(3.0).unwrap().exp().unwrap().tanh().unwrap();
    case("transcendental_chain", &y, 1..=1);
}

/// A chain of expensive ops with no routine (sqrt, two exp2): one kernel
/// whose vector loop takes four vectors per step, expression by expression,
/// each expensive op's vectors anchored by a stack store (the Cranelift IR's
/// interleaved tier).
#[test]
fn chain_without_routines_interleaves_vectors() {
    let x = ramp(&[64]);
    let v = x.mul(1.5).unwrap().add(0.25).unwrap().abs().unwrap();
    let v = v.sqrt().unwrap().sub(0.5).unwrap();
    let v = v.mul(&v).unwrap().add(1.0).unwrap().exp2().unwrap();
    let y = v.div(3.0).unwrap().exp2().unwrap();
    case("interleaved_chain", &y, 1..=1);
}

#[test]
fn broadcast_is_one_kernel() {
    let x = ramp(&[4, 3]);
    let row = ramp(&[1, 3]);
    let col = ramp(&[4, 1]);
    let y = x.add(&row).unwrap().mul(&col).unwrap();
    case("broadcast", &y, 1..=1);
}

#[test]
fn reduce_with_prologue_and_epilogue_is_one_kernel() {
    let a = ramp(&[5, 6]);
    let b = ramp(&[5, 6]);
    let y = a
        .mul(&b)
        .unwrap()
        .sum(&[-1], false)
        .unwrap()
        .mul(2.0)
        .unwrap()
        .exp()
        .unwrap();
    case("reduce_epilogue", &y, 1..=1);
}

#[test]
fn softmax_takes_at_most_two_kernels() {
    let x = ramp(&[3, 8]);
    case("softmax", &x.softmax(-1).unwrap(), 1..=2);
    case("log_softmax", &x.log_softmax(-1).unwrap(), 1..=2);
}

#[test]
fn layernorm_takes_at_most_two_kernels() {
    let x = ramp(&[4, 8]);
    let w = ramp(&[8]);
    let b = ramp(&[8]).neg().unwrap();
    let mean = x.mean(&[-1], true).unwrap();
    let var = x.var(&[-1], 0, true).unwrap();
    let y = x
        .sub(&mean)
        .unwrap()
        .div(&var.add(1e-5).unwrap().sqrt().unwrap())
        .unwrap()
        .mul(&w)
        .unwrap()
        .add(&b)
        .unwrap();
    case("layernorm", &y, 1..=2);
}

#[test]
fn view_chain_reads_through_one_index_map() {
    let base = Tensor::arange(0.0, 24.0, 1.0, DType::F32).unwrap();
    let v = base
        .view(&[2, 3, 4])
        .unwrap()
        .permute(&[2, 0, 1])
        .unwrap()
        .select(0, 1)
        .unwrap()
        .exp()
        .unwrap();
    case("view_chain", &v, 1..=1);
}

#[test]
fn transpose_copy_and_transpose_add_are_one_kernel() {
    let x = ramp(&[6, 5]);
    case(
        "transpose_copy",
        &x.t().unwrap().contiguous().unwrap(),
        1..=1,
    );
    let y = ramp(&[5, 6]);
    case("transpose_add", &x.t().unwrap().add(&y).unwrap(), 1..=1);
}

#[test]
fn mixed_dtypes_are_one_kernel() {
    let i = Tensor::arange(0.0, 16.0, 1.0, DType::I32).unwrap();
    let h = Tensor::arange(0.0, 8.0, 0.5, DType::F16).unwrap();
    i.realize().unwrap();
    h.realize().unwrap();
    let y = i.mul(0.5).unwrap().add(&h).unwrap();
    case("mixed_dtypes", &y, 1..=1);
}

#[test]
fn matmul_with_bias() {
    let a = ramp(&[3, 4]);
    let b = ramp(&[4, 5]);
    let bias = ramp(&[5]);
    let y = a.matmul(&b).unwrap().add(&bias).unwrap().relu().unwrap();
    // the bias and the ReLU are the product's epilogue: one step
    case("matmul_bias", &y, 1..=1);
}

#[test]
fn write_through_a_view() {
    let base = ramp(&[3, 4]);
    base.realize().unwrap();
    base.select(0, 1).unwrap().add_(1).unwrap();
    case("write_view", &base, 1..=2);
}

#[test]
fn gather_reads_through_its_index() {
    let x = ramp(&[3, 4]);
    let idx = Tensor::from_vec(vec![3i64, 0, 1, 3, 2, 2], &[3, 2]).unwrap();
    let y = x.gather(1, &idx).unwrap().mul(2.0).unwrap();
    case("gather", &y, 1..=1);
}

/// Long rows: the CUDA C shares each row's reductions among a block's threads
/// (`lf_block_reduce`), softmax's three phases included.
#[test]
fn long_row_reductions_share_a_block_in_cuda() {
    let x = ramp(&[2, 256]);
    let s = x.softmax(-1).unwrap();
    case("softmax_long_rows", &s, 1..=2);
    assert!(s.cuda_text().unwrap().contains("lf_block_reduce"));
    // Column sums of many columns: one thread per column (coalesced reads).
    let cols = ramp(&[128, 2048]).sum(&[0], false).unwrap();
    let text = cols.cuda_text().unwrap();
    assert!(!text.contains("lf_block_reduce"), "{text}");
}

/// A realize on a GPU schedules differently: an integer matmul is a generated kernel
/// (a reduction over the contracted dim; its epilogue is a kernel of its own, as
/// after softmax) instead of an extern step, and a long whole-tensor sum is split into partials and their sum. Only text
/// is made here, so the host emulation of `cuda:0` serves where no GPU is (it needs no
/// compiler to hold the inputs).
#[test]
fn device_schedules_matmul_kernels_and_split_sums() {
    use lazyfuse::Device;
    if Tensor::scalar(0).to_device(Device::cuda(0)).is_err() {
        lazyfuse::set_cuda_emulation(true);
    }
    let gpu = |t: Tensor| t.to_device(Device::cuda(0)).unwrap();
    let a = gpu(Tensor::from_vec((0..12).collect::<Vec<i32>>(), &[3, 4]).unwrap());
    let b = gpu(Tensor::from_vec((0..8).collect::<Vec<i32>>(), &[4, 2]).unwrap());
    let y = a.matmul(&b).unwrap().mul(3).unwrap();
    case("device_matmul", &y, 2..=2);
    let x = gpu(Tensor::from_vec((0..8192).collect::<Vec<i64>>(), &[8192]).unwrap());
    case("device_split_sum", &x.sum(&[], false).unwrap(), 2..=2);
}

/// Pooling's shapes: a row of 2 points (the windows of a 2×2 pool stored
/// contiguously) runs as straight-line blocks of 16 points with constant offsets
/// rather than a loop per row, and a window's 4-point reduction as straight-line
/// code (the Cranelift IR's blocks, with no odometer inside them).
#[test]
fn pooling_windows_run_as_straight_line_blocks() {
    let x = ramp(&[4, 8, 16, 16]).relu().unwrap();
    let windows = x.unfold(2, 2, 2).unwrap().unfold(3, 2, 2).unwrap();
    case("pool_windows", &windows.contiguous().unwrap(), 1..=1);
    let pooled = windows.amax(&[-2, -1], false).unwrap();
    case("pool_max", &pooled, 1..=1);
}

/// A comparison that only a `where` reads (ReLU's backward) runs in the vector
/// loop as a lane mask and a bit select.
#[test]
fn where_of_a_comparison_vectorizes() {
    let (x, g) = (ramp(&[1024]), ramp(&[1024]).neg().unwrap());
    let x = x.contiguous().unwrap();
    let g = g.contiguous().unwrap();
    x.realize().unwrap();
    g.realize().unwrap();
    let y = Tensor::where_cond(&x.le(0.0).unwrap(), 0.0, &g).unwrap();
    case("where_compare", &y, 1..=1);
    assert!(y.clif_text().unwrap().contains("bitselect"));
}
