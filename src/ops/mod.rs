//! The op methods of `Tensor`, one file per family.

pub mod elementwise;
pub mod inplace;
pub mod linalg;
pub mod operators;
pub mod reduce;
pub mod views;
// issue 5
pub mod activation;
pub mod pointwise;
