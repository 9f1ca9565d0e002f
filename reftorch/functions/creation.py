"""Creation: tensor, as_tensor, from_numpy, zeros, ones, full, empty, arange, linspace, eye,
and the ``*_like`` forms.

``torch.tensor`` always copies; ``from_numpy`` and ``as_tensor`` of an array share its memory.
"""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from .. import dtypes
from .. import dispatch as _dispatch
from ..dispatch import canonical, cpu, kernel
from ..storage import Storage, preserve_format_strides
from ..tensor import Size, Tensor
from ._support import _non_overlapping_and_dense, _with_strides, _wrap
from .codegen import ops


def _shape_arg(size, name=None, keyword=None):
    """The sizes as a tuple: ``zeros(2, 3)``, ``zeros((2, 3))``, or ``zeros(size=(2, 3))``."""
    if keyword is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        size = (keyword,)
    if not size and name is not None:  # torch.zeros() needs a size; torch.zeros(()) is 0-dim
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    return tuple(builtins.int(s) for s in size)


def _finish(out, requires_grad):
    if requires_grad:
        if not out.dtype.is_floating_point:  # factories word this differently from requires_grad_()
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        out.requires_grad_(True)
    return out


def _device_arg(device):
    d = canonical(device if device is not None else _dispatch.default_device[0] or cpu)
    if d.type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    return d


