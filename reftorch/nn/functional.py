"""nn.functional: the stateless forms of layers and losses.

As in torch, these are Python over the ATen ops of the tables (functions/native_functions.py):
they take the arguments Python users pass (``inplace=``, ``reduction='mean'``, the legacy
``size_average`` and ``reduce``) and call the op. ``linear`` is ``addmm(bias, input,
weight.t())``, exactly as torch computes it, so the graphs match (AddmmBackward0 with a
TBackward0 on the weight).
"""
from __future__ import annotations

import warnings

from ..functions import ops
from ..functions.loss import reduction_enum
from ..functions import (  # noqa: F401  (public as nn.functional.conv2d, ...)
    avg_pool2d, conv2d, gelu, linear, max_pool2d, pad, sigmoid, softplus, tanh,
)
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
    return _in_place_or_not(input, ops.elu(input, alpha), inplace)


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


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) to mean 0 and variance 1, then scale and shift it (see
    functions/normalization.py); in training, the running statistics move towards the batch's."""
    return ops.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return ops.layer_norm(input, normalized_shape, weight, bias, eps)


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
