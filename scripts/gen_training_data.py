"""Generates tests/data/training/ with PyTorch 2.15 (development only; no test
needs PyTorch): optimizer and scheduler trajectories, a model's state_dict saved
by safetensors.torch with its outputs, a file of every safetensors dtype, and
numpy-written .npy/.npz files.

    python3 scripts/gen_training_data.py
"""
import json
import os

import numpy as np
import torch
from safetensors.torch import save_file

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "training")
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(0)


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


# --- optimizers: a fixed gradient sequence, so the trajectory is the optimizer's
# arithmetic alone ---------------------------------------------------------------
STEPS = 20
w0 = torch.randn(3, 4)
b0 = torch.randn(3)
grads = [(torch.randn(3, 4), torch.randn(3)) for _ in range(STEPS)]

CASES = [
    ("sgd", "SGD", dict(lr=0.1), None),
    ("sgd_momentum", "SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01), None),
    ("sgd_nesterov", "SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.001), None),
    ("sgd_maximize", "SGD", dict(lr=0.01, momentum=0.5, maximize=True), None),
    ("adam", "Adam", dict(lr=0.01), None),
    ("adam_decay_amsgrad", "Adam", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, amsgrad=True), None),
    ("adamw", "AdamW", dict(lr=0.01), None),
    ("adamw_amsgrad_maximize", "AdamW", dict(lr=0.005, weight_decay=0.05, amsgrad=True, maximize=True), None),
    ("sgd_steplr", "SGD", dict(lr=0.1, momentum=0.9), ("StepLR", dict(step_size=3, gamma=0.5))),
    ("adam_cosine", "Adam", dict(lr=0.05), ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001))),
    ("adamw_cosine", "AdamW", dict(lr=0.05, weight_decay=0.1), ("CosineAnnealingLR", dict(T_max=5, eta_min=0.0))),
]

optim_cases = []
for name, cls, kwargs, sched in CASES:
    w = w0.clone().requires_grad_(True)
    b = b0.clone().requires_grad_(True)
    opt = getattr(torch.optim, cls)([w, b], foreach=False, **kwargs)
    scheduler = None
    if sched is not None:
        scheduler = getattr(torch.optim.lr_scheduler, sched[0])(opt, **sched[1])
    traj, lrs = [], []
    for gw, gb in grads:
        w.grad, b.grad = gw.clone(), gb.clone()
        opt.step()
        traj.append({"w": flat(w), "b": flat(b)})
        if scheduler is not None:
            scheduler.step()
            lrs.append(scheduler.get_last_lr()[0])
    case = {"name": name, "optimizer": cls, "kwargs": {k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()}, "trajectory": traj}
    if sched is not None:
        case["scheduler"] = {"kind": sched[0], **sched[1]}
        case["lrs"] = lrs
    optim_cases.append(case)

# an end-to-end trajectory: a model's own gradients
x = torch.randn(6, 4)
y = torch.randn(6, 3)
w = w0.clone().requires_grad_(True)
b = b0.clone().requires_grad_(True)
opt = torch.optim.Adam([w, b], lr=0.05, foreach=False)
losses, model_traj = [], []
for _ in range(STEPS):
    opt.zero_grad()
    loss = torch.tanh(x @ w.T + b).sub(y).square().mean()
    loss.backward()
    opt.step()
    losses.append(float(loss.detach()))
    model_traj.append({"w": flat(w), "b": flat(b)})

with open(os.path.join(OUT, "optim.json"), "w") as f:
    json.dump({
        "w0": flat(w0), "b0": flat(b0),
        "grads": [{"w": flat(gw), "b": flat(gb)} for gw, gb in grads],
        "cases": optim_cases,
        "model": {"x": flat(x), "y": flat(y), "losses": losses, "trajectory": model_traj},
    }, f)

# --- a model's state_dict through safetensors ------------------------------------
model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 4, 3, padding=1),
    torch.nn.BatchNorm2d(4),
    torch.nn.ReLU(),
    torch.nn.MaxPool2d(2),
    torch.nn.Flatten(),
    torch.nn.Linear(4 * 4 * 4, 10),
)
with torch.no_grad():  # running statistics away from their defaults
    model[1].running_mean.uniform_(-0.5, 0.5)
    model[1].running_var.uniform_(0.5, 1.5)
    model[1].weight.uniform_(0.5, 1.5)
    model[1].bias.uniform_(-0.5, 0.5)
    model[1].num_batches_tracked.fill_(7)
save_file(model.state_dict(), os.path.join(OUT, "model.safetensors"))
xin = torch.randn(2, 1, 8, 8)
model.eval()
out_eval = model(xin)
model.train()
out_train = model(xin)
save_file({
    "input": xin,
    "output_eval": out_eval.detach(),
    "output_train": out_train.detach(),
    "running_mean_after": model[1].running_mean.clone(),
    "running_var_after": model[1].running_var.clone(),
}, os.path.join(OUT, "model_io.safetensors"))

# --- every dtype of safetensors -----------------------------------------------------
vals = torch.tensor([[0.0, 1.5, -2.25], [3.0, -0.5, 100.0]])
ints = torch.tensor([[0, 1, -2], [3, -5, 100]])
every = {
    "bool": ints.ne(0),
    "uint8": ints.abs().to(torch.uint8),
    "int8": ints.to(torch.int8),
    "int16": ints.to(torch.int16),
    "uint16": ints.abs().to(torch.uint16),
    "int32": ints.to(torch.int32),
    "uint32": ints.abs().to(torch.uint32),
    "int64": ints.to(torch.int64),
    "uint64": ints.abs().to(torch.uint64),
    "float16": vals.to(torch.float16),
    "bfloat16": vals.to(torch.bfloat16),
    "float32": vals,
    "float64": vals.to(torch.float64) / 3,
    "float8_e4m3fn": vals.to(torch.float8_e4m3fn),
    "float8_e5m2": vals.to(torch.float8_e5m2),
    "scalar": torch.tensor(2.5),
    "empty": torch.zeros(0, 3),
}
save_file(every, os.path.join(OUT, "dtypes.safetensors"))
with open(os.path.join(OUT, "dtypes.json"), "w") as f:
    json.dump({k: {"shape": list(v.shape), "values": [float(x) for x in v.to(torch.float64).reshape(-1).tolist()]} for k, v in every.items()}, f)

# --- numpy files --------------------------------------------------------------------
a32 = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
f64 = np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3) - 2.5)
np.save(os.path.join(OUT, "c_f32.npy"), a32)
np.save(os.path.join(OUT, "fortran_f64.npy"), f64)
np.save(os.path.join(OUT, "bool.npy"), np.array([True, False, True]))
np.save(os.path.join(OUT, "f16.npy"), np.array([0.5, -1.0, 65504.0], dtype=np.float16))
np.savez(os.path.join(OUT, "arrays.npz"), weight=a32, index=np.array([3, -1, 7], dtype=np.int64), half=np.array([1.5], dtype=np.float16))
print("wrote", OUT)
