"""Activations: softmax and log_softmax (exponentials normalised over one dim, which the
losses build on), and nn.functional's element-wise ones (leaky_relu, gelu, silu, elu,
softplus, hardtanh, relu6, logsigmoid). relu, sigmoid and tanh are plain element-wise ops,
in unary.py.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..autograd.graph import Node
from ..dispatch import kernel
from ..kernels import erf as erf_values
from ..tensor import _wrap_dim
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _elementwise_result, _grad_state, _in_one_kernel, _needs_grad, _numpy_names, _record, _wrap
from .copies import to
from .comparison import where
from .creation import full_like, ones_like
from .unary import exp


class LogSoftmaxBackward0(Node):
    _saved_names = ('result',)

    def backward(self, grad):
        (result,) = self.saved_values
        if not _grad_state.grad_enabled:
            return (_in_one_kernel("log_softmax_backward", (grad, result), self._saved_dim),)
        return (grad - exp(result) * grad.sum(self._saved_dim, keepdim=True),)


class SoftmaxBackward0(Node):
    _saved_names = ('result',)

    def backward(self, grad):
        (result,) = self.saved_values
        return (result * (grad - (grad * result).sum(self._saved_dim, keepdim=True)),)


def _softmax_input(input, dim, dtype, name):
    """``dtype`` converts first (torch's way to softmax integers); the kernels want floats."""
    if dtype is not None:
        input = to(input, dtype)
    d = _wrap_dim(dim, input.dim())
    if not input.dtype.is_floating_point:
        where = "lastdim_kernel_impl" if d == input.dim() - 1 or input.dim() == 0 else "kernel_impl"
        raise NotImplementedError(f"\"{name}_{where}\" not implemented for '{_scalar_name(input.dtype)}'")
    return input, d


@_numpy_names
def log_softmax(input, dim, dtype=None):
    input, d = _softmax_input(input, dim, dtype, "log_softmax")
    out = _wrap(kernel("log_softmax", input._device)(input._np, d), input._device)
    if _needs_grad(input):
        node = LogSoftmaxBackward0()
        node._saved_dim = d
        node.save(output=out)
        _record(node, (input,), out)
    return out


# forward mode: d log_softmax(x) = dx - sum(softmax(x) dx)
log_softmax.jvp = lambda t, out, input, dim, dtype=None: t(input) - (out.exp() * t(input)).sum(dim, keepdim=True)


@_numpy_names
def softmax(input, dim, dtype=None):
    input, d = _softmax_input(input, dim, dtype, "softmax")
    out = _wrap(kernel("softmax", input._device)(input._np, d), input._device)
    if _needs_grad(input):
        node = SoftmaxBackward0()
        node._saved_dim = d
        node.save(output=out)
        _record(node, (input,), out)
    return out


softmax.jvp = lambda t, out, input, dim, dtype=None: out * (t(input) - (out * t(input)).sum(dim, keepdim=True))


# -- element-wise activations of nn.functional: one node each, as torch records ------------
def _activation(name, node_name, values, slope, saved_params=()):
    """An element-wise activation: ``values(array, **params)`` computes it on NumPy, and
    ``slope(x, **params)`` is its derivative as tensor ops, which serves both the backward
    (grad * slope) and forward mode (tangent * slope)."""
    def backward(self, grad):
        (x,) = self.saved_values
        return (grad * slope(x, **self._params),)
    node_cls = type(node_name, (Node,), {"backward": backward, "_saved_names": ("self",)})

    def op(input, **params):
        a = input._np
        compute = np.float32 if input.dtype in dtypes.REDUCED_FLOATS else a.dtype
        out = _elementwise_result(np.asarray(values(a.astype(compute, copy=False), **params)).astype(a.dtype),
                                  input._device, input)
        if _needs_grad(input):
            node = node_cls()
            node._params = params
            for key in saved_params:
                setattr(node, "_saved_" + key, params[key])
            node.save(input)
            _record(node, (input,), out)
        return out
    op.__name__ = name
    return op, node_cls


def _gelu_values(a, approximate="none"):
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))
    return a * 0.5 * (1 + erf_values(a / math.sqrt(2)))


