"""Element-wise functions of one tensor: exp, log, sqrt, sin, tanh, sigmoid, relu, clamp, lgamma, ...

Most backward formulas need only the input or only the output, so ``_simple_unary`` builds
the op and its node from one line: ``exp`` saves its output (d exp(x) = exp(x) dx).
"""
from __future__ import annotations

import math

from .. import dtypes
from ..autograd.graph import Node
from ..dispatch import kernel
from ._support import (
    _array, _elementwise_result, _grad_state, _in_one_kernel, _needs_grad, _record, _tensor_arg, _unary,
)
from .comparison import where
from .creation import ones_like, zeros_like


def _simple_unary(op, node_name, formula, saves="input", floating=True, jvp=None):
    """Build an op whose backward needs only its input or only its output.

    ``formula(grad, saved)`` is the backward (vector-Jacobian product); ``jvp(tangent, x, out)``
    the forward-mode rule (Jacobian-vector product), both from the same derivative."""
    saved_names = {"input": ("self",), "output": ("result",)}.get(saves, ())
    node_cls = type(node_name, (Node,), {"backward": lambda self, grad: (formula(grad, *self.saved_values),),
                                         "_saved_names": saved_names})

    def forward(input):
        out = _unary(op, _tensor_arg(input, op), floating)
        if _needs_grad(input):
            node = node_cls()
            if saves == "input":
                node.save(input)
            elif saves == "output":
                node.save(output=out)
            _record(node, (input,), out)
        return out
    forward.__name__ = op
    forward.__qualname__ = op
    if jvp is not None:
        forward.jvp = lambda t, out, input: jvp(t(input), input, out)
    return forward, node_cls


#                  op      node            backward: grad -> grad of input      forward: tangent -> tangent of out
neg, NegBackward0 = _simple_unary("neg", "NegBackward0", lambda g: -g, saves=None, floating=False,
                                  jvp=lambda dx, x, out: -dx)
exp, ExpBackward0 = _simple_unary("exp", "ExpBackward0", lambda g, r: g * r, saves="output",
                                  jvp=lambda dx, x, out: dx * out)
log, LogBackward0 = _simple_unary("log", "LogBackward0", lambda g, x: g / x,
                                  jvp=lambda dx, x, out: dx / x)
sqrt, SqrtBackward0 = _simple_unary("sqrt", "SqrtBackward0", lambda g, r: g / (2 * r), saves="output",
                                    jvp=lambda dx, x, out: dx / (2 * out))
abs, AbsBackward0 = _simple_unary("abs", "AbsBackward0", lambda g, x: g * sign(x), floating=False,
                                  jvp=lambda dx, x, out: dx * sign(x))
sin, SinBackward0 = _simple_unary("sin", "SinBackward0", lambda g, x: g * cos(x),
                                  jvp=lambda dx, x, out: dx * cos(x))
cos, CosBackward0 = _simple_unary("cos", "CosBackward0", lambda g, x: -g * sin(x),
                                  jvp=lambda dx, x, out: -dx * sin(x))
tanh, TanhBackward0 = _simple_unary("tanh", "TanhBackward0", lambda g, r: g * (1 - r * r), saves="output",
                                    jvp=lambda dx, x, out: dx * (1 - out * out))
sigmoid, SigmoidBackward0 = _simple_unary(
    "sigmoid", "SigmoidBackward0", lambda g, r: g * r * (1 - r), saves="output",
    jvp=lambda dx, x, out: dx * out * (1 - out))
log1p, Log1PBackward0 = _simple_unary("log1p", "Log1PBackward0", lambda g, x: g / (x + 1),
                                      jvp=lambda dx, x, out: dx / (x + 1))
expm1, Expm1Backward0 = _simple_unary("expm1", "Expm1Backward0", lambda g, r: g * (r + 1), saves="output",
                                      jvp=lambda dx, x, out: dx * (out + 1))
log2, Log2Backward0 = _simple_unary("log2", "Log2Backward0", lambda g, x: g / (x * math.log(2)),
                                    jvp=lambda dx, x, out: dx / (x * math.log(2)))
log10, Log10Backward0 = _simple_unary("log10", "Log10Backward0", lambda g, x: g / (x * math.log(10)),
                                      jvp=lambda dx, x, out: dx / (x * math.log(10)))
rsqrt, RsqrtBackward0 = _simple_unary("rsqrt", "RsqrtBackward0", lambda g, r: -0.5 * g * r * r * r,
                                      saves="output", jvp=lambda dx, x, out: -0.5 * dx * out * out * out)
tan, TanBackward0 = _simple_unary("tan", "TanBackward0", lambda g, r: g * (1 + r * r), saves="output",
                                  jvp=lambda dx, x, out: dx * (1 + out * out))
atan, AtanBackward0 = _simple_unary("atan", "AtanBackward0", lambda g, x: g / (x * x + 1),
                                    jvp=lambda dx, x, out: dx / (x * x + 1))
asin, AsinBackward0 = _simple_unary("asin", "AsinBackward0", lambda g, x: g / (1 - x * x).sqrt(),
                                    jvp=lambda dx, x, out: dx / (1 - x * x).sqrt())
