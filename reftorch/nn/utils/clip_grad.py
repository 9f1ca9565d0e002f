"""Gradient clipping: keep one step from moving the parameters too far.

``clip_grad_norm_`` scales every gradient by the same factor, so that the norm of all of
them taken together (as one long vector) is at most ``max_norm``; the direction of the step
is kept. ``clip_grad_value_`` clamps each element instead.
"""
from __future__ import annotations

import math

from ...autograd.grad_mode import no_grad
from ...functions import clamp_, norm, stack, tensor
from ...tensor import Tensor


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients in place so their total ``norm_type``-norm is at most ``max_norm``;
    returns the total norm before clipping (a 0-dim tensor)."""
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return tensor(0.0)
    # the norm of the per-tensor norms is the norm of all the elements together
    total = norm(stack([norm(g, norm_type) for g in grads]), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
            "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
            "anyway, set `error_if_nonfinite=False`")
    factor = (max_norm / (total + 1e-6)).clamp(max=1.0)  # never scale up
    for g in grads:
        g.mul_(factor.to(g.dtype))
    return total


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        clamp_(g, -clip_value, clip_value)
