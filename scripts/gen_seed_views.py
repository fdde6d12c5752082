"""Generates tests/data/seeds/views.jsonl with PyTorch (2.15, CPU): the views that
`tensor-views.rst` lists and the public corpus never reaches (`T`, `mH`, `H`,
`adjoint`, `swapdims`, `view_as`, `reshape_as`, `tensor_split` by count and by
indices, `hsplit`, `vsplit`, `dsplit`, `split_with_sizes`, `movedim` and `squeeze`
with lists of dims), in the schema of tests/data/conformance/SCHEMA.md §6: chains of
view steps with each step's shape, strides, offset, contiguity and aliasing, writes
through the new views, and PyTorch's errors. Run:

    python scripts/gen_seed_views.py tests/data/seeds

with a PyTorch 2.15 installation. The project never needs PyTorch itself: the output is
vendored and replayed by tests/conformance_seeds.rs.
"""

import json
import os
import sys
import warnings

import torch

warnings.simplefilter("ignore")  # `T` on n-D tensors is deprecated in PyTorch


def apply(t, op, args):
    """Applies one step as the conformance runner (conformance/src/dispatch.rs) does."""
    if op == "T":
        return t.T
    if op == "mH":
        return t.mH
    if op == "H":
        return t.H
    if op == "adjoint":
        return t.adjoint()
    if op == "mT":
        return t.mT
    if op == "transpose":
        return t.transpose(args["dim0"], args["dim1"])
    if op == "narrow":
        return t.narrow(args["dim"], args["start"], args["length"])
    if op == "swapdims":
        return t.swapdims(args["dim0"], args["dim1"])
    if op == "view_as":
        return t.view_as(torch.zeros(args["other_shape"]))
    if op == "reshape_as":
        return t.reshape_as(torch.zeros(args["other_shape"]))
    if op in ("tensor_split", "hsplit", "vsplit", "dsplit"):
        how = args["sections"] if "sections" in args else args["indices"]
        if op == "tensor_split":
            pieces = t.tensor_split(how, dim=args["dim"])
        else:
            pieces = getattr(t, op)(how)
        return pieces[args["index"]]
    if op == "split_with_sizes":
        return t.split_with_sizes(args["split_sizes"], dim=args["dim"])[args["index"]]
    if op == "movedim":
        return t.movedim(tuple(args["source"]), tuple(args["destination"]))
    if op == "squeeze":
        return t.squeeze(tuple(args["dim"]))
    raise ValueError(op)


def record(t, base, op, args):
    return {
        "op": op,
        "args": args,
        "shape": list(t.shape),
        "strides": list(t.stride()),
        "storage_offset": t.storage_offset(),
        "is_contiguous": t.is_contiguous(),
        "shares_storage_with_base": t.untyped_storage().data_ptr()
        == base.untyped_storage().data_ptr(),
    }


def base_of(shape):
    n = 1
    for s in shape:
        n *= s
    return torch.arange(n, dtype=torch.int64).reshape(shape)


CASES = []


def chain(shape, steps, error=None, write=None):
    base = base_of(shape)
    t = base
    recs = []
    for op, args in steps:
        t = apply(t, op, args)
        recs.append(record(t, base, op, args))
    case = {"family": "chain", "base_shape": list(shape), "steps": recs}
    if error is not None:
        op, args = error
        try:
            apply(t, op, args)
        except (RuntimeError, IndexError, ValueError, TypeError) as e:
            case["error"] = {"op": op, "args": args, "error": type(e).__name__,
                             "message": str(e).split("\n")[0]}
        else:
            raise AssertionError(f"{op} {args} on {list(t.shape)} did not fail")
    elif write is not None:
        op, args = write
        getattr(t, op)(args["other"])
        case["family"] = "write_through_view"
        case["write"] = {"op": op, "args": args}
        case["view_after"] = t.reshape(-1).tolist()
        case["base_after"] = base.reshape(-1).tolist()
    else:
        case["values"] = t.reshape(-1).tolist()
    CASES.append(case)


SHAPES = [[], [3], [2, 3], [2, 3, 4], [1, 2, 1, 3], [2, 0, 3], [2, 3, 4, 5]]


def prefixes(shape):
    out = [[]]
    if len(shape) >= 2:
        out.append([("transpose", {"dim0": 0, "dim1": -1})])
    if len(shape) >= 1 and shape[-1] >= 2:
        out.append([("narrow", {"dim": -1, "start": 1, "length": shape[-1] - 1})])
    return out


def after(shape, pre):
    t = base_of(shape)
    for op, args in pre:
        t = apply(t, op, args)
    return list(t.shape)


