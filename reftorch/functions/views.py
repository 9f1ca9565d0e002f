"""Views: new geometry (sizes, strides, offset) over the same storage, never a copy.

view, reshape (a view when the strides allow it), transpose, permute, squeeze, unsqueeze,
expand, select, slicing, narrow, split, chunk, unbind, as_strided, unfold. A view shares
its base's version counter; its backward (derivatives.py) puts the gradient back where the
view looked: the helpers for that are at the end of this file.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import dtypes
from ..dispatch import kernel
from ..storage import broadcast_shapes, contiguous_strides, expand_strides, view_strides
from ..tensor import Size, Tensor, _wrap_dim
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _non_overlapping_and_dense, _view_of, _warn_once
from .codegen import ops


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


def view(input, *size):
    shape = _infer_shape(size, input.numel())
    strides = view_strides(input._shape, input._stride, shape)
    if strides is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return _view_of(input, shape, strides, input._offset)


def _require_unit_last_stride(strides, what):
    """view(dtype) of another element size regroups the last dim's elements: they must be adjacent."""
    if strides[-1] == 1:
        return
    raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")


def view_dtype(input, dtype):
    """The same bytes read as ``dtype``. With another element size the last dim (which must be
    dense) grows or shrinks by the ratio, as do the other strides and the offset. Not
    differentiable, and not a view for autograd (no ``_base``), but it shares the memory and
    the version counter, as torch's."""
    old, new = input.dtype.itemsize, dtype.itemsize
    shape, strides, offset = list(input._shape), list(input._stride), input._offset
    what = f"to view {_scalar_name(input.dtype)} as {_scalar_name(dtype)} (different element sizes)"
    if old != new and input.dim() == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if old > new:
        ratio = old // new
        _require_unit_last_stride(strides, what)
        shape[-1] *= ratio
        strides = [st * ratio for st in strides[:-1]] + [1]
        offset *= ratio
    elif old < new:
        ratio = new // old
        if shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {shape[-1]}")
        if offset % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but got {offset}")
        _require_unit_last_stride(strides, what)
        for d, st in enumerate(strides[:-1]):
            if st % ratio:
                raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what}, but got {st}")
        shape[-1] //= ratio
        strides = [st // ratio for st in strides[:-1]] + [1]
        offset //= ratio
    out = _view_of(input, tuple(shape), tuple(strides), offset, storage=_storage_as(input._storage, dtype))
    out._base = None
    return out


def _storage_as(storage, dtype):
    """The same memory as a flat array of ``dtype`` (the whole elements it holds)."""
    raw = storage.data.view(np.uint8)
    reinterpreted = object.__new__(type(storage))  # (the memory is counted once, by its owner)
    reinterpreted.data = raw[:len(raw) - len(raw) % dtype.itemsize].view(dtype.numpy)
    reinterpreted.device = storage.device
    return reinterpreted


def _reshape_alias(input, size, stride):
    """The view ``reshape`` takes of a non-contiguous tensor whose strides allow the shape."""
    return _view_of(input, tuple(size), tuple(stride), input._offset)


def _unsafe_view(input, size):
    """Reinterpret a fresh contiguous copy: not a view for the user, so no ``_base``."""
    shape = _infer_shape((size,), input.numel())
    out = _view_of(input, shape, contiguous_strides(shape), input._offset)
    out._base = None
    return out


def reshape(input, *shape):
    """A view when the strides allow one, else a copy (then no storage is shared)."""
    shape = _infer_shape(shape, input.numel())
    strides = view_strides(input._shape, input._stride, shape)
    if strides is not None:
        # torch names the node after the path taken: a plain view, or an alias of a
        # non-contiguous tensor that happens to allow the new shape
        return ops.view(input, shape) if input.is_contiguous() else ops._reshape_alias(input, shape, strides)
    return ops._unsafe_view(ops.clone(input, memory_format="contiguous"), shape)


def view_as(input, other):
    return ops.view(input, other._shape)


def reshape_as(input, other):
    return ops.reshape(input, other._shape)


def flatten(input, start_dim=0, end_dim=-1):
    if input.dim() == 0:
        return ops.reshape(input, 1)
    start = _wrap_dim(start_dim, input.dim())
    end = _wrap_dim(end_dim, input.dim())
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = input._shape[:start] + (math.prod(input._shape[start:end + 1]),) + input._shape[end + 1:]
    return ops.reshape(input, shape)


def ravel(input):
    return ops.reshape(ops.contiguous(input), -1)


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
    return ops.view(input, input._shape[:dim] + sizes + input._shape[dim + 1:])


def _swapped(seq, i, j):
    seq = list(seq)
    seq[i], seq[j] = seq[j], seq[i]
    return tuple(seq)


def t(input):
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.dim()}D")
    return _view_of(input, input._shape[::-1], input._stride[::-1], input._offset, input._np.T)


