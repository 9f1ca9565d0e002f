"""In-place operations (``add_``, ``mul_``, ``copy_``, ``fill_``, ...) and their autograd.

Without a graph to record, an in-place op writes straight into the tensor's memory. With
one, ``_inplace`` computes the new values out of place (recording the op's own node), writes
them in, and moves the tensor's history on to that node; a view's base gets a
``CopySlices`` node. Every write bumps the version counter shared with the views.

codegen.py builds every ``x.op_`` from the functional op with ``inplace_variant``; ops that
exist only in place (``copy_``, ``fill_``, ``zero_``) are declared with their functional
values here and run the same way (``run_inplace``).
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes
from ..autograd.graph import Node, SavedTensor, _sum_to, gradient_edge
from ..dispatch import kernel
from ..storage import broadcast_shapes
from ..tensor import Tensor
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _array, _devices, _grad_state, _needs_grad, _wrap
from .codegen import ops


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
    if 0 in target._stride and target.numel() and builtins.any(
            n > 1 and s == 0 for n, s in zip(target._shape, target._stride)):
        raise RuntimeError(_OVERLAP_MESSAGE)


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
        region = ops.as_strided(base_grad, self._view_shape, self._view_stride, self._view_offset)
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
    buffer = ops.zeros(node._storage_size, dtype=grad.dtype, device=grad._device)
    base = ops.as_strided(buffer, node._base_shape, node._base_stride, node._base_offset)
    base._np[...] = grad._np
    return base


def _inplace(target, compute):
    """An in-place op under autograd: ``compute(old)`` builds the new values out of place
    (recording its node), the values are written into the target's memory, and the target's
    history moves on to that node; for a view, its base gets a CopySlices node."""
    old = _snapshot(target)
    result = compute(old)
    np.copyto(target._np, result._np, casting="unsafe")
    target._bump_version()
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
    # the view's own history is regenerated from the base: as_strided of it (as torch does)
    regenerated = ops.as_strided(base, target._shape, target._stride, target._offset)
    target.grad_fn, target._output_nr, target._requires_grad = regenerated.grad_fn, 0, True
    return target


def _resave(saved, target):
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




# -- x.op_(...) from the functional op ----------------------------------------------------------
def _fits(result, target):
    """torch's checks that an out-of-place result can be written into ``target``."""
    if result.dtype._category > target.dtype._category:  # float into int, or anything into bool
        raise RuntimeError(f"result type {_scalar_name(result.dtype)} can't be cast to the desired output "
                           f"type {_scalar_name(target.dtype)}")
    if result._shape != target._shape:
        shape = broadcast_shapes(target._shape, result._shape)
        raise RuntimeError(f"output with shape {list(target._shape)} doesn't match the broadcast shape {list(shape)}")
    return result


def _write(target, values):
    """``values`` into ``target``'s memory, element after element where its elements share cells."""
    shared = _shared_cells(target) if not target.is_contiguous() else None
    source = np.broadcast_to(values._np, target._shape)
    if shared is not None:  # the last element written to a cell is the one that stays
        _write_in_order(target, *shared, lambda now, value: value, source.astype(target._np.dtype))
    else:
        np.copyto(target._np, source, casting="unsafe")


def _tensors(values):
    return [v for v in values if isinstance(v, Tensor)]


def _kernel_write(name, target, args, alpha):
    """A pointwise op's kernel writing straight into a floating-point target: the operands
    in the target's dtype, a tensor operand scaled by ``alpha`` first (as add_ and sub_ do)."""
    operands, tensors = [], [target]
    for a in args:
        if isinstance(a, Tensor):
            tensors.append(a)
            if a._shape != target._shape and broadcast_shapes(target._shape, a._shape) != target._shape:
                raise RuntimeError(f"output with shape {list(target._shape)} doesn't match the broadcast shape "
                                   f"{list(broadcast_shapes(target._shape, a._shape))}")
            operands.append(_array(a, target.dtype))
        else:
            operands.append(a)
    dev = _devices(*tensors)
    shared = _shared_cells(target) if not target.is_contiguous() else None
    if alpha != 1 and name in ("add", "sub") and isinstance(args[0], Tensor) and shared is None and \
            target.dtype in (dtypes.float32, dtypes.float64):  # one fused multiply-add, as torch's add
        kernel("add_alpha", dev)(target._np, operands[0], alpha if name == "add" else -alpha, out=target._np)
        return
    if alpha != 1:  # scaled after the cast, as torch does; a bare array, no tensor needed
        if isinstance(alpha, builtins.float) and not target.dtype.is_floating_point:
            raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
        operands[0] = operands[0] * alpha if not isinstance(args[0], Tensor) else kernel("mul", dev)(operands[0], alpha)
    compute = kernel(name, dev)
    if shared is not None:
        tensor_operand = operands[0] if operands and isinstance(args[0], Tensor) else None
        rest = operands[1:] if tensor_operand is not None else operands
        if tensor_operand is None:
            _write_in_order(target, *shared, lambda now, _: compute(now, *rest))
        else:
            _write_in_order(target, *shared, lambda now, o: compute(now, o, *rest), tensor_operand)
        return
    compute(target._np, *operands, out=target._np)


