"""Normalization: batch norm and layer norm (torch's Normalization.cpp and layer_norm.cpp).

Each is one op with one node, as in torch (not a graph of means and divisions): the op
returns its output and the statistics backward needs (``native_batch_norm``'s save_mean
and save_invstd, ``native_layer_norm``'s mean and rstd), and the backward formulas after
each op compute every input's gradient from them.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _wrap, check_not_double
from .codegen import ops


def _channel_axes(input):
    """The dims batch norm reduces over (all but dim 1), and the shape that broadcasts a
    per-channel vector against the input: (N, C, L) -> (0, 2) and (1, C, 1)."""
    axes = (0,) + tuple(range(2, input.dim()))
    return axes, tuple(input.shape[1] if d == 1 else 1 for d in range(input.dim()))


def _verify_batch_size(size):
    if math.prod((size[0], *size[2:])) == 1:  # values per channel
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    """``torch.batch_norm``: torch's checks, then native_batch_norm's output."""
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
    return ops.native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Normalise each channel (dim 1) to mean 0 and variance 1, then scale and shift it.

    training=True: the batch's own mean and *biased* variance normalise it, and the running
    statistics (if given) move towards the batch's mean and *unbiased* variance by
    ``momentum``. training=False: the running statistics normalise it and nothing changes.
    Returns the output, the mean and the inverse standard deviation used."""
    axes, shape = _channel_axes(input)
    num_features = input.shape[1] if input.dim() > 1 else 0
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
    compute = np.dtype(np.float32) if input.dtype in (dtypes.float16, dtypes.bfloat16) else dtype
    alpha = invstd.astype(compute) * (1 if weight is None else weight._np.astype(compute))
    beta = (0 if bias is None else bias._np.astype(compute)) - mean.astype(compute) * alpha
    y = input._np.astype(compute) * alpha.reshape(shape) + beta.reshape(shape)
    if not training:  # torch saves nothing: backward reads the running statistics
        mean = invstd = np.empty(0)
    return (_wrap(y.astype(dtype), input.device), _wrap(np.asarray(mean, dtype=compute), input.device),
            _wrap(np.asarray(invstd, dtype=compute), input.device))


def batch_norm_backward(grad, input, weight, running_mean, running_var, training, eps, save_mean, save_invstd,
                        grad_input_mask):
    """With x̂ = (x - mean) * invstd and m values per channel (N times the positions):
    grad_bias = Σ g, grad_weight = Σ g·x̂, and, in training, where mean and invstd depend
    on x too, grad_x = weight·invstd/m · (m·g - Σ g - x̂·Σ g·x̂); in eval they are
    constants and grad_x = weight·invstd·g. Sums run over every dim but the channel dim."""
    check_not_double(grad, "NativeBatchNormBackward0", reads_inputs=True)
    axes, shape = _channel_axes(input)
    if training:
        mean, invstd = save_mean._np.astype(np.float64), save_invstd._np.astype(np.float64)
    else:
        mean = running_mean._np.astype(np.float64)
        invstd = 1 / np.sqrt(running_var._np.astype(np.float64) + eps)
    g = grad._np.astype(np.float64)
    x_hat = (input._np.astype(np.float64) - mean.reshape(shape)) * invstd.reshape(shape)
    sum_g, sum_g_x_hat = g.sum(axis=axes), (g * x_hat).sum(axis=axes)
    scale = invstd if weight is None else invstd * weight._np.astype(np.float64)
    if training:
        m = input.numel() // input.shape[1]
        grad_input = scale.reshape(shape) / m * (m * g - sum_g.reshape(shape) - x_hat * sum_g_x_hat.reshape(shape))
    else:
        grad_input = scale.reshape(shape) * g
    param_dtype = input._np.dtype if weight is None else weight._np.dtype
    return (_wrap(grad_input.astype(input._np.dtype), grad.device),
            _wrap(sum_g_x_hat.astype(param_dtype), grad.device) if grad_input_mask[1] else None,
            _wrap(sum_g.astype(param_dtype), grad.device) if grad_input_mask[2] else None)


def _normalized_shape(normalized_shape):
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """Normalise each sample over its last dims (``normalized_shape``) to mean 0 and variance 1,
    then scale by ``weight`` and shift by ``bias`` (element by element over those dims)."""
    return ops.native_layer_norm(input, _normalized_shape(normalized_shape), weight, bias, eps)[0]


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    shape = _normalized_shape(normalized_shape)
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
    return _wrap(y.astype(input._np.dtype), input.device), _wrap(mean, input.device), _wrap(rstd, input.device)


def layer_norm_backward(grad, input, normalized_shape, mean, rstd, weight, grad_input_mask):
    """With x̂ = (x - mean) * rstd over the normalised dims (m values per row) and ĝ = g * weight:
    grad_x = rstd * (ĝ - mean(ĝ) - x̂ * mean(ĝ x̂)), grad_weight = Σ g x̂, grad_bias = Σ g
    (the last two summed over every row)."""
    check_not_double(grad, "NativeLayerNormBackward0", reads_inputs=True)
    axes = tuple(range(input.dim() - len(_normalized_shape(normalized_shape)), input.dim()))
    compute = np.float64 if input._np.dtype == np.float64 else np.float32
    x_hat = (input._np.astype(compute) - mean._np) * rstd._np
    g = grad._np.astype(compute)
    g_hat = g if weight is None else g * weight._np.astype(compute)
    grad_input = rstd._np * (g_hat - g_hat.mean(axis=axes, keepdims=True)
                             - x_hat * (g_hat * x_hat).mean(axis=axes, keepdims=True))
    rows = tuple(range(input.dim() - len(axes)))
    param_dtype = input._np.dtype if weight is None else weight._np.dtype
    return (_wrap(grad_input.astype(input._np.dtype), grad.device),
            _wrap((g * x_hat).sum(axis=rows).astype(param_dtype), grad.device) if grad_input_mask[1] else None,
            _wrap(g.sum(axis=rows).astype(param_dtype), grad.device) if grad_input_mask[2] else None)


def layer_norm_jvp(input_t, weight_t, bias_t, input, normalized_shape, weight, bias, eps):
    dims = tuple(range(input.dim() - len(_normalized_shape(normalized_shape)), input.dim()))
    centred = input - input.mean(dims, keepdim=True)
    rstd = (centred.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    x_hat = centred * rstd
    d_centred = input_t - input_t.mean(dims, keepdim=True)
    d_x_hat = rstd * (d_centred - x_hat * (x_hat * d_centred).mean(dims, keepdim=True))
    tangent = d_x_hat if weight is None else d_x_hat * weight + x_hat * weight_t
    return tangent if bias is None else tangent + bias_t