def _check_sizes(size):
    for n in size:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(size)}")


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if isinstance(size, builtins.int):
        size = (size,)
    _check_sizes(size)
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    if dtypes.is_integral(dtype):
        fill_value = dtypes.checked_convert(fill_value, dtype)
    d = _device_arg(device)
    return _finish(_wrap(kernel("full", d)(tuple(size), fill_value, dtype.numpy), d), requires_grad)


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    shape = _shape_arg(sizes, "zeros", size)
    if builtins.any(n < 0 for n in shape):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return full(shape, 0, dtype=dtype or dtypes.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    return full(_shape_arg(sizes, "ones", size), 1, dtype=dtype or dtypes.get_default_dtype(),
                device=device, requires_grad=requires_grad)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    d = _device_arg(device)
    dtype = dtype or dtypes.get_default_dtype()
    shape = _shape_arg(sizes, "empty", size)
    _check_sizes(shape)
    return _finish(_wrap(kernel("empty", d)(shape, dtype.numpy), d), requires_grad)


def _like(maker):
    def like(input, *args, dtype=None, device=None, requires_grad=False, memory_format=None, **kwargs):
        out = maker(input._shape, *args, dtype=dtype or input.dtype,
                    device=device or input._device, requires_grad=False, **kwargs)
        # same layout as ``input`` (torch's preserve_format), unless asked for row-major
        if memory_format != "contiguous" and input._stride != out._stride:
            strides = preserve_format_strides(input._shape, input._stride)
            if strides != out._stride:
                out = _with_strides(out._np, strides, out._device)
        return _finish(out, requires_grad)
    like.__name__ = maker.__name__ + "_like"
    return like


zeros_like = _like(zeros)

ones_like = _like(ones)

empty_like = _like(empty)

full_like = _like(full)



def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        is_float = builtins.any(isinstance(v, builtins.float) for v in (start, end, step))
        dtype = dtypes.get_default_dtype() if is_float else dtypes.int64
    if not dtype.is_floating_point:  # an integer range counts in integers: the bounds cut first
        start, end, step = builtins.int(start), builtins.int(end), builtins.int(step)
        if step == 0:
            raise ValueError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    d = _device_arg(device)
    return _finish(_wrap(kernel("arange", d)(start, end, step, dtype.numpy), d), requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtype or dtypes.get_default_dtype()
    d = _device_arg(device)
    return _finish(_wrap(kernel("linspace", d)(start, end, steps, dtype.numpy), d), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    for name, size in (("n", n), ("m", m)):
        if size is not None and size < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {size}")
    dtype = dtype or dtypes.get_default_dtype()
    d = _device_arg(device)
    values = np.eye(n, m, dtype=dtype.numpy)
    return _finish(_wrap(kernel("copy", d)(values) if d.type != "cpu" else values, d), requires_grad)


# what torch reads as nested data (a Python sequence; a str is refused as a dtype instead)
_SEQUENCES = (list, tuple, range)


def _sizes_of(data):
    """torch's compute_sizes: the shape read along the first elements (an empty list ends it;
    a str there is a sequence to torch, one that never ends)."""
    shape, first = [], data
    while isinstance(first, _SEQUENCES):
        shape.append(len(first))
        if not first:
            break
        first = first[0]
    if shape and isinstance(first, str):
        raise ValueError(f"too many dimensions '{type(first).__name__}'")
    return shape


def _check_rectangular(data, shape, dtype):
    """Nested lists must be rectangular (the first elements set ``shape``), checked as torch
    stores them: its errors, a list where ``dtype`` wants a number worded as Python's unpacking
    of a float or an int words it. Nothing is stored, so nothing checked, when a size is 0."""
    if 0 not in shape:
        _check_against(data, shape, 0, dtype.is_floating_point)


def _check_against(data, shape, dim, floating):
    if dim == len(shape):
        _check_number(data, floating)
        return
    if not isinstance(data, _SEQUENCES):
        raise TypeError("not a sequence")
    if len(data) != shape[dim]:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(data)})")
    for item in data:
        _check_against(item, shape, dim + 1, floating)


def _check_number(value, floating):
    """torch stores an element as Python unpacks a float (anything with __float__ or __index__)
    or, for integer and bool dtypes, an int (a float, or anything with __index__), and its
    errors are those of that unpacking."""
    if isinstance(value, (Tensor, np.ndarray)):
        return
    kind = type(value)
    if floating and (hasattr(kind, "__float__") or hasattr(kind, "__index__")):
        return
    if not floating and (isinstance(value, builtins.float) or hasattr(kind, "__index__")):
        return
    # CPython names a built-in or C type by its tp_name (numpy.float32), a Python class by its name
    name = kind.__name__ if kind.__module__ == "builtins" or kind.__flags__ & (1 << 9) else f"{kind.__module__}.{kind.__name__}"
    raise TypeError(f"must be real number, not {name}" if floating else f"'{name}' object cannot be interpreted as an integer")


def _infer_dtype(data):
    """The dtype torch.tensor picks for nested Python data (torch's infer_scalar_type): each
    element has one (a tensor or NumPy value its own, a Python float the default dtype, an int
    int64, a bool bool, an empty list the default dtype), and the result promotes them all."""
    if isinstance(data, _SEQUENCES):
        if not data:
            return dtypes.get_default_dtype()
        result = None
        for item in data:
            kind = _infer_dtype(item)
            result = kind if result is None else dtypes.promote_types(result, kind)
        return result
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, (np.ndarray, np.generic)):
        return dtypes.from_numpy_dtype(data.dtype)
    if isinstance(data, builtins.bool):
        return dtypes.bool
    if isinstance(data, builtins.int):
        return dtypes.int64
    if isinstance(data, (builtins.float, builtins.complex)):
        return dtypes.get_default_dtype()
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """Always copies ``data`` (a list, number, NumPy array, or tensor)."""
    d = _device_arg(device)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
            "or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
        out = _wrap(dtypes.cast(data._np, dtype or data.dtype), data._device)
        return _finish(out if d == out._device else ops.to(out, d), requires_grad)
    if isinstance(data, np.generic):  # a NumPy scalar keeps its dtype, as a 0-dim array
        data = np.asarray(data)
    if isinstance(data, np.ndarray):
        source_dtype = dtypes.from_numpy_dtype(data.dtype)
        if d.type == "cpu":
            return _finish(_copy_keeping_layout(from_numpy(data), dtype or source_dtype), requires_grad)
        values = np.ascontiguousarray(dtypes.cast(data, dtype or source_dtype))
    else:
        # torch's order: the sizes, the dtype, then the values, each with its own errors
        if isinstance(data, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        shape = _sizes_of(data)
        dtype = dtype or _infer_dtype(data)
        _check_rectangular(data, shape, dtype)
        values = (np.empty(shape, dtype.numpy) if 0 in shape
                  else dtypes.cast(_integers_stored(_unwrap_scalars(data), dtype), dtype))
    out = _wrap(kernel("copy", d)(values) if d.type != "cpu" else values, d)
    return _finish(out, requires_grad)



def _copy_keeping_layout(source, dtype):
    """A copy in ``dtype`` with the same strides when ``source`` is dense (torch's
    preserve_format, what ``torch.tensor(ndarray)`` does), else a row-major copy."""
    if not _non_overlapping_and_dense(source._shape, source._stride):
        return _wrap(np.array(source._np, dtype=dtype.numpy, order="C", copy=True))
    return _with_strides(source._np.astype(dtype.numpy, copy=False), source._stride)


def _integers_stored(data, dtype):
    """For an integer dtype, each element as torch's store_scalar reads it: an int as a 64-bit
    integer, then checked (uint8 takes -1 as 255, refuses 256), a float truncated if it fits."""
    if not dtypes.is_integral(dtype):
        return data
    if isinstance(data, np.ndarray):  # (torch reads an array inside a list element by element)
        data = data.tolist()
    if isinstance(data, list):
        return [_integers_stored(v, dtype) for v in data]
    if isinstance(data, (builtins.int, np.integer)) and not isinstance(data, builtins.bool) \
            and not -2 ** 63 <= data < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    return dtypes.checked_convert(data, dtype, name=dtype.name)


def _unwrap_scalars(data):
    if isinstance(data, Tensor):
        if data.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data.item()
    if isinstance(data, _SEQUENCES):
        return [_unwrap_scalars(v) for v in data]
    return data


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        return ops.to(data, dtype=dtype, device=device)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.numpy == data.dtype) and device in (None, "cpu", cpu):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)



