"""torch.set_default_device: the device factory functions (zeros, ones, tensor, randn, ...) use
when a call names none. Only factories follow it, as in torch: ``x + 1`` stays where x is."""
from __future__ import annotations

from . import dispatch


def set_default_device(device) -> None:
    dispatch.default_device[0] = None if device is None else dispatch.canonical(device)


def get_default_device():
    return dispatch.default_device[0] or dispatch.cpu
