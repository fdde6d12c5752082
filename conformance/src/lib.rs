//! The conformance runner: checks lazyfuse against the PyTorch-generated cases in
//! `tests/data/conformance/*.jsonl` (schema: `tests/data/conformance/SCHEMA.md`).
//!
//! `cargo run --release --example conformance -- DIR` runs every `*.jsonl` file of `DIR`
//! and prints, per file, `name.jsonl: P passed, F failed, U unsupported`, then one
//! readable diff per failure, and last `conformance: P passed, F failed, U unsupported`.
//! The exit code is non-zero when any case failed. The example `conformance` is this
//! crate's command line, and the conformance tests call [`run_dir`], so the two share
//! one runner.
//!
//! How a case is judged (SCHEMA.md §1.5, §1.6):
//! * expected result: dtype, shape, then every element (bool/int exact, floats within the
//!   case's `rtol`/`atol`, NaN/inf exact, sign of zero ignored, complex per part);
//! * expected error: the op must fail, when it is built or when it is realized;
//! * **unsupported**: lazyfuse answered `Err` with `is_unsupported()` for a case whose
//!   expected dtype is `complex32`/`bcomplex32` (dtypes lazyfuse has no kernels for); any
//!   other "not supported yet" counts as a failure, so gaps stay visible; so does an
//!   `nn.jsonl` op (SCHEMA.md §10) that `lazyfuse::nn::functional` does not have yet;
//! * **extended**: the reference has no kernel for a wide unsigned dtype (`"..." not
//!   implemented for 'UInt16'`) and lazyfuse computes a result: lazyfuse deliberately goes
//!   beyond PyTorch there, so the case passes and is listed separately;
//! * an unknown `op`/`family`, a malformed case or a panic is a failure, never a skip.

mod compare;
mod devices;
mod dispatch;
mod driver;
mod gradients;
mod inputs;
mod json;
mod kinds;
mod memory_format;
mod nn;
mod shell_dtypes;
#[cfg(test)]
mod tests;
mod value_views;
mod values;
mod verdict;
mod view_steps;

use compare::{check_result, compare_vals, describe, judge, lib_err_text, realized, shape_str};
use dispatch::{binary, keepdim, reduce_dims, unary, values_op, where_op, with_arg};
pub use driver::{run_case, run_dir, run_file};
pub use inputs::tensor_object;
pub use inputs::ON_CUDA;
use inputs::{
    apply_input_view, build_base_tensor, build_data_operand, build_promotion_operand, build_tensor,
    deep_copy, rounding_mode, tensor_from_vals, Arg,
};
pub use json::float_element;
use json::{
    arg_isize, arg_opt_isize, arg_usize, as_array, as_i64, as_isize, as_str, as_usize, dtype_of,
    field, isize_list, json_bool, json_complex, json_f64, json_int, round_to, usize_list,
};
use kinds::{run_broadcast, run_inplace, run_promotion, run_unary, run_values, run_views};
use values::{decode_vals, ints, read_vals, Vals};
use verdict::{harness, RunErr, R};
pub use verdict::{FileSummary, Outcome, Summary};
use view_steps::apply_view_step;
