"""Losses: mse, negative log-likelihood, cross-entropy, binary cross-entropy (torch's Loss.cpp).

These are the ATen ops under ``nn.functional``: ``reduction`` is torch's enum (0 none, 1 mean,
2 sum; nn.functional turns 'mean' into 1). The helpers after each op are its backward
formulas, for derivatives.py.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes, kernels
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _wrap, check_not_double
from .codegen import ops

NONE, MEAN, SUM = 0, 1, 2
REDUCTIONS = {"none": NONE, "mean": MEAN, "sum": SUM}


def reduction_enum(reduction: str) -> int:
    """'mean' -> 1, as torch's ``_Reduction.get_enum``."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return REDUCTIONS[reduction]


def _reduce(losses: np.ndarray, reduction: int) -> np.ndarray:
    """Per-element losses -> what ``reduction`` asks for."""
    if reduction == MEAN:  # torch's loss.mean() / loss.sum(): its CPU kernels' order of additions
        return kernels.mean(losses, None, False)
    if reduction == SUM:
        return kernels.sum_(losses, None, False, losses.dtype)
    return losses


def apply_reduction(losses, reduction: int):
    """The same with tensor ops (for losses built from ops)."""
    return losses.mean() if reduction == MEAN else losses.sum() if reduction == SUM else losses


# -- regression ------------------------------------------------------------------------------
def mse_loss(input, target, reduction=MEAN):
    common = dtypes.result_type(input, target)
    if not common.is_floating_point:
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{_scalar_name(common)}'")
    diff = input._np.astype(common.numpy, copy=False) - target._np.astype(common.numpy, copy=False)
    return _wrap(_reduce(diff * diff, reduction), input.device)


def mse_loss_backward(grad, self, target, reduction):
    diff = self - target
    scale = 2 / diff.numel() if reduction == MEAN else 2
    return diff * grad * scale


def mse_loss_jvp(self_t, target_t, self, target, reduction):
    return apply_reduction(2 * (self - target) * (self_t - target_t), reduction)


def l1_loss(input, target, reduction=MEAN):
    """Mean (or sum) of ``|input - target|``, built from ops as torch builds it."""
    return apply_reduction((input - target).abs(), reduction)


