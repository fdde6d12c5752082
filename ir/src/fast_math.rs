//! The constants of fast math's polynomial and rational forms, in one place for
//! the two pieces of code that must compute them alike: the CPU code
//! generator's inline vector math (`lazyfuse_codegen`'s `vmath`) and the
//! runtime's wide-vector routines (`lazyfuse_runtime::vector_runs`), whose
//! results are bit for bit the same only while their constants are.
//!
//! ```
//! use lazyfuse_ir::fast_math::{ERF_COEFFS, TANH_P};
//! assert_eq!(ERF_COEFFS[0][0], 0.0);
//! assert!(TANH_P[0] > 0.0);
//! ```

/// `ln 2 - LN_2`: the float64 constant's rounding error, for the float64
/// Cody–Waite split of `ln 2`.
pub const LN_2_TAIL: f64 = 2.319_046_813_846_299_6e-17;

/// `log10 2 - LOG10_2`.
pub const LOG10_2_TAIL: f64 = -2.803_728_127_785_170_3e-18;

/// The float32 rational tanh's numerator, in `x²` (its odd degree-13 form is
/// `x · P(x²)`; the minimax fit Eigen and XLA publish), lowest degree first.
pub const TANH_P: [f64; 7] = [
    4.893_524_558_917_86e-3,
    6.372_619_288_754_36e-4,
    1.485_722_357_179_79e-5,
    5.122_297_090_371_14e-8,
    -8.604_671_522_137_35e-11,
    2.000_187_904_824_77e-13,
    -2.760_768_477_423_55e-16,
];

/// Its denominator, in `x²`, lowest degree first.
pub const TANH_Q: [f64; 4] = [
    4.893_525_185_543_85e-3,
    2.268_434_632_439e-3,
    1.185_347_056_866_54e-4,
    1.198_258_394_667_02e-6,
];

/// Where the rational tanh reaches ±1 with fused multiply-adds.
pub const TANH_CLAMP_FMA: f64 = 7.998_811_72;

/// The same without them (a multiply and an add round twice).
pub const TANH_CLAMP: f64 = 7.905_311_107_635_498;

/// Below this `|x|` the float32 tanh returns `x`.
pub const TANH_TINY: f64 = 4e-4;

/// The float32 `erf` table (`scripts/fit_erf.py`): with `a = |x|`, interval
/// `i = min(trunc(a / ERF_STEP), 15)` and `t = a - i · ERF_STEP` (exact),
/// `erf(x) = ±P_i(t)` below [`ERF_T2`], `P_i(t) = c[0][i] + t (c[1][i] + …)`
/// evaluated with one FMA per step. Row `k` holds coefficient `k` of every
/// interval (a 16-lane vector, so a permute picks each lane's); interval 0's
/// constant is 0, which keeps erf's relative accuracy near 0. At most 2.2 ulp
/// from erf in float32 (1.06 beyond the first interval). A `static`, so its
/// one address can be compiled into a kernel's table loads.
// (interval 0's slope is the fit's, an ulp below 2/√π as a float32)
#[allow(clippy::approx_constant)]
pub static ERF_COEFFS: [[f32; 16]; 6] = [
    [
        0.0, 0.2763264, 0.5204999, 0.71115565, 0.8427008, 0.92290014, 0.96610516, 0.9866717,
        0.9953223, 0.9985373, 0.999593, 0.9998994, 0.9999779, 0.9999957, 0.9999993, 0.9999999,
    ],
    [
        1.1283791,
        1.0600128,
        0.8787813,
        0.6429307,
        0.415108,
        0.23652187,
        0.11893079,
        0.052775145,
        0.020666927,
        0.0071422127,
        0.002178206,
        0.0005862372,
        0.00013923699,
        2.9183779e-05,
        5.397997e-06,
        8.813393e-07,
    ],
    [
        7.000194e-06,
        -0.26493642,
        -0.43932843,
        -0.4821796,
        -0.4151301,
        -0.29568642,
        -0.17841922,
        -0.092363596,
        -0.04133141,
        -0.016065257,
        -0.0054420196,
        -0.0016103528,
        -0.00041698935,
        -9.461152e-05,
        -1.8828783e-05,
        -3.2994128e-06,
    ],
    [
        -0.37633228,
        -0.3103714,
        -0.14758413,
        0.026436988,
        0.13874118,
        0.16813634,
        0.13916813,
        0.090290934,
        0.048182685,
        0.021639891,
        0.008286052,
        0.002726928,
        0.0007755075,
        0.00019131544,
        4.1057596e-05,
        7.828677e-06,
    ],
    [
        0.0020243903,
        0.13649435,
        0.19210748,
        0.15376721,
        0.06650189,
        -0.010807585,
        -0.04792088,
        -0.049230464,
        -0.03417608,
        -0.018431634,
        -0.008116355,
        -0.0029896442,
        -0.0009340388,
        -0.00024970653,
        -5.746872e-05,
        -1.2304146e-05,
    ],
    [
        0.10594697,
        0.046276078,
        -0.026580965,
        -0.06658192,
        -0.0610671,
        -0.030680573,
        -0.0023366297,
        0.011307745,
        0.012437124,
        0.008361114,
        0.004239072,
        0.0017297721,
        0.00058530696,
        0.00016698212,
        4.058421e-05,
        1.0245584e-05,
    ],
];

/// The width of each of [`ERF_COEFFS`]' intervals.
pub const ERF_STEP: f64 = 0.25;

