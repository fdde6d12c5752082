//! The README's demo: build a small lazy graph, realize it, print the result.
//!
//! `cargo run --release --example quickstart` prints the tensors;
//! `cargo run --release --example quickstart -- --dump-ir` also prints every IR level
//! of each realize: graph, graph after passes, kernels and Cranelift IR (as
//! `LAZYFUSE_DUMP_IR=1` does).

use lazyfuse::{DType, Tensor};

fn main() -> lazyfuse::Result<()> {
    if std::env::args().any(|a| a == "--dump-ir") {
        lazyfuse::set_dump_ir(true);
    }

    // A 2x3 float matrix and a row of int32 weights: promotion makes the product float32.
    let x = Tensor::from_vec(vec![1.0f32, -2.0, 3.0, -4.0, 5.0, -6.0], &[2, 3])?;
    let w = Tensor::from_vec(vec![1i32, 2, 3], &[3])?;

    // Nothing runs yet: each call records a node, with dtype and shape known at once.
    let y = x.mul(&w)?.relu()?.add(0.5)?;
    let total = y.sum(&[1], false)?;
    let probs = x.softmax(-1)?;
    println!("y     : {:?}", y);

    // Views are stride rewrites of the same storage; writes through them reach the base.
    let col = x.select(1, 0)?;
    col.fill_(0.0)?;

    println!("y     = {y}");
    println!("total = {total}");
    println!("probs = {probs}");
    println!("x     = {x}");
    println!(
        "x.t() strides {:?}, contiguous: {}",
        x.t()?.strides(),
        x.t()?.is_contiguous()
    );
    println!(
        "ints  = {}",
        Tensor::arange(0.0, 6.0, 1.0, DType::I16)?.view(&[2, 3])?
    );
    Ok(())
}
