"""Joining and repeating: cat, stack, hstack, vstack, repeat, tile, repeat_interleave, diff.

The backward of a join cuts the gradient back into the pieces (narrow, select); the
backward of a repeat sums the copies (helpers at the end, for derivatives.py).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..storage import contiguous_format
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


# -- composites: written with ops, as torch writes them, so their graphs are torch's ------------
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along ``dim`` (``logical_xor`` for bools), after joining
    ``prepend`` and ``append`` on that dim."""
    if input.dim() < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for other in (prepend, append):
        if other is None:
            continue
        d = _wrap_dim(dim, input.dim())
        if other.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for i in range(other.dim()):
            if i != d and other._shape[i] != input._shape[i]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of input except along "
                    f"the differencing dimension; input.size({i}) = {input._shape[i]}, but got tensor.size({i}) = "
                    f"{other._shape[i]}")
    if n == 0:  # a copy (prepend and append are not joined)
        return ops.zeros_like(input).copy_(input)
    if prepend is not None or append is not None:
        input = ops.cat([t for t in (prepend, input, append) if t is not None], dim)
    d = _wrap_dim(dim, input.dim())
    length = input._shape[d] - 1
    for _ in range(min(n, input._shape[d])):
        later, earlier = ops.narrow(input, d, 1, length), ops.narrow(input, d, 0, length)
        input = ops.logical_xor(later, earlier) if input.dtype is dtypes.bool else later - earlier
        length -= 1
    return input


def repeat_interleave_indices(repeats, *, output_size=None):
    """``torch.repeat_interleave(repeats)``: each index i, repeats[i] times."""
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (dtypes.int64, dtypes.int32):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{dtypes._scalar_type_name(repeats.dtype)}'")
    counts = repeats._np
    if output_size is None and (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    return _wrap(np.repeat(np.arange(len(counts), dtype=counts.dtype), counts), repeats._device)


def repeat_interleave_self_tensor(input, repeats, dim=None, *, output_size=None):
    """Element i along ``dim`` (of the flattened input without one) repeats[i] times: an
    index_select by the repeated indices."""
    flat = input if dim is not None else ops.flatten(input)
    d = 0 if dim is None else dim
    size = flat._shape[_wrap_dim(d, flat.dim())] if flat.dim() else 1
    if repeats.dim() == 0 or (repeats.dim() == 1 and repeats._shape[0] == 1):
        repeats = repeats.reshape([1]).expand([size])
    elif repeats.dim() == 1:
        if repeats._shape[0] != size:
            raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{repeats._shape[0]} and input.size({d}) = {size}")
    else:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    return ops.index_select(flat, d, ops.repeat_interleave(repeats, output_size=output_size))


def repeat_interleave_self_int(input, repeats, dim=None, *, output_size=None):
    """Each element ``repeats`` times in a row: unsqueeze, expand, a contiguous copy, flatten."""
    flat = input if dim is not None else ops.flatten(input)
    d = _wrap_dim(0 if dim is None else dim, input.dim())
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    wide = ops.unsqueeze(flat, d + 1)
    shape = list(wide._shape)
    shape[d + 1] = repeats
    wide = wide.expand(shape)
    if output_size is not None and output_size != shape[d] * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {shape[d] * repeats} but got {output_size}")
    return ops.clone(wide, memory_format=contiguous_format).flatten(d, d + 1)
