"""Loss functions (the functional forms; the Module forms are in layers.py).

mse_loss, nll_loss, binary_cross_entropy and binary_cross_entropy_with_logits record one
node each, as torch's do; cross_entropy is log_softmax then nll_loss (plus, with label
smoothing, a term built from tensor ops, as torch builds it); l1_loss is built from ops too.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes
from ..autograd.graph import Node
from ..functions._support import _RawFormula
from ..functions import _needs_grad, _record, _wrap, forward_mode, log_softmax
from ..tensor import _scalar_type_name as _scalar_name

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(losses: np.ndarray, reduction: str) -> np.ndarray:
    """Per-element losses -> what ``reduction`` asks for ('mean', 'sum' or 'none')."""
    _check_reduction(reduction)
    if reduction == "mean":
        return np.asarray(losses.mean(dtype=losses.dtype))
    if reduction == "sum":
        return np.asarray(losses.sum(dtype=losses.dtype))
    return losses


def _apply_reduction(losses, reduction):
    """The same with tensor ops (for losses built from ops)."""
    _check_reduction(reduction)
    return losses.mean() if reduction == "mean" else losses.sum() if reduction == "sum" else losses


# -- regression ------------------------------------------------------------------------------
class MseLossBackward0(Node):
    _saved_names = ("self", "target")

    def backward(self, grad):
        input, target = self.saved_values
        diff = input - target
        scale = 2 / diff.numel() if self._reduction == "mean" else 2
        g = diff * grad * scale
        return g, -g


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if input.shape != target.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=2)
    common = dtypes.result_type(input, target)
    if not common.is_floating_point:
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{_scalar_name(common)}'")
    diff = input._np.astype(common.numpy, copy=False) - target._np.astype(common.numpy, copy=False)
    out = _wrap(_reduce(diff * diff, reduction), input.device)
    if _needs_grad(input, target):
        node = MseLossBackward0()
        node._reduction = reduction
        node.save(input, target)
        _record(node, (input, target), out)
    return out


mse_loss.jvp = lambda t, out, input, target, size_average=None, reduce=None, reduction="mean": _apply_reduction(
    2 * (input - target) * (t(input) - t(target)), reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean (or sum) of ``|input - target|``, built from ops as torch builds it."""
    if input.shape != target.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=2)
    return _apply_reduction((input - target).abs(), reduction)


# -- classification: negative log-likelihood and cross-entropy --------------------------------
class NllLossBackward0(_RawFormula):
    """Each kept target's class gets minus the incoming gradient times its class weight
    (divided by the total weight for 'mean'); every other entry of the input gets zero."""

    _saved_names = ("target",)

    def backward(self, grad):
        (target,) = self.saved_values
        self._check_not_double(grad)
        picked = np.expand_dims(target._np, self._class_dim)
        g = grad._np
        weights = self._target_weights
        values = -g * weights / self._total_weight if self._reduction == "mean" else -g * weights
        out = np.zeros(self._shape, dtype=g.dtype)
        if len(self._shape) == 2:  # (N, C): one class per row, picked by plain indexing
            out[np.arange(self._shape[0]), np.where(target._np == self._ignore_index, 0, target._np)] = values
            return (_wrap(out, grad.device),)
        values = np.expand_dims(np.broadcast_to(values, weights.shape), self._class_dim)
        np.put_along_axis(out, np.where(picked == self._ignore_index, 0, picked), values, axis=self._class_dim)
        return (_wrap(out, grad.device),)


