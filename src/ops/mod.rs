//! The op methods of `Tensor`, one file per family.

pub mod activation;
pub mod binary_math;
pub mod complex32;
pub mod creation;
pub mod elementwise;
pub mod float8;
pub mod index_assign;
pub mod indexing;
pub mod inplace;
pub mod linalg;
pub mod operators;
pub mod placed;
pub mod pointwise;
pub mod random_fill;
pub mod reduce;
pub mod reduce_special;
pub mod scan;
pub(crate) mod signature_memo;
pub mod sort;
pub mod splits;
pub mod value_views;
pub mod views;
