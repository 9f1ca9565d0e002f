"""RAdam: Adam whose adaptive step is switched on only once the variance estimate is reliable."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..functions import zeros_like
from .optimizer import Optimizer, _addcmul_, _check, _lerp_, _refuse_unsupported, _step_counter


class RAdam(Optimizer):
    """While rho_t <= 5 the step is plain momentum (lr * m_hat); after that Adam's step times the
    rectification term r_t (Liu et al., 2019)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _refuse_unsupported("RAdam", capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._loss_of(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, weight_decay = group["lr"], group["weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = _step_counter()
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                g = -p._grad if group["maximize"] else p._grad
                state["step"] += 1
                step = state["step"].item()
                if weight_decay:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        g = g.add(p, alpha=weight_decay)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                _lerp_(exp_avg, g, 1 - beta1)
                _addcmul_(exp_avg_sq.mul_(beta2), g, g, 1 - beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                bias_corrected_exp_avg = exp_avg / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(group["eps"])
                    p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
                else:
                    p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
        return loss
