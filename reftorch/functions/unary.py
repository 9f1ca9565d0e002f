"""Element-wise functions of one tensor: exp, log, sqrt, sin, tanh, sigmoid, relu, clamp, ...

Most backward formulas need only the input or only the output, so ``_simple_unary`` builds
the op and its node from one line: ``exp`` saves its output (d exp(x) = exp(x) dx).
"""
from __future__ import annotations

from .. import dtypes
from ..autograd.graph import Node
from ..dispatch import kernel
from ._support import (
    _array, _elementwise_result, _grad_state, _in_one_kernel, _needs_grad, _record, _tensor_arg, _unary,
)
from .comparison import where
from .creation import ones_like, zeros_like


def _simple_unary(op, node_name, formula, saves="input", floating=True):
    """Build an op whose backward needs only its input or only its output."""
    node_cls = type(node_name, (Node,), {"backward": lambda self, grad: (formula(grad, *self.saved_values),)})

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
    return forward, node_cls


neg, NegBackward0 = _simple_unary("neg", "NegBackward0", lambda g: -g, saves=None, floating=False)
exp, ExpBackward0 = _simple_unary("exp", "ExpBackward0", lambda g, r: g * r, saves="output")
log, LogBackward0 = _simple_unary("log", "LogBackward0", lambda g, x: g / x)
sqrt, SqrtBackward0 = _simple_unary("sqrt", "SqrtBackward0", lambda g, r: g / (2 * r), saves="output")
abs, AbsBackward0 = _simple_unary("abs", "AbsBackward0", lambda g, x: g * sign(x), floating=False)
sin, SinBackward0 = _simple_unary("sin", "SinBackward0", lambda g, x: g * cos(x))
cos, CosBackward0 = _simple_unary("cos", "CosBackward0", lambda g, x: -g * sin(x))
tanh, TanhBackward0 = _simple_unary("tanh", "TanhBackward0", lambda g, r: g * (1 - r * r), saves="output")
sigmoid, SigmoidBackward0 = _simple_unary(
    "sigmoid", "SigmoidBackward0", lambda g, r: g * r * (1 - r), saves="output")


class ReluBackward0(Node):
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


reciprocal, ReciprocalBackward0 = _simple_unary(
    "reciprocal", "ReciprocalBackward0", lambda g, r: -g * r * r, saves="output")


# piecewise constant: the gradient is zero almost everywhere, but torch still records a node
sign, SignBackward0 = _simple_unary("sign", "SignBackward0", lambda g: zeros_like(g), saves=None, floating=False)
floor, FloorBackward0 = _simple_unary("floor", "FloorBackward0", lambda g: zeros_like(g), saves=None, floating=False)
ceil, CeilBackward0 = _simple_unary("ceil", "CeilBackward0", lambda g: zeros_like(g), saves=None, floating=False)


class ClampBackward1(Node):
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


clip = clamp
