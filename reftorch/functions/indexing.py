"""Indexing: ``t[key]`` and ``t[key] = value`` (basic and advanced), index_put_,
masked_fill, gather, scatter, index_select, index_add, index_fill.

Basic indexing (ints, slices, None, ...) gives views (select, slice, unsqueeze); advanced
indexing (tensors, lists, masks) copies (``index``), and its backward scatters the gradient
back to the positions it read.
"""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from .. import dtypes
from ..dispatch import kernel
from ..storage import broadcast_shapes, broadcast_strides, contiguous_strides, elementwise_strides, view_strides
from ..tensor import Tensor, _cpp_type_name, _wrap_dim
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _devices, _warn_once, _with_strides, _wrap
from .codegen import ops
from .views import _embed, check_select


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
    key = tuple(list(k) if isinstance(k, range) else k for k in key)  # a range is a sequence of ints
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


def _slice(input, dim, item):
    start, stop = item.start, item.stop
    return ops.slice(input, dim, 0 if start is None else start, 9223372036854775807 if stop is None else stop,
                     1 if item.step is None else item.step)


def _basic_index(input, key):
    """ints select, slices slice, None unsqueezes: every step is a view."""
    out, dim = input, 0
    for item in key:
        if item is None:
            out = ops.unsqueeze(out, dim)
            dim += 1
        elif isinstance(item, slice):
            size = out._shape[dim]
            if item == slice(None) or (item.step in (None, 1) and (item.start in (None, 0))
                                       and item.stop is not None and item.stop >= size):
                dim += 1  # a full slice changes nothing and records nothing, as in torch
                continue
            out = _slice(out, dim, item)
            dim += 1
        else:
            check_select(out, dim, item, indexing=True)
            out = ops.select(out, dim, item)
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
    """``t[key]``: views for ints, slices, None and ``...``; a copy (``index``) for tensors,
    lists and masks."""
    _check_0dim_key(input, key)
    key = _scalar_tensor_keys(key)
    if isinstance(key, slice):  # torch's one-slice path records a slice even when it is full
        return _slice(input, 0, key) if input.dim() else _basic_index(input, _expand_key(input, key))
    key = _expand_key(input, key)
    if builtins.all(_is_basic(k) for k in key):
        out = _basic_index(input, key)
        if out is input:  # t[()], t[...], t[:, :]: still a new view, as in torch
            out = ops.alias(input)
        return out
    if not _holds_python_bool(key):
        # torch applies ints, slices and None first (views), then indexes what is left
        input, key = _basic_index(input, _basic_part(key)), _advanced_part(key)
    return ops.index(input, _Key(key))


class _Key(tuple):
    """An advanced-indexing key as the user wrote it (tensors, lists, slices), and the same
    key for NumPy: what ``index`` reads and what its backward writes through."""

    @property
    def numpy(self):
        return _numpy_key(self)


def index(input, indices):
    """The elements at advanced-indexing ``indices``, as a new tensor laid out as torch's."""
    np_key = _numpy_key(indices)
    try:
        values = kernel("index", input._device)(input._np, np_key)
    except IndexError as error:
        raise IndexError(str(error).replace("axis", "dimension")) from None
    strides = _index_strides(input, indices, values.shape)
    return _with_strides(values, strides, input._device) if strides else _wrap(values, input._device)


def index_backward(grad, sizes, indices):
    """Zeros of the input's sizes with the gradient added at every position read."""
    return _embed(grad, sizes, _numpy_key(indices), accumulate=True)


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


def setitem(input, key, value):
    """``t[key] = value``: a copy into the view for a basic key, ``index_put_`` otherwise."""
    _check_0dim_key(input, key)
    if not isinstance(value, (Tensor, builtins.int, builtins.float, np.generic)):
        raise TypeError(f"can't assign a {type(value).__name__} to a {input.type()}")
    key = _expand_key(input, _scalar_tensor_keys(key))
    if isinstance(value, Tensor):  # torch first views the value without its leading 1s
        shape = value._shape
        while shape and shape[0] == 1:
            shape = shape[1:]
        if shape != value._shape:
            value = ops.view(value, shape)
    if builtins.all(_is_basic(k) for k in key):
        ops.copy_(_basic_index(input, key), value)
        return
    if not _holds_python_bool(key):
        # as in getitem: ints, slices and None first (a view), then index_put_ on that view
        input, key = _basic_index(input, _basic_part(key)), _advanced_part(key)
    ops.index_put_(input, _Key(key), value)


