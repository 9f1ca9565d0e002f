"""``sim``: reftorch's second device, plugged in the way an out-of-tree backend is.

PyTorch reserves dispatch keys (PrivateUse1, 2 and 3) for backends that live outside its
source tree. Such a backend (1) renames the key to its own name, (2) gives its tensors an
allocator, (3) registers a kernel for each operator it supports and (4) registers a Python
module as ``torch.<name>``. ``sim`` does those four steps with reftorch's dispatcher (see
``_register``), and nothing else in reftorch mentions it.

It behaves like an accelerator in the ways a program can see: tensors on it live in its
own memory (counted by ``memory_allocated``), ``.to('sim')`` copies, ``.numpy()`` refuses,
and mixing it with CPU tensors raises torch's device error. Its arithmetic runs on the
host CPU, so it says nothing about speed.
"""
from __future__ import annotations

import sys

from . import dispatch
from .kernels import CPU_KERNELS

NAME = "sim"


class _Memory:
    """Counts the bytes held by live tensors on the device (what an allocator reports)."""

    def __init__(self):
        self.allocated = 0
        self.peak = 0

    def allocate(self, nbytes: int):
        self.allocated += nbytes
        self.peak = max(self.peak, self.allocated)

    def free(self, nbytes: int):
        self.allocated -= nbytes


_memory = _Memory()
_launches = [0]


def _on_device(kernel):
    def launch(*args, **kwargs):
        _launches[0] += 1
        return kernel(*args, **kwargs)
    launch.__name__ = kernel.__name__ if hasattr(kernel, "__name__") else "kernel"
    return launch


# -- the public module: reftorch.sim, shaped like torch.cuda ---------------------------
def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> int:
    return 0


def get_device_name(device=None) -> str:
    return "reftorch simulated accelerator"


def synchronize(device=None) -> None:
    """Kernels here finish before they return, so there is nothing to wait for."""


def memory_allocated(device=None) -> int:
    return _memory.allocated


def max_memory_allocated(device=None) -> int:
    return _memory.peak


def reset_peak_memory_stats(device=None) -> None:
    _memory.peak = _memory.allocated


def kernel_launches() -> int:
    """How many kernels ran on this device so far (each op is at least one)."""
    return _launches[0]


def _register():
    dispatch.rename_privateuse1_backend(NAME)
    dispatch.register_allocator(NAME, _memory)
    for op, kernel in CPU_KERNELS.items():
        dispatch.register_kernel(op, NAME)(_on_device(kernel))
    dispatch.register_device_module(NAME, sys.modules[__name__])
