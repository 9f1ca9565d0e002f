"""``Variable``: torch's old name for a tensor that records history, kept for old code.

``Variable(t, requires_grad=True)`` gives a leaf sharing ``t``'s memory, and every tensor is
an instance of ``Variable`` (``isinstance(x, Variable)``), as in torch since 0.4."""
from __future__ import annotations

from ..tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data, requires_grad=False, volatile=False):
        return data.detach().requires_grad_(requires_grad)
