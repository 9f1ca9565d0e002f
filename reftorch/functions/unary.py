"""Element-wise functions of one tensor: exp, log, sqrt, sin, tanh, sigmoid, relu, clamp, ...

Most are one kernel applied to every element (``pointwise``): the implementation checks the
input and runs its device's kernel, and native_functions.py names each op's kernel.
Their derivatives are in derivatives.py (``exp``: ``grad * result``).
"""
from __future__ import annotations

from .. import _modes, dtypes
from ..dispatch import kernel
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


def same_dtype(name):
    """A pointwise op that keeps the input's dtype (``neg``, ``abs``, ``floor``, ``relu``...)."""
    def op(input):
        return _unary(name, _tensor_arg(input, name), False)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{name}`` of every element, in the input's dtype."
    return op


def clamp(input, min=None, max=None):
    """Every element held between ``min`` and ``max`` (either may be None)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    # the bounds take part in type promotion: an int tensor clamped at 0.5 is float
    rt = dtypes.result_type(input, *(b for b in (min, max) if b is not None))
    values = kernel("clamp", input._device)(_array(input, rt), min, max)
    return _elementwise_result(values.astype(rt.numpy, copy=False), input._device, input)


def clamp_mask(self, min, max):
    """Where ``self`` lies within the bounds: where clamp passes the gradient (and the tangent)."""
    keep = None
    if min is not None:
        keep = self >= min
    if max is not None:
        keep = (self <= max) if keep is None else keep & (self <= max)
    return keep


def polygamma(n, input):
    """psi^(n), the n-th derivative of digamma; reftorch has n = 1 (trigamma), which digamma's
    derivative needs."""
    if n != 1:
        raise NotImplementedError(f"reftorch: polygamma({n}, x) is not implemented (only n = 1)")
    return _unary("trigamma", _tensor_arg(input, "polygamma"))


def threshold_backward(grad, result):
    """relu's backward, torch's threshold_backward: 0 where the output is <= 0 (not g * 0,
    which would turn an infinite g into nan), elsewhere g; one kernel when no graph is
    recorded."""
    if not _modes.grad_mode.grad_enabled:
        return _in_one_kernel("threshold_backward", (result, grad), 0)
    return ops.where(result <= 0, 0, grad)
