"""Adagrad: each parameter's step shrinks with the sum of its squared gradients so far."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..functions import full_like
from .optimizer import Optimizer, _addcdiv_, _addcmul_, _check, _refuse_unsupported, _step_counter


class Adagrad(Optimizer):
    """sum += g²;  p -= lr / (1 + (step - 1) * lr_decay) * g / (sqrt(sum) + eps).
    Its state exists from the start (torch makes it in __init__, not on the first step)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= initial_accumulator_value,
               f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _refuse_unsupported("Adagrad", differentiable=differentiable, fused=fused)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_counter()
                state["sum"] = full_like(p, initial_accumulator_value)

    def share_memory(self):
        pass  # one process: the sums are already where every user of them is

    @no_grad()
    def step(self, closure=None):
        loss = self._loss_of(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                state["step"] += 1
                step = state["step"].item()
                g = self._gradient(p, group)
                clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
                _addcmul_(state["sum"], g, g, 1)
                std = state["sum"].sqrt().add_(group["eps"])
                _addcdiv_(p, g, std, -clr)
        return loss
