"""Inside the sandbox: turn a Python value into plain JSON-able data.

This module runs in the student's process, so nothing it produces is trusted: the host
re-validates every field (`autograder.values`). It still converts carefully, with the
type checks and functions captured before any student code ran, so that an honest
submission's values arrive intact. Only the standard library is imported here; torch and
numpy are looked up in ``sys.modules`` when a value needs them.
"""
from __future__ import annotations

import collections
import math
import sys

MAX_ELEMENTS = 1_000_000   # per tensor or array
MAX_ITEMS = 10_000         # per list, tuple, dict or set
MAX_DEPTH = 16
MAX_STR = 20_000

_type = type
_PLAIN_MAPPINGS = (collections.OrderedDict, collections.defaultdict)
_isinstance = isinstance
_len = len
_id = id
_getattr = getattr


def _qualname(cls) -> str:
    module = _getattr(cls, "__module__", None) or "?"
    name = _getattr(cls, "__qualname__", None) or _getattr(cls, "__name__", "?")
    return f"{module}.{name}"


def _mro(cls) -> list[str]:
    try:
        return [_qualname(base) for base in _type.__dict__["__mro__"].__get__(cls)][:32]
    except Exception:
        return [_qualname(cls)]


def _float(value: float):
    if math.isfinite(value):
        return value
    return {"kind": "float", "text": "nan" if value != value else ("inf" if value > 0 else "-inf")}


class Converter:
    """Converts values to data; built once, before student code can patch anything."""

    def __init__(self):
        torch = sys.modules.get("torch")
        numpy = sys.modules.get("numpy")
        self.torch = torch
        self.numpy = numpy
        if torch is not None:
            self.tensor_base = torch._C.TensorBase
            self.size_type = torch.Size
            self.dtype_type = torch.dtype
            self.device_type = torch.device
            self.no_subclass = torch._C.DisableTorchFunctionSubclass
            self.detach = torch._C.TensorBase.detach
            self.contiguous = torch._C.TensorBase.contiguous
            self.reshape = torch._C.TensorBase.reshape
            self.tolist = torch._C.TensorBase.tolist
            self.to = torch._C.TensorBase.to
            self.numel = torch._C.TensorBase.numel
            self.cpu_device = torch.device("cpu")
            self.grad_fn = torch._C.TensorBase.grad_fn.__get__
            self.requires_grad = torch._C.TensorBase.requires_grad.__get__
            self.shape = torch._C.TensorBase.shape.__get__
            self.dtype = torch._C.TensorBase.dtype.__get__
            self.device = torch._C.TensorBase.device.__get__
        if numpy is not None:
            self.ndarray = numpy.ndarray
            self.generic = numpy.generic
            self.asarray = numpy.asarray

    def __call__(self, value, depth: int = 0):
        if depth > MAX_DEPTH:
            return {"kind": "opaque", "mro": ["builtins.object"], "id": 0, "why": "too deeply nested"}
        kind = _type(value)
        if value is None or kind is bool or kind is int or kind is str:
            if kind is int and not (-(2**63) <= value < 2**63):
                return {"kind": "bigint", "text": str(value)}
            if kind is str and _len(value) > MAX_STR:
                return {"kind": "str", "text": value[:MAX_STR], "truncated": True}
            return value
        if kind is float:
            return _float(value)
        if kind is complex:
            return {"kind": "complex", "real": _float(value.real), "imag": _float(value.imag)}
        if kind is list or kind is tuple or kind is set or kind is frozenset:
            items = list(value)[:MAX_ITEMS] if kind in (set, frozenset) else value[:MAX_ITEMS]
            return {"kind": kind.__name__, "items": [self(item, depth + 1) for item in items],
                    "truncated": _len(value) > MAX_ITEMS}
        if kind is dict or kind in _PLAIN_MAPPINGS:
            pairs = list(value.items())[:MAX_ITEMS]
            return {"kind": "dict", "items": [[self(k, depth + 1), self(v, depth + 1)] for k, v in pairs]}
        if self.torch is not None:
            if _isinstance(value, self.tensor_base):
                return self.tensor(value, kind, depth)
            if kind is self.size_type:
                return {"kind": "size", "dims": [int(d) for d in value]}
            if kind is self.dtype_type:
                return {"kind": "dtype", "name": str(value).replace("torch.", "")}
            if kind is self.device_type:
                return {"kind": "device", "name": str(value)}
        if self.numpy is not None:
            if _isinstance(value, self.ndarray):
                return self.ndarray_data(value)
            if _isinstance(value, self.generic):
                return {"kind": "npscalar", "dtype": str(value.dtype), "value": self(value.item(), depth + 1)}
        if _isinstance(value, type):
            return {"kind": "class", "mro": _mro(value)}
        return {"kind": "opaque", "mro": _mro(kind), "id": _id(value)}

    def tensor(self, value, kind, depth):
        with self.no_subclass():
            numel = self.numel(value)
            dtype = str(self.dtype(value)).replace("torch.", "")
            shape = [int(d) for d in self.shape(value)]
            data = None
            if numel <= MAX_ELEMENTS and not value.is_meta:
                flat = self.reshape(self.contiguous(self.to(self.detach(value), self.cpu_device)), (-1,))
                data = [_float(x) if _type(x) is float else (
                    {"kind": "complex", "real": _float(x.real), "imag": _float(x.imag)}
                    if _type(x) is complex else x) for x in self.tolist(flat)]
            grad_fn = self.grad_fn(value)
        return {
            "kind": "tensor", "dtype": dtype, "shape": shape, "data": data,
            "requires_grad": bool(self.requires_grad(value)),
            "grad_fn": None if grad_fn is None else _type(grad_fn).__name__,
            "subclass": None if kind.__module__.startswith("torch") else _qualname(kind),
            "device": str(self.device(value)),
        }

    def ndarray_data(self, value):
        if value.size > MAX_ELEMENTS or value.dtype.kind not in "biufc":
            return {"kind": "opaque", "mro": _mro(_type(value)), "id": _id(value)}
        plain = self.asarray(value)
        items = plain.reshape(-1).tolist()
        data = [_float(x) if _type(x) is float else x for x in items]
        if plain.dtype.kind == "c":
            data = [{"kind": "complex", "real": _float(x.real), "imag": _float(x.imag)} for x in items]
        return {"kind": "ndarray", "dtype": str(plain.dtype), "shape": list(plain.shape), "data": data}


