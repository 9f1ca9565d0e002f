"""Indexing: ``t[key]`` and ``t[key] = value`` (basic and advanced), index_put_,
masked_fill, gather.

Basic indexing (ints, slices, None, ...) gives views; advanced indexing (tensors, lists,
masks) copies, and its backward scatters the gradient back to the positions it read.
"""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from .. import dtypes
from ..autograd.graph import FREED_MESSAGE, Node
from ..dispatch import kernel
from ..storage import broadcast_shapes, broadcast_strides, contiguous_strides, elementwise_strides, view_strides
from ..tensor import Tensor, _cpp_type_name, _wrap_dim
from ._support import _RawFormula, _array, _devices, _needs_grad, _record, _with_strides, _wrap
from .comparison import where
from .copies import clone
from .creation import zeros_like
from .inplace import _inplace, copy_
from .reductions import MaxBackward0
from .views import AliasBackward0, _embed, _make_view, _select, _slice, unsqueeze, view


class IndexBackward0(_RawFormula):
    def backward(self, grad):
        self._check_not_double(grad)
        if self._freed:  # torch saves the indices as tensors, freed after backward like any other
            raise RuntimeError(FREED_MESSAGE)
        return (_embed(grad, self._saved_self_sym_sizes, self._key, accumulate=True),)

    def release(self):
        self._freed = True


def _is_basic(item):
    return item is None or item is Ellipsis or isinstance(item, (slice, builtins.int)) and not isinstance(item, builtins.bool)


def _check_0dim_key(input, key):
    """A lone int or slice on a 0-dim tensor: torch's hints (a tuple just counts indices)."""
    if input.dim() == 0 and isinstance(key, builtins.int) and not isinstance(key, builtins.bool):
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
            "in C++ to convert a 0-dim tensor to a number")
    if input.dim() == 0 and isinstance(key, slice):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")


_INDEX_TYPES = (builtins.int, slice, Tensor, list, tuple, np.ndarray, np.integer, np.bool_)


def _index_dims(k) -> int:
    """How many of the tensor's dims an index item uses: a mask uses its own dims, a Python
    bool or None none (they add a dim), anything else one."""
    if k is None or k is Ellipsis or isinstance(k, (builtins.bool, np.bool_)):
        return 0
    if isinstance(k, Tensor) and k.dtype is dtypes.bool:
        return k.dim()
    if isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype == np.bool_:
        return np.asarray(k).ndim
    return 1


def _check_masks(input, key):
    """A boolean mask must match the dims it covers, seen after the basic indices before it."""
    shape, dim = list(input._shape), 0
    for k in key:
        if k is None or isinstance(k, (builtins.bool, np.bool_)):
            shape.insert(dim, 1)
            dim += 1
        elif isinstance(k, builtins.int):
            del shape[dim]
        elif isinstance(k, slice):
            shape[dim] = len(range(*k.indices(shape[dim])))
            dim += 1
        else:
            used = _index_dims(k)
            is_mask = (k.dtype is dtypes.bool) if isinstance(k, Tensor) else \
                isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype == np.bool_
            if is_mask:
                mask_shape = tuple(k._shape) if isinstance(k, Tensor) else np.asarray(k).shape
                for j, n in enumerate(mask_shape):
                    if n != shape[dim + j]:
                        raise IndexError(
                            f"The shape of the mask {list(mask_shape)} at index {j} does not match "
                            f"the shape of the indexed tensor {shape} at index {dim + j}")
            dim += used


def _expand_key(input, key):
    if not isinstance(key, tuple):
        key = (key,)
    # an integer or bool tensor with one element is still advanced indexing, as in torch
    used = builtins.sum(_index_dims(k) for k in key)
    if used > input.dim():
        raise IndexError(f"too many indices for tensor of dimension {input.dim()}")
    for k in key:
        if k is not None and k is not Ellipsis and not isinstance(k, _INDEX_TYPES):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(k).__name__})")
    if builtins.any(k is Ellipsis for k in key):  # `in` would compare arrays element-wise
        i = [j for j, k in enumerate(key) if k is Ellipsis][0]
        key = key[:i] + (slice(None),) * (input.dim() - used) + key[i + 1:]
    _check_masks(input, key)
    return key


def _basic_index(input, key):
    """ints select, slices slice, None unsqueezes: every step is a view."""
    out, dim = input, 0
    for item in key:
        if item is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(item, slice):
            size = out._shape[dim]
            if item == slice(None) or (item.step in (None, 1) and (item.start in (None, 0))
                                       and item.stop is not None and item.stop >= size):
                dim += 1  # a full slice changes nothing and records nothing, as in torch
                continue
            out = _slice(out, dim, item.start, item.stop, 1 if item.step is None else item.step)
            dim += 1
        else:
            out = _select(out, dim, item, indexing=True)
    return out


def _numpy_key(key):
    converted = []
    for k in key:
        if isinstance(k, Tensor):
            if k.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            converted.append(k._np)
        elif isinstance(k, (list, np.ndarray)):
            k = np.asarray(k)
            # a list becomes a long index (floats are cut toward zero), or a mask if all bools
            converted.append(k if k.dtype == np.bool_ else k.astype(np.int64))
        else:
            converted.append(k)
    return tuple(converted)