def try_chain(shape, steps):
    """A successful chain, or its last step as the error case."""
    base = base_of(shape)
    t = base
    for i, (op, args) in enumerate(steps):
        try:
            t = apply(t, op, args)
        except (RuntimeError, IndexError, ValueError):
            chain(shape, steps[:i], error=(op, args))
            return
    chain(shape, steps)


def main(out_dir):
    for shape in SHAPES:
        for pre in prefixes(shape):
            s = after(shape, pre)
            n = len(s)
            for op in ["T", "mH", "H", "adjoint"]:
                try_chain(shape, pre + [(op, {})])
            if n >= 2:
                try_chain(shape, pre + [("swapdims", {"dim0": 0, "dim1": -1})])
                try_chain(shape, pre + [("mH", {}), ("T", {})])
            numel = 1
            for x in s:
                numel *= x
            for other in [[numel], [1, numel], list(reversed(s)), [numel + 1]]:
                try_chain(shape, pre + [("view_as", {"other_shape": other})])
                try_chain(shape, pre + [("reshape_as", {"other_shape": other})])
            for dim in range(-n, n) if n else [0]:
                for k in [1, 2, 3, 0]:
                    for index in sorted({0, k - 1}) if k else [0]:
                        try_chain(shape, pre + [("tensor_split", {"sections": k, "dim": dim, "index": index})])
                for ix in [[1], [1, 2], [2, 1], [0, -1], [5, 1, 9, -2], []]:
                    for index in sorted({0, len(ix)}):
                        try_chain(shape, pre + [("tensor_split", {"indices": ix, "dim": dim, "index": index})])
                if n:
                    size = s[dim]
                    sizes = [size] if size < 2 else [1, size - 1]
                    try_chain(shape, pre + [("split_with_sizes", {"split_sizes": sizes, "dim": dim, "index": len(sizes) - 1})])
                    try_chain(shape, pre + [("split_with_sizes", {"split_sizes": sizes + [1], "dim": dim, "index": 0})])
            for op in ["hsplit", "vsplit", "dsplit"]:
                for k in [1, 2, 3, 0]:
                    try_chain(shape, pre + [(op, {"sections": k, "index": 0})])
                for ix in [[1], [2, 1], [0, -1]]:
                    try_chain(shape, pre + [(op, {"indices": ix, "index": len(ix)})])
            for src, dst in [([], []), ([0], [-1]), ([0, 1], [2, 0]), ([-1, 0], [0, -1]),
                             ([0, 1, 2], [2, 1, 0]), ([0, 0], [1, 2]), ([0, 1], [1, 1]),
                             ([0, 1], [1]), ([0], [5]), ([0, -n if n else 0], [0, 1])]:
                try_chain(shape, pre + [("movedim", {"source": src, "destination": dst})])
            for sq in [[], [0], [0, -1], list(range(n)), [0, 0], [7], [-1, n - 1 if n else 0]]:
                try_chain(shape, pre + [("squeeze", {"dim": sq})])
    # writes through the new views reach the base
    for shape, steps in [
        ([2, 3, 4], [("T", {})]),
        ([2, 3], [("mH", {})]),
        ([2, 3], [("H", {})]),
        ([2, 3, 4], [("adjoint", {}), ("narrow", {"dim": 0, "start": 1, "length": 1})]),
        ([7], [("tensor_split", {"sections": 3, "dim": 0, "index": 1})]),
        ([2, 6], [("tensor_split", {"indices": [1, 4], "dim": 1, "index": 1})]),
        ([3, 4], [("hsplit", {"sections": 2, "index": 1})]),
        ([4, 3], [("vsplit", {"indices": [1, 3], "index": 1})]),
        ([2, 3, 4], [("dsplit", {"sections": 2, "index": 1})]),
        ([2, 3, 4], [("movedim", {"source": [0, 1], "destination": [2, 0]})]),
        ([1, 3, 1], [("squeeze", {"dim": [0, 2]})]),
        ([2, 3], [("swapdims", {"dim0": 1, "dim1": 0}), ("view_as", {"other_shape": [1, 3, 2]})]),
    ]:
        chain(shape, steps, write=("add_", {"other": 100}))
    os.makedirs(out_dir, exist_ok=True)
    seen = set()
    with open(os.path.join(out_dir, "views.jsonl"), "w") as f:
        n = 0
        for case in CASES:
            key = json.dumps(case, sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            n += 1
            f.write(json.dumps({"id": f"seed-views-{n:05d}", **case}) + "\n")
    print(f"{n} cases")


if __name__ == "__main__":
    main(sys.argv[1])
