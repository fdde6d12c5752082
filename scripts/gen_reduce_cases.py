#!/usr/bin/env python3
"""Generates tests/data/reduce/cases.jsonl: PyTorch's answers (values, dtypes, shapes,
error messages) for the reductions and scans of lazyfuse's `src/ops/reduce_ext.rs` and
`src/ops/scan.rs`, replayed by `tests/ops_reduce_oracle.rs`.

Run with a PyTorch 2.15 CPU build:  python scripts/gen_reduce_cases.py
The output is deterministic (fixed seed). The tests never need PyTorch.

One JSON object per line:
  {"id", "op", "input": {"dtype", "shape", "data" (null: zeros), "transpose"},
   "args": {...}, "results": [{"dtype", "shape", "data", "rtol", "atol"}, ...]}
or, where PyTorch raised, "error": first line of its message instead of "results".
Floats are numbers or "nan"/"inf"/"-inf"; complex numbers are [re, im].
"""

import json
import math
import os
import random

import torch

random.seed(5)
torch.manual_seed(5)

DTYPES = {
    "bool": torch.bool,
    "uint8": torch.uint8,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
    "complex32": torch.complex32,
}
NAME = {v: k for k, v in DTYPES.items()}

TOL = {
    "float64": (1e-9, 1e-10),
    "complex128": (1e-9, 1e-10),
    "float32": (1e-4, 1e-5),
    "complex64": (1e-4, 1e-5),
    "float16": (1e-2, 1e-2),
    "bfloat16": (5e-2, 5e-2),
}


