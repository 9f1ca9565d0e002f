"""Anomaly mode: find the forward operation behind a failing (or NaN-producing) backward.

While it is on, every node remembers the Python stack that created it in the forward pass.
In backward, a node whose formula raises, or (with ``check_nan``) returns a NaN, makes the
engine warn with that stack and raise, so the error names the operation, not just "nan
somewhere". It costs a stack capture per operation, so it is for debugging only.
"""
from __future__ import annotations

import os
import traceback
import warnings


class _State:
    enabled = False
    check_nan = True


state = _State()
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # reftorch/


def is_anomaly_enabled() -> bool:
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return state.check_nan


def set_anomaly_enabled(mode: bool, check_nan: bool = True):
    state.enabled, state.check_nan = bool(mode), bool(check_nan)


class detect_anomaly:
    """Anomaly detection within the block (and as a decorator); warns once that it is slow."""

    def __init__(self, check_nan: bool = True):
        self.prev, self.prev_check_nan = state.enabled, state.check_nan
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turns anomaly detection on or off at once; as a context manager, restores it after."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev, self.prev_check_nan = state.enabled, state.check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def forward_trace() -> list[str]:
    """The user's stack where a node is being created (reftorch's own frames left out)."""
    frames = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_PACKAGE)]
    return traceback.format_list(frames)


def check_nan(node, results):
    """torch's check after each node ran: no gradient it returns may hold a NaN."""
    for index, grad in enumerate(results):
        if grad is not None and grad.is_floating_point() and bool(grad.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {index}th output.")


def warn_forward_trace(node):
    trace = getattr(node, "_forward_trace", None)
    if trace is None:  # created before anomaly mode was on
        return
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                  "error:\n" + "".join(trace), stacklevel=2)


# torch words the hint of the in-place error differently while anomaly mode is on: the
# forward trace it asks for is then already being printed
_INPLACE_HINT = ("Hint: enable anomaly detection to find the operation that failed to compute "
                 "its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
_INPLACE_HINT_UNDER_ANOMALY = (
    "Hint: the backtrace further above shows the operation that failed to compute its "
    "gradient. The variable in question was changed in there or anywhere later. Good luck!")


def worded_for_anomaly_mode(error):
    """The error to raise in anomaly mode: the in-place error with torch's other hint."""
    text = str(error)
    if isinstance(error, RuntimeError) and text.endswith(_INPLACE_HINT):
        return RuntimeError(text[: -len(_INPLACE_HINT)] + _INPLACE_HINT_UNDER_ANOMALY)
    return error
