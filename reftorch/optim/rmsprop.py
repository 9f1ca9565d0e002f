"""RMSprop: divide the step by a running root-mean-square of recent gradients."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..functions import zeros_like
from .optimizer import Optimizer, _addcdiv_, _addcmul_, _check, _lerp_, _refuse_unsupported, _step_counter


class RMSprop(Optimizer):
    """v = alpha * v + (1 - alpha) * g²;  p -= lr * g / (sqrt(v) + eps)
    (``centered`` subtracts the squared running mean of g from v; ``momentum`` keeps a buffer of
    the steps)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        _refuse_unsupported("RMSprop", capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._loss_of(closure)
        for group in self.param_groups:
            alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = _step_counter()
                    state["square_avg"] = zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = zeros_like(p)
                    if group["centered"]:
                        state["grad_avg"] = zeros_like(p)
                state["step"] += 1
                g = self._gradient(p, group)
                square_avg = state["square_avg"]
                _addcmul_(square_avg.mul_(alpha), g, g, 1 - alpha)
                if group["centered"]:
                    grad_avg = _lerp_(state["grad_avg"], g, 1 - alpha)
                    avg = _addcmul_(square_avg.clone(), grad_avg, grad_avg, -1).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    _addcdiv_(buf.mul_(momentum), g, avg)
                    p.add_(buf, alpha=-group["lr"])
                else:
                    _addcdiv_(p, g, avg, -group["lr"])
        return loss
