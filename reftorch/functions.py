"""Every operation, with its backward formula beside it.

An operation does three things:
1. checks its arguments the way torch does (devices, dtypes, shapes),
2. asks the dispatcher for the kernel of its device and runs it on NumPy arrays,
3. if grad mode is on and an input requires grad, records a Node (``MulBackward0`` ...)
   whose ``backward`` turns the output's gradient into the inputs' gradients.

Backward formulas are written with tensor operations, so with ``create_graph=True`` they
are recorded too, and gradients of gradients come for free. The engine (autograd/engine.py)
sums each gradient back to its input's shape (undoing broadcasting) and casts it to the
input's dtype, as torch's engine does, so the formulas below stay one line each.
"""
from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple

import numpy as np

from . import dtypes
from .autograd.grad_mode import state as _grad_state
from .autograd.engine import _sum_to
from .autograd.graph import FREED_MESSAGE, Node, gradient_edge
from .dispatch import canonical, check_same_device, cpu, kernel
from .storage import (
    broadcast_shapes, broadcast_strides, contiguous_strides, elementwise_strides, expand_strides,
    is_non_overlapping_and_dense, preserve_format_strides, view_strides,
)
from .tensor import Size, Tensor, _cpp_type_name, _scalar_type_name as _scalar_name, _wrap_dim

_wrap = Tensor._wrap
_view_of = Tensor._view_of


# ===================================================================================
# Recording the graph
# ===================================================================================
def _needs_grad(*values) -> bool:
    if not _grad_state.grad_enabled:
        return False
    for v in values:
        if isinstance(v, Tensor) and v._requires_grad:
            return True
    return False


def _record(node: Node, inputs, *outputs):
    """Hang ``node`` between ``inputs`` (tensors or numbers) and ``outputs``."""
    node.next_functions = tuple(
        gradient_edge(t) if isinstance(t, Tensor) else (None, 0) for t in inputs
    )
    node._input_meta = tuple(
        (t._shape, t.dtype, t._device) if isinstance(t, Tensor) else None for t in inputs
    )
    for i, out in enumerate(outputs):
        out.grad_fn = node
        out._output_nr = i
        out._requires_grad = True
    return node


def _array(x, dtype: dtypes.dtype):
    """The NumPy operand for ``x`` computed in ``dtype`` (numbers stay Python numbers)."""
    if isinstance(x, Tensor):
        a = x._np
        return a if a.dtype is dtype.numpy or a.dtype == dtype.numpy else a.astype(dtype.numpy)
    return x


def _devices(*values):
    tensors = [v for v in values if isinstance(v, Tensor)]
    if len(tensors) == 1:
        return tensors[0]._device
    return check_same_device(*tensors)


def _broadcast_error(a, b):
    # NumPy refused; raise torch's message for the same shapes
    broadcast_shapes(a._shape if isinstance(a, Tensor) else (), b._shape if isinstance(b, Tensor) else ())
    raise


def _tensor_arg(x, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    return x


# ===================================================================================
# Element-wise binary operations
# ===================================================================================
def _scalar_rounded_to(x, dtype):
    """A number or 0-dim tensor operand as a 0-dim array of ``dtype``; other tensors as they are."""
    if isinstance(x, Tensor):
        return x if x.dim() or x.dtype is dtype else dtypes.cast(x._np, dtype)
    return dtypes.cast(x, dtype)


def _binary(op: str, a, b, result_dtype=None, compute_dtype=None):
    dev = _devices(a, b)
    ct = compute_dtype or dtypes.result_type(a, b)
    # torch computes float16/bfloat16 arithmetic in float32 and rounds once; its add, sub and
    # comparison kernels round a number (or 0-dim tensor) operand to 16 bits first, mul and div do not
    kt = dtypes.float32 if ct in dtypes.REDUCED_FLOATS and result_dtype is None else ct
    if ct in dtypes.REDUCED_FLOATS and (op in ("add", "sub") or result_dtype is not None):
        a, b = _scalar_rounded_to(a, ct), _scalar_rounded_to(b, ct)
    try:
        out = kernel(op, dev)(_array(a, kt), _array(b, kt))
    except ValueError:
        _broadcast_error(a, b)
    if kt is not ct:
        out = out.astype(ct.numpy)
    if result_dtype is not None and out.dtype != result_dtype.numpy:
        out = out.astype(result_dtype.numpy)
    return _elementwise_result(out, dev, a, b)


def _elementwise_result(array, dev, *operands):
    """Wrap an element-wise result laid out the way torch lays it out.

    NumPy keeps the memory order of its inputs much as torch does, and for contiguous
    inputs both are row-major; only when an input is non-contiguous do we work out
    torch's layout (storage.elementwise_strides) and move the values there if NumPy's differs.
    """
    tensors = [t for t in operands if isinstance(t, Tensor)]
    if builtins.all(t.is_contiguous() for t in tensors) or array.ndim < 2:
        return _wrap(array, dev)
    shape = array.shape
    wanted = elementwise_strides(shape, [broadcast_strides(t._shape, t._stride, shape) for t in tensors])
    if tuple(st // array.itemsize for st in array.strides) == wanted or array.size == 0:
        return _wrap(array, dev)
    return _with_strides(array, wanted, dev)


def _with_strides(array, strides, dev=cpu):
    """A new tensor holding ``array``'s values at the given (dense) strides."""
    span = 1 + builtins.sum((n - 1) * st for n, st in zip(array.shape, strides)) if array.size else 0
    owner = _wrap(np.empty(span, dtype=array.dtype), dev)
    out = _view_of(owner, array.shape, strides, 0)
    out._base, out._version_counter = None, [0]  # a fresh tensor, not a view of ``owner``
    np.copyto(out._np, array, casting="unsafe")
    return out


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


def rsub(input, other, *, alpha=1):
    """``other - input`` for a number ``other`` (what ``2 - x`` calls)."""
    out = _binary("sub", other, _scaled(input, alpha, dtypes.result_type(other, input)))
    if _needs_grad(input):
        _record(RsubBackward1(alpha), (input,), out)
    return out


class MulBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_values
        return (grad * b if b is not _UNSAVED else None), (grad * a if a is not _UNSAVED else None)


_UNSAVED = object()  # a value the formula does not need because that side needs no grad


def _save_for_other(x, needed):
    return x if needed else _UNSAVED


def mul(input, other):
    out = _binary("mul", input, other)
    if _needs_grad(input, other):
        node = MulBackward0()
        # each side is needed only for the other side's gradient (as torch saves)
        node.save(_save_for_other(input, _requires(other)), _save_for_other(other, _requires(input)))
        _record(node, (input, other), out)
    return out


def _requires(x) -> bool:
    return isinstance(x, Tensor) and x._requires_grad


class DivBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_values
        grad_a = grad / b
        grad_b = -grad * a / (b * b) if a is not _UNSAVED else None
        return grad_a, grad_b


class DivBackward2(Node):
    """Rounded division is a step function: torch defines its gradient as zero."""

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


true_divide = div


class DerivativeNotImplemented(Node):
    """What torch records for an op that has no derivative: backward through it raises."""
    def __init__(self, op):
        super().__init__()
        self._op = op

    def name(self):
        return "torch::autograd::NotImplemented"

    def backward(self, *grads):
        raise RuntimeError(f"derivative for aten::{self._op} is not implemented")


DerivativeNotImplemented.__name__ = "NotImplemented"  # torch's class name (not Python's builtin)


def floor_divide(input, other):
    _check_integer_divisor(input, other, "div_floor")
    out = _binary("floor_divide", input, other)
    if _needs_grad(input, other):  # torch records the op and refuses only in backward
        _record(DerivativeNotImplemented("floor_divide"), [t for t in (input, other) if _requires(t)], out)
    return out


class RemainderBackward0(Node):
    """a % b = a - b * floor(a / b): slope 1 in a, minus floor(a / b) in b."""

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


class PowBackward0(Node):  # tensor ** number
    def backward(self, grad):
        (base,) = self.saved_values
        e = self._saved_exponent
        if e == 0:
            return (zeros_like(base),)
        return (grad * e * base ** (e - 1),)


class PowBackward1(Node):  # tensor ** tensor
    def backward(self, grad):
        base, exponent, result = self.saved_values
        grad_base = grad * exponent * base ** (exponent - 1)
        # d/d exponent of base**exponent is result * log(base); torch defines it as 0 where base == 0
        safe_log = where(base == 0, zeros_like(base), log(where(base == 0, ones_like(base), base)))
        return grad_base, grad * result * safe_log


class PowBackward2(Node):  # number ** tensor
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


class MaximumBackward0(Node):
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


def maximum(input, other):
    out = _binary("maximum", input, other)
    if _needs_grad(input, other):
        node = MaximumBackward0()
        node.save(input, other)
        _record(node, (input, other), out)
    return out


def minimum(input, other):
    out = _binary("minimum", input, other)
    if _needs_grad(input, other):
        node = MinimumBackward0()
        node.save(input, other)
        _record(node, (input, other), out)
    return out


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


class WhereBackward0(Node):
    def backward(self, grad):
        (condition,) = self.saved_values
        zero = zeros_like(grad)
        return where(condition, grad, zero), where(condition, zero, grad)


def where(condition, input=None, other=None):
    if input is None:
        return nonzero(condition, as_tuple=True)
    if condition.dtype is not dtypes.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with "
                           f"dtype {_scalar_name(condition.dtype)}")
    dev = _devices(condition, input, other)
    rt = dtypes.result_type(input, other)
    values = kernel("where", dev)(condition._np, _array(input, rt), _array(other, rt))
    out = _elementwise_result(values.astype(rt.numpy, copy=False), dev, condition, input, other)
    if _needs_grad(input, other):
        node = WhereBackward0()
        node.save(condition)
        _record(node, (input, other), out)
    return out


# ===================================================================================
# Element-wise unary operations
# ===================================================================================
def _unary(op, input, floating=True):
    if input.dtype is dtypes.bool and op == "neg":
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.")
    if input.dtype is dtypes.bool and op == "relu":
        raise RuntimeError("Boolean inputs not supported for relu")
    if input.dtype is dtypes.bool and op == "abs":
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    a = input._np
    if floating and not input.dtype.is_floating_point:
        a = a.astype(dtypes.get_default_dtype().numpy)
    return _elementwise_result(kernel(op, input._device)(a), input._device, input)


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


def _in_one_kernel(op, tensors, *args):
    """A backward formula computed by one kernel instead of op by op.

    Only when no graph is being recorded for the backward itself (no ``create_graph``): the
    kernel gives the same numbers as the formula's ops, minus a tensor per step; with
    ``create_graph`` the formula must be built from ops, so that it can be differentiated.
    ``tensors`` come in the order that decides the result's layout, as in the formula."""
    dev = tensors[0]._device
    return _elementwise_result(kernel(op, dev)(*[t._np for t in tensors], *args), dev, *tensors)


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


def isnan(input):
    return _unary("isnan", input, floating=False)


def logical_not(input):
    return _wrap(kernel("logical_not", input._device)(input._np), input._device)


def bitwise_not(input):
    if input.dtype.is_floating_point:
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    return _wrap(kernel("bitwise_not", input._device)(input._np), input._device)


def square(input):
    return pow(input, 2)


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


# ===================================================================================
# Views: new geometry over the same storage
# ===================================================================================
class ViewBackward0(Node):
    def backward(self, grad):
        return (grad.reshape(self._saved_self_sym_sizes),)


class UnsafeViewBackward0(ViewBackward0):
    pass


class ReshapeAliasBackward0(ViewBackward0):
    pass


def _make_view(input, shape, stride, offset, node_cls, **attrs):
    out = _view_of(input, shape, stride, offset)
    if _needs_grad(input):
        node = node_cls()
        node._saved_self_sym_sizes = input._shape
        for k, v in attrs.items():
            setattr(node, k, v)
        _record(node, (input,), out)
    return out


def _infer_shape(shape, numel):
    shape = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else list(shape)
    shape = [builtins.int(s) for s in shape]
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {shape} because the unspecified "
                "dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
    return tuple(shape)


def view(input, *shape):
    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        raise NotImplementedError("view(dtype) is not part of reftorch")
    shape = _infer_shape(shape, input.numel())
    strides = view_strides(input._shape, input._stride, shape)
    if strides is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return _make_view(input, shape, strides, input._offset, ViewBackward0)


def reshape(input, *shape):
    """A view when the strides allow one, else a copy (then no storage is shared)."""
    shape = _infer_shape(shape, input.numel())
    strides = view_strides(input._shape, input._stride, shape)
    if strides is not None:
        # torch names the node after the path taken: a plain view, or an alias of a
        # non-contiguous tensor that happens to allow the new shape
        node = ViewBackward0 if input.is_contiguous() else ReshapeAliasBackward0
        return _make_view(input, shape, strides, input._offset, node)
    return _unsafe_view(clone(input, memory_format="contiguous"), shape)


def _unsafe_view(input, shape):
    """Reinterpret a fresh contiguous copy: not a view for the user, so no ``_base``."""
    out = _view_of(input, shape, contiguous_strides(shape), input._offset)
    out._base = None
    out._version_counter = input._version_counter
    if _needs_grad(input):
        node = UnsafeViewBackward0()
        node._saved_self_sym_sizes = input._shape
        _record(node, (input,), out)
    return out


def view_as(input, other):
    return view(input, other._shape)


def reshape_as(input, other):
    return reshape(input, other._shape)


def flatten(input, start_dim=0, end_dim=-1):
    if input.dim() == 0:
        return reshape(input, 1)
    start = _wrap_dim(start_dim, input.dim())
    end = _wrap_dim(end_dim, input.dim())
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = input._shape[:start] + (math.prod(input._shape[start:end + 1]),) + input._shape[end + 1:]
    return reshape(input, shape)


def ravel(input):
    return reshape(contiguous(input), -1)


def unflatten(input, dim, sizes):
    """Split one dim into several (one of the new sizes may be -1); a view."""
    dim = _wrap_dim(dim, input.dim())
    if not isinstance(sizes, (tuple, list, Size)):
        raise TypeError(
            f"unflatten(): argument 'sizes' (position 2) must be tuple of ints, not {type(sizes).__name__}")
    sizes = tuple(builtins.int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input._shape[dim]
    try:
        sizes = _infer_shape(sizes, n)
    except RuntimeError as error:  # torch rewords the size mismatch, and wraps anything else
        if "is invalid for input of size" in str(error):
            raise RuntimeError(
                f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
                f"{dim} ({n}) in the input tensor") from None
        raise RuntimeError(f"unflatten got an unexpected error:\n{error}") from None
    return view(input, input._shape[:dim] + sizes + input._shape[dim + 1:])


class TBackward0(Node):
    def backward(self, grad):
        return (grad.t(),)


class TransposeBackward0(Node):
    def backward(self, grad):
        return (grad.transpose(self._saved_dim0, self._saved_dim1),)


class PermuteBackward0(Node):
    def backward(self, grad):
        inverse = [0] * len(self._saved_dims)
        for i, d in enumerate(self._saved_dims):
            inverse[d] = i
        return (grad.permute(inverse),)


def _swapped(seq, i, j):
    seq = list(seq)
    seq[i], seq[j] = seq[j], seq[i]
    return tuple(seq)


def t(input):
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.dim()}D")
    if input.dim() < 2:
        return _make_view(input, input._shape, input._stride, input._offset, TBackward0)
    return _make_view(input, input._shape[::-1], input._stride[::-1], input._offset, TBackward0)


def transpose(input, dim0, dim1):
    n = input.dim()
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    return _make_view(input, _swapped(input._shape, d0, d1), _swapped(input._stride, d0, d1),
                      input._offset, TransposeBackward0, _saved_dim0=d0, _saved_dim1=d1)


swapaxes = swapdims = transpose


def permute(input, *dims):
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    n = input.dim()
    if len(dims) != n:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    dims = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _make_view(input, tuple(input._shape[d] for d in dims), tuple(input._stride[d] for d in dims),
                      input._offset, PermuteBackward0, _saved_dims=dims)


def movedim(input, source, destination):
    """Move the dims ``source`` to the positions ``destination``; the others keep their order.

    A permute underneath (PermuteBackward0), so the result is a view.
    """
    source = [source] if isinstance(source, builtins.int) else list(source)
    destination = [destination] if isinstance(destination, builtins.int) else list(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({source} dims) should contain "
            f"the same number of dims as destination ({destination} dims)"
        )
    n = input.dim()
    src = [_wrap_dim(d, n) for d in source]
    dst = [_wrap_dim(d, n) for d in destination]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({source})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({destination})")
    if n == 0:  # nothing to move: torch returns an alias
        return _make_view(input, (), (), input._offset, AliasBackward0)
    order = [None] * n
    for s_dim, d_dim in zip(src, dst):
        order[d_dim] = s_dim
    rest = iter(d for d in range(n) if d not in src)  # the other dims, in their order
    order = [d if d is not None else next(rest) for d in order]
    return permute(input, order)


moveaxis = movedim


_warned_once = set()  # torch gives some warnings once per process (TORCH_WARN_ONCE)


def _warn_once(key, message):
    if key not in _warned_once:
        _warned_once.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def _T(input):
    if input.dim() == 0:
        _warn_once("T_0d", "Tensor.T is deprecated on 0-D tensors. This function is the identity "
                           "in these cases.")
    elif input.dim() != 2:
        _warn_once("T_not_2d", (
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
            "reverse the dimensions of a tensor."))
    return permute(input, tuple(range(input.dim() - 1, -1, -1)))


def _matrix_transpose(name, zero_dim_hint):
    """``x.mT`` (and ``mH``, the same for real numbers): swap the last two dims."""
    def transpose_last(input):
        if input.dim() == 0:
            _warn_once(name + "_0d", f"Tensor.{name} is deprecated on 0-D tensors. {zero_dim_hint}")
            return input
        if input.dim() == 1:
            raise RuntimeError(
                f"tensor.{name} is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return transpose(input, -2, -1)
    return transpose_last


def _H(input):  # the conjugate transpose, which for real numbers is the transpose
    if input.dim() == 0:
        _warn_once("H_0d", "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
        return input
    if input.dim() != 2:
        hint = " For batches of matrices, consider using tensor.mH" if input.dim() > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {input.dim()}-D tensor.{hint}")
    return transpose(input, 0, 1)


class UnsqueezeBackward0(Node):
    def backward(self, grad):
        return (grad.squeeze(self._saved_dim),)


def unsqueeze(input, dim):
    dim = _wrap_dim(dim, input.dim() + 1)
    shape = input._shape[:dim] + (1,) + input._shape[dim:]
    inner = input._stride[dim] * input._shape[dim] if dim < input.dim() else 1
    stride = input._stride[:dim] + (inner,) + input._stride[dim:]
    return _make_view(input, shape, stride, input._offset, UnsqueezeBackward0, _saved_dim=dim)


class SqueezeBackward0(ViewBackward0):
    pass


class SqueezeBackward1(ViewBackward0):
    pass


class SqueezeBackward4(ViewBackward0):
    pass


def squeeze(input, dim=None):
    if dim is None:
        keep = [d for d in range(input.dim()) if input._shape[d] != 1]
        node = SqueezeBackward0
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = {_wrap_dim(d, input.dim()) for d in dims}
        keep = [d for d in range(input.dim()) if d not in dims or input._shape[d] != 1]
        node = SqueezeBackward4 if isinstance(dim, (tuple, list)) else SqueezeBackward1
    return _make_view(input, tuple(input._shape[d] for d in keep), tuple(input._stride[d] for d in keep),
                      input._offset, node)


class ExpandBackward0(ViewBackward0):
    def backward(self, grad):
        return (grad,)  # the engine sums the repeated positions back


def expand(input, *sizes):
    sizes = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    if len(sizes) < input.dim():
        raise RuntimeError(
            f"expand({input.type()}{{{list(input._shape)}}}, size={list(sizes)}): the number of sizes "
            f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({input.dim()})"
        )
    shape, strides = expand_strides(input._shape, input._stride, tuple(builtins.int(s) for s in sizes))
    return _make_view(input, shape, strides, input._offset, ExpandBackward0)


def expand_as(input, other):
    return expand(input, other._shape)


def broadcast_to(input, shape):
    return expand(input, shape)


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*(t._shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def _broadcast_shapes_api(*shapes):
    """``torch.broadcast_shapes``: the shape tensors of these shapes broadcast to, as a Size.

    Ints count as 1-D shapes. Unlike broadcasting two tensors, this names the argument that
    does not fit (torch words it differently, so the internal helper is not reused).
    """
    shapes = tuple((s,) if isinstance(s, builtins.int) else s for s in shapes if s is not None)
    for shape in shapes:
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError(
                f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}"
            )
    common = [1] * builtins.max((len(s) for s in shapes), default=0)
    for index, shape in enumerate(shapes):
        for d in range(-1, -1 - len(shape), -1):
            if shape[d] == common[d]:
                continue
            if common[d] == 1:
                if shape[d] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[d] = shape[d]
            if shape[d] != 1 and shape[d] != common[d]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[d]} at {d}! Mismatching "
                    f"argument at index {index} had {shape}; but expected shape should be "
                    f"broadcastable to {common}"
                )
    return Size(common)


_broadcast_shapes_api.__name__ = _broadcast_shapes_api.__qualname__ = "broadcast_shapes"


class _EmbedInZeros(Node):
    """Backward of select/slice/index: the gradient goes back to the selected positions."""

    def backward(self, grad):
        return (grad[self._key],)


def _embed(grad, shape, key, accumulate=False):
    """zeros(shape) with ``grad`` written (or added) at ``key``; differentiable in ``grad``."""
    out = zeros(shape, dtype=grad.dtype, device=grad._device)
    kernel("index_put_", grad._device)(out._np, key, grad._np, accumulate)
    if _needs_grad(grad):
        node = _EmbedInZeros()
        node._key = key
        _record(node, (grad,), out)
    return out


class SelectBackward0(Node):
    def backward(self, grad):
        return (_embed(grad, self._saved_self_sym_sizes, self._key),)


class SliceBackward0(SelectBackward0):
    pass


def select(input, dim, index):
    return _select(input, dim, index, indexing=False)


def _select(input, dim, index, indexing):
    """``t.select(dim, i)``, or ``t[..., i]`` (``indexing``): the same view, worded apart."""
    n = input.dim()
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, n)
    size = input._shape[dim]
    if not -size <= index < size:
        if not indexing:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"{list(input._shape)} at dimension {dim}")
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
    index = index + size if index < 0 else index
    key = (slice(None),) * dim + (index,)
    return _make_view(input, input._shape[:dim] + input._shape[dim + 1:],
                      input._stride[:dim] + input._stride[dim + 1:],
                      input._offset + index * input._stride[dim], SelectBackward0, _key=key)


