"""Optimizers: SGD (with momentum and weight decay) and Adam.

An optimizer holds ``param_groups`` (lists of parameters with their hyper-parameters) and a
per-parameter ``state`` (momentum buffers, Adam's moving averages). ``step()`` updates each
parameter in place, outside the graph, from its ``.grad``.
"""
from __future__ import annotations

import copy
import itertools
import math

from .autograd.grad_mode import no_grad
from .dtypes import get_default_dtype
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

    # -- saving and loading -------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [index, ...]}]}``.

        Parameters are named by their position (counted across groups), not kept themselves,
        so the dict can be loaded into a fresh optimizer over a fresh model of the same shape.
        Like torch, the state's tensors are the optimizer's own, not copies.
        """
        index, start = {}, 0
        groups = []
        for group in self.param_groups:
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            start += len(group["params"])
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)] if isinstance(p, Tensor) else p: v for p, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Take hyper-parameters and per-parameter state from ``state_dict`` (see state_dict);
        state tensors are moved to each parameter's dtype and device, as torch does."""
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        params_by_index = dict(zip(itertools.chain.from_iterable(s["params"] for s in saved_groups),
                                   itertools.chain.from_iterable(g["params"] for g in self.param_groups)))
        state = {}
        for key, value in state_dict["state"].items():
            if key in params_by_index:
                param = params_by_index[key]
                state[param] = {name: _like_param(param, name, v) for name, v in value.items()}
            else:
                state[key] = value
        for group, saved in zip(self.param_groups, saved_groups):
            saved["params"] = group["params"]
        self.state = state
        self.param_groups = saved_groups

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


def _like_param(param, name, value):
    """A loaded state value on the parameter's device (and dtype, for a float parameter);
    Adam's ``step`` count stays as saved."""
    if not isinstance(value, Tensor) or name == "step":
        return value
    if param.is_floating_point():
        return value.to(dtype=param.dtype, device=param.device)
    return value.to(device=param.device)


def _refuse_unsupported(name, **flags):
    # foreach=True only batches the same arithmetic into fewer kernels: accepted and ignored
    for flag, value in flags.items():
        if value:
            raise NotImplementedError(
                f"reftorch's {name} runs one plain loop over the parameters: {flag}=True is not supported"
            )


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

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
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
        _refuse_unsupported("Adam", capturable=capturable, differentiable=differentiable, fused=fused)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused, decoupled_weight_decay=decoupled_weight_decay))

    @no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                if group["decoupled_weight_decay"] and group["weight_decay"]:
                    # AdamW: decay the weights themselves, not through the gradient
                    p.mul_(1 - group["lr"] * group["weight_decay"])
                    g = -p._grad if group["maximize"] else p._grad
                else:
                    g = self._gradient(p, group)
                state = self.state.setdefault(p, {})
                if not state:
                    from .functions import tensor, zeros_like
                    # a float tensor, as in torch (state_dict shows tensor(3.))
                    state["step"] = tensor(0.0, dtype=get_default_dtype())
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
                step = state["step"].item()
                bias1 = 1 - beta1 ** step
                bias2 = 1 - beta2 ** step
                denom = (v.sqrt() / math.sqrt(bias2)).add_(group["eps"])
                p.add_(m / denom, alpha=-group["lr"] / bias1)
        return loss
