//! The op methods of `Tensor`, one file per family.

pub mod creation;
pub mod elementwise;
pub mod inplace;
pub mod linalg;
pub mod operators;
pub mod reduce;
pub mod views;
