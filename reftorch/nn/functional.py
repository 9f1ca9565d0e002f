"""nn.functional: the stateless forms of layers and losses.

As in torch, these are Python over the ATen ops of the tables (functions/native_functions.py):
they take the arguments Python users pass (``inplace=``, ``reduction='mean'``, the legacy
``size_average`` and ``reduce``) and call the op. ``linear`` is ``addmm(bias, input,
weight.t())``, exactly as torch computes it, so the graphs match (AddmmBackward0 with a
TBackward0 on the weight).
"""
from __future__ import annotations

import math
import warnings

from ..functions import ops
from ..functions.loss import reduction_enum
from ..functions import (  # noqa: F401  (public as nn.functional.conv2d, ...)
    avg_pool2d, conv2d, gelu, linear, max_pool2d, pad, sigmoid, softplus, tanh,
)
from ..functions.activations import selu_
from ..random import bernoulli_mask


def relu(input, inplace=False):
    return ops.relu_(input) if inplace else ops.relu(input)


def _in_place_or_not(input, out, inplace):
    return input.copy_(out) if inplace else out


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _in_place_or_not(input, ops.leaky_relu(input, negative_slope), inplace)


def silu(input, inplace=False):
    return _in_place_or_not(input, ops.silu(input), inplace)


def elu(input, alpha=1.0, inplace=False):
    return ops.elu_(input, alpha) if inplace else ops.elu(input, alpha)


def selu(input, inplace=False):
    return selu_(input) if inplace else ops.selu(input)


def celu(input, alpha=1.0, inplace=False):
    return ops.celu_(input, alpha) if inplace else ops.celu(input, alpha)


def hardsigmoid(input, inplace=False):
    return ops.hardsigmoid_(input) if inplace else ops.hardsigmoid(input)


def hardswish(input, inplace=False):
    return ops.hardswish_(input) if inplace else ops.hardswish(input)


def mish(input, inplace=False):
    return ops.mish_(input) if inplace else ops.mish(input)


def threshold(input, threshold, value, inplace=False):
    return ops.threshold_(input, threshold, value) if inplace else ops.threshold(input, threshold, value)


def prelu(input, weight):
    return ops.prelu(input, weight)


def glu(input, dim=-1):
    return ops.glu(input, dim)


def hardshrink(input, lambd=0.5):
    return ops.hardshrink(input, lambd)


def softshrink(input, lambd=0.5):
    return ops.softshrink(input, lambd)


def tanhshrink(input):
    return input - input.tanh()


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim("softmin", input.dim(), _stacklevel)
    return ops.softmax(-input, dim, dtype=dtype)


def softsign(input):
    return input / (input.abs() + 1)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _in_place_or_not(input, ops.hardtanh(input, min_val, max_val), inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def logsigmoid(input):
    return ops.log_sigmoid_forward(input)[0]


def _implicit_dim(name, ndim, stacklevel):
    """torch's old default for a softmax without ``dim``, with its warning."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
                  "dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim("softmax", input.dim(), _stacklevel)
    return ops.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim("log_softmax", input.dim(), _stacklevel)
    return ops.log_softmax(input, dim, dtype=dtype)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * ops.zeros_like(input)
    mask = bernoulli_mask(input.shape, 1 - p, input.dtype, input.device)
    scaled = mask / (1 - p)
    return ops.mul_(input, scaled) if inplace else input * scaled


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
        return ops.mul_(input, ops.zeros_like(input)) if inplace else input * ops.zeros_like(input)
    mask = bernoulli_mask(shape, 1 - p, input.dtype, input.device)
    if alpha:
        return _alpha_combine(input, mask, p, inplace)
    scaled = mask / (1 - p)
    return ops.mul_(input, scaled) if inplace else input * scaled


_SELU_ALPHA = 1.7580993408473766  # -SELU's negative saturation value: where dropped units go


def _alpha_combine(input, mask, p, inplace):
    """Dropped units take SELU's saturation value, and an affine map keeps mean 0 and variance 1."""
    a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    b = (mask - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
    out = ops.mul_(input, mask * a) if inplace else input * (mask * a)
    return ops.add_(out, b) if inplace else out + b


def _unbatched(dropout_fn, input, is_batched, p, training, inplace):
    # torch adds the missing batch dim and takes it off again (so eval returns a new view)
    if is_batched:
        return dropout_fn(input, p, training, inplace, 2)
    out = dropout_fn(input.unsqueeze(0), p, training, inplace, 2)
    return out.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, L) or (C, L) inputs."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _unbatched(_feature_dropout, input, input.dim() == 3, p, training, inplace)


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
        return input * ops.zeros_like(input)
    return _alpha_combine(input, bernoulli_mask(tuple(input.shape), 1 - p, input.dtype, input.device), p, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * ops.zeros_like(input)
    return _feature_dropout(input, p, training, inplace, 2, alpha=True)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) to mean 0 and variance 1, then scale and shift it (see
    functions/normalization.py); in training, the running statistics move towards the batch's."""
    return ops.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return ops.layer_norm(input, normalized_shape, weight, bias, eps)


from .sparse import embedding, embedding_bag  # noqa: E402,F401  (public as nn.functional.embedding)
from .pooling import (  # noqa: E402,F401
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d,
)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """torch.max_pool1d, or max_pool1d_with_indices with ``return_indices`` (torch's boolean dispatch)."""
    stride = [] if stride is None else stride
    if return_indices:
        return ops.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return ops.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return ops.avg_pool1d(input, kernel_size, [] if stride is None else stride, padding, ceil_mode,
                          count_include_pad)


def one_hot(tensor, num_classes=-1):
    return ops.one_hot(tensor, num_classes)


# -- losses: the reduction as torch's Python reads it, then the op ------------------------------
def _reduction(size_average, reduce, reduction):
    """The legacy ``size_average`` / ``reduce`` arguments win over ``reduction`` (with a
    warning), as torch's ``_Reduction.legacy_get_string``; the result is the op's enum."""
    if size_average is not None or reduce is not None:
        warnings.warn("size_average and reduce args will be deprecated, please use reduction='"
                      f"{_legacy(size_average, reduce)}' instead.", UserWarning, stacklevel=3)
        reduction = _legacy(size_average, reduce)
    return reduction_enum(reduction)


def _legacy(size_average, reduce):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return ("mean" if size_average else "sum") if reduce else "none"


def _warn_target_size(input, target):
    if input.shape != target.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _warn_target_size(input, target)
    return ops.mse_loss(input, target, _reduction(size_average, reduce, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean (or sum) of ``|input - target|``."""
    _warn_target_size(input, target)
    return ops.l1_loss(input, target, _reduction(size_average, reduce, reduction))


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Minus the input at each target's class (times the class's ``weight``); targets equal
    to ``ignore_index`` count for nothing. The class dim is 1 (0 for one unbatched row)."""
    return ops.nll_loss_nd(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax over classes, then the negative log-likelihood of the right class (or of
    the target's class probabilities); ``label_smoothing`` mixes in the uniform distribution."""
    return ops.cross_entropy_loss(input, target, weight, _reduction(size_average, reduce, reduction),
                                  ignore_index, label_smoothing)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log x + (1 - y) log(1 - x)) for probabilities x (each log kept above -100)."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    return ops.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(x), y), computed from the logit without overflow."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return ops.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)
