"""Generates tests/data/seeds/value_views.jsonl with PyTorch (2.15, CPU): the views
of `tensor-views.rst` that see a storage's values differently (`view(dtype)`, `real`, `imag`,
`view_as_real`, `view_as_complex`, `conj` with `is_conj`/`resolve_conj`, the
conjugate transposes `mH`, `H`, `adjoint`), in chains with transposes and narrows:
each step's dtype, shape, strides, offset, conjugate and negative bits, and values;
PyTorch's refusals; and writes through the final view, with the base's values after.
Run:

    python scripts/gen_seed_value_views.py tests/data/seeds

with a PyTorch 2.15 installation. The project never needs PyTorch itself: the output is
vendored and replayed by tests/conformance_seeds.rs.
"""

import json
import math
import os
import sys

import torch

CASES = []


def enc(v):
    if isinstance(v, complex):
        return [enc(v.real), enc(v.imag)]
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def dname(d):
    return str(d).replace("torch.", "")


def base_of(dtype, shape):
    n = math.prod(shape)
    if dtype.is_complex:
        vals = [complex(i + 1, -(i % 3) - 0.5) for i in range(n)]
    else:
        vals = [float(i) - 2.5 for i in range(n)]
    return torch.tensor(vals, dtype=dtype).reshape(shape)


def apply(t, op, args):
    if op in ("real", "imag", "mH", "H", "mT", "T"):
        return getattr(t, op)
    if op in ("conj", "resolve_conj", "resolve_neg", "adjoint"):
        return getattr(t, op)()
    if op == "view_as_real":
        return torch.view_as_real(t)
    if op == "view_as_complex":
        return torch.view_as_complex(t)
    if op == "view_dtype":
        return t.view(getattr(torch, args["dtype"]))
    if op == "transpose":
        return t.transpose(args["dim0"], args["dim1"])
    if op == "narrow":
        return t.narrow(args["dim"], args["start"], args["length"])
    raise ValueError(op)


def record(t, base, op, args):
    return {"op": op, "args": args, "dtype": dname(t.dtype), "shape": list(t.shape),
            "strides": list(t.stride()), "storage_offset": t.storage_offset(),
            "is_conj": t.is_conj(), "is_neg": t.is_neg(),
            "shares_storage_with_base": t.untyped_storage().data_ptr() == base.untyped_storage().data_ptr(),
            "values": [enc(v) for v in t.resolve_conj().resolve_neg().reshape(-1).tolist()]}


def chain(dtype, shape, steps, write=None, data=None):
    case = {"id": f"value_views-{len(CASES) + 1:05d}", "base_dtype": dname(dtype), "base_shape": shape}
    if data is not None:
        base = torch.tensor(data, dtype=dtype).reshape(shape)
        case["base_data"] = [enc(v) for v in base.reshape(-1).tolist()]
    else:
        base = base_of(dtype, shape)
    t = base
    recs = []
    for op, args in steps:
        try:
            t = apply(t, op, args)
        except (RuntimeError, TypeError, IndexError) as e:
            case["error"] = {"op": op, "args": args, "error": type(e).__name__,
                             "message": str(e).split("\n")[0]}
            break
        recs.append(record(t, base, op, args))
    case["steps"] = recs
    if write is not None and "error" not in case:
        op, value = write
        getattr(t, op)(value)
        case["write"] = {"op": op, "value": enc(value)}
        case["base_after"] = [enc(v) for v in base.reshape(-1).tolist()]
    CASES.append(case)


DTYPES = ["bool", "uint8", "int8", "int16", "uint16", "float16", "bfloat16", "int32", "uint32",
          "float32", "int64", "uint64", "float64", "complex64", "complex128"]


