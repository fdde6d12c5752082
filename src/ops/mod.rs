//! The op methods of `Tensor`, one file per family.

pub mod binary_ext;
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
pub mod reduce;
pub mod reduce_ext;
pub mod scan;
pub mod splits;
pub mod value_views;
pub mod views;
// issue 5
pub mod activation;
pub mod pointwise;
