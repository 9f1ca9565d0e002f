"""The recorded graph: one Node per differentiable operation.

During the forward pass every operation on a tensor that requires grad creates a Node
(``MulBackward0``, ...) and stores it as the output's ``grad_fn``. A Node knows the nodes
that produced its inputs (``next_functions``, pairs of (node, output index)) and keeps
the tensors its backward formula needs (saved tensors). Leaves that require grad end in an
``AccumulateGrad`` node, whose job is to add the incoming gradient into ``.grad``.
"""
from __future__ import annotations

import contextlib
import itertools
import re
import weakref

import numpy as np

from .. import _modes, dtypes
from ..dispatch import kernel
from ..tensor import Tensor
from . import anomaly_mode

_sequence = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class SavedTensor:
    """A tensor kept for backward, with the version it had when it was saved.

    If anyone writes to it in place before backward runs, the version moves on and
    unpacking raises, because the formula would silently use the wrong numbers.
    """

    __slots__ = ("tensor", "version", "is_output", "node_name", "unpack_hook", "output_nr")

    def __init__(self, tensor, is_output=False, node_name="", output_nr=0):
        if tensor._inference:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors "
                "created in inference mode in computation tracked by autograd. To work around "
                "this, you can make a clone to get a normal tensor and use it in autograd, or "
                "use `torch.no_grad()` instead of `torch.inference_mode()`."
            )
        self.version = tensor._version_counter[0]
        self.is_output = is_output
        self.output_nr = output_nr  # which of the node's differentiable outputs (None: not one)
        self.node_name = node_name
        self.unpack_hook = None
        if _hooks_stack:
            # the innermost saved_tensors_hooks decide what is kept: pack sees the tensor itself
            # and whatever it returns is kept instead (torch then checks no version: the hook
            # owns the data)
            pack_hook, self.unpack_hook = _hooks_stack[-1]
            self.tensor = pack_hook(tensor)
            return
        if is_output:
            # Keep the output's numbers but not its grad_fn: the output's grad_fn is the very
            # node saving it, and holding it would make a reference cycle that keeps the
            # whole graph's memory alive until the garbage collector runs (torch avoids it too).
            tensor = _detached(tensor)
        self.tensor = tensor

    def unpack(self, owner=None):
        t = self.tensor
        if t._version_counter[0] != self.version:
            what = f"[{t.type()} [{', '.join(str(n) for n in t.shape)}]]"
            if self.is_output or t.grad_fn is not None:
                fn = self.node_name if self.is_output else t.grad_fn.name()
                # torch names the forward op here: ExpBackward0 -> Exp
                fn = re.sub(r"Backward\d*$", "", fn)
                where = f"{what}, which is output 0 of {fn},"
            else:
                where = what
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: {where} is at version {t._version_counter[0]}; expected "
                f"version {self.version} instead. Hint: enable anomaly detection to find the "
                "operation that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True, check_nan=False)."
            )
        return self._as_output_of(owner, t)

    def unpack_packed(self, owner=None):
        """``unpack`` for a tensor that went through a pack hook: ``unpack_hook`` gives it back."""
        return self._as_output_of(owner, self.unpack_hook(self.tensor))

    def _as_output_of(self, owner, t):
        if self.is_output and owner is not None and _modes.grad_mode.grad_enabled and self.output_nr is not None:
            # double backward: the saved output must lead back through its own node again,
            # as the output it is (svd's Vh is output 2)
            t = _detached(t)
            t.grad_fn, t._output_nr, t._requires_grad = owner, self.output_nr, True
        return t


def _detached(tensor):
    """The same memory and version counter, without the history (what ``detach`` makes)."""
    out = Tensor._view_of(tensor, tensor._shape, tensor._stride, tensor._offset, tensor._np)
    out._base = None
    return out

# (pack_hook, unpack_hook) pairs, innermost last; only the innermost pair is used
_hooks_stack: list = []


@contextlib.contextmanager
def saved_tensors_hooks(pack_hook, unpack_hook):
    """Within the block, every tensor saved for backward goes through ``pack_hook`` and
    comes back through ``unpack_hook`` when backward needs it.

    ``pack_hook(tensor)`` may return anything (a copy on another device, a file name, an
    index); ``unpack_hook(packed)`` must give back a tensor with the same values. Blocks
    nest: the innermost pair wins, as in torch.

        >>> with saved_tensors_hooks(lambda t: print('saved', t.shape) or t, lambda t: t):
        ...     y = x.exp()           # prints: saved reftorch.Size([...]) (exp keeps its output)
    """
    _hooks_stack.append((pack_hook, unpack_hook))
    try:
        yield
    finally:
        _hooks_stack.pop()


