"""Comparisons and logic: eq, lt, ..., logical_and, bitwise_and, where, isnan.

Their results are bool tensors, with no gradient; ``where`` alone passes gradients through,
to the side each element was taken from.
"""
from __future__ import annotations

from .. import dtypes
from ..dispatch import kernel
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _array, _binary, _devices, _elementwise_result, _unary, _wrap
from .codegen import ops


def _comparison(op):
    def compare(input, other):
        return _binary(op, input, other, result_dtype=dtypes.bool)
    compare.__name__ = op
    return compare


eq, ne, lt, le, gt, ge = (_comparison(op) for op in ("eq", "ne", "lt", "le", "gt", "ge"))
logical_and, logical_or, logical_xor = (
    _comparison(op) for op in ("logical_and", "logical_or", "logical_xor"))


def _bitwise(op):
    def combine(input, other):
        rt = dtypes.result_type(input, other)
        if rt.is_floating_point:
            raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{_scalar_name(rt)}'")
        return _binary(op, input, other)
    return combine


bitwise_and, bitwise_or, bitwise_xor = (_bitwise(op) for op in ("bitwise_and", "bitwise_or", "bitwise_xor"))


def _shift(op):
    """``<<`` and ``>>``: integer dtypes only (not bool, nor the barebones uint16/32/64)."""
    def shift(input, other):
        rt = dtypes.result_type(input, other)
        if not dtypes.is_integral(rt) or rt is dtypes.bool or rt in dtypes.BAREBONES_UNSIGNED:
            raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{_scalar_name(rt)}'")
        return _binary(op, input, other)
    return shift


bitwise_left_shift, bitwise_right_shift = _shift("lshift"), _shift("rshift")


def check_shift_(input, other):
    """``x <<= 1.5``: torch refuses the float result type before the kernel's own refusal."""
    rt = dtypes.result_type(input, other)
    if rt._category > input.dtype._category:
        raise RuntimeError(f"result type {_scalar_name(rt)} can't be cast to the desired output type "
                           f"{_scalar_name(input.dtype)}")


def where(condition, input, other):
    """``input`` where ``condition`` holds, else ``other`` (either may be a number)."""
    if condition.dtype is not dtypes.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with "
                           f"dtype {_scalar_name(condition.dtype)}")
    dev = _devices(condition, input, other)
    rt = dtypes.result_type(input, other)
    if dtypes.is_integral(rt):  # a number is converted to the dtype, checked (c10's words)
        input, other = (dtypes.checked_convert(v, rt) if isinstance(v, (int, float)) else v for v in (input, other))
    values = kernel("where", dev)(condition._np, _array(input, rt), _array(other, rt))
    return _elementwise_result(values.astype(rt.numpy, copy=False), dev, condition, input, other)


def nonzero_where(condition):
    """``torch.where(condition)``: the indices of the True elements, one tensor per dim."""
    return ops.nonzero(condition, as_tuple=True)


def isnan(input):
    return _unary("isnan", input, floating=False)


def isinf(input):
    return _unary("isinf", input, floating=False)


def isfinite(input):
    return _unary("isfinite", input, floating=False)


def isposinf(input):
    return ops.eq(input, float("inf"))


def isneginf(input):
    return ops.eq(input, float("-inf"))


def logical_not(input):
    return _wrap(kernel("logical_not", input._device)(input._np), input._device)


def bitwise_not(input):
    if input.dtype.is_floating_point:
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    return _wrap(kernel("bitwise_not", input._device)(input._np), input._device)
