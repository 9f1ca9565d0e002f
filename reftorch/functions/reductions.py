"""Reductions: sum, mean, prod, max/min, amax/amin, argmax, topk, sort, var, std, norm, ...

A reduction's backward spreads the output's gradient back over the reduced dims:
``_restore_dims`` puts them back as size 1 so that the gradient broadcasts over the input.
"""
from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple

import numpy as np

from .. import dtypes
from ..autograd.graph import Node
from ..dispatch import kernel
from ..tensor import Tensor, _wrap_dim
from ..tensor import _scalar_type_name as _scalar_name
from ._support import same_op_on_tangent, _RawFormula, _needs_grad, _numpy_names, _record, _wrap
from .arithmetic import maximum, minimum
from .comparison import where
from .creation import ones_like, zeros_like
from .unary import sign


def _reduce_dims(input, dim):
    if dim is None:
        return None
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return tuple(sorted(_wrap_dim(d, input.dim()) for d in dims))


def _restore_dims(grad, shape, dims, keepdim):
    """Put back the reduced dims as size 1, so that grad broadcasts over the input."""
    if keepdim or dims is None or grad.dim() == len(shape):
        return grad
    for d in dims:
        grad = grad.unsqueeze(d)
    return grad


class SumBackward0(Node):
    def backward(self, grad):
        return (grad.expand(self._saved_self_sym_sizes),)


class SumBackward1(Node):
    def backward(self, grad):
        grad = _restore_dims(grad, self._saved_self_sym_sizes, self._saved_dim, self._saved_keepdim)
        return (grad.expand(self._saved_self_sym_sizes),)


@_numpy_names
def sum(input, dim=None, keepdim=False, *, dtype=None):
    dims = _reduce_dims(input, dim)
    out_dtype = dtype or (dtypes.int64 if not input.dtype.is_floating_point else input.dtype)
    out = _wrap(kernel("sum", input._device)(input._np, dims, keepdim, out_dtype.numpy), input._device)
    if _needs_grad(input):
        node = SumBackward0() if dims is None else SumBackward1()
        node._saved_self_sym_sizes = input._shape
        node._saved_dim, node._saved_keepdim = dims, keepdim
        _record(node, (input,), out)
    return out


# forward mode: d sum(x) = sum(dx); the linear reductions are their own rule
sum.jvp = same_op_on_tangent(sum)


class MeanBackward0(SumBackward0):
    def backward(self, grad):
        return (grad.expand(self._saved_self_sym_sizes) / self._count,)


class MeanBackward1(SumBackward1):
    def backward(self, grad):
        (g,) = SumBackward1.backward(self, grad)
        return (g / self._count,)


@_numpy_names
def mean(input, dim=None, keepdim=False, *, dtype=None):
    if not (dtype or input.dtype).is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_scalar_name(input.dtype)}"
        )
    dims = _reduce_dims(input, dim)
    a = input._np if dtype is None else input._np.astype(dtype.numpy)
    out = _wrap(kernel("mean", input._device)(a, dims, keepdim), input._device)
    if _needs_grad(input):
        node = MeanBackward0() if dims is None else MeanBackward1()
        node._saved_self_sym_sizes = input._shape
        node._saved_dim, node._saved_keepdim = dims, keepdim
        node._count = input.numel() // builtins.max(out.numel(), 1) if input.numel() else 1
        _record(node, (input,), out)
    return out


mean.jvp = same_op_on_tangent(mean)


class ProdBackward0(_RawFormula):
    def backward(self, grad):
        self._check_not_double(grad)
        (x,) = self.saved_values
        flat = x._np.reshape(-1)
        others = _products_of_others(flat, 0).reshape(x._shape)
        return (_wrap(others, x._device) * grad,)


class ProdBackward1(ProdBackward0):
    def backward(self, grad):
        self._check_not_double(grad)
        (x,) = self.saved_values
        others = _wrap(_products_of_others(x._np, self._saved_dim), x._device)
        grad = _restore_dims(grad, x._shape, (self._saved_dim,), self._saved_keepdim)
        return (others * grad,)


def _products_of_others(a, axis):
    """For each element, the product of all the others along ``axis`` (safe with zeros)."""
    ones_shape = list(a.shape)
    ones_shape[axis] = 1
    one = np.ones(ones_shape, dtype=a.dtype)
    left = np.cumprod(np.concatenate([one, np.take(a, range(a.shape[axis] - 1), axis=axis)], axis=axis), axis=axis)
    rev = np.flip(a, axis=axis)
    right = np.flip(np.cumprod(np.concatenate([one, np.take(rev, range(a.shape[axis] - 1), axis=axis)], axis=axis), axis=axis), axis=axis)
    return left * right


