#!/usr/bin/env python3
"""Generates tests/data/index_ops.jsonl: expected values and errors of lazyfuse's
indexing and shaping ops (gather, index_select, take, scatter*, masked_select,
tril/triu, flip, roll, repeat, tile, pad, index_add, index_fill), computed by PyTorch 2.15 on the CPU.

Run: /work/torch-venv/bin/python scripts/gen_index_cases.py > tests/data/index_ops.jsonl
tests/ops_index_data.rs replays every line through the public API; nothing at test
time needs PyTorch.

Line format (one JSON object per line; the first line is a header note):
  {"op": NAME, "args": {...}, "self": T, "index": T?, "src": T?, "mask": T?,
   "expect": T} or {..., "error": "PyTorch's message (first line)"}
where a tensor T is {"dtype": "float32", "shape": [2, 3], "data": [...],
"view": "t"?} (data row-major; floats may be "nan"/"inf"/"-inf"; complex values are
[re, im]; "view": "t" means the input is the transpose of the tensor given, so it is
not contiguous; "zeros": true stands for a tensor of zeros whose data is not given).
"""
import json
import math

import torch
import torch.nn.functional as F

NAN, INF = float("nan"), float("inf")


def enc_num(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, complex):
        return [enc_num(v.real), enc_num(v.imag)]
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return v


def dname(d):
    return str(d).replace("torch.", "")


def enc(t, view=None, zeros=False):
    out = {"dtype": dname(t.dtype), "shape": list(t.shape)}
    if zeros:
        out["zeros"] = True
        return out
    if t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz,
                   torch.float8_e5m2fnuz, torch.float8_e8m0fnu):
        flat = t.float().reshape(-1).tolist()
    else:
        flat = t.reshape(-1).tolist()
    out["data"] = [enc_num(v) for v in flat]
    if view:
        out["view"] = view
    return out


CASES = []


def case(op, args, tensors, fn):
    """tensors: name -> (torch tensor as the op sees it, encoding options)."""
    line = {"op": op, "args": {k: enc_num(v) for k, v in args.items()}}
    actual = {}
    for name, (t, opts) in tensors.items():
        if opts.get("view") == "t":
            base = t.t().contiguous()
            line[name] = enc(base, view="t")
            actual[name] = base.t()
        else:
            line[name] = enc(t, zeros=opts.get("zeros", False))
            actual[name] = t
    try:
        r = fn(**actual)
        line["expect"] = enc(r)
    except Exception as e:  # noqa: BLE001 - the message is the expectation
        line["error"] = str(e).split("\n")[0]
    CASES.append(line)


def T(data, dtype=torch.float32):
    return torch.tensor(data, dtype=dtype)


def L(data):
    return torch.tensor(data, dtype=torch.int64)


plain = {}
nc = {"view": "t"}
Z = {"zeros": True}

VALUE_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32,
                torch.int64, torch.uint16, torch.float16, torch.bfloat16,
                torch.float32, torch.float64, torch.complex64, torch.complex128]
REFUSE_DTYPES = [torch.uint16, torch.uint32, torch.uint64, torch.complex32,
                 torch.float8_e4m3fn, torch.float8_e5m2]


def sample(dtype, shape):
    n = math.prod(shape)
    if dtype == torch.bool:
        return torch.tensor([i % 3 == 0 for i in range(n)]).reshape(shape)
    if dtype.is_complex:
        return torch.tensor([complex(i - 2, 1 - i) for i in range(n)], dtype=dtype).reshape(shape)
    if dtype.is_floating_point:
        base = [NAN, -INF, -0.0, 1.5, INF, -2.25, 0.0, 3.0]
        return torch.tensor([base[i % len(base)] for i in range(n)], dtype=dtype).reshape(shape)
    if dtype in (torch.uint8, torch.uint16, torch.uint32, torch.uint64):
        return torch.tensor([(7 * i + 3) % 200 for i in range(n)], dtype=dtype).reshape(shape)
    info = torch.iinfo(dtype)
    base = [info.min, -1, 0, 5, info.max, 2]
    return torch.tensor([base[i % len(base)] for i in range(n)], dtype=dtype).reshape(shape)


# --- every dtype through the data-movement ops -------------------------------------
for d in VALUE_DTYPES:
    x = sample(d, (2, 3))
    case("gather", {"dim": 1}, {"self": (x, plain), "index": (L([[2, 0], [1, 1]]), plain)},
         lambda self, index: torch.gather(self, 1, index))
    case("index_select", {"dim": 0}, {"self": (x, plain), "index": (L([1, 0, 1]), plain)},
         lambda self, index: torch.index_select(self, 0, index))
    case("take", {}, {"self": (x, plain), "index": (L([[5, -6], [0, 2]]), plain)},
         lambda self, index: torch.take(self, index))
    case("flip", {"dims": [0, 1]}, {"self": (x, plain)}, lambda self: torch.flip(self, [0, 1]))
    case("roll", {"shifts": [1, -1], "dims": [0, 1]}, {"self": (x, plain)},
         lambda self: torch.roll(self, [1, -1], [0, 1]))
    case("repeat", {"sizes": [2, 1, 2]}, {"self": (x, plain)}, lambda self: self.repeat(2, 1, 2))
    case("tril", {"diagonal": 0}, {"self": (x, plain)}, lambda self: torch.tril(self))
    case("triu", {"diagonal": 1}, {"self": (x, plain)}, lambda self: torch.triu(self, 1))
    case("pad", {"pad": [1, -1, 1, 0], "value": 1}, {"self": (x, plain)},
         lambda self: F.pad(self, [1, -1, 1, 0], value=1))
    case("masked_select", {}, {"self": (x, plain), "mask": (T([True, False, True], torch.bool), plain)},
         lambda self, mask: torch.masked_select(self, mask))
    src = sample(d, (2, 2)).flip(0)
    idx = L([[1, 1], [0, 1]])
    case("scatter", {"dim": 0}, {"self": (x, plain), "index": (idx, plain), "src": (src, plain)},
         lambda self, index, src: self.scatter(0, index, src))
    case("scatter_value", {"dim": 1, "value": 1}, {"self": (x, plain), "index": (idx, plain)},
         lambda self, index: self.scatter(1, index, 1))
    for reduce in ["sum", "prod", "mean", "amax", "amin"]:
        for include_self in [True, False]:
            case("scatter_reduce", {"dim": 1, "reduce": reduce, "include_self": include_self},
                 {"self": (x, plain), "index": (idx, plain), "src": (src, plain)},
                 lambda self, index, src: self.scatter_reduce(1, index, src, reduce,
                                                              include_self=include_self))
    case("scatter_add", {"dim": 0}, {"self": (x, plain), "index": (idx, plain), "src": (src, plain)},
         lambda self, index, src: self.scatter_add(0, index, src))

