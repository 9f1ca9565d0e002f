"""CPU kernels: the arithmetic itself, on NumPy arrays.

Every kernel takes arrays and returns a *new* array (never a view of an input), or writes
into ``out`` when given. The engine above decides shapes, dtypes and autograd; a kernel
only computes. ``sim.py`` registers the same table for its device, the way a real backend
registers its own kernels for every operator it supports.
"""
from __future__ import annotations

import numpy as np

from .dispatch import register_kernel

CPU_KERNELS: dict = {}


def cpu_kernel(name):
    def decorate(fn):
        # torch computes inf/nan silently; NumPy would warn on overflow, 0/0, log(0), ...
        quiet = np.errstate(all="ignore")(fn)
        CPU_KERNELS[name] = quiet
        register_kernel(name, "cpu")(quiet)
        return fn
    return decorate


# element-wise: NumPy ufuncs already broadcast, keep memory order, and accept out=
for _name, _ufunc in {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder,
    "pow": np.power, "maximum": np.maximum, "minimum": np.minimum,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "abs": np.abs,
    "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "reciprocal": np.reciprocal, "logical_not": np.logical_not, "bitwise_not": np.invert,
    "floor": np.floor, "ceil": np.ceil, "isnan": np.isnan,
}.items():
    cpu_kernel(_name)(_ufunc)


@cpu_kernel("sign")
def sign(a, out=None):
    if a.dtype != np.bool_:
        return np.sign(a, out=out)
    # NumPy has no sign for bool; a bool is its own sign
    if out is None:
        return a.copy()
    out[...] = a
    return out


@cpu_kernel("relu")
def relu(a, out=None):
    return np.maximum(a, a.dtype.type(0), out=out)


@cpu_kernel("sigmoid")
def sigmoid(a, out=None):
    # 1 / (1 + exp(-a)) without overflow warnings for large |a|
    with np.errstate(over="ignore"):
        result = np.reciprocal(np.exp(np.negative(a)) + a.dtype.type(1))
    if out is None:
        return result
    out[...] = result
    return out


@cpu_kernel("clamp")
def clamp(a, low, high, out=None):
    return np.clip(a, low, high, out=out)


@cpu_kernel("where")
def where(cond, a, b):
    return np.where(cond, a, b)


@cpu_kernel("copy")
def copy(a, dtype=None):
    """A fresh contiguous copy (optionally converted)."""
    return np.array(a, dtype=dtype, order="C", copy=True)


@cpu_kernel("copy_")
def copy_into(dst, src):
    np.copyto(dst, src, casting="unsafe")
    return dst


@cpu_kernel("fill_")
def fill(dst, value):
    dst.fill(value)
    return dst


@cpu_kernel("full")
def full(shape, value, dtype):
    return np.full(shape, value, dtype=dtype)


@cpu_kernel("empty")
def empty(shape, dtype):
    return np.empty(shape, dtype=dtype)


@cpu_kernel("arange")
def arange(start, end, step, dtype):
    return np.arange(start, end, step).astype(dtype, copy=False)


# reductions -------------------------------------------------------------------
@cpu_kernel("sum")
def sum_(a, dims, keepdim, dtype=None):
    return np.asarray(np.sum(a, axis=dims, keepdims=keepdim, dtype=dtype))


@cpu_kernel("prod")
def prod(a, dims, keepdim, dtype=None):
    return np.asarray(np.prod(a, axis=dims, keepdims=keepdim, dtype=dtype))


@cpu_kernel("mean")
def mean(a, dims, keepdim):
    return np.asarray(np.mean(a, axis=dims, keepdims=keepdim, dtype=a.dtype))


@cpu_kernel("amax")
def amax(a, dims, keepdim):
    return np.asarray(np.max(a, axis=dims, keepdims=keepdim))


@cpu_kernel("amin")
def amin(a, dims, keepdim):
    return np.asarray(np.min(a, axis=dims, keepdims=keepdim))