# -- classification: negative log-likelihood and cross-entropy --------------------------------
def _check_nll_target(input, target, weight):
    """torch's checks, in its order: dims and batch size, target shape, then target dtype."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    target_batch = target.shape[0] if target.dim() else 0
    if input.dim() != 1 and input.shape[0] != target_batch:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target_batch}).")
    if input.dim() == 1 and target.dim() == 1 and target.shape[0] != 1:
        raise ValueError(
            f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
    if input.dim() > 2:
        expected = (input.shape[0],) + tuple(input.shape[2:])
        if tuple(target.shape) != expected:
            raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")
    elif target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.dtype not in (dtypes.int64, dtypes.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {_scalar_name(target.dtype)}")
    classes = input.shape[0 if input.dim() == 1 else 1]
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes "
                           f"but got weight tensor of shape: {list(weight.shape)}")


def nll_loss_nd(input, target, weight=None, reduction=MEAN, ignore_index=-100):
    """Minus the input at each target's class (times the class's ``weight``); targets equal
    to ``ignore_index`` count for nothing. The class dim is 1 (0 for one unbatched row)."""
    _check_nll_target(input, target, weight)
    if input.dim() == 3 or input.dim() > 4:
        # torch folds the trailing dims into one (a view) and runs the 4-D (N, C, H, W) loss
        n, c = input.shape[0], input.shape[1]
        out = ops.nll_loss2d_forward(ops.view(ops.contiguous(input), n, c, 1, -1),
                                     ops.view(ops.contiguous(target), n, 1, -1), weight, reduction, ignore_index)[0]
        return ops.view(out, target.shape) if reduction == NONE else out
    forward = ops.nll_loss2d_forward if input.dim() == 4 else ops.nll_loss_forward
    return forward(input, target, weight, reduction, ignore_index)[0]


def _target_weights(input, target, weight, ignore_index):
    class_dim = 0 if input.dim() == 1 else 1
    c = input.shape[class_dim]
    kept = target._np != ignore_index
    safe = np.where(kept, target._np, 0).astype(np.int64)
    class_weights = np.ones(c, dtype=input._np.dtype) if weight is None else weight._np
    return class_dim, safe, np.where(kept, class_weights[safe], 0).astype(input._np.dtype)


def nll_loss_forward(input, target, weight, reduction, ignore_index):
    """The loss, and the total weight of the targets counted (what 'mean' divides by)."""
    class_dim = 0 if input.dim() == 1 else 1
    c = input.shape[class_dim]
    t = target._np.astype(np.int64).reshape(-1 if input.dim() > 1 else 1)
    bad = t[(t != ignore_index) & ((t < 0) | (t >= c))]
    if bad.size:
        raise IndexError(f"Target {int(bad[0])} is out of bounds.")
    class_dim, safe, target_weights = _target_weights(input, target, weight, ignore_index)
    if input.dim() == 2:  # (N, C): one class per row, picked by plain indexing
        values = -input._np[np.arange(input.shape[0]), safe]
    else:
        picked = np.expand_dims(safe, class_dim) if input.dim() > 1 else safe.reshape(1)
        values = -np.take_along_axis(input._np, picked, axis=class_dim)
        values = values.squeeze(class_dim) if input.dim() > 1 else values.reshape(())
    losses = values * target_weights
    total_weight = target_weights.sum(dtype=input._np.dtype)
    if reduction == MEAN:
        result = np.asarray(losses.sum(dtype=losses.dtype) / total_weight, dtype=input._np.dtype)
    else:
        result = _reduce(losses, reduction)
    return _wrap(result, input.device), _wrap(np.asarray(total_weight), input.device)


def nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight):
    """Each kept target's class gets minus the incoming gradient times its class weight
    (divided by the total weight for 'mean'); every other entry of the input gets zero."""
    check_not_double(grad, "NllLossBackward0")
    class_dim, safe, weights = _target_weights(self, target, weight, ignore_index)
    g = grad._np
    values = -g * weights / total_weight._np if reduction == MEAN else -g * weights
    shape = tuple(self.shape)
    out = np.zeros(shape, dtype=g.dtype)
    if len(shape) == 2:  # (N, C): one class per row, picked by plain indexing
        out[np.arange(shape[0]), safe] = values
        return _wrap(out, grad.device)
    picked = np.expand_dims(safe, class_dim) if len(shape) > 1 else safe.reshape(1)
    values = np.broadcast_to(values, weights.shape)
    values = np.expand_dims(values, class_dim) if len(shape) > 1 else values.reshape(1)
    np.put_along_axis(out, picked, values, axis=class_dim)
    return _wrap(out, grad.device)


def _class_weight_view(weight, input, class_dim):
    shape = [1] * input.dim()
    shape[class_dim] = weight.numel()
    return ops.view(weight, shape)


def cross_entropy_loss(input, target, weight=None, reduction=MEAN, ignore_index=-100, label_smoothing=0.0):
    """log_softmax over classes, then the negative log-likelihood of the right class.

    A float target shaped like the input holds class probabilities instead of indices.
    ``label_smoothing`` mixes the target with the uniform distribution over the C classes."""
    class_dim = 0 if input.dim() == 1 else 1
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
    log_probs = ops.log_softmax(input, class_dim)
    classes = input.shape[class_dim]
    if tuple(input.shape) == tuple(target.shape):
        if not target.is_floating_point():
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{_scalar_name(target.dtype)}")
        if label_smoothing > 0:
            target = ops._add_scalar(ops._mul_scalar(target, 1 - label_smoothing), label_smoothing / classes)
        weighted = log_probs * target if weight is None else \
            log_probs * target * _class_weight_view(weight, input, class_dim)
        if reduction == MEAN:
            n_rows = input.numel() // input.shape[class_dim] if input.numel() else 1
            return ops._div_scalar(-weighted.sum(), n_rows)
        if reduction == SUM:
            return -weighted.sum()
        return -weighted.sum(class_dim)
    nll = ops.nll_loss_nd(log_probs, target, weight, reduction, ignore_index)
    if label_smoothing <= 0:
        return nll
    # the smoothing term: minus the (weighted) sum of all classes' log-probabilities
    ignored = target == ignore_index
    smooth = -(log_probs if weight is None else log_probs * _class_weight_view(weight, input, class_dim)).sum(class_dim)
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == MEAN:
        kept = ~ignored
        smooth = smooth.sum() / (kept.sum() if weight is None else weight.gather(0, target.masked_select(kept).reshape(-1)).sum())
    elif reduction == SUM:
        smooth = smooth.sum()
    return ops._mul_scalar(nll, 1 - label_smoothing) + ops._mul_scalar(smooth, label_smoothing / classes)


# -- binary classification ----------------------------------------------------------------------
def _check_probabilities(a, b):
    """torch's kernel checks element by element, input before target: the first bad one speaks."""
    bad_input = np.flatnonzero(~((a >= 0) & (a <= 1)))
    bad_target = np.flatnonzero(~((b >= 0) & (b <= 1)))
    first_input = bad_input[0] if bad_input.size else None
    first_target = bad_target[0] if bad_target.size else None
    if first_input is not None and (first_target is None or first_input <= first_target):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if first_target is not None:
        raise RuntimeError("all elements of target should be between 0 and 1")