# --- dtype refusals ----------------------------------------------------------------
for d in REFUSE_DTYPES:
    x = torch.zeros(2, 2).to(d)
    i = L([[0, 1]])
    for op, fn in [
        ("gather", lambda self, index: torch.gather(self, 0, index)),
        ("take", lambda self, index: torch.take(self, index)),
        ("scatter", lambda self, index: self.scatter(0, index, self)),
        ("scatter_value", lambda self, index: self.scatter(0, index, 1)),
    ]:
        args = {"dim": 0}
        if op == "scatter":
            # src is self itself
            args["src_is_self"] = True
        if op == "scatter_value":
            args["value"] = 1
        case(op, args, {"self": (x, Z), "index": (i, plain)}, fn)
    for reduce in ["mean", "amax"]:
        case("scatter_reduce", {"dim": 0, "reduce": reduce, "include_self": True, "src_is_self": True},
             {"self": (x, Z), "index": (i, plain)},
             lambda self, index: self.scatter_reduce(0, index, self, reduce))
    case("flip", {"dims": [0]}, {"self": (x, Z)}, lambda self: torch.flip(self, [0]))
    case("tril", {"diagonal": 0}, {"self": (x, Z)}, lambda self: torch.tril(self))
    case("masked_select", {}, {"self": (x, Z), "mask": (T([True, False], torch.bool), plain)},
         lambda self, mask: torch.masked_select(self, mask))
for d in [torch.bool, torch.complex64]:
    x = sample(d, (2,))
    for reduce in ["mean", "amax", "amin"]:
        case("scatter_reduce", {"dim": 0, "reduce": reduce, "include_self": True},
             {"self": (x, plain), "index": (L([1, 1]), plain), "src": (x, plain)},
             lambda self, index, src: self.scatter_reduce(0, index, src, reduce))

# --- special values, duplicates, wrap-around ----------------------------------------
f = T([NAN, 1.0, -0.0, 2.0])
s = T([-0.0, NAN, 5.0, -INF, INF])
i5 = L([0, 0, 1, 2, 2])
for reduce in ["sum", "prod", "mean", "amax", "amin"]:
    for include_self in [True, False]:
        case("scatter_reduce", {"dim": 0, "reduce": reduce, "include_self": include_self},
             {"self": (f, plain), "index": (i5, plain), "src": (s, plain)},
             lambda self, index, src: self.scatter_reduce(0, index, src, reduce,
                                                          include_self=include_self))
for d in [torch.int8, torch.uint8, torch.int64]:
    info = torch.iinfo(d)
    x = torch.tensor([info.max, info.min, 0, 1], dtype=d)
    src = torch.tensor([info.max, 1, info.min, -1 if info.min < 0 else 2, 3], dtype=d)
    for reduce in ["sum", "prod", "mean"]:
        case("scatter_reduce", {"dim": 0, "reduce": reduce, "include_self": True},
             {"self": (x, plain), "index": (L([0, 1, 1, 2, 0]), plain), "src": (src, plain)},
             lambda self, index, src: self.scatter_reduce(0, index, src, reduce))
for d in [torch.float16, torch.bfloat16]:
    x = torch.tensor([2048.0, 256.0, 1.0], dtype=d)
    src = torch.ones(6, dtype=d)
    for reduce in ["sum", "mean", "prod"]:
        case("scatter_reduce", {"dim": 0, "reduce": reduce, "include_self": True},
             {"self": (x, plain), "index": (L([0, 0, 1, 1, 0, 2]), plain), "src": (src * 1.0078125, plain)},
             lambda self, index, src: self.scatter_reduce(0, index, src, reduce))
case("scatter_add", {"dim": 1},
     {"self": (torch.zeros(2, 3), plain), "index": (L([[0, 0, 2], [1, 1, 1]]), plain),
      "src": (T([[1.0, 2.0, 3.0, 9.0], [4.0, 5.0, 6.0, 9.0]]), plain)},
     lambda self, index, src: self.scatter_add(1, index, src))

# --- non-contiguous inputs, negative dims, empty and zero-dim tensors ---------------
x = torch.arange(12.0).reshape(3, 4)
case("gather", {"dim": -2}, {"self": (x.t(), nc), "index": (L([[2, 0, 1], [0, 0, 0]]).t(), nc)},
     lambda self, index: torch.gather(self, -2, index))
case("index_select", {"dim": -1}, {"self": (x.t(), nc), "index": (L([2, 2, 0]), plain)},
     lambda self, index: torch.index_select(self, -1, index))
case("take", {}, {"self": (x.t(), nc), "index": (L([1, -1, 4]), plain)},
     lambda self, index: torch.take(self, index))
