"""Adadelta: steps scaled by the ratio of running RMS of past steps to running RMS of gradients."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..functions import zeros_like
from .optimizer import Optimizer, _addcmul_, _check, _refuse_unsupported, _step_counter


class Adadelta(Optimizer):
    """v = rho v + (1 - rho) g²;  delta = sqrt(u + eps) / sqrt(v + eps) * g;
    u = rho u + (1 - rho) delta²;  p -= lr * delta."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _refuse_unsupported("Adadelta", capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._loss_of(closure)
        for group in self.param_groups:
            rho, eps = group["rho"], group["eps"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = _step_counter()
                    state["square_avg"] = zeros_like(p)
                    state["acc_delta"] = zeros_like(p)
                state["step"] += 1
                g = self._gradient(p, group)
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                _addcmul_(square_avg.mul_(rho), g, g, 1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_().div_(std).mul_(g)
                _addcmul_(acc_delta.mul_(rho), delta, delta, 1 - rho)
                p.add_(delta, alpha=-group["lr"])
        return loss
