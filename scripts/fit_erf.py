#!/usr/bin/env python3
"""Fits the float32 `erf` table of fast math (`lazyfuse_ir::fast_math::ERF_COEFFS`,
used by codegen's `vmath` and the runtime's wide-vector routines) and prints it as
Rust, with the error of a float32 evaluation (FMA emulated) on each interval.

  a = |x|, i = min(trunc(4 a), 15), t = a - i/4
  |x| <  T2:  erf(x) = ±P_i(t)   (P_i of degree 5, one table row per coefficient)
  |x| >= T2:  erf(x) = ±1        (erfc(T2) is below half an ulp of 1)

Interval 0's constant term is 0, so erf keeps its relative accuracy near 0 (and
-0 its sign). Fits are weighted (relative) least squares on Chebyshev nodes,
refined by Lawson's reweighting towards minimax. Development only: needs numpy
and scipy; the printed table is copied into ir/src/fast_math.rs.
"""
import numpy as np
from scipy.special import erf

INTERVALS, STEP, T2, DEGREE = 16, 0.25, 3.9375, 5


def lawson_fit(v, y, w, rounds=80):
    """Coefficients minimizing max |w (v c - y)| (v: the basis at the nodes)."""
    lw = np.ones(len(y)) / len(y)
    for _ in range(rounds):
        sw = np.sqrt(lw) * w
        c, *_ = np.linalg.lstsq(v * sw[:, None], y * sw, rcond=None)
        err = np.abs(w * (v @ c - y))
        lw = lw * err
        lw /= lw.sum()
    return c


def horner32(c, t):
    """c[0] + t (c[1] + ...) in float32, one rounding per step (an FMA)."""
    acc = np.full(t.shape, np.float32(c[-1]), dtype=np.float32)
    for k in c[-2::-1]:
        acc = (acc.astype(np.float64) * t.astype(np.float64)
               + np.float64(np.float32(k))).astype(np.float32)
    return acc


table = []
worst = 0.0
for i in range(INTERVALS):
    lo, hi = i * STEP, min((i + 1) * STEP, T2)
    k = np.arange(2000)
    t = (np.cos(np.pi * (k + 0.5) / 2000) + 1) / 2 * (hi - lo)
    y = erf(lo + t)
    v = np.vander(t, DEGREE + 1, increasing=True)
    if i == 0:
        c = np.concatenate([[0.0], lawson_fit(v[:, 1:], y, 1 / y)])
    else:
        c = lawson_fit(v, y, 1 / y)
    c32 = np.float32(c)
    table.append(c32)
    # every float32 of the interval (every 7th beyond interval 0)
    bits = np.arange(np.float32(max(lo, 1e-30)).view(np.int32),
                     np.float32(hi).view(np.int32), 1001 if i == 0 else 7,
                     dtype=np.int32)
    a = bits.view(np.float32)
    got = horner32(c32, (a - np.float32(lo)).astype(np.float32)).astype(np.float64)
    want = erf(a.astype(np.float64))
    err = np.max(np.abs(got - want) / np.spacing(np.float32(want)).astype(np.float64))
    worst = max(worst, err)
    print(f"// [{lo}, {hi}): {err:.2f} ulp")
print(f"// max error {worst:.2f} ulp")
print("// (interval 0's slope is the fit's, an ulp below 2/√π as a float32)")
print("#[allow(clippy::approx_constant)]")
print(f"pub static ERF_COEFFS: [[f32; {INTERVALS}]; {DEGREE + 1}] = [")
for k in range(DEGREE + 1):
    print("    [")
    for i in range(INTERVALS):
        print(f"        {np.float32(table[i][k])!r},".replace("np.float32(", "").replace(")", ""))
    print("    ],")
print("];")
