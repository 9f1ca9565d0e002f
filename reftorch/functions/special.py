"""Special functions: erfc, erfinv, exp2, logit, xlogy, i0, sinc, and torch.special's own ops
(entr, ndtr, ndtri, log_ndtr, i0e, i1, i1e).

torch.special also names ops that exist under their own names (``special.erf`` is ``erf``,
``special.expit`` is ``sigmoid``): torch declares those as composite ops that call the
original, so the graph shows the original's node (ErfBackward0); native_functions.py does too.
The helpers at the end are the backward formulas derivatives.py names.
"""
from __future__ import annotations

import math

from .. import dtypes
from ..dispatch import kernel
from ._support import _binary, _elementwise_result, _tensor_arg
from .codegen import ops


def logit(input, eps=None):
    """log(x / (1 - x)), x held in [eps, 1 - eps] first when eps is given."""
    input = _tensor_arg(input, "logit")
    a = input._np if input.dtype.is_floating_point else input._np.astype(dtypes.get_default_dtype().numpy)
    return _elementwise_result(kernel("logit", input._device)(a, eps), input._device, input)


def xlogy(input, other):
    """``input * log(other)``, 0 where input is 0: integers give the default float dtype."""
    rt = dtypes.result_type(input, other)
    return _binary("xlogy", input, other, compute_dtype=rt if rt.is_floating_point else dtypes.get_default_dtype())


def ndtr(input):
    """The normal distribution's cdf, as torch composes it: (1 + erf(x / sqrt 2)) * 0.5."""
    input = _tensor_arg(input, "special_ndtr")
    return ops._mul_scalar(ops._add_scalar(ops.erf(ops._mul_scalar(input, math.sqrt(0.5))), 1), 0.5)


# -- backward formulas (derivatives.py) -----------------------------------------------------
def logit_backward(grad, self, eps):
    """grad / (x (1 - x)) inside [eps, 1 - eps] (0 outside); without eps, nan outside [0, 1]."""
    if eps is not None:
        inside = (self >= eps) & (self <= 1.0 - eps)
        return ops.where(inside, grad / (self * (1.0 - self)), self.new_full((), 0.0))
    inside = (self >= 0.0) & (self <= 1.0)
    return ops.where(inside, grad / (self * (1.0 - self)), self.new_full((), math.nan))


def sinc_backward(grad, self):
    product = math.pi * self
    out = grad * ((product * product.cos() - product.sin()) / (math.pi * self * self))
    return ops.where(self == 0.0, grad.new_full((), 0.0), out)


def _safe(self):
    """(|x| > eps, x with eps where it is not): the Bessel gradients' 1/x kept finite."""
    eps = float(dtypes.finfo(self.dtype).eps)
    not_tiny = self.abs() > eps
    return not_tiny, ops.where(not_tiny, self, self.new_full((), eps))


def i1_backward(grad, self, result):
    not_tiny, safe = _safe(self)  # I1'(0) is 1/2; the formula would give nan there
    gradx = ops.i0(safe) - result * safe.reciprocal()
    return grad * ops.where(not_tiny, gradx, self.new_full((), 0.5))


def i1e_backward(grad, self, result):
    not_tiny, safe = _safe(self)
    gradx = ops.special_i0e(safe) - result * (safe.sign() + safe.reciprocal())
    return grad * ops.where(not_tiny, gradx, self.new_full((), 0.5))
