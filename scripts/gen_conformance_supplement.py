"""Generates tests/data/conformance_supplement/*.jsonl with PyTorch (2.15, CPU).

The public corpus (tests/data/conformance, SCHEMA.md) names ops that none of its cases
reach: much of the unary list of §4, `fmax`/`fmin`/`nansum`/`logsumexp`/`cumprod`/
`clamp_tensor` of §7, and `clamp_min_`/`maximum_out_self` plus several binary in-place
ops of §3. This script writes cases for exactly those, in the same schema, so that the
conformance runner (conformance/) checks each op's mapping end to end (values, dtypes
and refusals) with the schema's tolerances. Run:

    python scripts/gen_conformance_supplement.py tests/data/conformance_supplement

with a PyTorch 2.15 installation. The project never needs PyTorch itself: the output is
vendored and replayed by tests/conformance_supplement.rs.
"""

import json
import math
import os
import sys

import torch

DTYPES = {
    "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16,
    "int32": torch.int32, "int64": torch.int64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
    "complex64": torch.complex64, "complex128": torch.complex128,
}
NAMES = {v: k for k, v in DTYPES.items()}
ELEMENTWISE_TOL = {
    "float64": (1e-10, 1e-12), "complex128": (1e-10, 1e-12),
    "float32": (1e-5, 1e-6), "complex64": (1e-5, 1e-6),
    "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2),
}
ACCUM_TOL = {
    "float64": (1e-9, 1e-10), "complex128": (1e-9, 1e-10),
    "float32": (1e-4, 1e-5), "complex64": (1e-4, 1e-5),
    "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2),
}
ACCUMULATING = {"nansum", "logsumexp", "cumprod", "all", "any", "argmin", "log_softmax"}