/// Where float32 `erf` rounds to ±1.
pub const ERF_T2: f64 = 3.9375;

/// The affine row routine's `form` bit (`lf_row_affine_<f32|f64>`, which the
/// code generator calls and the runtime defines): the row is divided by the
/// scale (clear: multiplied).
pub const AFFINE_DIVIDE: i64 = 1;

/// The affine row routine's `form` bit: the scaled row is multiplied by a
/// weight row.
pub const AFFINE_WEIGHT: i64 = 2;

/// The affine row routine's `form` bit: a bias row is added last.
pub const AFFINE_BIAS: i64 = 4;

/// The affine row routine's `form` bit: the output row (apart from the
/// source) is written with non-temporal stores, past the caches, where the
/// processor has them: an output far larger than the caches is not read back
/// soon, and a plain store first reads each line it writes.
pub const AFFINE_STREAM: i64 = 8;

/// Rows a fast float32 column sum adds in float32 before it widens their sum
/// and adds it to the column's float64 accumulator (`lazyfuse_codegen`'s
/// column chunks and the runtime's `lf_column_sum_f32`, which must group the
/// rows alike to give the same bits).
pub const COLUMN_SUM_ROWS: usize = 8;

/// π/2 as three float32 parts, `PIO2[0] + PIO2[1] + PIO2[2]` within `1.1e-23`
/// of it: the float32 `sin`/`cos` reduce `x - n·π/2` by one fused
/// multiply-add per part (the product exact inside each), so `r` keeps its
/// relative accuracy near the zeros.
pub const PIO2: [f32; 3] = [1.570_796_4, -4.371_139e-8, -1.715_124_5e-15];

/// `sin r = r + r·z·S(z)`, `z = r²`: the Taylor coefficients of `S`, lowest
/// degree first (`-1/3!`, `1/5!`, `-1/7!`, `1/9!`).
pub const SIN_TAYLOR: [f64; 4] = [-1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362_880.0];

/// `cos r = (1 - z/2) + z²·C(z)`, `z = r²`: the Taylor coefficients of `C`,
/// lowest degree first (`1/4!`, `-1/6!`, `1/8!`, `-1/10!`).
pub const COS_TAYLOR: [f64; 4] = [1.0 / 24.0, -1.0 / 720.0, 1.0 / 40_320.0, -1.0 / 3_628_800.0];

/// `sinh x = x + x·z·S(z)`, `z = x²`, `|x| < 1`: the Taylor coefficients of
/// `S`, lowest degree first (`1/3!` … `1/13!`; the next term is below 1e-12
/// there).
pub const SINH_TAYLOR: [f64; 6] = [
    1.0 / 6.0,
    1.0 / 120.0,
    1.0 / 5040.0,
    1.0 / 362_880.0,
    1.0 / 39_916_800.0,
    1.0 / 6_227_020_800.0,
];

/// `tan(π/8)`: above it the float32 `atan` reduces `|x|` to `(|x| - 1) /
/// (|x| + 1)` and adds π/4.
pub const ATAN_T8: f64 = 0.414_213_562_373_095_03;

/// `tan(3π/8)`: above it the float32 `atan` reduces `|x|` to `-1/|x|` and
/// adds π/2.
pub const ATAN_T38: f64 = 2.414_213_562_373_095;

/// `atan t = t + t·z·A(z)`, `z = t²`, `|t| ≤ tan(π/8)`: the Taylor
/// coefficients of `A`, lowest degree first (`-1/3`, `1/5`, …, `-1/19`; the
/// next term is below 2e-10 there).
pub const ATAN_TAYLOR: [f64; 9] = [
    -1.0 / 3.0,
    1.0 / 5.0,
    -1.0 / 7.0,
    1.0 / 9.0,
    -1.0 / 11.0,
    1.0 / 13.0,
    -1.0 / 15.0,
    1.0 / 17.0,
    -1.0 / 19.0,
];

/// Below this `|x|` the float32 `sin` and `tan` return `x` (`x ∓ x³/6` and
/// `x + x³/3` round to it).
pub const SIN_TINY: f32 = 1.0 / 4096.0;

/// Where the float32 `sin`, `cos` and `tan` stop reducing by [`PIO2`]: at
/// `|x|` above it (and at ±inf and NaN) they take the interpreter's function
/// ([`Trig::libm`]).
pub const TRIG_BOUND: f32 = 65_536.0;

/// A float32 trigonometric function of the fast vector code (`vmath::trig`
/// and the runtime's `trig` routines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trig {
    /// `sin`
    Sin,
    /// `cos`
    Cos,
    /// `tan`
    Tan,
}

impl Trig {
    /// The interpreter's float32 function (the platform's `sinf`, `cosf`,
    /// `tanf`), which the fast code calls for a value beyond [`TRIG_BOUND`]:
    /// one function that the inline code and the runtime's routines both
    /// call, so they agree.
    ///
    /// ```
    /// use lazyfuse_ir::fast_math::Trig;
    /// assert_eq!((Trig::Cos.libm())(0.0), 1.0);
    /// ```
    pub fn libm(self) -> extern "C" fn(f32) -> f32 {
        match self {
            Trig::Sin => sin_f32,
            Trig::Cos => cos_f32,
            Trig::Tan => tan_f32,
        }
    }
}

extern "C" fn sin_f32(x: f32) -> f32 {
    x.sin()
}

extern "C" fn cos_f32(x: f32) -> f32 {
    x.cos()
}

extern "C" fn tan_f32(x: f32) -> f32 {
    x.tan()
}
