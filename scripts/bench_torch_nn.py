"""PyTorch's figures for bench_report's C1, C2 and T3 on this machine (development
only): conv2d 3x3 forward and forward+backward on [32, 64, 32, 32] -> 64 channels,
and one Adam step of the digits CNN (batch 64), eager, median of runs.

    python3 scripts/bench_torch_nn.py
"""
import statistics
import time

import torch

torch.set_num_threads(2)


def median_ms(fn, runs=30, warmup=5):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


x = torch.randn(32, 64, 32, 32)
w = torch.randn(64, 64, 3, 3) * 0.05
b = torch.randn(64)
with torch.no_grad():
    print(f"C1 conv2d forward:           {median_ms(lambda: torch.nn.functional.conv2d(x, w, b, padding=1)):.2f} ms")
xg = x.clone().requires_grad_(True)
wg = w.clone().requires_grad_(True)
bg = b.clone().requires_grad_(True)


def fwd_bwd():
    y = torch.nn.functional.conv2d(xg, wg, bg, padding=1)
    y.sum().backward()


print(f"C2 conv2d forward+backward:  {median_ms(fwd_bwd, runs=15):.2f} ms")

model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
    torch.nn.Linear(32 * 4 * 4, 10))
opt = torch.optim.Adam(model.parameters(), lr=3e-3, foreach=False)
xs = torch.rand(64, 1, 8, 8)
ys = torch.randint(0, 10, (64,))


def step():
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(xs), ys)
    loss.backward()
    opt.step()
    loss.item()


print(f"T3 digits CNN Adam step:     {median_ms(step, runs=100):.3f} ms")