def _scalar_tensor_keys(key):
    """A 0-dim integer tensor in an index acts as a plain int (torch selects, a view)."""
    def plain(k):
        if isinstance(k, Tensor) and k.dim() == 0 and k.dtype not in (dtypes.bool,) \
                and not k.dtype.is_floating_point:
            return k.item()
        return k
    return tuple(plain(k) for k in key) if isinstance(key, tuple) else plain(key)


def getitem(input, key):
    _check_0dim_key(input, key)
    key = _scalar_tensor_keys(key)
    if isinstance(key, slice):  # torch's one-slice path records a slice even when it is full
        return _slice(input, 0, key.start, key.stop, 1 if key.step is None else key.step) \
            if input.dim() else _basic_index(input, _expand_key(input, key))
    key = _expand_key(input, key)
    if builtins.all(_is_basic(k) for k in key):
        out = _basic_index(input, key)
        if out is input:  # t[()], t[...], t[:, :]: still a new view, as in torch
            out = _make_view(input, input._shape, input._stride, input._offset, AliasBackward0)
        return out
    if not _holds_python_bool(key):
        # torch applies ints, slices and None first (views), then indexes what is left
        input, key = _basic_index(input, _basic_part(key)), _advanced_part(key)
    np_key = _numpy_key(key)
    try:
        values = kernel("index", input._device)(input._np, np_key)
    except IndexError as error:
        raise IndexError(str(error).replace("axis", "dimension")) from None
    strides = _index_strides(input, key, values.shape)
    out = _with_strides(values, strides, input._device) if strides else _wrap(values, input._device)
    if _needs_grad(input):
        node = IndexBackward0()
        node._saved_self_sym_sizes, node._key = input._shape, np_key
        _record(node, (input,), out)
    return out


def _holds_python_bool(key) -> bool:
    """x[True] and the like add a dim: left to NumPy's rules, which torch's match there."""
    return builtins.any(isinstance(k, (builtins.bool, np.bool_)) for k in key)


def _basic_part(key):
    """The key with every tensor or list index replaced by full slices over the dims it uses."""
    return builtins.sum(((k,) if _is_basic(k) else (slice(None),) * _index_dims(k) for k in key), ())


def _advanced_part(key):
    """What is left to index once ints (gone), slices and None (now full dims) are applied."""
    return tuple(slice(None) if k is None or isinstance(k, slice) else k
                 for k in key if not (_is_basic(k) and isinstance(k, builtins.int)))


def _index_strides(input, key, shape):
    """The strides torch gives an advanced-indexing result, or None for row-major.

    torch's index kernel is a TensorIterator over the source, restrided so the indexed dims
    become the index's dims with stride 0, and the index tensors, broadcast together. Its
    output is dense in the order those operands' strides give (storage.elementwise_strides).
    Indexed dims that are not next to each other move to the front first."""
    dims, indices, d = [], [], 0
    for k in key:
        if isinstance(k, slice):
            d += 1
            continue
        if isinstance(k, Tensor):
            index_shape, index_strides, is_mask = k._shape, k._stride, k.dtype is dtypes.bool
        else:
            array = np.asarray(k)
            index_shape, index_strides = array.shape, contiguous_strides(array.shape)
            is_mask = array.dtype == np.bool_
        if is_mask:  # a mask becomes one column of nonzero()'s (count, ndim) result per dim
            count = int(np.count_nonzero(k._np if isinstance(k, Tensor) else np.asarray(k)))
            for j in range(len(index_shape)):
                dims.append(d + j)
                indices.append(((count,), (len(index_shape),)))
            d += len(index_shape)
        else:
            dims.append(d)
            indices.append((tuple(index_shape), tuple(index_strides)))
            d += 1
    if not dims or _holds_python_bool(key):
        return None  # a new dim of size 1, no index kernel to follow
    replacement = broadcast_shapes(*(s for s, _ in indices))
    order = list(range(input.dim()))
    if dims != list(range(dims[0], dims[0] + len(dims))):
        order = dims + [i for i in order if i not in dims]
    first, count = order.index(dims[0]), len(dims)
    sizes, steps = [input._shape[i] for i in order], [input._stride[i] for i in order]
    out_shape = tuple(sizes[:first]) + tuple(replacement) + tuple(sizes[first + count:])
    if out_shape != tuple(shape) or 0 in out_shape:
        return None
    outside = len(sizes) - first - count
    operands = [tuple(steps[:first]) + (0,) * len(replacement) + tuple(steps[first + count:])]
    for index_shape, index_strides in indices:  # broadcast together, then viewed as (1,.., *replacement, 1,..)
        expanded = broadcast_strides(index_shape, index_strides, replacement)
        padded = (1,) * first + tuple(replacement) + (1,) * outside
        viewed = view_strides(tuple(replacement), expanded, padded)
        if viewed is None:
            return None
        operands.append(broadcast_strides(padded, viewed, out_shape))
    return elementwise_strides(out_shape, operands)


