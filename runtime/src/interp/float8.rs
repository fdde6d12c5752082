//! The five float8 formats, bit by bit: decoding a code to `f32` and encoding an `f32`
//! to a code, with the semantics of PyTorch's `c10::Float8_*` types (their `float`
//! constructor and `operator float`).
//!
//! | format      | layout     | bias | max     | NaN codes          | inf       | −0   |
//! |-------------|------------|------|---------|--------------------|-----------|------|
//! | `e4m3fn`    | s eeee mmm | 7    | 448     | `0x7f`, `0xff`     | none      | yes  |
//! | `e5m2`      | s eeeee mm | 15   | 57344   | exp all ones, m≠0  | `0x7c`/`0xfc` | yes |
//! | `e4m3fnuz`  | s eeee mmm | 8    | 240     | `0x80` only        | none      | none |
//! | `e5m2fnuz`  | s eeeee mm | 16   | 57344   | `0x80` only        | none      | none |
//! | `e8m0fnu`   | eeeeeeee   | 127  | 2^127   | `0xff`             | none      | no sign, no zero |
//!
//! Decoding is exact (every code is an `f32`). Encoding rounds the `f32` to the
//! nearest code, ties to the even code, on the format's grid *extended by one step
//! past its largest finite value*; a value that lands on (or beyond) that extra step
//! overflows to the format's overflow code: NaN for `e4m3fn` (`0x7f`, with the sign),
//! infinity for `e5m2`, the single NaN `0x80` for the `fnuz` formats. So `e4m3fn`
//! sends 464 (the tie between 448 and the missing 480) to 448 but anything above it
//! to NaN, `e5m2` sends 61440 to infinity, `e4m3fnuz` sends 248 to NaN. Infinities
//! become the overflow code too; NaN becomes `0x7f` (sign kept) for `e4m3fn`/`e5m2`
//! and `0x80` for `fnuz`. The `fnuz` formats have no negative zero: anything that
//! rounds to zero is `0x00`.
//!
//! `e8m0fnu` follows c10's own rounding, which looks only at the `f32` bit pattern:
//! the sign is ignored (−4 encodes as 4), the exponent field is kept and is bumped by
//! one when the mantissa is at least half (strictly more than half for `f32`
//! subnormals), so 1.5 → 2, 3 → 4 and 1.4999 → 1; zero encodes as `0x00` (2^-127);
//! infinities, NaN and values that round past 2^127 are NaN `0xff`. Code `0x00` decodes
//! to 2^-127.
//!
//! NaN payloads are not preserved: decoding a NaN code gives a quiet NaN (with the
//! code's sign where the format has one).

use lazyfuse_ir::DType;

/// One float8 format.
///
/// ```
/// use lazyfuse_ir::DType;
/// use lazyfuse_runtime::interp::float8::Format;
/// let f = Format::of(DType::F8E4M3FN).unwrap();
/// assert_eq!(f.encode(1.0), 0x38);
/// assert_eq!(f.decode(0x38), 1.0);
/// assert_eq!(f.encode(0.3), 0x2a); // 0.3 rounds to 0.3125
/// assert!(f.decode(f.encode(1000.0)).is_nan()); // e4m3fn overflows to NaN
/// assert_eq!(Format::of(DType::F32), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// `float8_e4m3fn`
    E4M3FN,
    /// `float8_e5m2`
    E5M2,
    /// `float8_e4m3fnuz`
    E4M3FNUZ,
    /// `float8_e5m2fnuz`
    E5M2FNUZ,
    /// `float8_e8m0fnu`
    E8M0FNU,
}

/// How a sign-magnitude format spends its special codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Specials {
    /// `e4m3fn`: `S.1111.111` is NaN, no infinity.
    AllOnesNan,
    /// `e5m2`: exponent all ones is infinity (mantissa 0) or NaN, as IEEE.
    Ieee,
    /// `e4m3fnuz`, `e5m2fnuz`: `0x80` is the only NaN; no infinity, no −0.
    Fnuz,
}

