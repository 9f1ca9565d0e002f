"""OpenMP: reftorch runs in one thread of its own (NumPy's BLAS may use more)."""


def is_available() -> bool:
    return False