def from_numpy(array: np.ndarray) -> Tensor:
    """Shares memory with ``array``: a write on either side shows on the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtype = dtypes.from_numpy_dtype(array.dtype)
    if builtins.any(s < 0 for s in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making a "
            "copy of your array  with array.copy().) "
        )
    itemsize = array.itemsize
    span = 1 + builtins.sum((n - 1) * s // itemsize for n, s in zip(array.shape, array.strides)) if array.size else 0
    flat = np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(itemsize,))
    t = object.__new__(Tensor)
    t._storage = Storage(flat, cpu)
    t._np = array if array.flags.writeable else array
    t._shape = array.shape
    t._stride = tuple(s // itemsize for s in array.strides)
    t._offset = 0
    t.dtype = dtype
    t._device = cpu
    t._init_autograd_state()
    return t


# -- new tensors like an existing one: x.new_zeros(2, 3) takes x's dtype and device ---------
def _new_maker(maker, name):
    def new(self, *sizes, dtype=None, device=None, requires_grad=False, **kwargs):
        size = kwargs.pop("size", None)
        shape = _shape_arg(sizes, name, size)
        return maker(shape, dtype=dtype or self.dtype, device=device or self._device,
                     requires_grad=requires_grad, **kwargs)
    new.__name__ = name
    return new


new_zeros = _new_maker(zeros, "new_zeros")

new_ones = _new_maker(ones, "new_ones")

new_empty = _new_maker(empty, "new_empty")



def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self._device,
                requires_grad=requires_grad)



def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """A copy of ``data`` with ``self``'s dtype and device unless told otherwise."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
            "or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        data = data.detach().cpu()._np  # (warned once above; torch.tensor would warn again)
    return tensor(data, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)



# -- the legacy constructors: torch.Tensor(...), torch.FloatTensor(...) ---------------------
def legacy_new(cls, dtype, args, device):
    """``torch.Tensor([1, 2])`` copies data into the default float dtype (``FloatTensor`` and
    friends into theirs); ``torch.Tensor(2, 3)`` is an uninitialised 2x3; ``torch.Tensor(t)``
    is ``t`` under a new name (same memory)."""
    dtype = dtype or dtypes.get_default_dtype()
    if len(args) == 1 and isinstance(args[0], Tensor):
        source = args[0]
        if dtype is not dtypes.get_default_dtype() and source.dtype is not dtype:
            raise TypeError(f"expected {dtype} (got {source.dtype})")
        return source.detach()._alias_as(cls)
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)) and not isinstance(args[0], Size):
        out = tensor(np.asarray(args[0]) if isinstance(args[0], np.ndarray) else args[0], dtype=dtype,
                     device=device)
    elif builtins.all(isinstance(a, (builtins.int, np.integer)) and not isinstance(a, builtins.bool)
                      for a in args) or (len(args) == 1 and isinstance(args[0], Size)):
        out = empty(*(tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args),
                    dtype=dtype, device=device) if args else empty(0, dtype=dtype, device=device)
    else:
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    return out if cls is Tensor else out._alias_as(cls)


class _LegacyTensorType(type):
    """``torch.FloatTensor``: calling it builds a float32 tensor; ``isinstance(t, FloatTensor)``
    asks for a CPU float32 tensor."""

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, Tensor) and instance.dtype is cls.dtype and instance.device.type == "cpu"

    def __call__(cls, *args, device=None):
        return legacy_new(Tensor, cls.dtype, args, device)


def _legacy_type(name, dtype):
    return _LegacyTensorType(name, (), {"dtype": dtype, "__module__": "torch"})


FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor = (_legacy_type(n + "Tensor", d) for n, d in (
    ("Float", dtypes.float32), ("Double", dtypes.float64), ("Half", dtypes.float16), ("BFloat16", dtypes.bfloat16)))
LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, BoolTensor = (_legacy_type(n + "Tensor", d) for n, d in (
    ("Long", dtypes.int64), ("Int", dtypes.int32), ("Short", dtypes.int16), ("Char", dtypes.int8),
    ("Byte", dtypes.uint8), ("Bool", dtypes.bool)))
