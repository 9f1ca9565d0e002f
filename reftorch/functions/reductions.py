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
from ._support import same_op_on_tangent, _RawFormula, _grad_state, _needs_grad, _numpy_names, _record, _wrap
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
    """Each element's gradient is the product of all the others (computed without dividing,
    so a zero is fine); under create_graph the same from cumprod, as ops."""

    _saved_names = ('self',)

    def backward(self, grad):
        self._check_not_double(grad)
        (x,) = self.saved_values
        if _grad_state.grad_enabled:
            return (_others_product_as_ops(x.reshape(-1), 0).reshape(x._shape) * grad,)
        flat = x._np.reshape(-1)
        others = _products_of_others(flat, 0).reshape(x._shape)
        return (_wrap(others, x._device) * grad,)


class ProdBackward1(ProdBackward0):
    def backward(self, grad):
        self._check_not_double(grad)
        (x,) = self.saved_values
        grad = _restore_dims(grad, x._shape, (self._saved_dim,), self._saved_keepdim)
        if _grad_state.grad_enabled:
            return (_others_product_as_ops(x, self._saved_dim) * grad,)
        others = _wrap(_products_of_others(x._np, self._saved_dim), x._device)
        return (others * grad,)


def _others_product_as_ops(x, dim):
    """The product of the elements before each one times that of the elements after it."""
    from .joining import cat
    n = x._shape[dim]
    ones = ones_like(x.narrow(dim, 0, 1))
    if n == 1:
        return ones
    left = cat([ones, x.narrow(dim, 0, n - 1).cumprod(dim)], dim)
    right = cat([ones, x.flip((dim,)).narrow(dim, 0, n - 1).cumprod(dim)], dim).flip((dim,))
    return left * right


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
    _saved_names = ('self', 'result')

    def backward(self, grad):
        x, result = self.saved_values
        # ties share the gradient evenly
        mask = (x == result).to(grad.dtype)
        return (mask * (grad / mask.sum()),)


MinBackward1 = type("MinBackward1", (MaxBackward1,), {})


class AmaxBackward0(Node):
    _saved_names = ('self', 'result')

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

    _saved_names = ('indices',)

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
    _saved_names = ('self',)

    def backward(self, grad):
        (x,) = self.saved_values
        dims, keepdim = self._saved_dim, self._saved_keepdim
        grad = _restore_dims(grad, x._shape, dims, keepdim)
        return (grad * (2.0 / self._divisor) * (x - mean(x, dims, keepdim=True)),)


class StdBackward0(Node):
    _saved_names = ('self', 'result')

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
    _saved_names = ('self', 'result')

    def backward(self, grad):
        x, result = self.saved_values
        dims, keepdim, p = self._saved_dim, self._saved_keepdim, self._saved_ord
        grad = _restore_dims(grad, x._shape, dims, keepdim)
        if p == 1:
            return (grad * sign(x),)
        if p == 0:
            return (None,)  # a count of nonzeros: torch passes no gradient at all
        result = _restore_dims(result, x._shape, dims, keepdim)
        if p == math.inf:  # to the largest |x| (shared evenly between ties)
            hits = (x.abs() == result).to(grad.dtype)
            count = hits.sum(dims, keepdim=True) if dims is not None else hits.sum()
            return (grad * sign(x) * hits / count,)
        # where the norm is 0 the gradient is 0 (torch's choice), not nan
        safe = where(result == 0, ones_like(result), result)
        if p == 2:
            return (where(result == 0, zeros_like(x), grad * x / safe),)
        scaled = x * x.abs().pow(p - 2) / safe.pow(p - 1)
        return (where(result == 0, zeros_like(x), grad * scaled),)


def norm(input, p=2, dim=None, keepdim=False):
    """The vector p-norm (sum |x|^p)^(1/p) over ``dim`` (all elements by default); p = inf is
    the largest |x|."""
    if isinstance(p, str):
        raise NotImplementedError("reftorch.norm supports vector norms (a number p), not matrix norms")
    if not input.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_scalar_name(input.dtype)}")
    dims = _reduce_dims(input, dim)
    a = input._np
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


