"""What every operation shares: recording its node in the graph, reading its operands, and
laying out its result the way torch lays it out.

An operation does three things:
1. checks its arguments the way torch does (devices, dtypes, shapes),
2. asks the dispatcher for the kernel of its device and runs it on NumPy arrays,
3. if grad mode is on and an input requires grad, records a Node (``MulBackward0`` ...)
   whose ``backward`` turns the output's gradient into the inputs' gradients.
"""
from __future__ import annotations

import builtins
import functools
import warnings

import numpy as np

from .. import dtypes
from ..autograd import forward_ad
from ..autograd.grad_mode import state as _grad_state
from ..autograd.graph import Node, gradient_edge
from ..dispatch import check_same_device, cpu, kernel
from ..storage import broadcast_shapes, broadcast_strides, elementwise_strides, is_non_overlapping_and_dense
from ..tensor import Tensor
from ..tensor import _scalar_type_name as _scalar_name


_wrap = Tensor._wrap
_view_of = Tensor._view_of


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


def _scalar_rounded_to(x, dtype):
    """A number or 0-dim tensor operand as a 0-dim array of ``dtype``; other tensors as they are."""
    if isinstance(x, Tensor):
        return x if x.dim() or x.dtype is dtype else dtypes.cast(x._np, dtype)
    return dtypes.cast(x, dtype)


def _number(x):
    """A NumPy scalar operand counts as the Python number it holds, as in torch (so
    ``float32_tensor + np.float64(1)`` stays float32); torch reads a NumPy bool as a float."""
    return dtypes.python_number(x) if isinstance(x, np.generic) else x


def _binary(op: str, a, b, result_dtype=None, compute_dtype=None):
    a, b = _number(a), _number(b)
    dev = _devices(a, b)
    ct = compute_dtype or dtypes.result_type(a, b)
    if ct in dtypes.BAREBONES_UNSIGNED and op in ("add", "sub"):
        raise NotImplementedError(f"\"add_stub\" not implemented for '{_scalar_name(ct)}'")
    # torch computes float16/bfloat16 arithmetic in float32 and rounds once; its add, sub and
    # comparison kernels round a number (or 0-dim tensor) operand to 16 bits first, mul and div do not
    kt = dtypes.float32 if ct in dtypes.REDUCED_FLOATS and result_dtype is None else ct
    if ct in dtypes.REDUCED_FLOATS and (op in ("add", "sub") or result_dtype is not None):
        a, b = _scalar_rounded_to(a, ct), _scalar_rounded_to(b, ct)
    try:
        out = kernel(op, dev)(_array(a, kt), _array(b, kt))
    except ValueError:
        _broadcast_error(a, b)
    if out.dtype != ct.numpy:
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


_UNSAVED = object()  # a value the formula does not need because that side needs no grad


def _save_for_other(x, needed):
    return x if needed else _UNSAVED


def _requires(x) -> bool:
    return isinstance(x, Tensor) and x._requires_grad


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


def _in_one_kernel(op, tensors, *args):
    """A backward formula computed by one kernel instead of op by op.

    Only when no graph is being recorded for the backward itself (no ``create_graph``): the
    kernel gives the same numbers as the formula's ops, minus a tensor per step; with
    ``create_graph`` the formula must be built from ops, so that it can be differentiated.
    ``tensors`` come in the order that decides the result's layout, as in the formula."""
    dev = tensors[0]._device
    return _elementwise_result(kernel(op, dev)(*[t._np for t in tensors], *args), dev, *tensors)


_warned_once = set()  # torch gives some warnings once per process (TORCH_WARN_ONCE)


def _warn_once(key, message):
    if key not in _warned_once:
        _warned_once.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


class _RawFormula(Node):
    """A backward computed on raw arrays: fine for gradients, not differentiable again.

    A formula linear in the gradient alone (indexing, max's indices) is right under
    ``create_graph`` as long as the incoming gradient needs no graph; one that also reads
    the inputs (``_reads_inputs``: convolution, ...) would lose their part: it refuses."""

    _reads_inputs = False

    def _check_not_double(self, grad):
        if grad._requires_grad or (self._reads_inputs and _grad_state.grad_enabled):
            raise RuntimeError(f"reftorch: double backward through {self.name()} is not implemented")


