#!/usr/bin/env python3
"""Generates tests/data/unary_ops.jsonl: expected results of lazyfuse's issue-5 unary
pointwise ops and activations, computed by PyTorch (CPU).

Run with a PyTorch 2.15 interpreter:  python scripts/gen_unary_ops.py
The test tests/ops_unary.rs replays every line through the public API; it never
needs PyTorch.

One JSON object per line:
  {"id", "op", "args", "inplace", "input": tensor, "result": tensor | {"error": msg}}
tensor = {"dtype", "shape", "data", "view"?}; floats are numbers or "nan"/"inf"/"-inf",
complex elements [re, im]. "view": "t" (transpose of a 2-D input) or "step"
(every second column) is applied to the contiguous input before the op.
"""
import json
import math
import os

import torch
import torch.nn.functional as F

DTYPES = {
    "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16,
    "int32": torch.int32, "int64": torch.int64, "uint16": torch.uint16,
    "uint32": torch.uint32, "uint64": torch.uint64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
    "complex64": torch.complex64, "complex128": torch.complex128,
}
NAME = {v: k for k, v in DTYPES.items()}
FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
INTS = ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]


def ht(x, lo=-1.0, hi=1.0):
    return F.hardtanh(x, lo, hi)


def ht_(x, lo=-1.0, hi=1.0):
    return F.hardtanh_(x, lo, hi)


# name -> (function(x, **args), in-place function or None)
def t_(name):
    return lambda x, **a: getattr(x, name + "_")(**a)


OPS = {
    "sgn": (torch.sgn, t_("sgn")),
    "square": (torch.square, t_("square")),
    "positive": (torch.positive, None),
    "exp2": (torch.exp2, t_("exp2")),
    "expm1": (torch.expm1, t_("expm1")),
    "log2": (torch.log2, t_("log2")),
    "log10": (torch.log10, t_("log10")),
    "log1p": (torch.log1p, t_("log1p")),
    "tan": (torch.tan, t_("tan")),
    "asin": (torch.asin, t_("asin")),
    "acos": (torch.acos, t_("acos")),
    "atan": (torch.atan, t_("atan")),
    "sinh": (torch.sinh, t_("sinh")),
    "cosh": (torch.cosh, t_("cosh")),
    "asinh": (torch.asinh, t_("asinh")),
    "acosh": (torch.acosh, t_("acosh")),
    "atanh": (torch.atanh, t_("atanh")),
    "erf": (torch.erf, t_("erf")),
    "erfc": (torch.erfc, t_("erfc")),
    "erfinv": (torch.erfinv, t_("erfinv")),
    "frac": (torch.frac, t_("frac")),
    "isinf": (torch.isinf, None),
    "isposinf": (torch.isposinf, None),
    "isneginf": (torch.isneginf, None),
    "isfinite": (torch.isfinite, None),
    "isreal": (torch.isreal, None),
    "signbit": (torch.signbit, None),
    "sign": (torch.sign, t_("sign")),
    "nan_to_num": (lambda x, **a: torch.nan_to_num(x, **a), t_("nan_to_num")),
    "logit": (lambda x, **a: torch.logit(x, **a), t_("logit")),
    "round_decimals": (lambda x, decimals: torch.round(x, decimals=decimals),
                       lambda x, decimals: x.round_(decimals=decimals)),
    "gelu": (lambda x, approximate="none": F.gelu(x, approximate=approximate),
             lambda x, approximate="none": torch._C._nn.gelu_(x, approximate=approximate)),
    "silu": (F.silu, lambda x: F.silu(x, inplace=True)),
    "mish": (F.mish, lambda x: F.mish(x, inplace=True)),
    "hardsigmoid": (F.hardsigmoid, lambda x: F.hardsigmoid(x, inplace=True)),
    "hardswish": (F.hardswish, lambda x: F.hardswish(x, inplace=True)),
    "softplus": (lambda x, beta=1.0, threshold=20.0: F.softplus(x, beta, threshold), None),
    "elu": (lambda x, alpha=1.0: F.elu(x, alpha), lambda x, alpha=1.0: F.elu_(x, alpha)),
    "leaky_relu": (lambda x, negative_slope=0.01: F.leaky_relu(x, negative_slope),
                   lambda x, negative_slope=0.01: F.leaky_relu_(x, negative_slope)),
    "hardtanh": (lambda x, min_val=-1.0, max_val=1.0: ht(x, min_val, max_val),
                 lambda x, min_val=-1.0, max_val=1.0: ht_(x, min_val, max_val)),
    "relu6": (F.relu6, lambda x: F.relu6(x, inplace=True)),
}

