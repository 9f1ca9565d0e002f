"""reftorch vs torch on the CPU, measured in one run: ratio = reftorch time / torch time.

    python -m bench.bench_engine

Both libraries run with the threads they start with (printed at the end). On a machine that
others share, two spinning thread pools per library measure the neighbours more than the
code; ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1`` gives both one thread and steadier ratios.
"""
from __future__ import annotations

import statistics
import sys

import numpy as np
import torch

import reftorch

from .timing import blas_threads, fmt, interleaved_times, median_time

SIZES = {"small": (8, 8), "lesson": (256, 256)}


def op_cases():
    """(name, size label, program taking a library and returning a no-arg callable)."""
    cases = []
    for label, (m, n) in SIZES.items():
        def elementwise(lib, m=m, n=n):
            a, b = lib.rand(m, n), lib.rand(m, n)
            return lambda: (a * b + a).relu()
        def reduction(lib, m=m, n=n):
            a = lib.rand(m, n)
            return lambda: a.sum(1)
        def matmul(lib, m=m, n=n):
            a, b = lib.rand(m, n), lib.rand(n, m)
            return lambda: a @ b
        def noncontiguous(lib, m=m, n=n):
            a = lib.rand(n, m).t()
            return lambda: a.exp().sum(0)
        cases += [("elementwise (a*b+a).relu()", label, elementwise),
                  ("reduction sum(dim=1)", label, reduction),
                  ("matmul a @ b", label, matmul),
                  ("exp+sum on a transposed view", label, noncontiguous)]
    return cases


MLP_TARGET = 1.5  # the target: an MLP training step costs at most 1.5x torch's


def mlp_step(lib):
    """One training step of 784-256-128-10, batch 64, SGD with momentum, cross-entropy."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x, y = lib.randn(64, 784), lib.randint(0, 10, (64,))
    # the same work on both sides: float32 everywhere, int64 targets
    assert x.dtype == lib.float32 and y.dtype == lib.int64
    assert all(p.dtype == lib.float32 for p in model.parameters())

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    return step


def chain_backward(lib, length=10_000):
    """Backward through a chain of `length` multiplications (no recursion limit)."""
    def run():
        x = lib.ones(1, requires_grad=True)
        y = x
        for _ in range(length):
            y = y * 1.0001
        y.backward()
    return run


def per_op_overhead(lib):
    a = lib.ones(1)
    return lambda: a + a


def mlp_ratio(rounds: int = 40):
    """(torch seconds, reftorch seconds, ratio) for one MLP step, the two sampled in turn;
    the ratio is the median over rounds of reftorch's sample / torch's sample of that round."""
    torch_times, reftorch_times = interleaved_times([mlp_step(torch), mlp_step(reftorch)], rounds=rounds)
    ratio = statistics.median(r / t for t, r in zip(torch_times, reftorch_times))
    return statistics.median(torch_times), statistics.median(reftorch_times), ratio


def main() -> int:
    torch.set_num_threads(max(1, torch.get_num_threads()))
    rows = []
    for name, label, program in op_cases():
        t_torch = median_time(program(torch))
        t_ref = median_time(program(reftorch))
        rows.append((f"{name} [{label}]", t_torch, t_ref))
    rows.append(("per-op overhead: 1-element add", median_time(per_op_overhead(torch)),
                 median_time(per_op_overhead(reftorch))))
    t_torch, t_ref, mlp = mlp_ratio()
    rows.append(("MLP train step 784-256-128-10, batch 64", t_torch, t_ref))
    rows.append(("backward through a 10,000-op chain", median_time(chain_backward(torch), repeat=3, number=1, warmup=1),
                 median_time(chain_backward(reftorch), repeat=3, number=1, warmup=1)))
    width = max(len(r[0]) for r in rows)
    print(f"{'benchmark':{width}}  {'torch':>11}  {'reftorch':>11}  ratio (reftorch/torch)")
    for name, t_torch, t_ref in rows:
        print(f"{name:{width}}  {fmt(t_torch)}  {fmt(t_ref)}  {t_ref / t_torch:6.2f}x")
    threads = blas_threads()
    print(f"torch {torch.__version__}, threads={threads['torch']}; reftorch {reftorch.__version__} on NumPy "
          f"{np.__version__}, OpenBLAS threads={threads['numpy']} (as each library started: the bench sets none)")
    verdict = "met" if mlp <= MLP_TARGET else "NOT met"
    print(f"MLP train step ratio: {mlp:.2f}x torch (median of per-round ratios, the two interleaved); "
          f"target <= {MLP_TARGET}x: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
