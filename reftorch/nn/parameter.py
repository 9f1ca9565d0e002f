"""Parameter: a tensor that a Module registers as something to train."""
from __future__ import annotations

from ..tensor import Tensor


class Parameter(Tensor):
    """Wraps ``data`` (sharing its memory) as a leaf that requires grad by default."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..functions import empty
            data = empty(0)
        param = data.detach()._alias_as(cls)
        param.requires_grad_(requires_grad)
        return param

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        raise NotImplementedError("pickling reftorch parameters is not supported")