/// The layout of a sign-magnitude format.
#[derive(Clone, Copy, Debug)]
struct Layout {
    /// mantissa bits (the exponent takes the other `7 - man`)
    man: u32,
    /// exponent bias
    bias: i32,
    specials: Specials,
}

impl Layout {
    /// The exponent of the smallest normal number (also the scale of the subnormals).
    fn emin(self) -> i32 {
        1 - self.bias
    }
}

/// `2^k` as an `f32`, for `k` in the normal range `-126..=127`.
fn pow2(k: i32) -> f32 {
    debug_assert!((-126..=127).contains(&k));
    f32::from_bits(((k + 127) as u32) << 23)
}

impl Format {
    /// Every format, in `DType` declaration order.
    pub const ALL: [Format; 5] = [
        Format::E4M3FN,
        Format::E5M2,
        Format::E4M3FNUZ,
        Format::E5M2FNUZ,
        Format::E8M0FNU,
    ];

    /// The format of a float8 dtype; `None` for every other dtype.
    pub fn of(dtype: DType) -> Option<Format> {
        Some(match dtype {
            DType::F8E4M3FN => Format::E4M3FN,
            DType::F8E5M2 => Format::E5M2,
            DType::F8E4M3FNUZ => Format::E4M3FNUZ,
            DType::F8E5M2FNUZ => Format::E5M2FNUZ,
            DType::F8E8M0FNU => Format::E8M0FNU,
            _ => return None,
        })
    }

    /// The dtype stored in this format.
    pub fn dtype(self) -> DType {
        match self {
            Format::E4M3FN => DType::F8E4M3FN,
            Format::E5M2 => DType::F8E5M2,
            Format::E4M3FNUZ => DType::F8E4M3FNUZ,
            Format::E5M2FNUZ => DType::F8E5M2FNUZ,
            Format::E8M0FNU => DType::F8E8M0FNU,
        }
    }

    /// The sign-magnitude layout; `None` for the exponent-only `e8m0fnu`.
    fn layout(self) -> Option<Layout> {
        let (man, bias, specials) = match self {
            Format::E4M3FN => (3, 7, Specials::AllOnesNan),
            Format::E5M2 => (2, 15, Specials::Ieee),
            Format::E4M3FNUZ => (3, 8, Specials::Fnuz),
            Format::E5M2FNUZ => (2, 16, Specials::Fnuz),
            Format::E8M0FNU => return None,
        };
        Some(Layout {
            man,
            bias,
            specials,
        })
    }

    /// The exact value of `code` (`operator float`).
    pub fn decode(self, code: u8) -> f32 {
        let Some(l) = self.layout() else {
            return match code {
                0xff => f32::NAN,
                // 2^-127 is an f32 subnormal: the biased exponent 0 cannot be shifted in.
                0 => f32::from_bits(0x0040_0000),
                e => f32::from_bits(u32::from(e) << 23),
            };
        };
        let negative = code & 0x80 != 0;
        let exp_max = (1u32 << (7 - l.man)) - 1;
        let exp = (u32::from(code) >> l.man) & exp_max;
        let man = u32::from(code) & ((1 << l.man) - 1);
        let nan = match l.specials {
            Specials::Fnuz => code == 0x80,
            Specials::AllOnesNan => code & 0x7f == 0x7f,
            Specials::Ieee => exp == exp_max && man != 0,
        };
        let magnitude = if nan {
            f32::NAN
        } else if l.specials == Specials::Ieee && exp == exp_max {
            f32::INFINITY
        } else if exp == 0 {
            // subnormal: man · 2^(emin - man_bits); exact, every factor is small
            man as f32 * pow2(l.emin() - l.man as i32)
        } else {
            // normal: 1.man · 2^(exp - bias)
            ((1 << l.man) | man) as f32 * pow2(exp as i32 - l.bias - l.man as i32)
        };
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }

