"""SGD: a step against the gradient, with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _refuse_unsupported


class SGD(Optimizer):
    """p -= lr * g, where g may add weight decay and momentum:
    buf = momentum * buf + (1 - dampening) * g;  g = buf  (or g + momentum * buf, Nesterov).
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _refuse_unsupported("SGD", differentiable=differentiable, fused=fused)
        # every key torch keeps, so that state_dict() has torch's structure
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                                      foreach=foreach, differentiable=differentiable, fused=fused))

    @no_grad()
    def step(self, closure=None):
        loss = self._loss_of(closure)
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                g = self._gradient(p, group)
                if momentum:
                    buf = self.state.setdefault(p, {}).get("momentum_buffer")
                    if buf is None:
                        buf = self.state[p]["momentum_buffer"] = g.clone()
                    else:
                        buf.mul_(momentum).add_(g, alpha=1 - dampening)
                    g = g.add(buf, alpha=momentum) if group["nesterov"] else buf
                p.add_(g, alpha=-lr)
        return loss
