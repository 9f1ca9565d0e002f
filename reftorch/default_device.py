"""torch.set_default_device: the device factory functions (zeros, ones, tensor, randn, ...) use
when a call names none. Only factories follow it, as in torch: ``x + 1`` stays where x is.

``with torch.device('sim'):`` does the same for the block (the device object is the context
manager; its ``__enter__``/``__exit__`` are installed on dispatch's device class here)."""
from __future__ import annotations

from . import dispatch


def set_default_device(device) -> None:
    dispatch.default_device[0] = None if device is None else dispatch.canonical(device)


def get_default_device():
    return dispatch.default_device[0] or dispatch.cpu


_previous: list = []


def _enter(self):
    _previous.append(dispatch.default_device[0])
    dispatch.default_device[0] = dispatch.canonical(self)
    return self


def _exit(self, *exc):
    dispatch.default_device[0] = _previous.pop()


dispatch.device.__enter__ = _enter
dispatch.device.__exit__ = _exit
