"""On the host: validate observation data from the sandbox and rebuild trusted values.

Everything arriving here was produced by the student's process, so each field is checked
(type, size, consistency) and rebuilt with the host's own torch/numpy. Tensor subclasses
come back as plain tensors: their data is kept, their behaviour is not. Objects that are
not data (student class instances, functions) become :class:`Opaque`: equal only to
itself, so it matches no expected value.
"""
from __future__ import annotations

import math

import numpy
import torch

MAX_NUMEL = 1_000_000
MAX_INT_DIGITS = 4000    # below Python's own limit for int(text)
# numpy dtypes a result may have: numbers only (a "V<n>" void of n bytes, or a string dtype,
# would let a few bytes of data ask the host for gigabytes).
NUMPY_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                          "float16", "float32", "float64", "complex64", "complex128"})


class BadObservation(ValueError):
    """The sandbox sent something that is not a well-formed observation."""


class Opaque:
    """A non-data object from the run: only its type chain and identity are known."""

    __slots__ = ("mro", "ident", "run")

    def __init__(self, mro: list[str], ident: int, run: str):
        self.mro, self.ident, self.run = mro, ident, run

    def __eq__(self, other):
        return isinstance(other, Opaque) and (self.run, self.ident) == (other.run, other.ident)

    def __hash__(self):
        return hash((self.run, self.ident))

    def __repr__(self):
        return f"<{self.mro[0] if self.mro else 'object'} object>"


class TypeRef:
    """A class from the run, known by its qualified name and bases."""

    __slots__ = ("mro",)

    def __init__(self, mro: list[str]):
        self.mro = mro

    @property
    def qualname(self) -> str:
        return self.mro[0]

    def __eq__(self, other):
        if isinstance(other, TypeRef):
            return self.qualname == other.qualname
        if isinstance(other, type):
            return self.qualname == qualname_of(other)
        return NotImplemented

    def __hash__(self):
        return hash(self.qualname)

    def __repr__(self):
        return f"<class '{self.qualname}'>"


def qualname_of(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _require(condition: bool, what: str):
    if not condition:
        raise BadObservation(what)


def _number(x, what):
    if isinstance(x, dict):
        _require(x.get("kind") == "float" and x.get("text") in ("nan", "inf", "-inf"), what)
        return float(x["text"])
    if isinstance(x, dict) and x.get("kind") == "complex":
        return complex(_number(x["real"], what), _number(x["imag"], what))
    _require(type(x) in (int, float, bool), what)
    return x


def _dtype(name: str):
    dtype = getattr(torch, name, None) if isinstance(name, str) else None
    _require(isinstance(dtype, torch.dtype), f"unknown dtype {name!r}")
    return dtype


def rebuild(data, run: str):
    """Data from :mod:`autograder.observe` to a host value; raises BadObservation."""
    kind = type(data)
    if data is None or kind in (bool, int, str):
        return data
    if kind is float:
        return data
    _require(kind is dict and isinstance(data.get("kind"), str), "malformed value")
    tag = data["kind"]
    if tag == "float":
        return _number(data, "bad float")
    if tag == "bigint":
        text = data.get("text")
        _require(isinstance(text, str) and 0 < len(text) <= MAX_INT_DIGITS + 1
                 and text.lstrip("-").isdigit() and text.isascii(), "bad int")
        return int(text)
    if tag == "str":
        _require(isinstance(data.get("text"), str), "bad str")
        return data["text"]
    if tag == "complex":
        return complex(_number(data.get("real"), "bad complex"), _number(data.get("imag"), "bad complex"))
    if tag in ("list", "tuple", "set", "frozenset"):
        items = data.get("items")
        _require(isinstance(items, list), "bad container")
        values = [rebuild(item, run) for item in items]
        if tag == "list":
            return values
        if tag == "tuple":
            return tuple(values)
        try:
            return set(values) if tag == "set" else frozenset(values)
        except TypeError:
            raise BadObservation("unhashable set item") from None
    if tag == "dict":
        items = data.get("items")
        _require(isinstance(items, list) and all(isinstance(p, list) and len(p) == 2 for p in items),
                 "bad dict")
        try:
            return {rebuild(k, run): rebuild(v, run) for k, v in items}
        except TypeError:
            raise BadObservation("unhashable dict key") from None
    if tag == "tensor":
        return _tensor(data)
    if tag == "ndarray":
        return _ndarray(data)
    if tag == "npscalar":
        dtype = data.get("dtype")
        _require(dtype in NUMPY_DTYPES, "bad numpy scalar")
        value = rebuild(data.get("value"), run)
        _require(type(value) in (bool, int, float, complex), "bad numpy scalar")
        try:
            return numpy.dtype(dtype).type(value)
        except (TypeError, ValueError, OverflowError):
            raise BadObservation("bad numpy scalar") from None
    if tag == "size":
        dims = data.get("dims")
        _require(isinstance(dims, list) and all(type(d) is int and d >= 0 for d in dims), "bad size")
        return torch.Size(dims)
    if tag == "dtype":
        return _dtype(data.get("name"))
    if tag == "device":
        name = data.get("name")
        _require(isinstance(name, str) and len(name) < 64, "bad device")
        return name
    if tag == "class":
        mro = data.get("mro")
        _require(isinstance(mro, list) and mro and all(isinstance(m, str) for m in mro), "bad class")
        return TypeRef(mro)
    if tag == "opaque":
        mro, ident = data.get("mro"), data.get("id")
        _require(isinstance(mro, list) and all(isinstance(m, str) for m in mro) and type(ident) is int,
                 "bad object")
        return Opaque(mro, ident, run)
    raise BadObservation(f"unknown value kind {tag!r}")


def _shape(data) -> list[int]:
    shape = data.get("shape")
    _require(isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape), "bad shape")
    _require(math.prod(shape) <= MAX_NUMEL, "tensor too large to judge")
    return shape


def _tensor(data) -> torch.Tensor:
    dtype = _dtype(data.get("dtype"))
    shape = _shape(data)
    values = data.get("data")
    _require(isinstance(values, list) and len(values) == math.prod(shape),
             "tensor data does not match its shape")
    plain = [_number(v, "bad tensor element") if not (isinstance(v, dict) and v.get("kind") == "complex")
             else complex(_number(v.get("real"), "bad"), _number(v.get("imag"), "bad")) for v in values]
    try:
        tensor = torch.tensor(plain, dtype=dtype).reshape(shape)
    except (TypeError, ValueError, RuntimeError, OverflowError) as error:
        raise BadObservation(f"tensor data does not fit {dtype}: {error}") from None
    if data.get("requires_grad") is True and (tensor.is_floating_point() or tensor.is_complex()):
        tensor.requires_grad_(True)
    return tensor


def _ndarray(data) -> numpy.ndarray:
    dtype = data.get("dtype")
    _require(dtype in NUMPY_DTYPES, "bad array dtype")
    shape = _shape(data)
    values = data.get("data")
    _require(isinstance(values, list) and len(values) == math.prod(shape), "array data does not match its shape")
    plain = [complex(_number(v.get("real"), "bad"), _number(v.get("imag"), "bad"))
             if isinstance(v, dict) and v.get("kind") == "complex" else _number(v, "bad array element")
             for v in values]
    try:
        return numpy.array(plain, dtype=numpy.dtype(dtype)).reshape(shape)
    except (TypeError, ValueError, OverflowError) as error:
        raise BadObservation(f"array data does not fit {dtype}: {error}") from None