def _slice(input, dim, start, stop, step):
    size = input._shape[dim]
    start, stop, step = slice(start, stop, step).indices(size)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    length = builtins.max(0, (stop - start + step - 1) // step)
    key = (slice(None),) * dim + (slice(start, stop, step),)
    shape = input._shape[:dim] + (length,) + input._shape[dim + 1:]
    stride = input._stride[:dim] + (input._stride[dim] * step,) + input._stride[dim + 1:]
    offset = input._offset + start * input._stride[dim]  # even for an empty slice, as torch
    return _make_view(input, shape, stride, offset, SliceBackward0, _key=key)


def narrow(input, dim, start, length):
    """``length`` elements from ``start`` along ``dim`` (a view); torch's checks, in order."""
    if input.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = _wrap_dim(dim, input.dim())
    size = input._shape[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start + size if start < 0 else start
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _slice(input, dim, start, start + length, 1)


class SplitBackward0(Node):
    def backward(self, *grads):
        pieces = [g if g is not None else zeros(shape, dtype=self._dtype, device=self._device)
                  for g, shape in zip(grads, self._shapes)]
        return (cat(pieces, self._dim),)


class UnbindBackward0(SplitBackward0):
    def backward(self, *grads):
        pieces = [g if g is not None else zeros(shape, dtype=self._dtype, device=self._device)
                  for g, shape in zip(grads, self._shapes)]
        return (stack(pieces, self._dim),)


def _multi_view(input, dim, views, node_cls):
    """Several views out of one node (split, chunk, unbind), each its own output index."""
    with_grad = _needs_grad(input)
    if with_grad:
        saved = _grad_state.grad_enabled
        _grad_state.grad_enabled = False
    try:
        outs = tuple(views())
    finally:
        if with_grad:
            _grad_state.grad_enabled = saved
    if with_grad:
        node = node_cls()
        node.num_outputs = len(outs)
        node._shapes = [o._shape for o in outs]
        node._dim, node._dtype, node._device = dim, input.dtype, input._device
        _record(node, (input,), *outs)
    return outs


def split(input, split_size_or_sections, dim=0):
    dim = _wrap_dim(dim, input.dim())
    size = input._shape[dim]
    if isinstance(split_size_or_sections, builtins.int):
        step = split_size_or_sections
        sections = [builtins.min(step, size - i) for i in range(0, size, step)] if size else [0]
    else:
        sections = list(split_size_or_sections)
        if builtins.sum(sections) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                f"size at dimension {dim}), but got split_sizes={sections}"
            )

    def views():
        start = 0
        for n in sections:
            yield _slice(input, dim, start, start + n, 1)
            start += n
    return _multi_view(input, dim, views, SplitBackward0)


def chunk(input, chunks, dim=0):
    size = input._shape[_wrap_dim(dim, input.dim())]
    return split(input, builtins.max(1, -(-size // chunks)), dim)


def unbind(input, dim=0):
    dim = _wrap_dim(dim, input.dim())
    return _multi_view(input, dim, lambda: (select(input, dim, i) for i in range(input._shape[dim])),
                       UnbindBackward0)


class AsStridedBackward0(Node):
    """Gradients meet in the storage: each output element adds its gradient into the memory
    cell it read, and each input element takes the sum in its cell (shared by the input
    elements that read the same cell, so it is split evenly between them)."""

    def backward(self, grad):
        if grad._requires_grad:  # create_graph: the same steps as recorded tensor ops
            return (self._recorded_backward(grad),)
        buffer = zeros(self._storage_size, dtype=grad.dtype, device=grad._device)
        region = as_strided(buffer, grad._shape, self._stride, self._offset)
        kernel("index_put_", grad._device)(region._np, (...,), grad._np, True)
        base = as_strided(buffer, self._base_shape, self._base_stride, self._base_offset)
        if not _non_overlapping_and_dense(self._base_shape, self._base_stride):
            readers = np.zeros(self._storage_size, dtype=grad._np.dtype)
            cells = np.lib.stride_tricks.as_strided(
                readers[self._base_offset:], self._base_shape,
                tuple(s * readers.itemsize for s in self._base_stride))
            np.add.at(cells, (...,), 1)
            np.divide(buffer._np, readers, out=buffer._np, where=readers > 0)
        return (base.clone(),)

    def _readers(self):
        """How many input elements read each storage cell (None if each is read once)."""
        if _non_overlapping_and_dense(self._base_shape, self._base_stride):
            return None
        readers = np.zeros(self._storage_size)
        cells = np.lib.stride_tricks.as_strided(
            readers[self._base_offset:], self._base_shape,
            tuple(s * readers.itemsize for s in self._base_stride))
        np.add.at(cells, (...,), 1)
        return np.maximum(readers, 1)

    def _recorded_backward(self, grad):
        cells = arange(self._storage_size, device=grad._device)
        index = as_strided(cells, grad._shape, self._stride, self._offset).reshape(-1)
        buffer = zeros(self._storage_size, dtype=grad.dtype, device=grad._device)
        buffer.index_put_((index,), grad.reshape(-1), accumulate=True)
        readers = self._readers()
        if readers is not None:
            buffer = buffer / tensor(readers, dtype=grad.dtype, device=grad._device)
        return as_strided(buffer, self._base_shape, self._base_stride, self._base_offset)


def _check_as_strided(input, size, stride, offset):
    """torch's checks before a view reads raw storage (NumPy's message would be vaguer)."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if builtins.any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if 0 in size:
        return
    itemsize = input.dtype.itemsize
    needed = (offset + 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride))) * itemsize
    available = len(input._storage) * itemsize
    if needed > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
            f"itemsize {itemsize} requiring a storage size of {needed} are out of bounds for "
            f"storage of size {available}"
        )


def as_strided(input, size, stride, storage_offset=None):
    """A view with any geometry over ``input``'s storage (offset counted from its start)."""
    offset = input._offset if storage_offset is None else storage_offset
    size, stride = tuple(size), tuple(stride)
    _check_as_strided(input, size, stride, offset)
    out = _view_of(input, size, stride, offset)
    if _needs_grad(input):
        node = AsStridedBackward0()
        node._storage_size = len(input._storage)
        node._base_shape, node._base_stride, node._base_offset = input._shape, input._stride, input._offset
        node._stride, node._offset = stride, offset
        _record(node, (input,), out)
    return out


class UnfoldBackward0(Node):
    def backward(self, grad):
        return (_unfold_backward(grad, self._saved_self_sym_sizes, self._saved_dimension,
                                 self._saved_size, self._saved_step),)


class UnfoldBackwardBackward0(Node):
    def backward(self, grad):
        return (unfold(grad, self._saved_dim, self._saved_size, self._saved_step),)


def _unfold_backward(grad, shape, dim, size, step):
    """Each input element gets the sum of the gradients of every window it appears in."""
    out = zeros(shape, dtype=grad.dtype, device=grad._device)
    windows = unfold(out.detach(), dim, size, step) if shape else out.detach().reshape(size)
    # windows overlap when step < size: add.at adds one element at a time, so none is lost
    kernel("index_put_", grad._device)(windows._np, (...,), grad._np, True)
    if _needs_grad(grad):
        node = UnfoldBackwardBackward0()
        node._saved_dim, node._saved_size, node._saved_step = dim, size, step
        _record(node, (grad,), out)
    return out


def unfold(input, dimension, size, step):
    """Every window of ``size`` elements along ``dimension``, ``step`` apart, as a new last dim.

    A view: the windows share the input's memory (overlapping when ``step < size``).
    >>> torch.arange(5.).unfold(0, 2, 1)   # rows [0, 1], [1, 2], [2, 3], [3, 4]
    """
    dim = _wrap_dim(dimension, input.dim())
    length = input._shape[dim] if input._shape else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape, stride = list(input._shape) + [size], list(input._stride) + [input._stride[dim] if input._shape else 1]
    if input._shape:
        shape[dim] = (length - size) // step + 1
        stride[dim] *= step
    return _make_view(input, tuple(shape), tuple(stride), input._offset, UnfoldBackward0,
                      _saved_dimension=dim, _saved_size=size, _saved_step=step)


# ===================================================================================
# Copies: clone, contiguous, detach, dtype and device conversion
# ===================================================================================
class CloneBackward0(Node):
    def backward(self, grad):
        return (grad,)


def _copy_preserving_format(input, array, memory_format, device):
    """Wrap ``array`` (a row-major copy of ``input``'s values) at the strides torch gives a
    copy of ``input`` in this memory format (storage.preserve_format_strides)."""
    row_major = contiguous_strides(input._shape)
    if memory_format == "contiguous" or input._stride == row_major:
        return _wrap(array, device)
    # (a dim of size 1 keeps its stride too: torch copies the strides of a dense tensor)
    strides = preserve_format_strides(input._shape, input._stride)
    if strides == row_major:
        return _wrap(array, device)
    return _with_strides(array, strides, device)


def clone(input, *, memory_format=None):
    out = _copy_preserving_format(input, kernel("copy", input._device)(input._np), memory_format, input._device)
    if _needs_grad(input):
        _record(CloneBackward0(), (input,), out)
    return out


class FlipBackward0(Node):
    def backward(self, grad):
        return (flip(grad, self._saved_dims),)


def flip(input, dims):
    """A copy with the order of elements reversed along ``dims`` (torch has no negative strides,
    so unlike NumPy's flip this is never a view)."""
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}")
    wrapped = []
    for d in dims:  # torch checks one dim at a time, so the first bad one is reported
        d = _wrap_dim(d, input.dim())
        if d in wrapped:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        wrapped.append(d)
    axes = tuple(d for d in wrapped if d < input.dim())  # a 0-dim tensor has nothing to reverse
    # the result is laid out as torch's empty_like(input) lays it out (preserve_format)
    strides = input._stride if _non_overlapping_and_dense(input._shape, input._stride) else \
        elementwise_strides(input._shape, [input._stride])
    out = _with_strides(np.flip(input._np, axes) if axes else input._np, strides, input._device)
    if _needs_grad(input):
        node = FlipBackward0()
        node._saved_dims = tuple(wrapped)
        _record(node, (input,), out)
    return out


def _flip_method(input, *dims):
    # the method also takes the dims one by one: x.flip(0, 1)
    if not dims:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    return flip(input, list(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else list(dims))


def contiguous(input, memory_format=None):
    if input.is_contiguous():
        return input
    return clone(input, memory_format="contiguous")


def detach(input):
    """Same memory and version counter, no graph: the numbers without their history."""
    out = _view_of(input, input._shape, input._stride, input._offset)
    out._base = None
    return out


def detach_(input):
    if input._base is not None:
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using "
            "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
            "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
            "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
            "function in torch/optim/optimizer.py as the solution.")
    input.grad_fn = None
    input._requires_grad = False
    return input


class ToCopyBackward0(Node):
    def backward(self, grad):
        return (grad,)  # the engine converts dtype and device back to the input's


def _parse_to(args, kwargs):
    target_dtype = kwargs.pop("dtype", None)
    target_device = kwargs.pop("device", None)
    for a in args:
        if isinstance(a, dtypes.dtype):
            target_dtype = a
        elif isinstance(a, Tensor):
            target_dtype, target_device = a.dtype, a._device
        elif a is not None:
            target_device = a
    return target_dtype, target_device, kwargs.pop("copy", False)


def to(input, *args, **kwargs):
    """Convert dtype and/or device; returns ``input`` itself when nothing changes."""
    target_dtype, target_device, copy = _parse_to(args, kwargs)
    new_dtype = target_dtype or input.dtype
    new_device = input._device if target_device is None else canonical(target_device)
    if new_device.type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    if new_dtype is input.dtype and new_device == input._device and not copy:
        return input
    if new_device == input._device:
        array = kernel("copy", new_device)(input._np, new_dtype.numpy)
    else:
        # leave the source device as host memory, then enter the target's memory
        host = np.array(input._np, dtype=new_dtype.numpy, order="C", copy=True)
        array = kernel("copy", new_device)(host) if new_device.type != "cpu" else host
    out = _copy_preserving_format(input, array, kwargs.pop("memory_format", None), new_device)
    if _needs_grad(input) and new_dtype.is_floating_point:
        _record(ToCopyBackward0(), (input,), out)
    return out


def _converter(d):
    return lambda input, memory_format=None: to(input, d, memory_format=memory_format)


# ===================================================================================
# Reductions
# ===================================================================================
def _reduce_dims(input, dim):
    if dim is None:
        return None
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return tuple(sorted(_wrap_dim(d, input.dim()) for d in dims))


def _restore_dims(grad, shape, dims, keepdim):
    """Put back the reduced dims as size 1, so that grad broadcasts over the input."""
    if keepdim or dims is None or grad.dim() == len(shape):
        return grad
    for d in dims:
        grad = grad.unsqueeze(d)
    return grad


class SumBackward0(Node):
    def backward(self, grad):
        return (grad.expand(self._saved_self_sym_sizes),)


class SumBackward1(Node):
    def backward(self, grad):
        grad = _restore_dims(grad, self._saved_self_sym_sizes, self._saved_dim, self._saved_keepdim)
        return (grad.expand(self._saved_self_sym_sizes),)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    dims = _reduce_dims(input, dim)
    out_dtype = dtype or (dtypes.int64 if not input.dtype.is_floating_point else input.dtype)
    out = _wrap(kernel("sum", input._device)(input._np, dims, keepdim, out_dtype.numpy), input._device)
    if _needs_grad(input):
        node = SumBackward0() if dims is None else SumBackward1()
        node._saved_self_sym_sizes = input._shape
        node._saved_dim, node._saved_keepdim = dims, keepdim
        _record(node, (input,), out)
    return out


class MeanBackward0(SumBackward0):
    def backward(self, grad):
        return (grad.expand(self._saved_self_sym_sizes) / self._count,)


class MeanBackward1(SumBackward1):
    def backward(self, grad):
        (g,) = SumBackward1.backward(self, grad)
        return (g / self._count,)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    if not (dtype or input.dtype).is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_scalar_name(input.dtype)}"
        )
    dims = _reduce_dims(input, dim)
    a = input._np if dtype is None else input._np.astype(dtype.numpy)
    out = _wrap(kernel("mean", input._device)(a, dims, keepdim), input._device)
    if _needs_grad(input):
        node = MeanBackward0() if dims is None else MeanBackward1()
        node._saved_self_sym_sizes = input._shape
        node._saved_dim, node._saved_keepdim = dims, keepdim
        node._count = input.numel() // builtins.max(out.numel(), 1) if input.numel() else 1
        _record(node, (input,), out)
    return out


class _RawFormula(Node):
    """A backward computed on raw arrays: fine for gradients, not differentiable again."""

    def _check_not_double(self, grad):
        if grad._requires_grad:
            raise RuntimeError(f"reftorch: double backward through {self.name()} is not implemented")


class ProdBackward0(_RawFormula):
    def backward(self, grad):
        self._check_not_double(grad)
        (x,) = self.saved_values
        flat = x._np.reshape(-1)
        others = _products_of_others(flat, 0).reshape(x._shape)
        return (_wrap(others, x._device) * grad,)


class ProdBackward1(ProdBackward0):
    def backward(self, grad):
        self._check_not_double(grad)
        (x,) = self.saved_values
        others = _wrap(_products_of_others(x._np, self._saved_dim), x._device)
        grad = _restore_dims(grad, x._shape, (self._saved_dim,), self._saved_keepdim)
        return (others * grad,)


def _products_of_others(a, axis):
    """For each element, the product of all the others along ``axis`` (safe with zeros)."""
    ones_shape = list(a.shape)
    ones_shape[axis] = 1
    one = np.ones(ones_shape, dtype=a.dtype)
    left = np.cumprod(np.concatenate([one, np.take(a, range(a.shape[axis] - 1), axis=axis)], axis=axis), axis=axis)
    rev = np.flip(a, axis=axis)
    right = np.flip(np.cumprod(np.concatenate([one, np.take(rev, range(a.shape[axis] - 1), axis=axis)], axis=axis), axis=axis), axis=axis)
    return left * right


def prod(input, dim=None, keepdim=False, *, dtype=None):
    out_dtype = dtype or (dtypes.int64 if not input.dtype.is_floating_point else input.dtype)
    if dim is None:
        out = _wrap(kernel("prod", input._device)(input._np, None, False, out_dtype.numpy), input._device)
        node = ProdBackward0() if _needs_grad(input) else None
    else:
        d = _wrap_dim(dim, input.dim())
        out = _wrap(kernel("prod", input._device)(input._np, d, keepdim, out_dtype.numpy), input._device)
        node = ProdBackward1() if _needs_grad(input) else None
        if node:
            node._saved_dim, node._saved_keepdim = d, keepdim
    if node is not None:
        node.save(input)
        _record(node, (input,), out)
    return out


class MaxBackward1(Node):
    def backward(self, grad):
        x, result = self.saved_values
        # ties share the gradient evenly
        mask = (x == result).to(grad.dtype)
        return (mask * (grad / mask.sum()),)


MinBackward1 = type("MinBackward1", (MaxBackward1,), {})


class AmaxBackward0(Node):
    def backward(self, grad):
        x, result = self.saved_values
        dims, keepdim = self._saved_dim, self._saved_keepdim
        result = _restore_dims(result, x._shape, dims, keepdim)
        grad = _restore_dims(grad, x._shape, dims, keepdim)
        mask = (x == result).to(grad.dtype)
        return (mask * grad / mask.sum(dims, keepdim=True),)


AminBackward0 = type("AminBackward0", (AmaxBackward0,), {})


class MaxBackward0(_RawFormula):
    """Gradient goes to the position each value came from (the saved indices)."""

    def backward(self, grad, _indices_grad=None):
        self._check_not_double(grad)
        (indices,) = self.saved_values
        dim, keepdim, shape = self._saved_dim, self._saved_keepdim, self._saved_self_sym_sizes
        g = grad._np if keepdim else np.expand_dims(grad._np, dim)
        i = indices._np if keepdim else np.expand_dims(indices._np, dim)
        return (_wrap(kernel("scatter_add", grad._device)(shape, g.dtype, i, g, dim), grad._device),)


MinBackward0 = type("MinBackward0", (MaxBackward0,), {})
TopkBackward0 = type("TopkBackward0", (MaxBackward0,), {})
SortBackward0 = type("SortBackward0", (MaxBackward0,), {})

def _return_type(name):
    """A (values, indices) named tuple that prints like torch.return_types.<name>."""
    base = namedtuple(name, ["values", "indices"])

    def __repr__(self):
        return f"torch.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"
    return type(name, (base,), {"__repr__": __repr__, "__slots__": ()})


return_types_max = _return_type("max")
return_types_min = _return_type("min")
return_types_topk = _return_type("topk")
return_types_sort = _return_type("sort")


def _extreme(input, dim, keepdim, other, which):
    if isinstance(dim, Tensor):  # torch.max(a, b) is maximum
        other, dim = dim, None
    if other is not None:
        return maximum(input, other) if which == "max" else minimum(input, other)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                f"{which}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        out = _wrap(kernel("amax" if which == "max" else "amin", input._device)(input._np, None, False), input._device)
        if _needs_grad(input):
            node = MaxBackward1() if which == "max" else MinBackward1()
            node.save(input, output=out)
            _record(node, (input,), out)
        return out
    d = _wrap_dim(dim, input.dim())
    arg = "argmax" if which == "max" else "argmin"
    indices = _wrap(kernel(arg, input._device)(input._np, d, True), input._device)
    values = _wrap(kernel("take_along_dim", input._device)(input._np, indices._np, d), input._device)
    if not keepdim:
        values = _wrap(np.squeeze(values._np, d).copy(), input._device)
        indices = _wrap(np.squeeze(indices._np, d).copy(), input._device)
    if _needs_grad(input):
        node = MaxBackward0() if which == "max" else MinBackward0()
        node.save(indices)
        node._saved_dim, node._saved_keepdim, node._saved_self_sym_sizes = d, keepdim, input._shape
        _record(node, (input,), values)
    cls = return_types_max if which == "max" else return_types_min
    return cls(values, indices)


def max(input, dim=None, keepdim=False, *, other=None):
    return _extreme(input, dim, keepdim, other, "max")


def min(input, dim=None, keepdim=False, *, other=None):
    return _extreme(input, dim, keepdim, other, "min")


def amax(input, dim=(), keepdim=False):
    dims = _reduce_dims(input, dim) if dim != () else None
    out = _wrap(kernel("amax", input._device)(input._np, dims, keepdim), input._device)
    if _needs_grad(input):
        node = AmaxBackward0()
        node._saved_dim, node._saved_keepdim = dims, keepdim
        node.save(input, output=out)
        _record(node, (input,), out)
    return out


def amin(input, dim=(), keepdim=False):
    dims = _reduce_dims(input, dim) if dim != () else None
    out = _wrap(kernel("amin", input._device)(input._np, dims, keepdim), input._device)
    if _needs_grad(input):
        node = AminBackward0()
        node._saved_dim, node._saved_keepdim = dims, keepdim
        node.save(input, output=out)
        _record(node, (input,), out)
    return out


def _no_bool(input, name):
    if input.dtype is dtypes.bool:
        raise RuntimeError(f"{name}(): does not support bool input")


def argmax(input, dim=None, keepdim=False):
    _no_bool(input, "argmax")
    if dim is None:
        return _wrap(kernel("argmax", input._device)(input._np.reshape(-1), 0, False), input._device)
    return _wrap(kernel("argmax", input._device)(input._np, _wrap_dim(dim, input.dim()), keepdim), input._device)


def argmin(input, dim=None, keepdim=False):
    _no_bool(input, "argmin")
    if dim is None:
        return _wrap(kernel("argmin", input._device)(input._np.reshape(-1), 0, False), input._device)
    return _wrap(kernel("argmin", input._device)(input._np, _wrap_dim(dim, input.dim()), keepdim), input._device)


def topk(input, k, dim=-1, largest=True, sorted=True):
    if input.dtype is dtypes.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = _wrap_dim(dim, input.dim())
    size = input._shape[d] if input.dim() else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, indices = kernel("topk", input._device)(input._np, k, d, largest)
    values, indices = _wrap(values, input._device), _wrap(indices, input._device)
    if _needs_grad(input):
        node = TopkBackward0()
        node.save(indices)
        node._saved_dim, node._saved_keepdim, node._saved_self_sym_sizes = d, True, input._shape
        _record(node, (input,), values)
    return return_types_topk(values, indices)


def sort(input, dim=-1, descending=False):
    d = _wrap_dim(dim, input.dim())
    values, indices = kernel("sort", input._device)(input._np, d, descending)
    values, indices = _wrap(values, input._device), _wrap(indices, input._device)
    if _needs_grad(input):
        node = SortBackward0()
        node.save(indices)
        node._saved_dim, node._saved_keepdim, node._saved_self_sym_sizes = d, True, input._shape
        _record(node, (input,), values)
    return return_types_sort(values, indices)


def all(input, dim=None):
    return _wrap(np.asarray(np.all(input._np, axis=dim)), input._device)


def any(input, dim=None):
    return _wrap(np.asarray(np.any(input._np, axis=dim)), input._device)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(np.allclose(input._np, other._np, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _wrap(np.isclose(input._np, other._np, rtol=rtol, atol=atol, equal_nan=equal_nan), input._device)


def equal(input, other) -> bool:
    return input._shape == other._shape and builtins.bool(np.array_equal(input._np, other._np))


def nonzero(input, *, as_tuple=False):
    found = np.nonzero(input._np)
    if as_tuple:
        return tuple(_wrap(i.astype(np.int64), input._device) for i in found)
    return _wrap(np.stack(found, axis=1).astype(np.int64), input._device)


def count_nonzero(input, dim=None):
    return _wrap(np.asarray(np.count_nonzero(input._np, axis=dim), dtype=np.int64), input._device)


class VarBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_values
        dims, keepdim = self._saved_dim, self._saved_keepdim
        grad = _restore_dims(grad, x._shape, dims, keepdim)
        return (grad * (2.0 / self._divisor) * (x - mean(x, dims, keepdim=True)),)


class StdBackward0(Node):
    def backward(self, grad):
        x, result = self.saved_values
        dims, keepdim = self._saved_dim, self._saved_keepdim
        grad = _restore_dims(grad, x._shape, dims, keepdim)
        result = _restore_dims(result, x._shape, dims, keepdim)
        return (grad * (x - mean(x, dims, keepdim=True)) / (result * self._divisor),)


def _spread(input, dim, correction, keepdim, which):
    """var and std: one node each, as in torch (not a graph of mean, sub, mul)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _reduce_dims(input, dim)
    n = input.numel() if dims is None else math.prod(input._shape[d] for d in dims)
    divisor = builtins.max(n - correction, 0)
    if divisor == 0:
        warnings.warn(
            f"{which}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=4)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's own note on the same thing
        values = np.var(input._np, axis=dims, ddof=correction, keepdims=keepdim)
        if which == "std":
            values = np.sqrt(values)
    out = _wrap(np.asarray(values, dtype=input.dtype.numpy), input._device)
    if _needs_grad(input):
        node = VarBackward0() if which == "var" else StdBackward0()
        node._saved_dim, node._saved_keepdim, node._divisor = dims, keepdim, divisor
        node.save(input, output=out) if which == "std" else node.save(input)
        _record(node, (input,), out)
    return out


def var(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    return _spread(input, dim, correction if unbiased is None else builtins.int(unbiased), keepdim, "var")


def std(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    return _spread(input, dim, correction if unbiased is None else builtins.int(unbiased), keepdim, "std")


class LinalgVectorNormBackward0(Node):
    def backward(self, grad):
        x, result = self.saved_values
        dims, keepdim = self._saved_dim, self._saved_keepdim
        grad = _restore_dims(grad, x._shape, dims, keepdim)
        if self._saved_ord == 1:
            return (grad * sign(x),)
        result = _restore_dims(result, x._shape, dims, keepdim)
        # where the norm is 0 the gradient is 0 (torch's choice), not nan
        safe = where(result == 0, ones_like(result), result)
        return (where(result == 0, zeros_like(x), grad * x / safe),)


def norm(input, p=2, dim=None, keepdim=False):
    if p not in (1, 2):
        raise NotImplementedError("reftorch.norm supports p=1 and p=2")
    if not input.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_scalar_name(input.dtype)}")
    dims = _reduce_dims(input, dim)
    a = input._np
    values = np.sum(np.abs(a), axis=dims, keepdims=keepdim) if p == 1 else \
        np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
    out = _wrap(np.asarray(values, dtype=input.dtype.numpy), input._device)
    if _needs_grad(input):
        node = LinalgVectorNormBackward0()
        node._saved_dim, node._saved_keepdim, node._saved_ord = dims, keepdim, p
        node.save(input, output=out)
        _record(node, (input,), out)
    return out


# ===================================================================================
# Matrix products
# ===================================================================================


def _check_matmul_dtypes(a, b, what):
    if a.dtype is not b.dtype:
        if what == "dot":
            raise RuntimeError(
                "dot : expected both vectors to have same dtype, but found "
                f"{_scalar_name(a.dtype)} and {_scalar_name(b.dtype)}"
            )
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_cpp_type_name(a.dtype)} != {_cpp_type_name(b.dtype)}"
        )


def _column_major(layout):
    """A matrix laid out column by column, such as ``weight.t()`` in a Linear layer."""
    shape, stride = layout
    return stride[0] == 1 and stride[1] == shape[0]


def _mm_mat1_grad(grad, mat2, mat1_layout):
    # torch gives a column-major mat1 a column-major gradient (the same product, transposed)
    if _column_major(mat1_layout):
        return mat2.mm(grad.t()).t()
    return grad.mm(mat2.t())


def _mm_mat2_grad(grad, mat1, mat2_layout):
    # so ``weight.t()`` gets a column-major gradient, and TBackward0 hands the weight a
    # contiguous one: no transposed copy on the way into .grad
    if _column_major(mat2_layout):
        return grad.t().mm(mat1).t()
    return mat1.t().mm(grad)


def _save_layouts(node, mat1, mat2):
    """The sizes and strides the two gradient formulas above look at (as torch saves them)."""
    node._saved_mat1_layout = (mat1._shape, mat1._stride)
    node._saved_mat2_layout = (mat2._shape, mat2._stride)


class MmBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_values
        return (_mm_mat1_grad(grad, b, self._saved_mat1_layout) if b is not _UNSAVED else None,
                _mm_mat2_grad(grad, a, self._saved_mat2_layout) if a is not _UNSAVED else None)


# the CPU kernel that refuses a bool product in torch (after the shape checks)
_PRODUCT_KERNEL_NAMES = {"MmBackward0": "addmm_impl_cpu_", "MvBackward0": "addmv_impl_cpu",
                         "BmmBackward0": "bmm", "DotBackward0": "dot", "AddmmBackward0": "addmm_impl_cpu_"}


def _check_not_bool_product(node_cls, a):
    if a.dtype is dtypes.bool:
        raise NotImplementedError(
            f"\"{_PRODUCT_KERNEL_NAMES[node_cls.__name__]}\" not implemented for 'Bool'")


def _matrix_product(node_cls, a, b):
    """The product in one kernel; each side is saved only for the other side's gradient."""
    _check_not_bool_product(node_cls, a)
    dev = _devices(a, b)
    out = _wrap(kernel("matmul", dev)(a._np, b._np), dev)
    if _needs_grad(a, b):
        node = node_cls()
        node.save(_save_for_other(a, _requires(b)), _save_for_other(b, _requires(a)))
        if node_cls is MmBackward0:
            _save_layouts(node, a, b)
        _record(node, (a, b), out)
    return out


def mm(input, mat2):
    if input.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_matmul_dtypes(input, mat2, "mm")
    if input._shape[1] != mat2._shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({input._shape[0]}x{input._shape[1]} "
            f"and {mat2._shape[0]}x{mat2._shape[1]})"
        )
    return _matrix_product(MmBackward0, input, mat2)


class MvBackward0(Node):
    def backward(self, grad):
        a, v = self.saved_values
        return (grad.unsqueeze(1) * v if v is not _UNSAVED else None,
                a.t().mv(grad) if a is not _UNSAVED else None)


def mv(input, vec):
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError("vector + matrix @ vector expected, got "
                           f"1, {input.dim()}, {vec.dim()}")
    if input.dtype is not vec.dtype:
        n = _scalar_name
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {n(vec.dtype)}, "
            f"{n(input.dtype)}, and {n(vec.dtype)}"
        )
    if input._shape[1] != vec._shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input._shape[0]}), mat ({input._shape[0]}x{input._shape[1]}), "
            f"vec ({vec._shape[0]})"
        )
    return _matrix_product(MvBackward0, input, vec)


class DotBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_values
        return grad * b, grad * a


def dot(input, other):
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    _check_matmul_dtypes(input, other, "dot")
    if input._shape != other._shape:
        raise RuntimeError(
            "inconsistent tensor size, expected tensor [%d] and src [%d] to have the same "
            "number of elements, but got %d and %d elements respectively"
            % (input._shape[0], other._shape[0], input._shape[0], other._shape[0])
        )
    _check_not_bool_product(DotBackward0, input)
    dev = _devices(input, other)
    out = _wrap(kernel("matmul", dev)(input._np, other._np), dev)
    if _needs_grad(input, other):
        node = DotBackward0()
        node.save(input, other)
        _record(node, (input, other), out)
    return out


vdot = inner = dot


class BmmBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_values
        return (grad.bmm(b.transpose(1, 2)) if b is not _UNSAVED else None,
                a.transpose(1, 2).bmm(grad) if a is not _UNSAVED else None)


def bmm(input, mat2):
    if input.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.dtype is not mat2.dtype:  # torch words bmm's check its own way
        raise RuntimeError(
            f"expected scalar type {_scalar_name(input.dtype)} but found {_scalar_name(mat2.dtype)}")
    if input._shape[0] != mat2._shape[0] or input._shape[2] != mat2._shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input._shape[0]}, {input._shape[2]}] but got: [{mat2._shape[0]}, {mat2._shape[1]}]."
        )
    return _matrix_product(BmmBackward0, input, mat2)


