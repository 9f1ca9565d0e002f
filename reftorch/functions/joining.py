"""Joining and repeating: cat, stack, hstack, vstack, repeat, tile.

The backward of a join cuts the gradient back into the pieces (narrow, select); the
backward of a repeat sums the copies (helpers at the end, for derivatives.py).
"""
from __future__ import annotations

from .. import dtypes
from ..dispatch import kernel
from ..tensor import _wrap_dim
from ._support import _array, _devices, _wrap
from .codegen import ops


def _used(tensors):
    """torch skips 1-D empty tensors in cat (a legacy rule)."""
    return [t for t in tensors if not (t.dim() == 1 and t.numel() == 0)] or tensors[:1]


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    used = _used(tensors)
    d = _wrap_dim(dim, used[0].dim())
    # the result's dtype promotes every input, also the empty 1-D ones the shape checks skip
    rt = dtypes.result_type(*tensors) if len(tensors) > 1 else tensors[0].dtype
    dev = _devices(*used)
    first = used[0]
    for i, t in enumerate(used[1:], 1):
        if t.dim() != first.dim():
            raise RuntimeError(
                "Tensors must have same number of dimensions: got "
                f"{first.dim()} and {t.dim()}"
            )
        for k in range(first.dim()):
            if k != d and t._shape[k] != first._shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{first._shape[k]} but got size {t._shape[k]} for tensor number {i} in the list."
                )
    return _wrap(kernel("cat", dev)([_array(t, rt) for t in used], d), dev)


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._shape
    for i, t in enumerate(tensors):
        if t._shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(t._shape)} at entry {i}"
            )
    d = _wrap_dim(dim, len(shape) + 1)
    rt = dtypes.result_type(*tensors) if len(tensors) > 1 else tensors[0].dtype
    dev = _devices(*tensors)
    return _wrap(kernel("stack", dev)([_array(t, rt) for t in tensors], d), dev)


def hstack(tensors):
    return ops.cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors):
    return ops.cat([t if t.dim() > 1 else ops.unsqueeze(t, 0) for t in tensors], 0)


def repeat(input, *repeats):
    if len(repeats) < input.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    return _wrap(kernel("repeat", input._device)(input._np, repeats), input._device)


def tile(input, *dims):
    dims = (1,) * (input.dim() - len(dims)) + tuple(dims)
    return ops.repeat(input, dims)


# -- backward formulas (derivatives.py) ---------------------------------------------------------
def cat_tensors_backward(grad, sizes, dim):
    """The gradient cut back into the joined pieces (a piece cat skipped gets an empty one)."""
    def skipped(shape):
        return len(shape) == 1 and shape[0] == 0
    joined = [i for i, s in enumerate(sizes) if not skipped(s)] or [0]
    d = _wrap_dim(dim, len(sizes[joined[0]]))
    grads, start = [], 0
    for i, shape in enumerate(sizes):
        if i not in joined:
            grads.append(ops.zeros(shape, dtype=grad.dtype, device=grad._device))
            continue
        grads.append(ops.narrow(grad, d, start, shape[d]))
        start += shape[d]
    return grads


def stack_tensors_backward(grad, dim):
    return list(ops.unbind(grad, _wrap_dim(dim, grad.dim())))


def repeat_backward(grad, repeats, sizes):
    """View the gradient as (r0, s0, r1, s1, ...) and sum over the repeat axes."""
    extra = len(repeats) - len(sizes)
    full_shape = (1,) * extra + tuple(sizes)
    split_shape = []
    for r, s in zip(repeats, full_shape):
        split_shape += [r, s]
    summed = grad.reshape(split_shape).sum(tuple(range(0, 2 * len(repeats), 2)))
    return summed.reshape(sizes)