case("flip", {"dims": [-1]}, {"self": (x.t(), nc)}, lambda self: torch.flip(self, [-1]))
case("roll", {"shifts": [5], "dims": []}, {"self": (x.t(), nc)}, lambda self: torch.roll(self, 5))
case("roll", {"shifts": [-7, 2], "dims": [1, 1]}, {"self": (x, plain)}, lambda self: torch.roll(self, [-7, 2], [1, 1]))
case("tile", {"reps": [2]}, {"self": (x.t(), nc)}, lambda self: self.tile(2))
case("tile", {"reps": [2, 1, 1]}, {"self": (x, plain)}, lambda self: self.tile((2, 1, 1)))
case("tril", {"diagonal": -1}, {"self": (x.t(), nc)}, lambda self: torch.tril(self, -1))
case("triu", {"diagonal": -5}, {"self": (x.reshape(2, 2, 3), plain)}, lambda self: torch.triu(self, -5))
case("tril", {"diagonal": 100}, {"self": (x, plain)}, lambda self: torch.tril(self, 100))
case("pad", {"pad": [2, 1], "value": -1.5}, {"self": (x.t(), nc)}, lambda self: F.pad(self, [2, 1], value=-1.5))
case("pad", {"pad": [0, 0, -1, -1], "value": 0}, {"self": (x, plain)}, lambda self: F.pad(self, [0, 0, -1, -1]))
case("pad", {"pad": [-4, 1], "value": 7}, {"self": (x, plain)}, lambda self: F.pad(self, [-4, 1], value=7))
case("masked_select", {}, {"self": (x.t(), nc), "mask": (T([[True], [False], [True], [True]], torch.bool), plain)},
     lambda self, mask: torch.masked_select(self, mask))
case("masked_select", {}, {"self": (T([1.0, 2.0]), plain), "mask": (T([[True, False], [True, True]], torch.bool), plain)},
     lambda self, mask: torch.masked_select(self, mask))
case("scatter", {"dim": 0}, {"self": (torch.zeros(4, 3).t(), nc), "index": (L([[3, 0], [1, 1]]), plain),
                             "src": (T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), plain)},
     lambda self, index, src: self.scatter(0, index, src))
case("scatter_add", {"dim": -1}, {"self": (torch.zeros(2, 2), plain), "index": (L([[1, 1], [0, 1]]).t(), nc),
                                  "src": (T([[1.0, 2.0], [3.0, 4.0]]).t(), nc)},
     lambda self, index, src: self.scatter_add(-1, index, src))
zd = T(5.0)
case("gather", {"dim": 0}, {"self": (zd, plain), "index": (L(0), plain)}, lambda self, index: torch.gather(self, 0, index))
case("gather", {"dim": -1}, {"self": (zd, plain), "index": (L([0, 0]), plain)}, lambda self, index: torch.gather(self, -1, index))
case("gather", {"dim": 0}, {"self": (T([5.0, 6.0]), plain), "index": (L(1), plain)}, lambda self, index: torch.gather(self, 0, index))
case("index_select", {"dim": 0}, {"self": (zd, plain), "index": (L([0]), plain)}, lambda self, index: torch.index_select(self, 0, index))
case("index_select", {"dim": 1}, {"self": (x, plain), "index": (L(2), plain)}, lambda self, index: torch.index_select(self, 1, index))
case("take", {}, {"self": (zd, plain), "index": (L([[0, -1]]), plain)}, lambda self, index: torch.take(self, index))
case("scatter", {"dim": 0}, {"self": (zd, plain), "index": (L(0), plain), "src": (T(7.0), plain)},
     lambda self, index, src: self.scatter(0, index, src))
case("flip", {"dims": [0]}, {"self": (zd, plain)}, lambda self: torch.flip(self, [0]))
case("flip", {"dims": []}, {"self": (x, plain)}, lambda self: torch.flip(self, []))
case("repeat", {"sizes": []}, {"self": (zd, plain)}, lambda self: self.repeat([]))
case("repeat", {"sizes": [3]}, {"self": (zd, plain)}, lambda self: self.repeat(3))
case("repeat", {"sizes": [0, 2]}, {"self": (x, plain)}, lambda self: self.repeat(0, 2))
case("pad", {"pad": [], "value": 0}, {"self": (zd, plain)}, lambda self: F.pad(self, []))
case("masked_select", {}, {"self": (zd, plain), "mask": (T(True, torch.bool), plain)},
     lambda self, mask: torch.masked_select(self, mask))
e = torch.zeros(0, 3)
case("gather", {"dim": 1}, {"self": (x, plain), "index": (torch.zeros(5, 0, dtype=torch.int64), plain)},
     lambda self, index: torch.gather(self, 1, index))
case("index_select", {"dim": 0}, {"self": (e, plain), "index": (torch.zeros(0, dtype=torch.int64), plain)},
     lambda self, index: torch.index_select(self, 0, index))
case("take", {}, {"self": (e, plain), "index": (torch.zeros(0, 2, dtype=torch.int64), plain)},
     lambda self, index: torch.take(self, index))
case("scatter_add", {"dim": 0}, {"self": (x, plain), "index": (torch.zeros(0, 4, dtype=torch.int64), plain),
                                 "src": (x, plain)},
     lambda self, index, src: self.scatter_add(0, index, src))
