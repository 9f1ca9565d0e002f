"""ASGD: SGD that also keeps a running average of the parameters (Polyak-Ruppert averaging)."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..functions import zeros_like
from .optimizer import Optimizer, _check, _refuse_unsupported, _step_counter


class ASGD(Optimizer):
    """p *= 1 - lambd * eta;  p -= eta * g;  ax averages p from step t0 on; eta decays as
    lr / (1 + lambd * lr * t) ** alpha."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _refuse_unsupported("ASGD", capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    @no_grad()
    def step(self, closure=None):
        loss = self._loss_of(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = _step_counter()
                    state["eta"] = _step_counter(lr)
                    state["mu"] = _step_counter(1.0)
                    state["ax"] = zeros_like(p)
                g = self._gradient(p, group)
                state["step"] += 1
                eta = state["eta"].item()
                p.mul_(1 - lambd * eta)
                p.add_(g, alpha=-eta)
                ax, mu = state["ax"], state["mu"]
                if mu.item() != 1:
                    ax.add_(p.sub(ax).mul_(mu))
                else:
                    ax.copy_(p)
                step = state["step"].item()
                state["eta"].fill_(lr / ((1 + lambd * lr * step) ** alpha))
                state["mu"].fill_(1 / max(1, step - t0))
        return loss
