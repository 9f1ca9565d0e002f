"""Buffer: a tensor a Module keeps as state but does not train (BatchNorm's running mean).

``nn.Buffer(t)`` does not make a new kind of tensor: like torch, it returns a plain tensor
(detached from ``t``'s graph, sharing its memory) marked ``_is_buffer``, and ``isinstance(x,
nn.Buffer)`` looks at that mark. Assigning such a tensor to a Module attribute registers it
as a buffer, the way assigning a Parameter registers a parameter; assigning a plain tensor
does not.
"""
from __future__ import annotations

from ..tensor import Tensor
from ..functions import empty


class _BufferMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """``Buffer(data, *, persistent=True)``; ``persistent=False`` keeps it out of state_dict."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
