"""One timing discipline for every benchmark: warm up, repeat, take the median."""
from __future__ import annotations

import statistics
import time


def median_time(fn, *, repeat: int = 15, number: int | None = None, warmup: int = 3) -> float:
    """Median seconds per call of ``fn()``. ``number`` calls per sample (auto if None)."""
    for _ in range(warmup):
        fn()
    if number is None:
        number, elapsed = 1, 0.0
        while elapsed < 0.02:  # enough calls per sample that the clock's resolution doesn't matter
            start = time.perf_counter()
            for _ in range(number):
                fn()
            elapsed = time.perf_counter() - start
            if elapsed < 0.02:
                number *= 2
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "
