"""The CPU build: what torch reports for the kernels it picked at start-up (reftorch's kernels
follow the same build where the arithmetic depends on it: sums, fused multiply-adds, randn)."""
from .._cpu_float import CPU_CAPABILITY


def get_cpu_capability() -> str:
    # the best of DEFAULT, AVX2, AVX512 this CPU runs, or the lower one ATEN_CPU_CAPABILITY asks for
    return CPU_CAPABILITY.upper()