    /// The code of `x` (c10's `Float8_*(float)` constructor): round to nearest, ties
    /// to even, with the overflow, NaN and zero rules in the module doc.
    pub fn encode(self, x: f32) -> u8 {
        let Some(l) = self.layout() else {
            return encode_e8m0(x);
        };
        let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
        // The code one step past the largest finite value: where rounding overflows.
        let overflow: u32 = match l.specials {
            Specials::AllOnesNan => 0x7f,
            Specials::Ieee => 0x7c,
            Specials::Fnuz => 0x80,
        };
        let code = if x.is_nan() {
            match l.specials {
                Specials::Fnuz => return 0x80,
                _ => 0x7f,
            }
        } else {
            round_magnitude(x.abs(), l).min(overflow)
        };
        match l.specials {
            Specials::Fnuz if code == 0 || code == 0x80 => code as u8,
            _ => code as u8 | sign,
        }
    }
}

/// The unsigned code of the finite-or-infinite magnitude `a` on the grid of `l`,
/// rounded to nearest with ties to the even code. The result may exceed the format's
/// codes (the caller clamps to its overflow code); infinity maps to `u32::MAX`.
///
/// With `e = max(floor(log2 a), emin)`, the grid spacing around `a` is
/// `2^(e - man)`; `a / 2^(e - man)` rounded is the significand `n`, and the code is
/// `((e - emin) << man) + n`: for a subnormal `e == emin` and `n < 2^man` is the
/// mantissa field; for a normal `n` carries the implicit one, which adds the `1` of
/// the biased exponent; a significand rounded up to `2^(man + 1)` carries into the
/// next exponent by the same sum.
fn round_magnitude(a: f32, l: Layout) -> u32 {
    if a.is_infinite() {
        return u32::MAX;
    }
    let biased = (a.to_bits() >> 23) as i32;
    // f32 subnormals are far below every float8 subnormal; emin covers them.
    let e = (biased - 127).max(l.emin());
    let shift = e - l.man as i32;
    // Exact: scaling by a power of two in f64 neither rounds nor leaves the range
    // (`shift` is within -17..=124).
    let scale = f64::from_bits(((1023 - shift) as u64) << 52);
    let n = (f64::from(a) * scale).round_ties_even() as u32;
    (((e - l.emin()) as u32) << l.man) + n
}

