//! lazyfuse-ir: the semantic core of lazyfuse, decided at graph-build time.
//!
//! In processing order: element types ([`dtype`], [`scalar`]), shapes and
//! broadcasting ([`shape`], [`broadcast`]), type promotion ([`promote`]), layouts and
//! the view ops ([`layout`], [`view`]), the per-op typing rules ([`typing`]), and the
//! lazy graph itself ([`op`], [`graph`]), its passes ([`passes`]), the scheduler and the
//! kernel IR ([`schedule`], [`kernel`]), and the compiler's work counter ([`work`]).
//! Nothing here touches memory or devices.
#![deny(missing_docs)]

pub mod broadcast;
pub mod dot;
pub mod dtype;
pub mod error;
pub mod fast_math;
pub mod graph;
pub mod indexing;
pub mod kernel;
pub mod layout;
pub mod op;
pub mod passes;
pub mod philox;
pub mod promote;
pub mod scalar;
pub mod schedule;
pub mod shape;
pub mod typing;
pub mod view;
pub mod view_dims;
pub mod view_split;
pub mod work;

pub use dtype::{Category, DType};
pub use error::{Error, Result};
pub use graph::{Graph, Node, NodeId};
pub use layout::Layout;
pub use op::{
    ArgReduceOp, BinaryOp, InputId, NormOrd, Op, ReduceOp, ScanOp, ScatterReduce, UnaryOp,
    UnaryParamOp,
};
pub use scalar::Scalar;
