"""Arithmetic: add, sub, mul, div, pow, remainder, floor_divide, maximum, minimum.

Each op's backward formula sits beside it. Formulas are written with tensor operations, so
with ``create_graph=True`` they are recorded too; the engine sums each gradient back to its
input's shape (undoing broadcasting) and casts it to the input's dtype.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import dtypes
from ..autograd.graph import Node
from ..tensor import Tensor
from ._support import (
    _UNSAVED, DerivativeNotImplemented, _binary, _grad_state, _needs_grad, _record, _requires,
    _save_for_other,
)
from .comparison import where
from .creation import ones_like, zeros_like
from .unary import log


class AddBackward0(Node):
    def __init__(self, alpha):
        super().__init__()
        self._saved_alpha = alpha

    def backward(self, grad):
        return grad, grad if self._saved_alpha == 1 else grad * self._saved_alpha


class SubBackward0(AddBackward0):
    def backward(self, grad):
        return grad, -grad if self._saved_alpha == 1 else grad * -self._saved_alpha


class RsubBackward1(AddBackward0):
    def backward(self, grad):
        return (-grad if self._saved_alpha == 1 else grad * -self._saved_alpha),


def _check_alpha(alpha, dtype):
    if isinstance(alpha, builtins.float) and not dtype.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _scaled(other, alpha, dtype):
    """``alpha * other`` computed outside the graph (the node keeps alpha instead), in the
    ``dtype`` the sum is computed in: torch promotes ``other`` first, then scales it."""
    if alpha == 1:
        return other
    _check_alpha(alpha, dtype)
    if not isinstance(other, Tensor):
        return other * alpha
    saved = _grad_state.grad_enabled
    _grad_state.grad_enabled = False
    try:
        return mul(other if other.dtype is dtype else other.to(dtype), alpha)
    finally:
        _grad_state.grad_enabled = saved


def add(input, other, *, alpha=1):
    out = _binary("add", input, _scaled(other, alpha, dtypes.result_type(input, other)))
    if _needs_grad(input, other):
        _record(AddBackward0(alpha), (input, other), out)
    return out


# forward mode: d(a + alpha b) = da + alpha db
add.jvp = lambda t, out, input, other, *, alpha=1: (
    t(input) + t(other) * alpha if isinstance(other, Tensor) else t(input))


def sub(input, other, *, alpha=1):
    if isinstance(input, Tensor) and input.dtype is dtypes.bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    out = _binary("sub", input, _scaled(other, alpha, dtypes.result_type(input, other)))
    if _needs_grad(input, other):
        _record(SubBackward0(alpha), (input, other), out)
    return out


sub.jvp = lambda t, out, input, other, *, alpha=1: t(input) - t(other) * alpha


def rsub(input, other, *, alpha=1):
    """``other - input`` for a number ``other`` (what ``2 - x`` calls)."""
    out = _binary("sub", other, _scaled(input, alpha, dtypes.result_type(other, input)))
    if _needs_grad(input):
        _record(RsubBackward1(alpha), (input,), out)
    return out


rsub.jvp = lambda t, out, input, other, *, alpha=1: t(other) - t(input) * alpha


class MulBackward0(Node):
    _saved_names = ('self', 'other')

    def backward(self, grad):
        a, b = self.saved_values
        return (grad * b if b is not _UNSAVED else None), (grad * a if a is not _UNSAVED else None)



def mul(input, other):
    out = _binary("mul", input, other)
    if _needs_grad(input, other):
        node = MulBackward0()
        # each side is needed only for the other side's gradient (as torch saves)
        node.save(_save_for_other(input, _requires(other)), _save_for_other(other, _requires(input)))
        _record(node, (input, other), out)
    return out


# forward mode: d(a b) = da b + a db
mul.jvp = lambda t, out, input, other: (
    t(input) * other + input * t(other) if isinstance(other, Tensor) else t(input) * other)


class DivBackward0(Node):
    _saved_names = ('self', 'other')

    def backward(self, grad):
        a, b = self.saved_values
        grad_a = grad / b
        grad_b = -grad * a / (b * b) if a is not _UNSAVED else None
        return grad_a, grad_b


class DivBackward2(Node):
    """Rounded division is a step function: torch defines its gradient as zero."""

    _saved_names = ('other',)

    def backward(self, grad):
        self.saved_values  # noqa: B018  (raises once the graph is freed, as torch's does)
        return zeros_like(grad), zeros_like(grad)


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


def _divide_rounded(input, other, rounding_mode):
    """``div`` with rounding: the quotient rounded toward zero or down, in the inputs'
    common dtype (integers stay integers, unlike true division)."""
    _check_integer_divisor(input, other, "div_" + rounding_mode)
    return _binary("div_trunc" if rounding_mode == "trunc" else "floor_divide", input, other)


def div(input, other, *, rounding_mode=None):
    _check_rounding_mode(rounding_mode)
    if rounding_mode is not None:
        out = _divide_rounded(input, other, rounding_mode)
        if _needs_grad(input, other):
            node = DivBackward2()
            node.save(other)
            _record(node, (input, other), out)
        return out
    rt = dtypes.result_type(input, other)
    ct = rt if rt.is_floating_point else dtypes.get_default_dtype()
    out = _binary("div", input, other, compute_dtype=ct)
    if _needs_grad(input, other):
        node = DivBackward0()
        node.save(_save_for_other(input, _requires(other)), other)
        _record(node, (input, other), out)
    return out


def _div_tangent(t, out, input, other, *, rounding_mode=None):
    if rounding_mode is not None:  # a step function
        return zeros_like(out)
    return (t(input) - out * t(other)) / other  # d(a / b) = (da - (a / b) db) / b


div.jvp = _div_tangent


true_divide = div


def floor_divide(input, other):
    _check_integer_divisor(input, other, "div_floor")
    out = _binary("floor_divide", input, other)
    if _needs_grad(input, other):  # torch records the op and refuses only in backward
        _record(DerivativeNotImplemented("floor_divide"), [t for t in (input, other) if _requires(t)], out)
    return out


floor_divide.jvp = lambda t, out, input, other: zeros_like(out)


class RemainderBackward0(Node):
    """a % b = a - b * floor(a / b): slope 1 in a, minus floor(a / b) in b."""

    _saved_names = ('self', 'other')

    def backward(self, grad):
        if self._other_needs_grad:  # a and b are saved only then (as torch saves them)
            a, b = self.saved_values
            return grad, -grad * div(a, b, rounding_mode="floor")
        return grad, None


class RemainderBackward1(RemainderBackward0):  # torch's name when b is a tensor
    pass


def remainder(input, other):
    _check_integer_divisor(input, other, "remainder")
    out = _binary("remainder", input, other)
    if _needs_grad(input, other):
        node = RemainderBackward1() if isinstance(other, Tensor) else RemainderBackward0()
        node._other_needs_grad = _requires(other)
        if node._other_needs_grad:
            node.save(input, other)
        _record(node, (input, other), out)
    return out


remainder.jvp = lambda t, out, input, other: t(input) - t(other) * div(input, other, rounding_mode='floor')


class PowBackward0(Node):  # tensor ** number
    _saved_names = ('self',)

    def backward(self, grad):
        (base,) = self.saved_values
        e = self._saved_exponent
        if e == 0:
            return (zeros_like(base),)
        return (grad * e * base ** (e - 1),)


class PowBackward1(Node):  # tensor ** tensor
    _saved_names = ('self', 'exponent', 'result')

    def backward(self, grad):
        base, exponent, result = self.saved_values
        grad_base = grad * exponent * base ** (exponent - 1)
        # d/d exponent of base**exponent is result * log(base); torch defines it as 0 where base == 0
        safe_log = where(base == 0, zeros_like(base), log(where(base == 0, ones_like(base), base)))
        return grad_base, grad * result * safe_log


class PowBackward2(Node):  # number ** tensor
    _saved_names = ('result',)

    def backward(self, grad):
        (result,) = self.saved_values
        return (grad * result * math.log(self._saved_self),)


def pow(input, exponent):
    if isinstance(input, Tensor) and not input.dtype.is_floating_point and \
            isinstance(exponent, builtins.int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        out = _binary("pow", input, exponent)
        if _needs_grad(input):
            node = PowBackward0()
            node._saved_exponent = exponent
            node.save(input)
            _record(node, (input,), out)
        return out
    if not isinstance(input, Tensor):
        out = _binary("pow", input, exponent)
        if _needs_grad(exponent):
            node = PowBackward2()
            node._saved_self = input
            node.save(output=out)
            _record(node, (exponent,), out)
        return out
    out = _binary("pow", input, exponent)
    if _needs_grad(input, exponent):
        node = PowBackward1()
        node.save(input, exponent, output=out)
        _record(node, (input, exponent), out)
    return out


def _pow_tangent(t, out, input, exponent):
    """d(a ** e) = e a ** (e - 1) da + a ** e log(a) de (0 where a is 0, as in backward)."""
    tangent = 0
    if isinstance(input, Tensor):
        tangent = t(input) * exponent * input ** (exponent - 1) if not (
            isinstance(exponent, (builtins.int, builtins.float)) and exponent == 0) else zeros_like(out)
    if isinstance(exponent, Tensor):
        base = input if isinstance(input, Tensor) else math.log(input)
        log_base = where(base == 0, zeros_like(base), log(where(base == 0, ones_like(base), base))) \
            if isinstance(base, Tensor) else base
        tangent = tangent + out * log_base * t(exponent)
    return tangent


pow.jvp = _pow_tangent


class MaximumBackward0(Node):
    _saved_names = ('self', 'other')

    def backward(self, grad):
        a, b = self.saved_values
        # ties share the gradient equally, as in torch
        wa = where(a == b, 0.5, (a > b).to(grad.dtype))
        return grad * wa, grad * (1 - wa)


class MinimumBackward0(MaximumBackward0):
    def backward(self, grad):
        a, b = self.saved_values
        wa = where(a == b, 0.5, (a < b).to(grad.dtype))
        return grad * wa, grad * (1 - wa)


def _both_tensors(name, input, other):
    for position, (argument, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            kind = type(value).__module__ + "." + type(value).__name__ if isinstance(value, np.generic) \
                else type(value).__name__
            raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, not {kind}")


def maximum(input, other):
    _both_tensors("maximum", input, other)
    out = _binary("maximum", input, other)
    if _needs_grad(input, other):
        node = MaximumBackward0()
        node.save(input, other)
        _record(node, (input, other), out)
    return out


def _extreme_tangent(t, out, input, other):
    # the tangent of the side that won; ties take the mean of both (as the backward splits)
    picked = where(input == other, (t(input) + t(other)) / 2, where(out == input, t(input), t(other)))
    return picked


maximum.jvp = _extreme_tangent


def minimum(input, other):
    _both_tensors("minimum", input, other)
    out = _binary("minimum", input, other)
    if _needs_grad(input, other):
        node = MinimumBackward0()
        node.save(input, other)
        _record(node, (input, other), out)
    return out


minimum.jvp = _extreme_tangent


def square(input):
    return pow(input, 2)


square.jvp = lambda t, out, input: 2 * input * t(input)
