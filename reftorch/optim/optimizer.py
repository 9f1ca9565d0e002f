"""The Optimizer: what every optimizer shares.

An optimizer holds ``param_groups`` (lists of parameters with their hyper-parameters) and a
per-parameter ``state`` (momentum buffers, Adam's moving averages). ``step()`` updates each
parameter in place, outside the graph, from its ``.grad``; the update rules are in sgd.py
and adam.py.
"""
from __future__ import annotations

import builtins
import copy
import functools
import itertools
from collections import OrderedDict, defaultdict

import warnings

from .. import _cpu_float
from ..autograd.grad_mode import enable_grad
from ..dtypes import float32, float64, get_default_dtype
from ..functions import tensor
from ..tensor import Tensor
from ..utils.hooks import RemovableHandle


# hooks every optimizer's step() runs (register_optimizer_step_pre_hook / _post_hook)
_global_optimizer_pre_hooks: OrderedDict = OrderedDict()
_global_optimizer_post_hooks: OrderedDict = OrderedDict()


def _register(hooks, hook):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` before every optimizer's step(); it may return new (args, kwargs)."""
    return _register(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` after every optimizer's step()."""
    return _register(_global_optimizer_post_hooks, hook)


def _with_step_hooks(step):
    """A class's step() running the pre-hooks first (global ones, then the optimizer's own) and the
    post-hooks after it (its own, then global); ``args`` holds the optimizer itself, as in torch."""
    @functools.wraps(step)
    def hooked(*args, **kwargs):
        self = args[0]
        for pre_hook in itertools.chain(_global_optimizer_pre_hooks.values(),
                                        self.__dict__.get("_optimizer_step_pre_hooks", {}).values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        out = step(*args, **kwargs)
        for post_hook in itertools.chain(self.__dict__.get("_optimizer_step_post_hooks", {}).values(),
                                         _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out
    return hooked


class Optimizer:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:  # each class's own step, a student's subclass too
            cls.step = _with_step_hooks(cls.__dict__["step"])

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self.state: defaultdict = defaultdict(dict)  # per parameter, made on its first step
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

    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` before this optimizer's step(); it may return new (args, kwargs)."""
        return _register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` after this optimizer's step()."""
        return _register(self._optimizer_step_post_hooks, hook)

    def add_param_group(self, group: dict) -> None:
        group = dict(group)
        params = group["params"]
        if isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        if len({id(p) for p in group["params"]}) != len(group["params"]):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will "
                "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3)
        # a parameter updated by two groups would take two steps each time
        in_groups = {id(p) for g in self.param_groups for p in g["params"]}
        if builtins.any(id(p) in in_groups for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
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
        state = defaultdict(dict)
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
        # torch's layout: a blank line between groups, each line ending in a newline
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(k for k in group if k != "params"):
                text += f"    {key}: {group[key]}\n"
        return text + ")"

    def step(self, closure=None):
        raise NotImplementedError

    @staticmethod
    def _loss_of(closure):
        """A closure recomputes the loss and its gradients (LBFGS needs it): with grad mode on,
        though the update itself runs under no_grad."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    @staticmethod
    def _gradient(p, group):
        """The gradient the update uses: negated to maximize, plus weight decay (L2)."""
        g = p._grad
        if group["maximize"]:
            g = -g
        if group["weight_decay"]:
            g = g.add(p, alpha=group["weight_decay"])
        return g


def _check(condition, message):
    if not condition:
        raise ValueError(message)


def _scalar_dtype():
    """The dtype of per-parameter counters (``step``): float64 under a float64 default, else float32."""
    return float64 if get_default_dtype() is float64 else float32


def _step_counter(value=0.0):
    return tensor(float(value), dtype=_scalar_dtype())


# torch's fused point-wise updates, in the order its CPU kernels evaluate them; where its build fuses a
# product and a sum into one multiply-add (AVX2, AVX-512: see _cpu_float), so do these
def _fused(t, a, b, c):
    """t = a * b + c, as torch's kernel for t's dtype rounds it; then t's version moves on."""
    t._np[...] = _cpu_float.multiply_add(a, b, c, t.dtype.numpy)
    t._bump_version()
    return t


def _exact(t):
    return t.dtype in (float32, float64) and _cpu_float.FUSED


def _addcmul_(t, a, b, value=1.0):
    """t += value * a * b."""
    if _exact(t):
        return _fused(t, a.mul(value)._np, b._np, t._np)
    return t.add_(a.mul(value).mul(b))


def _addcdiv_(t, a, b, value=1.0):
    """t += value * a / b (a division: nothing to fuse)."""
    return t.add_(a.mul(value).div(b))


def _lerp_(t, end, weight):
    """t moves ``weight`` of the way to ``end`` (torch's two formulas, by the size of weight)."""
    diff = end.sub(t)
    if weight < 0.5:
        if _exact(t):
            return _fused(t, weight, diff._np, t._np)
        return t.add_(diff.mul(weight))
    if _exact(t):
        return _fused(t, -diff._np, 1 - weight, end._np)
    return t.copy_(end.sub(diff.mul(1 - weight)))


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