@_numpy_names
def prod(input, dim=None, keepdim=False, *, dtype=None):
    out_dtype = dtype or (dtypes.int64 if not input.dtype.is_floating_point else input.dtype)
    if dim is None:
        out = _wrap(kernel("prod", input._device)(input._np, None, False, out_dtype.numpy), input._device)
        node = ProdBackward0() if _needs_grad(input) else None
    else:
        d = _wrap_dim(dim, input.dim())
        out = _wrap(kernel("prod", input._device)(input._np, d, keepdim, out_dtype.numpy), input._device)
        node = ProdBackward1() if _needs_grad(input) else None
        if node:
            node._saved_dim, node._saved_keepdim = d, keepdim
    if node is not None:
        node.save(input)
        _record(node, (input,), out)
    return out


def _prod_tangent(t, out, input, dim=None, keepdim=False, *, dtype=None):
    # d prod(x) = sum(dx * prod of the others), the others' product taken without dividing by x
    others = _wrap(_products_of_others(input._np.reshape(-1), 0).reshape(input._shape) if dim is None
                   else _products_of_others(input._np, _wrap_dim(dim, input.dim())), input._device)
    return (t(input) * others).sum(dim, keepdim=keepdim) if dim is not None else (t(input) * others).sum()


prod.jvp = _prod_tangent


class MaxBackward1(Node):
    def backward(self, grad):
        x, result = self.saved_values
        # ties share the gradient evenly
        mask = (x == result).to(grad.dtype)
        return (mask * (grad / mask.sum()),)


MinBackward1 = type("MinBackward1", (MaxBackward1,), {})


class AmaxBackward0(Node):
    def backward(self, grad):
        x, result = self.saved_values
        dims, keepdim = self._saved_dim, self._saved_keepdim
        result = _restore_dims(result, x._shape, dims, keepdim)
        grad = _restore_dims(grad, x._shape, dims, keepdim)
        mask = (x == result).to(grad.dtype)
        return (mask * grad / mask.sum(dims, keepdim=True),)


AminBackward0 = type("AminBackward0", (AmaxBackward0,), {})


class MaxBackward0(_RawFormula):
    """Gradient goes to the position each value came from (the saved indices)."""

    def backward(self, grad, _indices_grad=None):
        self._check_not_double(grad)
        (indices,) = self.saved_values
        dim, keepdim, shape = self._saved_dim, self._saved_keepdim, self._saved_self_sym_sizes
        g = grad._np if keepdim else np.expand_dims(grad._np, dim)
        i = indices._np if keepdim else np.expand_dims(indices._np, dim)
        return (_wrap(kernel("scatter_add", grad._device)(shape, g.dtype, i, g, dim), grad._device),)


MinBackward0 = type("MinBackward0", (MaxBackward0,), {})
TopkBackward0 = type("TopkBackward0", (MaxBackward0,), {})
SortBackward0 = type("SortBackward0", (MaxBackward0,), {})

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


def _extreme(input, dim, keepdim, other, which):
    if isinstance(dim, Tensor):  # torch.max(a, b) is maximum
        other, dim = dim, None
    if other is not None:
        return maximum(input, other) if which == "max" else minimum(input, other)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                f"{which}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        out = _wrap(kernel("amax" if which == "max" else "amin", input._device)(input._np, None, False), input._device)
        if _needs_grad(input):
            node = MaxBackward1() if which == "max" else MinBackward1()
            node.save(input, output=out)
            _record(node, (input,), out)
        return out
    d = _wrap_dim(dim, input.dim())
    arg = "argmax" if which == "max" else "argmin"
    indices = _wrap(kernel(arg, input._device)(input._np, d, True), input._device)
    values = _wrap(kernel("take_along_dim", input._device)(input._np, indices._np, d), input._device)
    if not keepdim:
        values = _wrap(np.squeeze(values._np, d).copy(), input._device)
        indices = _wrap(np.squeeze(indices._np, d).copy(), input._device)
    if _needs_grad(input):
        node = MaxBackward0() if which == "max" else MinBackward0()
        node.save(indices)
        node._saved_dim, node._saved_keepdim, node._saved_self_sym_sizes = d, keepdim, input._shape
        _record(node, (input,), values)
    cls = return_types_max if which == "max" else return_types_min
    return cls(values, indices)


@_numpy_names
def max(input, dim=None, keepdim=False, *, other=None):
    return _extreme(input, dim, keepdim, other, "max")


def _extreme_tangent(t, out, input, dim=None, keepdim=False, *, other=None):
    if isinstance(dim, Tensor) or other is not None:  # max(a, b) is maximum
        b = dim if isinstance(dim, Tensor) else other
        return maximum.jvp(t, out, input, b) if isinstance(out, Tensor) and (out == maximum(input, b)).all() \
            else minimum.jvp(t, out, input, b)
    if dim is None:  # the tangent at the extreme (shared evenly between ties)
        hits = (input == out).to(input.dtype)
        return (t(input) * hits).sum() / hits.sum()
    indices = out.indices if keepdim else out.indices.unsqueeze(dim)
    picked = t(input).gather(_wrap_dim(dim, input.dim()), indices)
    return (picked if keepdim else picked.squeeze(dim), None)