def transpose(input, dim0, dim1):
    n = input.dim()
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    return _view_of(input, _swapped(input._shape, d0, d1), _swapped(input._stride, d0, d1), input._offset,
                    np.swapaxes(input._np, d0, d1))


def permute(input, *dims):
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
    return _view_of(input, tuple(input._shape[d] for d in dims), tuple(input._stride[d] for d in dims),
                    input._offset, input._np.transpose(dims))


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
        return ops.alias(input)
    order = [None] * n
    for s_dim, d_dim in zip(src, dst):
        order[d_dim] = s_dim
    rest = iter(d for d in range(n) if d not in src)  # the other dims, in their order
    order = [d if d is not None else next(rest) for d in order]
    return ops.permute(input, order)


def alias(input):
    """The same tensor under a new name: a view with the same geometry."""
    return _view_of(input, input._shape, input._stride, input._offset, input._np)


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
    return ops.permute(input, tuple(range(input.dim() - 1, -1, -1)))


def _matrix_transpose(name, zero_dim_hint):
    """``x.mT`` (and ``mH``, the same for real numbers): swap the last two dims."""
    def transpose_last(input):
        if input.dim() == 0:
            _warn_once(name + "_0d", f"Tensor.{name} is deprecated on 0-D tensors. {zero_dim_hint}")
            return input
        if input.dim() == 1:
            raise RuntimeError(
                f"tensor.{name} is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return ops.transpose(input, -2, -1)
    return transpose_last


def _H(input):  # the conjugate transpose, which for real numbers is the transpose
    if input.dim() == 0:
        _warn_once("H_0d", "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
        return input
    if input.dim() != 2:
        hint = " For batches of matrices, consider using tensor.mH" if input.dim() > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {input.dim()}-D tensor.{hint}")
    return ops.transpose(input, 0, 1)


def unsqueeze(input, dim):
    dim = _wrap_dim(dim, input.dim() + 1)
    shape = input._shape[:dim] + (1,) + input._shape[dim:]
    inner = input._stride[dim] * input._shape[dim] if dim < input.dim() else 1
    stride = input._stride[:dim] + (inner,) + input._stride[dim:]
    return _view_of(input, shape, stride, input._offset)


def _squeezed(input, keep):
    return _view_of(input, tuple(input._shape[d] for d in keep), tuple(input._stride[d] for d in keep),
                    input._offset)


def squeeze(input):
    """Every dim of size 1 removed."""
    return _squeezed(input, [d for d in range(input.dim()) if input._shape[d] != 1])


def squeeze_dims(input, dim):
    """The dims ``dim`` (an int, or a tuple of them) removed where their size is 1."""
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    dims = {_wrap_dim(d, input.dim()) for d in dims}
    return _squeezed(input, [d for d in range(input.dim()) if d not in dims or input._shape[d] != 1])


def expand(input, *size):
    if len(size) < input.dim():
        raise RuntimeError(
            f"expand({input.type()}{{{list(input._shape)}}}, size={list(size)}): the number of sizes "
            f"provided ({len(size)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({input.dim()})"
        )
    shape, strides = expand_strides(input._shape, input._stride, tuple(builtins.int(s) for s in size))
    return _view_of(input, shape, strides, input._offset)


def expand_as(input, other):
    return ops.expand(input, other._shape)


def broadcast_to(input, size):
    return ops.expand(input, size)


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t._shape for t in tensors))
    # a tensor already of the shape comes back itself, not an expanded view (as torch's does)
    return tuple(t if t._shape == shape else ops.expand(t, shape) for t in tensors)