# default arguments lazyfuse's methods take explicitly
DEFAULT_ARGS = {
    "round_decimals": {"decimals": 2},
    "gelu": {"approximate": "none"},
    "softplus": {"beta": 1.0, "threshold": 20.0},
    "elu": {"alpha": 1.0},
    "leaky_relu": {"negative_slope": 0.01},
    "hardtanh": {"min_val": -1.0, "max_val": 1.0},
}

PARAM_VARIANTS = {
    "nan_to_num": [{}, {"nan": 1.5, "posinf": 2.0, "neginf": -3.0}, {"nan": 1e6, "posinf": 1e40}],
    "logit": [{}, {"eps": 0.1}, {"eps": -0.1}, {"eps": 0.7}],
    "round_decimals": [{"decimals": 2}, {"decimals": -1}, {"decimals": 0}, {"decimals": 40}, {"decimals": 3}],
    "gelu": [{"approximate": "none"}, {"approximate": "tanh"}],
    "softplus": [{"beta": 1.0, "threshold": 20.0}, {"beta": 2.0, "threshold": 1.0},
                 {"beta": -1.0, "threshold": 20.0}, {"beta": 0.5, "threshold": 0.5}],
    "elu": [{"alpha": 1.0}, {"alpha": 0.5}],
    "leaky_relu": [{"negative_slope": 0.01}, {"negative_slope": -2.0}],
    "hardtanh": [{"min_val": -1.0, "max_val": 1.0}, {"min_val": -0.5, "max_val": 0.5},
                 {"min_val": -1.5, "max_val": 2.5}],
}

SPECIAL = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, -1.0, 0.5, -0.5,
           2.5, -2.5, 1e-7, -1e-6, 0.999, -0.999, 3.0, -3.0, 10.0, -20.0, 100.0, -100.0, 1e30]