def enc_float(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def enc(t):
    flat = t.reshape(-1)
    if t.dtype.is_complex:
        flat = flat.to(torch.complex128)
        return [[enc_float(z.real), enc_float(z.imag)] for z in flat.tolist()]
    if t.dtype.is_floating_point:
        return [enc_float(x) for x in flat.to(torch.float64).tolist()]
    return flat.tolist()


def result(t):
    name = NAME[t.dtype]
    rtol, atol = TOL.get(name, (0, 0))
    return {"dtype": name, "shape": list(t.shape), "data": enc(t), "rtol": rtol, "atol": atol}


def make_input(dtype, shape, special=False):
    n = math.prod(shape)
    if dtype == "complex32":
        return None, torch.zeros(shape, dtype=torch.complex32)
    d = DTYPES[dtype]
    if dtype == "bool":
        t = torch.rand(shape) > 0.5
    elif not (d.is_floating_point or d.is_complex):
        info = torch.iinfo(d)
        lo, hi = max(info.min, -6), min(info.max, 6)
        vals = [random.randint(lo, hi) for _ in range(n)]
        if special and n >= 2:
            vals[0], vals[-1] = info.max, info.min
        t = torch.tensor(vals, dtype=d).reshape(shape)
    else:
        t = (torch.randn(shape, dtype=torch.float64) * 2).to(d)
        if d.is_complex:
            t = (torch.randn(shape, dtype=torch.complex128) * 2).to(d)
        if special and n >= 4:
            flat = t.reshape(-1)
            pool = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0]
            for i in range(0, n, 3):
                flat[i] = pool[(i // 3) % len(pool)]
            t = flat.reshape(shape)
    return enc(t), t


def call(op, x, args):
    dims = args.get("dims")
    alld = dims == [] or dims is None
    dim_arg = None if alld else tuple(dims)
    kd = args.get("keepdim", False)
    if op == "nansum":
        return torch.nansum(x, dim=dim_arg, keepdim=kd) if not alld else torch.nansum(x)
    if op == "nanmean":
        return torch.nanmean(x, dim=dim_arg, keepdim=kd)
    if op in ("any", "all"):
        f = torch.any if op == "any" else torch.all
        return f(x) if alld else f(x, dim=dim_arg, keepdim=kd)
    if op == "logsumexp":
        return torch.logsumexp(x, dim=tuple(range(x.dim())) if alld else dim_arg, keepdim=kd)
    if op == "count_nonzero":
        return torch.count_nonzero(x, dim=dim_arg)
    if op == "norm":
        p = args["p"]
        p = float(p) if isinstance(p, str) else p
        return torch.linalg.vector_norm(x, ord=p, dim=dim_arg, keepdim=kd)
    if op in ("amax", "amin"):
        f = torch.amax if op == "amax" else torch.amin
        return f(x, dim=() if alld else dim_arg, keepdim=kd)
    if op == "max_all":
        return torch.max(x)
    if op == "min_all":
        return torch.min(x)
    if op in ("max_dim", "min_dim"):
        f = torch.max if op == "max_dim" else torch.min
        return tuple(f(x, args["dim"], args["keepdim"]))
    if op == "aminmax":
        return tuple(torch.aminmax(x, dim=args["dim"], keepdim=args["keepdim"]))
    if op in ("var_mean", "std_mean"):
        f = torch.var_mean if op == "var_mean" else torch.std_mean
        return tuple(f(x, dim=dim_arg, correction=args["correction"], keepdim=kd))
    if op == "cumprod":
        return torch.cumprod(x, args["dim"])
    if op == "cumsum":
        return torch.cumsum(x, args["dim"])
    if op == "logcumsumexp":
        return torch.logcumsumexp(x, args["dim"])
    if op in ("cummax", "cummin"):
        f = torch.cummax if op == "cummax" else torch.cummin
        return tuple(f(x, args["dim"]))
    if op == "softmax":
        return torch.softmax(x, args["dim"])
    if op == "log_softmax":
        return torch.log_softmax(x, args["dim"])
    raise ValueError(op)


cases = []


def case(op, dtype, shape, args, special=False, transpose=False, data=None):
    if data is None:
        enc_data, x = make_input(dtype, shape, special)
    else:
        x = torch.tensor(data, dtype=DTYPES[dtype]).reshape(shape)
        enc_data = enc(x)
    obj = {
        "id": f"reduce-{len(cases):04d}",
        "op": op,
        "input": {"dtype": dtype, "shape": list(shape), "data": enc_data, "transpose": transpose},
        "args": args,
    }
    try:
        y = call(op, x.t() if transpose else x, args)
        ys = y if isinstance(y, tuple) else (y,)
        obj["results"] = [result(t) for t in ys]
    except Exception as e:  # noqa: BLE001 - every refusal is recorded
        obj["error"] = str(e).split("\n")[0]
    cases.append(obj)


ALL = list(DTYPES)
REDUCE_ARGS = [
    {"dims": [], "keepdim": False},
    {"dims": [1], "keepdim": False},
    {"dims": [0, -1], "keepdim": True},
]
SCAN_OPS = ["cumprod", "cummax", "cummin", "logcumsumexp"]
for dtype in ALL:
    for op in ["nansum", "nanmean", "any", "all", "logsumexp", "count_nonzero"]:
        for args in REDUCE_ARGS:
            case(op, dtype, [2, 3], args)
    for p in [2, 1, "inf", "-inf", 0, 3]:
        case("norm", dtype, [2, 3], {"p": p, "dims": [], "keepdim": False})
    case("norm", dtype, [2, 3], {"p": 2, "dims": [1], "keepdim": True})
    case("max_all", dtype, [2, 3], {})
    case("min_all", dtype, [2, 3], {})
    for op in ["max_dim", "min_dim"]:
        case(op, dtype, [2, 3], {"dim": 1, "keepdim": False})
        case(op, dtype, [2, 3], {"dim": 0, "keepdim": True})
    case("aminmax", dtype, [2, 3], {"dim": None, "keepdim": False})
    case("aminmax", dtype, [2, 3], {"dim": 1, "keepdim": True})
    for op in ["var_mean", "std_mean"]:
        case(op, dtype, [2, 3], {"dims": [1], "correction": 1, "keepdim": False})
        case(op, dtype, [2, 3], {"dims": [], "correction": 0, "keepdim": True})
    for op in SCAN_OPS:
        case(op, dtype, [2, 4], {"dim": 1})
        case(op, dtype, [2, 4], {"dim": 0})

# Special values (NaN, ±inf, ±0, integer extremes), non-contiguous inputs, zero-dim.
SPECIAL = ["int8", "int64", "uint8", "float16", "bfloat16", "float32", "float64", "complex128"]
for dtype in SPECIAL:
    for op in ["nansum", "nanmean", "any", "all", "logsumexp", "count_nonzero"]:
        case(op, dtype, [3, 4], {"dims": [1], "keepdim": False}, special=True)
        case(op, dtype, [3, 4], {"dims": [0], "keepdim": False}, special=True, transpose=True)
    for p in [2, 1, "inf", "-inf", 0]:
        case("norm", dtype, [3, 4], {"p": p, "dims": [1], "keepdim": False}, special=True)
    for op in ["max_dim", "min_dim"]:
        case(op, dtype, [3, 4], {"dim": 1, "keepdim": False}, special=True)
        case(op, dtype, [3, 4], {"dim": 1, "keepdim": False}, special=True, transpose=True)
    case("aminmax", dtype, [3, 4], {"dim": 1, "keepdim": False}, special=True)
    for op in SCAN_OPS:
        case(op, dtype, [3, 4], {"dim": 1}, special=True)
        case(op, dtype, [3, 4], {"dim": 0}, special=True, transpose=True)
    for op in ["var_mean", "std_mean"]:
        case(op, dtype, [3, 4], {"dims": [1], "correction": 1, "keepdim": False}, special=True)
    # zero-dim
    for op in ["nansum", "any", "all", "count_nonzero"]:
        case(op, dtype, [], {"dims": [], "keepdim": False})
    case("logsumexp", dtype, [], {"dims": [0], "keepdim": False})
    case("max_dim", dtype, [], {"dim": 0, "keepdim": True})
    case("aminmax", dtype, [], {"dim": 0, "keepdim": False})
    for op in SCAN_OPS:
        case(op, dtype, [], {"dim": 0})

# Hand-picked rows: logsumexp/logcumsumexp infinities, cummax ties and NaN indices.
INF, NAN = float("inf"), float("nan")
case("logsumexp", "float32", [6, 2], {"dims": [1], "keepdim": False},
     data=[-INF, -INF, INF, 1.0, INF, INF, NAN, INF, 1000.0, 1000.0, -INF, 0.0])
case("logcumsumexp", "float64", [6], {"dim": 0}, data=[-INF, -INF, 1.0, INF, NAN, 1.0])
case("logcumsumexp", "float32", [3], {"dim": 0}, data=[INF, INF, -INF])
case("logcumsumexp", "complex64", [3], {"dim": 0}, data=[1 + 1j, 2 - 1j, 3j])
case("logsumexp", "complex128", [3], {"dims": [0], "keepdim": False}, data=[1 + 1j, 2 - 1j, 3j])
case("cummax", "float32", [8], {"dim": 0}, data=[3.0, 1.0, 3.0, 5.0, 5.0, NAN, 2.0, NAN])
case("cummin", "float32", [8], {"dim": 0}, data=[3.0, 1.0, 1.0, 5.0, 0.0, NAN, -9.0, NAN])
case("cummax", "int64", [5], {"dim": 0}, data=[1, 3, 3, 2, 3])
case("cumprod", "int64", [3], {"dim": 0}, data=[2**40, 2**40, 3])
case("cumprod", "float16", [3], {"dim": 0}, data=[300.0, 300.0, 0.001])
case("nansum", "float16", [3], {"dims": [], "keepdim": False}, data=[60000.0, 60000.0, -60000.0])
case("norm", "float16", [2], {"p": 2, "dims": [], "keepdim": False}, data=[60000.0, 60000.0])
case("max_dim", "bool", [3], {"dim": 0, "keepdim": False}, data=[False, True, True])

# Overflow and underflow where PyTorch accumulates in the compute type, and long rows
# that exercise float16/bfloat16 accumulation.
case("norm", "float32", [2], {"p": 2, "dims": [], "keepdim": False}, data=[1e30, 1e30])
case("norm", "float32", [2], {"p": 2, "dims": [], "keepdim": False}, data=[1e-30, 1e-30])
case("norm", "complex64", [2], {"p": 2, "dims": [], "keepdim": False}, data=[1e30j, 1e30])
case("nansum", "float32", [3], {"dims": [], "keepdim": False}, data=[3e38, 3e38, -3e38])
case("cumprod", "float32", [3], {"dim": 0}, data=[1e30, 1e30, 1e-30])
for dtype in ["float16", "bfloat16", "float32"]:
    for op in ["nansum", "nanmean", "logsumexp"]:
        case(op, dtype, [3, 300], {"dims": [1], "keepdim": False})
    case("norm", dtype, [3, 300], {"p": 2, "dims": [1], "keepdim": False})
    case("norm", dtype, [3, 300], {"p": 1, "dims": [1], "keepdim": False})
    case("logcumsumexp", dtype, [2, 200], {"dim": 1})
    case("var_mean", dtype, [3, 300], {"dims": [1], "correction": 1, "keepdim": False})

# Bad dims: out of range and repeated.
for op in ["nansum", "nanmean", "any", "all", "logsumexp", "count_nonzero"]:
    case(op, "float32", [2, 3], {"dims": [2], "keepdim": False})
    case(op, "float32", [2, 3], {"dims": [0, -2], "keepdim": False})
case("norm", "float32", [2, 3], {"p": 2, "dims": [-3], "keepdim": False})
case("norm", "float32", [2, 3], {"p": 1, "dims": [1, 1], "keepdim": False})
for op in ["max_dim", "min_dim"]:
    case(op, "float32", [2, 3], {"dim": 2, "keepdim": False})
case("aminmax", "float32", [2, 3], {"dim": -3, "keepdim": False})
case("var_mean", "float32", [2, 3], {"dims": [0, 0], "correction": 1, "keepdim": False})
for op in SCAN_OPS:
    case(op, "float32", [2, 3], {"dim": 2})
    case(op, "float32", [], {"dim": 1})

# Empty tensors: which refusals still fire, which ops return an empty result.
for dtype in ["int64", "bool", "float32", "complex64", "float16"]:
    for shape in [[0], [2, 0]]:
        for op in ["amax", "amin"]:
            case(op, dtype, shape, {"dims": [], "keepdim": False})
            case(op, dtype, shape, {"dims": [0], "keepdim": False})
        for op in ["max_all", "min_all"]:
            case(op, dtype, shape, {})
        case("max_dim", dtype, shape, {"dim": 0, "keepdim": False})
        case("min_dim", dtype, shape, {"dim": -1, "keepdim": False})
        case("aminmax", dtype, shape, {"dim": None, "keepdim": False})
        case("aminmax", dtype, shape, {"dim": 0, "keepdim": False})
        for op in ["softmax", "log_softmax", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]:
            case(op, dtype, shape, {"dim": 0})
        for op in ["nansum", "nanmean", "any", "all", "count_nonzero", "logsumexp"]:
            case(op, dtype, shape, {"dims": [0], "keepdim": False})
        case("logsumexp", dtype, shape, {"dims": [], "keepdim": False})
        for p in [2, "inf", "-inf"]:
            case("norm", dtype, shape, {"p": p, "dims": [], "keepdim": False})
            case("norm", dtype, shape, {"p": p, "dims": [-1], "keepdim": False})
        for op in ["var_mean", "std_mean"]:
            case(op, dtype, shape, {"dims": [], "correction": 1, "keepdim": False})

out = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "reduce", "cases.jsonl")
with open(out, "w") as f:
    for c in cases:
        f.write(json.dumps(c) + "\n")
print(f"{len(cases)} cases -> {os.path.normpath(out)}")