def _cpp_print(t) -> str:
    """A tensor as torch's C++ ``operator<<`` prints it in an error (a matrix, or its slices
    under a ``(i,.,.) =`` heading), then ``[ torch.FloatTensor{2,2} ]``."""
    a = np.asarray(t._np)
    whole = a.dtype.kind in "iub" or bool(np.all(np.mod(a, 1) == 0))
    finite = np.abs(a[np.isfinite(a)]) if a.dtype.kind == "f" else np.abs(a.astype(np.int64))
    largest = float(np.max(finite)) if finite.size else 0.0
    digits = math.floor(math.log10(largest)) + 1 if largest else 1  # before the point
    # the column width of torch's __printFormat (4 decimals: 7 below 1, digits + 6 above)
    width = digits + 1 if whole else (7 if digits == 0 else digits + 6)
    cells = [str(int(v)) if whole else f"{v:.4f}" for v in a.reshape(-1).tolist()]
    cells = iter(cells)

    def matrix(rows, cols):
        return "".join(" ".join(next(cells).rjust(width) for _ in range(cols)) + "\n" for _ in range(rows))
    shape = a.shape if a.ndim >= 2 else (1,) + a.shape
    body = ""
    for index in np.ndindex(*shape[:-2]):
        if index:
            body += "(" + ",".join(str(i + 1) for i in index) + ",.,.) = \n"
        body += matrix(*shape[-2:])
    return f"{body}[ torch.{t.type()[len('torch.'):]}{{{','.join(map(str, t._shape))}}} ]"


def meshgrid(tensors):
    """``aten::meshgrid`` without ``indexing``: ``'ij'``, and a warning (TORCH_WARN_ONCE in
    torch: once per process)."""
    _warn_once("meshgrid", "torch.meshgrid: in an upcoming release, it will be required to pass the "
                           "indexing argument.", stacklevel=5)  # (at torch.meshgrid's call, as torch's)
    return meshgrid_indexing(tensors, indexing="ij")


def meshgrid_indexing(tensors, *, indexing):
    """Coordinate grids: the i-th output is the i-th input viewed along dim i and expanded over
    the others (``'xy'`` swaps the first two dims, as NumPy's meshgrid does)."""
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for a, b in zip(tensors, tensors[1:]):
        if a.dtype is not b.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if a.device != b.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    tensors = list(tensors)
    swap = indexing == "xy" and len(tensors) >= 2
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {_cpp_print(t)}")
    shape = [t.numel() for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        view_shape = [1] * len(tensors)
        view_shape[i] = -1
        grids.append(ops.view(t, view_shape).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _meshgrid_api(*tensors, indexing=None):
    """``torch.meshgrid`` (torch/functional.py): tensors or one list of them."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    for i, t in enumerate(tensors):  # (the words of torch's parser for a TensorList)
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    if indexing is None:
        return ops.meshgrid(tensors)
    return ops.meshgrid(tensors, indexing=indexing)


_meshgrid_api.__name__ = _meshgrid_api.__qualname__ = "meshgrid"


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


def check_select(input, dim, index, indexing=False):
    """torch's checks of ``t.select(dim, i)``; ``t[..., i]`` (``indexing``) words them apart."""
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


def select(input, dim, index):
    check_select(input, dim, index)
    dim = _wrap_dim(dim, input.dim())
    size = input._shape[dim]
    index = index + size if index < 0 else index
    return _view_of(input, input._shape[:dim] + input._shape[dim + 1:],
                    input._stride[:dim] + input._stride[dim + 1:], input._offset + index * input._stride[dim])


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The elements (i, i + offset) of dims ``dim1`` and ``dim2``, as a last dim: a view whose
    stride steps along both dims at once."""
    d1, d2 = _wrap_dim(dim1, input.dim()), _wrap_dim(dim2, input.dim())
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape, stride, start = input._shape, input._stride, input._offset
    if offset >= 0:
        size = builtins.max(builtins.min(shape[d1], shape[d2] - offset), 0)
        start += offset * stride[d2] if size else 0
    else:
        size = builtins.max(builtins.min(shape[d1] + offset, shape[d2]), 0)
        start -= offset * stride[d1] if size else 0
    kept = [d for d in range(input.dim()) if d not in (d1, d2)]
    return _view_of(input, tuple(shape[d] for d in kept) + (size,),
                    tuple(stride[d] for d in kept) + (stride[d1] + stride[d2],), start)


_INT64_MAX = 9223372036854775807  # torch's "to the end" for a slice


def slice(input, dim=0, start=None, end=None, step=1):
    """``t[start:end:step]`` along ``dim``: a view (``t[1:]`` is ``t.slice(0, 1)``)."""
    dim = _wrap_dim(dim, input.dim())
    size = input._shape[dim]
    start, stop, step = builtins.slice(start, None if end == _INT64_MAX else end, step).indices(size)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    length = builtins.max(0, (stop - start + step - 1) // step)
    shape = input._shape[:dim] + (length,) + input._shape[dim + 1:]
    stride = input._stride[:dim] + (input._stride[dim] * step,) + input._stride[dim + 1:]
    offset = input._offset + start * input._stride[dim]  # even for an empty slice, as torch
    return _view_of(input, shape, stride, offset)


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
    return ops.slice(input, dim, start, start + length, 1)


def _pieces(input, dim, sections):
    start, out = 0, []
    for n in sections:
        out.append(slice(input, dim, start, start + n, 1))
        start += n
    return tuple(out)


def split_tensor(input, split_size, dim=0):
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller)."""
    dim = _wrap_dim(dim, input.dim())
    size = input._shape[dim]
    sections = [builtins.min(split_size, size - i) for i in range(0, size, split_size)] if size else [0]
    return _pieces(input, dim, sections)


def split_with_sizes(input, split_sizes, dim=0):
    dim = _wrap_dim(dim, input.dim())
    size = input._shape[dim]
    sections = list(split_sizes)
    if builtins.sum(sections) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
            f"size at dimension {dim}), but got split_sizes={sections}"
        )
    return _pieces(input, dim, sections)


def _tensor_split_dim(input, dim):
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    return _wrap_dim(dim, input.dim())


def tensor_split_sections(input, sections, dim=0):
    """``sections`` pieces as equal as can be: the first ``size % sections`` one longer."""
    d = _tensor_split_dim(input, dim)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    size = input._shape[d]
    pieces, start = [], 0
    for i in range(sections):
        length = size // sections + (1 if i < size % sections else 0)
        pieces.append(ops.slice(input, d, start, start + length))
        start += length
    return tuple(pieces)


def tensor_split_indices(input, indices, dim=0):
    """Pieces cut at ``indices`` (NumPy's array_split): [0, i0), [i0, i1), ..., [ik, end)."""
    d = _tensor_split_dim(input, dim)
    pieces, start = [], 0
    for end in indices:
        pieces.append(ops.slice(input, d, start, end))
        start = end
    pieces.append(ops.slice(input, d, start, input._shape[d]))
    return tuple(pieces)


def tensor_split_tensor(input, tensor_indices_or_sections, dim=0):
    """A 0-dim tensor is a number of sections, a 1-dim one the indices."""
    cuts = tensor_indices_or_sections
    if cuts.dtype is not dtypes.int64:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                           f"{_scalar_name(cuts.dtype)}")
    if cuts.dim() > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {cuts.dim()} dims")
    if cuts.dim() == 0:
        return tensor_split_sections(input, cuts.item(), dim)
    return tensor_split_indices(input, cuts.tolist(), dim)


