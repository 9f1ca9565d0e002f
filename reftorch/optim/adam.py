"""Adam, and AdamW (Adam whose weight decay shrinks the weights themselves)."""
from __future__ import annotations


from ..autograd.grad_mode import no_grad
from ..dtypes import get_default_dtype
from .optimizer import Optimizer, _addcdiv_, _addcmul_, _lerp_, _refuse_unsupported
from ..functions import maximum, tensor, zeros_like


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
        loss = self._loss_of(closure)
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
                    # a float tensor, as in torch (state_dict shows tensor(3.))
                    state["step"] = tensor(0.0, dtype=get_default_dtype())
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = zeros_like(p)
                state["step"] += 1
                m, v = state["exp_avg"], state["exp_avg_sq"]
                # torch's single-tensor update, operation for operation (same roundings)
                _lerp_(m, g, 1 - beta1)
                _addcmul_(v.mul_(beta2), g, g, 1 - beta2)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"].copy_(maximum(state["max_exp_avg_sq"], v))
                    v = state["max_exp_avg_sq"]
                step = state["step"].item()
                bias1 = 1 - beta1 ** step
                bias2 = 1 - beta2 ** step
                denom = (v.sqrt() / bias2 ** 0.5).add_(group["eps"])
                _addcdiv_(p, m, denom, -(group["lr"] / bias1))
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` before the Adam step,
    instead of adding ``weight_decay * p`` to the gradient (Loshchilov and Hutter)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                 *, maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused, decoupled_weight_decay=True)
