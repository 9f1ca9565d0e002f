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


def interleaved_times(fns, *, rounds: int = 30, number: int = 5, warmup: int = 3) -> list[list[float]]:
    """Seconds per call of each of ``fns``, sampled in turn: round r times fns[0], then
    fns[1], ... so that a burst of load from elsewhere on the machine hits every peer alike.
    Returns one list of ``rounds`` samples per function (each the mean of ``number`` calls)."""
    for fn in fns:
        for _ in range(warmup):
            fn()
    samples = [[] for _ in fns]
    for _ in range(rounds):
        for fn, mine in zip(fns, samples):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            mine.append((time.perf_counter() - start) / number)
    return samples


def blas_threads() -> dict[str, int | None]:
    """How many threads each library's BLAS may use: torch's intra-op pool and the OpenBLAS
    NumPy loaded (read from the library itself; None if NumPy's BLAS is not OpenBLAS)."""
    import ctypes

    import numpy  # noqa: F401 - loads NumPy's BLAS, whose path /proc/self/maps then shows
    import torch

    numpy_threads = None
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps if "openblas" in line.lower()})
    except OSError:
        paths = []
    for path in paths:
        library = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_", "openblas_get_num_threads"):
            getter = getattr(library, name, None)
            if getter is not None:
                numpy_threads = getter()
                break
    return {"torch": torch.get_num_threads(), "numpy": numpy_threads}
