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
it lists; here each op's entry in functions/native_functions.py says ``autocast=...`` and
codegen puts the cast in front of it (functions/autocast.py). This module is the switch.
"""
from __future__ import annotations

import functools
import warnings

from . import _modes, dtypes
from .functions import AUTOCAST_LISTS

_SUPPORTED_CPU_DTYPES = (dtypes.bfloat16, dtypes.float16)

# torch's CPU lists (aten/src/ATen/autocast_mode.cpp), for the ops reftorch has: read from
# the ops' declarations
LOWER_PRECISION_OPS = AUTOCAST_LISTS["lower_precision"]
FLOAT32_OPS = AUTOCAST_LISTS["float32"]
PROMOTE_OPS = AUTOCAST_LISTS["promote"]

_state = _modes.autocast.devices


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
    _modes.autocast.cache.clear()


def _state_for(device_type: str) -> _modes.AutocastDevice:
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
        _modes.autocast.nesting += 1
        return self

    def __exit__(self, *exc_info):
        if self.device != "cpu":
            return False
        state = _state["cpu"]
        state.enabled, state.dtype, state.cache_enabled = self._previous
        _modes.autocast.nesting -= 1
        if _modes.autocast.nesting == 0:
            _modes.autocast.cache.clear()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def run_in_autocast(*args, **kwargs):
            with autocast(self.device, dtype=self.fast_dtype, enabled=self._enabled,
                          cache_enabled=self._cache_enabled):
                return func(*args, **kwargs)
        return run_in_autocast
