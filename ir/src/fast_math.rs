//! The constants of fast math's polynomial and rational forms, in one place for
//! the two pieces of code that must compute them alike: the CPU code
//! generator's inline vector math (`lazyfuse_codegen`'s `vmath`) and the
//! runtime's wide-vector routines (`lazyfuse_runtime::vector_runs`), whose
//! results are bit for bit the same only while their constants are.
//!
//! ```
//! use lazyfuse_ir::fast_math::{ERF_SMALL, TANH_P};
//! assert_eq!(ERF_SMALL.len(), 7);
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

/// float32 `erf` below [`ERF_T1`]: `x + x P(x²)`, `P` lowest degree first
/// (`scripts/fit_erf.py`).
pub const ERF_SMALL: [f64; 7] = [
    0.128_379_166_126_251_22,
    -0.376_126_348_972_320_56,
    0.112_837_329_506_874_08,
    -0.026_861_585_676_670_074,
    0.005_206_750_705_838_203,
    -0.000_821_113_877_464_085_8,
    8.675_531_717_017_293e-5,
];

/// float32 `erf` from [`ERF_T1`] to [`ERF_T2`]: `1 - e^Q(|x| - ERF_T1)`, `Q` a
/// fit of `ln erfc`, lowest degree first (`scripts/fit_erf.py`).
pub const ERF_LARGE: [f64; 11] = [
    -1.532_824_397_087_097_2,
    -2.430_219_888_687_134,
    -0.826_538_443_565_368_7,
    -0.046_913_970_261_812_21,
    0.011_374_790_221_452_713,
    -0.002_231_694_990_769_028_7,
    0.000_296_415_557_386_353_6,
    -1.026_224_254_019_325_6e-5,
    -5.127_326_858_200_831e-6,
    1.045_305_225_488_846_2e-6,
    -6.875_671_942_907_502e-8,
];

/// Where float32 `erf` leaves its small range.
pub const ERF_T1: f64 = 0.875;

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