def bits_data(dtype, n):
    """Values whose bytes vary (no NaN payloads: those are not compared bit for bit)."""
    if dtype == torch.bool:
        return [i % 3 == 0 for i in range(n)]
    if dtype.is_complex:
        return [complex(i * 0.75 - 1, 2.5 - i) for i in range(n)]
    if dtype.is_floating_point:
        return [(i * 1.375 - 3.0) * (1 if i % 2 else 1000.5) for i in range(n)]
    info = torch.iinfo(dtype)
    return [(i * 7919 + 13) % (info.max // 2) for i in range(n)]


def view_dtypes(tr):
    """view(dtype) between every pair of dtypes, through layouts, with writes."""
    for src in DTYPES:
        sdt = getattr(torch, src)
        for dst in DTYPES:
            step = ("view_dtype", {"dtype": dst})
            for shape, pre in [([2, 4], []), ([4, 2], [tr]), ([3, 8], [("narrow", {"dim": 1, "start": 2, "length": 4})]),
                               ([3, 8], [("narrow", {"dim": 1, "start": 1, "length": 4})]), ([], []),
                               ([2, 6], [("narrow", {"dim": 1, "start": 0, "length": 3})])]:
                n = math.prod(shape)
                chain(sdt, shape, pre + [step], data=bits_data(sdt, n))
    for src, dst, w in [("float32", "int32", ("bitwise_xor_", -2147483648)), ("int32", "float32", ("mul_", 2.0)),
                        ("float64", "int16", ("add_", 1)), ("int16", "int64", ("fill_", 7)),
                        ("complex64", "float64", ("mul_", -1.0)), ("float32", "complex64", ("mul_", 1j)),
                        ("uint8", "bool", ("fill_", True)), ("float32", "float64", ("fill_", 0.5))]:
        sdt = getattr(torch, src)
        for shape, pre in [([2, 4], []), ([3, 8], [("narrow", {"dim": 1, "start": 2, "length": 4})])]:
            chain(sdt, shape, pre + [("view_dtype", {"dtype": dst})], write=w, data=bits_data(sdt, math.prod(shape)))
    chain(torch.complex64, [2], [("conj", {}), ("view_dtype", {"dtype": "float64"})])
    chain(torch.complex64, [2], [("conj", {}), ("imag", {}), ("view_dtype", {"dtype": "float32"})])


def main(out_dir):
    tr = ("transpose", {"dim0": 0, "dim1": 1})
    nar = ("narrow", {"dim": -1, "start": 1, "length": 2})
    for dt in [torch.complex64, torch.complex128]:
        for shape in [[2, 3], [3], [], [2, 0]]:
            pre = [[], [tr], [nar]] if len(shape) == 2 and shape[1] >= 3 else [[]]
            for p in pre:
                for steps in [["real"], ["imag"], ["view_as_real"], ["conj"], ["conj", "real"],
                              ["conj", "imag"], ["conj", "resolve_conj"], ["conj", "conj"],
                              ["conj", "view_as_real"], ["view_as_real", "view_as_complex"],
                              ["conj", "imag", "resolve_neg"], ["mH"], ["H"], ["adjoint"],
                              ["mH", "imag"], ["real", "view_as_complex"]]:
                    chain(dt, shape, p + [(s, {}) for s in steps])
        for steps, w in [(["real"], ("add_", 10.0)), (["imag"], ("mul_", 2.0)),
                         (["conj"], ("add_", 1j)), (["conj", "imag"], ("add_", 1.0)),
                         (["view_as_real"], ("mul_", -1.0)), (["mH"], ("add_", 2j)),
                         (["view_as_real", "view_as_complex"], ("mul_", 2j)),
                         (["conj", "real"], ("zero_", None))]:
            for p in [[], [tr]]:
                ws = w if w[1] is not None else ("zero_", None)
                base = base_of(dt, [2, 3])
                chain(dt, [2, 3], p + [(s, {}) for s in steps],
                      write=(ws[0], ws[1]) if ws[1] is not None else None)
                if ws[1] is None:
                    t = base
                    for s in p + [(s, {}) for s in steps]:
                        t = apply(t, s[0], s[1])
                    t.zero_()
                    CASES[-1]["write"] = {"op": "zero_", "value": None}
                    CASES[-1]["base_after"] = [enc(v) for v in base.reshape(-1).tolist()]
    for dt in [torch.float32, torch.float64]:
        for shape, pre in [([3, 2], []), ([2, 3, 2], [("narrow", {"dim": 0, "start": 1, "length": 1})]),
                           ([4, 2], [("narrow", {"dim": 0, "start": 1, "length": 2})]),
                           ([2, 4], [("narrow", {"dim": 1, "start": 1, "length": 2})]),
                           ([2, 4], [("narrow", {"dim": 1, "start": 2, "length": 2})]),
                           ([2, 2], [tr]), ([3], []), ([4], [("narrow", {"dim": 0, "start": 0, "length": 2})])]:
            for steps in [["view_as_complex"], ["view_as_complex", "conj"], ["view_as_complex", "real"],
                          ["view_as_complex", "imag"], ["view_as_complex", "view_as_real"], ["real"], ["imag"],
                          ["conj"], ["view_as_real"]]:
                chain(dt, shape, pre + [(s, {}) for s in steps])
        chain(dt, [3, 2], [("view_as_complex", {})], write=("mul_", 1j))
    for dt in [torch.int32, torch.bfloat16]:
        chain(dt, [3, 2], [("view_as_complex", {})])
    os.makedirs(out_dir, exist_ok=True)
    view_dtypes(tr)
    with open(os.path.join(out_dir, "value_views.jsonl"), "w") as f:
        for c in CASES:
            f.write(json.dumps(c) + "\n")
    print(f"{len(CASES)} cases", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/seeds")
