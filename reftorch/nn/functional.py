"""nn.functional: the stateless forms of layers and losses.

``linear`` is ``addmm(bias, input, weight.t())``, exactly as torch computes it, so the
graphs match (AddmmBackward0 with a TBackward0 on the weight). Convolution, pooling and
padding are in functions/convolution.py, the losses in losses.py; both are public here.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes
from ..autograd.graph import Node
from ..functions._support import _RawFormula
from ..functions import _needs_grad, _record, _wrap, addmm, forward_mode, matmul, mul_, relu_, zeros_like
from ..functions import log_softmax as _log_softmax
from ..functions import relu as _relu
from ..functions import softmax as _softmax
from ..functions import (  # noqa: F401  (public as nn.functional.conv2d, ...)
    avg_pool2d, conv2d, elu, gelu, hardtanh, leaky_relu, logsigmoid, max_pool2d, pad, relu6, sigmoid, silu,
    softplus, tanh,
)
from ..random import bernoulli_mask
from ..tensor import _scalar_type_name as _scalar_name
from .losses import (  # noqa: F401
    binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, l1_loss, mse_loss, nll_loss,
)


def linear(input, weight, bias=None):
    if input.dim() == 2 and bias is not None:
        return addmm(bias, input, weight.t())
    if bias is None:
        return matmul(input, weight.t())
    # fold the leading dims into rows, one addmm, then unfold (torch does the same)
    rows = input.reshape(-1, input.shape[-1])
    out = addmm(bias, rows, weight.t())
    return out.view(*input.shape[:-1], weight.shape[0])


def relu(input, inplace=False):
    return relu_(input) if inplace else _relu(input)


def _implicit_dim(name, ndim, stacklevel):
    """torch's old default for a softmax without ``dim``, with its warning."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
                  "dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim("softmax", input.dim(), _stacklevel)
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim("log_softmax", input.dim(), _stacklevel)
    return _log_softmax(input, dim, dtype=dtype)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * zeros_like(input)
    mask = bernoulli_mask(input.shape, 1 - p, input.dtype, input.device)
    scaled = mask / (1 - p)
    return mul_(input, scaled) if inplace else input * scaled


class NativeBatchNormBackward0(_RawFormula):
    """One node for input, weight and bias, as torch's (no graph of means and divisions).

    With x̂ = (x - mean) * invstd and m values per channel (N times the positions):
    grad_bias = Σ g, grad_weight = Σ g·x̂, and, in training, where mean and invstd depend
    on x too, grad_x = weight·invstd/m · (m·g - Σ g - x̂·Σ g·x̂); in eval they are
    constants and grad_x = weight·invstd·g. Sums run over every dim but the channel dim.
    """

    _reads_inputs = True   # (create_graph would lose the inputs' part)

    def backward(self, grad):
        self._check_not_double(grad)
        input, weight = self.saved_values
        axes, shape = _channel_axes(input)
        g = grad._np.astype(np.float64)
        x_hat = (input._np.astype(np.float64) - self._mean.reshape(shape)) * self._invstd.reshape(shape)
        sum_g, sum_g_x_hat = g.sum(axis=axes), (g * x_hat).sum(axis=axes)
        scale = self._invstd if weight is None else self._invstd * weight._np.astype(np.float64)
        if self._training:
            m = input.numel() // input.shape[1]
            grad_input = scale.reshape(shape) / m * (m * g - sum_g.reshape(shape) - x_hat * sum_g_x_hat.reshape(shape))
        else:
            grad_input = scale.reshape(shape) * g
        grads = [grad_input.astype(input._np.dtype)]
        grads.append(None if weight is None else sum_g_x_hat.astype(weight._np.dtype))
        grads.append(None if self._bias_dtype is None else sum_g.astype(self._bias_dtype))
        return tuple(None if a is None else _wrap(a, grad.device) for a in grads)


def _channel_axes(input):
    """The dims batch norm reduces over (all but dim 1), and the shape that broadcasts a
    per-channel vector against the input: (N, C, L) -> (0, 2) and (1, C, 1)."""
    axes = (0,) + tuple(range(2, input.dim()))
    return axes, tuple(input.shape[1] if d == 1 else 1 for d in range(input.dim()))