# -- running totals and log-sum-exp -----------------------------------------------------------
class CumsumBackward0(Node):
    """Element i reaches every running total from i on: the gradient summed from the end."""

    def backward(self, grad):
        dim = self._saved_dim
        return (grad.flip((dim,)).cumsum(dim).flip((dim,)),)


@_numpy_names
def cumsum(input, dim, *, dtype=None):
    """Running totals along ``dim``: out[i] = input[0] + ... + input[i]."""
    d = _wrap_dim(dim, input.dim())
    out_dtype = dtype or (dtypes.int64 if not input.dtype.is_floating_point else input.dtype)
    compute = np.float32 if out_dtype in dtypes.REDUCED_FLOATS else out_dtype.numpy
    values = np.cumsum(input._np, axis=d if input.dim() else None, dtype=compute).reshape(input._shape)
    out = _wrap(values.astype(out_dtype.numpy, copy=False), input._device)
    if _needs_grad(input):
        node = CumsumBackward0()
        node._saved_dim = d
        _record(node, (input,), out)
    return out


cumsum.jvp = lambda t, out, input, dim, *, dtype=None: cumsum(t(input), dim, dtype=dtype)


class CumprodBackward0(Node):
    """d out[j] / d x[i] = out[j] / x[i] for j >= i: the gradient times the output, summed from
    the end, divided by x (where x is 0, the products of the others instead)."""

    _saved_names = ("self", "result")

    def backward(self, grad):
        x, result = self.saved_values
        dim = self._saved_dim
        if not bool((x == 0).any()):
            return ((grad * result).flip((dim,)).cumsum(dim).flip((dim,)) / x,)
        if grad.requires_grad or _grad_state.grad_enabled:
            raise RuntimeError("reftorch: double backward through CumprodBackward0 with zeros is not implemented")
        a, g = np.moveaxis(x._np, dim, -1), np.moveaxis(grad._np, dim, -1)
        out = np.zeros_like(a)
        n = a.shape[-1]
        for i in range(n):  # d/dx_i of prod(x_0..x_j) is the product without x_i
            for j in range(i, n):
                others = np.prod(np.delete(a[..., :j + 1], i, axis=-1), axis=-1)
                out[..., i] += g[..., j] * others
        return (_wrap(np.ascontiguousarray(np.moveaxis(out, -1, dim)), grad._device),)


@_numpy_names
def cumprod(input, dim, *, dtype=None):
    """Running products along ``dim``."""
    d = _wrap_dim(dim, input.dim())
    out_dtype = dtype or (dtypes.int64 if not input.dtype.is_floating_point else input.dtype)
    values = np.cumprod(input._np, axis=d if input.dim() else None, dtype=out_dtype.numpy).reshape(input._shape)
    out = _wrap(values, input._device)
    if _needs_grad(input):
        node = CumprodBackward0()
        node._saved_dim = d
        node.save(input, output=out)
        _record(node, (input,), out)
    return out


class LogsumexpBackward0(Node):
    """d logsumexp(x) = softmax(x): each element's share exp(x - out)."""

    _saved_names = ("self", "result")

    def backward(self, grad):
        x, result = self.saved_values
        dims, keepdim = self._saved_dim, self._saved_keepdim
        grad = _restore_dims(grad, x._shape, dims, keepdim)
        result = _restore_dims(result, x._shape, dims, keepdim)
        return (grad * (x - result).exp(),)


@_numpy_names
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
    out = _wrap(np.asarray(values).astype(input.dtype.numpy if input.dtype.is_floating_point else a.dtype),
                input._device)
    if _needs_grad(input):
        node = LogsumexpBackward0()
        node._saved_dim, node._saved_keepdim = dims, keepdim
        node.save(input, output=out)
        _record(node, (input,), out)
    return out


logsumexp.jvp = lambda t, out, input, dim, keepdim=False: (
    t(input) * (input - _restore_dims(out, input._shape, _reduce_dims(input, dim), keepdim)).exp()
).sum(_reduce_dims(input, dim), keepdim=keepdim)


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim`` (sort's second result)."""
    return sort(input, dim, descending).indices
