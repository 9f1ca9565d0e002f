"""The backward pass: walk the recorded graph from the outputs back to the leaves.

1. Find every node reachable from the outputs and count, for each, how many edges point
   into it (its dependencies). With ``inputs=`` only nodes on a path to an input are kept.
2. A node runs when all gradients for it have arrived (dependencies reach 0). Ready nodes
   run latest-created first, like torch. No recursion, so a 10,000-op chain is fine.
3. A node's ``backward`` turns its output gradient(s) into one gradient per input edge;
   the engine sums each to the input's shape and dtype, and adds it into the buffer of the
   next node. ``AccumulateGrad`` nodes add into ``.grad``.
4. Unless ``retain_graph``, each node frees its saved tensors once it has run.
"""
from __future__ import annotations

import builtins
import heapq
import sys

from ..functions import _with_strides, ones_like, stack, zeros_like
from ..storage import contiguous_strides, is_contiguous, is_non_overlapping_and_dense
from ..tensor import Tensor
from . import anomaly_mode, grad_mode
from .graph import AccumulateGrad, _sum_to, grad_accumulator


def _validate(grad, meta, node, index):
    shape, dtype, device = meta
    if grad._shape != shape:
        grad = _sum_to(grad, shape, node, index)
    if grad.dtype is not dtype or (grad._device is not device and grad._device != device):
        grad = grad.to(dtype=dtype, device=device)
    return grad


def _collect(roots):
    """Dependencies of every node reachable from ``roots`` (iterative DFS)."""
    dependencies = {}
    stack = list(dict.fromkeys(n for n in roots if n is not None))  # (two outputs of one node: one root)
    seen = set(stack)
    order = []  # discovery order, for the "needed" pass below
    while stack:
        node = stack.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            dependencies[child] = dependencies.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return dependencies, order


def _needed_nodes(order, targets):
    """Nodes from which some target can be reached (the only ones worth running)."""
    needed = set(targets)
    changed = True
    # children are discovered after parents, so walking the order backwards settles fast
    while changed:
        changed = False
        for node in reversed(order):
            if node in needed:
                continue
            if any(child in needed for child, _ in node.next_functions if child is not None):
                needed.add(node)
                changed = True
    return needed


def run_backward(roots, retain_graph, create_graph, *, accumulate=True, capture=None,
                 targets=None):
    """Run the graph from ``roots`` (list of (node, output_nr, grad)).

    ``accumulate``: add into ``.grad`` of leaves (and retained non-leaves).
    ``capture``: dict (node, output_nr) -> slot; the gradient arriving there is stored in it.
    ``targets``: if given, only nodes leading to these nodes run.
    """
    root_nodes = [node for node, _, _ in roots]
    dependencies, order = _collect(root_nodes)
    needed = _needed_nodes(order, targets) if targets is not None else None
    stop_at = set()
    if needed is not None:
        # a target that leads to no other target only hands its gradient over: it does not
        # run (as in torch, whose saved values it would otherwise read, maybe already freed)
        stop_at = {node for node in targets
                   if not any(child in needed for child, _ in node.next_functions if child is not None)}
        # only edges between needed nodes count
        dependencies = {}
        for node in order:
            if node not in needed:
                continue
            for child, _ in node.next_functions:
                if child is not None and child in needed:
                    dependencies[child] = dependencies.get(child, 0) + 1

    buffers = {}
    for node, nr, grad in roots:
        slots = buffers.setdefault(node, [None] * node.num_outputs)
        slots[nr] = grad if slots[nr] is None else slots[nr] + grad

    ready = []
    for node in buffers:
        if dependencies.get(node, 0) == 0 and (needed is None or node in needed):
            heapq.heappush(ready, (-node._sequence_nr, id(node), node))

    previous_mode = grad_mode.state.grad_enabled
    grad_mode.state.grad_enabled = create_graph
    try:
        while ready:
            _, _, node = heapq.heappop(ready)
            grads = buffers.pop(node)
            if node._hook_dicts is not None:  # tensor hooks see the summed gradient first
                _call_tensor_hooks(node._hook_dicts, grads)
            if node._retained is not None and accumulate:
                for nr, tensor in node._retained.items():
                    if grads[nr] is not None:
                        _accumulate_into(tensor, grads[nr], create_graph)
            if capture is not None:
                for nr, g in enumerate(grads):
                    slot = capture.get((node, nr))
                    if slot is not None and g is not None:
                        slot.append(g)
            if node.__class__ is AccumulateGrad:
                if accumulate and grads[0] is not None:
                    _accumulate_into(node.variable, grads[0], create_graph)
                    hooks = node.variable._post_accumulate_grad_hooks
                    for hook in tuple(hooks.values()) if hooks else ():
                        hook(node.variable)
                continue
            if node in stop_at:
                continue
            if anomaly_mode.state.enabled:
                results = _run_watched(node, grads)
            elif node.num_outputs == 1:
                results = node.backward(grads[0])
            else:
                results = node.backward(*grads)
            if not retain_graph:
                node.release()
            metas = node._input_meta
            for index, ((child, child_nr), g) in enumerate(zip(node.next_functions, results)):
                if child is None or g is None:
                    continue
                if needed is not None and child not in needed:
                    continue
                g = _validate(g, metas[index], node, index)
                slots = buffers.get(child)
                if slots is None:
                    slots = buffers[child] = [None] * child.num_outputs
                slots[child_nr] = g if slots[child_nr] is None else slots[child_nr] + g
                remaining = dependencies[child] - 1
                dependencies[child] = remaining
                if remaining == 0:
                    heapq.heappush(ready, (-child._sequence_nr, id(child), child))
    finally:
        grad_mode.state.grad_enabled = previous_mode


