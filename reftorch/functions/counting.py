"""Counting: bincount, histc, unique, unique_consecutive.

What is counted is a tensor's values, so none of these is differentiable in the usual sense:
histc's result needs no gradient, and bincount's weights, unique's values record a node
that refuses backward (derivatives.py), as torch's do.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..tensor import _scalar_type_name as _scalar_name
from ..tensor import _wrap_dim
from ._support import _wrap
from .codegen import ops


def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ..., max occurs (or the sum of its ``weights``)."""
    if not dtypes.is_integral(input.dtype):
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.dim() == 1 and input.numel() == 0:
        return _wrap(np.zeros(minlength, dtype=np.int64), input._device)
    if input.dim() != 1 or input._np.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights._shape[0] != input._shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    bins = max(int(input._np.max()) + 1, minlength)
    if weights is None:
        return _wrap(np.bincount(input._np, minlength=bins).astype(np.int64), input._device)
    # float32 weights add up in float32, any others in float64, one after another
    kind = np.float32 if weights.dtype is dtypes.float32 else np.float64
    out = np.zeros(bins, dtype=kind)
    np.add.at(out, input._np, weights._np.astype(kind))
    return _wrap(out, input._device)


def _cpp_double(x) -> str:
    """A double as C++'s ``<<`` prints it (6 significant digits; glibc's ``-nan``)."""
    return "-nan" if math.isnan(x) else f"{x:g}"


def histc(input, bins=100, min=0, max=0):
    """Counts in ``bins`` equal bins between ``min`` and ``max`` (both 0: the data's range);
    values outside are left out. As torch's kernel, a value's bin is
    ``int((x - min) * bins / (max - min))`` computed in the input's dtype, the last bin closed."""
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low == high and input.numel() > 0:
        low, high = float(input._np.min()), float(input._np.max())
    if low == high:
        low, high = low - 1, high + 1
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{_cpp_double(low)}, {_cpp_double(high)}] is not finite")
    if not low < high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    kind = input.dtype.numpy.type
    a = input._np.reshape(-1)
    left, right = kind(low), kind(high)
    inside = a[(a >= left) & (a <= right)]
    where = ((inside - left) * kind(bins) / (right - left)).astype(np.int64)
    where[where == bins] = bins - 1  # the last bin includes its right edge
    return _wrap(np.bincount(where, minlength=bins).astype(input.dtype.numpy), input._device)


def _unique_values(a):
    """Sorted distinct values (each NaN distinct, at the end), inverse and counts."""
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, equal_nan=False)
    return values, inverse, counts


def _unique2(input, sorted=True, return_inverse=False, return_counts=False):
    """``torch._unique2``: the distinct values, sorted (on the CPU also when ``sorted=False``),
    where each element went (input's shape) and how often each occurs."""
    values, inverse, counts = _unique_values(input._np.reshape(-1))
    dev = input._device
    return (_wrap(values.astype(input.dtype.numpy), dev),
            _wrap(inverse.reshape(input._shape).astype(np.int64) if return_inverse else np.zeros(0, np.int64), dev),
            _wrap(counts.astype(np.int64) if return_counts else np.zeros(0, np.int64), dev))


def _slices_along(input, dim):
    """The input cut along ``dim`` into slices, each flattened to a row."""
    d = _wrap_dim(dim, input.dim())
    return d, np.moveaxis(input._np, d, 0).reshape(input._shape[d], -1)


def unique_dim(input, dim, sorted=True, return_inverse=False, return_counts=False):
    """The distinct slices along ``dim``, sorted as rows (lexicographically)."""
    d, rows = _slices_along(input, dim)
    found, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    shape = (len(found),) + tuple(np.delete(np.array(input._shape, dtype=np.int64), d))
    values = np.moveaxis(found.reshape(shape), 0, d)  # (a view of the rows: torch's layout)
    dev = input._device  # (along a dim, torch returns the inverse and counts whether asked or not)
    return (_wrap(values, dev), _wrap(inverse.reshape(-1).astype(np.int64), dev),
            _wrap(counts.astype(np.int64), dev))


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Each run of equal values (or slices along ``dim``) once; where each element went, and the
    runs' lengths."""
    if dim is None:
        d, rows = None, input._np.reshape(-1, 1)
    else:
        d, rows = _slices_along(input, dim)
    starts = np.ones(len(rows), dtype=bool)
    if len(rows) > 1:
        starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), len(rows)))
    kept = rows[starts]
    if d is None:
        values = kept.reshape(-1)
        inverse = inverse.reshape(input._shape)
    else:
        shape = (len(kept),) + tuple(np.delete(np.array(input._shape, dtype=np.int64), d))
        values = np.moveaxis(kept.reshape(shape), 0, d)  # (a view of the rows: torch's layout)
    dev = input._device
    every = d is not None  # (along a dim, torch returns the inverse and counts whether asked or not)
    return (_wrap(values.astype(input.dtype.numpy), dev),
            _wrap(inverse.astype(np.int64) if return_inverse or every else np.zeros(0, np.int64), dev),
            _wrap(counts.astype(np.int64) if return_counts or every else np.zeros(0, np.int64), dev))


# -- torch.unique and torch.unique_consecutive: Python functions in torch (torch/functional.py) --
def _pick(results, return_inverse, return_counts):
    output, inverse, counts = results
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


def unique_api(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """``torch.unique``: the distinct values (or slices along ``dim``), with the inverse and
    counts when asked."""
    if dim is not None:
        results = ops.unique_dim(input, dim, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts)
    else:
        results = ops._unique2(input, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts)
    return _pick(results, return_inverse, return_counts)


def unique_consecutive_api(input, return_inverse=False, return_counts=False, dim=None):
    results = ops.unique_consecutive(input, return_inverse=return_inverse, return_counts=return_counts, dim=dim)
    return _pick(results, return_inverse, return_counts)


unique_api.__name__ = unique_api.__qualname__ = "unique"
unique_consecutive_api.__name__ = unique_consecutive_api.__qualname__ = "unique_consecutive"
