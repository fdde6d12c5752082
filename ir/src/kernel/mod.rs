//! The kernel IR: backend-neutral loop kernels, the unit that codegen translates.
//!
//! A [`Schedule`] is what the scheduler makes of one realize: buffers ([`BufDecl`]:
//! the realize's inputs, its outputs, and the temporaries between kernels) and an
//! ordered list of [`Step`]s. A step is either a [`LoopKernel`], compiled to native
//! code, or an [`ExternStep`], one graph node run by a Rust routine (matmul, and the
//! ops that the loop IR does not express yet; the dump names every one).
//!
//! # A loop kernel
//! - An **iteration space** `dims`: the first `n_parallel` dims are parallel (any
//!   order, any thread), the rest are reduction dims, iterated in row-major order.
//! - **Params**: the buffers the kernel reads or writes, each with its dtype and its
//!   exact element count (the verifier proves every access inside it).
//! - An **expression DAG** `exprs`, in topological order (an expression only names
//!   earlier ones). Each has a dtype and a [`Stage`]:
//!   - `Stage::Outer(k)`: evaluated once per parallel point, after the first `k`
//!     *phases* have run; it may use the results of reductions of those phases;
//!   - `Stage::Inner(k)`: evaluated inside phase `k`'s loop over every reduction dim.
//!
//!   A phase is one pass over the reduction dims (softmax: max, then sum of exps,
//!   then the stores: three phases in one kernel). An `Expr::Reduce` of an
//!   `Inner(k)` value has stage `Outer(k + 1)`.
//! - **Stores** write an expression's value at an affine index, at the expression's
//!   stage (inside phase `k`'s loop for an `Inner(k)` value).
//!
//! Loads and stores index with an [`Affine`] map: `offset + Σ strides[d] · i_d` over
//! every dim of the iteration space, computed in 64-bit. A load may add a
//! data-dependent term ([`DynIndex`], for gather-like reads): an index value out of
//! range sets the kernel's status and is never dereferenced.
//!
//! # Scalar semantics
//! Expression ops are the graph's own `UnaryOp`, `UnaryParamOp` and `BinaryOp`, with
//! the interpreter's numerics: integers wrap; integer division and remainder by zero
//! set a status code ([`Status`]) and never trap (nor does `MIN / -1`, which wraps);
//! an integer power with a negative exponent is 0, 1 or -1, as in the interpreter
//! (the builder refuses negative host exponents); `float16`/`bfloat16` values are
//! computed in `float32` and rounded to their dtype after every op; `Cast` follows
//! the interpreter's conversion rules (`lazyfuse_runtime::interp::cast`). Float8
//! dtypes appear only in loads, stores and casts. Complex dtypes never appear in a
//! loop kernel (the scheduler makes them extern steps).
//!
//! # Reductions
//! [`Accum`] names the combining rule. `Sum` of `float32` accumulates in `float64`
//! (more accurate than PyTorch's cascade sum, never less); other accumulators use the
//! expression's dtype. `Max`/`Min` propagate NaN; `ArgMax`/`ArgMin` give the row-major
//! position over the reduction dims of the first maximum (a NaN counts as the maximum,
//! the first NaN wins), as an `int64`. An empty reduction yields the identity
//! (`Sum` 0, `Prod` 1, `Any` false, `All` true); the scheduler refuses empty
//! `Max`/`Min`/`ArgMax` before a kernel exists.
//!
//! # Scans
//! An [`Expr::Scan`] is an inclusive running value: an `Inner(k)` expression of an
//! `Inner(k)` operand whose value at reduction point `j` (row-major over the
//! reduction dims) combines the operand's values at points `0..=j` of the same
//! parallel point ([`ScanAccum`]: cumsum, cumprod, cummax/cummin values and indices,
//! logcumsumexp). It is usable by later `Inner(k)` expressions and stores of phase
//! `k`, and its numerics are the interpreter's scans (`interp::scan`): `Sum`/`Prod`
//! keep a wide running value (`float16`/`bfloat16` in `float32`, `float32` in
//! `float64`; integers wrap in their own dtype) and round each element from it;
//! `Max`/`Min` take an element that is NaN or at least as large (small) as the
//! running one, unless the running one is NaN (ties move to the later element, the
//! latest NaN wins); `ArgMax`/`ArgMin` are that element's position, as `int64`;
//! `LogAddExp` runs PyTorch's `_log_add_exp_helper` in `float64` from `-inf` and
//! rounds each element through the dtype's accumulation type.
//!
//! # Files
//! `entities` (ids, buffer declarations, params, stores), `affine` (index maps),
//! `expr` (the expression DAG and stages), `program` (loop kernels, extern steps,
//! schedules, math modes), `status` (what a kernel reports instead of trapping),
//! `print` (the text forms) and `verify` (the verifier).

mod abi;
mod affine;
mod dynamic;
mod entities;
mod epilogue;
mod expr;
mod padded;
mod print;
mod program;
mod status;
#[cfg(test)]
mod tests;
mod verify;

pub use abi::{param_code, param_op, KernelCode, KernelFn, KernelSignature};
pub use affine::Affine;
pub use dynamic::{DynIndex, IndexError};
pub use entities::{BufDecl, BufId, BufKind, ExprId, Param, ParamId, StoreOp};
pub use epilogue::EpilogueOp;
pub use expr::{Accum, Const, Expr, ExprNode, ScanAccum, Stage};
pub use padded::ZeroPadded;
pub use program::{ExternStep, ExternView, LoopKernel, MathMode, Schedule, Step};
pub use status::{Status, STATUS_SLOTS};