class NllLoss2DBackward0(NllLossBackward0):  # inputs with dims after the class dim
    pass


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


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Minus the input at each target's class (times the class's ``weight``); targets equal
    to ``ignore_index`` count for nothing. The class dim is 1 (0 for one unbatched row)."""
    _check_nll_target(input, target, weight)
    _check_reduction(reduction)
    if weight is not None and _needs_grad(weight):
        raise RuntimeError("The function 'nll_loss_forward' is not differentiable with respect to argument "
                           "'weight'. This input cannot have requires_grad True.")
    if input.dim() == 3 or input.dim() > 4:
        # torch folds the trailing dims into one (a view) and runs the 4-D (N, C, H, W) loss
        n, c = input.shape[0], input.shape[1]
        out = nll_loss(input.contiguous().view(n, c, 1, -1), target.contiguous().view(n, 1, -1),
                       weight, ignore_index=ignore_index, reduction=reduction)
        return out.view(target.shape) if reduction == "none" else out
    class_dim = 0 if input.dim() == 1 else 1
    c = input.shape[class_dim]
    t = target._np.astype(np.int64).reshape(-1 if input.dim() > 1 else 1)
    bad = t[(t != ignore_index) & ((t < 0) | (t >= c))]
    if bad.size:
        raise IndexError(f"Target {int(bad[0])} is out of bounds.")
    kept = target._np != ignore_index
    safe = np.where(kept, target._np, 0).astype(np.int64)
    if input.dim() == 2:  # (N, C): one class per row, picked by plain indexing
        values = -input._np[np.arange(input.shape[0]), safe]
    else:
        picked = np.expand_dims(safe, class_dim) if input.dim() > 1 else safe.reshape(1)
        values = -np.take_along_axis(input._np, picked, axis=class_dim)
        values = values.squeeze(class_dim) if input.dim() > 1 else values.reshape(())
    class_weights = np.ones(c, dtype=input._np.dtype) if weight is None else weight._np
    target_weights = np.where(kept, class_weights[safe], 0).astype(input._np.dtype)
    losses = values * target_weights
    total_weight = target_weights.sum(dtype=input._np.dtype)
    if reduction == "mean":
        result = np.asarray(losses.sum(dtype=losses.dtype) / total_weight, dtype=input._np.dtype)
    else:
        result = _reduce(losses, reduction)
    out = _wrap(result, input.device)
    if _needs_grad(input):
        node = NllLoss2DBackward0() if input.dim() > 2 else NllLossBackward0()
        node._shape, node._class_dim, node._reduction = tuple(input.shape), class_dim, reduction
        node._target_weights, node._total_weight, node._ignore_index = target_weights, total_weight, ignore_index
        node._saved_ignore_index, node._saved_reduction = ignore_index, reduction
        node.save(target if input.dim() > 1 else target.reshape(()))
        _record(node, (input,), out)
    return out


def _nll_tangent(t, out, input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
    # linear in the input: the same loss of the tangent
    return nll_loss(t(input), target, weight, ignore_index=ignore_index, reduction=reduction)


nll_loss.jvp = _nll_tangent


class DivBackward1(Node):  # division by a number inside an op (torch's div.Scalar)
    def backward(self, grad):
        return (grad / self._saved_other,)


def _divide_by_number(total, number):
    out = _wrap(np.asarray(total._np / number, dtype=total._np.dtype), total.device)
    if _needs_grad(total):
        node = DivBackward1()
        node._saved_other = number
        _record(node, (total,), out)
    return out


class MulBackward1(Node):  # multiplication by a number inside an op (torch's mul.Scalar)
    def backward(self, grad):
        return (grad * self._saved_other,)


def _scale_by_number(total, number):
    out = _wrap(np.asarray(total._np * number, dtype=total._np.dtype), total.device)
    if _needs_grad(total):
        node = MulBackward1()
        node._saved_other = number
        _record(node, (total,), out)
    return out


class AddBackward1(Node):  # a number added inside an op (torch's add.Scalar)
    def backward(self, grad):
        return (grad,)


def _add_number(total, number):
    out = _wrap(np.asarray(total._np + number, dtype=total._np.dtype), total.device)
    if _needs_grad(total):
        _record(AddBackward1(), (total,), out)
    return out


def _class_weight_view(weight, input, class_dim):
    shape = [1] * input.dim()
    shape[class_dim] = weight.numel()
    return weight.view(shape)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax over classes, then the negative log-likelihood of the right class.

    A float target shaped like the input holds class probabilities instead of indices.
    ``label_smoothing`` mixes the target with the uniform distribution over the C classes."""
    class_dim = 0 if input.dim() == 1 else 1
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    log_probs = log_softmax(input, class_dim)
    classes = input.shape[class_dim]
    if tuple(input.shape) == tuple(target.shape):
        if not target.is_floating_point():
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{_scalar_name(target.dtype)}")
        _check_reduction(reduction)
        if label_smoothing > 0:
            target = _add_number(_scale_by_number(target, 1 - label_smoothing), label_smoothing / classes)
        weighted = log_probs * target if weight is None else log_probs * target * _class_weight_view(weight, input, class_dim)
        if reduction == "mean":
            n_rows = input.numel() // input.shape[class_dim] if input.numel() else 1
            return _divide_by_number(-weighted.sum(), n_rows)
        if reduction == "sum":
            return -weighted.sum()
        return -weighted.sum(class_dim)
    nll = nll_loss(log_probs, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    # the smoothing term: minus the (weighted) sum of all classes' log-probabilities
    ignored = target == ignore_index
    smooth = -(log_probs if weight is None else log_probs * _class_weight_view(weight, input, class_dim)).sum(class_dim)
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == "mean":
        kept = ~ignored
        smooth = smooth.sum() / (kept.sum() if weight is None else weight.gather(0, target.masked_select(kept).reshape(-1)).sum())
    elif reduction == "sum":
        smooth = smooth.sum()
    return _scale_by_number(nll, 1 - label_smoothing) + _scale_by_number(smooth, label_smoothing / classes)


# -- binary classification ----------------------------------------------------------------------
class BinaryCrossEntropyBackward0(_RawFormula):
    """d/dx of -(y log x + (1 - y) log(1 - x)) is (x - y) / (x (1 - x)), kept away from 0/0."""

    _reads_inputs = True   # (create_graph would lose the inputs' part)
    _saved_names = ("self", "target", "weight")

    def backward(self, grad):
        x, y, weight = self.saved_values
        self._check_not_double(grad)
        g = grad._np / (x.numel() if self._reduction == "mean" else 1)
        a, b = x._np, y._np
        grad_x = g * (a - b) / np.maximum((1 - a) * a, 1e-12)
        grad_y = g * (np.maximum(np.log1p(-a), -100) - np.maximum(np.log(a), -100))
        if weight is not None:
            grad_x, grad_y = grad_x * weight._np, grad_y * weight._np
        dtype = a.dtype
        return _wrap(grad_x.astype(dtype), grad.device), _wrap(grad_y.astype(dtype), grad.device)


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


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log x + (1 - y) log(1 - x)) for probabilities x (each log kept above -100)."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    a, b = input._np, target._np
    _check_probabilities(a, b)
    with np.errstate(divide="ignore"):
        losses = -(b * np.maximum(np.log(a), -100) + (1 - b) * np.maximum(np.log1p(-a), -100))
    if weight is not None:
        losses = losses * weight._np
    out = _wrap(_reduce(losses.astype(a.dtype), reduction), input.device)
    if weight is not None and _needs_grad(weight):
        raise RuntimeError("The function 'binary_cross_entropy' is not differentiable with respect to "
                           "argument 'weight'. This input cannot have requires_grad True.")
    if _needs_grad(input, target, weight):
        node = BinaryCrossEntropyBackward0()
        node._reduction = reduction
        node.save(input, target, weight)
        _record(node, (input, target), out)
    return out