def enc_float(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def encode(t):
    flat = t.detach().contiguous().reshape(-1)
    dt = NAME[t.dtype]
    if dt == "bool":
        data = [bool(v) for v in flat.tolist()]
    elif dt in INTS:
        data = [int(v) for v in flat.tolist()]
    elif dt in COMPLEX:
        data = [[enc_float(z.real), enc_float(z.imag)] for z in flat.tolist()]
    else:
        data = [enc_float(float(v)) for v in flat.float().double().tolist()] if dt in ("float16", "bfloat16") \
            else [enc_float(float(v)) for v in flat.tolist()]
    return {"dtype": dt, "shape": list(t.shape), "data": data}


def make(values, dtype, shape=None):
    d = DTYPES[dtype]
    if dtype in COMPLEX:
        t = torch.tensor([complex(v) for v in values], dtype=d)
    elif dtype == "bool":
        t = torch.tensor([bool(v) for v in values], dtype=d)
    elif dtype in INTS:
        t = torch.tensor([int(v) for v in values], dtype=torch.int64).to(d) if dtype != "uint64" \
            else torch.tensor([int(v) for v in values], dtype=d)
    else:
        t = torch.tensor(values, dtype=torch.float64).to(d)
    if shape is not None:
        t = t.reshape(shape)
    return t


cases = []
NUM_COMPLEX_FNS = ("tan", "asin", "acos", "atan", "asinh", "acosh", "atanh")


def run(op, args, x, inplace=False, view=None, skip_extended=True):
    fn, ifn = OPS[op]
    inp = encode(x)
    if view:
        inp["view"] = view
        x = x.t() if view == "t" else x[:, ::2]
    try:
        if inplace:
            y = x.clone() if not view else x
            ifn(y, **args)
            res = encode(y)
        else:
            res = encode(fn(x, **args))
    except Exception as e:  # noqa: BLE001 - every refusal is data
        msg = str(e).splitlines()[0]
        # lazyfuse computes where PyTorch lacks a wide-unsigned kernel (documented).
        if skip_extended and any(u in msg for u in ("'UInt16'", "'UInt32'", "'UInt64'")) \
                and "not implemented" in msg and not any(
                    k in msg for k in ("frac_cpu", "round", "Gelu", "silu", "softplus", "mish",
                                       "elu_cpu", "leaky", "hardsigmoid", "hardswish")):
            return
        res = {"error": msg}
    full_args = dict(DEFAULT_ARGS.get(op, {}))
    full_args.update(args)
    cases.append({"id": f"u5-{len(cases):05d}", "op": op, "args": full_args,
                  "inplace": inplace, "input": inp, "result": res})


def main():
    torch.manual_seed(5)
    small = [0.0, 1.0, 2.0, 0.5]
    for op in OPS:
        variants = PARAM_VARIANTS.get(op, [{}])
        # dtype table
        for dt in DTYPES:
            vals = [0, 1, 2, 0] if dt in INTS or dt == "bool" else small
            for args in variants[:1]:
                run(op, args, make(vals, dt))
                if OPS[op][1] is not None:
                    run(op, args, make(vals, dt), inplace=True)
        # special and random values
        for dt in FLOATS + COMPLEX:
            for args in variants:
                vals = SPECIAL
                if op == "gelu" and args.get("approximate") == "none" and dt in ("float32", "bfloat16"):
                    # PyTorch's vectorized erf gives gelu(+inf) = NaN, its scalar path inf;
                    # lazyfuse follows the formula (inf).
                    vals = [v for v in SPECIAL if v != float("inf")]
                if op == "signbit":
                    # the sign of a NaN does not survive the JSON encoding
                    vals = [v for v in vals if not math.isnan(v)]
                if dt in COMPLEX:
                    # every pair of special parts, in tensors of 6 elements: PyTorch's
                    # vectorized complex kernels (which differ from its scalar ones at
                    # infinities) only start at 8 elements.
                    parts = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, -1.5, 2.0]
                    grid = [complex(a, b) for a in parts for b in parts]
                    if op in NUM_COMPLEX_FNS:
                        # lazyfuse computes these with num_complex, which does not
                        # follow C99's special values at infinities and NaN.
                        grid = [z for z in grid if math.isfinite(z.real) and math.isfinite(z.imag)]
                    for i in range(0, len(grid), 6):
                        run(op, args, make(grid[i:i + 6], dt))
                else:
                    run(op, args, make(vals, dt))
                r = (torch.randn(24, dtype=torch.float64) * 3)
                if op in ("asin", "acos", "atanh", "erfinv", "logit"):
                    r = torch.rand(24, dtype=torch.float64) * 2 - 1 if op != "logit" else torch.rand(24, dtype=torch.float64)
                if op == "acosh":
                    r = 1 + torch.rand(24, dtype=torch.float64) * 5
                if dt in COMPLEX:
                    r = torch.complex(r, torch.randn(24, dtype=torch.float64))
                run(op, args, r.to(DTYPES[dt]))
        # integer extremes
        for dt in INTS + ["bool"]:
            d = DTYPES[dt]
            if dt == "bool":
                vals = [True, False]
            else:
                info = torch.iinfo(d)
                hi = min(info.max, 2**63 - 1)
                vals = [info.min, hi, 0, 1, info.min + 1 if info.min < 0 else 3]
            run(op, variants[0], make(vals, dt))
        # empty, zero-dim, non-contiguous
        for dt in ("float32", "int64"):
            run(op, variants[0], torch.empty(0, dtype=DTYPES[dt]))
            run(op, variants[0], make([0.25], dt).reshape([]))
        grid = torch.linspace(-3, 3, 12, dtype=torch.float64).to(torch.float32).reshape(3, 4)
        if op in ("acosh",):
            grid = grid.abs() + 1
        if op in ("asin", "acos", "atanh", "erfinv", "logit"):
            grid = grid / 4
        run(op, variants[0], grid, view="t")
        run(op, variants[0], grid, view="step")
        if OPS[op][1] is not None:
            run(op, variants[0], grid.clone(), inplace=True, view="t")
    # hardtanh on integers with fractional and huge bounds
    for dt in ("int64", "uint8", "int8"):
        x = make([0, 1, 3, 100, 127], dt)
        for lo, hi in [(-1.5, 2.5), (-200.0, 5.0), (-1e30, 1e30)]:
            run("hardtanh", {"min_val": lo, "max_val": hi}, x)
            run("hardtanh", {"min_val": lo, "max_val": hi}, x, inplace=True)
    out = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "unary_ops.jsonl")
    with open(out, "w") as f:
        for c in cases:
            f.write(json.dumps(c, separators=(",", ":")) + "\n")
    print(f"{len(cases)} cases -> {os.path.normpath(out)} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