case("flip", {"dims": [0, 1]}, {"self": (e, plain)}, lambda self: torch.flip(self, [0, 1]))
case("roll", {"shifts": [3], "dims": [0]}, {"self": (e, plain)}, lambda self: torch.roll(self, 3, 0))
case("roll", {"shifts": [3], "dims": []}, {"self": (torch.zeros(0), plain)}, lambda self: torch.roll(self, 3))
case("tril", {"diagonal": 0}, {"self": (e, plain)}, lambda self: torch.tril(self))
case("pad", {"pad": [1, 1], "value": 2}, {"self": (e, plain)}, lambda self: F.pad(self, [1, 1], value=2))
case("pad", {"pad": [-3, 0], "value": 2}, {"self": (x, plain)}, lambda self: F.pad(self, [-3, 0], value=2))
case("masked_select", {}, {"self": (e, plain), "mask": (T([True, False, True], torch.bool), plain)},
     lambda self, mask: torch.masked_select(self, mask))

# --- errors: index values (found when the graph runs) and shapes (found at build) ---
for idx in [L([[0, 3]]), L([[-1, 0]])]:
    case("gather", {"dim": 1}, {"self": (x, plain), "index": (idx, plain)}, lambda self, index: torch.gather(self, 1, index))
    case("scatter", {"dim": 1}, {"self": (x, plain), "index": (idx * 2, plain), "src": (x, plain)},
         lambda self, index, src: self.scatter(1, index, src))
    case("scatter_add", {"dim": 0}, {"self": (x, plain), "index": (idx, plain), "src": (x, plain)},
         lambda self, index, src: self.scatter_add(0, index, src))
case("scatter_reduce", {"dim": 0, "reduce": "amax", "include_self": False},
     {"self": (x, plain), "index": (L([[3, 0]]), plain), "src": (x, plain)},
     lambda self, index, src: self.scatter_reduce(0, index, src, "amax", include_self=False))
case("scatter_value", {"dim": 0, "value": 1}, {"self": (x, plain), "index": (L([[5]]), plain)},
     lambda self, index: self.scatter(0, index, 1))
case("index_select", {"dim": 1}, {"self": (x, plain), "index": (L([0, 4]), plain)}, lambda self, index: torch.index_select(self, 1, index))
case("index_select", {"dim": 1}, {"self": (x, plain), "index": (L([-1]), plain)}, lambda self, index: torch.index_select(self, 1, index))
case("index_select", {"dim": 0}, {"self": (zd, plain), "index": (L([1]), plain)}, lambda self, index: torch.index_select(self, 0, index))
case("take", {}, {"self": (x, plain), "index": (L([12]), plain)}, lambda self, index: torch.take(self, index))
case("take", {}, {"self": (x, plain), "index": (L([-13]), plain)}, lambda self, index: torch.take(self, index))
case("gather", {"dim": 0}, {"self": (zd, plain), "index": (L(1), plain)}, lambda self, index: torch.gather(self, 0, index))
# build-time errors
case("gather", {"dim": 1}, {"self": (x, plain), "index": (L([0, 1]), plain)}, lambda self, index: torch.gather(self, 1, index))
case("gather", {"dim": 1}, {"self": (x, plain), "index": (torch.zeros(4, 1, dtype=torch.int64), plain)}, lambda self, index: torch.gather(self, 1, index))
case("gather", {"dim": 2}, {"self": (x, plain), "index": (L([[0]]), plain)}, lambda self, index: torch.gather(self, 2, index))
case("gather", {"dim": 0}, {"self": (x, plain), "index": (T([[0.0]]), plain)}, lambda self, index: torch.gather(self, 0, index))
case("gather", {"dim": 0}, {"self": (x, plain), "index": (torch.tensor([[1]], dtype=torch.int32), plain)}, lambda self, index: torch.gather(self, 0, index))
case("index_select", {"dim": 0}, {"self": (x, plain), "index": (torch.tensor([1], dtype=torch.int16), plain)}, lambda self, index: torch.index_select(self, 0, index))
case("index_select", {"dim": 0}, {"self": (x, plain), "index": (torch.tensor([2, 0], dtype=torch.int32), plain)}, lambda self, index: torch.index_select(self, 0, index))
case("index_select", {"dim": 0}, {"self": (x, plain), "index": (L([[0]]), plain)}, lambda self, index: torch.index_select(self, 0, index))
case("index_select", {"dim": 0}, {"self": (zd, plain), "index": (L([0, 0]), plain)}, lambda self, index: torch.index_select(self, 0, index))
case("index_select", {"dim": 1}, {"self": (torch.zeros(2, 0), plain), "index": (L([0]), plain)}, lambda self, index: torch.index_select(self, 1, index))
case("take", {}, {"self": (x, plain), "index": (torch.tensor([1], dtype=torch.int32), plain)}, lambda self, index: torch.take(self, index))
case("take", {}, {"self": (e, plain), "index": (L([0]), plain)}, lambda self, index: torch.take(self, index))
case("scatter", {"dim": 0}, {"self": (x, plain), "index": (L([[0]]), plain), "src": (x.double(), plain)},
     lambda self, index, src: self.scatter(0, index, src))
case("scatter", {"dim": 0}, {"self": (x, plain), "index": (T([[0.0]]), plain), "src": (x, plain)},
     lambda self, index, src: self.scatter(0, index, src))
case("scatter", {"dim": 0}, {"self": (x, plain), "index": (torch.zeros(2, 2, dtype=torch.int64), plain), "src": (T([[1.0, 2.0]]), plain)},
     lambda self, index, src: self.scatter(0, index, src))
case("scatter", {"dim": 0}, {"self": (x, plain), "index": (torch.zeros(2, 5, dtype=torch.int64), plain), "src": (torch.ones(5, 5), plain)},
     lambda self, index, src: self.scatter(0, index, src))
case("scatter", {"dim": 0}, {"self": (x, plain), "index": (torch.zeros(2, dtype=torch.int64), plain), "src": (x, plain)},
     lambda self, index, src: self.scatter(0, index, src))
