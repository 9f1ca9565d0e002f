"""``torch.special``: the special functions under their SciPy-like names.

Each is an op of functions/native_functions.py named ``special_<name>`` (``special_entr``),
as in torch: some compute themselves (entr, ndtri, log_ndtr, i0e, i1, i1e), the others run
the op they are another name for (``special.expit`` is ``sigmoid``: SigmoidBackward0).
"""
from __future__ import annotations

from .functions import ops as _ops

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i0e", "i1", "i1e",
    "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "ndtr", "ndtri", "polygamma", "psi", "sinc",
    "softmax", "xlogy",
]

for _name in __all__:
    globals()[_name] = getattr(_ops, "special_" + _name)
del _name
