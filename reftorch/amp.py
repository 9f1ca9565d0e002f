"""Automatic mixed precision on the CPU: ``autocast`` and torch's lists of which op runs in
which precision.

Inside ``with torch.autocast('cpu'):`` (bfloat16 unless told otherwise) torch casts the
inputs of some ops before running them, and leaves every other op alone:

    lower precision   matrix products (mm, matmul, addmm, bmm, linear): float32 inputs become
                      bfloat16 (or float16); float64 is left alone
    float32           ops that lose too much in 16 bits (prod, the losses): inputs become float32
    widest type       joins (cat, stack): inputs become the widest floating type among them

The casts are ordinary ``.to(dtype)`` calls, so they are in the graph (``ToCopyBackward0``)
and gradients come back to the leaves in float32. A leaf that requires grad (a weight) is
cast once per autocast region and the copy reused, as torch caches it.

torch registers these casts as kernels for its Autocast dispatch key, in front of every op
it lists; here ``_install`` wraps the same ops where reftorch binds them.
"""
from __future__ import annotations

import functools
import inspect
import warnings

from . import dtypes

_SUPPORTED_CPU_DTYPES = (dtypes.bfloat16, dtypes.float16)

# torch's CPU lists (aten/src/ATen/autocast_mode.cpp), for the ops reftorch has
LOWER_PRECISION_OPS = ("mm", "matmul", "addmm", "bmm", "linear")
FLOAT32_OPS = ("prod", "mse_loss", "nll_loss", "cross_entropy")
PROMOTE_OPS = ("cat", "stack", "concat", "concatenate")


class _DeviceState:
    def __init__(self, dtype):
        self.enabled = False
        self.dtype = dtype
        self.cache_enabled = True


_state = {"cpu": _DeviceState(dtypes.bfloat16)}
_nesting = [0]  # open autocast regions: the cast cache is dropped when the last one closes
_cast_cache: dict = {}  # id(leaf) -> (leaf, its cast copy)
_running_op = [False]  # an op's own inner calls are not cast again (autocast is off inside)


def is_autocast_available(device_type: str) -> bool:
    return device_type in _state


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (torch's default device type is cuda)."""
    if device_type is None or device_type == "cuda":
        return False
    return _state_for(device_type).enabled


def get_autocast_dtype(device_type: str):
    return _state_for(device_type).dtype


def clear_autocast_cache() -> None:
    _cast_cache.clear()


def _state_for(device_type: str) -> _DeviceState:
    if device_type not in _state:
        raise RuntimeError(f"unsupported autocast device_type '{device_type}'")
    return _state[device_type]


class autocast:
    """``with torch.autocast(device_type='cpu', dtype=torch.bfloat16):`` or as a decorator."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = enabled
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if device_type == "cuda":
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling",
                          stacklevel=2)
            self._enabled = False
        elif device_type != "cpu":  # torch parses it as a device first
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, "
                "maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start "
                f"of device string: {device_type}")
        else:
            self.fast_dtype = _state["cpu"].dtype if dtype is None else dtype
            if self.fast_dtype not in _SUPPORTED_CPU_DTYPES:
                warnings.warn(
                    "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                    "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                    stacklevel=2)
                self._enabled = False

    def __enter__(self):
        if self.device != "cpu":
            return self
        state = _state["cpu"]
        self._previous = (state.enabled, state.dtype, state.cache_enabled)
        state.enabled, state.cache_enabled = self._enabled, self._cache_enabled
        if self._enabled:
            state.dtype = self.fast_dtype
        _nesting[0] += 1
        return self

    def __exit__(self, *exc_info):
        if self.device != "cpu":
            return False
        state = _state["cpu"]
        state.enabled, state.dtype, state.cache_enabled = self._previous
        _nesting[0] -= 1
        if _nesting[0] == 0:
            _cast_cache.clear()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def run_in_autocast(*args, **kwargs):
            with autocast(self.device, dtype=self.fast_dtype, enabled=self._enabled,
                          cache_enabled=self._cache_enabled):
                return func(*args, **kwargs)
        return run_in_autocast


# -- the casts ---------------------------------------------------------------------------
def _eligible(value) -> bool:
    from .tensor import Tensor
    return (isinstance(value, Tensor) and value.dtype.is_floating_point
            and value.dtype is not dtypes.float64 and value.device.type == "cpu")


def _cast(value, dtype, use_cache):
    if not _eligible(value) or value.dtype is dtype:
        return value
    cacheable = use_cache and value.is_leaf and value.requires_grad
    if cacheable and id(value) in _cast_cache:
        return _cast_cache[id(value)][1]
    out = value.to(dtype)
    if cacheable:
        _cast_cache[id(value)] = (value, out)  # keeps the leaf alive, so its id stays its own
    return out


def _map_tensors(fn, value):
    if isinstance(value, (list, tuple)):
        return type(value)(fn(v) for v in value)
    return fn(value)


def _tensors_in(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from v
        else:
            yield v


def _policy_dtype(policy, state, args, kwargs):
    if policy == "lower_precision":
        return state.dtype
    if policy == "float32":
        return dtypes.float32
    floats = [t.dtype for t in _tensors_in(list(args) + list(kwargs.values())) if _eligible(t)]
    widest = None
    for d in floats:
        widest = d if widest is None else dtypes.promote_types(widest, d)
    return widest


def _with_autocast(policy, op):
    @functools.wraps(op)
    def run(*args, **kwargs):
        state = _state["cpu"]
        if not state.enabled or _running_op[0]:
            return op(*args, **kwargs)
        dtype = _policy_dtype(policy, state, args, kwargs)
        if dtype is not None:
            cast = functools.partial(_map_tensors,
                                     lambda t: _cast(t, dtype, state.cache_enabled and policy != "promote"))
            args = tuple(cast(a) for a in args)
            kwargs = {k: cast(v) for k, v in kwargs.items()}
        _running_op[0] = True
        try:
            return op(*args, **kwargs)
        finally:
            _running_op[0] = False
    run.__wrapped_by_autocast__ = True
    return run


def _install():
    """Put the casts in front of each listed op, wherever reftorch binds it: the functions
    package and its family modules (so calls between ops see them too), the package,
    nn.functional and the Tensor methods (``x @ w``, ``x.mm(w)``)."""
    import reftorch
    from . import functions
    from .nn import functional as nn_functional
    from .tensor import Tensor
    modules = (functions, *functions.FAMILIES, nn_functional, reftorch)
    for policy, names in (("lower_precision", LOWER_PRECISION_OPS), ("float32", FLOAT32_OPS),
                          ("promote", PROMOTE_OPS)):
        for name in names:
            home = functions if hasattr(functions, name) else nn_functional
            op = getattr(home, name)
            if getattr(op, "__wrapped_by_autocast__", False):
                continue
            wrapped = _with_autocast(policy, op)
            for module in modules:
                if getattr(module, name, None) is op:
                    setattr(module, name, wrapped)
            for attribute, value in list(vars(Tensor).items()):
                # a method is its own forward-mode wrapper around the same function
                if value is op or (callable(value) and inspect.unwrap(value) is inspect.unwrap(op)):
                    setattr(Tensor, attribute, wrapped)