class AddmmBackward0(Node):
    def backward(self, grad):
        m1, m2 = self.saved_values
        alpha, beta = self._saved_alpha, self._saved_beta
        g_bias = grad if beta == 1 else grad * beta
        g1 = _mm_mat1_grad(grad, m2, self._saved_mat1_layout) if m2 is not _UNSAVED else None
        g2 = _mm_mat2_grad(grad, m1, self._saved_mat2_layout) if m1 is not _UNSAVED else None
        if alpha != 1:
            g1 = None if g1 is None else g1 * alpha
            g2 = None if g2 is None else g2 * alpha
        return g_bias, g1, g2


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``: what a Linear layer computes, in one op."""
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError("mat1 must be a matrix, got %d-D tensor" % mat1.dim())
    if mat1.dtype is not mat2.dtype:  # torch words addmm's checks its own way
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {_scalar_name(mat1.dtype)} and "
            f"{_scalar_name(mat2.dtype)}")
    if isinstance(input, Tensor) and input.dtype is not mat2.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {_scalar_name(input.dtype)} and "
            f"{_scalar_name(mat2.dtype)}")
    if mat1._shape[1] != mat2._shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1._shape[0]}x{mat1._shape[1]} "
            f"and {mat2._shape[0]}x{mat2._shape[1]})"
        )
    _check_not_bool_product(AddmmBackward0, mat1)
    dev = _devices(input, mat1, mat2)
    try:
        out = _wrap(kernel("addmm", dev)(input._np, mat1._np, mat2._np, beta, alpha), dev)
    except ValueError:
        raise RuntimeError(
            f"The expanded size of the tensor ({mat2._shape[1]}) must match the existing size "
            f"({input._shape[-1]}) at non-singleton dimension 1.  Target sizes: "
            f"[{mat1._shape[0]}, {mat2._shape[1]}].  Tensor sizes: {list(input._shape)}"
        ) from None
    if _needs_grad(input, mat1, mat2):
        node = AddmmBackward0()
        node._saved_alpha, node._saved_beta = alpha, beta
        node.save(_save_for_other(mat1, _requires(mat2)), _save_for_other(mat2, _requires(mat1)))
        _save_layouts(node, mat1, mat2)
        _record(node, (input, mat1, mat2), out)
    return out


def _should_fold(tensor1, tensor2):
    """torch's rule for computing a batched product as one mm/mv on a folded matrix."""
    larger_first = tensor1.dim() >= tensor2.dim()
    t1 = tensor1 if larger_first else transpose(tensor2, -2, -1)
    dim_t2 = tensor2.dim() if larger_first else tensor1.dim()
    if not (t1.dim() >= 3 and dim_t2 <= 2):
        return False
    # folding keeps the small operand's gradient small (no batch of copies of it)
    if (tensor2 if larger_first else tensor1)._requires_grad:
        return True
    if tensor1.dim() == 2:
        return False
    if t1.numel() == 0:
        return True
    shape, stride = t1._shape, t1._stride
    return builtins.all(stride[i] == stride[i + 1] * shape[i + 1] for i in range(t1.dim() - 2))