max.jvp = _extreme_tangent


@_numpy_names
def min(input, dim=None, keepdim=False, *, other=None):
    return _extreme(input, dim, keepdim, other, "min")


min.jvp = _extreme_tangent


@_numpy_names
def amax(input, dim=(), keepdim=False):
    dims = _reduce_dims(input, dim) if dim != () else None
    out = _wrap(kernel("amax", input._device)(input._np, dims, keepdim), input._device)
    if _needs_grad(input):
        node = AmaxBackward0()
        node._saved_dim, node._saved_keepdim = dims, keepdim
        node.save(input, output=out)
        _record(node, (input,), out)
    return out


def _amax_tangent(t, out, input, dim=(), keepdim=False):
    dims = _reduce_dims(input, dim) if dim != () else None
    hits = (input == _restore_dims(out, input._shape, dims, keepdim)).to(input.dtype)
    return (t(input) * hits).sum(dims, keepdim=keepdim) / hits.sum(dims, keepdim=keepdim) if dims is not None \
        else (t(input) * hits).sum() / hits.sum()


amax.jvp = _amax_tangent


@_numpy_names
def amin(input, dim=(), keepdim=False):
    dims = _reduce_dims(input, dim) if dim != () else None
    out = _wrap(kernel("amin", input._device)(input._np, dims, keepdim), input._device)
    if _needs_grad(input):
        node = AminBackward0()
        node._saved_dim, node._saved_keepdim = dims, keepdim
        node.save(input, output=out)
        _record(node, (input,), out)
    return out


amin.jvp = _amax_tangent


def _no_bool(input, name):
    if input.dtype is dtypes.bool:
        raise RuntimeError(f"{name}(): does not support bool input")


@_numpy_names
def argmax(input, dim=None, keepdim=False):
    _no_bool(input, "argmax")
    if dim is None:
        return _wrap(kernel("argmax", input._device)(input._np.reshape(-1), 0, False), input._device)
    return _wrap(kernel("argmax", input._device)(input._np, _wrap_dim(dim, input.dim()), keepdim), input._device)


@_numpy_names
def argmin(input, dim=None, keepdim=False):
    _no_bool(input, "argmin")
    if dim is None:
        return _wrap(kernel("argmin", input._device)(input._np.reshape(-1), 0, False), input._device)
    return _wrap(kernel("argmin", input._device)(input._np, _wrap_dim(dim, input.dim()), keepdim), input._device)


@_numpy_names
def topk(input, k, dim=-1, largest=True, sorted=True):
    if input.dtype is dtypes.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = _wrap_dim(dim, input.dim())
    size = input._shape[d] if input.dim() else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, indices = kernel("topk", input._device)(input._np, k, d, largest)
    values, indices = _wrap(values, input._device), _wrap(indices, input._device)
    if _needs_grad(input):
        node = TopkBackward0()
        node.save(indices)
        node._saved_dim, node._saved_keepdim, node._saved_self_sym_sizes = d, True, input._shape
        _record(node, (input,), values)
    return return_types_topk(values, indices)


topk.jvp = lambda t, out, input, k, dim=-1, largest=True, sorted=True: (
    t(input).gather(_wrap_dim(dim, input.dim()), out.indices), None)


@_numpy_names
def sort(input, dim=-1, descending=False):
    d = _wrap_dim(dim, input.dim())
    values, indices = kernel("sort", input._device)(input._np, d, descending)
    values, indices = _wrap(values, input._device), _wrap(indices, input._device)
    if _needs_grad(input):
        node = SortBackward0()
        node.save(indices)
        node._saved_dim, node._saved_keepdim, node._saved_self_sym_sizes = d, True, input._shape
        _record(node, (input,), values)
    return return_types_sort(values, indices)


sort.jvp = lambda t, out, input, dim=-1, descending=False: (
    t(input).gather(_wrap_dim(dim, input.dim()), out.indices), None)


@_numpy_names
def all(input, dim=None):
    return _wrap(np.asarray(np.all(input._np, axis=dim)), input._device)


