"""Adaptive pooling: pool to a given *output* size, whatever the input size (``AdaptiveAvgPool2d(1)``
is global average pooling). Output cell i covers input rows floor(i·in/out) to ceil((i+1)·in/out).

Built here from existing operations (a pooling with kernel = stride = in/out when the sizes
divide, else one reduction per output cell), so values match torch's while the graph has other
nodes than torch's single AdaptiveAvgPool2DBackward0.
"""
from __future__ import annotations

import math

from .. import functions as F
from .module import Module


def _sizes(output_size, input_sizes):
    sizes = (output_size,) * len(input_sizes) if isinstance(output_size, int) else tuple(output_size)
    return tuple(n if s is None else s for s, n in zip(sizes, input_sizes))


def _windows(in_size, out_size):
    return [(math.floor(i * in_size / out_size), math.ceil((i + 1) * in_size / out_size)) for i in range(out_size)]


def _adaptive(input, output_size, ndim, name, reduce, pool):
    if input.dim() not in (ndim + 1, ndim + 2):
        raise RuntimeError(f"{name}(): Expected {ndim + 1}D or {ndim + 2}D tensor, but got {list(input.shape)}")
    spatial = tuple(input.shape[-ndim:])
    out = _sizes(output_size, spatial)
    if any(o <= 0 for o in out):
        raise RuntimeError(f"{name}(): output_size must be positive")
    if all(n % o == 0 for n, o in zip(spatial, out)) and pool is not None:
        kernel = tuple(n // o for n, o in zip(spatial, out))
        return pool(input, kernel)
    if ndim == 1:
        return F.stack([reduce(input[..., a:b], (-1,)) for a, b in _windows(spatial[0], out[0])], -1)
    rows = [F.stack([reduce(input[..., a:b, c:d], (-2, -1)) for c, d in _windows(spatial[1], out[1])], -1)
            for a, b in _windows(spatial[0], out[0])]
    return F.stack(rows, -2)


def _avg_pool1d(input, kernel):
    return F.avg_pool2d(input.unsqueeze(-2), (1, kernel[0])).squeeze(-2)


def _max_pool1d(input, kernel):
    return F.max_pool2d(input.unsqueeze(-2), (1, kernel[0])).squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    return _adaptive(input, output_size, 1, "adaptive_avg_pool1d", lambda x, dims: x.mean(dims), _avg_pool1d)


def adaptive_avg_pool2d(input, output_size):
    return _adaptive(input, output_size, 2, "adaptive_avg_pool2d", lambda x, dims: x.mean(dims),
                     lambda x, k: F.avg_pool2d(x, k))


def _no_indices(return_indices):
    if return_indices:
        raise NotImplementedError("reftorch's adaptive max pooling does not return indices yet")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    _no_indices(return_indices)
    return _adaptive(input, output_size, 1, "adaptive_max_pool1d", lambda x, dims: x.amax(dims), _max_pool1d)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    _no_indices(return_indices)
    return _adaptive(input, output_size, 2, "adaptive_max_pool2d", lambda x, dims: x.amax(dims),
                     lambda x, k: F.max_pool2d(x, k))


class _AdaptivePool(Module):
    _function = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        if return_indices or "Max" in type(self).__name__:
            self.return_indices = return_indices

    def forward(self, input):
        if getattr(self, "return_indices", False):
            return type(self)._function(input, self.output_size, True)
        return type(self)._function(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    _function = staticmethod(adaptive_avg_pool1d)

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    _function = staticmethod(adaptive_avg_pool2d)

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveMaxPool1d(_AdaptivePool):
    _function = staticmethod(adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptivePool):
    _function = staticmethod(adaptive_max_pool2d)