def _squeeze_result(t, dim):
    """torch squeezes a fresh result in place (``squeeze_``): same node, not a view."""
    out = squeeze(t, dim)
    out._base = None
    out._version_counter[0] += 1
    return out


def matmul(input, other):
    """Picks dot, mv, mm, a folded mm/mv, or bmm by the dims, following torch's matmul
    step by step, so that the recorded graph is the same as torch's."""
    da, db = input.dim(), other.dim()
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        return dot(input, other)
    if da == 2 and db == 1:
        return mv(input, other)
    if da == 1 and db == 2:
        return _squeeze_result(mm(unsqueeze(input, 0), other), (0,))
    if da == 2 and db == 2:
        return mm(input, other)
    if _should_fold(input, other):
        flip = db > da  # fold the larger one: (A @ B) = (B^T @ A^T)^T
        t1 = transpose(other, -2, -1) if flip else input
        t2 = (t(input) if da == 2 else input) if flip else other
        _check_matmul_dtypes(t1, t2, "mm")
        output_shape = t1._shape[:-1]
        folded = reshape(t1, math.prod(output_shape), t1._shape[-1])
        if t2.dim() == 2:
            output = _unsafe_view(mm(folded, t2), output_shape + (t2._shape[1],))
            return contiguous(transpose(output, -2, -1)) if flip else output
        return _unsafe_view(mv(folded, t2), output_shape)
    # batched on both sides: broadcast the batch dims, then one bmm (worded as bmm's check)
    if input.dtype is not other.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_name(input.dtype)} but found {_scalar_name(other.dtype)}")
    n = input._shape[-2] if da > 1 else 1
    m1 = input._shape[-1]
    batch1 = input._shape[:builtins.max(da - 2, 0)]
    m2 = other._shape[-2] if db > 1 else other._shape[0]
    p = other._shape[-1] if db > 1 else 1
    batch2 = other._shape[:builtins.max(db - 2, 0)]
    if da == 3 and db == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and input._requires_grad:
            return matmul(squeeze(input, 0), other)
        if batch2[0] == 1 and other._requires_grad:
            return matmul(input, squeeze(other, 0))
    batch = broadcast_shapes(batch1, batch2)
    n_batch = math.prod(batch)
    a3 = reshape(expand(input, batch + (n, m1)), n_batch, n, m1)
    vector_rhs = db == 1
    b3 = expand(other, batch + ((m2,) if vector_rhs else (m2, p)))
    b3 = unsqueeze(reshape(b3, n_batch, m2), 2) if vector_rhs else reshape(b3, n_batch, m2, p)
    output_shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    product = bmm(a3, b3)
    if vector_rhs:
        product = squeeze(product, -1)
    return _unsafe_view(product, output_shape)


def outer(input, vec2):
    return reshape(input, input._shape[0], 1) * vec2


ger = outer


def einsum(*args):
    raise NotImplementedError("einsum is not part of reftorch")


# ===================================================================================
# Joining and repeating
# ===================================================================================
class CatBackward0(Node):
    def backward(self, grad):
        grads, start = [], 0
        for n in self._sizes:
            grads.append(narrow(grad, self._saved_dim, start, n))
            start += n
        return tuple(grads)


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    # torch skips 1-D empty tensors in cat (a legacy rule)
    used = [t for t in tensors if not (t.dim() == 1 and t.numel() == 0)] or tensors[:1]
    d = _wrap_dim(dim, used[0].dim())
    rt = dtypes.result_type(*used) if len(used) > 1 else used[0].dtype
    dev = _devices(*used)
    first = used[0]
    for i, t in enumerate(used[1:], 1):
        if t.dim() != first.dim():
            raise RuntimeError(
                "Tensors must have same number of dimensions: got "
                f"{first.dim()} and {t.dim()}"
            )
        for k in range(first.dim()):
            if k != d and t._shape[k] != first._shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{first._shape[k]} but got size {t._shape[k]} for tensor number {i} in the list."
                )
    out = _wrap(kernel("cat", dev)([_array(t, rt) for t in used], d), dev)
    if _needs_grad(*used):
        node = CatBackward0()
        node._saved_dim = d
        node._sizes = [t._shape[d] for t in used]
        _record(node, used, out)
    return out


concat = concatenate = cat


class StackBackward0(Node):
    def backward(self, grad):
        return tuple(select(grad, self._saved_dim, i) for i in range(self._count))


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._shape
    for i, t in enumerate(tensors):
        if t._shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(t._shape)} at entry {i}"
            )
    d = _wrap_dim(dim, len(shape) + 1)
    rt = dtypes.result_type(*tensors) if len(tensors) > 1 else tensors[0].dtype
    dev = _devices(*tensors)
    out = _wrap(kernel("stack", dev)([_array(t, rt) for t in tensors], d), dev)
    if _needs_grad(*tensors):
        node = StackBackward0()
        node._saved_dim, node._count = d, len(tensors)
        _record(node, tensors, out)
    return out


def hstack(tensors):
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors):
    return cat([t if t.dim() > 1 else unsqueeze(t, 0) for t in tensors], 0)


class RepeatBackward0(Node):
    def backward(self, grad):
        # view the grad as (r0, s0, r1, s1, ...) and sum over the repeat axes
        repeats, shape = self._saved_repeats, self._saved_self_sym_sizes
        extra = len(repeats) - len(shape)
        full_shape = (1,) * extra + tuple(shape)
        split_shape = []
        for r, s in zip(repeats, full_shape):
            split_shape += [r, s]
        summed = grad.reshape(split_shape).sum(tuple(range(0, 2 * len(repeats), 2)))
        return (summed.reshape(shape),)


def repeat(input, *repeats):
    repeats = tuple(repeats[0]) if len(repeats) == 1 and isinstance(repeats[0], (tuple, list)) else repeats
    if len(repeats) < input.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    out = _wrap(kernel("repeat", input._device)(input._np, repeats), input._device)
    if _needs_grad(input):
        node = RepeatBackward0()
        node._saved_repeats, node._saved_self_sym_sizes = repeats, input._shape
        _record(node, (input,), out)
    return out


def tile(input, *dims):
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    dims = (1,) * (input.dim() - len(dims)) + tuple(dims)
    return repeat(input, dims)


# ===================================================================================
# Indexing
# ===================================================================================
class IndexBackward0(_RawFormula):
    def backward(self, grad):
        self._check_not_double(grad)
        if self._freed:  # torch saves the indices as tensors, freed after backward like any other
            raise RuntimeError(FREED_MESSAGE)
        return (_embed(grad, self._saved_self_sym_sizes, self._key, accumulate=True),)

    def release(self):
        self._freed = True


def _is_basic(item):
    return item is None or item is Ellipsis or isinstance(item, (slice, builtins.int)) and not isinstance(item, builtins.bool)


def _check_0dim_key(input, key):
    """A lone int or slice on a 0-dim tensor: torch's hints (a tuple just counts indices)."""
    if input.dim() == 0 and isinstance(key, builtins.int) and not isinstance(key, builtins.bool):
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
            "in C++ to convert a 0-dim tensor to a number")
    if input.dim() == 0 and isinstance(key, slice):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")


_INDEX_TYPES = (builtins.int, slice, Tensor, list, tuple, np.ndarray, np.integer, np.bool_)


def _index_dims(k) -> int:
    """How many of the tensor's dims an index item uses: a mask uses its own dims, a Python
    bool or None none (they add a dim), anything else one."""
    if k is None or k is Ellipsis or isinstance(k, (builtins.bool, np.bool_)):
        return 0
    if isinstance(k, Tensor) and k.dtype is dtypes.bool:
        return k.dim()
    if isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype == np.bool_:
        return np.asarray(k).ndim
    return 1


