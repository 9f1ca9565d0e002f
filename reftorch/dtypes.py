"""dtypes and torch's type-promotion rules.

A dtype is a name over a NumPy dtype. Promotion follows torch: the result of an
operation has the "highest" category among its operands (bool < integer < floating), but
a zero-dim tensor or a Python number only decides the result when it raises the category:
``float32_tensor + float64_scalar_tensor`` stays float32, ``int_tensor + 2.5`` becomes float32.
"""
from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np


class dtype:
    __slots__ = ("name", "numpy", "itemsize", "is_floating_point", "is_signed", "_category")

    def __init__(self, name: str, numpy_dtype, category: builtins.int):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.itemsize = self.numpy.itemsize
        self._category = category  # 0 bool, 1 integer, 2 floating point
        self.is_floating_point = category == 2
        self.is_signed = category == 2 or self.numpy.kind == "i"

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


bool = dtype("bool", np.bool_, 0)  # noqa: A001  (torch.bool is the public name)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
float16 = dtype("float16", np.float16, 2)
# NumPy has no bfloat16: ml_dtypes' stores the 16-bit pattern and rounds to nearest even,
# and its arithmetic goes through float32, as torch's CPU kernels do
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)

# torch's aliases
int = int64  # noqa: A001
long = int64
short = int16
float = float32  # noqa: A001
double = float64
half = float16

# 16-bit floats are stored in 16 bits but computed in float32 (torch's "opmath" type on CPU)
REDUCED_FLOATS = (float16, bfloat16)
_REDUCED_NUMPY = tuple(d.numpy for d in REDUCED_FLOATS)

_ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
_FROM_NUMPY = {d.numpy: d for d in _ALL}

_default_dtype = float32


def get_default_dtype() -> dtype:
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    global _default_dtype
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype = d


def is_reduced_float(np_dtype) -> builtins.bool:
    """float16 or bfloat16 (as NumPy dtypes): values torch computes in float32."""
    return np_dtype in _REDUCED_NUMPY


def cast(values, d: dtype) -> np.ndarray:
    """``values`` (an array or nested numbers) as a new array of dtype ``d``.

    torch converts a double or an integer to a 16-bit float through float32 (c10::Half and
    c10::BFloat16 are built from a float), and rounding twice can differ from rounding once:
    so do we.
    """
    if d in REDUCED_FLOATS:
        values = np.asarray(values, dtype=np.float32)
    return np.array(values, dtype=d.numpy)


def from_numpy_dtype(np_dtype) -> dtype:
    try:
        return _FROM_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only "
            "supported types are: float64, float32, float16, int64, int32, int16, int8, uint8, "
            "and bool."
        ) from None


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both convert to without losing their kind (torch.promote_types)."""
    if a is b:
        return a
    if a._category != b._category:
        return a if a._category > b._category else b
    if a._category == 2:
        if {a, b} == {float16, bfloat16}:  # neither holds the other: float32 holds both
            return float32
        return a if a.itemsize > b.itemsize else b
    if a is uint8 or b is uint8:  # the smallest signed type holding 0..255 and the other
        signed = b if a is uint8 else a
        return int16 if signed is int8 else signed
    return a if a.itemsize > b.itemsize else b


def _category(d: dtype | None) -> builtins.int:
    return -1 if d is None else d._category


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
