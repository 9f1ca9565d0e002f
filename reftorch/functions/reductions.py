"""Reductions: sum, mean, prod, max/min, amax/amin, argmax, topk, sort, var, std, norm, ...

A reduction's backward (the helpers at the end, for derivatives.py) spreads the output's
gradient back over the reduced dims: ``_restore_dims`` puts them back as size 1 so that the
gradient broadcasts over the input.
"""
from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple

import numpy as np

from .. import _modes, dtypes
from .._cpu_sum import to_dtype
from ..dispatch import kernel
from ..storage import broadcast_shapes
from ..tensor import Tensor, _wrap_dim
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _with_strides, _wrap, check_not_double
from .codegen import ops

_grad_state = _modes.grad_mode


def _reduce_dims(input, dim):
    """The reduced dims, wrapped and sorted (None: every dim). ``input`` may be a tensor or its
    number of dims."""
    if dim is None:
        return None
    ndim = input if isinstance(input, builtins.int) else input.dim()
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return tuple(sorted(_wrap_dim(d, ndim) for d in dims))


def _restore_dims(grad, shape, dims, keepdim):
    """Put back the reduced dims as size 1, so that grad broadcasts over the input."""
    if keepdim or dims is None or grad.dim() == len(shape):
        return grad
    for d in dims:
        grad = grad.unsqueeze(d)
    return grad


def _out_dtype(input, dtype):
    return dtype or (dtypes.int64 if not input.dtype.is_floating_point else input.dtype)


def sum(input, *, dtype=None):
    """The sum of every element (integers and bools sum in int64)."""
    return _wrap(kernel("sum", input._device)(input._np, None, False, _out_dtype(input, dtype).numpy), input._device)


def sum_dim(input, dim, keepdim=False, *, dtype=None):
    """The sums over ``dim`` (an int, a tuple, or None for every dim)."""
    dims = _reduce_dims(input, dim) or None  # dim=[] sums every dim, as None does
    return _wrap(kernel("sum", input._device)(input._np, dims, keepdim, _out_dtype(input, dtype).numpy), input._device)


def _check_mean_dtype(input, dtype):
    if not (dtype or input.dtype).is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_scalar_name(input.dtype)}"
        )


def mean(input, *, dtype=None):
    _check_mean_dtype(input, dtype)
    a = input._np if dtype is None else to_dtype(input._np, dtype.numpy)
    return _wrap(kernel("mean", input._device)(a, None, False), input._device)


def mean_dim(input, dim, keepdim=False, *, dtype=None):
    _check_mean_dtype(input, dtype)
    a = input._np if dtype is None else to_dtype(input._np, dtype.numpy)
    dims = _reduce_dims(input, dim) or None  # dim=[] averages every dim, as None does
    return _wrap(kernel("mean", input._device)(a, dims, keepdim), input._device)


def prod(input, *, dtype=None):
    return _wrap(kernel("prod", input._device)(input._np, None, False, _out_dtype(input, dtype).numpy), input._device)


def prod_dim(input, dim, keepdim=False, *, dtype=None):
    d = _wrap_dim(dim, input.dim())
    return _wrap(kernel("prod", input._device)(input._np, d, keepdim, _out_dtype(input, dtype).numpy), input._device)


def _return_type(name):
    """A (values, indices) named tuple that prints like torch.return_types.<name>."""
    base = namedtuple(name, ["values", "indices"])

    def __repr__(self):
        return f"torch.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"
    return type(name, (base,), {"__repr__": __repr__, "__slots__": ()})


return_types_max = _return_type("max")
return_types_min = _return_type("min")
return_types_topk = _return_type("topk")
return_types_sort = _return_type("sort")