def _verify_batch_size(size):
    if math.prod((size[0], *size[2:])) == 1:  # values per channel
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) to mean 0 and variance 1, then scale and shift it.

    training=True: the batch's own mean and *biased* variance normalise it, and the running
    statistics (if given) move towards the batch's mean and *unbiased* variance by
    ``momentum``. training=False: the running statistics normalise it and nothing changes.
    """
    if training:
        _verify_batch_size(input.shape)
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if (running_mean is None) != (running_var is None) and training:
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    num_features = input.shape[1] if input.dim() > 1 else 0
    for name, t in [("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)]:
        if t is not None and t.numel() != num_features:
            raise RuntimeError(f"{name} should contain {num_features} elements not {t.numel()}")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"batch_norm\" not implemented for '{_scalar_name(input.dtype)}'")
    # float32 statistics under a float16/bfloat16 input are allowed (autocast makes them)
    low_precision_input = input.dtype in (dtypes.float16, dtypes.bfloat16)
    for t in (weight, bias, running_mean, running_var):
        if t is not None and t.dtype is not input.dtype and not (low_precision_input and t.dtype is dtypes.float32):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    if not training:
        for name, t in [("running_mean", running_mean), ("running_var", running_var)]:
            if t is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")

    axes, shape = _channel_axes(input)
    if training and input.numel() > 0:
        x = input._np.astype(np.float64)  # statistics are accumulated in double, as torch's CPU kernel does
        mean, biased_var = x.mean(axis=axes), x.var(axis=axes)
        invstd = 1 / np.sqrt(biased_var + eps)
        if running_mean is not None:
            m = input.numel() // num_features
            unbiased_var = biased_var * m / (m - 1)
            # written into the buffers directly: torch's kernel does not bump their version
            running_mean._np[...] = momentum * mean + (1 - momentum) * running_mean._np
            running_var._np[...] = momentum * unbiased_var + (1 - momentum) * running_var._np
    elif training:  # an empty batch: nothing to measure, nothing to update
        mean, invstd = np.zeros(num_features), np.zeros(num_features)
    else:
        mean = running_mean._np.astype(np.float64)
        invstd = 1 / np.sqrt(running_var._np.astype(np.float64) + eps)
    # folded into one multiply-add per element, y = x * alpha + beta, as torch's kernel does;
    # a 16-bit input is computed in float32 and rounded once at the end
    dtype = input._np.dtype
    compute = np.dtype(np.float32) if low_precision_input else dtype
    alpha = invstd.astype(compute) * (1 if weight is None else weight._np.astype(compute))
    beta = (0 if bias is None else bias._np.astype(compute)) - mean.astype(compute) * alpha
    y = input._np.astype(compute) * alpha.reshape(shape) + beta.reshape(shape)
    out = _wrap(y.astype(dtype), input.device)
    if _needs_grad(input, weight, bias):
        node = NativeBatchNormBackward0()
        node.save(input, weight)
        node._mean, node._invstd, node._training = mean, invstd, training
        node._bias_dtype = None if bias is None else bias._np.dtype
        _record(node, (input, weight, bias), out)
    return out


class NativeLayerNormBackward0(_RawFormula):
    """With x̂ = (x - mean) * rstd over the normalised dims (m values per row) and ĝ = g * weight:
    grad_x = rstd * (ĝ - mean(ĝ) - x̂ * mean(ĝ x̂)), grad_weight = Σ g x̂, grad_bias = Σ g
    (the last two summed over every row)."""

    _reads_inputs = True   # (create_graph would lose the inputs' part)
    _saved_names = ("input", "weight", "bias", "mean", "rstd")

    def backward(self, grad):
        self._check_not_double(grad)
        input, weight, bias = self.saved_values
        axes = self._axes
        compute = np.float64 if input._np.dtype == np.float64 else np.float32
        x_hat = (input._np.astype(compute) - self._mean) * self._rstd
        g = grad._np.astype(compute)
        g_hat = g if weight is None else g * weight._np.astype(compute)
        grad_input = self._rstd * (g_hat - g_hat.mean(axis=axes, keepdims=True)
                                   - x_hat * (g_hat * x_hat).mean(axis=axes, keepdims=True))
        rows = tuple(range(input.dim() - len(axes)))
        grads = [_wrap(grad_input.astype(input._np.dtype), grad.device)]
        grads.append(None if weight is None else _wrap((g * x_hat).sum(axis=rows).astype(weight._np.dtype), grad.device))
        grads.append(None if bias is None else _wrap(g.sum(axis=rows).astype(bias._np.dtype), grad.device))
        return tuple(grads)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise each sample over its last dims (``normalized_shape``) to mean 0 and variance 1,
    then scale by ``weight`` and shift by ``bias`` (element by element over those dims)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.dim() - len(shape):]) != shape or input.dim() < len(shape):
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, {', '.join(map(str, shape))}], "
            f"but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                               f"shape {list(t.shape)} and normalized_shape = {list(shape)}")
    axes = tuple(range(input.dim() - len(shape), input.dim()))
    compute = np.float64 if input._np.dtype == np.float64 else np.float32  # 16-bit floats in float32
    x = input._np.astype(compute)
    mean = x.mean(axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + compute(eps))
    y = (x - mean) * rstd
    if weight is not None:
        y = y * weight._np.astype(compute)
    if bias is not None:
        y = y + bias._np.astype(compute)
    out = _wrap(y.astype(input._np.dtype), input.device)
    if _needs_grad(input, weight, bias):
        node = NativeLayerNormBackward0()
        node.save(input, weight, bias)
        node._axes, node._mean, node._rstd = axes, mean, rstd
        node._saved_normalized_shape = list(shape)
        _record(node, (input, weight, bias), out)
    return out


def _layer_norm_tangent(t, out, input, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    dims = tuple(range(input.dim() - len(shape), input.dim()))
    centred = input - input.mean(dims, keepdim=True)
    rstd = (centred.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    x_hat = centred * rstd
    d_centred = t(input) - t(input).mean(dims, keepdim=True)
    d_x_hat = rstd * (d_centred - x_hat * (x_hat * d_centred).mean(dims, keepdim=True))
    tangent = d_x_hat if weight is None else d_x_hat * weight + x_hat * t(weight)
    return tangent if bias is None else tangent + t(bias)


layer_norm.jvp = _layer_norm_tangent


def one_hot(tensor, num_classes=-1):
    n = int(tensor.max().item()) + 1 if num_classes < 0 else num_classes
    return _wrap(np.eye(n, dtype=np.int64)[tensor._np], tensor.device)


# forward mode: the norms computed on NumPy carry tangents by their rule, or refuse duals
layer_norm, batch_norm = forward_mode(layer_norm), forward_mode(batch_norm)
