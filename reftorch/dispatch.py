"""Devices, and how an operation finds the kernel for the device its tensors are on.

torch keeps a table of kernels per operation and per dispatch key (CPU, CUDA, ...). A new
backend plugs in through the reserved key PrivateUse1: it renames the key to its own name,
registers a Python module as ``torch.<name>``, and registers its kernels. reftorch has the
same route in miniature, and its second device, ``sim``, comes in exactly that way
(see ``sim.py``): nothing in the engine knows about it by name.
"""
from __future__ import annotations

import sys

_PRIVATEUSE1 = "privateuseone"

# device type -> {op name -> kernel}; kernels take and return NumPy arrays ("meta": see meta.py)
_kernels: dict[str, dict] = {"cpu": {}, "meta": {}}
_allocators: dict[str, object] = {}
_privateuse1_name = _PRIVATEUSE1
# Dispatch modes, innermost last (torch's __torch_dispatch__ mode stack; see fx.py): the
# innermost one is handed every kernel before it runs.
_modes: list = []


class device:
    """``device('cpu')``, ``device('sim', 0)``, ``device('sim:0')``."""

    __slots__ = ("type", "index", "_backend_allocator")

    def __new__(cls, type_or_device, index=None):
        if isinstance(type_or_device, device):
            return type_or_device
        return _intern(str(type_or_device), index)

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self):
        return (device, (str(self),))


_interned: dict = {}


def _intern(spec: str, index):
    key = (spec, index)
    found = _interned.get(key)
    if found is not None:
        return found
    type_, _, index_text = spec.partition(":")
    if index_text:
        if index is not None:
            raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {spec}")
        if not index_text.isdigit():
            raise RuntimeError(f"Invalid device string: '{spec}'")
        index = int(index_text)
    if type_ not in _known_types():
        raise RuntimeError(
            "Expected one of cpu, cuda, sim device type at start of device string: " + spec
            if type_ != _PRIVATEUSE1 else f"Invalid device string: '{spec}'"
        )
    d = object.__new__(device)
    d.type = type_
    d.index = index
    d._backend_allocator = _allocators.get(type_)
    _interned[key] = d
    return d


def _known_types():
    return set(_kernels) | {"cuda"}


def __eq_device(self, other):
    if isinstance(other, str):
        other = device(other)
    return isinstance(other, device) and self.type == other.type and self.index == other.index


device.__eq__ = __eq_device
device.__hash__ = lambda self: hash((self.type, self.index))

cpu = device("cpu")
default_device = [None]  # torch.set_default_device's choice (None: the CPU); factories read it


def canonical(d) -> device:
    """The device a tensor is actually on: accelerators always carry an index (``sim:0``)."""
    d = device(d)
    if d.type == "meta":  # (no index either: meta tensors live nowhere)
        return device("meta")
    if d.type != "cpu" and d.index is None:
        return device(d.type, 0)
    return cpu if d.type == "cpu" else d  # torch drops a CPU index: device('cpu', 0) tensors are on 'cpu'


# -- the PrivateUse1 route ------------------------------------------------------------

def rename_privateuse1_backend(name: str) -> None:
    """Give the reserved backend slot its public name (``torch.utils.rename_privateuse1_backend``)."""
    global _privateuse1_name
    if _privateuse1_name != _PRIVATEUSE1 and _privateuse1_name != name:
        raise RuntimeError(
            f"torch.register_privateuse1_backend() has already been set! Current backend: {_privateuse1_name}"
        )
    _privateuse1_name = name
    _kernels.setdefault(name, {})


def register_device_module(name: str, module) -> None:
    """Expose a backend's module as ``reftorch.<name>`` (``torch._register_device_module``)."""
    root = sys.modules["reftorch"]
    if hasattr(root, name) and getattr(root, name) is not module:
        raise RuntimeError(f"The runtime module of '{name}' has already been registered with '{getattr(root, name)}'")
    setattr(root, name, module)


def register_allocator(device_type: str, allocator) -> None:
    """An allocator counts the bytes a backend holds (``allocate(n)``, ``free(n)``)."""
    _allocators[device_type] = allocator
    for d in _interned.values():
        if d.type == device_type:
            d._backend_allocator = allocator


def register_kernel(op: str, device_type: str):
    """Decorator: ``@register_kernel('add', 'cpu')``."""
    def decorate(fn):
        if device_type not in _kernels:
            raise RuntimeError(f"no backend named '{device_type}': rename_privateuse1_backend first")
        _kernels[device_type][op] = fn
        return fn
    return decorate


def kernel(op: str, d: device):
    """Find the kernel for ``op`` on device ``d`` (the dispatcher's one job)."""
    try:
        found = _kernels[d.type][op]
    except KeyError:
        raise NotImplementedError(
            f"Could not run 'aten::{op}' with arguments from the '{d.type.upper() if d.type == 'cpu' else d.type}' backend. "
            "This could be because the operator doesn't exist for this backend."
        ) from None
    return _modes[-1].intercept(op, found) if _modes else found


def registered_kernels(device_type: str) -> dict:
    """A read-only look at one backend's kernel table (for lessons and tests)."""
    return dict(_kernels[device_type])


def check_same_device(*tensors) -> device:
    """Every operand must be on one device; zero-dim CPU tensors may join any device, as in torch."""
    found = None
    for t in tensors:
        d = t._device
        if found is None:
            found = d
        elif d is not found and d != found:
            if d.type == "cpu" and t.dim() == 0:
                continue
            if found.type == "cpu" and _is_cpu_scalar_first(tensors, found):
                found = d
                continue
            if "meta" in (d.type, found.type):  # (torch's meta functions word it their own way)
                raise RuntimeError(f"Tensor on device {d} is not on the expected device {found}!")
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{_order(found, d)}!"
            )
    return found


def _is_cpu_scalar_first(tensors, found):
    return all(t.dim() == 0 for t in tensors if t._device == found)


def _order(a, b):
    # torch names the accelerator first
    return f"{a} and {b}" if a.type != "cpu" else f"{b} and {a}"
