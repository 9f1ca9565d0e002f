"""Activations: softmax and log_softmax (exponentials normalised over one dim, which the
losses build on), and nn.functional's element-wise ones (leaky_relu, gelu, silu, elu,
selu, celu, softplus, hardtanh, relu6, hardsigmoid, hardswish, mish, logsigmoid, hardshrink,
softshrink, threshold, glu, prelu). relu, sigmoid and tanh are plain element-wise ops,
in unary.py.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _modes, dtypes
from ..dispatch import kernel
from ..kernels import erf as erf_values
from ..tensor import _wrap_dim
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _elementwise_result, _in_one_kernel, _wrap
from . import views
from .codegen import ops

_grad_state = _modes.grad_mode


def _check_softmax_input(input, dim, name):
    d = _wrap_dim(dim, input.dim())
    if not input.dtype.is_floating_point:
        where = "lastdim_kernel_impl" if d == input.dim() - 1 or input.dim() == 0 else "kernel_impl"
        raise NotImplementedError(f"\"{name}_{where}\" not implemented for '{_scalar_name(input.dtype)}'")
    return d


def log_softmax(input, dim, dtype=None):
    """``log(softmax(x))`` over ``dim``; ``dtype`` converts first (torch's way to take the
    log-softmax of integers)."""
    if dtype is not None:
        input = ops.to(input, dtype)
    return ops._log_softmax(input, dim, False)


def _log_softmax(input, dim, half_to_float):
    d = _check_softmax_input(input, dim, "log_softmax")
    return _wrap(kernel("log_softmax", input._device)(input._np, d), input._device)


def softmax(input, dim, dtype=None):
    if dtype is not None:
        input = ops.to(input, dtype)
    return ops._softmax(input, dim, False)


def _softmax(input, dim, half_to_float):
    d = _check_softmax_input(input, dim, "softmax")
    return _wrap(kernel("softmax", input._device)(input._np, d), input._device)


def log_softmax_backward(grad, result, dim):
    """grad - exp(result) * grad.sum(dim): in one kernel when no graph is recorded."""
    dim = _wrap_dim(dim, grad.dim())
    if not _grad_state.grad_enabled:
        return _in_one_kernel("log_softmax_backward", (grad, result), dim)
    return grad - ops.exp(result) * grad.sum(dim, keepdim=True)


def softmax_backward(grad, result, dim):
    return result * (grad - (grad * result).sum(dim, keepdim=True))


def log_softmax_jvp(self_t, result, dim):
    # d log_softmax(x) = dx - sum(softmax(x) dx)
    return self_t - (result.exp() * self_t).sum(dim, keepdim=True)


def softmax_jvp(self_t, result, dim):
    return result * (self_t - (result * self_t).sum(dim, keepdim=True))


# -- element-wise activations of nn.functional: one node each, as torch records ------------
def _apply(values, input, *params):
    """An element-wise activation: ``values(array, *params)`` computes it on NumPy arrays
    (16-bit floats in float32, rounded once)."""
    a = input._np
    compute = np.float32 if input.dtype in dtypes.REDUCED_FLOATS else a.dtype
    result = np.asarray(values(a.astype(compute, copy=False), *params)).astype(a.dtype)
    return _elementwise_result(result, input._device, input)


def _gelu_values(a, approximate="none"):
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))
    return a * 0.5 * (1 + erf_values(a / math.sqrt(2)))


def leaky_relu(input, negative_slope=0.01):
    return _apply(lambda a, s: np.where(a > 0, a, a * s), input, negative_slope)


def gelu(input, *, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _apply(_gelu_values, input, approximate)


def silu(input):
    return _apply(lambda a: a / (1 + np.exp(-a)), input)


def _elu_values(a, alpha, scale, input_scale):
    # torch's coefficients are products of the scalars in the input's dtype
    # (expm1 in float64, rounded once: torch's vectorised expm1 is that close)
    t = a.dtype.type
    negcoef, poscoef, negiptcoef = t(alpha) * t(scale), t(scale), t(input_scale)
    negative = np.expm1(np.minimum(a, 0).astype(np.float64) * negiptcoef) * negcoef
    return np.where(a > 0, a * poscoef, negative.astype(a.dtype))


def elu(input, alpha=1.0, scale=1.0, input_scale=1.0):
    _check_floating(input, "elu_cpu")
    return _apply(_elu_values, input, alpha, scale, input_scale)


# SELU's constants (Klambauer et al.): the fixed point of mean 0 and variance 1
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def selu(input):
    """An elu with fixed constants: torch records it as EluBackward0."""
    return ops.elu(input, SELU_ALPHA, SELU_SCALE)


def selu_(input):
    """``torch.selu_``: ``elu_`` with SELU's constants (EluBackward1)."""
    return ops.elu_(input, SELU_ALPHA, SELU_SCALE)


