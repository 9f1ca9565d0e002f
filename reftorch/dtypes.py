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
# torch's "barebones" unsigned types: storage, copies, views and conversions, little arithmetic
uint16 = dtype("uint16", np.uint16, 1)
uint32 = dtype("uint32", np.uint32, 1)
uint64 = dtype("uint64", np.uint64, 1)
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

_ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, uint16, uint32, uint64)
BAREBONES_UNSIGNED = (uint16, uint32, uint64)
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
            "supported types are: float64, float32, float16, complex64, complex128, int64, int32, "
            "int16, int8, uint64, uint32, uint16, uint8, and bool."
        ) from None


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both convert to without losing their kind (torch.promote_types)."""
    if a is b:
        return a
    if a in BAREBONES_UNSIGNED or b in BAREBONES_UNSIGNED:
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to "
                           f"promote {_scalar_type_name(a)} and {_scalar_type_name(b)}")
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


# -- integers that do not fit: wrapped, or refused, as c10 does --------------------------------
_CPP_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t"}


def is_integral(d: dtype) -> builtins.bool:
    return d._category == 1


def checked_convert(value, d: dtype, name: str | None = None):
    """A number as integer dtype ``d`` holds it, or c10's checked_convert error (worded with
    ``name``: by default the C++ type, as ``Scalar::to<uint8_t>`` says it). A float must fit
    (it is truncated); an int too, except that an unsigned dtype also takes negative ints down
    to -max, which wrap (uint8 of -1 is 255: ``a - b`` may be done as ``a + 255 * b``)."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return builtins.int(value)
    info = np.iinfo(d.numpy)
    if isinstance(value, (builtins.float, np.floating)):
        fits = info.min <= builtins.float(value) <= info.max  # (False for nan)
        number = builtins.int(value) if fits else None
    else:
        number = builtins.int(value)
        fits = number <= info.max and number >= (-info.max if info.min == 0 else info.min)
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {name or _CPP_NAMES[d.name]} without overflow")
    return number % (info.max + 1) if number < 0 and info.min == 0 else number


def wrapped_int(value: builtins.int, d: dtype):
    """A Python int operand of an integer op, as torch's kernels see it: read as a 64-bit
    integer (signed, or unsigned above int64's range), then cast to ``d``, wrapping as C does:
    ``uint8_tensor + 300`` adds 44."""
    if value >= 2 ** 64:
        raise OverflowError("int too big to convert")
    if value < -2 ** 63:
        raise OverflowError("can't convert negative int to unsigned")
    return np.array(value % 2 ** 64, dtype=np.uint64).astype(d.numpy)[()]


def python_number(value):
    """The Python number torch reads from a NumPy scalar operand: an integer as an int, a
    float as a float, and a bool as a float too (torch's argument parsing takes np.bool_ so)."""
    return builtins.float(value) if isinstance(value, np.bool_) else value.item()


def result_type(*operands) -> dtype:
    """torch.result_type over tensors and Python numbers."""
    dim_result = zero_result = wrapped_result = None
    for op in operands:
        if isinstance(op, np.generic):  # a NumPy scalar counts as the Python number it holds
            op = python_number(op)
        if isinstance(op, (builtins.bool, builtins.int, builtins.float)):
            d = scalar_dtype(op)
            wrapped_result = d if wrapped_result is None else promote_types(wrapped_result, d)
        elif op.dim() == 0:
            zero_result = op.dtype if zero_result is None else promote_types(zero_result, op.dtype)
        else:
            dim_result = op.dtype if dim_result is None else promote_types(dim_result, op.dtype)
    return _combine(dim_result, _combine(zero_result, wrapped_result))


class finfo:
    """Machine limits of a floating-point dtype: ``torch.finfo(torch.float16).eps``."""

    def __init__(self, type=None):
        type = _default_dtype if type is None else type
        if not type.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to "
                            "handle 'torch.finfo'")
        info = ml_dtypes.finfo(type.numpy) if type is bfloat16 else np.finfo(type.numpy)
        self.bits = info.bits
        self.eps, self.max, self.min = builtins.float(info.eps), builtins.float(info.max), builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = builtins.float(10.0 ** -info.precision)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: ``torch.iinfo(torch.int32).max``."""

    def __init__(self, type):
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                            "'torch.iinfo'")
        info = np.iinfo(type.numpy)
        self.bits, self.max, self.min, self.dtype = info.bits, builtins.int(info.max), builtins.int(info.min), type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={builtins.float(self.min):g}, max={builtins.float(self.max):g}, dtype={self.dtype})"


# how torch's messages name a dtype: its C++ element type, or its ScalarType
_CPP_TYPE_NAMES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long int",
                   "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                   "bool": "bool", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                   "uint16": "unsigned short", "uint32": "unsigned int", "uint64": "unsigned long"}
_SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "int32": "Int", "int64": "Long",
                      "int16": "Short", "int8": "Char", "uint8": "Byte",
                      "bool": "Bool", "float16": "Half", "bfloat16": "BFloat16",
                      "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}


def _cpp_type_name(dtype) -> str:
    return _CPP_TYPE_NAMES.get(dtype.name, dtype.name)


def _scalar_type_name(dtype) -> str:
    return _SCALAR_TYPE_NAMES.get(dtype.name, dtype.name)
