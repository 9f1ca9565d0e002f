"""Rprop: each weight keeps its own step size, grown while its gradient keeps its sign and shrunk
when the sign flips; only the gradient's sign moves the weight, never its size."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..functions import full_like, zeros_like
from .optimizer import Optimizer, _addcmul_, _check, _refuse_unsupported, _step_counter


class Rprop(Optimizer):
    """``sign = sign(g · g_prev)``; ``step_size *= etaplus``, ``etaminus`` or 1 by that sign, clamped
    to ``step_sizes``; ``p -= sign(g) · step_size``, except where the sign flipped (there the gradient
    is forgotten: it counts as 0 next time)."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        _refuse_unsupported("Rprop", capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    @no_grad()
    def step(self, closure=None):
        loss = self._loss_of(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            smallest, largest = group["step_sizes"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = _step_counter()
                    state["prev"] = zeros_like(p)
                    state["step_size"] = full_like(p._grad, group["lr"])
                g = -p._grad if group["maximize"] else p._grad
                state["step"] += 1
                sign = g.mul(state["prev"]).sign()
                sign[sign.gt(0)] = etaplus
                sign[sign.lt(0)] = etaminus
                sign[sign.eq(0)] = 1
                step_size = state["step_size"].mul_(sign).clamp_(smallest, largest)
                g = g.clone()
                g[sign.eq(etaminus)] = 0
                _addcmul_(p, g.sign(), step_size, -1)
                state["prev"].copy_(g)
        return loss
