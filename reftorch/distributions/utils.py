"""Helpers the distributions share: broadcasting parameters, probabilities <-> logits, and
``lazy_property`` (a parameter computed from the other one only when first asked for)."""
from __future__ import annotations

import functools
import numbers

from ..autograd.grad_mode import enable_grad
from ..dtypes import finfo, get_default_dtype
from ..functions import broadcast_tensors, empty, log, log1p, sigmoid, softmax, tensor
from ..tensor import Tensor

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits"]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


def broadcast_all(*values):
    """Tensors broadcast against each other; a number becomes a tensor of the first tensor's
    dtype and device (of the default dtype when every value is a number)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    first = next((v for v in values if isinstance(v, Tensor)), None)
    options = (dict(dtype=get_default_dtype()) if first is None else
               dict(dtype=first.dtype, device=first.device))
    tensors = [v if isinstance(v, Tensor) else tensor(v, **options) for v in values]
    return broadcast_tensors(*tensors)


def _standard_normal(shape, dtype, device):
    return empty(shape, dtype=dtype, device=device).normal_()


def logits_to_probs(logits, is_binary: bool = False):
    """Log odds (binary) or unnormalised log probabilities along the last dim -> probabilities."""
    return sigmoid(logits) if is_binary else softmax(logits, dim=-1)


def clamp_probs(probs):
    """Into [eps, 1 - eps], eps the dtype's machine epsilon: a log of them is finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Probabilities -> log odds (binary) or log probabilities, clamped first."""
    clamped = clamp_probs(probs)
    if is_binary:
        return log(clamped) - log1p(-clamped)
    return log(clamped)


class lazy_property:
    """Computed on first access (with grad enabled: the result stays differentiable), then
    stored on the instance, where later reads find it without calling this again."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
