"""The Tensor's methods: every op declared with the ``method`` variant (codegen.py builds
them), and the few that are Python's alone, as torch writes them in ``torch/_tensor.py``
and ``python_variable_methods.cpp``: operators (``x + y``, ``2 ** x``, ``x[0] = 1``),
dtype conversions (``x.float()``), the ``T`` / ``mT`` / ``H`` / ``mH`` properties.
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from .codegen import ops
from .copies import detach_
from .counting import unique_api, unique_consecutive_api
from .creation import legacy_new
from .indexing import getitem, setitem
from .views import _H, _T, _matrix_transpose


def _reverse(op):
    """``2 ** x`` calls ``x.__rpow__(2)``: the op with the operands the other way round."""
    def reversed_op(self, other):
        return op(other, self)
    reversed_op.__name__ = op.__name__
    return reversed_op


def _commuted(op):
    """``2 * x`` calls ``x.__rmul__(2)``: torch records mul(x, 2), the tensor first (and so for +)."""
    def commuted_op(self, other):
        return op(self, other)
    commuted_op.__name__ = op.__name__
    return commuted_op


def _rdiv(self, other):
    """``2 / x``: torch computes ``reciprocal(x) * 2``."""
    return ops.mul(ops.reciprocal(self), other)


def _rmod(self, other):
    """``3 % x``: torch.remainder(3, x); an operand remainder cannot take hands over to Python."""
    try:
        return ops.remainder(other, self)
    except TypeError:
        return NotImplemented


def _invert(input):  # ~x: Python's operator has its own check (and TypeError) in torch
    if input.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return ops.bitwise_not(input)


def _comparison_operator(compare):
    """``t == None`` is False and ``t < [1, 2]`` a TypeError, as for torch: for an operand it
    cannot compare with, the operator hands over to Python (NotImplemented)."""
    def operator(self, other):
        if not isinstance(other, (Tensor, builtins.int, builtins.float, np.generic)):
            return NotImplemented
        return compare(self, other)
    operator.__name__ = compare.__name__
    return operator


def _converter(d):
    """``x.float()``, ``x.long()``, ...: ``to`` a fixed dtype."""
    def convert(input, memory_format=None):
        return ops.to(input, d, memory_format=memory_format)
    convert.__name__ = "to"
    return convert


def _new(self, *args):
    """``x.new(...)``: the legacy constructor, in x's dtype and on x's device."""
    return legacy_new(Tensor, self.dtype, args, self._device)


def operators():
    """Python's operators, and the op each one calls. ``x += y`` writes into x, as torch's does
    (without ``__iadd__`` Python would rebind x to x + y)."""
    o = ops
    return dict(
        __add__=o.add, __radd__=_commuted(o.add), __iadd__=o.add_,
        __sub__=o.sub, __rsub__=o.rsub, __isub__=o.sub_,
        __mul__=o.mul, __rmul__=_commuted(o.mul), __imul__=o.mul_,
        __truediv__=o.div, __rtruediv__=_rdiv, __itruediv__=o.div_,
        __floordiv__=o.floor_divide, __rfloordiv__=_reverse(o.floor_divide), __ifloordiv__=o.floor_divide_,
        __mod__=o.remainder, __rmod__=_rmod, __imod__=o.remainder_,
        __pow__=o.pow, __rpow__=_reverse(o.pow), __ipow__=o.pow_,
        __matmul__=o.matmul, __rmatmul__=_reverse(o.matmul),
        __neg__=o.neg, __abs__=o.abs, __invert__=_invert,
        __eq__=_comparison_operator(o.eq), __ne__=_comparison_operator(o.ne), __lt__=_comparison_operator(o.lt),
        __le__=_comparison_operator(o.le), __gt__=_comparison_operator(o.gt), __ge__=_comparison_operator(o.ge),
        __and__=o.bitwise_and, __or__=o.bitwise_or, __xor__=o.bitwise_xor,
        __lshift__=o.bitwise_left_shift, __rlshift__=_reverse(o.bitwise_left_shift), __ilshift__=o.bitwise_left_shift_,
        __rshift__=o.bitwise_right_shift, __rrshift__=_reverse(o.bitwise_right_shift), __irshift__=o.bitwise_right_shift_,
        __getitem__=getitem, __setitem__=setitem,
    )


CONVERSIONS = dict(
    float=_converter(dtypes.float32), double=_converter(dtypes.float64), half=_converter(dtypes.float16),
    bfloat16=_converter(dtypes.bfloat16), long=_converter(dtypes.int64), int=_converter(dtypes.int32),
    bool=_converter(dtypes.bool), short=_converter(dtypes.int16), byte=_converter(dtypes.uint8),
    char=_converter(dtypes.int8), new=_new, detach_=detach_,
    unique=unique_api, unique_consecutive=unique_consecutive_api,  # (Python functions in torch too)
)

PROPERTIES = dict(
    T=property(_T), H=property(_H),
    mT=property(_matrix_transpose("mT", "This function is the identity in these cases.")),
    mH=property(_matrix_transpose("mH", "Consider using x.conj().")),
)


def install(methods: dict):
    """Put the declared ops' methods on Tensor, then Python's own."""
    for name, fn in {**methods, **operators(), **CONVERSIONS, **PROPERTIES}.items():
        setattr(Tensor, name, fn)