@_numpy_names
def any(input, dim=None):
    return _wrap(np.asarray(np.any(input._np, axis=dim)), input._device)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(np.allclose(input._np, other._np, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _wrap(np.isclose(input._np, other._np, rtol=rtol, atol=atol, equal_nan=equal_nan), input._device)


def equal(input, other) -> bool:
    return input._shape == other._shape and builtins.bool(np.array_equal(input._np, other._np))


def nonzero(input, *, as_tuple=False):
    found = np.nonzero(input._np)
    if as_tuple:
        return tuple(_wrap(i.astype(np.int64), input._device) for i in found)
    return _wrap(np.stack(found, axis=1).astype(np.int64), input._device)


@_numpy_names
def count_nonzero(input, dim=None):
    return _wrap(np.asarray(np.count_nonzero(input._np, axis=dim), dtype=np.int64), input._device)


class VarBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_values
        dims, keepdim = self._saved_dim, self._saved_keepdim
        grad = _restore_dims(grad, x._shape, dims, keepdim)
        return (grad * (2.0 / self._divisor) * (x - mean(x, dims, keepdim=True)),)


class StdBackward0(Node):
    def backward(self, grad):
        x, result = self.saved_values
        dims, keepdim = self._saved_dim, self._saved_keepdim
        grad = _restore_dims(grad, x._shape, dims, keepdim)
        result = _restore_dims(result, x._shape, dims, keepdim)
        return (grad * (x - mean(x, dims, keepdim=True)) / (result * self._divisor),)


def _spread(input, dim, correction, keepdim, which):
    """var and std: one node each, as in torch (not a graph of mean, sub, mul)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _reduce_dims(input, dim)
    n = input.numel() if dims is None else math.prod(input._shape[d] for d in dims)
    divisor = builtins.max(n - correction, 0)
    if divisor == 0:
        warnings.warn(
            f"{which}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=4)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's own note on the same thing
        values = np.var(input._np, axis=dims, ddof=correction, keepdims=keepdim)
        if which == "std":
            values = np.sqrt(values)
    out = _wrap(np.asarray(values, dtype=input.dtype.numpy), input._device)
    if _needs_grad(input):
        node = VarBackward0() if which == "var" else StdBackward0()
        node._saved_dim, node._saved_keepdim, node._divisor = dims, keepdim, divisor
        node.save(input, output=out) if which == "std" else node.save(input)
        _record(node, (input,), out)
    return out


@_numpy_names
def var(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    return _spread(input, dim, correction if unbiased is None else builtins.int(unbiased), keepdim, "var")


def _spread_tangent(which):
    def rule(t, out, input, dim=None, *, correction=1, keepdim=False, unbiased=None):
        correction = correction if unbiased is None else builtins.int(unbiased)
        dims = _reduce_dims(input, dim)
        n = input.numel() if dims is None else math.prod(input._shape[d] for d in dims)
        centred = input - mean(input, dims, keepdim=True) if dims is not None else input - mean(input)
        d_var = 2 * (centred * t(input)).sum(dims, keepdim=keepdim) / builtins.max(n - correction, 0) \
            if dims is not None else 2 * (centred * t(input)).sum() / builtins.max(n - correction, 0)
        return d_var if which == "var" else d_var / (2 * out)  # d sqrt(v) = dv / (2 sqrt(v))
    return rule


var.jvp = _spread_tangent("var")


@_numpy_names
def std(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    return _spread(input, dim, correction if unbiased is None else builtins.int(unbiased), keepdim, "std")


std.jvp = _spread_tangent("std")


class LinalgVectorNormBackward0(Node):
    def backward(self, grad):
        x, result = self.saved_values
        dims, keepdim = self._saved_dim, self._saved_keepdim
        grad = _restore_dims(grad, x._shape, dims, keepdim)
        if self._saved_ord == 1:
            return (grad * sign(x),)
        result = _restore_dims(result, x._shape, dims, keepdim)
        # where the norm is 0 the gradient is 0 (torch's choice), not nan
        safe = where(result == 0, ones_like(result), result)
        return (where(result == 0, zeros_like(x), grad * x / safe),)


def norm(input, p=2, dim=None, keepdim=False):
    if p not in (1, 2):
        raise NotImplementedError("reftorch.norm supports p=1 and p=2")
    if not input.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_scalar_name(input.dtype)}")
    dims = _reduce_dims(input, dim)
    a = input._np
    values = np.sum(np.abs(a), axis=dims, keepdims=keepdim) if p == 1 else \
        np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
    out = _wrap(np.asarray(values, dtype=input.dtype.numpy), input._device)
    if _needs_grad(input):
        node = LinalgVectorNormBackward0()
        node._saved_dim, node._saved_keepdim, node._saved_ord = dims, keepdim, p
        node.save(input, output=out)
        _record(node, (input,), out)
    return out


def _norm_tangent(t, out, input, p=2, dim=None, keepdim=False):
    dims = _reduce_dims(input, dim)
    if p == 1:
        return (sign(input) * t(input)).sum(dims, keepdim=keepdim) if dims is not None else (sign(input) * t(input)).sum()
    total = (input * t(input)).sum(dims, keepdim=keepdim) if dims is not None else (input * t(input)).sum()
    return where(out == 0, zeros_like(out), total / where(out == 0, ones_like(out), out))


norm.jvp = _norm_tangent
