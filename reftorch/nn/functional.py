"""nn.functional: the stateless forms of layers and losses.

``linear`` is ``addmm(bias, input, weight.t())``, exactly as torch computes it, so the
graphs match (AddmmBackward0 with a TBackward0 on the weight). The two losses record one
node each (MseLossBackward0, NllLossBackward0), as torch's do.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..autograd.graph import Node
from ..functions import _needs_grad, _record, _wrap, addmm, matmul, mul_, relu_, zeros_like
from ..functions import relu as _relu
from ..functions import log_softmax, sigmoid, softmax, tanh  # noqa: F401  (public as nn.functional.softmax, ...)
from ..tensor import _scalar_type_name as _scalar_name
from ..random import bernoulli_mask


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


class NativeBatchNormBackward0(Node):
    """One node for input, weight and bias, as torch's (no graph of means and divisions).

    With x̂ = (x - mean) * invstd and m values per channel (N times the positions):
    grad_bias = Σ g, grad_weight = Σ g·x̂, and, in training, where mean and invstd depend
    on x too, grad_x = weight·invstd/m · (m·g - Σ g - x̂·Σ g·x̂); in eval they are
    constants and grad_x = weight·invstd·g. Sums run over every dim but the channel dim.
    """

    def backward(self, grad):
        if grad.requires_grad:
            raise RuntimeError(f"reftorch: double backward through {self.name()} is not implemented")
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


def _reduce(losses: np.ndarray, reduction: str) -> np.ndarray:
    """Per-element losses -> what ``reduction`` asks for ('mean', 'sum' or 'none')."""
    if reduction == "mean":
        return np.asarray(losses.mean(dtype=losses.dtype))
    if reduction == "sum":
        return np.asarray(losses.sum(dtype=losses.dtype))
    if reduction == "none":
        return losses
    raise ValueError(f"{reduction} is not a valid value for reduction")


class MseLossBackward0(Node):
    def backward(self, grad):
        input, target = self.saved_values
        diff = input - target
        scale = 2 / diff.numel() if self._reduction == "mean" else 2
        g = diff * grad * scale
        return g, -g


def mse_loss(input, target, reduction="mean"):
    if input.shape != target.shape:
        import warnings
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=2)
    common = dtypes.result_type(input, target)
    if not common.is_floating_point:
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{_scalar_name(common)}'")
    diff = input._np - target._np
    out = _wrap(_reduce(diff * diff, reduction), input.device)
    if _needs_grad(input, target):
        node = MseLossBackward0()
        node._reduction = reduction
        node.save(input, target)
        _record(node, (input, target), out)
    return out


class NllLossBackward0(Node):
    """Each target's class gets minus the incoming gradient (divided by the count for
    'mean'); every other entry of the input gets zero."""

    def backward(self, grad):
        (target,) = self.saved_values
        if grad.requires_grad:
            raise RuntimeError(f"reftorch: double backward through {self.name()} is not implemented")
        picked = np.expand_dims(target._np, self._class_dim)
        g = grad._np
        if self._reduction == "mean":
            values = -g / max(target.numel(), 1)
        elif self._reduction == "sum":
            values = -g
        else:
            values = -np.expand_dims(g, self._class_dim)
        out = np.zeros(self._shape, dtype=g.dtype)
        np.put_along_axis(out, picked, np.broadcast_to(values, picked.shape), axis=self._class_dim)
        return (_wrap(out, grad.device),)


class NllLoss2DBackward0(NllLossBackward0):  # inputs with dims after the class dim
    pass


def _check_nll_target(input, target):
    """torch's checks, in its order: dims and batch size, target shape, then target dtype."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    target_batch = target.shape[0] if target.dim() else 0
    if input.dim() != 1 and input.shape[0] != target_batch:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target_batch})."
        )
    if input.dim() == 1 and target.dim() == 1 and target.shape[0] != 1:
        raise ValueError(
            f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
    if input.dim() > 2:
        expected = (input.shape[0],) + tuple(input.shape[2:])
        if tuple(target.shape) != expected:
            raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")
    elif target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.dtype is not dtypes.int64:  # (torch also takes uint8, which reftorch lacks)
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {_scalar_name(target.dtype)}")


def nll_loss(input, target, reduction="mean"):
    """Minus the input at each target's class; the class dim is 1 (0 for one unbatched row)."""
    _check_nll_target(input, target)
    if input.dim() == 3 or input.dim() > 4:
        # torch folds the trailing dims into one (a view) and runs the 4-D (N, C, H, W) loss
        n, c = input.shape[0], input.shape[1]
        out = nll_loss(input.contiguous().view(n, c, 1, -1), target.contiguous().view(n, 1, -1),
                       reduction=reduction)
        return out.view(target.shape) if reduction == "none" else out
    class_dim = 0 if input.dim() == 1 else 1
    c = input.shape[class_dim]
    t = target._np.reshape(-1 if input.dim() > 1 else 1)
    if t.size and (t.min() < 0 or t.max() >= c):
        raise IndexError(f"Target {int(t.max() if t.max() >= c else t.min())} is out of bounds.")
    picked = np.expand_dims(target._np, class_dim) if input.dim() > 1 else target._np.reshape(1)
    losses = -np.take_along_axis(input._np, picked, axis=class_dim)
    losses = losses.squeeze(class_dim) if input.dim() > 1 else losses.reshape(())
    out = _wrap(_reduce(losses, reduction), input.device)
    if _needs_grad(input):
        node = NllLoss2DBackward0() if input.dim() > 2 else NllLossBackward0()
        node._shape, node._class_dim, node._reduction = tuple(input.shape), class_dim, reduction
        node.save(target)
        _record(node, (input,), out)
    return out


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


def cross_entropy(input, target, reduction="mean"):
    """log_softmax over classes, then the negative log-likelihood of the right class.

    A float target shaped like the input holds class probabilities instead of indices."""
    class_dim = 0 if input.dim() == 1 else 1
    if tuple(input.shape) == tuple(target.shape):
        if not target.is_floating_point():
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{_scalar_name(target.dtype)}")
        log_probs = log_softmax(input, class_dim)
        if reduction == "mean":
            n_rows = input.numel() // input.shape[class_dim] if input.numel() else 1
            return _divide_by_number(-(log_probs * target).sum(), n_rows)
        if reduction == "sum":
            return -(log_probs * target).sum()
        if reduction == "none":
            return -(log_probs * target).sum(class_dim)
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return nll_loss(log_softmax(input, class_dim), target, reduction=reduction)


def one_hot(tensor, num_classes=-1):
    n = int(tensor.max().item()) + 1 if num_classes < 0 else num_classes
    return _wrap(np.eye(n, dtype=np.int64)[tensor._np], tensor.device)
