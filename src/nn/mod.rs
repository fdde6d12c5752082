//! `lazyfuse::nn`: neural-network building blocks, as PyTorch's `torch.nn`.
//!
//! [`functional`] holds the stateless functions of `torch.nn.functional`, each a
//! composition of lazyfuse's ops (so it fuses with its neighbours and
//! differentiates through autograd's rules), with PyTorch's argument order, dtypes,
//! shapes and errors.

pub mod functional;