class BinaryCrossEntropyWithLogitsBackward0(_RawFormula):
    """With lw = 1 + (pos_weight - 1) y: d/dx = (1 - y) - lw (1 - sigmoid(x)),
    d/dy = -x - (pos_weight - 1) log(sigmoid(x))."""

    _reads_inputs = True   # (create_graph would lose the inputs' part)
    _saved_names = ("self", "target", "weight", "pos_weight")

    def backward(self, grad):
        x, y, weight, pos_weight = self.saved_values
        self._check_not_double(grad)
        g = grad._np / (x.numel() if self._reduction == "mean" else 1)
        a, b = x._np, y._np
        sigmoid = 1 / (1 + np.exp(-a))
        log_sigmoid = np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))
        pw = 1 if pos_weight is None else pos_weight._np
        grad_x = g * ((1 - b) - (1 + (pw - 1) * b) * (1 - sigmoid))
        grad_y = g * (-a - (pw - 1) * log_sigmoid)
        if weight is not None:
            grad_x, grad_y = grad_x * weight._np, grad_y * weight._np
        dtype = a.dtype
        return _wrap(grad_x.astype(dtype), grad.device), _wrap(grad_y.astype(dtype), grad.device)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(x), y), computed from the logit without overflow:
    (1 - y) x - lw log(sigmoid(x)) with lw = 1 + (pos_weight - 1) y."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    a, b = input._np, target._np
    log_sigmoid = np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((pos_weight._np - 1) * b + 1)
    losses = (1 - b) * a - log_sigmoid
    if weight is not None:
        losses = losses * weight._np
    out = _wrap(_reduce(np.asarray(losses, dtype=a.dtype), reduction), input.device)
    for name, t in (("weight", weight), ("pos_weight", pos_weight)):
        if t is not None and t.requires_grad and _needs_grad(t):
            raise RuntimeError(f"The function 'binary_cross_entropy_with_logits' is not differentiable with "
                               f"respect to argument '{name}'. This input cannot have requires_grad True.")
    if _needs_grad(input, target, weight, pos_weight):
        node = BinaryCrossEntropyWithLogitsBackward0()
        node._reduction = reduction
        node.save(input, target, weight, pos_weight)
        _record(node, (input, target), out)
    return out


# forward mode: the losses computed on NumPy carry tangents by their rule, or refuse duals
mse_loss, nll_loss, binary_cross_entropy, binary_cross_entropy_with_logits = (
    forward_mode(f) for f in (mse_loss, nll_loss, binary_cross_entropy, binary_cross_entropy_with_logits))