def split(input, split_size_or_sections, dim=0):
    """``torch.split``: equal pieces for an int, pieces of the given sizes for a list."""
    if isinstance(split_size_or_sections, builtins.int):
        return ops._split_tensor(input, split_size_or_sections, dim)
    return ops.split_with_sizes(input, list(split_size_or_sections), dim)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = input._shape[_wrap_dim(dim, input.dim())]
    if size == 0:   # torch: `chunks` empty pieces (a split by 0 would give one)
        return ops.split_with_sizes(input, [0] * chunks, dim)
    return ops._split_tensor(input, -(-size // chunks), dim)


def unbind(input, dim=0):
    dim = _wrap_dim(dim, input.dim())
    return tuple(select(input, dim, i) for i in range(input._shape[dim]))


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
    return _view_of(input, size, stride, offset)


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
    return _view_of(input, tuple(shape), tuple(stride), input._offset)


# -- backward formulas (derivatives.py) ---------------------------------------------------------
def sum_to(grad, shape):
    """Undo broadcasting: ``grad`` summed down to ``shape`` (at::sum_to)."""
    sizes = tuple(shape)
    if grad._shape == sizes:
        return grad
    lead = grad.dim() - len(sizes)
    dims = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(sizes) if n == 1 and grad._shape[i + lead] != 1)
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.reshape(sizes) if grad._shape != sizes else grad


def unsqueeze_to(grad, *dims_and_sizes):
    """``grad`` reshaped back to the input's sizes, which squeeze shortened (the dims of size 1
    come back): ``unsqueeze_to(grad, sizes)`` or ``unsqueeze_to(grad, dim, sizes)``."""
    return grad.reshape(dims_and_sizes[-1])


def permute_backwards(grad, dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[_wrap_dim(d, len(dims))] = i
    return grad.permute(inverse)


def _embed(grad, shape, key, accumulate=False):
    """zeros(shape) with ``grad`` written (or added) at ``key`` (the views' backward)."""
    out = ops.zeros(shape, dtype=grad.dtype, device=grad._device)
    kernel("index_put_", grad._device)(out._np, key, grad._np, accumulate)
    return out


def select_backward(grad_output, input_sizes, dim, index):
    """The gradient of ``select``: zeros of the input's sizes with ``grad_output`` at ``index``."""
    dim = _wrap_dim(dim, len(input_sizes))
    return _embed(grad_output, input_sizes, (builtins.slice(None),) * dim + (index,))


def diagonal_backward(grad_output, input_sizes, offset, dim1, dim2):
    """The gradient of ``diagonal``: zeros of the input's sizes with ``grad_output`` on the diagonal."""
    out = ops.zeros(input_sizes, dtype=grad_output.dtype, device=grad_output._device)
    np.copyto(diagonal(out, offset, dim1, dim2)._np, grad_output._np)
    return out


def slice_backward(grad_output, input_sizes, dim, start, end, step):
    """The gradient of ``slice``: zeros of the input's sizes with ``grad_output`` in the slice."""
    dim = _wrap_dim(dim, len(input_sizes))
    end = None if end == _INT64_MAX else end
    return _embed(grad_output, input_sizes, (builtins.slice(None),) * dim + (builtins.slice(start, end, step),))


def split_backward(grads, split_sizes, dim, sizes):
    """The pieces' gradients joined back (zeros for a piece that got none)."""
    dim = _wrap_dim(dim, len(sizes))
    present = next(g for g in grads if g is not None)
    pieces = []
    for g, n in zip(grads, split_sizes):
        if g is None:
            shape = sizes[:dim] + (n,) + sizes[dim + 1:]
            g = ops.zeros(shape, dtype=present.dtype, device=present._device)
        pieces.append(g)
    return ops.cat(pieces, dim)


def split_sizes_of(split_size, dim, sizes):
    size = sizes[_wrap_dim(dim, len(sizes))]
    return [builtins.min(split_size, size - i) for i in range(0, size, split_size)] if size else [0]


def unbind_backward(grads, dim):
    present = next(g for g in grads if g is not None)
    return ops.stack([g if g is not None else ops.zeros_like(present) for g in grads], dim)


def unfold_backward(grad_in, input_sizes, dim, size, step):
    """Each input element gets the sum of the gradients of every window it appears in."""
    out = ops.zeros(input_sizes, dtype=grad_in.dtype, device=grad_in._device)
    windows = unfold(out, dim, size, step) if input_sizes else out.reshape(size)
    # windows overlap when step < size: add.at adds one element at a time, so none is lost
    kernel("index_put_", grad_in._device)(windows._np, (...,), grad_in._np, True)
    return out


def as_strided_backward(grad, geometry, size, stride, storage_offset):
    """Gradients meet in the storage: each output element adds its gradient into the memory
    cell it read, and each input element takes the sum in its cell (shared by the input
    elements that read the same cell, so it is split evenly between them)."""
    base_shape, base_stride, base_offset, storage_size = geometry
    offset = base_offset if storage_offset is None else storage_offset
    if grad._requires_grad:  # create_graph: the same steps as recorded tensor ops
        cells = ops.arange(storage_size, device=grad._device)
        index = ops.as_strided(cells, grad._shape, stride, offset).reshape(-1)
        buffer = ops.zeros(storage_size, dtype=grad.dtype, device=grad._device)
        buffer.index_put_((index,), grad.reshape(-1), accumulate=True)
        readers = _readers(geometry)
        if readers is not None:
            buffer = buffer / ops.tensor(readers, dtype=grad.dtype, device=grad._device)
        return ops.as_strided(buffer, base_shape, base_stride, base_offset)
    buffer = ops.zeros(storage_size, dtype=grad.dtype, device=grad._device)
    region = as_strided(buffer, grad._shape, stride, offset)
    kernel("index_put_", grad._device)(region._np, (...,), grad._np, True)
    base = as_strided(buffer, base_shape, base_stride, base_offset)
    readers = _readers(geometry)
    if readers is not None:
        np.divide(buffer._np, readers.astype(buffer._np.dtype), out=buffer._np, where=readers > 0)
    return ops.clone(base)


def _readers(geometry):
    """How many input elements read each storage cell (None if each is read once)."""
    base_shape, base_stride, base_offset, storage_size = geometry
    if _non_overlapping_and_dense(base_shape, base_stride):
        return None
    readers = np.zeros(storage_size)
    cells = np.lib.stride_tricks.as_strided(readers[base_offset:], base_shape,
                                            tuple(s * readers.itemsize for s in base_stride))
    np.add.at(cells, (...,), 1)
    return np.maximum(readers, 1)
