"""Selection: median, nanmedian, kthvalue, mode. Which index they return when values repeat
is the one torch's CPU kernels land on: median's is the element's place in a stable sort,
kthvalue's comes out of torch's own quick-select, mode sorts (value, index) pairs with
libstdc++'s ``std::sort`` and keeps the last index of the most frequent run. So those two
algorithms are written out here, step by step, on each row (a student can follow one on paper).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..tensor import _scalar_type_name as _scalar_name
from ..tensor import _wrap_dim
from ._support import _wrap
from .reductions import _return_type

return_types_median = _return_type("median")
return_types_nanmedian = _return_type("nanmedian")
return_types_kthvalue = _return_type("kthvalue")
return_types_mode = _return_type("mode")


# -- libstdc++'s introselect and introsort, on a list of indices --------------------------------
def _move_median_to_first(idx, result, a, b, c, less):
    if less(idx[a], idx[b]):
        if less(idx[b], idx[c]):
            pick = b
        elif less(idx[a], idx[c]):
            pick = c
        else:
            pick = a
    elif less(idx[a], idx[c]):
        pick = a
    elif less(idx[b], idx[c]):
        pick = c
    else:
        pick = b
    idx[result], idx[pick] = idx[pick], idx[result]


def _unguarded_partition_pivot(idx, first, last, less):
    mid = first + (last - first) // 2
    _move_median_to_first(idx, first, first + 1, mid, last - 1, less)
    pivot, lo, hi = idx[first], first + 1, last
    while True:
        while less(idx[lo], pivot):
            lo += 1
        hi -= 1
        while less(pivot, idx[hi]):
            hi -= 1
        if not lo < hi:
            return lo
        idx[lo], idx[hi] = idx[hi], idx[lo]
        lo += 1


def _insertion_sort(idx, first, last, less):
    for i in range(first + 1, last):
        value = idx[i]
        if less(value, idx[first]):
            idx[first + 1:i + 1] = idx[first:i]
            idx[first] = value
        else:
            j = i
            while less(value, idx[j - 1]):
                idx[j] = idx[j - 1]
                j -= 1
            idx[j] = value


def _heap_fallback(idx, first, last, less):
    # (reached only after 2*log2(n) bad pivots: ordered stably instead of by libstdc++'s heap)
    idx[first:last] = sorted(idx[first:last], key=_Key(less))


class _Key:
    def __init__(self, less):
        self.less = less

    def __call__(self, i):
        return _Ordered(i, self.less)


class _Ordered:
    __slots__ = ("i", "less")

    def __init__(self, i, less):
        self.i, self.less = i, less

    def __lt__(self, other):
        return self.less(self.i, other.i)


def nth_element(idx, nth, less):
    """``std::nth_element(idx.begin(), idx.begin() + nth, idx.end(), less)`` as libstdc++ runs it."""
    first, last = 0, len(idx)
    depth = 2 * (last.bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            _heap_fallback(idx, first, last, less)
            return
        depth -= 1
        cut = _unguarded_partition_pivot(idx, first, last, less)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(idx, first, last, less)


def std_sort(idx, less):
    """``std::sort(idx.begin(), idx.end(), less)`` as libstdc++ runs it (introsort, then one
    insertion sort over the nearly sorted whole)."""
    def loop(first, last, depth):
        while last - first > 16:
            if depth == 0:
                _heap_fallback(idx, first, last, less)
                return
            depth -= 1
            cut = _unguarded_partition_pivot(idx, first, last, less)
            loop(cut, last, depth)
            last = cut
    n = len(idx)
    if n > 1:
        loop(0, n, 2 * (n.bit_length() - 1))
        _insertion_sort(idx, 0, n, less)  # (libstdc++'s unguarded part gives the same order)


def _quick_select(values, indices, k):
    """torch's quick_select_template (kthvalue): median-of-three pivots, NaN above everything."""
    def gt(x, y):
        return (math.isnan(x) and not math.isnan(y)) or x > y

    def swap(i, j):
        values[i], values[j] = values[j], values[i]
        indices[i], indices[j] = indices[j], indices[i]
    lo, hi = 0, len(values) - 1
    while True:
        if hi <= lo:
            return
        if hi == lo + 1:
            if gt(values[lo], values[hi]):
                swap(lo, hi)
            return
        p = lo + (hi - lo) // 2
        swap(p, lo + 1)
        if gt(values[lo + 1], values[hi]):
            swap(lo + 1, hi)
        if gt(values[lo], values[hi]):
            swap(lo, hi)
        if gt(values[lo + 1], values[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, values[lo]
        while True:
            i += 1
            while gt(pivot, values[i]):
                i += 1
            j -= 1
            while gt(values[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


# -- per row: (value, index) ---------------------------------------------------------------------
def _median_of_row(row, ignore_nan):
    """The lower middle value and where it is. torch partitions the row with std::nth_element,
    ordering by value then index, NaN above numbers: so the place in a stable sort (NaN last),
    except for a row of NaN only, where no two compare and nth_element's moves decide;
    median gives the first NaN if there is one."""
    nans = np.flatnonzero(row != row)
    if len(nans) and not ignore_nan:
        return row[nans[0]], int(nans[0])
    if len(nans) == len(row):
        idx = list(range(len(row)))
        nth_element(idx, 0, lambda i, j: False)
        return row[idx[0]], idx[0]
    order = np.argsort(row, kind="stable")
    nth = (len(row) - len(nans) - 1) // 2
    return row[order[nth]], int(order[nth])


def _kthvalue_of_row(row, k):
    values, indices = row.tolist(), list(range(len(row)))
    _quick_select(values, indices, k - 1)
    return row[indices[k - 1]], indices[k - 1]


def _mode_of_row(row):
    values = row.tolist()
    idx = list(range(len(values)))
    std_sort(idx, lambda i, j: values[i] < values[j])
    mode, where, run, best = 0, 0, 0, 0
    for position, i in enumerate(idx):
        run += 1
        if position == len(idx) - 1 or values[i] != values[idx[position + 1]]:
            if run > best:
                mode, where, best = i, i, run
            run = 0
    return row[mode], where


def _per_row(input, dim, keepdim, op, row_fn, result_type):
    """Apply ``row_fn`` along ``dim``: values and int64 indices, with the reduced dim kept or not."""
    d = _wrap_dim(dim, input.dim())
    a = np.moveaxis(input._np, d, -1) if input.dim() else input._np.reshape(1)
    if input.dim() and input._shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    values = np.empty(a.shape[:-1], dtype=a.dtype)
    indices = np.zeros(a.shape[:-1], dtype=np.int64)
    for position in np.ndindex(*a.shape[:-1]):
        values[position], indices[position] = row_fn(a[position])
    if input.dim() == 0:
        values, indices = values.reshape(()), indices.reshape(())
    elif keepdim:
        values, indices = np.expand_dims(values, d), np.expand_dims(indices, d)
    return result_type(_wrap(values, input._device), _wrap(indices, input._device))


def _no_bool(input, kernel_name):
    if input.dtype is dtypes.bool:
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{_scalar_name(input.dtype)}'")


def _median_all(input, ignore_nan):
    _no_bool(input, "median_cpu")  # (torch names median for both)
    if input.numel() == 0:
        return _wrap(np.array(np.nan, dtype=input.dtype.numpy), input._device)
    value, _ = _median_of_row(input._np.reshape(-1), ignore_nan)
    return _wrap(np.asarray(value, dtype=input.dtype.numpy), input._device)


def median(input):
    """The lower of the two middle values of every element (NaN if there is one)."""
    return _median_all(input, ignore_nan=False)


def median_dim(input, dim, keepdim=False):
    _no_bool(input, "median_out")
    return _per_row(input, dim, keepdim, "median", lambda row: _median_of_row(row, False), return_types_median)


def nanmedian(input):
    """The median of the values that are not NaN."""
    return _median_all(input, ignore_nan=True)


def nanmedian_dim(input, dim, keepdim=False):
    _no_bool(input, "median_out")
    return _per_row(input, dim, keepdim, "nanmedian", lambda row: _median_of_row(row, True), return_types_nanmedian)


def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest value along ``dim`` (k counts from 1)."""
    _no_bool(input, "kthvalue_cpu")
    d = _wrap_dim(dim, input.dim())
    size = input._shape[d] if input.dim() else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _per_row(input, dim, keepdim, "kthvalue", lambda row: _kthvalue_of_row(row, k), return_types_kthvalue)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones)."""
    return _per_row(input, dim, keepdim, "mode", _mode_of_row, return_types_mode)
