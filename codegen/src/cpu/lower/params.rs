//! The kind codes and parameters of a [`UnaryParamOp`] passed to the runtime's
//! `lf_unary_param_*` functions, and their inverse.

use lazyfuse_ir::UnaryParamOp;

/// The kind code and the three f64 parameters of a [`UnaryParamOp`] for
/// `lf_unary_param_*` (decoded by `lazyfuse_runtime::jit_symbols::param_op`).
pub fn param_code(op: UnaryParamOp) -> (i64, [f64; 3]) {
    match op {
        UnaryParamOp::NanToNum {
            nan,
            posinf,
            neginf,
        } => (0, [nan, posinf, neginf]),
        UnaryParamOp::Logit { eps } => (1, [eps.unwrap_or(f64::NAN), 0.0, 0.0]),
        UnaryParamOp::RoundDecimals { decimals } => (2, [decimals as f64, 0.0, 0.0]),
        UnaryParamOp::Gelu { tanh } => (3, [tanh as u8 as f64, 0.0, 0.0]),
        UnaryParamOp::Softplus { beta, threshold } => (4, [beta, threshold, 0.0]),
        UnaryParamOp::Elu {
            alpha,
            scale,
            input_scale,
        } => (5, [alpha, scale, input_scale]),
        UnaryParamOp::LeakyRelu { negative_slope } => (6, [negative_slope, 0.0, 0.0]),
        UnaryParamOp::Hardtanh { min_val, max_val } => (7, [min_val, max_val, 0.0]),
    }
}

/// The inverse of [`param_code`]: the op of a kind code and its parameters, `None`
/// for an unknown code.
pub fn param_op(kind: i64, p: [f64; 3]) -> Option<UnaryParamOp> {
    Some(match kind {
        0 => UnaryParamOp::NanToNum {
            nan: p[0],
            posinf: p[1],
            neginf: p[2],
        },
        1 => UnaryParamOp::Logit {
            eps: if p[0].is_nan() { None } else { Some(p[0]) },
        },
        2 => UnaryParamOp::RoundDecimals {
            decimals: p[0] as i64,
        },
        3 => UnaryParamOp::Gelu { tanh: p[0] != 0.0 },
        4 => UnaryParamOp::Softplus {
            beta: p[0],
            threshold: p[1],
        },
        5 => UnaryParamOp::Elu {
            alpha: p[0],
            scale: p[1],
            input_scale: p[2],
        },
        6 => UnaryParamOp::LeakyRelu {
            negative_slope: p[0],
        },
        7 => UnaryParamOp::Hardtanh {
            min_val: p[0],
            max_val: p[1],
        },
        _ => return None,
    })
}
