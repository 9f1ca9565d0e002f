"""Copies: clone, contiguous, detach, flip, and dtype and device conversion (``to``).

A copy owns new memory; ``clone`` and ``to`` keep the source's layout where torch does
(``preserve_format``). ``detach`` is the exception: the same memory without the history.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dispatch import canonical, kernel
from ..storage import contiguous_strides, elementwise_strides, preserve_format_strides
from ..tensor import Tensor, _wrap_dim
from ._support import _non_overlapping_and_dense, _view_of, _with_strides, _wrap
from .codegen import ops


def _copy_preserving_format(input, array, memory_format, device):
    """Wrap ``array`` (a row-major copy of ``input``'s values) at the strides torch gives a
    copy of ``input`` in this memory format (storage.preserve_format_strides)."""
    row_major = contiguous_strides(input._shape)
    if memory_format == "contiguous" or input._stride == row_major:
        return _wrap(array, device)
    # (a dim of size 1 keeps its stride too: torch copies the strides of a dense tensor)
    strides = preserve_format_strides(input._shape, input._stride)
    if strides == row_major:
        return _wrap(array, device)
    return _with_strides(array, strides, device)


def clone(input, *, memory_format=None):
    return _copy_preserving_format(input, kernel("copy", input._device)(input._np), memory_format, input._device)


def flip(input, dims):
    """A copy with the order of elements reversed along ``dims`` (torch has no negative strides,
    so unlike NumPy's flip this is never a view)."""
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}")
    wrapped = []
    for d in dims:  # torch checks one dim at a time, so the first bad one is reported
        d = _wrap_dim(d, input.dim())
        if d in wrapped:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        wrapped.append(d)
    axes = tuple(d for d in wrapped if d < input.dim())  # a 0-dim tensor has nothing to reverse
    # the result is laid out as torch's empty_like(input) lays it out (preserve_format)
    strides = input._stride if _non_overlapping_and_dense(input._shape, input._stride) else \
        elementwise_strides(input._shape, [input._stride])
    return _with_strides(np.flip(input._np, axes) if axes else input._np, strides, input._device)


def contiguous(input, memory_format=None):
    if input.is_contiguous():
        return input
    return ops.clone(input, memory_format="contiguous")


def detach(input):
    """Same memory and version counter, no graph: the numbers without their history (and
    without a tangent: forward AD sees a constant)."""
    out = _view_of(input, input._shape, input._stride, input._offset, input._np)
    out._base = None
    return out


def detach_(input):
    if input._base is not None:
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using "
            "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
            "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
            "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
            "function in torch/optim/optimizer.py as the solution.")
    input.grad_fn = None
    input._requires_grad = False
    return input


def _parse_to(args, kwargs):
    target_dtype = kwargs.pop("dtype", None)
    target_device = kwargs.pop("device", None)
    for a in args:
        if isinstance(a, dtypes.dtype):
            target_dtype = a
        elif isinstance(a, Tensor):
            target_dtype, target_device = a.dtype, a._device
        elif a is not None:
            target_device = a
    return target_dtype, target_device, kwargs.pop("copy", False)


def to(input, *args, **kwargs):
    """Convert dtype and/or device; returns ``input`` itself when nothing changes."""
    target_dtype, target_device, copy = _parse_to(args, kwargs)
    new_dtype = target_dtype or input.dtype
    new_device = input._device if target_device is None else canonical(target_device)
    if new_device.type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    if new_dtype is input.dtype and new_device == input._device and not copy:
        return input
    return ops._to_copy(input, dtype=new_dtype, device=new_device, memory_format=kwargs.pop("memory_format", None))


def _to_copy(input, *, dtype=None, device=None, non_blocking=False, memory_format=None):
    """A copy in ``dtype`` on ``device`` (what ``to`` makes when something changes)."""
    new_dtype = dtype or input.dtype
    new_device = input._device if device is None else canonical(device)
    if input._device.type == "meta" and new_device.type != "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if new_device == input._device:
        array = kernel("copy", new_device)(input._np, new_dtype.numpy)
    else:
        # leave the source device as host memory, then enter the target's memory
        host = np.array(input._np, dtype=new_dtype.numpy, order="C", copy=True)
        array = kernel("copy", new_device)(host) if new_device.type != "cpu" else host
    return _copy_preserving_format(input, array, memory_format, new_device)


def type_as(input, other):
    """``x.type_as(y)``: x in y's dtype (x itself when it already has it)."""
    return ops.to(input, other.dtype)
