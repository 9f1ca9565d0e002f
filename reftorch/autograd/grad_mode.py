"""Grad modes: whether operations record the graph.

``no_grad`` and ``enable_grad`` flip one flag (context managers and decorators);
``inference_mode`` also marks the tensors it creates as inference tensors, which can never
join a graph later.
"""
from __future__ import annotations

import functools
import inspect

from .. import _modes

state = _modes.grad_mode  # the flags themselves, which every layer reads, live in _modes.py


def is_grad_enabled() -> bool:
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


class _Mode:
    """Base: a context manager that is also a decorator (of functions and of generators, whose
    every step then runs in the mode)."""

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._clone():
                return fn(*args, **kwargs)
        return wrapper

    def _clone(self):
        return self.__class__(*self._args)

    def _wrap_generator(self, fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            steps = fn(*args, **kwargs)
            try:
                with self._clone():
                    value = steps.send(None)
                while True:
                    try:
                        request = yield value
                    except GeneratorExit:
                        with self._clone():
                            steps.close()
                        raise
                    except BaseException as error:  # noqa: BLE001  (passed into the generator)
                        with self._clone():
                            value = steps.throw(error)
                    else:
                        with self._clone():
                            value = steps.send(request)
            except StopIteration as stop:
                return stop.value
        return generator

    _args: tuple = ()




class _SetGradEnabled(_Mode):
    """Within the block, grad mode is ``enabled``; the previous mode comes back after it."""

    enabled: bool

    def __new__(cls, orig_func=None):
        # ``@torch.no_grad`` without parentheses: called with a function, decorate it at once
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        self._args = ()

    def __enter__(self):
        self._prev = state.grad_enabled
        state.grad_enabled = self.enabled

    def __exit__(self, *exc):
        state.grad_enabled = self._prev


class no_grad(_SetGradEnabled):
    """Operations inside record no graph (and so save nothing for backward)."""

    enabled = False


class enable_grad(_SetGradEnabled):
    """Turns recording back on, e.g. inside a ``no_grad`` block."""

    enabled = True


class set_grad_enabled(_Mode):
    """Sets the mode at once (usable as a plain call), and restores it as a context manager."""

    def __init__(self, mode: bool):
        self._args = (mode,)
        self._prev = state.grad_enabled
        state.grad_enabled = bool(mode)

    def __call__(self, fn):
        # ``@set_grad_enabled(False)`` set the mode when it was built: only the function runs in it
        state.grad_enabled = self._prev
        return super().__call__(fn)

    def __enter__(self):
        state.grad_enabled = bool(self._args[0])

    def __exit__(self, *exc):
        state.grad_enabled = self._prev


class inference_mode(_Mode):
    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # @inference_mode without parentheses

    def __init__(self, mode: bool = True):
        self._args = (mode,)
        self.mode = mode

    def __enter__(self):
        self._prev = (state.grad_enabled, state.inference)
        if self.mode:
            state.grad_enabled = False
            state.inference = True

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self._prev