def celu(input, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _check_floating(input, "elu_cpu")
    return _apply(_elu_values, input, alpha, 1.0, 1.0 / alpha)


def hardsigmoid(input):
    _check_floating(input, "hardsigmoid_cpu")
    return _apply(lambda a: np.minimum(np.maximum(a + 3, 0), 6) / 6, input)


def hardswish(input):
    _check_floating(input, "hardswish_cpu")
    return _apply(lambda a: a * np.minimum(np.maximum(a + 3, 0), 6) / 6, input)


def threshold(input, threshold, value):
    """``value`` where the input is <= ``threshold`` (relu is threshold(x, 0, 0))."""
    return _elementwise_result(np.where(input._np <= threshold, np.asarray(value).astype(input._np.dtype), input._np),
                               input._device, input)


def glu(input, dim=-1):
    """The first half of ``dim`` times the sigmoid of the second half (a gated linear unit)."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input.dim())
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    _check_floating(input, "glu_cpu")
    a, b = np.split(input._np, 2, axis=d)
    compute = np.float32 if input.dtype in dtypes.REDUCED_FLOATS else a.dtype
    gate = 1 / (1 + np.exp(-b.astype(compute)))
    return _wrap(np.ascontiguousarray((a.astype(compute) * gate).astype(a.dtype)), input._device)


def glu_backward(grad, self, dim):
    """d/da = sigmoid(b), d/db = a sigmoid(b) (1 - sigmoid(b)): the two halves side by side."""
    a, b = self.chunk(2, dim)
    gate = b.sigmoid()
    return ops.cat([grad * gate, grad * a * gate * (1 - gate)], dim)


def glu_jvp(self_t, self, dim):
    a, b = self.chunk(2, dim)
    a_t, b_t = self_t.chunk(2, dim)
    gate = b.sigmoid()
    return a_t * gate + a * gate * (1 - gate) * b_t


def prelu(input, weight):
    """leaky_relu with a learned slope, one per channel (dim 1): torch reshapes the weight to
    (1, C, 1, ...) (a view, ViewBackward0) and runs _prelu_kernel."""
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_scalar_name(input.dtype)} and "
                           f"{_scalar_name(weight.dtype)}")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if input.dim() >= 2:
        shape = [1] * input.dim()
        shape[1] = weight.numel()
        weight = weight.reshape(shape)
    return ops._prelu_kernel(input, weight)


def _prelu_kernel(input, weight):
    a, w = input._np, weight._np
    return _elementwise_result(np.where(a > 0, a, w * a).astype(a.dtype), input._device, input)


def prelu_backward(grad, self, weight, grad_input_mask):
    """The input's gradient: grad where self > 0, else weight * grad; the weight's: self * grad
    where self <= 0, summed over what the weight was broadcast along."""
    positive = self > 0
    grad_self = ops.where(positive, grad, weight * grad) if grad_input_mask[0] else None
    grad_weight = None
    if grad_input_mask[1]:
        grad_weight = views.sum_to(ops.where(positive, ops.zeros((), dtype=grad.dtype), self * grad), weight.shape)
    return grad_self, grad_weight


def _check_floating(input, name):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{_scalar_name(input.dtype)}'")


def hardshrink(input, lambd=0.5):
    _check_floating(input, "hardshrink_cpu")
    return _apply(lambda a, l: np.where((a >= -l) & (a <= l), 0, a), input, lambd)


def softshrink(input, lambd=0.5):
    _check_floating(input, "softshrink_check")
    if not 0 <= lambd <= float(np.finfo(input._np.dtype).max):
        raise RuntimeError(f"lambda must be in range [0, {np.finfo(input._np.dtype).max:g}] for input dtype "
                           f"{_scalar_name(input.dtype)}, but found {lambd:g}")
    # (x * 0 in the middle: -0.0 for a negative x, as torch's kernel)
    return _apply(lambda a, l: np.where(a > l, a - l, np.where(a < -l, a + l, a * 0)), input, lambd)


def shrink_backward(grad_output, self, lambd):
    """hardshrink's and softshrink's backward: the gradient outside [-lambd, lambd], else 0."""
    a, g = self._np, grad_output._np
    return _wrap(np.where((a >= -lambd) & (a <= lambd), 0, g).astype(g.dtype), grad_output._device)


def mish(input):
    _check_floating(input, "mish_cpu")
    return _apply(lambda a: (a * np.tanh(np.log1p(np.exp(a.astype(np.float64))))).astype(a.dtype), input)


def softplus(input, beta=1.0, threshold=20.0):
    return _apply(lambda a, b, t: np.where(
        a * b > t, a, np.log1p(np.exp(np.minimum(a * b, t))) / b), input, beta, threshold)


def hardtanh(input, min_val=-1.0, max_val=1.0):
    return _apply(lambda a, lo, hi: np.clip(a, lo, hi), input, min_val, max_val)


def relu6(input):
    return ops.hardtanh(input, 0.0, 6.0)


def log_sigmoid(input):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), and torch's CPU ``buffer``: exp(-|x|)."""
    buffer = _apply(lambda a: np.exp(-np.abs(a)), input)
    out = _apply(lambda a, z: np.minimum(a, 0) - np.log1p(z), input, buffer._np)
    return out, buffer


# the backward ops of the piecewise-linear ones: ops of their own, as in torch, so that the
# gradient stays a function of the input (its own derivative in self is zero)
def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    return _wrap(np.where(self._np > 0, grad_output._np, grad_output._np * negative_slope), grad_output._device)


def hardtanh_backward(grad_output, self, min_val, max_val):
    a = self._np
    return _wrap(np.where((a <= min_val) | (a >= max_val), 0, grad_output._np).astype(grad_output._np.dtype),
                 grad_output._device)


# their slopes: the backward is ``grad * slope`` and the forward mode ``tangent * slope``
def gelu_slope(self, approximate="none"):
    x = self
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        inner = (k * (x + 0.044715 * x * x * x)).tanh()
        return 0.5 * (1 + inner) + 0.5 * x * (1 - inner * inner) * k * (1 + 3 * 0.044715 * x * x)
    return 0.5 * (1 + (x / math.sqrt(2)).erf()) + x * (-0.5 * x * x).exp() / math.sqrt(2 * math.pi)


def silu_slope(self):
    return self.sigmoid() * (1 + self * (1 - self.sigmoid()))


def elu_slope(self, alpha, scale=1.0, input_scale=1.0):
    return ops.where(self > 0, ops.full_like(self, scale), (self * input_scale).exp() * (alpha * scale * input_scale))


def elu_slope_from_result(result, alpha, scale=1.0, input_scale=1.0):
    """elu's slope read from its output (the in-place variant keeps only the output)."""
    return ops.where(result > 0, ops.full_like(result, scale), (result + alpha * scale) * input_scale)


def hardsigmoid_backward(grad_output, self):
    a = self._np
    return _wrap(np.where((a > -3) & (a < 3), grad_output._np / 6, 0).astype(grad_output._np.dtype),
                 grad_output._device)


def hardswish_backward(grad_output, self):
    a, g = self._np, grad_output._np
    # torch: 0 up to -3 included, grad from 3 included, the slope x/3 + 1/2 in between
    return _wrap(np.where(a <= -3, 0, np.where(a < 3, g * (a / 3 + 0.5), g)).astype(g.dtype), grad_output._device)


def hardswish_double_backward(grad, grad_output, self):
    # hardswish's slope x/3 + 1/2 changes at rate 1/3 between -3 and 3, and is flat outside
    inside = ops.logical_and(self > -3.0, self < 3.0)
    return ops.where(inside, grad * grad_output / 3.0, ops.zeros((), dtype=self.dtype))


def mish_slope(self):
    tanh_softplus = ops.softplus(self).tanh()
    return tanh_softplus + self * self.sigmoid() * (1 - tanh_softplus * tanh_softplus)


def softplus_slope(self, beta, threshold):
    return ops.where(self * beta > threshold, ops.ones_like(self), (self * beta).sigmoid())


def log_sigmoid_slope(self):
    return (-self).sigmoid()