case("scatter", {"dim": 0}, {"self": (x, plain), "index": (torch.zeros(2, 2, dtype=torch.int64), plain), "src": (torch.ones(5), plain)},
     lambda self, index, src: self.scatter(0, index, src))
case("scatter_add", {"dim": 0}, {"self": (x, plain), "index": (L([[0]]), plain), "src": (x.long(), plain)},
     lambda self, index, src: self.scatter_add(0, index, src))
case("scatter_value", {"dim": 0, "value": 300}, {"self": (x.to(torch.int8), plain), "index": (L([[0]]), plain)},
     lambda self, index: self.scatter(0, index, 300))
case("masked_select", {}, {"self": (x, plain), "mask": (torch.ones(4, dtype=torch.uint8), plain)},
     lambda self, mask: torch.masked_select(self, mask))
case("masked_select", {}, {"self": (x, plain), "mask": (T([True, False], torch.bool), plain)},
     lambda self, mask: torch.masked_select(self, mask))
case("tril", {"diagonal": 0}, {"self": (T([1.0, 2.0]), plain)}, lambda self: torch.tril(self))
case("triu", {"diagonal": 0}, {"self": (zd, plain)}, lambda self: torch.triu(self))
case("flip", {"dims": [0, -2]}, {"self": (x, plain)}, lambda self: torch.flip(self, [0, -2]))
case("flip", {"dims": [2]}, {"self": (x, plain)}, lambda self: torch.flip(self, [2]))
case("roll", {"shifts": [], "dims": []}, {"self": (x, plain)}, lambda self: torch.roll(self, [], []))
case("roll", {"shifts": [1, 2], "dims": [0]}, {"self": (x, plain)}, lambda self: torch.roll(self, [1, 2], [0]))
case("roll", {"shifts": [1, 1], "dims": []}, {"self": (x, plain)}, lambda self: torch.roll(self, [1, 1], []))
case("roll", {"shifts": [1], "dims": [0]}, {"self": (zd, plain)}, lambda self: torch.roll(self, 1, 0))
case("roll", {"shifts": [1], "dims": [2]}, {"self": (x, plain)}, lambda self: torch.roll(self, 1, 2))
case("repeat", {"sizes": [2]}, {"self": (x, plain)}, lambda self: self.repeat(2))
case("repeat", {"sizes": [2 ** 62, 1]}, {"self": (T([1.0, 2.0, 3.0, 4.0]), plain)}, lambda self: self.repeat(2 ** 62, 1))
case("pad", {"pad": [1], "value": 0}, {"self": (x, plain)}, lambda self: F.pad(self, [1]))
case("pad", {"pad": [1, 1, 1, 1, 1, 1], "value": 0}, {"self": (x, plain)}, lambda self: F.pad(self, [1, 1, 1, 1, 1, 1]))
case("pad", {"pad": [-3, -2], "value": 0}, {"self": (x, plain)}, lambda self: F.pad(self, [-3, -2]))
case("pad", {"pad": [1, 1], "value": 1000}, {"self": (x.to(torch.int8), plain)}, lambda self: F.pad(self, [1, 1], value=1000))
case("pad", {"pad": [1, 1], "value": 2.5}, {"self": (x.to(torch.int32), plain)}, lambda self: F.pad(self, [1, 1], value=2.5))

# --- storage-only float8 dtypes move through the data-movement ops ----------------
for d in [torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz]:
    x = T([[1.5, -2.0, 0.0], [0.25, 8.0, -0.5]]).to(d)
    case("index_select", {"dim": 1}, {"self": (x, plain), "index": (L([2, 0]), plain)},
         lambda self, index: torch.index_select(self, 1, index))
    case("roll", {"shifts": [1], "dims": [1]}, {"self": (x, plain)}, lambda self: torch.roll(self, 1, 1))
    case("repeat", {"sizes": [1, 2]}, {"self": (x, plain)}, lambda self: self.repeat(1, 2))
    case("pad", {"pad": [1, 0], "value": 1}, {"self": (x, plain)}, lambda self: F.pad(self, [1, 0], value=1))
    case("masked_select", {}, {"self": (x, plain), "mask": (T([True, False, True], torch.bool), plain)},
         lambda self, mask: torch.masked_select(self, mask))
    case("flip", {"dims": [0]}, {"self": (x, plain)}, lambda self: torch.flip(self, [0]))
    case("flip", {"dims": [1]}, {"self": (x, plain)}, lambda self: torch.flip(self, [1]))

# --- empty results run no kernel, so no dtype is refused --------------------------
for d in [torch.uint16, torch.uint64, torch.float8_e5m2]:
    e = torch.zeros(0, 2).to(d)
    x = torch.zeros(2, 2).to(d)
    none = torch.zeros(0, 2, dtype=torch.int64)
    case("flip", {"dims": [1]}, {"self": (e, plain)}, lambda self: torch.flip(self, [1]))
    case("tril", {"diagonal": 0}, {"self": (e, plain)}, lambda self: torch.tril(self))
    case("take", {}, {"self": (x, plain), "index": (none, plain)}, lambda self, index: torch.take(self, index))
    case("masked_select", {}, {"self": (x, plain), "mask": (torch.zeros(2, 2, dtype=torch.bool), plain)},
         lambda self, mask: torch.masked_select(self, mask))
    case("scatter_reduce", {"dim": 0, "reduce": "amax", "include_self": False},
         {"self": (x, plain), "index": (none, plain), "src": (x, plain)},
         lambda self, index, src: self.scatter_reduce(0, index, src, "amax", include_self=False))
    case("scatter_reduce", {"dim": 0, "reduce": "amax", "include_self": True},
         {"self": (e, plain), "index": (L([[0, 0]]), plain), "src": (x, plain)},
         lambda self, index, src: self.scatter_reduce(0, index, src, "amax"))