class NotData(ValueError):
    """An argument that cannot be rebuilt as a plain value in this process."""


def build(data, depth: int = 0):
    """Data (as :class:`Converter` writes it) back to a value: a probe's arguments.

    The data comes from the reference run (trusted); torch and numpy are used when this
    process has them, and a tensor argument in a process without torch is an error."""
    if depth > MAX_DEPTH + 2:
        raise NotData("too deeply nested")
    kind = _type(data)
    if data is None or kind in (bool, int, str, float):
        return data
    if kind is not dict:
        raise NotData(f"malformed value {kind.__name__}")
    tag = data.get("kind")
    if tag == "float":
        return float(data["text"])
    if tag == "bigint":
        return int(data["text"])
    if tag == "str":
        return data["text"]
    if tag == "complex":
        return complex(build(data["real"]), build(data["imag"]))
    if tag in ("list", "tuple", "set", "frozenset"):
        items = [build(item, depth + 1) for item in data["items"]]
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict":
        return {build(k, depth + 1): build(v, depth + 1) for k, v in data["items"]}
    if tag in ("tensor", "size", "dtype"):
        torch = sys.modules.get("torch")
        if torch is None:
            raise NotData(f"a {tag} argument, but this process has no torch")
        if tag == "size":
            return torch.Size(data["dims"])
        if tag == "dtype":
            return getattr(torch, data["name"])
        values = [build(v) if _type(v) is dict else v for v in data["data"]]
        tensor = torch.tensor(values, dtype=getattr(torch, data["dtype"])).reshape(data["shape"])
        if data.get("requires_grad"):
            tensor.requires_grad_(True)
        return tensor
    if tag == "device":
        return data["name"]
    if tag == "ndarray":
        numpy = sys.modules.get("numpy")
        if numpy is None:
            raise NotData("an array argument, but this process has no numpy")
        values = [build(v) if _type(v) is dict else v for v in data["data"]]
        return numpy.array(values, dtype=data["dtype"]).reshape(data["shape"])
    if tag == "npscalar":
        numpy = sys.modules.get("numpy")
        return numpy.dtype(data["dtype"]).type(build(data["value"]))
    raise NotData(f"a {tag} value is not plain data")
