"""In-place operations (``add_``, ``mul_``, ``copy_``, ``fill_``, ...) and their autograd.

Without a graph to record, an in-place op writes straight into the tensor's memory. With
one, ``_inplace`` computes the new values out of place (recording the op's own node), writes
them in, and moves the tensor's history on to that node; a view's base gets a
``CopySlices`` node. Every write bumps the version counter shared with the views.
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes
from ..autograd.engine import _sum_to
from ..autograd.graph import Node, gradient_edge
from ..dispatch import kernel
from ..storage import broadcast_shapes
from ..tensor import Tensor
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _array, _devices, _grad_state, _needs_grad, _record, _wrap
from .arithmetic import (
    _check_alpha, _check_integer_divisor, _check_rounding_mode, _divide_rounded, add, div,
    floor_divide, mul, pow, remainder, sub,
)
from .copies import to
from .creation import zeros, zeros_like
from .unary import abs, clamp, exp, log, neg, relu, sigmoid, sqrt, tanh
from .views import AsStridedBackward0, as_strided


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
    from ..autograd.graph import SavedTensor
    return SavedTensor(target, is_output=True, node_name=saved.node_name)


def _snapshot(target):
    """The target's current value as a separate tensor with the same place in the graph."""
    old = _wrap(np.array(target._np, copy=True), target._device)
    old.grad_fn, old._output_nr = target.grad_fn, target._output_nr
    # (a leaf that requires grad never gets here: _check_inplace refuses it first)
    old._requires_grad = target._requires_grad
    return old


def _shared_cells(target):
    """Where some elements of ``target`` share a memory cell (windows of ``as_strided`` that
    overlap), the storage positions of its elements as rows, in the order torch's kernel
    visits them: within a row the cells differ, and later rows read what earlier ones wrote.
    None when every element has a cell of its own (nearly always)."""
    shape, stride = target._shape, target._stride
    dims = sorted((d for d in range(len(shape)) if shape[d] > 1), key=lambda d: stride[d])
    reach = 0  # the farthest cell the inner dims reach: a stride beyond it cannot meet them
    for d in dims:
        if stride[d] <= reach:
            break
        reach += (shape[d] - 1) * stride[d]
    else:
        return None
    order = sorted(range(len(shape)), key=lambda d: -stride[d])  # outermost first
    cells = np.lib.stride_tricks.as_strided(
        np.arange(len(target._storage), dtype=np.int64)[target._offset:], shape,
        tuple(st * 8 for st in stride)).transpose(order)
    return cells.reshape(-1, shape[order[-1]] if shape else 1), order


def _write_in_order(target, cells, order, combine, operand=None):
    """Apply ``combine(current, operand_row)`` row by row, each row reading the memory as the
    rows before it left it (torch's element-after-element kernel on overlapping memory)."""
    flat = target._storage.data
    rows = None
    if operand is not None:
        values = np.broadcast_to(np.asarray(operand), target._shape).transpose(order)
        rows = values.reshape(cells.shape)
    for r, positions in enumerate(cells):
        flat[positions] = combine(flat[positions], None if rows is None else rows[r])


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
            shared = _shared_cells(input) if not input.is_contiguous() else None
            if shared is not None:
                _write_in_order(input, *shared, lambda now, o: kernel(op, dev)(now, o), operand)
                return
            kernel(op, dev)(input._np, operand, out=input._np)

        return _inplace(input, lambda old: functional(old, other, **kwargs).to(input.dtype), (other,), fast)
    apply.__name__ = op + "_"
    # forward mode: the out-of-place op's rule, on the values before the write
    apply.jvp = lambda t, out, input, other, **kwargs: functional.jvp(
        t, functional(input, other, **kwargs), input, other, **kwargs)
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
            shared = _shared_cells(input) if not input.is_contiguous() else None
            if shared is not None:
                _write_in_order(input, *shared, lambda now, _: kernel(op, input._device)(now))
                return
            kernel(op, input._device)(input._np, out=input._np)
        return _inplace(input, functional, (), fast)
    apply.__name__ = op + "_"
    apply.jvp = lambda t, out, input: functional.jvp(t, functional(input), input)
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


clamp_.jvp = lambda t, out, input, min=None, max=None: clamp.jvp(t, None, input, min, max)


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


zero_.jvp = lambda t, out, input: zeros_like(input)


def fill_(input, value):
    return _fill(input, value, FillBackward3 if isinstance(value, Tensor) else FillBackward2)


fill_.jvp = lambda t, out, input, value: t(value).expand(input._shape) if isinstance(value, Tensor) else zeros_like(input)


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
        shared = _shared_cells(input) if not input.is_contiguous() else None
        if shared is not None:  # the last element written to a cell is the one that stays
            source = source_array()
            _write_in_order(input, *shared, lambda now, value: value,
                            source.astype(input._np.dtype) if isinstance(source, np.ndarray) else source)
            return
        kernel("copy_", input._device)(input._np, source_array())
    return _inplace(input, compute, (src,) if isinstance(src, Tensor) else (), fast)


copy_.jvp = lambda t, out, input, src, non_blocking=False: t(src).expand(input._shape) if isinstance(src, Tensor) else zeros_like(input)
