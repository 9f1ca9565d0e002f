"""NAdam: Adam with Nesterov momentum (the step looks one momentum step ahead)."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..functions import zeros_like
from .optimizer import Optimizer, _addcdiv_, _addcmul_, _check, _lerp_, _refuse_unsupported, _step_counter


class NAdam(Optimizer):
    """Adam's moments, with a momentum schedule mu_t = beta1 (1 - 0.96^(t·psi) / 2) and the
    update split into the gradient's part and the look-ahead momentum's part."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        _refuse_unsupported("NAdam", capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._loss_of(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, weight_decay, psi = group["lr"], group["weight_decay"], group["momentum_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = _step_counter()
                    state["mu_product"] = _step_counter(1.0)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                g = -p._grad if group["maximize"] else p._grad
                state["step"] += 1
                step = state["step"].item()
                bias_correction2 = 1 - beta2 ** step
                if weight_decay:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        g = g.add(p, alpha=weight_decay)
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * psi))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
                state["mu_product"] *= mu  # a float32 counter, rounded each step as torch's is
                mu_product = state["mu_product"].item()
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                _lerp_(exp_avg, g, 1 - beta1)
                _addcmul_(exp_avg_sq.mul_(beta2), g, g, 1 - beta2)
                denom = exp_avg_sq.div(bias_correction2).sqrt().add_(group["eps"])
                _addcdiv_(p, g, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
                _addcdiv_(p, exp_avg, denom, -lr * mu_next / (1.0 - mu_product * mu_next))
        return loss
