"""Generates tests/data/seeds/devices.jsonl with PyTorch (2.15, CPU): `torch.device`
as `tensor-attributes.rst` describes it: parsing every device type PyTorch knows, with
and without an index, the strings it refuses and its messages, printing, equality
(`cuda` is not `cuda:0`, `cpu` is not `cpu:0`), `torch.device(int)`, and what
`get_device()` answers on the CPU. Run:

    python scripts/gen_seed_devices.py tests/data/seeds

with a PyTorch 2.15 installation. The project never needs PyTorch itself: the output is
vendored and replayed by tests/conformance_seeds.rs.
"""

import json
import os
import sys
import warnings

import torch

warnings.simplefilter("ignore")  # 'mkldnn' is deprecated

TYPES = ["cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
         "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone"]
CASES = []


def add(case):
    case["id"] = f"devices-{len(CASES) + 1:05d}"
    CASES.append(case)


def parse(s):
    try:
        d = torch.device(s)
    except (RuntimeError, ValueError, TypeError) as e:
        add({"op": "parse", "string": s,
             "result": {"error": type(e).__name__, "message": str(e).split("\n")[0]}})
    else:
        add({"op": "parse", "string": s,
             "result": {"type": d.type, "index": d.index, "str": str(d)}})


def main(out_dir):
    for t in TYPES:
        for s in [t, t + ":0", t + ":3", t + ":10"]:
            parse(s)
    for s in ["cuda:+1", "cuda:-1", "cpu:01", "cuda:", "cpu:0:0", "cuda:1a", " cpu", "cpu ",
              "cuda1", "1cpu", "cuda:00", "CUDA", "Cpu", "cpux", "msnpu", "fake", "", ":0",
              "cuda::1", "gpu", "cuda:99999999999999999999999"]:
        parse(s)
    for a, b in [("cuda", "cuda:0"), ("cpu", "cpu:0"), ("cuda:1", "cuda:1"), ("cuda:0", "cuda:1"),
                 ("cpu", "cpu"), ("meta", "meta:0"), ("mps:0", "mps:0"), ("cpu", "cuda")]:
        add({"op": "equal", "a": a, "b": b, "result": {"value": torch.device(a) == torch.device(b)}})
    for i in [0, 1, 7]:
        d = torch.device(i)
        add({"op": "from_int", "ordinal": i, "result": {"type": d.type, "index": d.index, "str": str(d)}})
    try:
        torch.device(-1)
    except (RuntimeError, ValueError) as e:
        add({"op": "from_int", "ordinal": -1,
             "result": {"error": type(e).__name__, "message": str(e).split("\n")[0]}})
    for s in ["cpu", "cpu:0"]:
        t = torch.zeros(2, device=s)
        add({"op": "tensor_device", "string": s,
             "result": {"str": str(t.device), "get_device": t.get_device()}})
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "devices.jsonl"), "w") as f:
        for c in CASES:
            f.write(json.dumps(c) + "\n")
    print(f"{len(CASES)} cases", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/seeds")
