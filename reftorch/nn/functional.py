"""nn.functional: the stateless forms of layers and losses.

``linear`` is ``addmm(bias, input, weight.t())``, exactly as torch computes it, so the
graphs match (AddmmBackward0 with a TBackward0 on the weight). The two losses record one
node each (MseLossBackward0, NllLossBackward0), as torch's do.
"""
from __future__ import annotations

import numpy as np

from .. import functions as F
from ..autograd.graph import Node
from ..functions import _needs_grad, _record, _wrap, addmm
from ..functions import log_softmax, softmax  # noqa: F401  (public as nn.functional.softmax, ...)
from ..random import bernoulli_mask


def linear(input, weight, bias=None):
    if input.dim() == 2 and bias is not None:
        return addmm(bias, input, weight.t())
    if bias is None:
        return F.matmul(input, weight.t())
    # fold the leading dims into rows, one addmm, then unfold (torch does the same)
    rows = input.reshape(-1, input.shape[-1])
    out = addmm(bias, rows, weight.t())
    return out.view(*input.shape[:-1], weight.shape[0])


def relu(input, inplace=False):
    return F.relu_(input) if inplace else F.relu(input)


def sigmoid(input):
    return F.sigmoid(input)


def tanh(input):
    return F.tanh(input)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * F.zeros_like(input)
    mask = bernoulli_mask(input.shape, 1 - p, input.dtype, input.device)
    scaled = mask / (1 - p)
    return F.mul_(input, scaled) if inplace else input * scaled


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
    diff = input._np - target._np
    out = _wrap(_reduce(diff * diff, reduction), input.device)
    if _needs_grad(input, target):
        node = MseLossBackward0()
        node._reduction = reduction
        node.save(input, target)
        _record(node, (input, target), out)
    return out


class NllLossBackward0(Node):
    def backward(self, grad):
        (target,) = self.saved_values
        n, c = self._shape
        rows = np.arange(n)
        out = np.zeros(self._shape, dtype=grad._np.dtype)
        g = grad._np
        scale = -(g / n if self._reduction == "mean" else g)
        out[rows, target._np] = scale if self._reduction != "none" else -g
        if grad.requires_grad:
            raise RuntimeError("reftorch: double backward through NllLossBackward0 is not implemented")
        return (_wrap(out, grad.device),)


def nll_loss(input, target, reduction="mean"):
    if input.dim() != 2:
        raise ValueError(f"Expected 2 dimensions (got {input.dim()})")
    if target.dim() != 1 or target.shape[0] != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]})."
        )
    if target.is_floating_point():
        raise RuntimeError(f"expected scalar type Long but found {F._scalar_name(target.dtype)}")
    n, c = input.shape
    t = target._np
    if n and (t.min() < 0 or t.max() >= c):
        raise IndexError(f"Target {int(t.max() if t.max() >= c else t.min())} is out of bounds.")
    out = _wrap(_reduce(-input._np[np.arange(n), t], reduction), input.device)
    if _needs_grad(input):
        node = NllLossBackward0()
        node._shape, node._reduction = (n, c), reduction
        node.save(target)
        _record(node, (input,), out)
    return out


def cross_entropy(input, target, reduction="mean"):
    """log_softmax over classes, then the negative log-likelihood of the right class."""
    return nll_loss(log_softmax(input, 1), target, reduction=reduction)


def one_hot(tensor, num_classes=-1):
    n = int(tensor.max().item()) + 1 if num_classes < 0 else num_classes
    return _wrap(np.eye(n, dtype=np.int64)[tensor._np], tensor.device)
