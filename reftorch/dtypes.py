"""dtypes and torch's type-promotion rules.

A dtype is a name over a NumPy dtype. Promotion follows torch: the result of an
operation has the "highest" category among its operands (bool < integer < floating), but
a zero-dim tensor or a Python number only decides the result when it raises the category:
``float32_tensor + float64_scalar_tensor`` stays float32, ``int_tensor + 2.5`` becomes float32.
"""
from __future__ import annotations

import builtins

import numpy as np


class dtype:
    __slots__ = ("name", "numpy", "itemsize", "is_floating_point", "is_signed", "_rank")

    def __init__(self, name: str, numpy_dtype, rank: int):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.itemsize = self.numpy.itemsize
        self.is_floating_point = self.numpy.kind == "f"
        self.is_signed = self.numpy.kind in "if"
        self._rank = rank  # position in the promotion order below

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


bool = dtype("bool", np.bool_, 0)  # noqa: A001  (torch.bool is the public name)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 2)
float32 = dtype("float32", np.float32, 3)
float64 = dtype("float64", np.float64, 4)

# torch's aliases
int = int64  # noqa: A001
long = int64
float = float32  # noqa: A001
double = float64

_BY_RANK = (bool, int32, int64, float32, float64)
_FROM_NUMPY = {d.numpy: d for d in _BY_RANK}

_default_dtype = float32


def get_default_dtype() -> dtype:
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    global _default_dtype
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype = d


def from_numpy_dtype(np_dtype) -> dtype:
    try:
        return _FROM_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only "
            "supported types are: float64, float32, int64, int32, and bool."
        ) from None


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both convert to (for our five dtypes: the higher rank)."""
    return a if a._rank >= b._rank else b


def _category(d: dtype | None) -> builtins.int:
    if d is None:
        return -1
    return 2 if d.is_floating_point else (0 if d is bool else 1)


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # `higher` comes from a more important tier (dimensioned tensors > zero-dim > numbers).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if _category(higher) >= _category(lower):
        return higher
    return promote_types(higher, lower)


def scalar_dtype(value) -> dtype:
    """The dtype a Python number takes as an operand ("wrapped number")."""
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, builtins.int):
        return int64
    if isinstance(value, builtins.float):
        return _default_dtype
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def result_type(*operands) -> dtype:
    """torch.result_type over tensors and Python numbers."""
    dim_result = zero_result = wrapped_result = None
    for op in operands:
        if isinstance(op, (builtins.bool, builtins.int, builtins.float)):
            d = scalar_dtype(op)
            wrapped_result = d if wrapped_result is None else promote_types(wrapped_result, d)
        elif op.dim() == 0:
            zero_result = op.dtype if zero_result is None else promote_types(zero_result, op.dtype)
        else:
            dim_result = op.dtype if dim_result is None else promote_types(dim_result, op.dtype)
    return _combine(dim_result, _combine(zero_result, wrapped_result))
