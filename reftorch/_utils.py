"""The functions a checkpoint calls to rebuild its tensors, under torch's names (torch._utils):
a file names ``torch._utils._rebuild_tensor_v2``, and serialization.py resolves that to this.
(``_rebuild_parameter`` lives beside Parameter, in nn/parameter.py: this module sits below nn.)"""
from __future__ import annotations

import numpy as np

from .tensor import Tensor


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """A tensor over ``storage`` (a TypedStorage) with the given geometry; tensors rebuilt over one
    storage share its memory, as the tensors that were saved did, but none is another's view."""
    t = tensor_over(storage._untyped_storage, storage.dtype, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor_over(storage, dtype, offset, size, stride) -> Tensor:
    """A new tensor (its own version counter, not a view) over an existing Storage."""
    buffer = storage.data
    t = object.__new__(Tensor)
    t._storage = storage
    t._np = np.ndarray(tuple(size), dtype=buffer.dtype, buffer=buffer,
                       offset=0 if 0 in size else offset * buffer.itemsize,
                       strides=tuple(s * buffer.itemsize for s in stride))
    t._shape, t._stride, t._offset = tuple(size), tuple(stride), offset
    t.dtype, t._device = dtype, storage.device
    t._init_autograd_state()
    return t


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor of a subclass, or one with Python attributes: rebuilt, retyped, its state set."""
    ret = func(*args)
    if type(ret) is not new_type:
        ret = ret._alias_as(new_type).requires_grad_(ret.requires_grad)
    if state:
        ret.__dict__.update(state)
    return ret