def _non_overlapping_and_dense(shape, strides) -> bool:
    """storage's test, except that an empty tensor counts as dense: torch keeps its strides."""
    return 0 in shape or is_non_overlapping_and_dense(shape, strides)


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


# -- forward mode: every public op passes its inputs' tangents on (autograd/forward_ad.py) ----
_NO_RULE = (
    "Trying to use forward AD with {} that does not support it because it has not been "
    "implemented yet.\nPlease file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
    "prioritize its implementation.")


def _tangent_of(x):
    """What a tangent rule reads for an input: its tangent, zeros for a tensor without one, 0
    for a number (a constant)."""
    if isinstance(x, Tensor):
        if x._fw_grad is not None:
            return x._fw_grad
        from .creation import zeros_like
        return zeros_like(x.detach())
    if isinstance(x, (list, tuple)):
        return type(x)(_tangent_of(v) for v in x)
    return 0


def _has_tangent(values) -> bool:
    for v in values:
        if isinstance(v, Tensor):
            if v._fw_grad is not None:
                return True
        elif isinstance(v, (list, tuple)) and _has_tangent(v):
            return True
    return False


def forward_mode(op, inplace=False):
    """``op`` passing tangents on: outside a dual level one flag is checked and ``op`` runs as is.

    Inside one, ``op.jvp(t, out, *args, **kwargs)`` gives the output's tangent, where ``t(x)``
    is the tangent of input ``x``; an in-place op's rule runs before the op (it reads the old
    values, ``out`` is None) and its result is written into the target's tangent."""
    rule = getattr(op, "jvp", None)
    name = getattr(op, "__name__", "op")

    @functools.wraps(op)
    def run(*args, **kwargs):
        if forward_ad.state.level is None or forward_ad.state.computing:
            return op(*args, **kwargs)
        if not (_has_tangent(args) or _has_tangent(kwargs.values())):
            return op(*args, **kwargs)
        if inplace:
            if rule is None:
                raise NotImplementedError(_NO_RULE.format(f"aten::{name}"))
            tangent = _run_rule(rule, None, args, kwargs)
            result = op(*args, **kwargs)
            target = args[0]  # (t[key] = v returns nothing)
            tangent = _fitted(tangent, target)
            if target._fw_grad is not None:  # a view's tangent is a view of its base's: write into it
                np.copyto(target._fw_grad._np, tangent._np, casting="unsafe")
            else:
                forward_ad._attach(target, tangent)
            return result
        out = op(*args, **kwargs)
        if not _floating(out):  # indices, masks, counts: nothing to differentiate
            return out
        if rule is None:
            raise NotImplementedError(_NO_RULE.format(f"aten::{name}"))
        tangent = _run_rule(rule, out, args, kwargs)
        if isinstance(out, Tensor):
            return _attach_tangent(out, tangent)
        for value, value_tangent in zip(out, tangent):
            _attach_tangent(value, value_tangent)
        return out
    run.__wrapped_for_forward_mode__ = True
    return run


def _floating(out) -> bool:
    if isinstance(out, Tensor):
        return out.dtype.is_floating_point
    return isinstance(out, tuple) and builtins.any(_floating(v) for v in out)


def no_tangent(t, out, *args, **kwargs):
    """The rule of an op whose result does not move with its inputs (zeros_like, detach, ...)."""
    return None


def same_op_on_tangent(op):
    """The rule of a linear op (views, copies, sums, joins): the tangent goes through the same op."""
    def rule(t, out, input, *args, **kwargs):
        return op(t(input), *args, **kwargs)
    return rule


def _run_rule(rule, out, args, kwargs):
    forward_ad.state.computing = True
    try:
        return rule(_tangent_of, out, *args, **kwargs)
    finally:
        forward_ad.state.computing = False