def binary_cross_entropy(input, target, weight=None, reduction=MEAN):
    """-(y log x + (1 - y) log(1 - x)) for probabilities x (each log kept above -100)."""
    a, b = input._np, target._np
    _check_probabilities(a, b)
    with np.errstate(divide="ignore"):
        losses = -(b * np.maximum(np.log(a), -100) + (1 - b) * np.maximum(np.log1p(-a), -100))
    if weight is not None:
        losses = losses * weight._np
    return _wrap(_reduce(losses.astype(a.dtype), reduction), input.device)


def binary_cross_entropy_backward(grad, self, target, weight, reduction):
    """d/dx of -(y log x + (1 - y) log(1 - x)) is (x - y) / (x (1 - x)), kept away from 0/0;
    d/dy is log(1 - x) - log(x)."""
    check_not_double(grad, "BinaryCrossEntropyBackward0", reads_inputs=True)
    g = grad._np / (self.numel() if reduction == MEAN else 1)
    a, b = self._np, target._np
    grad_x = g * (a - b) / np.maximum((1 - a) * a, 1e-12)
    grad_y = g * (np.maximum(np.log1p(-a), -100) - np.maximum(np.log(a), -100))
    if weight is not None:
        grad_x, grad_y = grad_x * weight._np, grad_y * weight._np
    return _wrap(grad_x.astype(a.dtype), grad.device), _wrap(grad_y.astype(a.dtype), grad.device)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=MEAN):
    """binary_cross_entropy(sigmoid(x), y), computed from the logit without overflow:
    (1 - y) x - lw log(sigmoid(x)) with lw = 1 + (pos_weight - 1) y."""
    a, b = input._np, target._np
    log_sigmoid = np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((pos_weight._np - 1) * b + 1)
    losses = (1 - b) * a - log_sigmoid
    if weight is not None:
        losses = losses * weight._np
    return _wrap(_reduce(np.asarray(losses, dtype=a.dtype), reduction), input.device)


def binary_cross_entropy_with_logits_backward(grad, self, target, weight, pos_weight, reduction):
    """With lw = 1 + (pos_weight - 1) y: d/dx = (1 - y) - lw (1 - sigmoid(x)),
    d/dy = -x - (pos_weight - 1) log(sigmoid(x))."""
    check_not_double(grad, "BinaryCrossEntropyWithLogitsBackward0", reads_inputs=True)
    g = grad._np / (self.numel() if reduction == MEAN else 1)
    a, b = self._np, target._np
    sigmoid = 1 / (1 + np.exp(-a))
    log_sigmoid = np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))
    pw = 1 if pos_weight is None else pos_weight._np
    grad_x = g * ((1 - b) - (1 + (pw - 1) * b) * (1 - sigmoid))
    grad_y = g * (-a - (pw - 1) * log_sigmoid)
    if weight is not None:
        grad_x, grad_y = grad_x * weight._np, grad_y * weight._np
    return _wrap(grad_x.astype(a.dtype), grad.device), _wrap(grad_y.astype(a.dtype), grad.device)
