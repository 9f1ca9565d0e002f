"""Arithmetic: add, sub, mul, div, pow, remainder, floor_divide, maximum, minimum.

Each implementation checks its operands the way torch does and runs one kernel; the
engine sums each gradient back to its input's shape (undoing broadcasting) and casts it to
the input's dtype. The helpers at the end are the backward formulas derivatives.py names.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _cpu_float, _modes, dtypes
from ..tensor import Tensor
from ._support import _array, _binary
from .codegen import ops

_grad_state = _modes.grad_mode


def _check_alpha(alpha, dtype):
    if isinstance(alpha, builtins.float) and not dtype.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if dtypes.is_integral(dtype):  # the kernel reads alpha as the dtype, checked (c10's words)
        dtypes.checked_convert(alpha, dtype)


def _scaled(other, alpha, dtype):
    """``alpha * other`` computed outside the graph (the node keeps alpha instead), in the
    ``dtype`` the sum is computed in: torch promotes ``other`` first, then scales it."""
    if alpha == 1:
        return other
    _check_alpha(alpha, dtype)
    if not isinstance(other, Tensor):
        return other * alpha
    return _binary("mul", other if other.dtype is dtype else ops.to(other, dtype), alpha)


def _plus_scaled(op, input, other, alpha):
    """``input + alpha * other`` (``op`` "add") or ``input - alpha * other`` ("sub").

    torch's float kernels compute that as one multiply-add, and its AVX2 and AVX-512 builds fuse it
    (rounded once, see _cpu_float): the sum is redone that way, so an optimizer's
    ``p.add_(buf, alpha=-lr)`` gives torch's bits."""
    dtype = dtypes.result_type(input, other)
    result = _binary(op, input, _scaled(other, alpha, dtype))
    if alpha != 1 and _cpu_float.FUSED and dtype in (dtypes.float32, dtypes.float64) and result.numel():
        a, b = (_array(x, dtype) for x in (input, other))
        result._np[...] = _cpu_float.multiply_add(b, alpha if op == "add" else -alpha, a, dtype.numpy)
    return result


def add(input, other, *, alpha=1):
    return _plus_scaled("add", input, other, alpha)


def _is_bool(value) -> bool:
    return value.dtype is dtypes.bool if isinstance(value, Tensor) else isinstance(value, (builtins.bool, np.bool_))


def _check_sub(input, other):
    """torch's sub_check: no subtraction of bools."""
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def sub(input, other, *, alpha=1):
    _check_sub(input, other)
    return _plus_scaled("sub", input, other, alpha)


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (what ``2 - x`` calls)."""
    _check_sub(input, other)
    return _plus_scaled("sub", other, input, alpha)


def mul(input, other):
    return _binary("mul", input, other)


def add_scalar(input, other, alpha=1):
    """``add.Scalar`` (like ``mul.Scalar`` and ``div.Scalar``, which are ``mul`` and ``div``):
    a number applied inside another op; torch's composite kernels call these overloads, so
    their nodes are numbered 1 (``AddBackward1``)."""
    return add(input, other, alpha=alpha)


def rsub_scalar(input, other, alpha=1):
    return rsub(input, other, alpha=alpha)


def _check_rounding_mode(rounding_mode):
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )


def _check_integer_divisor(input, other, op):
    """Integer division by zero has no answer: torch raises where NumPy would give 0."""
    rt = dtypes.result_type(input, other)
    if rt is dtypes.bool:
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for 'Bool'")
    if not rt.is_floating_point:
        divisor = other._np if isinstance(other, Tensor) else other
        if np.any(np.asarray(divisor) == 0):
            raise RuntimeError("ZeroDivisionError")


def div(input, other):
    """True division: integers give the default float dtype."""
    rt = dtypes.result_type(input, other)
    return _binary("div", input, other, compute_dtype=rt if rt.is_floating_point else dtypes.get_default_dtype())


def div_mode(input, other, *, rounding_mode):
    """``div`` with ``rounding_mode``: ``None`` is true division, ``'trunc'`` and ``'floor'``
    round the quotient, in the inputs' common dtype (integers stay integers)."""
    _check_rounding_mode(rounding_mode)
    if rounding_mode is None:
        return div(input, other)
    _check_integer_divisor(input, other, "div_" + rounding_mode)
    return _binary("div_trunc" if rounding_mode == "trunc" else "floor_divide", input, other)


