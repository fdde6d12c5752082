"""Generates tests/data/creation/linspace.jsonl from PyTorch (CPU) for tests/creation.rs.

Each line: {"start", "end", "steps", "dtype", "values"} with the values of
torch.linspace(start, end, steps, dtype=dtype).tolist(); floats are written as Python
repr strings so that they round-trip exactly. Finite values only (JSON has no
NaN); the special values are covered by hand-written tests. Run with PyTorch 2.15:
    python scripts/gen_linspace_cases.py > tests/data/creation/linspace.jsonl
"""
import json
import random

import torch

DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
}
rng = random.Random(20261122)
for name, dtype in DTYPES.items():
    for _ in range(12):
        if dtype.is_floating_point:
            scale = 10.0 ** rng.randint(-3, 4)
            if dtype == torch.float16:
                scale = min(scale, 100.0)
            start = round(rng.uniform(-scale, scale), rng.randint(0, 6))
            end = round(rng.uniform(-scale, scale), rng.randint(0, 6))
        else:
            lo, hi = (0, 255) if dtype == torch.uint8 else (-100, 100)
            start = float(rng.randint(lo, hi)) + rng.choice([0.0, 0.25, 0.5])
            end = float(rng.randint(lo, hi))
            if dtype == torch.uint8:
                start = min(start, 255.0)
        steps = rng.choice([2, 3, 5, 7, 16, 33, 100, 257])
        values = torch.linspace(start, end, steps, dtype=dtype).tolist()
        # Floats as repr strings: exact round trips whatever the JSON parser.
        case = {
            "start": repr(float(start)),
            "end": repr(float(end)),
            "steps": steps,
            "dtype": name,
            "values": [repr(float(v)) for v in values],
        }
        print(json.dumps(case))
