"""What every operation shares: reading its operands, laying out its result the way torch
lays it out, and recording its node in the graph.

An operation's implementation (the ``impl`` its native_functions.py entry names):
1. checks its arguments the way torch does (devices, dtypes, shapes),
2. asks the dispatcher for the kernel of its device and runs it on NumPy arrays.
Then, if grad mode is on and an input requires grad, codegen.py records a Node
(``MulBackward0`` ...) with ``_record``; derivatives.py says what its ``backward`` computes.
"""
from __future__ import annotations

import builtins
import collections
import functools
import warnings
import weakref

import numpy as np

from .. import _modes, dtypes
from ..autograd.graph import Node, gradient_edge
from ..dispatch import check_same_device, cpu, kernel
from ..storage import broadcast_shapes, broadcast_strides, elementwise_strides, is_non_overlapping_and_dense
from ..tensor import Tensor
from ..tensor import _cpp_type_name
from ..tensor import _scalar_type_name as _scalar_name


_wrap = Tensor._wrap
_view_of = Tensor._view_of
_grad_state = _modes.grad_mode


def _needs_grad(*values) -> bool:
    if not _grad_state.grad_enabled:
        return False
    for v in values:
        if isinstance(v, Tensor) and v._requires_grad:
            return True
    return False


def _record(node: Node, inputs, *outputs):
    """Hang ``node`` between ``inputs`` (tensors or numbers) and ``outputs``."""
    edges, meta = [], []
    for t in inputs:
        if isinstance(t, Tensor):
            edges.append(gradient_edge(t))
            meta.append((t._shape, t.dtype, t._device))
        else:
            edges.append((None, 0))
            meta.append(None)
    node.next_functions, node._input_meta = tuple(edges), tuple(meta)
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
    for x in (a, b):
        if type(x) is builtins.int:
            dtypes.wrapped_int(x, dtypes.int64)  # (torch reads it as a 64-bit integer: larger raises)
    if dtypes.is_integral(ct):  # a Python int wraps to the integer dtype (u8 + 300 is u8 + 44)
        a, b = (dtypes.wrapped_int(x, ct) if type(x) is builtins.int else x for x in (a, b))
    kt = dtypes.float32 if ct in dtypes.REDUCED_FLOATS and result_dtype is None else ct
    if ct in dtypes.REDUCED_FLOATS and (op in ("add", "sub") or result_dtype is not None):
        a, b = _scalar_rounded_to(a, ct), _scalar_rounded_to(b, ct)
    try:
        out = kernel(op, dev)(_array(a, kt), _array(b, kt))
    except ValueError:
        _broadcast_error(a, b)
    if out.dtype != ct.numpy or (result_dtype is not None and out.dtype != result_dtype.numpy):
        with np.errstate(over="ignore"):  # rounding to 16 bits may overflow to inf, silently as in torch
            out = out.astype(ct.numpy, copy=False)
            if result_dtype is not None:
                out = out.astype(result_dtype.numpy, copy=False)
    return _elementwise_result(out, dev, a, b)


def _elementwise_result(array, dev, *operands):
    """Wrap an element-wise result laid out the way torch lays it out.

    NumPy keeps the memory order of its inputs much as torch does, and for contiguous
    inputs both are row-major; only when an input is non-contiguous do we work out
    torch's layout (storage.elementwise_strides) and move the values there if NumPy's differs.
    """
    if array.ndim < 2:
        return _wrap(array, dev)
    tensors = [t for t in operands if isinstance(t, Tensor)]
    for t in tensors:
        if not t.is_contiguous():
            break
    else:
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


def _warn_once(key, message, stacklevel=3):
    if key not in _warned_once:
        _warned_once.add(key)
        warnings.warn(message, UserWarning, stacklevel=stacklevel)


def check_not_double(grad, name, reads_inputs=False):
    """For a backward computed on raw arrays: fine for gradients, not differentiable again.

    A formula linear in the gradient alone (indexing, max's indices) is right under
    ``create_graph`` as long as the incoming gradient needs no graph; one that also reads
    the inputs (convolution, the norms) would lose their part: it refuses."""
    if grad is not None and (grad._requires_grad or (reads_inputs and _grad_state.grad_enabled)):
        raise RuntimeError(f"reftorch: double backward through {name} is not implemented")


def no_derivative(op):
    """The formula of an op torch has no autograd kernel for (its node is
    ``torch::autograd::NotImplemented``): backward through it raises."""
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{op} is not implemented")
    return formula


def not_implemented(name):
    """derivatives.yaml's ``not_implemented("inplace version of asinh")``: a node that raises
    when backward reaches it."""
    def formula(grad):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return formula