def floor_divide(input, other):
    _check_integer_divisor(input, other, "div_floor")
    return _binary("floor_divide", input, other)


def remainder(input, other):
    """a % b = a - b * floor(a / b): the sign of b, as Python's %."""
    _check_integer_divisor(input, other, "remainder")
    return _binary("remainder", input, other)


def fmod(input, other):
    """a - b * trunc(a / b): the sign of a, as C's fmod (remainder has b's)."""
    if not isinstance(input, Tensor):  # torch's parser takes no number for fmod's first argument
        raise TypeError(
            f"fmod() received an invalid combination of arguments - got ({type(input).__name__}, "
            f"{type(other).__name__ if not isinstance(other, Tensor) else 'Tensor'}), but expected one of:\n"
            " * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Number other, *, Tensor out = None)\n")
    _check_integer_divisor(input, other, "fmod")
    return _binary("fmod", input, other)


def pow(input, exponent):
    if isinstance(input, Tensor) and not input.dtype.is_floating_point and \
            isinstance(exponent, builtins.int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if isinstance(input, Tensor) and dtypes.is_integral(input.dtype) and type(exponent) is builtins.int:
        dtypes.checked_convert(exponent, input.dtype)  # (the kernel reads it as the dtype, checked)
    return _binary("pow", input, exponent)


def _both_tensors(name, input, other):
    for position, (argument, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            kind = type(value).__module__ + "." + type(value).__name__ if isinstance(value, np.generic) \
                else type(value).__name__
            raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, not {kind}")


def maximum(input, other):
    _both_tensors("maximum", input, other)
    return _binary("maximum", input, other)


def minimum(input, other):
    _both_tensors("minimum", input, other)
    return _binary("minimum", input, other)


def square(input):
    """``x * x``, as ``pow(x, 2)`` (torch's graph shows PowBackward0)."""
    return ops.pow(input, 2)


# -- backward formulas (derivatives.py) -----------------------------------------------------
def maybe_multiply(grad, alpha):
    """``grad * alpha``, skipping the multiplication when alpha is 1 (torch's helper)."""
    return grad if alpha == 1 else grad * alpha


def pow_backward(grad, self, exponent):
    """d(x ** e)/dx = e x ** (e - 1), for a number e (0 when e is 0: no nan from 0 ** -1)."""
    if exponent == 0:
        return ops.zeros_like(self)
    return grad * (exponent * self ** (exponent - 1))  # torch's order of the two products


def pow_backward_self(grad, self, exponent):
    return grad * (exponent * self ** (exponent - 1))


def pow_backward_exponent(grad, self, exponent, result):
    """d(b ** e)/de = b ** e log b; torch defines it as 0 where b is 0 (a number b: log b)."""
    if not isinstance(self, Tensor):
        return grad * result * math.log(self)
    safe_log = ops.where(self == 0, ops.zeros_like(self), ops.log(ops.where(self == 0, ops.ones_like(self), self)))
    return grad * result * safe_log


def extreme_backward(grad, self, other, self_wins):
    """maximum/minimum: the gradient goes to the side that won; ties share it equally."""
    weight = ops.where(self == other, 0.5, self_wins.to(grad.dtype))
    return grad * weight, grad * (1 - weight)


def extreme_jvp(self_t, other_t, self, other, self_wins):
    weight = ops.where(self == other, 0.5, self_wins.to(self_t.dtype if isinstance(self_t, Tensor) else self.dtype))
    return other_t + weight * (self_t - other_t)