# --- more shapes and values ------------------------------------------------------
case("scatter", {"dim": 1}, {"self": (torch.zeros(2, 3), plain), "index": (L([[2], [0]]), plain),
                             "src": (torch.arange(24.0).reshape(2, 3, 4), plain)},
     lambda self, index, src: self.scatter(1, index, src))
case("gather", {"dim": 0}, {"self": (T([1.0, 2.0, 3.0]), plain), "index": (L([2, 2, 1, 0, 0, 2]), plain)},
     lambda self, index: torch.gather(self, 0, index))
case("scatter_value", {"dim": 0, "value": 2.5}, {"self": (torch.zeros(3, dtype=torch.int32), plain), "index": (L([1, 2]), plain)},
     lambda self, index: self.scatter(0, index, 2.5))
case("scatter_value", {"dim": 0, "value": -1}, {"self": (torch.zeros(3, dtype=torch.uint8), plain), "index": (L([1]), plain)},
     lambda self, index: self.scatter(0, index, -1))
case("pad", {"pad": [1, 1], "value": 2.5}, {"self": (T([True, False], torch.bool), plain)},
     lambda self: F.pad(self, [1, 1], value=2.5))
case("pad", {"pad": [2, 0], "value": NAN}, {"self": (T([1.0, 2.0], torch.float16), plain)},
     lambda self: F.pad(self, [2, 0], value=NAN))
case("pad", {"pad": [0, 1, 1, 0, 1, 1], "value": -3}, {"self": (torch.arange(6).reshape(1, 2, 3), plain)},
     lambda self: F.pad(self, [0, 1, 1, 0, 1, 1], value=-3))
case("take", {}, {"self": (T([True, False], torch.bool), plain), "index": (L([1, 1, 0]), plain)},
     lambda self, index: torch.take(self, index))
case("roll", {"shifts": [4], "dims": [0]}, {"self": (T([True, False, False], torch.bool), plain)},
     lambda self: torch.roll(self, 4, 0))
case("roll", {"shifts": [1], "dims": [-1]}, {"self": (torch.arange(6).reshape(2, 3).t(), nc)},
     lambda self: torch.roll(self, 1, -1))
case("repeat", {"sizes": [1, 2, 1]}, {"self": (torch.arange(6).reshape(2, 3).t(), nc)}, lambda self: self.repeat(1, 2, 1))
case("tril", {"diagonal": 1}, {"self": (torch.arange(24).reshape(2, 3, 4).transpose(1, 2), plain)},
     lambda self: torch.tril(self, 1))
case("triu", {"diagonal": -1}, {"self": (torch.tensor([[1 + 1j, 2], [3, 4j]]), plain)},
     lambda self: torch.triu(self, -1))
case("index_select", {"dim": 0}, {"self": (torch.tensor([[1 + 1j, 2], [3, 4j]]), plain), "index": (L([1, 1]), plain)},
     lambda self, index: torch.index_select(self, 0, index))
case("scatter_reduce", {"dim": 0, "reduce": "mean", "include_self": True},
     {"self": (torch.tensor([1 + 1j, 2]), plain), "index": (L([0, 0]), plain), "src": (torch.tensor([1j, 3]), plain)},
     lambda self, index, src: self.scatter_reduce(0, index, src, "mean"))
case("scatter_reduce", {"dim": 0, "reduce": "mean", "include_self": True},
     {"self": (T([1.0, 2.0], torch.float16), plain), "index": (L([0, 0, 0]), plain), "src": (T([0.1, 0.2, 0.3], torch.float16), plain)},
     lambda self, index, src: self.scatter_reduce(0, index, src, "mean"))
case("scatter_reduce", {"dim": 0, "reduce": "sum", "include_self": True},
     {"self": (T([1.0], torch.float32), plain), "index": (L([0] * 6), plain), "src": (T([1e-8, 3e-8, 1e8, -1e8, 0.1, 0.7]), plain)},
     lambda self, index, src: self.scatter_reduce(0, index, src, "sum"))

# index_add / index_fill (the seeds' advanced-indexing assignment): values over every
# value dtype, non-contiguous inputs, duplicates, negative and out-of-range indices,
# zero-dim tensors, and each of PyTorch's argument checks.
for dt in VALUE_DTYPES:
    x = sample(dt, [3, 4])
    src = sample(dt, [3, 2]).flip(0)
    alpha = True if dt == torch.bool else 2
    # (the shell unsigned dtypes: PyTorch's refusal depends on its code path for
    # the shape; the 1-D cases below record its general answer)
    if dt != torch.uint16:
        case("index_add", {"dim": 1, "alpha": alpha},
             {"self": (x, plain), "index": (L([3, 0]), plain), "src": (src, plain)},
             lambda self, index, src, a=alpha: self.index_add(1, index, src, alpha=a))
        case("index_add", {"dim": 0, "alpha": 1},
             {"self": (x, plain), "index": (L([2, 2, 0]), plain), "src": (sample(dt, [3, 4]), plain)},
             lambda self, index, src: self.index_add(0, index, src))
    fill = True if dt == torch.bool else (1.5 if (dt.is_floating_point or dt.is_complex) else -3)
    case("index_fill", {"dim": 1, "value": fill},
         {"self": (x, plain), "index": (L([-1, 1, 1]), plain)},
         lambda self, index, v=fill: self.index_fill(1, index, v))
    case("index_fill_tensor", {"dim": 0},
         {"self": (x, plain), "index": (L([0, 2]), plain), "src": (sample(dt, [1]).reshape([]), plain)},
         lambda self, index, src: self.index_fill(0, index, src))