def _fitted(tangent, out):
    """A rule's result with the output's shape and dtype (a rule may broadcast less)."""
    forward_ad.state.computing = True
    try:
        if not isinstance(tangent, Tensor):  # a rule that found only constants
            from .creation import full
            return full(out._shape, tangent, dtype=out.dtype, device=out._device)
        if tangent._shape != out._shape:
            tangent = tangent.expand(out._shape)
        if tangent.dtype is not out.dtype:
            tangent = tangent.to(out.dtype)
        return tangent
    finally:
        forward_ad.state.computing = False


def _attach_tangent(out, tangent):
    if tangent is None or not isinstance(out, Tensor) or not out.dtype.is_floating_point:
        return out
    return forward_ad._attach(out, _fitted(tangent, out))


# -- out=: the result written into a tensor the caller gives ----------------------------------
# how the out tensor's dtype may differ from the result's: any dtype (the result is cast),
# the same dtype only, or one the result's kind casts to (float into int refused)
_OUT_ANY_DTYPE = {"sum", "zeros", "ones", "full", "empty", "eye", "arange", "linspace", "eq", "ne", "lt",
                  "le", "gt", "ge", "cumsum"}
_FACTORIES = {"zeros", "ones", "full", "empty", "eye", "arange", "linspace"}
_OUT_SAME_DTYPE = {"matmul", "mm", "mv", "bmm", "dot", "addmm", "amax", "amin", "max", "min", "clamp", "clip",
                   "where", "gather", "index_select", "masked_select", "tril", "triu", "sort", "topk", "einsum"}


def with_out(op):
    """``op(..., out=t)``: compute as usual, then write the result into ``t`` (resized when its
    shape differs) and return ``t``. No graph can be recorded through such a write: torch
    refuses when anything requires grad."""
    name = op.__name__

    @functools.wraps(op)
    def run(*args, out=None, **kwargs):
        if out is None:
            return op(*args, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        if _grad_state.grad_enabled and (_has_grad(args) or _has_grad(kwargs.values()) or _has_grad(outs)):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        if name in _FACTORIES and kwargs.get("dtype") is None:  # a factory makes out's dtype
            kwargs["dtype"] = out.dtype
        result = op(*args, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        for target, value in zip(outs, results):
            _write_out(name, target, value)
        return type(result)(*outs) if isinstance(result, tuple) else out
    return run


def _has_grad(values) -> bool:
    for v in values:
        if isinstance(v, Tensor) and v._requires_grad:
            return True
        if isinstance(v, (list, tuple)) and _has_grad(v):
            return True
    return False


def _write_out(name, target, value):
    if name not in _OUT_ANY_DTYPE and name not in _OUT_SAME_DTYPE and value.dtype._category > target.dtype._category:
        if name in ("cat", "concat", "concatenate", "stack"):
            raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                            f"{_scalar_name(target.dtype)}")
        raise RuntimeError(f"result type {_scalar_name(value.dtype)} can't be cast to the desired output "
                           f"type {_scalar_name(target.dtype)}")
    if target._shape != value._shape:
        if name in _FACTORIES and (name != "arange" or not target.numel()):
            pass  # a factory resizes its out tensor without a word
        elif name == "arange":
            warnings.warn(
                f"The number of elements in the out tensor of shape {list(target._shape)} is {target.numel()} "
                f"which does not match the computed number of elements {value.numel()}. Note that this may "
                f"occur as a result of rounding error. The out tensor will be resized to a tensor of shape "
                f"({value.numel()},).", UserWarning, stacklevel=4)
        elif target.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape {list(target._shape)}, "
                f"which does not match the required output shape {list(value._shape)}. This behavior is "
                "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                "elements with t.resize_(0).", UserWarning, stacklevel=4)
        target.resize_(value._shape)
    if name in _OUT_SAME_DTYPE and value.dtype is not target.dtype:  # (after the resize, as torch)
        from ..tensor import _cpp_type_name
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp_type_name(value.dtype)}, but got "
                           f"{_cpp_type_name(target.dtype)} instead")
    np.copyto(target._np, value._np, casting="unsafe")
    target._version_counter[0] += 1
