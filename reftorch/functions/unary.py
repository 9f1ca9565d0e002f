"""Element-wise functions of one tensor: exp, log, sqrt, sin, tanh, sigmoid, relu, clamp, ...

Most are one kernel applied to every element (``pointwise``): the implementation checks the
input and runs its device's kernel, and native_functions.py names each op's kernel.
Their derivatives are in derivatives.py (``exp``: ``grad * result``).
"""
from __future__ import annotations

import builtins

from .. import _modes, dtypes
from ..dispatch import kernel
from ..tensor import Tensor, _scalar_type_name
from ._support import _array, _elementwise_result, _in_one_kernel, _tensor_arg, _unary
from .codegen import ops


def floating(name):
    """A pointwise op whose values are floats: an integer input is computed in the default
    float dtype, as torch's TensorIterator promotes it (``exp``, ``sqrt``, ``sigmoid``...)."""
    def op(input):
        return _unary(name, _tensor_arg(input, name), True)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{name}`` of every element (an integer tensor gives the default float dtype)."
    return op


def same_dtype(name, floating_only=False):
    """A pointwise op that keeps the input's dtype (``neg``, ``abs``, ``floor``, ``relu``...);
    ``floating_only``: torch has no integer kernel for it (``frac``)."""
    def op(input):
        input = _tensor_arg(input, name)
        if floating_only and not input.dtype.is_floating_point:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_scalar_type_name(input.dtype)}'")
        return _unary(name, input, False)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{name}`` of every element, in the input's dtype."
    return op


def clamp(input, min=None, max=None):
    """Every element held between ``min`` and ``max`` (either may be None)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    # the bounds take part in type promotion: an int tensor clamped at 0.5 is float
    rt = dtypes.result_type(input, *(b for b in (min, max) if b is not None))
    if dtypes.is_integral(rt):  # a number bound is converted to the dtype, checked (c10's words)
        min, max = (dtypes.checked_convert(b, rt) if isinstance(b, (builtins.int, builtins.float)) else b
                    for b in (min, max))
    values = kernel("clamp", input._device)(_array(input, rt), min, max)
    return _elementwise_result(values.astype(rt.numpy, copy=False), input._device, input)


def check_clamp_(input, min=None, max=None):
    """``x.clamp_(0.5)`` of an integer x: torch's clamp_ with number bounds names the C++ type."""
    numbers = [b for b in (min, max) if b is not None and not isinstance(b, Tensor)]
    if len(numbers) == len([b for b in (min, max) if b is not None]) and numbers:
        rt = dtypes.result_type(input, *numbers)
        if rt._category > input.dtype._category:
            raise RuntimeError(f"result type {_scalar_type_name(rt)} can't be cast to the desired output type "
                               f"{dtypes._cpp_type_name(input.dtype)}")


def clamp_mask(self, min, max):
    """Where ``self`` lies within the bounds: where clamp passes the gradient (and the tangent)."""
    keep = None
    if min is not None:
        keep = self >= min
    if max is not None:
        keep = (self <= max) if keep is None else keep & (self <= max)
    return keep


def polygamma(n, input):
    """psi^(n), the n-th derivative of digamma: digamma for n = 0, trigamma for 1, and a
    Hurwitz zeta beyond (an integer input gives the default float dtype)."""
    input = _tensor_arg(input, "polygamma")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n <= 1:
        return _unary(("digamma", "trigamma")[n], input)
    rt = input.dtype if input.dtype.is_floating_point else dtypes.get_default_dtype()
    return _elementwise_result(kernel("polygamma", input._device)(_array(input, rt), n), input._device, input)


def threshold_backward(grad_output, self, threshold):
    """relu's backward: 0 where ``self`` (relu's output) is <= threshold (not g * 0, which
    would turn an infinite g into nan), elsewhere g. An op of its own, as in torch, so that
    a second derivative goes through it."""
    return _in_one_kernel("threshold_backward", (self, grad_output), threshold)