def enc_float(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def enc_elem(x, dtype):
    if dtype == torch.bool:
        return bool(x)
    if dtype.is_complex:
        return [enc_float(x.real), enc_float(x.imag)]
    if dtype.is_floating_point:
        return enc_float(x)
    return int(x)


def enc_tensor(t):
    flat = t.detach().contiguous().reshape(-1)
    if t.dtype in (torch.float16, torch.bfloat16):
        data = [enc_float(v) for v in flat.float().tolist()]
    else:
        data = [enc_elem(v, t.dtype) for v in flat.tolist()]
    return {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data": data}


def enc_result(fn, op):
    try:
        r = fn()
    except Exception as e:  # the reference's refusal is the expected result
        return {"error": type(e).__name__, "message": str(e).split("\n")[0]}
    out = enc_tensor(r)
    table = ACCUM_TOL if op in ACCUMULATING else ELEMENTWISE_TOL
    rtol, atol = table.get(out["dtype"], (0.0, 0.0))
    out["rtol"], out["atol"] = rtol, atol
    return out


def values_for(dtype, n, kind):
    """n input values of `dtype`: small mixed ones, or the float special values."""
    if dtype == torch.bool:
        return torch.tensor([i % 3 == 0 for i in range(n)], dtype=dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        base = [0, 1, -2, 3, -1, 2, 5, -3]
        if dtype == torch.uint8:
            base = [0, 1, 2, 3, 7, 200, 255, 4]
        return torch.tensor([base[i % len(base)] for i in range(n)], dtype=dtype)
    if kind == "special":
        base = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 0.5, -1.5, 2.0]
    else:
        base = [0.25, -0.5, 1.5, -2.0, 0.75, 3.0, -0.125, 0.9]
    real = torch.tensor([base[i % len(base)] for i in range(n)], dtype=torch.float64)
    if dtype.is_complex:
        imag = torch.tensor([base[(i + 3) % len(base)] for i in range(n)], dtype=torch.float64)
        return torch.complex(real, imag).to(dtype)
    return real.to(dtype)


UNARY = ["sgn", "exp2", "expm1", "log2", "log1p", "sinh", "erf", "frac", "square",
         "positive", "isinf", "isfinite", "signbit", "all", "any", "nansum", "argmin"]
UNARY_DIM = ["cumprod", "log_softmax", "logsumexp"]


def unary_fn(op, x):
    if op in UNARY_DIM:
        return lambda: getattr(torch, op)(x, dim=-1)
    return lambda: getattr(torch, op)(x)


def gen_unary():
    cases = []
    for op in UNARY + UNARY_DIM:
        for name, dtype in DTYPES.items():
            x = values_for(dtype, 6, "plain").reshape(2, 3)
            cases.append(("per_dtype", op, x))
        for name in ["float16", "bfloat16", "float32", "float64", "complex64"]:
            x = values_for(DTYPES[name], 8, "special").reshape(2, 4)
            cases.append(("special_values", op, x))
        cases.append(("zerodim", op, torch.tensor(1.5)))
        cases.append(("empty", op, torch.zeros(0, 3)))
    out = []
    for i, (family, op, x) in enumerate(cases):
        args = {"dim": -1} if op in UNARY_DIM else {}
        out.append({"id": f"unary-s{i:05d}", "op": op, "args": args, "family": family,
                    "input": enc_tensor(x), "result": enc_result(unary_fn(op, x), op)})
    return out


def gen_values():
    out = []

    def add(op, inputs, args, fn, family):
        out.append({"id": f"values-s{len(out):05d}", "op": op, "args": args,
                    "family": family, "inputs": [enc_tensor(t) for t in inputs],
                    "result": enc_result(fn, op)})

    pairs = [("float32", "float32"), ("float16", "float32"), ("int32", "float64"),
             ("bfloat16", "bfloat16"), ("int64", "int8"), ("bool", "uint8"),
             ("float64", "float64"), ("complex64", "float32")]
    for an, bn in pairs:
        a = values_for(DTYPES[an], 8, "special").reshape(2, 4)
        b = values_for(DTYPES[bn], 4, "plain").flip(0)
        for op in ["fmax", "fmin"]:
            add(op, [a, b], {}, lambda op=op, a=a, b=b: getattr(torch, op)(a, b), "nan_propagation")
        lo, hi = values_for(DTYPES[bn], 4, "plain"), values_for(DTYPES[bn], 1, "plain") + 1
        add("clamp_tensor", [a, lo, hi], {},
            lambda a=a, lo=lo, hi=hi: torch.clamp(a, lo, hi), "clamp")
    for name in ["bool", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                 "complex64"]:
        x = values_for(DTYPES[name], 24, "plain").reshape(2, 3, 4)
        xt = x.transpose(0, 2)
        view = [{"op": "transpose", "args": {"dim0": 0, "dim1": 2}}]
        for op in ["nansum", "logsumexp"]:
            for dim, keep in [(None, False), (1, True), ([0, 2], False), ([], False), (-1, False)]:
                def fn(op=op, dim=dim, keep=keep):
                    d = list(range(xt.dim())) if dim in (None, []) else dim
                    if op == "logsumexp":
                        return torch.logsumexp(xt, dim=d, keepdim=keep)
                    return torch.nansum(xt, dim=dim if dim != [] else None, keepdim=keep)
                add(op, [xt], {"dim": dim, "keepdim": keep}, fn, "reduction")
                out[-1]["inputs"][0] = dict(enc_tensor(x), view=view)
        for dim in [0, -1]:
            add("cumprod", [xt], {"dim": dim}, lambda xt=xt, dim=dim: torch.cumprod(xt, dim), "cumsum")
            out[-1]["inputs"][0] = dict(enc_tensor(x), view=view)
    return out


def gen_inplace():
    out = []
    ops = {
        "clamp_min_": lambda a, b: a.clamp_min_(b),
        "maximum_out_self": lambda a, b: torch.maximum(a, b, out=a),
        "fmod_": lambda a, b: a.fmod_(b),
        "atan2_": lambda a, b: a.atan2_(b),
        "bitwise_or_": lambda a, b: a.bitwise_or_(b),
        "bitwise_xor_": lambda a, b: a.bitwise_xor_(b),
    }
    names = ["bool", "uint8", "int16", "int64", "float16", "bfloat16", "float32",
             "float64", "complex64"]
    for op, fn in ops.items():
        for an in names:
            for bn in names:
                for kind in ["tensor", "zerodim"]:
                    a = values_for(DTYPES[an], 6, "plain").reshape(2, 3)
                    b = values_for(DTYPES[bn], 3, "plain") if kind == "tensor" else \
                        values_for(DTYPES[bn], 1, "plain").reshape(())
                    if bn != "bool":  # non-zero divisors, as the public corpus has
                        b = torch.where(b == 0, torch.ones_like(b), b)
                    enc_a, enc_b = enc_tensor(a), dict(enc_tensor(b), kind=kind)
                    result = enc_result(lambda: fn(a.clone(), b), op)
                    if "error" not in result:
                        dest = a.clone()
                        fn(dest, b)
                        result = dict(enc_tensor(dest), rtol=result["rtol"], atol=result["atol"])
                    out.append({"id": f"inplace-s{len(out):05d}", "family": "dtype_sample",
                                "op": op, "a": enc_a, "b": enc_b, "result": result})
        for value in [2, -1.5, True]:
            stype = {bool: "bool", int: "int", float: "float"}[type(value)]
            for an in ["int64", "float32", "bfloat16"]:
                if op in ("maximum_out_self", "atan2_"):
                    # No scalar overload in the reference (a Python TypeError): the
                    # public corpus leaves these combinations out too (SCHEMA.md §2).
                    continue
                a = values_for(DTYPES[an], 6, "plain").reshape(2, 3)
                result = enc_result(lambda: fn(a.clone(), value), op)
                out.append({"id": f"inplace-s{len(out):05d}", "family": "dtype_sample",
                            "op": op, "a": enc_tensor(a),
                            "b": {"kind": "scalar", "scalar_type": stype, "value": value},
                            "result": result})
    return out


def main():
    dest = sys.argv[1]
    os.makedirs(dest, exist_ok=True)
    for name, cases in [("unary", gen_unary()), ("values", gen_values()),
                        ("inplace", gen_inplace())]:
        with open(os.path.join(dest, f"{name}.jsonl"), "w") as f:
            for c in cases:
                f.write(json.dumps(c) + "\n")
        print(f"{name}.jsonl: {len(cases)} cases")


if __name__ == "__main__":
    main()