def _gelu_slope(x, approximate="none"):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        inner = (k * (x + 0.044715 * x * x * x)).tanh()
        return 0.5 * (1 + inner) + 0.5 * x * (1 - inner * inner) * k * (1 + 3 * 0.044715 * x * x)
    return 0.5 * (1 + (x / math.sqrt(2)).erf()) + x * (-0.5 * x * x).exp() / math.sqrt(2 * math.pi)


def _leaky_slope(x, negative_slope):
    return where(x > 0, ones_like(x), full_like(x, negative_slope))


def _silu_slope(x):
    return x.sigmoid() * (1 + x * (1 - x.sigmoid()))


def _elu_slope(x, alpha):
    return where(x > 0, ones_like(x), alpha * x.exp())


def _softplus_slope(x, beta, threshold):
    return where(x * beta > threshold, ones_like(x), (x * beta).sigmoid())


def _hardtanh_slope(x, min_val, max_val):
    return ((x > min_val) & (x < max_val)).to(x.dtype)


def _logsigmoid_slope(x):
    return (-x).sigmoid()


_leaky_relu, LeakyReluBackward0 = _activation(
    "leaky_relu", "LeakyReluBackward0", lambda a, negative_slope: np.where(a > 0, a, a * negative_slope),
    _leaky_slope, ("negative_slope",))
_gelu, GeluBackward0 = _activation("gelu", "GeluBackward0", _gelu_values, _gelu_slope, ("approximate",))
_silu, SiluBackward0 = _activation("silu", "SiluBackward0", lambda a: a / (1 + np.exp(-a)), _silu_slope)
_elu, EluBackward0 = _activation(
    "elu", "EluBackward0", lambda a, alpha: np.where(a > 0, a, alpha * np.expm1(np.minimum(a, 0))),
    _elu_slope, ("alpha",))
_softplus, SoftplusBackward0 = _activation(
    "softplus", "SoftplusBackward0",
    lambda a, beta, threshold: np.where(a * beta > threshold, a, np.log1p(np.exp(np.minimum(a * beta, threshold))) / beta),
    _softplus_slope, ("beta", "threshold"))
_hardtanh, HardtanhBackward0 = _activation(
    "hardtanh", "HardtanhBackward0", lambda a, min_val, max_val: np.clip(a, min_val, max_val),
    _hardtanh_slope, ("min_val", "max_val"))
_logsigmoid, LogSigmoidBackward0 = _activation(
    "logsigmoid", "LogSigmoidBackward0", lambda a: np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a))),
    _logsigmoid_slope)


def _in_place_or_not(input, out, inplace):
    return input.copy_(out) if inplace else out


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _in_place_or_not(input, _leaky_relu(input, negative_slope=negative_slope), inplace)


leaky_relu.jvp = lambda t, out, input, negative_slope=0.01, inplace=False: t(input) * _leaky_slope(input, negative_slope)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _gelu(input, approximate=approximate)


gelu.jvp = lambda t, out, input, approximate="none": t(input) * _gelu_slope(input, approximate)


def silu(input, inplace=False):
    return _in_place_or_not(input, _silu(input), inplace)


silu.jvp = lambda t, out, input, inplace=False: t(input) * _silu_slope(input)


def elu(input, alpha=1.0, inplace=False):
    return _in_place_or_not(input, _elu(input, alpha=alpha), inplace)


elu.jvp = lambda t, out, input, alpha=1.0, inplace=False: t(input) * _elu_slope(input, alpha)


def softplus(input, beta=1.0, threshold=20.0):
    return _softplus(input, beta=beta, threshold=threshold)


softplus.jvp = lambda t, out, input, beta=1.0, threshold=20.0: t(input) * _softplus_slope(input, beta, threshold)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _in_place_or_not(input, _hardtanh(input, min_val=min_val, max_val=max_val), inplace)


hardtanh.jvp = lambda t, out, input, min_val=-1.0, max_val=1.0, inplace=False: t(input) * _hardtanh_slope(
    input, min_val, max_val)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


relu6.jvp = lambda t, out, input, inplace=False: t(input) * _hardtanh_slope(input, 0.0, 6.0)


def logsigmoid(input):
    return _logsigmoid(input)


logsigmoid.jvp = lambda t, out, input: t(input) * _logsigmoid_slope(input)