/// c10's `fp8e8m0fnu_from_fp32_value`, stated on the fields of the `f32`: keep the
/// biased exponent, add one when the mantissa is at least half (more than half for
/// an `f32` subnormal, whose implicit bit is 0), map all-ones (inf, NaN) to NaN.
fn encode_e8m0(x: f32) -> u8 {
    let bits = x.to_bits();
    let exp = (bits >> 23) & 0xff;
    if exp == 0xff {
        return 0xff;
    }
    let man = bits & 0x007f_ffff;
    let half = 0x0040_0000;
    let up = man > half || (man == half && exp != 0);
    (exp + u32::from(up)) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(dtype: DType) -> Format {
        Format::of(dtype).unwrap()
    }

    /// The NaN code that encoding a NaN of sign `negative` gives.
    fn canonical_nan(fmt: Format, negative: bool) -> u8 {
        match fmt {
            Format::E4M3FN | Format::E5M2 => 0x7f | if negative { 0x80 } else { 0 },
            Format::E4M3FNUZ | Format::E5M2FNUZ => 0x80,
            Format::E8M0FNU => 0xff,
        }
    }

    /// Largest finite value, smallest positive value, and the counts of NaN, infinite
    /// and zero codes, from the formats' specifications.
    fn spec(fmt: Format) -> (f32, f32, usize, usize, usize) {
        match fmt {
            Format::E4M3FN => (448.0, 2f32.powi(-9), 2, 0, 2),
            Format::E5M2 => (57344.0, 2f32.powi(-16), 6, 2, 2),
            Format::E4M3FNUZ => (240.0, 2f32.powi(-10), 1, 0, 1),
            Format::E5M2FNUZ => (57344.0, 2f32.powi(-17), 1, 0, 1),
            Format::E8M0FNU => (2f32.powi(127), f32::from_bits(0x0040_0000), 1, 0, 0),
        }
    }

    #[test]
    fn dtype_mapping() {
        for fmt in Format::ALL {
            assert_eq!(Format::of(fmt.dtype()), Some(fmt));
        }
        let float8 = DType::ALL
            .iter()
            .filter(|d| Format::of(**d).is_some())
            .count();
        assert_eq!(float8, 5);
        assert!(DType::ALL
            .iter()
            .all(|d| Format::of(*d).is_some() == d.is_float8()));
    }

    #[test]
    fn every_code_round_trips() {
        for fmt in Format::ALL {
            for code in 0..=255u8 {
                let v = fmt.decode(code);
                let back = fmt.encode(v);
                if v.is_nan() {
                    let want = canonical_nan(fmt, v.is_sign_negative());
                    assert_eq!(back, want, "{fmt:?} NaN code {code:#04x}");
                } else {
                    assert_eq!(back, code, "{fmt:?} code {code:#04x} = {v}");
                }
            }
        }
    }

    #[test]
    fn special_codes_and_extremes() {
        for fmt in Format::ALL {
            let (max, min_pos, nans, infs, zeros) = spec(fmt);
            let values: Vec<f32> = (0..=255u8).map(|c| fmt.decode(c)).collect();
            assert_eq!(
                values.iter().filter(|v| v.is_nan()).count(),
                nans,
                "{fmt:?}"
            );
            assert_eq!(values.iter().filter(|v| v.is_infinite()).count(), infs);
            assert_eq!(values.iter().filter(|v| **v == 0.0).count(), zeros);
            let finite = values.iter().copied().filter(|v| v.is_finite());
            assert_eq!(finite.clone().fold(f32::MIN, f32::max), max, "{fmt:?}");
            let positive = finite.filter(|v| *v > 0.0);
            assert_eq!(positive.fold(f32::MAX, f32::min), min_pos, "{fmt:?}");
        }
        let e4 = f(DType::F8E4M3FN);
        assert_eq!((e4.decode(0x7e), e4.decode(0xfe)), (448.0, -448.0));
        assert_eq!(e4.decode(0x08), 2f32.powi(-6));
        assert_eq!(e4.decode(0x07), 0.875 * 2f32.powi(-6));
        assert!(e4.decode(0x80) == 0.0 && e4.decode(0x80).is_sign_negative());
        assert!(e4.decode(0x7f).is_nan() && e4.decode(0xff).is_nan());
        let e5 = f(DType::F8E5M2);
        assert_eq!(e5.decode(0x7c), f32::INFINITY);
        assert_eq!(e5.decode(0xfc), f32::NEG_INFINITY);
        assert_eq!(e5.decode(0x7b), 57344.0);
        assert_eq!(e5.decode(0x04), 2f32.powi(-14));
        assert_eq!(e5.decode(0x03), 0.75 * 2f32.powi(-14));
        for c in [0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff] {
            assert!(e5.decode(c).is_nan());
        }
        let e4z = f(DType::F8E4M3FNUZ);
        assert!(e4z.decode(0x80).is_nan());
        assert_eq!((e4z.decode(0x7f), e4z.decode(0xff)), (240.0, -240.0));
        assert_eq!(e4z.decode(0x08), 2f32.powi(-7));
        assert_eq!(e4z.decode(0x40), 1.0);
        let e5z = f(DType::F8E5M2FNUZ);
        assert!(e5z.decode(0x80).is_nan());
        assert_eq!(
            (e5z.decode(0x7f), e5z.decode(0x04)),
            (57344.0, 2f32.powi(-15))
        );
        assert_eq!(e5z.decode(0x01), 0.25 * 2f32.powi(-15));
        let e8 = f(DType::F8E8M0FNU);
        assert_eq!(e8.decode(127), 1.0);
        assert_eq!(e8.decode(0), 2f32.powi(-126) / 2.0);
        assert_eq!(e8.decode(254), 2f32.powi(127));
        assert!(e8.decode(255).is_nan());
    }

    /// Positive finite values in increasing code order; the codes of a sign-magnitude
    /// format are monotone in their magnitude.
    #[test]
    fn codes_are_monotone() {
        for fmt in Format::ALL {
            let top = if fmt == Format::E8M0FNU { 0xfe } else { 0x7f };
            let mut prev = -1.0f32;
            for code in 0..=top {
                let v = fmt.decode(code);
                if !v.is_finite() {
                    break;
                }
                assert!(v > prev, "{fmt:?} {code:#04x}");
                prev = v;
            }
        }
    }

    /// The value one grid step past the largest finite value (where rounding
    /// overflows), and the code it stands for.
    fn overflow_point(fmt: Format) -> (f32, u8) {
        match fmt {
            Format::E4M3FN => (480.0, 0x7f),
            Format::E5M2 => (65536.0, 0x7c),
            Format::E4M3FNUZ => (256.0, 0x80),
            Format::E5M2FNUZ => (65536.0, 0x80),
            Format::E8M0FNU => unreachable!(),
        }
    }

    /// The non-negative finite values with their codes, in increasing order, extended
    /// by the overflow point.
    fn grid(fmt: Format) -> Vec<(f64, u8)> {
        let (over, over_code) = overflow_point(fmt);
        let mut grid: Vec<(f64, u8)> = (0..=0x7fu8)
            .map(|c| (f64::from(fmt.decode(c)), c))
            .filter(|(v, _)| v.is_finite())
            .collect();
        grid.push((f64::from(over), over_code));
        grid
    }

    /// The nearest-even code of `x >= 0` found by searching the decoded grid: an
    /// oracle independent of `round_magnitude`.
    fn oracle(grid: &[(f64, u8)], x: f64) -> u8 {
        let (over, over_code) = grid[grid.len() - 1];
        if x >= over {
            return over_code;
        }
        let i = grid.partition_point(|(v, _)| *v <= x) - 1;
        let (lo, lo_code) = grid[i];
        let (hi, hi_code) = grid[i + 1];
        if x - lo < hi - x || (x - lo == hi - x && lo_code % 2 == 0) {
            lo_code
        } else {
            hi_code
        }
    }

    fn with_sign(fmt: Format, code: u8, negative: bool) -> u8 {
        let fnuz = matches!(fmt, Format::E4M3FNUZ | Format::E5M2FNUZ);
        if !negative || (fnuz && (code == 0 || code == 0x80)) {
            code
        } else {
            code | 0x80
        }
    }

    #[test]
    fn rounding_matches_nearest_even_oracle() {
        for fmt in &Format::ALL[..4] {
            let fmt = *fmt;
            // every midpoint between neighbours, and the f32 values either side of it
            let grid = grid(fmt);
            let mut probes = Vec::new();
            for w in grid.windows(2) {
                let (lo, hi) = (w[0].0 as f32, w[1].0 as f32);
                let mid = (lo + hi) / 2.0; // exact: the grid has 4 significant bits
                probes.extend([lo, mid, mid.next_down(), mid.next_up(), hi]);
            }
            // a sweep over the f32 bit patterns (positive finite)
            probes.extend((0..0x7f80_0000u32).step_by(9973).map(f32::from_bits));
            probes.extend([0.0, f32::MIN_POSITIVE, 1e-30, 1e30, f32::MAX]);
            for x in probes {
                let want = oracle(&grid, f64::from(x));
                assert_eq!(fmt.encode(x), want, "{fmt:?} encode({x:e})");
                let neg = with_sign(fmt, want, true);
                assert_eq!(fmt.encode(-x), neg, "{fmt:?} encode({:e})", -x);
            }
        }
    }

    #[test]
    fn ties_go_to_even() {
        let e4 = f(DType::F8E4M3FN);
        // 1.0 = 0x38, 1.125 = 0x39, 1.25 = 0x3a
        assert_eq!(e4.encode(1.0625), 0x38);
        assert_eq!(e4.encode(1.1875), 0x3a);
        assert_eq!(e4.encode(1.0625f32.next_up()), 0x39);
        // subnormal ties: 2^-10 lies between 0 and 2^-9
        assert_eq!(e4.encode(2f32.powi(-10)), 0x00);
        assert_eq!(e4.encode(3.0 * 2f32.powi(-10)), 0x02);
        let e5 = f(DType::F8E5M2);
        // 1.0 = 0x3c, 1.25 = 0x3d, 1.5 = 0x3e
        assert_eq!(e5.encode(1.125), 0x3c);
        assert_eq!(e5.encode(1.375), 0x3e);
        // carry into the next binade: 1.875 is the tie between 1.75 and 2.0
        assert_eq!(e5.encode(1.875), 0x40);
    }

    #[test]
    fn overflow_infinity_and_nan() {
        let e4 = f(DType::F8E4M3FN);
        assert_eq!(e4.encode(464.0), 0x7e); // tie with the missing 480: even wins
        assert_eq!(e4.encode(464.0f32.next_up()), 0x7f);
        assert_eq!(e4.encode(-464.0f32.next_up()), 0xff);
        assert_eq!(e4.encode(1e9), 0x7f);
        assert_eq!(e4.encode(f32::INFINITY), 0x7f);
        assert_eq!(e4.encode(f32::NEG_INFINITY), 0xff);
        assert_eq!(e4.encode(f32::NAN), 0x7f);
        assert_eq!(e4.encode(-f32::NAN), 0xff);
        assert_eq!(e4.encode(-0.0), 0x80);
        let e5 = f(DType::F8E5M2);
        assert_eq!(e5.encode(61440.0f32.next_down()), 0x7b);
        assert_eq!(e5.encode(61440.0), 0x7c); // tie: 0x7b is odd, the even code is inf
        assert_eq!(e5.encode(f32::MAX), 0x7c);
        assert_eq!(e5.encode(f32::NEG_INFINITY), 0xfc);
        assert_eq!(e5.encode(f32::NAN), 0x7f);
        assert_eq!(e5.encode(-0.0), 0x80);
        let e4z = f(DType::F8E4M3FNUZ);
        assert_eq!(e4z.encode(248.0f32.next_down()), 0x7f);
        assert_eq!(e4z.encode(248.0), 0x80);
        assert_eq!(e4z.encode(-248.0), 0x80);
        assert_eq!(e4z.encode(f32::INFINITY), 0x80);
        assert_eq!(e4z.encode(f32::NEG_INFINITY), 0x80);
        assert_eq!(e4z.encode(-f32::NAN), 0x80);
        assert_eq!(e4z.encode(-0.0), 0x00);
        assert_eq!(e4z.encode(-1e-9), 0x00);
        assert_eq!(e4z.encode(-1.0), 0xc0);
        let e5z = f(DType::F8E5M2FNUZ);
        assert_eq!(e5z.encode(61440.0), 0x80);
        assert_eq!(e5z.encode(-57344.0), 0xff);
        assert_eq!(e5z.encode(-0.0), 0x00);
    }

    #[test]
    fn e8m0_rounding() {
        let e8 = f(DType::F8E8M0FNU);
        let cases: [(f32, u8); 16] = [
            (1.0, 127),
            (1.4999999, 127),
            (1.5, 128),
            (3.0, 129),
            (0.75, 127),
            (-4.0, 129), // the sign is ignored
            (0.0, 0),
            (-0.0, 0),
            (2f32.powi(127), 254),
            (1.5 * 2f32.powi(127), 255),
            (f32::MAX, 255),
            (f32::INFINITY, 255),
            (f32::NEG_INFINITY, 255),
            (f32::NAN, 255),
            (2f32.powi(-126), 1),
            (f32::from_bits(0x0040_0000), 0), // the f32 subnormal 2^-127 itself
        ];
        for (x, code) in cases {
            assert_eq!(e8.encode(x), code, "encode({x:e})");
        }
        // an f32 subnormal just above 2^-127 rounds up; 2^-149 rounds down
        assert_eq!(e8.encode(f32::from_bits(0x0040_0001)), 1);
        assert_eq!(e8.encode(f32::from_bits(1)), 0);
        // powers of two are exact
        for code in 0..=254u8 {
            assert_eq!(e8.encode(e8.decode(code)), code);
        }
    }
}
