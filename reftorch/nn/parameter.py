"""Parameter: a tensor that a Module registers as something to train."""
from __future__ import annotations

from ..tensor import Tensor
from ..functions import empty


class Parameter(Tensor):
    """Wraps ``data`` (sharing its memory) as a leaf that requires grad by default."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        detached = data.detach()
        if requires_grad and not detached.dtype.is_floating_point:
            # torch words this the way its factories do, not the way requires_grad_() does
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        param = detached._alias_as(cls)
        param.requires_grad_(requires_grad)
        return param

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__  # Tensor's __str__ is its own __repr__; print(param) shows the header too

    def __reduce_ex__(self, protocol):
        raise NotImplementedError("pickling reftorch parameters is not supported")