def _check_masks(input, key):
    """A boolean mask must match the dims it covers, seen after the basic indices before it."""
    shape, dim = list(input._shape), 0
    for k in key:
        if k is None or isinstance(k, (builtins.bool, np.bool_)):
            shape.insert(dim, 1)
            dim += 1
        elif isinstance(k, builtins.int):
            del shape[dim]
        elif isinstance(k, slice):
            shape[dim] = len(range(*k.indices(shape[dim])))
            dim += 1
        else:
            used = _index_dims(k)
            is_mask = (k.dtype is dtypes.bool) if isinstance(k, Tensor) else \
                isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype == np.bool_
            if is_mask:
                mask_shape = tuple(k._shape) if isinstance(k, Tensor) else np.asarray(k).shape
                for j, n in enumerate(mask_shape):
                    if n != shape[dim + j]:
                        raise IndexError(
                            f"The shape of the mask {list(mask_shape)} at index {j} does not match "
                            f"the shape of the indexed tensor {shape} at index {dim + j}")
            dim += used


def _expand_key(input, key):
    if not isinstance(key, tuple):
        key = (key,)
    # an integer or bool tensor with one element is still advanced indexing, as in torch
    used = builtins.sum(_index_dims(k) for k in key)
    if used > input.dim():
        raise IndexError(f"too many indices for tensor of dimension {input.dim()}")
    for k in key:
        if k is not None and k is not Ellipsis and not isinstance(k, _INDEX_TYPES):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(k).__name__})")
    if builtins.any(k is Ellipsis for k in key):  # `in` would compare arrays element-wise
        i = [j for j, k in enumerate(key) if k is Ellipsis][0]
        key = key[:i] + (slice(None),) * (input.dim() - used) + key[i + 1:]
    _check_masks(input, key)
    return key


def _basic_index(input, key):
    """ints select, slices slice, None unsqueezes: every step is a view."""
    out, dim = input, 0
    for item in key:
        if item is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(item, slice):
            size = out._shape[dim]
            if item == slice(None) or (item.step in (None, 1) and (item.start in (None, 0))
                                       and item.stop is not None and item.stop >= size):
                dim += 1  # a full slice changes nothing and records nothing, as in torch
                continue
            out = _slice(out, dim, item.start, item.stop, 1 if item.step is None else item.step)
            dim += 1
        else:
            out = _select(out, dim, item, indexing=True)
    return out


def _numpy_key(key):
    converted = []
    for k in key:
        if isinstance(k, Tensor):
            if k.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            converted.append(k._np)
        elif isinstance(k, (list, np.ndarray)):
            k = np.asarray(k)
            # a list becomes a long index (floats are cut toward zero), or a mask if all bools
            converted.append(k if k.dtype == np.bool_ else k.astype(np.int64))
        else:
            converted.append(k)
    return tuple(converted)


class AliasBackward0(Node):
    def backward(self, grad):
        return (grad,)


def _scalar_tensor_keys(key):
    """A 0-dim integer tensor in an index acts as a plain int (torch selects, a view)."""
    def plain(k):
        if isinstance(k, Tensor) and k.dim() == 0 and k.dtype not in (dtypes.bool,) \
                and not k.dtype.is_floating_point:
            return k.item()
        return k
    return tuple(plain(k) for k in key) if isinstance(key, tuple) else plain(key)


def getitem(input, key):
    _check_0dim_key(input, key)
    key = _scalar_tensor_keys(key)
    if isinstance(key, slice):  # torch's one-slice path records a slice even when it is full
        return _slice(input, 0, key.start, key.stop, 1 if key.step is None else key.step) \
            if input.dim() else _basic_index(input, _expand_key(input, key))
    key = _expand_key(input, key)
    if builtins.all(_is_basic(k) for k in key):
        out = _basic_index(input, key)
        if out is input:  # t[()], t[...], t[:, :]: still a new view, as in torch
            out = _make_view(input, input._shape, input._stride, input._offset, AliasBackward0)
        return out
    if not _holds_python_bool(key):
        # torch applies ints, slices and None first (views), then indexes what is left
        input, key = _basic_index(input, _basic_part(key)), _advanced_part(key)
    np_key = _numpy_key(key)
    try:
        values = kernel("index", input._device)(input._np, np_key)
    except IndexError as error:
        raise IndexError(str(error).replace("axis", "dimension")) from None
    strides = _index_strides(input, key, values.shape)
    out = _with_strides(values, strides, input._device) if strides else _wrap(values, input._device)
    if _needs_grad(input):
        node = IndexBackward0()
        node._saved_self_sym_sizes, node._key = input._shape, np_key
        _record(node, (input,), out)
    return out


def _holds_python_bool(key) -> bool:
    """x[True] and the like add a dim: left to NumPy's rules, which torch's match there."""
    return builtins.any(isinstance(k, (builtins.bool, np.bool_)) for k in key)


def _basic_part(key):
    """The key with every tensor or list index replaced by full slices over the dims it uses."""
    return builtins.sum(((k,) if _is_basic(k) else (slice(None),) * _index_dims(k) for k in key), ())


def _advanced_part(key):
    """What is left to index once ints (gone), slices and None (now full dims) are applied."""
    return tuple(slice(None) if k is None or isinstance(k, slice) else k
                 for k in key if not (_is_basic(k) and isinstance(k, builtins.int)))


def _index_strides(input, key, shape):
    """The strides torch gives an advanced-indexing result, or None for row-major.

    torch's index kernel is a TensorIterator over the source, restrided so the indexed dims
    become the index's dims with stride 0, and the index tensors, broadcast together. Its
    output is dense in the order those operands' strides give (storage.elementwise_strides).
    Indexed dims that are not next to each other move to the front first."""
    dims, indices, d = [], [], 0
    for k in key:
        if isinstance(k, slice):
            d += 1
            continue
        if isinstance(k, Tensor):
            index_shape, index_strides, is_mask = k._shape, k._stride, k.dtype is dtypes.bool
        else:
            array = np.asarray(k)
            index_shape, index_strides = array.shape, contiguous_strides(array.shape)
            is_mask = array.dtype == np.bool_
        if is_mask:  # a mask becomes one column of nonzero()'s (count, ndim) result per dim
            count = int(np.count_nonzero(k._np if isinstance(k, Tensor) else np.asarray(k)))
            for j in range(len(index_shape)):
                dims.append(d + j)
                indices.append(((count,), (len(index_shape),)))
            d += len(index_shape)
        else:
            dims.append(d)
            indices.append((tuple(index_shape), tuple(index_strides)))
            d += 1
    if not dims or _holds_python_bool(key):
        return None  # a new dim of size 1, no index kernel to follow
    replacement = broadcast_shapes(*(s for s, _ in indices))
    order = list(range(input.dim()))
    if dims != list(range(dims[0], dims[0] + len(dims))):
        order = dims + [i for i in order if i not in dims]
    first, count = order.index(dims[0]), len(dims)
    sizes, steps = [input._shape[i] for i in order], [input._stride[i] for i in order]
    out_shape = tuple(sizes[:first]) + tuple(replacement) + tuple(sizes[first + count:])
    if out_shape != tuple(shape) or 0 in out_shape:
        return None
    outside = len(sizes) - first - count
    operands = [tuple(steps[:first]) + (0,) * len(replacement) + tuple(steps[first + count:])]
    for index_shape, index_strides in indices:  # broadcast together, then viewed as (1,.., *replacement, 1,..)
        expanded = broadcast_strides(index_shape, index_strides, replacement)
        padded = (1,) * first + tuple(replacement) + (1,) * outside
        viewed = view_strides(tuple(replacement), expanded, padded)
        if viewed is None:
            return None
        operands.append(broadcast_strides(padded, viewed, out_shape))
    return elementwise_strides(out_shape, operands)


class IndexPutBackward0(Node):
    def backward(self, grad):
        key = self._key
        grad_self = grad.clone()
        if not self._accumulate:
            kernel("index_put_", grad._device)(grad_self._np, key, 0, False)
        return grad_self, grad[key]


def setitem(input, key, value):
    _check_0dim_key(input, key)
    key = _expand_key(input, _scalar_tensor_keys(key))
    if isinstance(value, Tensor):  # torch first views the value without its leading 1s
        shape = value._shape
        while shape and shape[0] == 1:
            shape = shape[1:]
        if shape != value._shape:
            value = view(value, shape)
    if builtins.all(_is_basic(k) for k in key):
        target = _basic_index(input, key)
        copy_(target, value)
        return
    if not _holds_python_bool(key):
        # as in getitem: ints, slices and None first (a view), then index_put_ on that view
        input, key = _basic_index(input, _basic_part(key)), _advanced_part(key)
    index_put_(input, _numpy_key(key), value)


def index_put_(input, key, values, accumulate=False):
    if not isinstance(key, tuple):
        key = (key,)
    key = _numpy_key(key)
    if input.numel() and builtins.any(n > 1 and s == 0 for n, s in zip(input._shape, input._stride)):
        # torch still writes (each shared cell once per index), but warns
        warnings.warn(
            "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
            "performing this operation. This also applies to advanced indexing e.g. "
            "tensor[indices] = tensor", UserWarning, stacklevel=2)

    def compute(old):
        out = clone(old) if not _needs_grad(old, values) else _clone_nograd(old)
        v = _array(values, old.dtype) if isinstance(values, Tensor) else values
        kernel("index_put_", old._device)(out._np, key, v, accumulate)
        if _needs_grad(old, values):
            node = IndexPutBackward0()
            node._key, node._accumulate = key, accumulate
            _record(node, (old, values), out)
        return out
    return _inplace(input, compute, (values,), fast=lambda: kernel("index_put_", input._device)(
        input._np, key, _array(values, input.dtype) if isinstance(values, Tensor) else values, accumulate))


def _clone_nograd(t):
    return _wrap(np.array(t._np, copy=True), t._device)


class MaskedFillBackward0(Node):  # value is a number
    def backward(self, grad):
        (mask,) = self.saved_values
        return (where(mask, zeros_like(grad), grad),)


class MaskedFillBackward1(Node):  # value is a 0-dim tensor
    def backward(self, grad):
        (mask,) = self.saved_values
        return where(mask, zeros_like(grad), grad), where(mask, grad, zeros_like(grad)).sum()


def _check_masked_fill_args(mask, value):
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.dim()} dimension(s)."
        )
    if mask.dtype is not dtypes.bool:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {_cpp_type_name(mask.dtype)}")


def masked_fill(input, mask, value):
    """``input`` with ``value`` wherever ``mask`` is True (the dtype stays input's)."""
    _check_masked_fill_args(mask, value)
    broadcast_shapes(mask._shape, input._shape)  # torch expands the mask first: it is "tensor a"
    fill = value._np.astype(input.dtype.numpy) if isinstance(value, Tensor) else value
    dev = _devices(input, mask)
    # torch fills a row-major clone, whatever the input's layout
    out = _wrap(np.asarray(
        kernel("where", dev)(mask._np, np.asarray(fill, dtype=input.dtype.numpy), input._np), order="C"), dev)
    if _needs_grad(input, value):
        node = MaskedFillBackward1() if isinstance(value, Tensor) else MaskedFillBackward0()
        node.save(mask)
        _record(node, (input, value) if isinstance(value, Tensor) else (input,), out)
    return out


def masked_fill_(input, mask, value):
    """In place: write ``value`` wherever ``mask`` (broadcast to ``input``'s shape) is True."""
    _check_masked_fill_args(mask, value)
    shape = broadcast_shapes(input._shape, mask._shape)
    if shape != input._shape:
        raise RuntimeError(
            f"output with shape {list(input._shape)} doesn't match the broadcast shape {list(shape)}"
        )
    if builtins.any(st == 0 and n > 1 for n, st in zip(input._shape, input._stride)):
        warnings.warn(
            "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor "
            "before performing this operation. This also applies to advanced indexing e.g. "
            "tensor[mask] = scalar", UserWarning, stacklevel=2)

    def fast():
        number = value._np.astype(input.dtype.numpy) if isinstance(value, Tensor) else value
        kernel("index_put_", _devices(input, mask))(
            input._np, np.broadcast_to(mask._np, input._shape), number, False)
    return _inplace(input, lambda old: masked_fill(old, mask, value),
                    (value,) if isinstance(value, Tensor) else (), fast)


def gather(input, dim, index):
    d = _wrap_dim(dim, input.dim())
    out = _wrap(kernel("take_along_dim", input._device)(input._np, index._np, d), input._device)
    if _needs_grad(input):
        node = GatherBackward0()
        node.save(index)
        node._saved_dim, node._saved_keepdim, node._saved_self_sym_sizes = d, True, input._shape
        _record(node, (input,), out)
    return out


GatherBackward0 = type("GatherBackward0", (MaxBackward0,), {})


# ===================================================================================
# In-place operations
# ===================================================================================
def _check_inplace(target):
    if target._inference and not _grad_state.inference:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            "make a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details."
        )
    if not _grad_state.grad_enabled:
        return
    if target._requires_grad and target.grad_fn is None and target._base is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = target._base
    if base is not None and base._requires_grad and base.grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )


_OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def _check_no_internal_overlap(target):
    """An element-wise in-place op must not write one memory cell twice (torch's check).

    An expanded dim (stride 0, size > 1) makes several elements share one cell; torch
    refuses to write through it, since the result would depend on the order of writes.
    ``fill_`` and ``zero_`` write one value everywhere, so they are allowed."""
    if target.numel() and builtins.any(n > 1 and s == 0 for n, s in zip(target._shape, target._stride)):
        raise RuntimeError(_OVERLAP_MESSAGE)


class CopyBackwards(Node):
    def backward(self, grad):
        return zeros_like(grad), grad


class CopySlices(Node):
    """After an in-place op ``fn`` on a view, the base's history (torch's node of this name).

    Its edges are the base's old history, then ``fn``'s other inputs. In backward, the
    region the view covers gets ``fn``'s gradient for its old values; the rest of the
    base's gradient passes through untouched.
    """

    def name(self):
        return "torch::autograd::CopySlices"

    def backward(self, grad):
        base_grad = _restride_like_base(grad, self)
        region = as_strided(base_grad, self._view_shape, self._view_stride, self._view_offset)
        fn = self.fn
        results = fn.backward(region.clone())
        if not isinstance(results, tuple):
            results = (results,)
        grad_view = results[0]
        if grad_view is None:
            region._np[...] = 0
        else:
            if grad_view._shape != self._view_shape:
                grad_view = _sum_to(grad_view, self._view_shape, self, 0)
            region._np[...] = grad_view._np
        return (base_grad,) + tuple(results[1:])

    def release(self):
        self.fn.release()
        super().release()


def _restride_like_base(grad, node):
    """A copy of ``grad`` laid out in a buffer shaped like the base's storage."""
    buffer = zeros(node._storage_size, dtype=grad.dtype, device=grad._device)
    base = as_strided(buffer, node._base_shape, node._base_stride, node._base_offset)
    base._np[...] = grad._np
    return base


def _inplace(target, compute, others=(), fast=None):
    """Run an in-place op.

    Without autograd: ``fast()`` writes straight into the target's memory.
    With autograd: ``compute(old)`` builds the new values out of place (recording its node),
    the values are written into the target's memory, and the target's history moves on to
    that node; for a view, its base gets a CopySlices node.
    """
    _check_inplace(target)
    if not _needs_grad(target, *others):
        fast()
        target._version_counter[0] += 1
        return target
    old = _snapshot(target)
    result = compute(old)
    np.copyto(target._np, result._np, casting="unsafe")
    target._version_counter[0] += 1
    node = result.grad_fn
    # saved outputs of the new node now live in the target (and are checked against it)
    if node._saved:
        node._saved = tuple(
            _resave(s, target) if s is not None and getattr(s, "is_output", False) else s
            for s in node._saved
        )
    base = target._base
    if base is None:
        target.grad_fn, target._output_nr, target._requires_grad = node, 0, True
        return target
    copy_slices = CopySlices()
    copy_slices._storage_size = len(base._storage)
    copy_slices._base_shape, copy_slices._base_stride, copy_slices._base_offset = base._shape, base._stride, base._offset
    copy_slices._view_shape, copy_slices._view_stride, copy_slices._view_offset = target._shape, target._stride, target._offset
    copy_slices.fn = node
    # the view's old history is reached through the base; fn's other inputs keep their edges
    copy_slices.next_functions = (gradient_edge(base),) + tuple(node.next_functions[1:])
    copy_slices._input_meta = ((base._shape, base.dtype, base._device),) + tuple(node._input_meta[1:])
    base.grad_fn, base._output_nr, base._requires_grad = copy_slices, 0, True
    as_strided_node = AsStridedBackward0()
    as_strided_node._storage_size = copy_slices._storage_size
    as_strided_node._base_shape, as_strided_node._base_stride, as_strided_node._base_offset = base._shape, base._stride, base._offset
    as_strided_node._stride, as_strided_node._offset = target._stride, target._offset
    _record(as_strided_node, (base,), target)
    return target


def _resave(saved, target):
    from .autograd.graph import SavedTensor
    return SavedTensor(target, is_output=True, node_name=saved.node_name)


def _snapshot(target):
    """The target's current value as a separate tensor with the same place in the graph."""
    old = _wrap(np.array(target._np, copy=True), target._device)
    old.grad_fn, old._output_nr = target.grad_fn, target._output_nr
    # (a leaf that requires grad never gets here: _check_inplace refuses it first)
    old._requires_grad = target._requires_grad
    return old


def _binary_inplace(op, functional):
    def apply(input, other, **kwargs):
        # torch's order: autograd's leaf check, then overlap, then broadcast and dtype
        _check_inplace(input)
        _check_no_internal_overlap(input)
        rounding_mode = kwargs.get("rounding_mode")
        if op == "div":
            _check_rounding_mode(rounding_mode)
        if op in ("floor_divide", "remainder"):
            _check_integer_divisor(input, other, "div_floor" if op == "floor_divide" else op)
        if op == "pow" and not input.dtype.is_floating_point and isinstance(other, builtins.int) and other < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        rt = dtypes.result_type(input, other)
        if op == "div" and rounding_mode is None and not rt.is_floating_point:
            rt = dtypes.get_default_dtype()  # true division of integers gives floats
        if rt._category > input.dtype._category:  # float into int, or anything into bool
            raise RuntimeError(
                f"result type {_scalar_name(rt)} can't be cast to the desired output type "
                f"{_scalar_name(input.dtype)}"
            )
        if isinstance(other, Tensor) and other._shape != input._shape:
            shape = broadcast_shapes(input._shape, other._shape)
            if shape != input._shape:
                raise RuntimeError(
                    f"output with shape {list(input._shape)} doesn't match the broadcast shape {list(shape)}"
                )
        alpha = kwargs.get("alpha", 1)

        def fast():
            dev = _devices(input, other)
            if rounding_mode is not None:
                rounded = _divide_rounded(input, other, rounding_mode)
                np.copyto(input._np, rounded._np, casting="unsafe")
                return
            dtype = input.dtype if op != "div" else rt
            operand = _array(other, dtype)
            if alpha != 1:  # scaled after the cast, as torch does; a bare array, no tensor needed
                _check_alpha(alpha, rt)
                operand = operand * alpha if not isinstance(other, Tensor) else kernel("mul", dev)(operand, alpha)
            kernel(op, dev)(input._np, operand, out=input._np)

        return _inplace(input, lambda old: functional(old, other, **kwargs).to(input.dtype), (other,), fast)
    apply.__name__ = op + "_"
    return apply


add_ = _binary_inplace("add", add)
sub_ = _binary_inplace("sub", sub)
mul_ = _binary_inplace("mul", mul)
div_ = _binary_inplace("div", div)
pow_ = _binary_inplace("pow", pow)
floor_divide_ = _binary_inplace("floor_divide", floor_divide)
remainder_ = _binary_inplace("remainder", remainder)


def _unary_inplace(op, functional):
    def apply(input):
        _check_inplace(input)
        _check_no_internal_overlap(input)
        if op in ("exp", "log", "sqrt", "sigmoid", "tanh") and not input.dtype.is_floating_point:
            raise RuntimeError(
                f"result type {_scalar_name(dtypes.get_default_dtype())} can't be cast to the desired "
                f"output type {_scalar_name(input.dtype)}")
        if input.dtype is dtypes.bool and op in ("neg", "abs"):
            functional(input)  # raises torch's error for a bool tensor

        def fast():
            kernel(op, input._device)(input._np, out=input._np)
        return _inplace(input, functional, (), fast)
    apply.__name__ = op + "_"
    return apply


exp_ = _unary_inplace("exp", exp)
log_ = _unary_inplace("log", log)
sqrt_ = _unary_inplace("sqrt", sqrt)
neg_ = _unary_inplace("neg", neg)
relu_ = _unary_inplace("relu", relu)
sigmoid_ = _unary_inplace("sigmoid", sigmoid)
tanh_ = _unary_inplace("tanh", tanh)
abs_ = _unary_inplace("abs", abs)


def clamp_(input, min=None, max=None):
    _check_inplace(input)
    _check_no_internal_overlap(input)
    return _inplace(input, lambda old: clamp(old, min, max), (),
                    lambda: kernel("clamp", input._device)(input._np, min, max, out=input._np))


clip_ = clamp_


class FillBackward2(Node):  # filled with a number: nothing flows back to the old values
    def backward(self, grad):
        return (zeros_like(grad),)


class ZeroBackward0(FillBackward2):
    pass


class FillBackward3(Node):  # filled with a 0-dim tensor: every element came from it
    def backward(self, grad):
        return zeros_like(grad), grad.sum()


def zero_(input):
    return _fill(input, 0, ZeroBackward0)


def fill_(input, value):
    return _fill(input, value, FillBackward3 if isinstance(value, Tensor) else FillBackward2)


def _fill(input, value, node_cls):
    is_tensor = isinstance(value, Tensor)
    number = value.item() if is_tensor else value

    def compute(old):
        out = _wrap(kernel("full", old._device)(old._shape, number, old.dtype.numpy), old._device)
        if _needs_grad(old, value):
            _record(node_cls(), (old, value) if is_tensor else (old,), out)
        return out

    def fast():
        kernel("fill_", input._device)(input._np, number)
    return _inplace(input, compute, (value,) if is_tensor else (), fast)


def copy_(input, src, non_blocking=False):
    """Write ``src`` (broadcast, converted, possibly from another device) into ``input``."""
    _check_inplace(input)
    _check_no_internal_overlap(input)  # (a number comes from t[...] = 3, which torch copies too)
    if isinstance(src, Tensor):
        shape = broadcast_shapes(input._shape, src._shape)
        if shape != input._shape:
            raise RuntimeError(
                f"output with shape {list(input._shape)} doesn't match the broadcast shape {list(shape)}"
            )

    def source_array():
        if not isinstance(src, Tensor):
            return src
        return src._np if src._device == input._device else np.array(src._np, copy=True)

    def compute(old):
        if isinstance(src, Tensor):
            # torch converts the source first (a ToCopyBackward0 in the graph), then copies
            source = src if src.dtype is old.dtype and src._device == old._device else \
                to(src, dtype=old.dtype, device=old._device)
            out = _wrap(np.broadcast_to(source._np, old._shape).copy(), old._device)
        else:
            source = src
            out = _wrap(kernel("full", old._device)(old._shape, src, old.dtype.numpy), old._device)
        if _needs_grad(old, src):
            _record(CopyBackwards(), (old, source), out)
        return out

    def fast():
        kernel("copy_", input._device)(input._np, source_array())
    return _inplace(input, compute, (src,) if isinstance(src, Tensor) else (), fast)


def requires_grad_(input, requires_grad=True):
    return Tensor.requires_grad_(input, requires_grad)


# ===================================================================================
# Softmax and losses (used by nn.functional)
# ===================================================================================
class LogSoftmaxBackward0(Node):
    def backward(self, grad):
        (result,) = self.saved_values
        if not _grad_state.grad_enabled:
            return (_in_one_kernel("log_softmax_backward", (grad, result), self._saved_dim),)
        return (grad - exp(result) * grad.sum(self._saved_dim, keepdim=True),)


class SoftmaxBackward0(Node):
    def backward(self, grad):
        (result,) = self.saved_values
        return (result * (grad - (grad * result).sum(self._saved_dim, keepdim=True)),)


def _softmax_input(input, dim, dtype, name):
    """``dtype`` converts first (torch's way to softmax integers); the kernels want floats."""
    if dtype is not None:
        input = to(input, dtype)
    d = _wrap_dim(dim, input.dim())
    if not input.dtype.is_floating_point:
        where = "lastdim_kernel_impl" if d == input.dim() - 1 or input.dim() == 0 else "kernel_impl"
        raise NotImplementedError(f"\"{name}_{where}\" not implemented for '{_scalar_name(input.dtype)}'")
    return input, d


def log_softmax(input, dim, dtype=None):
    input, d = _softmax_input(input, dim, dtype, "log_softmax")
    out = _wrap(kernel("log_softmax", input._device)(input._np, d), input._device)
    if _needs_grad(input):
        node = LogSoftmaxBackward0()
        node._saved_dim = d
        node.save(output=out)
        _record(node, (input,), out)
    return out


def softmax(input, dim, dtype=None):
    input, d = _softmax_input(input, dim, dtype, "softmax")
    out = _wrap(kernel("softmax", input._device)(input._np, d), input._device)
    if _needs_grad(input):
        node = SoftmaxBackward0()
        node._saved_dim = d
        node.save(output=out)
        _record(node, (input,), out)
    return out


# ===================================================================================
# Creation (here because functions above use it; reftorch/__init__ exports them)
# ===================================================================================
def _shape_arg(size, name=None):
    if not size and name is not None:  # torch.zeros() needs a size; torch.zeros(()) is 0-dim
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    return tuple(builtins.int(s) for s in size)


def _finish(out, requires_grad):
    if requires_grad:
        if not out.dtype.is_floating_point:  # factories word this differently from requires_grad_()
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        out.requires_grad_(True)
    return out


