"""The casts autocast puts in front of an op (torch's Autocast dispatch key).

native_functions.py marks each op autocast touches with one policy, as torch's lists in
``aten/src/ATen/autocast_mode.cpp`` do:

    lower_precision   float32 inputs become the autocast dtype (bfloat16 or float16); float64 stays
    float32           inputs become float32 (ops that lose too much in 16 bits)
    promote           inputs become the widest floating type among them (joins)

The casts are ordinary ``.to(dtype)`` calls, so they are in the graph (``ToCopyBackward0``)
and gradients come back to the leaves in their own dtype. A leaf that requires grad (a
weight) is cast once per autocast region and the copy reused, as torch caches it.
``amp.autocast`` turns this on; codegen.py calls ``autocast_arguments`` before the op runs.
"""
from __future__ import annotations

from .. import _modes, dtypes
from ..tensor import Tensor

_state = _modes.autocast


def _eligible(value) -> bool:
    return (isinstance(value, Tensor) and value.dtype.is_floating_point
            and value.dtype is not dtypes.float64 and value.device.type == "cpu")


def _cast(value, dtype, use_cache):
    if not _eligible(value) or value.dtype is dtype:
        return value
    cacheable = use_cache and value.is_leaf and value.requires_grad
    if cacheable and id(value) in _state.cache:
        return _state.cache[id(value)][1]
    out = value.to(dtype)
    if cacheable:
        _state.cache[id(value)] = (value, out)  # keeps the leaf alive, so its id stays its own
    return out


def _tensors_in(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from v
        else:
            yield v


def _policy_dtype(policy, args, kwargs):
    if policy == "lower_precision":
        return _state.cpu.dtype
    if policy == "float32":
        return dtypes.float32
    widest = None
    for t in _tensors_in(list(args) + list(kwargs.values())):
        if _eligible(t):
            widest = t.dtype if widest is None else dtypes.promote_types(widest, t.dtype)
    return widest


def autocast_arguments(policy, args, kwargs):
    """The op's arguments with its policy's casts applied (tensors inside lists too)."""
    dtype = _policy_dtype(policy, args, kwargs)
    if dtype is None:
        return args, kwargs
    use_cache = _state.cpu.cache_enabled and policy != "promote"

    def cast(value):
        if isinstance(value, (list, tuple)):
            return type(value)(_cast(v, dtype, use_cache) for v in value)
        return _cast(value, dtype, use_cache)
    return tuple(cast(a) for a in args), {k: cast(v) for k, v in kwargs.items()}