class save_on_cpu(contextlib.ContextDecorator):
    """Saved tensors are packed as CPU copies (for a model too big for its device's memory);
    unpacking moves them back to the device they came from."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        self._hooks = saved_tensors_hooks(self._pack, self._unpack)

    @staticmethod
    def _pack(tensor):
        return tensor.device, tensor.to("cpu")

    @staticmethod
    def _unpack(packed):
        device, tensor = packed
        return tensor.to(device)

    def __enter__(self):
        return self._hooks.__enter__()

    def __exit__(self, *exc):
        return self._hooks.__exit__(*exc)


class Node:
    """Base of every backward function. Subclasses implement ``backward(*grads)``.

    ``_save_names`` names what ``save`` keeps, in order (``result`` for the output), as torch
    names them: ``y.grad_fn._saved_self`` reads the saved input, ``_saved_result`` the output."""

    num_outputs = 1
    _hook_dicts = None  # output index -> the hooks of the tensor that is that output
    _save_names: tuple = ()

    def __init__(self):
        self.next_functions: tuple = ()
        self._saved: tuple | None = ()
        self._freed = False
        self._sequence_nr = next(_sequence)
        self._retained: dict | None = None  # output index -> tensor that retain_grad()s
        if anomaly_mode.state.enabled:  # nodes are made in the forward pass: remember where
            self._forward_trace = anomaly_mode.forward_trace()

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:  # the class name, as torch prints it (name() may be C++'s)
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    # saved tensors ---------------------------------------------------------------
    def save(self, *values, output=None):
        """Keep values for backward; tensors are kept with their current version."""
        saved = list(values)
        for i, value in enumerate(values):
            if isinstance(value, Tensor):
                saved[i] = SavedTensor(value, node_name=self.name())
        if output is not None:
            saved.append(SavedTensor(output, is_output=True, node_name=self.name()))
        self._saved = tuple(saved)

    def __getattr__(self, name):
        # only called when normal lookup fails: a saved tensor asked for by its torch name
        names = type(self)._save_names
        if name.startswith("_saved_") and name[len("_saved_"):] in names:
            return self._read_saved(names.index(name[len("_saved_"):]))
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _read_saved(self, index):
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        value = self._saved[index] if index < len(self._saved) else None
        if value.__class__ is SavedTensor:
            return value.unpack(self) if value.unpack_hook is None else value.unpack_packed(self)
        if isinstance(value, (int, float, bool)):  # torch keeps a number as a 0-dim tensor
            return Tensor._wrap(np.asarray(value, dtype=dtypes.scalar_dtype(value).numpy))
        return value if isinstance(value, Tensor) else None  # not saved: None

    @property
    def saved_values(self) -> tuple:
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(s if s.__class__ is not SavedTensor else
                     s.unpack(self) if s.unpack_hook is None else s.unpack_packed(self)
                     for s in self._saved)

    def release(self):
        """Free saved tensors after backward (unless the graph is retained).

        A saved Python number counts too: torch wraps the ``2`` of ``x * 2`` in a tensor and
        saves that, so a second backward through it raises as well."""
        if self._saved and any(s.__class__ is SavedTensor or s.__class__ in (int, float, bool)
                               for s in self._saved):
            self._freed = True
            self._saved = None

    def backward(self, *grads):
        raise NotImplementedError

    def register_hook(self, fn):
        raise NotImplementedError("hooks are not part of reftorch")

    def _register_hook_dict(self, tensor):
        """Let ``tensor.register_hook`` hooks see the gradient of the output it is."""
        self._hook_dicts = dict(self._hook_dicts or {})
        self._hook_dicts[tensor._output_nr] = tensor._backward_hooks


class AccumulateGrad(Node):
    """The end of the line for a leaf: adds the incoming gradient into ``variable.grad``."""

    def __init__(self, variable):
        super().__init__()
        self.variable = variable

    def name(self) -> str:  # torch names the nodes it writes in C++ by their C++ name
        return "torch::autograd::AccumulateGrad"

    def backward(self, grad):  # the engine adds into .grad itself (engine._accumulate_into)
        return ()

    @property
    def _hook_dicts(self):
        # a leaf's hooks stay on the tensor: this node is held weakly and may be rebuilt
        hooks = self.variable._backward_hooks
        return {0: hooks} if hooks else None


def grad_accumulator(tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, one per leaf while a graph uses it.

    Held weakly, as torch does: the node points at the tensor (``variable``), and a strong
    link back would make a cycle that only the garbage collector could free."""
    node = tensor._accumulator() if tensor._accumulator is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._accumulator = weakref.ref(node)
    return node


def gradient_edge(tensor):
    """The (node, output index) pair through which a gradient reaches ``tensor``."""
    if tensor.grad_fn is not None:
        return (tensor.grad_fn, tensor._output_nr)
    if tensor.requires_grad:
        return (grad_accumulator(tensor), 0)
    return (None, 0)


def _sum_to(grad, shape, node, index):
    """Undo broadcasting: sum ``grad`` down to ``shape`` (the engine's check on every gradient)."""
    if grad._shape == shape:
        return grad
    lead = grad.dim() - len(shape)
    if lead < 0 or any(n != 1 and n != grad._shape[i + lead] for i, n in enumerate(shape)):
        raise RuntimeError(
            f"Function {node.name()} returned an invalid gradient at index {index} - got "
            f"{list(grad._shape)} but expected shape compatible with {list(shape)}"
        )
    dims = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and grad._shape[i + lead] != 1)
    if not grad._requires_grad and not _modes.grad_mode.grad_enabled:
        # no graph to record for this sum (no create_graph): the sum kernel on the values
        values = kernel("sum", grad._device)(grad._np, dims, True, grad._np.dtype) if dims else grad._np
        return Tensor._wrap(values.reshape(shape), grad._device)
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.reshape(shape) if grad._shape != shape else grad
