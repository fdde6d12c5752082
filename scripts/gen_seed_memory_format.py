"""Generates tests/data/seeds/memory_format.jsonl with PyTorch (2.15, CPU): the memory
formats of `tensor-attributes.rst` and the output strides of elementwise ops
(TensorIterator's rule: dense inputs give their dim order to the output, ties broken
by operand order), in the values schema of tests/data/conformance/SCHEMA.md §7 with
the result's `strides` recorded. Run:

    python scripts/gen_seed_memory_format.py tests/data/seeds

with a PyTorch 2.15 installation. The project never needs PyTorch itself: the output is
vendored and replayed by tests/conformance_seeds.rs.
"""

import itertools
import json
import math
import os
import random
import sys

import torch

FORMATS = {
    "contiguous_format": torch.contiguous_format,
    "channels_last": torch.channels_last,
    "channels_last_3d": torch.channels_last_3d,
    "preserve_format": torch.preserve_format,
}


def enc_num(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return v


def dname(d):
    return str(d).replace("torch.", "")


def values(dtype, shape, salt):
    n = math.prod(shape)
    if dtype == torch.bool:
        return torch.tensor([(i + salt) % 3 == 0 for i in range(n)], dtype=torch.bool).reshape(shape)
    if dtype.is_floating_point:
        return torch.tensor([((i * 7 + salt) % 11 - 5) * 0.25 for i in range(n)], dtype=dtype).reshape(shape)
    return torch.tensor([(i * 5 + salt) % 13 - 6 for i in range(n)], dtype=dtype).reshape(shape)


def inverse(p):
    inv = [0] * len(p)
    for i, d in enumerate(p):
        inv[d] = i
    return inv


def layout(kind, shape, ndim):
    """(base shape, view steps) giving a tensor of `shape` in layout `kind`."""
    if kind == "contiguous":
        return list(shape), []
    if kind in ("channels_last", "channels_last_3d", "perm"):
        if kind == "channels_last":
            p = [0, 2, 3, 1]
        elif kind == "channels_last_3d":
            p = [0, 2, 3, 4, 1]
        else:
            p = list(reversed(range(ndim)))
            if ndim >= 3:
                p = [1, 2, 0] + list(range(3, ndim))
        base = [shape[d] for d in p]
        return base, [{"op": "permute", "args": {"dims": inverse(p)}}]
    if kind == "transposed":
        base = list(shape)
        base[-1], base[-2] = base[-2], base[-1]
        return base, [{"op": "transpose", "args": {"dim0": -1, "dim1": -2}}]
    if kind == "sliced":
        base = list(shape)
        base[-1] = 2 * base[-1]
        return base, [{"op": "slice", "args": {"dim": ndim - 1, "start": None, "stop": None, "step": 2}}]
    if kind == "expanded":
        base = list(shape)
        base[0] = 1
        return base, [{"op": "expand", "args": {"shape": list(shape)}}]
    raise ValueError(kind)


def apply(t, steps):
    for s in steps:
        op, a = s["op"], s["args"]
        if op == "permute":
            t = t.permute(*a["dims"])
        elif op == "transpose":
            t = t.transpose(a["dim0"], a["dim1"])
        elif op == "slice":
            idx = [slice(None)] * t.dim()
            idx[a["dim"]] = slice(a["start"], a["stop"], a["step"])
            t = t[tuple(idx)]
        elif op == "expand":
            t = t.expand(*a["shape"])
        elif op == "as_strided":
            t = t.as_strided(a["size"], a["stride"], a["storage_offset"])
        else:
            raise ValueError(op)
    return t


def make(dtype, shape, kind, salt):
    base_shape, steps = layout(kind, shape, len(shape))
    base = values(dtype, base_shape, salt)
    obj = {"dtype": dname(dtype), "shape": base_shape,
           "data": [enc_num(v) for v in base.reshape(-1).tolist()]}
    if steps:
        obj["view"] = steps
    return obj, apply(base, steps)


def strided(dtype, size, stride, salt):
    n = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 1
    base = values(dtype, [max(n, 1)], salt)
    steps = [{"op": "as_strided", "args": {"size": size, "stride": stride, "storage_offset": 0}}]
    obj = {"dtype": dname(dtype), "shape": [max(n, 1)],
           "data": [enc_num(v) for v in base.reshape(-1).tolist()], "view": steps}
    return obj, apply(base, steps)


TOL = {torch.float64: (1e-10, 1e-12), torch.float32: (1e-5, 1e-6),
       torch.float16: (2e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2)}

CASES = []


def record(op, args, inputs, fn):
    objs = [o for o, _ in inputs]
    ts = [t for _, t in inputs]
    case = {"id": f"memory_format-{len(CASES) + 1:05d}", "op": op, "args": args, "inputs": objs}
    try:
        r = fn(*ts)
    except (RuntimeError, TypeError, ValueError) as e:
        case["result"] = {"error": type(e).__name__, "message": str(e).split("\n")[0]}
    else:
        if isinstance(r, bool):
            case["result"] = {"value": r}
        else:
            rtol, atol = TOL.get(r.dtype, (0.0, 0.0))
            res = {"dtype": dname(r.dtype), "shape": list(r.shape), "strides": list(r.stride())}
            if not args.get("uninitialized"):
                res["data"] = [enc_num(v) for v in r.reshape(-1).tolist()]
                res["rtol"], res["atol"] = rtol, atol
            case["result"] = res
    CASES.append(case)


BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "maximum": torch.maximum, "eq": torch.eq, "atan2": torch.atan2,
}
UNARY = {"exp": torch.exp, "neg": torch.neg, "abs": torch.abs, "sigmoid": torch.sigmoid,
         "tanh": torch.tanh}

