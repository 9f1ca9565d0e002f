"""Parameter: a tensor that a Module registers as something to train."""
from __future__ import annotations

from ..tensor import Tensor


class Parameter(Tensor):
    """Wraps ``data`` (sharing its memory) as a leaf that requires grad by default."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..functions import empty
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

    def __deepcopy__(self, memo):
        # torch's rule: a fresh clone (not sharing memory with anything), requires_grad kept, no .grad
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        from collections import OrderedDict

        from .._utils import _rebuild_parameter
        return _rebuild_parameter, (self.data, self.requires_grad, OrderedDict())
