//! `Debug` and `Display` for tensors (PyTorch's `repr`).

use super::Tensor;
use crate::default_dtype;
use std::fmt;

impl fmt::Debug for Tensor {
    /// Shape, dtype, device and whether the values are computed; computes nothing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor(shape={:?}, dtype={}, device={}, realized={})",
            self.0.layout.shape,
            self.0.dtype,
            self.device(),
            self.is_realized()
        )
    }
}

impl fmt::Display for Tensor {
    /// PyTorch's printing (`tensor([1., 2.])`), realizing the tensor first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shown_buffer() {
            Ok(buffer) => f.write_str(&crate::display::format_tensor_on(
                &buffer,
                &self.0.layout.shape,
                default_dtype(),
                self.device(),
            )),
            Err(e) => write!(f, "<tensor could not be computed: {e}>"),
        }
    }
}