def _run_watched(node, grads):
    """A node's backward under anomaly mode: on an error or a NaN, say where it was made."""
    try:
        results = node.backward(*grads)
        if anomaly_mode.state.check_nan:
            anomaly_mode.check_nan(node, results)
    except Exception as error:
        anomaly_mode.warn_forward_trace(node)
        worded = anomaly_mode.worded_for_anomaly_mode(error)
        if worded is error:
            raise
        raise worded from None
    return results


def _call_tensor_hooks(hook_dicts, grads):
    """Run ``register_hook`` hooks on the gradients arriving at a node, in place in ``grads``.

    Each hook gets the gradient summed over every path (so it runs once per backward); a
    hook that returns a tensor replaces the gradient for the hooks after it and for the node.
    """
    for nr, hooks in hook_dicts.items():
        grad = grads[nr]  # None for an output of a multi-output node that got no gradient
        if not hooks:
            continue
        for hook in tuple(hooks.values()):  # a hook may remove itself while running
            result = hook(grad)
            if result is not None:
                _check_hook_result(hook, grad, result)
                grad = result
        grads[nr] = grad


def _check_hook_result(hook, grad, result):
    name = getattr(hook, "__name__", "<unknown>")
    if grad is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    if result.dtype is not grad.dtype or result._device != grad._device:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was {grad.type()} got {result.type()})"
        )
    if result._shape != grad._shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")


# references to the gradient while _accumulate_into looks at it when nothing else holds it:
# the engine's list of arrived gradients, this function's argument, and getrefcount's own
_UNSHARED_REFS = 3


def _accumulate_into(tensor, grad, create_graph):
    """What AccumulateGrad does: the first gradient is stored, later ones are added."""
    if tensor._grad is None:
        if create_graph:
            tensor._grad = grad
        elif sys.getrefcount(grad) <= _UNSHARED_REFS and _stealable(grad, tensor):
            # nobody else can see this gradient: keep it as .grad, no copy (torch does the same)
            tensor._grad = grad if grad._base is None else grad.detach()
        else:
            # a private copy (the same gradient tensor may also flow to other leaves), laid out
            # like the tensor itself: torch's "gradient layout contract"
            tensor._grad = _copy_in_layout_of(grad, tensor)
    elif create_graph:
        tensor._grad = tensor._grad + grad
    else:
        previous = grad_mode.state.grad_enabled
        grad_mode.state.grad_enabled = False
        try:
            tensor._grad.add_(grad)
        finally:
            grad_mode.state.grad_enabled = previous


