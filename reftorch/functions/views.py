"""Views: new geometry (sizes, strides, offset) over the same storage, never a copy.

view, reshape (a view when the strides allow it), transpose, permute, squeeze, unsqueeze,
expand, select, slicing, narrow, split, chunk, unbind, as_strided, unfold. A view shares
its base's version counter; its backward puts the gradient back where the view looked.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import dtypes
from ..autograd.graph import Node
from ..dispatch import kernel
from ..storage import broadcast_shapes, contiguous_strides, expand_strides, view_strides
from ..tensor import Size, _wrap_dim
from ._support import same_op_on_tangent, _grad_state, _numpy_names, _needs_grad, _non_overlapping_and_dense, _record, _view_of, _warn_once
from .copies import clone, contiguous
from .creation import arange, tensor, zeros
from .joining import cat, stack


class ViewBackward0(Node):
    def backward(self, grad):
        return (grad.reshape(self._saved_self_sym_sizes),)


class UnsafeViewBackward0(ViewBackward0):
    pass


class ReshapeAliasBackward0(ViewBackward0):
    pass


def _make_view(input, shape, stride, offset, node_cls, **attrs):
    out = _view_of(input, shape, stride, offset)
    if _needs_grad(input):
        node = node_cls()
        node._saved_self_sym_sizes = input._shape
        for k, v in attrs.items():
            setattr(node, k, v)
        _record(node, (input,), out)
    return out


def _infer_shape(shape, numel):
    shape = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else list(shape)
    shape = [builtins.int(s) for s in shape]
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {shape} because the unspecified "
                "dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
    return tuple(shape)


def view(input, *shape):
    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        raise NotImplementedError("view(dtype) is not part of reftorch")
    shape = _infer_shape(shape, input.numel())
    strides = view_strides(input._shape, input._stride, shape)
    if strides is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return _make_view(input, shape, strides, input._offset, ViewBackward0)


# forward mode: a view's tangent is the same view of the input's tangent
view.jvp = same_op_on_tangent(view)


def reshape(input, *shape):
    """A view when the strides allow one, else a copy (then no storage is shared)."""
    shape = _infer_shape(shape, input.numel())
    strides = view_strides(input._shape, input._stride, shape)
    if strides is not None:
        # torch names the node after the path taken: a plain view, or an alias of a
        # non-contiguous tensor that happens to allow the new shape
        node = ViewBackward0 if input.is_contiguous() else ReshapeAliasBackward0
        return _make_view(input, shape, strides, input._offset, node)
    return _unsafe_view(clone(input, memory_format="contiguous"), shape)


reshape.jvp = same_op_on_tangent(reshape)


def _unsafe_view(input, shape):
    """Reinterpret a fresh contiguous copy: not a view for the user, so no ``_base``."""
    out = _view_of(input, shape, contiguous_strides(shape), input._offset)
    out._base = None
    out._version_counter = input._version_counter
    if _needs_grad(input):
        node = UnsafeViewBackward0()
        node._saved_self_sym_sizes = input._shape
        _record(node, (input,), out)
    return out


def view_as(input, other):
    return view(input, other._shape)


view_as.jvp = same_op_on_tangent(view_as)


def reshape_as(input, other):
    return reshape(input, other._shape)


reshape_as.jvp = same_op_on_tangent(reshape_as)


def flatten(input, start_dim=0, end_dim=-1):
    if input.dim() == 0:
        return reshape(input, 1)
    start = _wrap_dim(start_dim, input.dim())
    end = _wrap_dim(end_dim, input.dim())
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = input._shape[:start] + (math.prod(input._shape[start:end + 1]),) + input._shape[end + 1:]
    return reshape(input, shape)


flatten.jvp = same_op_on_tangent(flatten)


def ravel(input):
    return reshape(contiguous(input), -1)


ravel.jvp = same_op_on_tangent(ravel)


def unflatten(input, dim, sizes):
    """Split one dim into several (one of the new sizes may be -1); a view."""
    dim = _wrap_dim(dim, input.dim())
    if not isinstance(sizes, (tuple, list, Size)):
        raise TypeError(
            f"unflatten(): argument 'sizes' (position 2) must be tuple of ints, not {type(sizes).__name__}")
    sizes = tuple(builtins.int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input._shape[dim]
    try:
        sizes = _infer_shape(sizes, n)
    except RuntimeError as error:  # torch rewords the size mismatch, and wraps anything else
        if "is invalid for input of size" in str(error):
            raise RuntimeError(
                f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
                f"{dim} ({n}) in the input tensor") from None
        raise RuntimeError(f"unflatten got an unexpected error:\n{error}") from None
    return view(input, input._shape[:dim] + sizes + input._shape[dim + 1:])


unflatten.jvp = same_op_on_tangent(unflatten)


class TBackward0(Node):
    def backward(self, grad):
        return (grad.t(),)


class TransposeBackward0(Node):
    def backward(self, grad):
        return (grad.transpose(self._saved_dim0, self._saved_dim1),)


class PermuteBackward0(Node):
    def backward(self, grad):
        inverse = [0] * len(self._saved_dims)
        for i, d in enumerate(self._saved_dims):
            inverse[d] = i
        return (grad.permute(inverse),)


def _swapped(seq, i, j):
    seq = list(seq)
    seq[i], seq[j] = seq[j], seq[i]
    return tuple(seq)


def t(input):
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.dim()}D")
    if input.dim() < 2:
        return _make_view(input, input._shape, input._stride, input._offset, TBackward0)
    return _make_view(input, input._shape[::-1], input._stride[::-1], input._offset, TBackward0)


t.jvp = same_op_on_tangent(t)


def transpose(input, dim0, dim1):
    n = input.dim()
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    return _make_view(input, _swapped(input._shape, d0, d1), _swapped(input._stride, d0, d1),
                      input._offset, TransposeBackward0, _saved_dim0=d0, _saved_dim1=d1)


transpose.jvp = same_op_on_tangent(transpose)


swapaxes = swapdims = transpose


def permute(input, *dims):
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    n = input.dim()
    if len(dims) != n:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    dims = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _make_view(input, tuple(input._shape[d] for d in dims), tuple(input._stride[d] for d in dims),
                      input._offset, PermuteBackward0, _saved_dims=dims)


permute.jvp = same_op_on_tangent(permute)


def movedim(input, source, destination):
    """Move the dims ``source`` to the positions ``destination``; the others keep their order.

    A permute underneath (PermuteBackward0), so the result is a view.
    """
    source = [source] if isinstance(source, builtins.int) else list(source)
    destination = [destination] if isinstance(destination, builtins.int) else list(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({source} dims) should contain "
            f"the same number of dims as destination ({destination} dims)"
        )
    n = input.dim()
    src = [_wrap_dim(d, n) for d in source]
    dst = [_wrap_dim(d, n) for d in destination]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({source})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({destination})")
    if n == 0:  # nothing to move: torch returns an alias
        return _make_view(input, (), (), input._offset, AliasBackward0)
    order = [None] * n
    for s_dim, d_dim in zip(src, dst):
        order[d_dim] = s_dim
    rest = iter(d for d in range(n) if d not in src)  # the other dims, in their order
    order = [d if d is not None else next(rest) for d in order]
    return permute(input, order)


movedim.jvp = same_op_on_tangent(movedim)


moveaxis = movedim


def _T(input):
    if input.dim() == 0:
        _warn_once("T_0d", "Tensor.T is deprecated on 0-D tensors. This function is the identity "
                           "in these cases.")
    elif input.dim() != 2:
        _warn_once("T_not_2d", (
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
            "reverse the dimensions of a tensor."))
    return permute(input, tuple(range(input.dim() - 1, -1, -1)))


_T.jvp = same_op_on_tangent(_T)


def _matrix_transpose(name, zero_dim_hint):
    """``x.mT`` (and ``mH``, the same for real numbers): swap the last two dims."""
    def transpose_last(input):
        if input.dim() == 0:
            _warn_once(name + "_0d", f"Tensor.{name} is deprecated on 0-D tensors. {zero_dim_hint}")
            return input
        if input.dim() == 1:
            raise RuntimeError(
                f"tensor.{name} is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return transpose(input, -2, -1)
    return transpose_last


def _H(input):  # the conjugate transpose, which for real numbers is the transpose
    if input.dim() == 0:
        _warn_once("H_0d", "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
        return input
    if input.dim() != 2:
        hint = " For batches of matrices, consider using tensor.mH" if input.dim() > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {input.dim()}-D tensor.{hint}")
    return transpose(input, 0, 1)


_H.jvp = same_op_on_tangent(_H)


class UnsqueezeBackward0(Node):
    def backward(self, grad):
        return (grad.squeeze(self._saved_dim),)


@_numpy_names
def unsqueeze(input, dim):
    dim = _wrap_dim(dim, input.dim() + 1)
    shape = input._shape[:dim] + (1,) + input._shape[dim:]
    inner = input._stride[dim] * input._shape[dim] if dim < input.dim() else 1
    stride = input._stride[:dim] + (inner,) + input._stride[dim:]
    return _make_view(input, shape, stride, input._offset, UnsqueezeBackward0, _saved_dim=dim)


unsqueeze.jvp = same_op_on_tangent(unsqueeze)


class SqueezeBackward0(ViewBackward0):
    pass


class SqueezeBackward1(ViewBackward0):
    pass


class SqueezeBackward4(ViewBackward0):
    pass


@_numpy_names
def squeeze(input, dim=None):
    if dim is None:
        keep = [d for d in range(input.dim()) if input._shape[d] != 1]
        node = SqueezeBackward0
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = {_wrap_dim(d, input.dim()) for d in dims}
        keep = [d for d in range(input.dim()) if d not in dims or input._shape[d] != 1]
        node = SqueezeBackward4 if isinstance(dim, (tuple, list)) else SqueezeBackward1
    return _make_view(input, tuple(input._shape[d] for d in keep), tuple(input._stride[d] for d in keep),
                      input._offset, node)


squeeze.jvp = same_op_on_tangent(squeeze)


class ExpandBackward0(ViewBackward0):
    def backward(self, grad):
        return (grad,)  # the engine sums the repeated positions back


def expand(input, *sizes):
    sizes = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    if len(sizes) < input.dim():
        raise RuntimeError(
            f"expand({input.type()}{{{list(input._shape)}}}, size={list(sizes)}): the number of sizes "
            f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({input.dim()})"
        )
    shape, strides = expand_strides(input._shape, input._stride, tuple(builtins.int(s) for s in sizes))
    return _make_view(input, shape, strides, input._offset, ExpandBackward0)


expand.jvp = same_op_on_tangent(expand)


def expand_as(input, other):
    return expand(input, other._shape)


expand_as.jvp = same_op_on_tangent(expand_as)


def broadcast_to(input, shape):
    return expand(input, shape)


broadcast_to.jvp = same_op_on_tangent(broadcast_to)


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*(t._shape for t in tensors))
    # a tensor already of the shape comes back itself, not an expanded view (as torch's does)
    return tuple(t if t._shape == shape else expand(t, shape) for t in tensors)


broadcast_tensors.jvp = lambda t, out, *tensors: broadcast_tensors(*t(tensors))


def _broadcast_shapes_api(*shapes):
    """``torch.broadcast_shapes``: the shape tensors of these shapes broadcast to, as a Size.

    Ints count as 1-D shapes. Unlike broadcasting two tensors, this names the argument that
    does not fit (torch words it differently, so the internal helper is not reused).
    """
    shapes = tuple((s,) if isinstance(s, builtins.int) else s for s in shapes if s is not None)
    for shape in shapes:
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError(
                f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}"
            )
    common = [1] * builtins.max((len(s) for s in shapes), default=0)
    for index, shape in enumerate(shapes):
        for d in range(-1, -1 - len(shape), -1):
            if shape[d] == common[d]:
                continue
            if common[d] == 1:
                if shape[d] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[d] = shape[d]
            if shape[d] != 1 and shape[d] != common[d]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[d]} at {d}! Mismatching "
                    f"argument at index {index} had {shape}; but expected shape should be "
                    f"broadcastable to {common}"
                )
    return Size(common)


_broadcast_shapes_api.__name__ = _broadcast_shapes_api.__qualname__ = "broadcast_shapes"


class _EmbedInZeros(Node):
    """Backward of select/slice/index: the gradient goes back to the selected positions."""

    def backward(self, grad):
        return (grad[self._key],)


def _embed(grad, shape, key, accumulate=False):
    """zeros(shape) with ``grad`` written (or added) at ``key``; differentiable in ``grad``."""
    out = zeros(shape, dtype=grad.dtype, device=grad._device)
    kernel("index_put_", grad._device)(out._np, key, grad._np, accumulate)
    if _needs_grad(grad):
        node = _EmbedInZeros()
        node._key = key
        _record(node, (grad,), out)
    return out


class SelectBackward0(Node):
    def backward(self, grad):
        return (_embed(grad, self._saved_self_sym_sizes, self._key),)


class SliceBackward0(SelectBackward0):
    pass


def select(input, dim, index):
    return _select(input, dim, index, indexing=False)


select.jvp = same_op_on_tangent(select)


def _select(input, dim, index, indexing):
    """``t.select(dim, i)``, or ``t[..., i]`` (``indexing``): the same view, worded apart."""
    n = input.dim()
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, n)
    size = input._shape[dim]
    if not -size <= index < size:
        if not indexing:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"{list(input._shape)} at dimension {dim}")
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
    index = index + size if index < 0 else index
    key = (slice(None),) * dim + (index,)
    return _make_view(input, input._shape[:dim] + input._shape[dim + 1:],
                      input._stride[:dim] + input._stride[dim + 1:],
                      input._offset + index * input._stride[dim], SelectBackward0, _key=key)


def _slice(input, dim, start, stop, step):
    size = input._shape[dim]
    start, stop, step = slice(start, stop, step).indices(size)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    length = builtins.max(0, (stop - start + step - 1) // step)
    key = (slice(None),) * dim + (slice(start, stop, step),)
    shape = input._shape[:dim] + (length,) + input._shape[dim + 1:]
    stride = input._stride[:dim] + (input._stride[dim] * step,) + input._stride[dim + 1:]
    offset = input._offset + start * input._stride[dim]  # even for an empty slice, as torch
    return _make_view(input, shape, stride, offset, SliceBackward0, _key=key)


def narrow(input, dim, start, length):
    """``length`` elements from ``start`` along ``dim`` (a view); torch's checks, in order."""
    if input.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = _wrap_dim(dim, input.dim())
    size = input._shape[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start + size if start < 0 else start
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _slice(input, dim, start, start + length, 1)


narrow.jvp = same_op_on_tangent(narrow)


class SplitBackward0(Node):
    def backward(self, *grads):
        pieces = [g if g is not None else zeros(shape, dtype=self._dtype, device=self._device)
                  for g, shape in zip(grads, self._shapes)]
        return (cat(pieces, self._dim),)


class UnbindBackward0(SplitBackward0):
    def backward(self, *grads):
        pieces = [g if g is not None else zeros(shape, dtype=self._dtype, device=self._device)
                  for g, shape in zip(grads, self._shapes)]
        return (stack(pieces, self._dim),)


def _multi_view(input, dim, views, node_cls):
    """Several views out of one node (split, chunk, unbind), each its own output index."""
    with_grad = _needs_grad(input)
    if with_grad:
        saved = _grad_state.grad_enabled
        _grad_state.grad_enabled = False
    try:
        outs = tuple(views())
    finally:
        if with_grad:
            _grad_state.grad_enabled = saved
    if with_grad:
        node = node_cls()
        node.num_outputs = len(outs)
        node._shapes = [o._shape for o in outs]
        node._dim, node._dtype, node._device = dim, input.dtype, input._device
        _record(node, (input,), *outs)
    return outs


def split(input, split_size_or_sections, dim=0):
    dim = _wrap_dim(dim, input.dim())
    size = input._shape[dim]
    if isinstance(split_size_or_sections, builtins.int):
        step = split_size_or_sections
        sections = [builtins.min(step, size - i) for i in range(0, size, step)] if size else [0]
    else:
        sections = list(split_size_or_sections)
        if builtins.sum(sections) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                f"size at dimension {dim}), but got split_sizes={sections}"
            )

    def views():
        start = 0
        for n in sections:
            yield _slice(input, dim, start, start + n, 1)
            start += n
    return _multi_view(input, dim, views, SplitBackward0)