SHAPES4 = [[2, 3, 4, 5], [2, 1, 4, 5], [1, 3, 1, 1], [2, 3, 1, 5], [2, 3, 4, 1], [2, 0, 3, 4],
           [1, 1, 1, 1]]
OTHER = [[3, 4], [4, 3], [2, 3, 4], [5], []]
KINDS = ["contiguous", "channels_last", "transposed", "perm", "sliced", "expanded"]


def kinds_for(shape):
    n = len(shape)
    out = ["contiguous"]
    if n == 4:
        out.append("channels_last")
    if n == 5:
        out.append("channels_last_3d")
    if n >= 2:
        out += ["transposed", "perm"]
    if n >= 1:
        out += ["sliced", "expanded"]
    return out


def main(out_dir):
    rng = random.Random(19)
    f32, f64, i32 = torch.float32, torch.float64, torch.int32
    shapes = SHAPES4 + OTHER + [[2, 3, 2, 2, 3]]
    # unary ops and casts: one operand in every layout
    for shape in shapes:
        for kind in kinds_for(shape):
            for name in ["exp", "neg", "abs"]:
                record(name, {}, [make(f32, shape, kind, 1)], UNARY[name])
            record("exp", {}, [make(i32, shape, kind, 2)], torch.exp)
            record("to", {"dtype": "float64"}, [make(f32, shape, kind, 3)], lambda x: x.to(f64))
            record("add", {"other": 1}, [make(f32, shape, kind, 4)], lambda x: x + 1)
            record("mul", {"other": 2.5}, [make(i32, shape, kind, 5)], lambda x: x * 2.5)
            record("clamp", {"min": -0.5, "max": 0.5}, [make(f32, shape, kind, 6)],
                   lambda x: x.clamp(-0.5, 0.5))
            for fmt in FORMATS:
                record("contiguous", {"memory_format": fmt}, [make(f32, shape, kind, 7)],
                       lambda x, fmt=fmt: x.contiguous(memory_format=FORMATS[fmt]))
                record("is_contiguous", {"memory_format": fmt}, [make(f32, shape, kind, 8)],
                       lambda x, fmt=fmt: x.is_contiguous(memory_format=FORMATS[fmt]))
                record("clone", {"memory_format": fmt}, [make(f32, shape, kind, 9)],
                       lambda x, fmt=fmt: x.clone(memory_format=FORMATS[fmt]))
                record("zeros_like", {"memory_format": fmt}, [make(f32, shape, kind, 10)],
                       lambda x, fmt=fmt: torch.zeros_like(x, memory_format=FORMATS[fmt]))
                record("full_like", {"memory_format": fmt, "value": 3, "dtype": "int64"},
                       [make(f32, shape, kind, 11)],
                       lambda x, fmt=fmt: torch.full_like(x, 3, dtype=torch.int64,
                                                          memory_format=FORMATS[fmt]))
            record("clone", {}, [make(f32, shape, kind, 12)], lambda x: x.clone())
    # binary ops: every pair of layouts on one shape, then broadcasting partners
    for shape in shapes:
        ks = kinds_for(shape)
        for ka, kb in itertools.product(ks, ks):
            name = rng.choice(list(BINARY))
            record(name, {}, [make(f32, shape, ka, 13), make(f32, shape, kb, 14)], BINARY[name])
            # mixed dtypes: the operand that is cast is first copied as PyTorch does
            record("add", {}, [make(i32, shape, ka, 15), make(f64, shape, kb, 16)], torch.add)
        for kind in ks:
            for other in [shape[-1:], shape[1:], [1] * len(shape), [], shape[:1] + [1] * (len(shape) - 1)]:
                if other == shape:
                    continue
                for ok in kinds_for(other):
                    record("mul", {}, [make(f32, shape, kind, 17), make(f32, other, ok, 18)], torch.mul)
                    record("add", {}, [make(f32, other, ok, 19), make(f32, shape, kind, 20)], torch.add)
            # where and tensor clamp: three operands
            for kb in ks:
                cond_obj, cond = make(torch.bool, shape, kb, 21)
                record("where", {}, [(cond_obj, cond), make(f32, shape, kind, 22),
                                     make(f32, shape, "contiguous", 23)], torch.where)
                record("clamp_tensor", {}, [make(f32, shape, kind, 24), make(f32, shape, kb, 25),
                                            make(f32, shape, kb, 26)],
                       lambda x, lo, hi: torch.clamp(x, lo, hi))
    # layouts made directly: strides with size-1 dims, overlapping, negative-free gaps
    for size, stride in [([2, 1, 4, 5], [20, 20, 5, 1]), ([2, 1, 4, 5], [20, 1, 5, 1]),
                         ([2, 1, 4, 5], [20, 7, 1, 4]), ([2, 3, 1, 1], [3, 1, 1, 1]),
                         ([2, 3, 1, 1], [3, 1, 3, 3]), ([3, 4], [1, 3]), ([3, 4], [0, 1]),
                         ([3, 4], [4, 0]), ([3, 4], [1, 1]), ([2, 2, 2], [1, 4, 2]),
                         ([2, 3, 4, 5], [60, 1, 15, 3]), ([2, 3, 4, 5], [1, 2, 6, 24]),
                         ([4, 4], [8, 1]), ([1, 4], [1, 1]), ([4, 1], [1, 1])]:
        record("neg", {}, [strided(f32, size, stride, 27)], torch.neg)
        record("add", {}, [strided(f32, size, stride, 28), strided(f32, size, stride, 29)], torch.add)
        record("to", {"dtype": "float64"}, [strided(f32, size, stride, 30)], lambda x: x.to(f64))
        record("add", {"other": 1}, [strided(f32, size, stride, 31)], lambda x: x + 1)
        for fmt in FORMATS:
            record("is_contiguous", {"memory_format": fmt}, [strided(f32, size, stride, 32)],
                   lambda x, fmt=fmt: x.is_contiguous(memory_format=FORMATS[fmt]))
            record("clone", {"memory_format": fmt}, [strided(f32, size, stride, 33)],
                   lambda x, fmt=fmt: x.clone(memory_format=FORMATS[fmt]))
        for other in [[size[-1]], list(size)]:
            record("add", {}, [strided(f32, size, stride, 34), make(f32, other, "contiguous", 35)], torch.add)
            record("add", {}, [make(f32, other, "contiguous", 36), strided(f32, size, stride, 37)], torch.add)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "memory_format.jsonl"), "w") as f:
        for c in CASES:
            f.write(json.dumps(c, separators=(",", ":")) + "\n")
    print(f"{len(CASES)} cases", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/seeds")