def _stealable(grad, tensor) -> bool:
    """A fresh gradient (not a view, its memory its own) already laid out as the leaf's
    ``.grad`` must be (dense like a dense leaf, else row-major)."""
    if grad._requires_grad or tensor.grad_fn is not None or grad._offset or grad.numel() != len(grad._storage):
        return False
    # its memory is its own: the storage is held by it (and by the base it views, if any), and
    # that base by nothing else (a weight's gradient arrives as the .t() view of a fresh product)
    holders = 1 if grad._base is None else 2
    if sys.getrefcount(grad._storage) > holders + 1:
        return False
    if grad._base is not None and (sys.getrefcount(grad._base) > 2 or grad._base._base is not None):
        return False
    if is_non_overlapping_and_dense(tensor._shape, tensor._stride):
        return builtins.all(g == t or n == 1 for n, g, t in zip(tensor._shape, grad._stride, tensor._stride)) \
            and is_non_overlapping_and_dense(grad._shape, grad._stride)
    return is_contiguous(grad._shape, grad._stride)


def _copy_in_layout_of(grad, tensor):
    """The first ``.grad`` of ``tensor``: a copy of ``grad`` laid out by torch's "gradient
    layout contract". For a leaf whose strides are dense, the gradient must have those strides
    (dims of size 1 aside); for any other leaf it must be row-major. A gradient that already
    complies keeps its strides, any other is copied into that layout. A retained non-leaf
    gradient is always copied row-major."""
    row_major = contiguous_strides(tensor._shape)
    if tensor.grad_fn is not None:
        strides = row_major
    elif is_non_overlapping_and_dense(tensor._shape, tensor._stride):
        complies = builtins.all(g == t if n != 1 else g != 0 for n, g, t in
                                zip(tensor._shape, grad._stride, tensor._stride))
        strides = grad._stride if complies else tensor._stride
    else:
        strides = grad._stride if is_contiguous(grad._shape, grad._stride) else row_major
    return _with_strides(grad._np, strides, grad._device)


def _root_grads(outputs, grad_outputs, create_graph):
    roots = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not out._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = ones_like(out)
        elif g._shape != out._shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {out.shape}."
            )
        edge = out.grad_fn, out._output_nr
        if edge[0] is None:
            edge = (grad_accumulator(out), 0)
        roots.append((edge[0], edge[1], g))
    return roots


def _as_tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _input_edge(t):
    if t.grad_fn is not None:
        return t.grad_fn, t._output_nr
    return grad_accumulator(t), 0


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """``tensor.backward()`` / ``autograd.backward``: accumulate gradients into ``.grad``."""
    outputs = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) or (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_grads(outputs, grads, create_graph)
    if inputs is None:
        run_backward(roots, retain_graph, create_graph)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    targets, capture, non_leaves = set(), {}, []
    for t in inputs:
        node, nr = _input_edge(t)
        targets.add(node)
        if t.grad_fn is not None:  # a non-leaf input gets its .grad filled too
            slot = []
            capture[(node, nr)] = slot
            non_leaves.append((t, slot))
    run_backward(roots, retain_graph, create_graph, capture=capture, targets=targets,
                 accumulate=True)
    for t, slot in non_leaves:
        for g in slot:
            _accumulate_into(t, g, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` w.r.t. ``inputs``, returned instead of stored in ``.grad``."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False.")
    outputs = _as_tuple(outputs)
    inputs_tuple = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outputs, inputs_tuple, grad_outputs, retain_graph, create_graph, allow_unused)
    for t in inputs_tuple:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots = _root_grads(outputs, grad_outputs, create_graph)
    capture, slots, targets = {}, [], set()
    for t in inputs_tuple:
        edge = _input_edge(t)
        slot = capture.setdefault(edge, [])
        slots.append(slot)
        targets.add(edge[0])
    run_backward(roots, retain_graph, create_graph, accumulate=False, capture=capture,
                 targets=targets)
    results = []
    for index, (t, slot) in enumerate(zip(inputs_tuple, slots)):
        if not slot:
            if not (allow_unused or materialize_grads):
                raise RuntimeError(
                    f"The differentiated Tensor at index {index} appears to not have been used "
                    "in the graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                results.append(zeros_like(t))
            else:
                results.append(None)
            continue
        total = slot[0]
        for g in slot[1:]:
            total = total + g
        results.append(total)
    return tuple(results)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """torch uses vmap for this; the loop below computes the same thing, one row at a time."""
    batch = grad_outputs[0].shape[0]
    per_row = []
    for i in range(batch):
        row = tuple(g[i] for g in grad_outputs)
        per_row.append(grad(outputs, inputs, row, retain_graph=True, create_graph=create_graph,
                            allow_unused=allow_unused))
    return tuple(stack([r[k] for r in per_row]) for k in range(len(inputs)))