case("index_add", {"dim": -1, "alpha": 1},
     {"self": (torch.arange(12.).reshape(3, 4).t(), nc), "index": (torch.tensor([2, 0], dtype=torch.int32), plain),
      "src": (torch.ones(4, 2), plain)},
     lambda self, index, src: self.index_add(-1, index, src))
case("index_add", {"dim": 0, "alpha": 1.5},
     {"self": (L([0, 0, 0]), plain), "index": (L([1]), plain), "src": (L([3]), plain)},
     lambda self, index, src: self.index_add(0, index, src, alpha=1.5))
case("index_add", {"dim": 0, "alpha": 0.5},
     {"self": (T([0.0, 1.0, 2.0]), plain), "index": (L(1), plain), "src": (T([3.0]), plain)},
     lambda self, index, src: self.index_add(0, index, src, alpha=0.5))
case("index_add", {"dim": 0, "alpha": 1},
     {"self": (T(1.0), plain), "index": (L([0]), plain), "src": (T(2.0), plain)},
     lambda self, index, src: self.index_add(0, index, src))
case("index_add", {"dim": 1, "alpha": 1},
     {"self": (torch.zeros(3, 4), plain), "index": (torch.zeros(0, dtype=torch.int64), plain), "src": (torch.ones(3, 0), plain)},
     lambda self, index, src: self.index_add(1, index, src))
for name, args, t in [
    ("oob", {"dim": 1}, (L([0, 5]), torch.ones(3, 2))),
    ("neg", {"dim": 1}, (L([0, -1]), torch.ones(3, 2))),
    ("float index", {"dim": 1}, (T([0.0, 1.0]), torch.ones(3, 2))),
    ("2-d index", {"dim": 1}, (L([[0, 1]]), torch.ones(3, 2))),
    ("count", {"dim": 1}, (L([0, 1]), torch.ones(3, 3))),
    ("shape", {"dim": 1}, (L([0, 1]), torch.ones(2, 2))),
    ("dtype", {"dim": 1}, (L([0, 1]), torch.ones(3, 2, dtype=torch.float64))),
    ("source dim", {"dim": 1}, (L([0]), torch.ones(3))),
    ("dim", {"dim": 2}, (L([0, 1]), torch.ones(3, 2))),
]:
    case("index_add", {**args, "alpha": 1},
         {"self": (torch.zeros(3, 4), plain), "index": (t[0], plain), "src": (t[1], plain)},
         lambda self, index, src, d=args["dim"]: self.index_add(d, index, src))
for name, idx, v in [
    ("oob", L([0, 5]), 1.0), ("neg oob", L([-5]), 1.0), ("int32", torch.tensor([1], dtype=torch.int32), 1.0),
    ("2-d", L([[1]]), 1.0), ("complex", L([1]), 1j), ("0-d index", L(2), 4.0), ("empty", torch.zeros(0, dtype=torch.int64), 4.0),
]:
    case("index_fill", {"dim": 1, "value": v},
         {"self": (torch.zeros(3, 4), plain), "index": (idx, plain)},
         lambda self, index, v=v: self.index_fill(1, index, v))
case("index_fill", {"dim": 0, "value": 300},
     {"self": (torch.zeros(3, dtype=torch.int8), plain), "index": (L([1]), plain)},
     lambda self, index: self.index_fill(0, index, 300))
case("index_fill", {"dim": 0, "value": 2.7},
     {"self": (torch.zeros(3, dtype=torch.int64), plain), "index": (L([1]), plain)},
     lambda self, index: self.index_fill(0, index, 2.7))
case("index_fill", {"dim": -1, "value": 5.0},
     {"self": (T(1.0), plain), "index": (L([-1]), plain)},
     lambda self, index: self.index_fill(-1, index, 5.0))
case("index_fill", {"dim": 0, "value": -1.5},
     {"self": (torch.arange(12.).reshape(3, 4).t(), nc), "index": (L([3, 1]), plain)},
     lambda self, index: self.index_fill(0, index, -1.5))
case("index_fill_tensor", {"dim": 1},
     {"self": (torch.zeros(3, 4), plain), "index": (L([1]), plain), "src": (T([1.0]), plain)},
     lambda self, index, src: self.index_fill(1, index, src))
case("index_fill_tensor", {"dim": 1},
     {"self": (torch.zeros(2, 2), plain), "index": (L([1]), plain), "src": (torch.tensor(3.5, dtype=torch.float64), plain)},
     lambda self, index, src: self.index_fill(1, index, src))
for dt in [torch.uint16, torch.uint32, torch.uint64]:
    case("index_add", {"dim": 0, "alpha": 1},
         {"self": (torch.zeros(2, dtype=dt), plain), "index": (L([0]), plain), "src": (torch.ones(1, dtype=dt), plain)},
         lambda self, index, src: self.index_add(0, index, src))
    case("index_fill", {"dim": 0, "value": 1},
         {"self": (torch.zeros(2, dtype=dt), plain), "index": (L([0]), plain)},
         lambda self, index: self.index_fill(0, index, 1))

# index_copy: values over every value dtype, non-contiguous inputs, zero-dim tensors,
# and each of PyTorch's checks (the index values are checked eagerly, with the op's name)
for dt in VALUE_DTYPES:
    x = sample(dt, [3, 4])
    case("index_copy", {"dim": 1},
         {"self": (x, plain), "index": (L([3, 0]), plain), "src": (sample(dt, [3, 2]).flip(0), plain)},
         lambda self, index, src: self.index_copy(1, index, src))
    case("index_copy", {"dim": 0},
         {"self": (x, plain), "index": (L([2, 0]), plain), "src": (sample(dt, [2, 4]), plain)},
         lambda self, index, src: self.index_copy(0, index, src))
