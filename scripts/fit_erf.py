#!/usr/bin/env python3
"""Fits the float32 `erf` polynomials of codegen's `vmath` (fast math) and prints
their coefficients and the error of a float32 evaluation (FMA emulated).

  |x| < T1:        erf(x) = x + x * P(x^2)         (P: fit of erf(x)/x - 1, the
                                                    final FMA rounds once)
  T1 <= |x| < T2:  erf(x) = 1 - exp(Q(|x| - T1))  (Q: fit of log(erfc(|x|)))
  |x| >= T2:       erf(x) = ±1                     (erfc(T2) is below half an ulp of 1)

Fits are weighted least squares on Chebyshev nodes, refined by a few rounds of
Lawson's reweighting towards minimax. Development only: needs numpy and scipy;
the coefficients are copied into codegen/src/cpu/vmath.rs.
"""
import math
import numpy as np
from scipy.special import erf, erfc

T1, T2 = 0.875, 3.9375


def lawson_fit(x, y, w, deg, rounds=60):
    """Polynomial coefficients (low to high) minimizing max |w (p(x) - y)|."""
    v = np.vander(x, deg + 1, increasing=True)
    lw = np.ones_like(x) / len(x)
    for _ in range(rounds):
        sw = np.sqrt(lw) * w
        c, *_ = np.linalg.lstsq(v * sw[:, None], y * sw, rcond=None)
        err = np.abs(w * (v @ c - y))
        lw = lw * err
        lw /= lw.sum()
    return c


def horner32(c, x):
    acc = np.float32(c[-1])
    for k in c[-2::-1]:
        acc = (np.float64(acc) * np.float64(x) + np.float64(np.float32(k))).astype(np.float32)
    return acc


def cheb(a, b, n):
    k = np.arange(n)
    return (a + b) / 2 + (b - a) / 2 * np.cos(np.pi * (k + 0.5) / n)


# Region 1: erf(x)/x as a polynomial in z = x^2.
x1 = cheb(0.0, T1, 4000)
z1 = x1 * x1
y1 = erf(x1) / x1
p = lawson_fit(z1, y1 - 1, 1 / y1, 6)
# Region 2: log(erfc(a)) as a polynomial in t = a - T1.
x2 = cheb(T1, T2, 4000)
y2 = np.log(erfc(x2))
q = lawson_fit(x2 - T1, y2, np.ones_like(x2), 10)

print("P =", [float(np.float32(c)) for c in p])
print("Q =", [float(np.float32(c)) for c in q])

# Float32 evaluation error against erf in float64, in ulp of the result.
xs = np.float32(np.linspace(0, 4.5, 400001))
xs = xs[xs > 0]
a = xs.astype(np.float64)
s1 = horner32(p, (xs * xs).astype(np.float32))
r1 = (a * s1.astype(np.float64) + a).astype(np.float32)
t = (xs - np.float32(T1)).astype(np.float32)
e = np.exp(horner32(q, t).astype(np.float64)).astype(np.float32)
r2 = (np.float32(1) - e).astype(np.float32)
r = np.where(xs < T1, r1, np.where(xs < T2, r2, np.float32(1)))
ref = erf(a)
ulp = np.spacing(np.float32(ref)).astype(np.float64)
err = np.abs(r.astype(np.float64) - ref) / ulp
i = np.argmax(err)
print(f"max error {err.max():.2f} ulp at x = {a[i]:.6g}")
for lo, hi in [(0, T1), (T1, 2), (2, T2), (T2, 4.5)]:
    m = (a >= lo) & (a < hi)
    print(f"  [{lo}, {hi}): {err[m].max():.2f} ulp")
