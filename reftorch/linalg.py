"""``torch.linalg``: norms, inverses, determinants, solves and the factorizations.

Each is an op of functions/native_functions.py named ``linalg_<name>`` (decompositions.py
computes them), each with its backward as torch computes it (svd's also gives svdvals' and
the matrix norms 'nuc' and 2).
"""
from __future__ import annotations

from .functions import ops as _ops
from .functions.decompositions import _LinAlgError as LinAlgError

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "eigh", "inv", "inv_ex", "matrix_norm",
    "matrix_rank", "norm", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "vector_norm",
]

for _name in __all__[1:]:
    globals()[_name] = getattr(_ops, "linalg_" + _name)
del _name