case("index_copy", {"dim": -1},
     {"self": (torch.arange(12.).reshape(3, 4).t(), nc), "index": (L([2, 0]), plain),
      "src": (torch.ones(4, 2), plain)},
     lambda self, index, src: self.index_copy(-1, index, src))
case("index_copy", {"dim": 0},
     {"self": (T(1.0), plain), "index": (L([0]), plain), "src": (T(2.0), plain)},
     lambda self, index, src: self.index_copy(0, index, src))
case("index_copy", {"dim": 0},
     {"self": (T([1.0, 2.0]), plain), "index": (L(1), plain), "src": (T(5.0), plain)},
     lambda self, index, src: self.index_copy(0, index, src))
case("index_copy", {"dim": 1},
     {"self": (torch.zeros(3, 4), plain), "index": (torch.zeros(0, dtype=torch.int64), plain), "src": (torch.ones(3, 0), plain)},
     lambda self, index, src: self.index_copy(1, index, src))
for name, d, idx, src in [
    ("oob", 1, L([0, 5]), torch.ones(3, 2)),
    ("neg", 1, L([0, -1]), torch.ones(3, 2)),
    ("float index", 1, T([0.0, 1.0]), torch.ones(3, 2)),
    ("int32 index", 1, torch.tensor([0, 1], dtype=torch.int32), torch.ones(3, 2)),
    ("2-d index", 1, L([[0, 1]]), torch.ones(3, 2)),
    ("count", 1, L([0, 1]), torch.ones(3, 3)),
    ("slices", 1, L([0, 1]), torch.ones(2, 2)),
    ("slices 3-d", 1, L([0]), torch.ones(2, 1, 3)),
    ("dtype", 1, L([0, 1]), torch.ones(3, 2, dtype=torch.float64)),
    ("source dim", 1, L([0]), torch.ones(3)),
    ("scalar source", 1, L([0, 1]), T(1.0)),
    ("dim", 2, L([0, 1]), torch.ones(3, 2)),
]:
    x = torch.zeros(3, 4) if name != "slices 3-d" else torch.zeros(3, 4, 5)
    case("index_copy", {"dim": d},
         {"self": (x, plain), "index": (idx, plain), "src": (src, plain)},
         lambda self, index, src, d=d: self.index_copy(d, index, src))


def put_case(x, indices, values, accumulate, x_view=None):
    """index_put: `indices` is a list of tensors (a key of its own)."""
    line = {"op": "index_put", "args": {"accumulate": accumulate}}
    if x_view == "t":
        base = x.t().contiguous()
        line["self"] = enc(base, view="t")
        actual = base.t()
    else:
        line["self"] = enc(x)
        actual = x
    line["indices"] = [enc(i) for i in indices]
    line["values"] = enc(values)
    try:
        line["expect"] = enc(actual.index_put(tuple(indices), values, accumulate=accumulate))
    except Exception as e:  # noqa: BLE001 - the message is the expectation
        line["error"] = str(e).split("\n")[0]
    CASES.append(line)


for dt in VALUE_DTYPES:
    x = sample(dt, [3, 4])
    put_case(x, [L([2, 0])], sample(dt, [4]), False)
    put_case(x, [L([1, -1]), torch.tensor([0, 3], dtype=torch.int32)], sample(dt, [2]), False)
    if dt != torch.bool:
        put_case(x, [L([0, 0, 2])], sample(dt, [3, 4]), True)
    put_case(x, [sample(torch.bool, [3, 4])], sample(dt, [1]), False)
for acc in [False, True]:
    x = torch.arange(24.).reshape(2, 3, 4)
    put_case(x, [L([[0], [1]]), L([0, 2, 2])], torch.ones(2, 3, 4), acc)
    put_case(x, [L([1]), L([[2], [0]])], T([1.0, 2.0, 3.0, 4.0]), acc)
    put_case(x, [torch.tensor([[True, False, True], [False, False, True]])], T([5.0, 6.0, 7.0, 8.0]), acc)
    put_case(x, [torch.tensor([True, False]), L([2])], T(9.0), acc)
    put_case(torch.zeros(3, 2), [torch.tensor([1, 0, 1], dtype=torch.uint8)], T(9.0), acc)
    put_case(torch.arange(12.).reshape(3, 4), [L([3, 0])], T([1.0, 2.0, 3.0]), acc, x_view="t")
    if acc:
        put_case(torch.arange(4.), [L([1, 1, 1])], T([1.0, 2.0, 3.0]), acc)
    put_case(torch.zeros(3, 4), [torch.zeros(0, dtype=torch.int64)], T(1.0), acc)
    put_case(torch.zeros(3, 4), [torch.zeros(3, 4, dtype=torch.bool)], T(1.0), acc)
for name, indices, values in [
    ("oob", [L([5])], T(1.0)),
    ("oob second dim", [L([0]), L([7])], T(1.0)),
    ("neg oob", [L([-4])], T(1.0)),
    ("values shape", [L([0, 1])], torch.ones(3)),
    ("index broadcast", [L([0, 1]), L([0, 1, 2])], torch.ones(1)),
    ("float index", [T([0.0])], torch.ones(1)),
    ("dtype", [L([0])], torch.ones(1, dtype=torch.float64)),
    ("too many", [L([0]), L([0]), L([0])], torch.ones(1)),
    ("mask shape", [torch.tensor([True, False])], torch.ones(1)),
    ("mask too many", [L([0]), torch.ones(4, 2, dtype=torch.bool)], torch.ones(1)),
]:
    put_case(torch.zeros(3, 4), indices, values, False)

print(json.dumps({"note": "generated by scripts/gen_index_cases.py with PyTorch "
                  + torch.__version__ + " (CPU); do not edit by hand"}))
for c in CASES:
    print(json.dumps(c, allow_nan=False))
