"""Joining and repeating: cat, stack, hstack, vstack, repeat, tile.

The backward of a join cuts the gradient back into the pieces (narrow, select); the
backward of a repeat sums the copies.
"""
from __future__ import annotations

from .. import dtypes
from ..autograd.graph import Node
from ..dispatch import kernel
from ..tensor import _wrap_dim
from ._support import _array, _devices, _needs_grad, _numpy_names, _record, _wrap


class CatBackward0(Node):
    def backward(self, grad):
        grads, start = [], 0
        for n in self._sizes:
            grads.append(grad.narrow(self._saved_dim, start, n))
            start += n
        return tuple(grads)


@_numpy_names
def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    # torch skips 1-D empty tensors in cat (a legacy rule)
    used = [t for t in tensors if not (t.dim() == 1 and t.numel() == 0)] or tensors[:1]
    d = _wrap_dim(dim, used[0].dim())
    rt = dtypes.result_type(*used) if len(used) > 1 else used[0].dtype
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
    out = _wrap(kernel("cat", dev)([_array(t, rt) for t in used], d), dev)
    if _needs_grad(*used):
        node = CatBackward0()
        node._saved_dim = d
        node._sizes = [t._shape[d] for t in used]
        _record(node, used, out)
    return out


# forward mode: the tangents joined the same way
cat.jvp = lambda t, out, tensors, dim=0: cat(t(list(tensors)), dim)


concat = concatenate = cat


class StackBackward0(Node):
    def backward(self, grad):
        return tuple(grad.select(self._saved_dim, i) for i in range(self._count))


@_numpy_names
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
    out = _wrap(kernel("stack", dev)([_array(t, rt) for t in tensors], d), dev)
    if _needs_grad(*tensors):
        node = StackBackward0()
        node._saved_dim, node._count = d, len(tensors)
        _record(node, tensors, out)
    return out


stack.jvp = lambda t, out, tensors, dim=0: stack(t(list(tensors)), dim)


def hstack(tensors):
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


hstack.jvp = lambda t, out, tensors: hstack(t(list(tensors)))


def vstack(tensors):
    return cat([t if t.dim() > 1 else t.unsqueeze(0) for t in tensors], 0)


vstack.jvp = lambda t, out, tensors: vstack(t(list(tensors)))


class RepeatBackward0(Node):
    def backward(self, grad):
        # view the grad as (r0, s0, r1, s1, ...) and sum over the repeat axes
        repeats, shape = self._saved_repeats, self._saved_self_sym_sizes
        extra = len(repeats) - len(shape)
        full_shape = (1,) * extra + tuple(shape)
        split_shape = []
        for r, s in zip(repeats, full_shape):
            split_shape += [r, s]
        summed = grad.reshape(split_shape).sum(tuple(range(0, 2 * len(repeats), 2)))
        return (summed.reshape(shape),)


def repeat(input, *repeats):
    repeats = tuple(repeats[0]) if len(repeats) == 1 and isinstance(repeats[0], (tuple, list)) else repeats
    if len(repeats) < input.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    out = _wrap(kernel("repeat", input._device)(input._np, repeats), input._device)
    if _needs_grad(input):
        node = RepeatBackward0()
        node._saved_repeats, node._saved_self_sym_sizes = repeats, input._shape
        _record(node, (input,), out)
    return out


repeat.jvp = lambda t, out, input, *repeats: repeat(t(input), *repeats)


def tile(input, *dims):
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    dims = (1,) * (input.dim() - len(dims)) + tuple(dims)
    return repeat(input, dims)


tile.jvp = lambda t, out, input, *dims: tile(t(input), *dims)