def _device_arg(device):
    d = cpu if device is None else canonical(device)
    if d.type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    return d


def _check_sizes(size):
    for n in size:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(size)}")


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if isinstance(size, builtins.int):
        size = (size,)
    _check_sizes(size)
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    d = _device_arg(device)
    return _finish(_wrap(kernel("full", d)(tuple(size), fill_value, dtype.numpy), d), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    if builtins.any(n < 0 for n in _shape_arg(size, "zeros")):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return full(_shape_arg(size, "zeros"), 0, dtype=dtype or dtypes.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return full(_shape_arg(size, "ones"), 1, dtype=dtype or dtypes.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    d = _device_arg(device)
    dtype = dtype or dtypes.get_default_dtype()
    _check_sizes(_shape_arg(size, "empty"))
    return _finish(_wrap(kernel("empty", d)(_shape_arg(size, "empty"), dtype.numpy), d), requires_grad)


def _like(maker):
    def like(input, *args, dtype=None, device=None, requires_grad=False, memory_format=None, **kwargs):
        out = maker(input._shape, *args, dtype=dtype or input.dtype,
                    device=device or input._device, requires_grad=False, **kwargs)
        # same layout as ``input`` (torch's preserve_format), unless asked for row-major
        if memory_format != "contiguous" and input._stride != out._stride:
            strides = preserve_format_strides(input._shape, input._stride)
            if strides != out._stride:
                out = _with_strides(out._np, strides, out._device)
        return _finish(out, requires_grad)
    like.__name__ = maker.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
full_like = _like(full)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        is_float = builtins.any(isinstance(v, builtins.float) for v in (start, end, step))
        dtype = dtypes.get_default_dtype() if is_float else dtypes.int64
    d = _device_arg(device)
    return _finish(_wrap(kernel("arange", d)(start, end, step, dtype.numpy), d), requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    dtype = dtype or dtypes.get_default_dtype()
    d = _device_arg(device)
    values = np.linspace(start, end, steps).astype(dtype.numpy)
    return _finish(_wrap(kernel("copy", d)(values) if d.type != "cpu" else values, d), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    dtype = dtype or dtypes.get_default_dtype()
    d = _device_arg(device)
    values = np.eye(n, m, dtype=dtype.numpy)
    return _finish(_wrap(kernel("copy", d)(values) if d.type != "cpu" else values, d), requires_grad)


def _check_rectangular(data):
    """Nested lists must be rectangular (the first element sets the shape); torch's errors."""
    shape, first = [], data
    while isinstance(first, (list, tuple)):
        shape.append(len(first))
        if not first:
            break
        first = first[0]
    _check_against(data, shape, 0)


def _check_against(data, shape, dim):
    if dim == len(shape):
        if isinstance(data, (list, tuple)):
            raise TypeError(f"'{type(data).__name__}' object cannot be interpreted as an integer")
        return
    if not isinstance(data, (list, tuple)):
        raise TypeError("not a sequence")
    if len(data) != shape[dim]:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(data)})")
    for item in data:
        _check_against(item, shape, dim + 1)


def _infer_dtype(data):
    """The dtype torch.tensor picks for nested Python data."""
    _check_rectangular(data)
    flat, pending = [], [data]
    while pending:  # every number in the nested lists (NumPy's asarray would unpack tensors)
        item = pending.pop()
        if isinstance(item, (list, tuple)):
            pending.extend(item)
        elif isinstance(item, np.ndarray):
            flat.extend(item.reshape(-1))
        else:
            flat.append(item)
    if not flat:  # no numbers at all: torch.tensor([]) is a float tensor
        return dtypes.get_default_dtype()
    # each element has a dtype (a tensor or NumPy number its own, a Python float the default
    # dtype, an int int64, a bool bool), and the result is the promotion of them all
    result = None
    for v in flat:
        if isinstance(v, Tensor):
            kind = v.dtype
        elif isinstance(v, np.generic):
            kind = dtypes.from_numpy_dtype(v.dtype)
        elif isinstance(v, builtins.bool):
            kind = dtypes.bool
        elif isinstance(v, builtins.int):
            kind = dtypes.int64
        else:
            kind = dtypes.get_default_dtype()
        result = kind if result is None else dtypes.promote_types(result, kind)
    return result


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """Always copies ``data`` (a list, number, NumPy array, or tensor)."""
    d = _device_arg(device)
    if isinstance(data, Tensor):
        import warnings
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
            "or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
        out = _wrap(dtypes.cast(data._np, dtype or data.dtype), data._device)
        return _finish(out if d == out._device else to(out, d), requires_grad)
    if isinstance(data, np.generic):  # a NumPy scalar keeps its dtype, as a 0-dim array
        data = np.asarray(data)
    if isinstance(data, np.ndarray):
        source_dtype = dtypes.from_numpy_dtype(data.dtype)
        if d.type == "cpu":
            return _finish(_copy_keeping_layout(from_numpy(data), dtype or source_dtype), requires_grad)
        values = np.ascontiguousarray(dtypes.cast(data, dtype or source_dtype))
    else:
        values = dtypes.cast(_unwrap_scalars(data), dtype or _infer_dtype(data))
    out = _wrap(kernel("copy", d)(values) if d.type != "cpu" else values, d)
    return _finish(out, requires_grad)


def _non_overlapping_and_dense(shape, strides) -> bool:
    """storage's test, except that an empty tensor counts as dense: torch keeps its strides."""
    return 0 in shape or is_non_overlapping_and_dense(shape, strides)


def _copy_keeping_layout(source, dtype):
    """A copy in ``dtype`` with the same strides when ``source`` is dense (torch's
    preserve_format, what ``torch.tensor(ndarray)`` does), else a row-major copy."""
    if not _non_overlapping_and_dense(source._shape, source._stride):
        return _wrap(np.array(source._np, dtype=dtype.numpy, order="C", copy=True))
    return _with_strides(source._np.astype(dtype.numpy, copy=False), source._stride)


def _unwrap_scalars(data):
    if isinstance(data, Tensor):
        if data.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data.item()
    if isinstance(data, (list, tuple)):
        return [_unwrap_scalars(v) for v in data]
    return data


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        return to(data, dtype=dtype, device=device)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.numpy == data.dtype) and device in (None, "cpu", cpu):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """Shares memory with ``array``: a write on either side shows on the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtype = dtypes.from_numpy_dtype(array.dtype)
    if builtins.any(s < 0 for s in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making a "
            "copy of your array  with array.copy().) "
        )
    itemsize = array.itemsize
    span = 1 + builtins.sum((n - 1) * s // itemsize for n, s in zip(array.shape, array.strides)) if array.size else 0
    flat = np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(itemsize,))
    from .storage import Storage
    t = Tensor.__new__(Tensor)
    t._storage = Storage(flat, cpu)
    t._np = array if array.flags.writeable else array
    t._shape = array.shape
    t._stride = tuple(s // itemsize for s in array.strides)
    t._offset = 0
    t.dtype = dtype
    t._device = cpu
    t._init_autograd_state()
    return t


# ===================================================================================
# NumPy's argument names
# ===================================================================================
def _numpy_names(fn):
    """torch also accepts NumPy's ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``."""
    def accept(*args, **kwargs):
        if "axis" in kwargs:
            kwargs["dim"] = kwargs.pop("axis")
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)
    accept.__name__, accept.__qualname__, accept.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    accept.__wrapped__ = fn
    return accept


sum, mean, prod, amax, amin, argmax, argmin, max, min, all, any, std, var, cat, stack, squeeze, \
    unsqueeze, count_nonzero, topk, sort, softmax, log_softmax = (
        _numpy_names(f) for f in (sum, mean, prod, amax, amin, argmax, argmin, max, min, all, any,
                                  std, var, cat, stack, squeeze, unsqueeze, count_nonzero, topk, sort,
                                  softmax, log_softmax))
concat = concatenate = cat


# ===================================================================================
# Methods and operators on Tensor
# ===================================================================================
def _reverse(fn):
    return lambda self, other: fn(other, self)


def _rdiv(self, other):
    return mul(reciprocal(self), other)


# ``2 * x`` calls x.__rmul__(2): torch records mul(x, 2), the tensor first (and so for +)
_METHODS = dict(
    add=add, sub=sub, mul=mul, div=div, true_divide=div, pow=pow, maximum=maximum,
    minimum=minimum, eq=eq, ne=ne, lt=lt, le=le, gt=gt, ge=ge, floor_divide=floor_divide,
    remainder=remainder, logical_and=logical_and, logical_or=logical_or, logical_not=logical_not,
    neg=neg, negative=neg, exp=exp, log=log, sqrt=sqrt, abs=abs, sin=sin, cos=cos, tanh=tanh,
    sigmoid=sigmoid, relu=relu, reciprocal=reciprocal, sign=sign, square=square, floor=floor,
    ceil=ceil, isnan=isnan, clamp=clamp, clip=clamp, where=lambda self, cond, other: where(cond, self, other),
    view=view, view_as=view_as, reshape=reshape, reshape_as=reshape_as, flatten=flatten,
    ravel=ravel, unflatten=unflatten, t=t, transpose=transpose, swapaxes=transpose,
    swapdims=transpose, permute=permute, unsqueeze=unsqueeze, squeeze=squeeze, expand=expand,
    expand_as=expand_as, broadcast_to=broadcast_to, select=select, narrow=narrow, split=split,
    chunk=chunk, unbind=unbind, as_strided=as_strided, clone=clone, contiguous=contiguous,
    detach=detach, detach_=detach_, to=to, sum=sum, mean=mean, prod=prod, max=max, min=min,
    amax=amax, amin=amin, argmax=argmax, argmin=argmin, topk=topk, sort=sort, all=all, any=any,
    allclose=allclose, isclose=isclose, equal=equal, nonzero=nonzero, count_nonzero=count_nonzero,
    var=var, std=std, norm=norm, mm=mm, mv=mv, dot=dot, bmm=bmm, matmul=matmul, outer=outer,
    addmm=addmm, repeat=repeat, tile=tile, index_put_=index_put_, masked_fill=masked_fill,
    gather=gather, add_=add_, sub_=sub_, mul_=mul_, div_=div_, pow_=pow_, exp_=exp_, log_=log_,
    sqrt_=sqrt_, neg_=neg_, relu_=relu_, sigmoid_=sigmoid_, tanh_=tanh_, abs_=abs_,
    clamp_=clamp_, clip_=clamp_, zero_=zero_, fill_=fill_, copy_=copy_,
    log_softmax=log_softmax, softmax=softmax,
    masked_fill_=masked_fill_, unfold=unfold, movedim=movedim, moveaxis=movedim, flip=_flip_method,
    float=_converter(dtypes.float32), double=_converter(dtypes.float64),
    long=_converter(dtypes.int64), int=_converter(dtypes.int32), bool=_converter(dtypes.bool),
    half=_converter(dtypes.float16), bfloat16=_converter(dtypes.bfloat16),
    __add__=add, __radd__=lambda self, other: add(self, other), __sub__=sub, __rsub__=rsub, __mul__=mul,
    __rmul__=lambda self, other: mul(self, other), __truediv__=div, __rtruediv__=_rdiv, __floordiv__=floor_divide,
    __rfloordiv__=_reverse(floor_divide), __mod__=remainder, __pow__=pow, __rpow__=_reverse(pow),
    __matmul__=matmul, __rmatmul__=_reverse(matmul), __neg__=neg, __abs__=abs,
    __eq__=eq, __ne__=ne, __lt__=lt, __le__=le, __gt__=gt, __ge__=ge,
    __and__=bitwise_and, __or__=bitwise_or, __xor__=bitwise_xor, __invert__=bitwise_not,
    __iadd__=add_, __isub__=sub_, __imul__=mul_, __itruediv__=div_,
    __getitem__=getitem, __setitem__=setitem,
)

for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)
Tensor.T = property(_T)
Tensor.mT = property(_matrix_transpose("mT", "This function is the identity in these cases."))
Tensor.mH = property(_matrix_transpose("mH", "Consider using x.conj()."))
Tensor.H = property(_H)


def _invert(input):  # ~x: Python's operator has its own check (and TypeError) in torch
    if input.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(input)


Tensor.__invert__ = _invert


def _comparison_operator(compare):
    """``t == None`` is False and ``t < [1, 2]`` a TypeError, as for torch: for an operand it
    cannot compare with, the operator hands over to Python (NotImplemented)."""
    def operator(self, other):
        if not isinstance(other, (Tensor, builtins.int, builtins.float, np.generic)):
            return NotImplemented
        return compare(self, other)
    operator.__name__ = compare.__name__
    return operator


Tensor.__eq__, Tensor.__ne__, Tensor.__lt__, Tensor.__le__, Tensor.__gt__, Tensor.__ge__ = (
    _comparison_operator(f) for f in (eq, ne, lt, le, gt, ge))
# x //= y and x %= y write into x, as torch's do (without these Python would rebind x)
Tensor.floor_divide_, Tensor.__ifloordiv__ = floor_divide_, floor_divide_
Tensor.remainder_, Tensor.__imod__ = remainder_, remainder_
Tensor.__ipow__ = pow_