def _extreme_all(input, which):
    if input.numel() == 0:
        raise RuntimeError(
            f"{which}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    return _wrap(kernel("amax" if which == "max" else "amin", input._device)(input._np, None, False), input._device)


def _extreme_dim(input, dim, keepdim, which):
    d = _wrap_dim(dim, input.dim())
    arg = "argmax" if which == "max" else "argmin"
    indices = _wrap(kernel(arg, input._device)(input._np, d, True), input._device)
    values = _wrap(kernel("take_along_dim", input._device)(input._np, indices._np, d), input._device)
    if not keepdim:
        values = _wrap(np.squeeze(values._np, d).copy(), input._device)
        indices = _wrap(np.squeeze(indices._np, d).copy(), input._device)
    cls = return_types_max if which == "max" else return_types_min
    return cls(values, indices)


def max(input):
    """The largest element."""
    return _extreme_all(input, "max")


def max_dim(input, dim, keepdim=False):
    """The largest values along ``dim`` and where they are (the first of equal ones)."""
    return _extreme_dim(input, dim, keepdim, "max")


def min(input):
    return _extreme_all(input, "min")


def min_dim(input, dim, keepdim=False):
    return _extreme_dim(input, dim, keepdim, "min")


def max_other(input, other):
    """``torch.max(a, b)`` is ``maximum``."""
    return ops.maximum(input, other)


def min_other(input, other):
    return ops.minimum(input, other)


def amax(input, dim=(), keepdim=False):
    """The extreme over ``dim`` (every element by default); ties share the gradient."""
    dims = _reduce_dims(input, dim) if dim != () else None
    return _wrap(kernel("amax", input._device)(input._np, dims, keepdim), input._device)


def amin(input, dim=(), keepdim=False):
    dims = _reduce_dims(input, dim) if dim != () else None
    return _wrap(kernel("amin", input._device)(input._np, dims, keepdim), input._device)


def _no_bool(input, name):
    if input.dtype is dtypes.bool:
        raise RuntimeError(f"{name}(): does not support bool input")


def argmax(input, dim=None, keepdim=False):
    _no_bool(input, "argmax")
    if dim is None:
        return _wrap(kernel("argmax", input._device)(input._np.reshape(-1), 0, False), input._device)
    return _wrap(kernel("argmax", input._device)(input._np, _wrap_dim(dim, input.dim()), keepdim), input._device)


def argmin(input, dim=None, keepdim=False):
    _no_bool(input, "argmin")
    if dim is None:
        return _wrap(kernel("argmin", input._device)(input._np.reshape(-1), 0, False), input._device)
    return _wrap(kernel("argmin", input._device)(input._np, _wrap_dim(dim, input.dim()), keepdim), input._device)


def topk(input, k, dim=-1, largest=True, sorted=True):
    if input.dtype is dtypes.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = _wrap_dim(dim, input.dim())
    size = input._shape[d] if input.dim() else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, indices = kernel("topk", input._device)(input._np, k, d, largest)
    return return_types_topk(_wrap(values, input._device), _wrap(indices, input._device))


def sort(input, dim=-1, descending=False):
    d = _wrap_dim(dim, input.dim())
    values, indices = kernel("sort", input._device)(input._np, d, descending)
    return return_types_sort(_wrap(values, input._device), _wrap(indices, input._device))


def sort_stable(input, *, stable, dim=-1, descending=False):
    """``sort(stable=True)``: equal values keep their order (reftorch's sort always does)."""
    return sort(input, dim, descending)


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim`` (sort's second result)."""
    return ops.sort(input, dim, descending).indices


def all(input, dim=None, keepdim=False):
    return _wrap(np.asarray(np.all(input._np, axis=_reduce_dims(input, dim), keepdims=keepdim)), input._device)


def any(input, dim=None, keepdim=False):
    return _wrap(np.asarray(np.any(input._np, axis=_reduce_dims(input, dim), keepdims=keepdim)), input._device)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(ops.isclose(input, other, rtol, atol, equal_nan).all())


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input.dtype is not other.dtype:   # no promotion here: an int64 is never "close" to a float
        raise RuntimeError(f"{dtypes._scalar_type_name(input.dtype)} did not match {dtypes._scalar_type_name(other.dtype)}")
    broadcast_shapes(input._shape, other._shape)  # (torch's message when they do not broadcast)
    return _wrap(np.isclose(input._np, other._np, rtol=rtol, atol=atol, equal_nan=equal_nan), input._device)


def equal(input, other) -> bool:
    return input._shape == other._shape and builtins.bool(np.array_equal(input._np, other._np))


def nonzero(input, *, as_tuple=False):
    """The indices of the nonzero elements, one row each, laid out column after column as
    torch's kernel writes them (strides (1, N)); ``as_tuple``: its columns, as views."""
    if as_tuple:
        return ops.unbind(ops.nonzero(input if input.dim() else ops.unsqueeze(input, 0)), 1)
    if input.dim() == 0:  # one row of no indices, or none
        found = np.zeros((builtins.int(builtins.bool(input._np)), 0), dtype=np.int64)
    else:
        found = np.stack(np.nonzero(input._np), axis=1).astype(np.int64)
    return _with_strides(found, (1, found.shape[0]), input._device)


def count_nonzero(input, dim=None):
    return _wrap(np.asarray(np.count_nonzero(input._np, axis=_reduce_dims(input, dim)), dtype=np.int64), input._device)


def _spread(input, dim, correction, keepdim, which):
    """var and std: one node each, as in torch (not a graph of mean, sub, mul)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _reduce_dims(input, dim)
    n = input.numel() if dims is None else math.prod(input._shape[d] for d in dims)
    if builtins.max(n - correction, 0) == 0:
        warnings.warn(
            f"{which}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=5)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's own note on the same thing
        values = np.var(input._np, axis=dims, ddof=correction, keepdims=keepdim)
        if which == "std":
            values = np.sqrt(values)
    return _wrap(np.asarray(values, dtype=input.dtype.numpy), input._device)


def _correction(correction, unbiased):
    if unbiased is not None:
        return builtins.int(unbiased)
    return 1 if correction is None else correction


def var(input, dim=None, *, correction=None, keepdim=False, unbiased=None):
    return _spread(input, dim, _correction(correction, unbiased), keepdim, "var")


def std(input, dim=None, *, correction=None, keepdim=False, unbiased=None):
    return _spread(input, dim, _correction(correction, unbiased), keepdim, "std")


def linalg_vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector p-norm ``(sum |x|^p)^(1/p)`` over ``dim`` (all elements by default); ord = inf
    is the largest ``|x|``, ord = 0 the count of nonzeros."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_scalar_name(input.dtype)}")
    dims = _reduce_dims(input, dim)
    a = input._np
    p = ord
    if p == 1:
        values = np.sum(np.abs(a), axis=dims, keepdims=keepdim)
    elif p == 2:
        values = np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
    elif p == math.inf:
        values = np.max(np.abs(a), axis=dims, keepdims=keepdim, initial=0)
    elif p == 0:
        values = np.sum(a != 0, axis=dims, keepdims=keepdim)
    else:
        values = np.sum(np.abs(a) ** p, axis=dims, keepdims=keepdim) ** (1 / p)
    return _wrap(np.asarray(values, dtype=input.dtype.numpy), input._device)


def norm(input, p=2, dim=None, keepdim=False):
    """``torch.norm``, as torch's Python routes it: a number p (None: 2) or 'fro' over at most
    two dims is linalg.vector_norm, 'nuc' (or 'fro' over more) linalg.matrix_norm."""
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, builtins.int) or len(dim) <= 2):
            return ops.linalg_vector_norm(input, 2, dim, keepdim)
        return ops.linalg_matrix_norm(input, p, tuple(range(input.dim())) if dim is None else dim, keepdim)
    return ops.linalg_vector_norm(input, 2 if p is None else p, dim, keepdim)


def cumsum(input, dim, *, dtype=None):
    """Running totals along ``dim``: out[i] = input[0] + ... + input[i]."""
    d = _wrap_dim(dim, input.dim())
    out_dtype = _out_dtype(input, dtype)
    compute = np.float32 if out_dtype in dtypes.REDUCED_FLOATS else out_dtype.numpy
    values = np.cumsum(input._np, axis=d if input.dim() else None, dtype=compute).reshape(input._shape)
    return _wrap(values.astype(out_dtype.numpy, copy=False), input._device)


def cumprod(input, dim, *, dtype=None):
    """Running products along ``dim``."""
    d = _wrap_dim(dim, input.dim())
    out_dtype = _out_dtype(input, dtype)
    values = np.cumprod(input._np, axis=d if input.dim() else None, dtype=out_dtype.numpy).reshape(input._shape)
    return _wrap(values, input._device)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) over ``dim``, without overflow: the largest value is taken out first."""
    dims = _reduce_dims(input, dim)
    a = input._np if input.dtype.is_floating_point else input._np.astype(dtypes.get_default_dtype().numpy)
    compute = np.float32 if input.dtype in dtypes.REDUCED_FLOATS else a.dtype
    a = a.astype(compute, copy=False)
    top = np.max(a, axis=dims, keepdims=True, initial=-np.inf) if a.size else np.zeros(
        [1 if (dims is None or d in dims) else n for d, n in enumerate(a.shape)], compute)
    top = np.where(np.isinf(top), 0, top)  # all -inf (or an inf): no shift
    values = np.log(np.sum(np.exp(a - top), axis=dims, keepdims=True)) + top
    if not keepdim:
        values = np.squeeze(values, axis=dims) if dims is not None else values.reshape(())
    return _wrap(np.asarray(values).astype(input.dtype.numpy if input.dtype.is_floating_point else a.dtype),
                 input._device)


# -- backward formulas (derivatives.py) ---------------------------------------------------------
def sum_backward(grad, sizes, dim, keepdim):
    grad = _restore_dims(grad, sizes, _reduce_dims(len(sizes), dim), keepdim)
    return grad.expand(sizes)


def mean_backward(grad, sizes, dim, numel, keepdim):
    out = sum_backward(grad, sizes, dim, keepdim)
    count = numel // builtins.max(grad.numel(), 1) if numel else 1
    return out / count


def _products_of_others(a, axis):
    """For each element, the product of all the others along ``axis`` (safe with zeros)."""
    ones_shape = list(a.shape)
    ones_shape[axis] = 1
    one = np.ones(ones_shape, dtype=a.dtype)
    left = np.cumprod(np.concatenate([one, np.take(a, range(a.shape[axis] - 1), axis=axis)], axis=axis), axis=axis)
    rev = np.flip(a, axis=axis)
    right = np.flip(np.cumprod(np.concatenate([one, np.take(rev, range(a.shape[axis] - 1), axis=axis)], axis=axis), axis=axis), axis=axis)
    return left * right


def _others_product_as_ops(x, dim):
    """The product of the elements before each one times that of the elements after it."""
    n = x._shape[dim]
    ones = ops.ones_like(x.narrow(dim, 0, 1))
    if n == 1:
        return ones
    left = ops.cat([ones, x.narrow(dim, 0, n - 1).cumprod(dim)], dim)
    right = ops.cat([ones, x.flip((dim,)).narrow(dim, 0, n - 1).cumprod(dim)], dim).flip((dim,))
    return left * right


def prod_backward(grad, self, dim=None, keepdim=False):
    """Each element's gradient is the product of all the others (computed without dividing,
    so a zero is fine); under create_graph the same from cumprod, as ops."""
    check_not_double(grad, "ProdBackward")
    if dim is None:
        if _grad_state.grad_enabled:
            return _others_product_as_ops(self.reshape(-1), 0).reshape(self._shape) * grad
        others = _products_of_others(self._np.reshape(-1), 0).reshape(self._shape)
        return _wrap(others, self._device) * grad
    d = _wrap_dim(dim, self.dim())
    grad = _restore_dims(grad, self._shape, (d,), keepdim)
    if _grad_state.grad_enabled:
        return _others_product_as_ops(self, d) * grad
    return _wrap(_products_of_others(self._np, d), self._device) * grad


def prod_jvp(self_t, self, dim=None, keepdim=False):
    # d prod(x) = sum(dx * prod of the others), the others' product taken without dividing by x
    if dim is None:
        others = _wrap(_products_of_others(self._np.reshape(-1), 0).reshape(self._shape), self._device)
        return (self_t * others).sum()
    others = _wrap(_products_of_others(self._np, _wrap_dim(dim, self.dim())), self._device)
    return (self_t * others).sum(dim, keepdim=keepdim)


def evenly_distribute_backward(grad, self, result):
    """max/min of every element: ties share the gradient evenly."""
    mask = (self == result).to(grad.dtype)
    return mask * (grad / mask.sum())


def evenly_read_jvp(self_t, self, result):
    hits = (self == result).to(self.dtype)
    return (self_t * hits).sum() / hits.sum()


def amaxamin_backward(grad, self, result, dim, keepdim):
    dims = _reduce_dims(self, dim) if dim != () else None
    result = _restore_dims(result, self._shape, dims, keepdim)
    grad = _restore_dims(grad, self._shape, dims, keepdim)
    mask = (self == result).to(grad.dtype)
    return mask * grad / mask.sum(dims, keepdim=True)


def amaxamin_jvp(self_t, self, result, dim, keepdim):
    dims = _reduce_dims(self, dim) if dim != () else None
    hits = (self == _restore_dims(result, self._shape, dims, keepdim)).to(self.dtype)
    if dims is None:
        return (self_t * hits).sum() / hits.sum()
    return (self_t * hits).sum(dims, keepdim=keepdim) / hits.sum(dims, keepdim=keepdim)


def value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim):
    """Gradient goes to the position each value came from (the saved indices)."""
    check_not_double(grad, "value_selecting_reduction_backward")
    dim = _wrap_dim(dim, builtins.max(len(sizes), 1))
    g = grad._np if keepdim else np.expand_dims(grad._np, dim)
    i = indices._np if keepdim else np.expand_dims(indices._np, dim)
    return _wrap(kernel("scatter_add", grad._device)(sizes, g.dtype, i, g, dim), grad._device)


def gather_with_keepdimed_indices(self_t, dim, indices, keepdim):
    dim = _wrap_dim(dim, self_t.dim())
    picked = self_t.gather(dim, indices if keepdim else indices.unsqueeze(dim))
    return picked if keepdim else picked.squeeze(dim)


def _count(shape, dims):
    return math.prod(shape) if dims is None else math.prod(shape[d] for d in dims)


def var_backward(grad, self, dim, correction, keepdim):
    dims = _reduce_dims(self, dim)
    divisor = builtins.max(_count(self._shape, dims) - _correction(correction, None), 0)
    grad = _restore_dims(grad, self._shape, dims, keepdim)
    return grad * (2.0 / divisor) * (self - ops.mean(self, dims, keepdim=True))


def std_backward(result, grad, self, dim, correction, keepdim):
    dims = _reduce_dims(self, dim)
    divisor = builtins.max(_count(self._shape, dims) - _correction(correction, None), 0)
    grad = _restore_dims(grad, self._shape, dims, keepdim)
    result = _restore_dims(result, self._shape, dims, keepdim)
    return grad * (self - ops.mean(self, dims, keepdim=True)) / (result * divisor)


def var_jvp(self_t, self, dim, correction, keepdim, result=None):
    dims = _reduce_dims(self, dim)
    divisor = builtins.max(_count(self._shape, dims) - _correction(correction, None), 0)
    centred = self - ops.mean(self, dims, keepdim=True)
    d_var = 2 * (centred * self_t).sum(dims, keepdim=keepdim) / divisor if dims is not None else \
        2 * (centred * self_t).sum() / divisor
    return d_var if result is None else d_var / (2 * result)  # d sqrt(v) = dv / (2 sqrt(v))


def linalg_vector_norm_backward(grad, self, ord, result, dim, keepdim):
    dims, p = _reduce_dims(self, dim), ord
    grad = _restore_dims(grad, self._shape, dims, keepdim)
    if p == 1:
        return grad * ops.sign(self)
    if p == 0:
        return None  # a count of nonzeros: torch passes no gradient at all
    result = _restore_dims(result, self._shape, dims, keepdim)
    if p == math.inf:  # to the largest |x| (shared evenly between ties)
        hits = (self.abs() == result).to(grad.dtype)
        count = hits.sum(dims, keepdim=True) if dims is not None else hits.sum()
        return grad * ops.sign(self) * hits / count
    # where the norm is 0 the gradient is 0 (torch's choice), not nan
    safe = ops.where(result == 0, ops.ones_like(result), result)
    if p == 2:
        return ops.where(result == 0, ops.zeros_like(self), grad * self / safe)
    scaled = self * self.abs().pow(p - 2) / safe.pow(p - 1)
    return ops.where(result == 0, ops.zeros_like(self), grad * scaled)


def linalg_vector_norm_jvp(self_t, self, ord, result, dim, keepdim):
    """The tangent times the norm's slope at each element (its backward of a 1), summed."""
    if ord == 0:
        return ops.zeros_like(result)
    dims = _reduce_dims(self, dim)
    weighted = self_t * linalg_vector_norm_backward(ops.ones_like(result), self, ord, result, dim, keepdim)
    if dims is not None:
        return weighted.sum(dims, keepdim=keepdim)
    total = weighted.sum()
    return total.reshape((1,) * self.dim()) if keepdim else total


def cumsum_backward(grad, dim):
    """Element i reaches every running total from i on: the gradient summed from the end."""
    dim = _wrap_dim(dim, grad.dim())
    return grad.flip((dim,)).cumsum(dim).flip((dim,))


def cumprod_backward(grad, self, dim, result):
    """d out[j] / d x[i] = out[j] / x[i] for j >= i: the gradient times the output, summed from
    the end, divided by x (where x is 0, the products of the others instead)."""
    dim = _wrap_dim(dim, self.dim())
    if not builtins.bool((self == 0).any()):
        return (grad * result).flip((dim,)).cumsum(dim).flip((dim,)) / self
    if grad.requires_grad or _grad_state.grad_enabled:
        raise RuntimeError("reftorch: double backward through CumprodBackward0 with zeros is not implemented")
    a, g = np.moveaxis(self._np, dim, -1), np.moveaxis(grad._np, dim, -1)
    out = np.zeros_like(a)
    n = a.shape[-1]
    for i in range(n):  # d/dx_i of prod(x_0..x_j) is the product without x_i
        for j in range(i, n):
            others = np.prod(np.delete(a[..., :j + 1], i, axis=-1), axis=-1)
            out[..., i] += g[..., j] * others
    return _wrap(np.ascontiguousarray(np.moveaxis(out, -1, dim)), grad._device)


def logsumexp_backward(grad, self, result, dim, keepdim):
    """d logsumexp(x) = softmax(x): each element's share exp(x - out)."""
    dims = _reduce_dims(self, dim)
    grad = _restore_dims(grad, self._shape, dims, keepdim)
    result = _restore_dims(result, self._shape, dims, keepdim)
    return grad * (self - result).exp()


def logsumexp_jvp(self_t, self, result, dim, keepdim):
    dims = _reduce_dims(self, dim)
    return (self_t * (self - _restore_dims(result, self._shape, dims, keepdim)).exp()).sum(dims, keepdim=keepdim)