split.jvp = same_op_on_tangent(split)


def chunk(input, chunks, dim=0):
    size = input._shape[_wrap_dim(dim, input.dim())]
    return split(input, builtins.max(1, -(-size // chunks)), dim)


chunk.jvp = same_op_on_tangent(chunk)


def unbind(input, dim=0):
    dim = _wrap_dim(dim, input.dim())
    return _multi_view(input, dim, lambda: (select(input, dim, i) for i in range(input._shape[dim])),
                       UnbindBackward0)


unbind.jvp = same_op_on_tangent(unbind)


class AsStridedBackward0(Node):
    """Gradients meet in the storage: each output element adds its gradient into the memory
    cell it read, and each input element takes the sum in its cell (shared by the input
    elements that read the same cell, so it is split evenly between them)."""

    def backward(self, grad):
        if grad._requires_grad:  # create_graph: the same steps as recorded tensor ops
            return (self._recorded_backward(grad),)
        buffer = zeros(self._storage_size, dtype=grad.dtype, device=grad._device)
        region = as_strided(buffer, grad._shape, self._stride, self._offset)
        kernel("index_put_", grad._device)(region._np, (...,), grad._np, True)
        base = as_strided(buffer, self._base_shape, self._base_stride, self._base_offset)
        if not _non_overlapping_and_dense(self._base_shape, self._base_stride):
            readers = np.zeros(self._storage_size, dtype=grad._np.dtype)
            cells = np.lib.stride_tricks.as_strided(
                readers[self._base_offset:], self._base_shape,
                tuple(s * readers.itemsize for s in self._base_stride))
            np.add.at(cells, (...,), 1)
            np.divide(buffer._np, readers, out=buffer._np, where=readers > 0)
        return (base.clone(),)

    def _readers(self):
        """How many input elements read each storage cell (None if each is read once)."""
        if _non_overlapping_and_dense(self._base_shape, self._base_stride):
            return None
        readers = np.zeros(self._storage_size)
        cells = np.lib.stride_tricks.as_strided(
            readers[self._base_offset:], self._base_shape,
            tuple(s * readers.itemsize for s in self._base_stride))
        np.add.at(cells, (...,), 1)
        return np.maximum(readers, 1)

    def _recorded_backward(self, grad):
        cells = arange(self._storage_size, device=grad._device)
        index = as_strided(cells, grad._shape, self._stride, self._offset).reshape(-1)
        buffer = zeros(self._storage_size, dtype=grad.dtype, device=grad._device)
        buffer.index_put_((index,), grad.reshape(-1), accumulate=True)
        readers = self._readers()
        if readers is not None:
            buffer = buffer / tensor(readers, dtype=grad.dtype, device=grad._device)
        return as_strided(buffer, self._base_shape, self._base_stride, self._base_offset)


def _check_as_strided(input, size, stride, offset):
    """torch's checks before a view reads raw storage (NumPy's message would be vaguer)."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if builtins.any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if 0 in size:
        return
    itemsize = input.dtype.itemsize
    needed = (offset + 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride))) * itemsize
    available = len(input._storage) * itemsize
    if needed > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
            f"itemsize {itemsize} requiring a storage size of {needed} are out of bounds for "
            f"storage of size {available}"
        )


def as_strided(input, size, stride, storage_offset=None):
    """A view with any geometry over ``input``'s storage (offset counted from its start)."""
    offset = input._offset if storage_offset is None else storage_offset
    size, stride = tuple(size), tuple(stride)
    _check_as_strided(input, size, stride, offset)
    out = _view_of(input, size, stride, offset)
    if _needs_grad(input):
        node = AsStridedBackward0()
        node._storage_size = len(input._storage)
        node._base_shape, node._base_stride, node._base_offset = input._shape, input._stride, input._offset
        node._stride, node._offset = stride, offset
        _record(node, (input,), out)
    return out


class UnfoldBackward0(Node):
    def backward(self, grad):
        return (_unfold_backward(grad, self._saved_self_sym_sizes, self._saved_dimension,
                                 self._saved_size, self._saved_step),)


class UnfoldBackwardBackward0(Node):
    def backward(self, grad):
        return (unfold(grad, self._saved_dim, self._saved_size, self._saved_step),)


def _unfold_backward(grad, shape, dim, size, step):
    """Each input element gets the sum of the gradients of every window it appears in."""
    out = zeros(shape, dtype=grad.dtype, device=grad._device)
    windows = unfold(out.detach(), dim, size, step) if shape else out.detach().reshape(size)
    # windows overlap when step < size: add.at adds one element at a time, so none is lost
    kernel("index_put_", grad._device)(windows._np, (...,), grad._np, True)
    if _needs_grad(grad):
        node = UnfoldBackwardBackward0()
        node._saved_dim, node._saved_size, node._saved_step = dim, size, step
        _record(node, (grad,), out)
    return out


def unfold(input, dimension, size, step):
    """Every window of ``size`` elements along ``dimension``, ``step`` apart, as a new last dim.

    A view: the windows share the input's memory (overlapping when ``step < size``).
    >>> torch.arange(5.).unfold(0, 2, 1)   # rows [0, 1], [1, 2], [2, 3], [3, 4]
    """
    dim = _wrap_dim(dimension, input.dim())
    length = input._shape[dim] if input._shape else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape, stride = list(input._shape) + [size], list(input._stride) + [input._stride[dim] if input._shape else 1]
    if input._shape:
        shape[dim] = (length - size) // step + 1
        stride[dim] *= step
    return _make_view(input, tuple(shape), tuple(stride), input._offset, UnfoldBackward0,
                      _saved_dimension=dim, _saved_size=size, _saved_step=step)


unfold.jvp = same_op_on_tangent(unfold)


class AliasBackward0(Node):
    def backward(self, grad):
        return (grad,)
