"""The CPU build: reftorch's kernels are NumPy's, which picks its own vector instructions."""
import os


def get_cpu_capability() -> str:
    # what torch would report is the best of DEFAULT, AVX2, AVX512 (or ATEN_CPU_CAPABILITY's choice)
    chosen = os.environ.get("ATEN_CPU_CAPABILITY", "").upper()
    return chosen if chosen in ("DEFAULT", "AVX2", "AVX512") else "DEFAULT"
