"""Adamax: Adam with the infinity norm in place of the squared gradients' average."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..functions import maximum, zeros_like
from .optimizer import Optimizer, _addcdiv_, _check, _lerp_, _refuse_unsupported, _step_counter


class Adamax(Optimizer):
    """``m = lerp(m, g, 1 - beta1)``, ``u = max(beta2 * u, abs(g) + eps)``,
    ``p -= lr / (1 - beta1 ** t) * m / u``."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _refuse_unsupported("Adamax", capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    @no_grad()
    def step(self, closure=None):
        loss = self._loss_of(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = _step_counter()
                    state["exp_avg"] = zeros_like(p)
                    state["exp_inf"] = zeros_like(p)
                state["step"] += 1
                g = self._gradient(p, group)
                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                _lerp_(exp_avg, g, 1 - beta1)
                exp_inf.copy_(maximum(exp_inf.mul_(beta2), g.abs().add_(group["eps"])))
                clr = group["lr"] / (1 - beta1 ** state["step"].item())
                _addcdiv_(p, exp_avg, exp_inf, -clr)
        return loss