class IndexPutBackward0(Node):
    def backward(self, grad):
        key = self._key
        grad_self = grad.clone()
        if not self._accumulate:
            kernel("index_put_", grad._device)(grad_self._np, key, 0, False)
        return grad_self, grad[key]


def setitem(input, key, value):
    _check_0dim_key(input, key)
    key = _expand_key(input, _scalar_tensor_keys(key))
    if isinstance(value, Tensor):  # torch first views the value without its leading 1s
        shape = value._shape
        while shape and shape[0] == 1:
            shape = shape[1:]
        if shape != value._shape:
            value = view(value, shape)
    if builtins.all(_is_basic(k) for k in key):
        target = _basic_index(input, key)
        copy_(target, value)
        return
    if not _holds_python_bool(key):
        # as in getitem: ints, slices and None first (a view), then index_put_ on that view
        input, key = _basic_index(input, _basic_part(key)), _advanced_part(key)
    index_put_(input, _numpy_key(key), value)


def index_put_(input, key, values, accumulate=False):
    if not isinstance(key, tuple):
        key = (key,)
    key = _numpy_key(key)
    if input.numel() and builtins.any(n > 1 and s == 0 for n, s in zip(input._shape, input._stride)):
        # torch still writes (each shared cell once per index), but warns
        warnings.warn(
            "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
            "performing this operation. This also applies to advanced indexing e.g. "
            "tensor[indices] = tensor", UserWarning, stacklevel=2)

    def compute(old):
        out = clone(old) if not _needs_grad(old, values) else _clone_nograd(old)
        v = _array(values, old.dtype) if isinstance(values, Tensor) else values
        kernel("index_put_", old._device)(out._np, key, v, accumulate)
        if _needs_grad(old, values):
            node = IndexPutBackward0()
            node._key, node._accumulate = key, accumulate
            _record(node, (old, values), out)
        return out
    return _inplace(input, compute, (values,), fast=lambda: kernel("index_put_", input._device)(
        input._np, key, _array(values, input.dtype) if isinstance(values, Tensor) else values, accumulate))


def _clone_nograd(t):
    return _wrap(np.array(t._np, copy=True), t._device)


class MaskedFillBackward0(Node):  # value is a number
    def backward(self, grad):
        (mask,) = self.saved_values
        return (where(mask, zeros_like(grad), grad),)


class MaskedFillBackward1(Node):  # value is a 0-dim tensor
    def backward(self, grad):
        (mask,) = self.saved_values
        return where(mask, zeros_like(grad), grad), where(mask, grad, zeros_like(grad)).sum()


def _check_masked_fill_args(mask, value):
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.dim()} dimension(s)."
        )
    if mask.dtype is not dtypes.bool:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {_cpp_type_name(mask.dtype)}")


def masked_fill(input, mask, value):
    """``input`` with ``value`` wherever ``mask`` is True (the dtype stays input's)."""
    _check_masked_fill_args(mask, value)
    broadcast_shapes(mask._shape, input._shape)  # torch expands the mask first: it is "tensor a"
    fill = value._np.astype(input.dtype.numpy) if isinstance(value, Tensor) else value
    dev = _devices(input, mask)
    # torch fills a row-major clone, whatever the input's layout
    out = _wrap(np.asarray(
        kernel("where", dev)(mask._np, np.asarray(fill, dtype=input.dtype.numpy), input._np), order="C"), dev)
    if _needs_grad(input, value):
        node = MaskedFillBackward1() if isinstance(value, Tensor) else MaskedFillBackward0()
        node.save(mask)
        _record(node, (input, value) if isinstance(value, Tensor) else (input,), out)
    return out


def masked_fill_(input, mask, value):
    """In place: write ``value`` wherever ``mask`` (broadcast to ``input``'s shape) is True."""
    _check_masked_fill_args(mask, value)
    shape = broadcast_shapes(input._shape, mask._shape)
    if shape != input._shape:
        raise RuntimeError(
            f"output with shape {list(input._shape)} doesn't match the broadcast shape {list(shape)}"
        )
    if builtins.any(st == 0 and n > 1 for n, st in zip(input._shape, input._stride)):
        warnings.warn(
            "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor "
            "before performing this operation. This also applies to advanced indexing e.g. "
            "tensor[mask] = scalar", UserWarning, stacklevel=2)

    def fast():
        number = value._np.astype(input.dtype.numpy) if isinstance(value, Tensor) else value
        kernel("index_put_", _devices(input, mask))(
            input._np, np.broadcast_to(mask._np, input._shape), number, False)
    return _inplace(input, lambda old: masked_fill(old, mask, value),
                    (value,) if isinstance(value, Tensor) else (), fast)


def gather(input, dim, index):
    d = _wrap_dim(dim, input.dim())
    out = _wrap(kernel("take_along_dim", input._device)(input._np, index._np, d), input._device)
    if _needs_grad(input):
        node = GatherBackward0()
        node.save(index)
        node._saved_dim, node._saved_keepdim, node._saved_self_sym_sizes = d, True, input._shape
        _record(node, (input,), out)
    return out


GatherBackward0 = type("GatherBackward0", (MaxBackward0,), {})