acos, AcosBackward0 = _simple_unary("acos", "AcosBackward0", lambda g, x: -g / (1 - x * x).sqrt(),
                                    jvp=lambda dx, x, out: -dx / (1 - x * x).sqrt())
sinh, SinhBackward0 = _simple_unary("sinh", "SinhBackward0", lambda g, x: g * cosh(x),
                                    jvp=lambda dx, x, out: dx * cosh(x))
cosh, CoshBackward0 = _simple_unary("cosh", "CoshBackward0", lambda g, x: g * sinh(x),
                                    jvp=lambda dx, x, out: dx * sinh(x))
erf, ErfBackward0 = _simple_unary("erf", "ErfBackward0", lambda g, x: g * (2 / math.sqrt(math.pi)) * exp(-x * x),
                                  jvp=lambda dx, x, out: dx * (2 / math.sqrt(math.pi)) * exp(-x * x))



class _TrigammaBackward(Node):
    def backward(self, grad):
        raise NotImplementedError("reftorch has no derivative of trigamma (digamma's second derivative)")


def _trigamma(input):
    """psi'(x), the derivative of digamma (torch's polygamma(1, x)); its own derivative is not here."""
    out = _unary("trigamma", input)
    if _needs_grad(input):
        _record(_TrigammaBackward(), (input,), out)
    return out


# d lgamma(x) = digamma(x) dx, d digamma(x) = trigamma(x) dx
lgamma, LgammaBackward0 = _simple_unary("lgamma", "LgammaBackward0", lambda g, x: g * digamma(x),
                                        jvp=lambda dx, x, out: dx * digamma(x))
digamma, DigammaBackward0 = _simple_unary("digamma", "DigammaBackward0", lambda g, x: g * _trigamma(x),
                                          jvp=lambda dx, x, out: dx * _trigamma(x))

class ReluBackward0(Node):
    _saved_names = ('result',)

    def backward(self, grad):
        (result,) = self.saved_values
        if not _grad_state.grad_enabled:
            return (_in_one_kernel("threshold_backward", (result, grad), 0),)
        # torch's threshold_backward: 0 where the output is <= 0 (not g * 0, which would turn
        # an infinite g into nan), elsewhere g
        return (where(result <= 0, 0, grad),)


def relu(input):
    out = _unary("relu", _tensor_arg(input, "relu"), floating=False)
    if _needs_grad(input):
        node = ReluBackward0()
        node.save(output=out)
        _record(node, (input,), out)
    return out


relu.jvp = lambda t, out, input: where(out <= 0, 0, t(input))


reciprocal, ReciprocalBackward0 = _simple_unary(
    "reciprocal", "ReciprocalBackward0", lambda g, r: -g * r * r, saves="output",
    jvp=lambda dx, x, out: -dx * out * out)


# piecewise constant: the gradient is zero almost everywhere, but torch still records a node
def _flat(dx, x, out):
    return zeros_like(out)


sign, SignBackward0 = _simple_unary("sign", "SignBackward0", lambda g: zeros_like(g), saves=None,
                                    floating=False, jvp=_flat)
floor, FloorBackward0 = _simple_unary("floor", "FloorBackward0", lambda g: zeros_like(g), saves=None,
                                      floating=False, jvp=_flat)
ceil, CeilBackward0 = _simple_unary("ceil", "CeilBackward0", lambda g: zeros_like(g), saves=None,
                                    floating=False, jvp=_flat)
round, RoundBackward0 = _simple_unary("round", "RoundBackward0", lambda g: zeros_like(g), saves=None,
                                      floating=False, jvp=_flat)
trunc, TruncBackward0 = _simple_unary("trunc", "TruncBackward0", lambda g: zeros_like(g), saves=None,
                                      floating=False, jvp=_flat)
frac, FracBackward0 = _simple_unary("frac", "FracBackward0", lambda g: g, saves=None,
                                    floating=False, jvp=lambda dx, x, out: dx)


class ClampBackward1(Node):
    _saved_names = ('self',)

    def backward(self, grad):
        (x,) = self.saved_values
        low, high = self._saved_min, self._saved_max
        keep = ones_like(x, dtype=dtypes.bool)
        if low is not None:
            keep = keep & (x >= low)
        if high is not None:
            keep = keep & (x <= high)
        return (grad * keep,)


def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    # the bounds take part in type promotion: an int tensor clamped at 0.5 is float
    rt = dtypes.result_type(input, *(b for b in (min, max) if b is not None))
    values = kernel("clamp", input._device)(_array(input, rt), min, max)
    out = _elementwise_result(values.astype(rt.numpy, copy=False), input._device, input)
    if _needs_grad(input):
        node = ClampBackward1()
        node._saved_min, node._saved_max = min, max
        node.save(input)
        _record(node, (input,), out)
    return out


def _clamp_tangent(t, out, input, min=None, max=None):
    keep = ones_like(input, dtype=dtypes.bool)
    if min is not None:
        keep = keep & (input >= min)
    if max is not None:
        keep = keep & (input <= max)
    return t(input) * keep


clamp.jvp = _clamp_tangent
clip = clamp
