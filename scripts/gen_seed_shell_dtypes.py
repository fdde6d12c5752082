"""Generates tests/data/seeds/shell_dtypes.jsonl with PyTorch (2.15, CPU): what PyTorch
does with its "shell" dtypes (uint16/32/64, the float8 family, complex32), which have
kernels for some ops and none for others: for each (op, dtype) the result's dtype and
values, or PyTorch's error and message. The input is `[1, 2]` (`[1+1j, 2-1j]` for
complex32) made from float32/complex64/int64. Run:

    python scripts/gen_seed_shell_dtypes.py tests/data/seeds

with a PyTorch 2.15 installation. The project never needs PyTorch itself: the output is
vendored and replayed by tests/conformance_seeds.rs.
"""

import json
import os
import sys
import warnings

import torch

warnings.simplefilter("ignore")

SHELL = [torch.uint16, torch.uint32, torch.uint64, torch.float8_e4m3fn, torch.float8_e5m2,
         torch.float8_e4m3fnuz, torch.float8_e5m2fnuz, torch.float8_e8m0fnu, torch.complex32]


def mk(dt):
    if dt.is_complex:
        return torch.tensor([1 + 1j, 2 - 1j], dtype=torch.complex64).to(dt)
    if dt.is_floating_point:
        return torch.tensor([1.0, 2.0]).to(dt)
    return torch.tensor([1, 2]).to(dt)


OPS = {
    "add": lambda a: a + a, "sub": lambda a: a - a, "mul": lambda a: a * a, "div": lambda a: a / a,
    "neg": lambda a: -a, "abs": lambda a: a.abs(), "exp": lambda a: a.exp(), "eq": lambda a: a == a,
    "lt": lambda a: a < a, "maximum": lambda a: torch.maximum(a, a), "sum": lambda a: a.sum(),
    "cat": lambda a: torch.cat([a, a]),
    "where": lambda a: torch.where(torch.tensor([True, False]), a, a),
    "clamp": lambda a: a.clamp(0, 1), "fill_": lambda a: a.clone().fill_(1),
    "add_scalar": lambda a: a + 1, "mul_scalar": lambda a: a * 2,
    "to_float32": lambda a: a.to(torch.float32), "zeros": lambda a: torch.zeros(2, dtype=a.dtype),
    "amax": lambda a: a.amax(), "mean": lambda a: a.mean(), "matmul": lambda a: a @ a,
    "index_select": lambda a: a.index_select(0, torch.tensor([1])), "flip": lambda a: a.flip(0),
    "reshape": lambda a: a.reshape(2, 1), "t_contiguous": lambda a: a.reshape(1, 2).t().contiguous(),
    "ne": lambda a: a != a, "eq_scalar": lambda a: a == 1, "ne_scalar": lambda a: a != 1.1,
    "isnan": lambda a: a.isnan(), "isinf": lambda a: a.isinf(),
    "mul_0d": lambda a: a * a[1], "mul_bcast": lambda a: a.reshape(2, 1) * a,
    "mul_": lambda a: a.clone().mul_(a), "abs_": lambda a: a.clone().abs_(),
}


def enc(v):
    if isinstance(v, complex):
        return [v.real, v.imag]
    return v


def main(out_dir):
    cases = []
    for dt in SHELL:
        for name, f in OPS.items():
            case = {"id": f"shell_dtypes-{len(cases) + 1:05d}", "op": name, "dtype": str(dt)[6:]}
            try:
                r = f(mk(dt))
            except (RuntimeError, NotImplementedError, TypeError) as e:
                case["result"] = {"error": type(e).__name__, "message": str(e).splitlines()[0]}
            else:
                shown = r.to(torch.complex64) if r.dtype.is_complex else (
                    r.to(torch.float64) if r.dtype.is_floating_point else r.to(torch.int64) if r.dtype != torch.bool else r)
                case["result"] = {"dtype": str(r.dtype)[6:], "shape": list(r.shape),
                                  "data": [enc(v) for v in shown.reshape(-1).tolist()]}
            cases.append(case)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "shell_dtypes.jsonl"), "w") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
    print(f"{len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/seeds")