def _put(target, key, values, accumulate):
    """The index_put_ kernel, with torch's words for an index out of range or values that do
    not fit the positions picked (NumPy's would name axes and input values)."""
    try:
        kernel("index_put_", _devices(target))(target._np, key, values, accumulate)
    except IndexError as error:
        raise IndexError(str(error).replace("axis", "dimension")) from None
    except ValueError:
        picked = list(target._np[key].shape)
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(np.shape(values))} cannot be "
                           f"broadcast to indexing result of shape {picked}") from None


def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` written (or added) at ``indices``."""
    if not isinstance(indices, tuple):
        indices = (indices,)
    key = _numpy_key(indices)
    if isinstance(values, Tensor) and values.dtype is not input.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_scalar_name(input.dtype)} for the destination and {_scalar_name(values.dtype)} for the source.")
    out = ops.clone(input)
    _put(out, key, values._np if isinstance(values, Tensor) else values, accumulate)
    return out


def _warn_expanded(target, op, example):
    """torch still writes into an expanded tensor (each shared cell once per index), but warns."""
    if target.numel() and builtins.any(n > 1 and s == 0 for n, s in zip(target._shape, target._stride)):
        warnings.warn(
            f"Use of {op} on expanded tensors is deprecated. Please clone() the tensor before performing "
            f"this operation. This also applies to advanced indexing e.g. {example}", UserWarning, stacklevel=4)


def check_index_put_(input, indices, values, accumulate=False):
    _warn_expanded(input, "index_put_", "tensor[indices] = tensor")


def check_masked_fill_(input, mask, value):
    """The in-place form's own checks, in torch's order: the arguments, the mask's shape
    against ``input`` (not the other way round), then an expanded target's warning."""
    _check_masked_fill_args(mask, value)
    shape = broadcast_shapes(input._shape, mask._shape)
    if shape != input._shape:
        raise RuntimeError(
            f"output with shape {list(input._shape)} doesn't match the broadcast shape {list(shape)}"
        )
    _warn_expanded(input, "masked_fill_", "tensor[mask] = scalar")


def index_put_backward(grad, indices, accumulate, values_needed=None):
    grad_self = grad.clone()
    if not accumulate:
        kernel("index_put_", grad._device)(grad_self._np, _numpy_key(indices), 0, False)
    return grad_self


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
    if dtypes.is_integral(input.dtype) and not isinstance(value, Tensor):
        fill = dtypes.checked_convert(value, input.dtype)
    dev = _devices(input, mask)
    # torch fills a row-major clone, whatever the input's layout
    return _wrap(np.asarray(
        kernel("where", dev)(mask._np, np.asarray(fill, dtype=input.dtype.numpy), input._np), order="C"), dev)


def _check_index_tensor(op, input, dim, index, src=None):
    """torch's checks for gather/scatter: an integer index with the input's dims, no larger than
    the input apart from ``dim`` (nor than a tensor ``src``), every entry inside ``dim``."""
    if index.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    if index.dim() != builtins.max(input.dim(), 1) and index.numel():
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           + ("input tensor" if op == "gather" else "self tensor"))
    shape = input._shape or (1,)
    too_big = [d for d in range(index.dim()) if d != dim and index._shape[d] > shape[d]]
    if op == "gather" and too_big:
        raise RuntimeError(
            f"Size does not match at dimension {too_big[0]} expected index {list(index._shape)} to be "
            f"no larger than self {list(input._shape)} apart from dimension {dim}")
    src_shape = (src._shape or (1,)) if src is not None else None
    if too_big or (src is not None and builtins.any(
            index._shape[d] > src_shape[d] for d in range(index.dim()))):
        also = f" and to be no larger size than src {list(src._shape)}" if src is not None else ""
        raise RuntimeError(f"Expected index {list(index._shape)} to be no larger than self "
                           f"{list(input._shape)} apart from dimension {dim}{also}")
    size = shape[dim]
    bad = index._np[(index._np < 0) | (index._np >= size)]
    if bad.size:
        raise RuntimeError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {dim} with size {size}")


def _scatter_key(index, dim):
    """The NumPy key that addresses, for every element of ``index``, its target position."""
    grid = list(np.indices(index._shape, sparse=True))
    grid[dim] = index._np
    return tuple(grid)


def _leading_part(array, shape):
    """The corner of ``array`` an index of ``shape`` reads (torch ignores the rest)."""
    return array[tuple(slice(0, n) for n in shape)]


def gather(input, dim, index, *, sparse_grad=False):
    """``out[i][j] = input[i][index[i][j]]`` for dim 1: pick, along ``dim``, the positions ``index`` names."""
    d = _wrap_dim(dim, input.dim())
    _check_index_tensor("gather", input, d, index)
    source = _leading_part(input._np, index._shape[:d] + (input._shape[d],) + index._shape[d + 1:]) \
        if input.dim() else input._np
    return _wrap(kernel("take_along_dim", input._device)(source, index._np.astype(np.int64), d), input._device)


_REDUCE_IDENTITY = {"sum": 0, "prod": 1, "mean": 0, "amax": -np.inf, "amin": np.inf}


def _scatter_values(input, dim, index, src, reduce=None, include_self=True):
    """The values of ``input`` after scattering ``src`` (a tensor or a number) at ``index``."""
    out = np.array(input._np, copy=True)
    key = _scatter_key(index, dim)
    values = _leading_part(src._np, index._shape) if isinstance(src, Tensor) else src
    if reduce is None:
        out[key] = values
        return out
    values = np.broadcast_to(np.asarray(values, dtype=out.dtype), index._shape)
    if not include_self:
        identity = _REDUCE_IDENTITY[reduce]
        out[key] = identity if out.dtype.kind == "f" or np.isfinite(identity) else \
            (np.iinfo(out.dtype).min if identity < 0 else np.iinfo(out.dtype).max)
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    ufunc.at(out, key, values)
    if reduce == "mean":
        count = np.full(out.shape, 1 if include_self else 0, dtype=np.int64)
        if not include_self:
            count[key] = 0
        np.add.at(count, key, 1)
        count = np.maximum(count, 1)
        out = out / count if out.dtype.kind == "f" else out // count
    return out.astype(input.dtype.numpy, copy=False)


def _check_scatter(op, input, dim, index, src):
    d = _wrap_dim(dim, input.dim())
    if isinstance(src, Tensor) and src.dtype is not input.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype")
    _check_index_tensor(op, input, d, index, src if isinstance(src, Tensor) else None)
    return d


_SCATTER_REDUCE_WORDS = {"add": "sum", "multiply": "prod"}


def scatter(input, dim, index, src):
    """A copy of ``input`` with ``src`` written at ``index`` along ``dim``:
    ``out[i][index[i][j]] = src[i][j]`` for dim 1."""
    d = _check_scatter("scatter", input, dim, index, src)
    return _wrap(_scatter_values(input, d, index, src), input._device)


def scatter_value(input, dim, index, value):
    """``scatter`` of one number everywhere ``index`` points."""
    return scatter(input, dim, index, value)


def scatter_reduce_legacy(input, dim, index, src, *, reduce):
    """``scatter(..., reduce='add' / 'multiply')``: the old spelling of scatter_reduce."""
    d = _check_scatter("scatter", input, dim, index, src)
    if reduce not in _SCATTER_REDUCE_WORDS:
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor):  # torch says it once per process
        _warn_once("scatter_reduce_argument",
                   "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
                   "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
                   "reduction options.")
    return _wrap(_scatter_values(input, d, index, src, _SCATTER_REDUCE_WORDS.get(reduce)), input._device)


def scatter_value_reduce(input, dim, index, value, *, reduce):
    return scatter_reduce_legacy(input, dim, index, value, reduce=reduce)


def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (repeated indices add up)."""
    d = _check_scatter("scatter_add", input, dim, index, src)
    return _wrap(_scatter_values(input, d, index, src, "sum"), input._device)


def scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result):
    """sum: the gradient passes to every contribution; mean: divided by the count; prod: the
    product of the others; amax/amin: split evenly between the values that reached the result."""
    input = self
    dim = _wrap_dim(dim, input.dim())
    picked = src[tuple(slice(0, n) for n in index._shape)]
    if reduce == "sum":
        grad_self, grad_src = grad, grad.gather(dim, index)
    elif reduce == "mean":
        ones = _wrap(np.ones(index._shape, dtype=grad._np.dtype), grad._device)
        count = (ops.ones_like(grad) if include_self else ops.zeros_like(grad)).scatter_add(dim, index, ones)
        count = ops.where(count == 0, ops.ones_like(count), count)
        grad_self, grad_src = grad / count, (grad / count).gather(dim, index)
    elif reduce == "prod":
        grad_self = grad * result / ops.where(input == 0, ops.ones_like(input), input)
        grad_src = (grad * result).gather(dim, index) / ops.where(picked == 0, ops.ones_like(picked), picked)
    else:  # amax, amin: the values equal to the result share its gradient
        self_hits = (input == result).to(grad.dtype)
        src_hits = (picked == result.gather(dim, index)).to(grad.dtype)
        count = (self_hits if include_self else ops.zeros_like(grad)).scatter_add(dim, index, src_hits)
        share = grad / ops.where(count == 0, ops.ones_like(count), count)
        grad_self, grad_src = share * self_hits, share.gather(dim, index) * src_hits
    if not include_self:
        grad_self = grad_self.scatter(dim, index, 0)
    return grad_self, grad_src


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Scatter ``src`` into a copy of ``input``, combining what meets at one position with
    ``reduce`` (``'sum'``, ``'prod'``, ``'mean'``, ``'amax'``, ``'amin'``); ``include_self``
    says whether ``input``'s own value takes part."""
    if reduce not in _REDUCE_IDENTITY:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = _check_scatter("scatter_reduce", input, dim, index, src)
    return _wrap(_scatter_values(input, d, index, src, reduce, include_self), input._device)


def index_select(input, dim, index):
    """The slices of ``input`` at positions ``index`` (a 1-D integer tensor) along ``dim``: a copy."""
    d = _wrap_dim(dim, input.dim())
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    size = input._shape[d] if input.dim() else 1
    bad = index._np[(index._np < 0) | (index._np >= size)]
    if bad.size and d == 0:
        raise IndexError("index out of range in self")
    if bad.size:  # (torch's kernel for other dims words it its own way)
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad.reshape(-1)[0])} axis_dim={size}")
    return _wrap(np.take(input._np, index._np.reshape(-1), axis=d) if input.dim() else
                 input._np.reshape(1)[index._np.reshape(-1)].reshape(index._shape), input._device)


def masked_select(input, mask):
    """The elements of ``input`` where ``mask`` is True (the two broadcast), as a new 1-D tensor."""
    if mask.dtype is not dtypes.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shapes(input._shape, mask._shape)
    values = np.broadcast_to(input._np, shape)[np.broadcast_to(mask._np, shape)]
    return _wrap(np.array(values, copy=True), input._device)


def masked_select_backward(grad, self, mask):
    shape = broadcast_shapes(self._shape, mask._shape)
    out = ops.zeros(shape, dtype=grad.dtype, device=grad._device)
    out[ops.expand(mask, shape)] = grad
    return out


def _check_index_add(input, dim, index, source):
    d = _wrap_dim(dim, input.dim())
    if index.dim() > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector")
    if source.dim() and index.numel() != source._shape[d]:
        raise RuntimeError(f"index_add_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({source._shape[d]}), for dim: {d}")
    if source.dim() and (source.dim() != input.dim() or builtins.any(
            source._shape[k] != input._shape[k] for k in range(input.dim()) if k != d)):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {list(input._shape)} source.shape = {list(source._shape)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({_scalar_name(input.dtype)}) and source "
                           f"({_scalar_name(source.dtype)}) must have the same scalar type")
    size = input._shape[d] if input.dim() else 1
    bad = index._np[(index._np < 0) | (index._np >= size)]
    if bad.size:
        raise RuntimeError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} with size {size}")
    return d


def _index_add_values(input, d, index, source, alpha):
    out = np.array(input._np, copy=True)
    key = (slice(None),) * d + (index._np.reshape(-1),)
    added = source._np if alpha == 1 else source._np * alpha
    np.add.at(out, key, added if source.dim() else np.broadcast_to(added, out[key].shape))
    return out


def index_add(input, dim, index, source, *, alpha=1):
    """A copy of ``input`` with the slices of ``source`` added at positions ``index`` along ``dim``."""
    d = _check_index_add(input, dim, index, source)
    return _wrap(_index_add_values(input, d, index, source, alpha), input._device)


def index_add_source_backward(grad, dim, index, source, source_dim, alpha):
    """torch's formula: the rows of ``grad`` at ``index``, in ``source``'s shape."""
    grad_source = grad.index_select(dim, index)
    grad_source = grad_source.expand_as(source) if source_dim > 0 else grad_source.reshape(())
    return grad_source if alpha == 1 else grad_source * alpha


def index_fill(input, dim, index, value):
    """A copy of ``input`` with ``value`` written into the slices at ``index`` along ``dim``."""
    d = _wrap_dim(dim, input.dim())
    out = np.array(input._np, copy=True)
    out[(slice(None),) * d + (index._np.reshape(-1),)] = value.item() if isinstance(value, Tensor) else value
    return _wrap(out, input._device)


def one_hot(input, num_classes=-1):
    """Row i is all zeros but a 1 at ``input[i]`` (int64)."""
    n = int(input.max().item()) + 1 if num_classes < 0 else num_classes
    return _wrap(np.eye(n, dtype=np.int64)[input._np], input.device)
