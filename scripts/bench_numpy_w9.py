"""numpy's eager figure for bench_report's W9 on this machine (development only):
the same 10-op float32 chain over [1000], one array per op as numpy computes it,
best and median of seven rounds of 20000 chains. W9's target (5 µs) was set
against numpy's 7.6 µs on the machine PERF.md measured; on another host run this
beside `bench_report W9` to compare the two on the same one.

    python3 scripts/bench_numpy_w9.py
"""
import statistics
import time

import numpy as np

X = (np.sin(np.arange(1000, dtype=np.float32) * 0.37) * 2 + 0.5).astype(np.float32)
FLOOR = np.float32(0.1)


def chain(x):
    v = np.abs(x * np.float32(1.5) + np.float32(0.25))
    v = np.sqrt(v) - np.float32(0.5)
    v = np.log(v * v + np.float32(1.0))
    v = np.maximum(v, FLOOR)
    return np.tanh(np.exp(v / np.float32(3.0)))


def main():
    rounds = []
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(20000):
            chain(X)
        rounds.append((time.perf_counter() - t) / 20000 * 1e6)
    print(
        f"numpy {np.__version__} eager W9 chain [1000]: "
        f"best {min(rounds):.2f} µs, median {statistics.median(rounds):.2f} µs"
    )


if __name__ == "__main__":
    main()
