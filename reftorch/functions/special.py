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
from .schema import func


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


# -- torch.special's names for ops declared in native_functions.py: composites that run them, so
# a graph shows the op's own node (special.expit gives SigmoidBackward0, as in torch). Part of
# the schema table (native_functions.py takes them in), kept here beside the special functions.
TORCH_SPECIAL_NAMES = [
    *[func(f"special_{name}(Tensor self) -> Tensor", impl, variants="out") for name, impl in {
        "erf": lambda input: ops.erf(input), "erfc": lambda input: ops.erfc(input),
        "erfinv": lambda input: ops.erfinv(input), "expit": lambda input: ops.sigmoid(input),
        "log1p": lambda input: ops.log1p(input), "expm1": lambda input: ops.expm1(input),
        "exp2": lambda input: ops.exp2(input), "i0": lambda input: ops.i0(input),
        "sinc": lambda input: ops.sinc(input), "gammaln": lambda input: ops.lgamma(input),
        "digamma": lambda input: ops.digamma(input), "psi": lambda input: ops.digamma(input)}.items()],
    func("special_logit(Tensor self, float? eps=None) -> Tensor", lambda input, eps=None: ops.logit(input, eps),
         variants="out"),
    func("special_xlogy(Tensor self, Tensor other) -> Tensor", lambda input, other: ops.xlogy(input, other), variants="out"),
    func("special_xlogy.self_scalar(Scalar self, Tensor other) -> Tensor",
         lambda input, other: ops.xlogy(input, other), variants="out"),
    func("special_xlogy.other_scalar(Tensor self, Scalar other) -> Tensor",
         lambda input, other: ops.xlogy(input, other), variants="out"),
    func("special_polygamma(int n, Tensor self) -> Tensor", lambda n, input: ops.polygamma(n, input), variants="out"),
    func("special_logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
         lambda input, dim, keepdim=False: ops.logsumexp(input, dim, keepdim), variants="out"),
    func("special_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
         lambda input, dim, dtype=None: ops.softmax(input, dim, dtype=dtype)),
    func("special_log_softmax(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
         lambda input, dim, *, dtype=None: ops.log_softmax(input, dim, dtype=dtype)),
]
