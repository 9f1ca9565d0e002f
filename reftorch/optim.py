"""Optimizers: SGD (with momentum and weight decay) and Adam.

An optimizer holds ``param_groups`` (lists of parameters with their hyper-parameters) and a
per-parameter ``state`` (momentum buffers, Adam's moving averages). ``step()`` updates each
parameter in place, outside the graph, from its ``.grad``.
"""
from __future__ import annotations

import math

from .autograd.grad_mode import no_grad
from .tensor import Tensor


class Optimizer:
    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state: dict = {}
        self.param_groups: list = []
        if isinstance(params, Tensor):  # a bare tensor iterates over its rows: refuse it
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {params.type()}")
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict) -> None:
        group = dict(group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    p._grad.zero_()

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}"
            for key in sorted(k for k in group if k != "params"):
                text += f"\n    {key}: {group[key]}"
        return text + "\n)"

    def step(self):
        raise NotImplementedError

    @staticmethod
    def _gradient(p, group):
        """The gradient the update uses: negated to maximize, plus weight decay (L2)."""
        g = p._grad
        if group["maximize"]:
            g = -g
        if group["weight_decay"]:
            g = g.add(p, alpha=group["weight_decay"])
        return g


class SGD(Optimizer):
    """p -= lr * g, where g may add weight decay and momentum:
    buf = momentum * buf + (1 - dampening) * g;  g = buf  (or g + momentum * buf, Nesterov).
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov, maximize=maximize))

    @no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
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


class Adam(Optimizer):
    """Moving averages of the gradient (m) and its square (v), bias-corrected:
    p -= lr * m_hat / (sqrt(v_hat) + eps).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *, maximize=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    @no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                g = self._gradient(p, group)
                state = self.state.setdefault(p, {})
                if not state:
                    from .functions import zeros_like
                    state["step"] = 0
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = zeros_like(p)
                state["step"] += 1
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m.mul_(beta1).add_(g, alpha=1 - beta1)
                v.mul_(beta2).add_(g * g, alpha=1 - beta2)
                if group["amsgrad"]:
                    from .functions import maximum
                    state["max_exp_avg_sq"].copy_(maximum(state["max_exp_avg_sq"], v))
                    v = state["max_exp_avg_sq"]
                bias1 = 1 - beta1 ** state["step"]
                bias2 = 1 - beta2 ** state["step"]
                denom = (v.sqrt() / math.sqrt(bias2)).add_(group["eps"])
                p.add_(m / denom, alpha=-group["lr"] / bias1)
        return loss