@cpu_kernel("argmax")
def argmax(a, dim, keepdim):
    return np.asarray(np.argmax(a, axis=dim, keepdims=keepdim)).astype(np.int64, copy=False)


@cpu_kernel("argmin")
def argmin(a, dim, keepdim):
    return np.asarray(np.argmin(a, axis=dim, keepdims=keepdim)).astype(np.int64, copy=False)


@cpu_kernel("topk")
def topk(a, k, dim, largest):
    # a stable sort keeps the first of equal values first, as torch does on CPU
    order = np.argsort(-a if largest else a, axis=dim, kind="stable")
    indices = np.take(order, np.arange(k), axis=dim)
    return np.take_along_axis(a, indices, axis=dim), indices.astype(np.int64)


@cpu_kernel("sort")
def sort(a, dim, descending):
    order = np.argsort(-a if descending else a, axis=dim, kind="stable")
    return np.take_along_axis(a, order, axis=dim), order.astype(np.int64)


@cpu_kernel("log_softmax")
def log_softmax(a, dim):
    shifted = a - np.max(a, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


@cpu_kernel("log_softmax_backward")
def log_softmax_backward(grad, output, dim):
    # the formula of LogSoftmaxBackward0, op for op: grad - exp(output) * grad.sum(dim)
    return grad - np.exp(output) * np.sum(grad, axis=(dim,), keepdims=True, dtype=grad.dtype)


@cpu_kernel("threshold_backward")
def threshold_backward(output, grad, threshold):
    # 0 where output <= threshold, else grad: a select (grad * mask would make inf * 0 = nan)
    return np.where(output <= threshold, 0, grad)


@cpu_kernel("softmax")
def softmax(a, dim):
    e = np.exp(a - np.max(a, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


# linear algebra ---------------------------------------------------------------
@cpu_kernel("matmul")
def matmul(a, b):
    return np.asarray(np.matmul(a, b))


@cpu_kernel("addmm")
def addmm(bias, a, b, beta, alpha):
    product = np.matmul(a, b)
    if alpha != 1:
        product *= alpha
    if beta == 0:
        return product
    product += bias if beta == 1 else beta * bias
    return product


# indexing and joining ---------------------------------------------------------
@cpu_kernel("index")
def index(a, key):
    return np.array(a[key], copy=True)


@cpu_kernel("index_put_")
def index_put(a, key, values, accumulate):
    if accumulate:
        np.add.at(a, key, values)
    else:
        a[key] = values
    return a


@cpu_kernel("cat")
def cat(arrays, dim):
    return np.concatenate(arrays, axis=dim)


@cpu_kernel("stack")
def stack(arrays, dim):
    return np.stack(arrays, axis=dim)


@cpu_kernel("repeat")
def repeat(a, repeats):
    return np.tile(a, repeats)


@cpu_kernel("take_along_dim")
def take_along_dim(a, indices, dim):
    return np.take_along_axis(a, indices, axis=dim)


@cpu_kernel("scatter_add")
def scatter_add(shape, dtype, indices, values, dim):
    out = np.zeros(shape, dtype=dtype)
    np.put_along_axis(out, indices, 0, axis=dim)  # shape check
    grid = list(np.indices(indices.shape, sparse=True))
    grid[dim] = indices
    np.add.at(out, tuple(grid), values)
    return out


# random numbers: the generator lives with the device ----------------------------
@cpu_kernel("uniform")
def uniform(generator, shape, dtype):
    return generator.random(shape, dtype=np.float64).astype(dtype, copy=False)


@cpu_kernel("normal")
def normal(generator, shape, dtype):
    return generator.standard_normal(shape).astype(dtype, copy=False)


@cpu_kernel("randint")
def randint(generator, low, high, shape, dtype):
    return generator.integers(low, high, size=shape).astype(dtype, copy=False)


@cpu_kernel("bernoulli")
def bernoulli(generator, shape, p, dtype):
    return (generator.random(shape) < p).astype(dtype)