def inplace_variant(op, declaration):
    """``x.op_(...)``: ``op``'s values written into ``x``.

    A pointwise op on a floating-point tensor that nothing differentiates runs its kernel
    straight into ``x``'s memory; otherwise the functional op computes the values (recording
    its node when autograd needs one) and they are written in."""
    kernel_name = declaration.kernel if "pointwise" in declaration.tags else None
    has_alpha = builtins.any(a.name == "alpha" for a in declaration.schema.arguments)
    pointwise = "pointwise" in declaration.tags
    check = declaration.inplace_check

    def apply(input, *args, **kwargs):
        # torch's order: autograd's leaf check, then overlap, then broadcast and dtype
        _check_inplace(input)
        if pointwise:
            _check_no_internal_overlap(input)
        if check is not None:
            check(input, *args, **kwargs)
        if not _grad_state.grad_enabled or not (input._requires_grad or _any_requires_grad(args, kwargs)):
            if kernel_name is not None and input.dtype.is_floating_point and (
                    not kwargs or (has_alpha and kwargs.keys() == {"alpha"})):
                _kernel_write(kernel_name, input, args, kwargs.get("alpha", 1))
            else:
                _write(input, _fits(op(input, *args, **kwargs), input))
            input._bump_version()
            return input
        # (values of a wider dtype are cast as they are written: the op's own node stays, as in torch)
        return _inplace(input, lambda old: _fits(op(old, *args, **kwargs), input))
    return apply


def _any_requires_grad(args, kwargs):
    for v in args:
        if isinstance(v, Tensor) and v._requires_grad:
            return True
    if kwargs:
        for v in kwargs.values():
            if isinstance(v, Tensor) and v._requires_grad:
                return True
    return False


def run_inplace(impl, autograd, args, kwargs):
    """An op that exists only in place (``copy_``, ``fill_``): ``impl`` gives the new values
    out of place, which are written into ``args[0]``; its node hangs on the target."""
    target = args[0]
    _check_inplace(target)
    if autograd is not None and _grad_state.grad_enabled and autograd.edge_values(args, kwargs) is not None:
        def compute(old):
            call = (old,) + tuple(args[1:])
            _grad_state.grad_enabled = False
            try:
                values = impl(*call, **kwargs)
            finally:
                _grad_state.grad_enabled = True
            autograd.record(call, kwargs, values, autograd.edge_values(call, kwargs))
            return values
        return _inplace(target, compute)
    _write(target, impl(*args, **kwargs))
    target._bump_version()
    return target


# -- the ops that exist only in place -----------------------------------------------------------
def copy_values(input, src, non_blocking=False):
    """What ``input.copy_(src)`` writes: ``src`` broadcast to ``input``'s shape, in its dtype
    and on its device (torch converts first: a ToCopyBackward0 joins the graph)."""
    _check_no_internal_overlap(input)  # (a number comes from t[...] = 3, which torch copies too)
    if not isinstance(src, Tensor):
        return _wrap(kernel("full", input._device)(input._shape, src, input.dtype.numpy), input._device)
    shape = broadcast_shapes(input._shape, src._shape)
    if shape != input._shape:
        raise RuntimeError(f"output with shape {list(input._shape)} doesn't match the broadcast shape {list(shape)}")
    if src._device != input._device:
        array = np.array(src._np, dtype=input.dtype.numpy, copy=True)
        src_array = kernel("copy", input._device)(array) if input._device.type != "cpu" else array
    else:
        src_array = src._np
    values = np.empty(input._shape, dtype=input.dtype.numpy)
    kernel("copy_", input._device)(values, np.broadcast_to(src_array, input._shape))
    return _wrap(values, input._device)


def zero_values(input):
    """What ``zero_`` writes: zeros of ``input``'s shape and dtype."""
    return _wrap(kernel("full", input._device)(input._shape, 0, input.dtype.numpy), input._device)


def fill_values(input, value):
    """What ``fill_`` writes: ``value`` (a number or a 0-dim tensor) everywhere."""
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")
    number = value.item() if isinstance(value, Tensor) else value
    return _wrap(kernel("full", input._device)(input._shape, number, input.dtype.numpy), input._device)
