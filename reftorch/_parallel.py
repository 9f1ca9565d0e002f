"""Intra-op threads, as torch counts them: ``get_num_threads``/``set_num_threads``.

reftorch computes on one thread, but torch's results can depend on its thread count: a large
float sum is split among the threads and the partial sums added at the end (see _cpu_sum.py).
So reftorch keeps the number torch would use, to add in torch's order.

torch's CPU wheels run OpenMP with MKL, and start with MKL's count: one thread per physical
core this process may run on, or fewer when ``MKL_NUM_THREADS`` (else ``OMP_NUM_THREADS``) asks
for fewer (MKL never starts more threads than cores).
"""
from __future__ import annotations

import os

GRAIN_SIZE = 32768  # at::internal::GRAIN_SIZE: fewer elements than this never split


def _env_threads(name):
    value = os.environ.get(name, "").split(",")[0].strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def _physical_cores() -> int:
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    cores, processor, physical = set(), None, "0"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "processor":
                    processor, physical = int(value), "0"
                elif key == "physical id":
                    physical = value
                elif key == "core id" and (allowed is None or processor in allowed):
                    cores.add((physical, value))
    except (OSError, ValueError):
        pass
    return len(cores) or (len(allowed) if allowed else os.cpu_count() or 1)


_num_threads = min(_env_threads("MKL_NUM_THREADS") or _env_threads("OMP_NUM_THREADS") or 1 << 30,
                   _physical_cores())


def get_num_threads() -> int:
    """The number of threads torch uses for an op on the CPU."""
    return _num_threads


def set_num_threads(num: int) -> None:
    """Set the number of threads torch would use (reftorch's results then split as torch's do)."""
    global _num_threads
    if isinstance(num, bool) or not isinstance(num, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _num_threads = num