def _non_overlapping_and_dense(shape, strides) -> bool:
    """storage's test, except that an empty tensor counts as dense: torch keeps its strides."""
    return 0 in shape or is_non_overlapping_and_dense(shape, strides)


# -- forward mode: the tangents codegen.py passes on (autograd/forward_ad.py) -------------------
_NO_RULE = (
    "Trying to use forward AD with {} that does not support it because it has not been "
    "implemented yet.\nPlease file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
    "prioritize its implementation.")


def _tangent_of(x):
    """What a tangent formula reads for an input: its tangent, zeros for a tensor without one,
    0 for a number (a constant)."""
    if isinstance(x, Tensor):
        if x._fw_grad is not None:
            return x._fw_grad
        return _wrap(np.zeros_like(x._np), x._device)
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


def attach_tangent(tensor, tangent):
    """Give ``tensor`` its tangent in the open dual level (dropped when the level closes)."""
    tensor._fw_grad = tangent
    _modes.forward_ad.duals.append(weakref.ref(tensor))
    return tensor


def _fitted(tangent, out):
    """A formula's result with the output's shape and dtype (a formula may broadcast less)."""
    _modes.forward_ad.computing = True
    try:
        if not isinstance(tangent, Tensor):  # a formula that found only constants
            return _wrap(np.full(out._shape, tangent, dtype=out._np.dtype), out._device)
        if tangent._shape != out._shape:
            tangent = tangent.expand(out._shape)
        if tangent.dtype is not out.dtype:
            tangent = tangent.to(out.dtype)
        return tangent
    finally:
        _modes.forward_ad.computing = False


# -- out=: the result written into a tensor the caller gives ----------------------------------
def call_with_out(op, spec, args, kwargs, out):
    """``op(..., out=t)``: compute as usual, then write the result into ``t`` (resized when its
    shape differs) and return ``t``. No graph can be recorded through such a write: torch
    refuses when anything requires grad. ``spec`` is (name, out_dtype, factory): how ``t``'s
    dtype may differ from the result's, ``castable`` (the result's kind casts to it),
    ``same`` or ``any``; a ``factory`` makes its result in ``t``'s dtype."""
    name, out_dtype, factory = spec
    outs = out if isinstance(out, tuple) else (out,)
    if _grad_state.grad_enabled and (_has_grad(args) or _has_grad(kwargs.values()) or _has_grad(outs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if factory and kwargs.get("dtype") is None:  # a factory makes out's dtype
        kwargs["dtype"] = out.dtype
    result = op(*args, **kwargs)
    results = result if isinstance(result, tuple) else (result,)
    for target, value in zip(outs, results):
        _write_out(name, target, value, out_dtype, factory)
    if hasattr(type(result), "_fields"):  # torch.return_types.max -> torch.return_types.max_out
        return _out_return_type(type(result))(*outs)
    return type(result)(*outs) if isinstance(result, tuple) else out


_OUT_RETURN_TYPES = {}


def _out_return_type(cls):
    """The named tuple torch returns for an out= call (``max_out`` for ``max``)."""
    if cls not in _OUT_RETURN_TYPES:
        name = cls.__name__ + "_out"

        def __repr__(self):
            fields = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
            return f"torch.return_types.{name}(\n{fields})"
        _OUT_RETURN_TYPES[cls] = type(name, (collections.namedtuple(name, cls._fields),),
                                      {"__repr__": __repr__, "__slots__": ()})
    return _OUT_RETURN_TYPES[cls]


def _has_grad(values) -> bool:
    for v in values:
        if isinstance(v, Tensor) and v._requires_grad:
            return True
        if isinstance(v, (list, tuple)) and _has_grad(v):
            return True
    return False


def _write_out(name, target, value, out_dtype, factory):
    if out_dtype == "castable" and value.dtype._category > target.dtype._category:
        if name in ("cat", "concat", "concatenate", "stack"):
            raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                            f"{_scalar_name(target.dtype)}")
        raise RuntimeError(f"result type {_scalar_name(value.dtype)} can't be cast to the desired output "
                           f"type {_scalar_name(target.dtype)}")
    if target._shape != value._shape:
        if factory and (name != "arange" or not target.numel()):
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
    if out_dtype == "same" and value.dtype is not target.dtype:  # (after the resize, as torch)
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp_type_name(value.dtype)}, but got "
                           f"{_cpp_type_name(target.dtype)} instead")
    np.copyto(target._np, value._np, casting="unsafe")
    target._bump_version()
