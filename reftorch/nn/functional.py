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


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout(input, p, training, inplace, batched_dims, alpha=False):
    """Zero whole channels: one mask value per (sample, channel), broadcast over the rest."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:batched_dims]) + (1,) * (input.dim() - batched_dims)
    if p == 1.0 and not alpha:
        return mul_(input, zeros_like(input)) if inplace else input * zeros_like(input)
    mask = bernoulli_mask(shape, 1 - p, input.dtype, input.device)
    if alpha:
        return _alpha_combine(input, mask, p, inplace)
    scaled = mask / (1 - p)
    return mul_(input, scaled) if inplace else input * scaled


_SELU_ALPHA = 1.7580993408473766  # -SELU's negative saturation value: where dropped units go


def _alpha_combine(input, mask, p, inplace):
    """Dropped units take SELU's saturation value, and an affine map keeps mean 0 and variance 1."""
    a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    b = (mask - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
    out = mul_(input, mask * a) if inplace else input * (mask * a)
    return out.add_(b) if inplace else out + b


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, L) or (C, L) inputs."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _unbatched(_feature_dropout, input, input.dim() == 3, p, training, inplace)


def _unbatched(dropout_fn, input, is_batched, p, training, inplace):
    # torch adds the missing batch dim and takes it off again (so eval returns a new view)
    if is_batched:
        return dropout_fn(input, p, training, inplace, 2)
    out = dropout_fn(input.unsqueeze(0), p, training, inplace, 2)
    return out.squeeze(0)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, H, W) inputs (a 3-D input is taken as (N, C, L), with
    torch's warning)."""
    _check_p(p)
    if input.dim() not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout2d exists to provide channel-wise dropout on "
                      "inputs with 2 spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", stacklevel=2)
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, D, H, W) or (C, D, H, W) inputs."""
    _check_p(p)
    if input.dim() not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout3d exists to provide channel-wise dropout on "
                      "inputs with 3 spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 4D or 5D inputs).", stacklevel=2)
    return _unbatched(_feature_dropout, input, input.dim() == 5, p, training, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped units saturate instead of zeroing, mean and variance kept."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * zeros_like(input)
    return _alpha_combine(input, bernoulli_mask(tuple(input.shape), 1 - p, input.dtype, input.device), p, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * zeros_like(input)
    return _feature_dropout(input, p, training, inplace, 2, alpha=True)


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


from .sparse import embedding, embedding_bag  # noqa: E402,F401  (public as nn.functional.embedding)
from .pooling import (  # noqa: E402,F401
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d,
)


def one_hot(tensor, num_classes=-1):
    n = int(tensor.max().item()) + 1 if num_classes < 0 else num_classes
    return _wrap(np.eye(n, dtype=np.int64)[tensor._np], tensor.device)


# forward mode: the norms computed on NumPy carry tangents by their rule, or refuse duals
layer_norm, batch_norm = forward_mode(layer_norm), forward_mode(batch_norm)
