"""Parameter: a tensor that a Module registers as something to train."""
from __future__ import annotations

from collections import OrderedDict

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

    def __deepcopy__(self, memo):
        # torch's rule: a fresh clone (not sharing memory with anything), requires_grad kept, no .grad
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return _rebuild_parameter, (self.data, self.requires_grad, OrderedDict())


# What a checkpoint calls to rebuild a parameter: torch's torch._utils._rebuild_parameter (a file
# names it so; serialization.py maps the name to this). Here, beside the class it rebuilds.
def _rebuild_parameter(data, requires_grad, backward_hooks):
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    param = _rebuild_parameter(data, requires_grad, backward_hooks)
    param.__dict__.update(state)
    return param
