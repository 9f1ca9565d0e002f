"""Gradient checkpointing: keep less for backward, compute the forward part of it twice.

Normally every op in the forward pass saves what its backward formula needs, so a deep
network holds all its intermediates until backward. ``checkpoint(fn, *args)`` runs ``fn``
keeping none of its intermediates (only its inputs, saved like any op's); when backward first needs one of
them it runs ``fn`` again and takes the saved tensors from that second run. Memory falls
from "every intermediate of fn" to "its inputs", at the price of one more forward of fn.

``use_reentrant=False`` (recommended) is built on saved-tensor hooks: inside ``fn`` each
tensor autograd would save is replaced by its position in the saving order; unpacking
position ``i`` triggers the recomputation (once) and returns the ``i``-th tensor it saved.
``use_reentrant=True`` is the older design: one custom Function whose backward reruns
``fn`` with grad on and calls backward on that copy.
"""
from __future__ import annotations

import warnings

from ..autograd import grad_mode
from ..autograd.engine import backward as _backward
from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks
from ..random import get_rng_state, set_rng_state
from ..tensor import Tensor
from ..functions import empty

__all__ = ["checkpoint", "checkpoint_sequential"]


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, with its intermediates recomputed in backward.

    ``preserve_rng_state``: replay the random generator's state, so dropout inside
    ``function`` draws the same mask in the recomputation.
    """
    if use_reentrant is None:  # torch 2.13 still warns here (and then takes the old variant)
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_with_hooks(function, preserve_rng_state, args, kwargs)


class _Replay:
    """Runs ``function`` again, under the random state it first ran with."""

    def __init__(self, function, preserve_rng_state, args, kwargs):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng_state = get_rng_state() if preserve_rng_state else None

    def run(self, inputs):
        now = get_rng_state()
        if self.rng_state is not None:
            set_rng_state(self.rng_state)
        try:
            with grad_mode.enable_grad():
                return self.function(*inputs, **self.kwargs)
        finally:
            set_rng_state(now)


def _detached(args):
    # fresh leaves: the recomputed graph must not reach into the graph outside fn
    return [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in args]


class _SaveInputs(Function):
    """Keeps the checkpoint's tensor inputs the way any op keeps what it needs: saved for
    backward (so outer saved-tensor hooks see them, and in-place changes to them are caught)."""

    @staticmethod
    def forward(ctx, dummy, *args):
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return dummy

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("the inputs of a checkpoint are never differentiated through this node")


def _checkpoint_with_hooks(function, preserve_rng_state, args, kwargs):
    # a node off the main graph whose only job is to hold the inputs until backward
    holder = _SaveInputs.apply(empty(0, requires_grad=True), *args).grad_fn
    replay = _Replay(function, preserve_rng_state, args, kwargs)
    saved_count = 0
    recomputed = []  # what the second run saves, in saving order (filled on first need)

    def pack(tensor):
        nonlocal saved_count
        saved_count += 1
        return saved_count - 1  # a position instead of the tensor: nothing is kept

    def unpack(position):
        if not recomputed:
            def keep(tensor):
                recomputed.append(tensor)
            kept = iter(holder.saved_tensors)
            inputs = [next(kept) if isinstance(a, Tensor) else a for a in args]
            with saved_tensors_hooks(keep, lambda _: None):
                replay.run(_detached(inputs))
            if len(recomputed) != saved_count:
                raise RuntimeError(
                    "torch.utils.checkpoint: A different number of tensors was saved during the "
                    "original forward and recomputation.\n"
                    f"Number of tensors saved during forward: {saved_count}\n"
                    f"Number of tensors saved during recomputation: {len(recomputed)}.\n")
        return recomputed[position]

    with saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, function, preserve_rng_state, *args):
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
        ctx.replay = _Replay(function, preserve_rng_state, args, {})
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return function(*args)  # apply() runs this with grad off: nothing inside is saved

    @staticmethod
    def backward(ctx, *grad_outputs):
        tensors = iter(ctx.saved_tensors)
        args = [next(tensors) if isinstance(a, Tensor) else a for a in ctx.replay.args]
        inputs = _detached(args)
        outputs = ctx.replay.run(inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, Tensor) and o.requires_grad]
        # a backward inside a backward (hence "reentrant"); parameters used by fn get their
        # .grad here directly, the inputs' gradients are handed back to the outer graph
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in inputs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list, or an nn.Sequential's children) one after another, cut into
    ``segments`` pieces: every piece but the last is checkpointed, so only the inputs of the
    pieces are kept for backward, and each piece is run again there."""
    if use_reentrant is None:  # torch 2.13 warns here too, and takes the old variant
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
            "passed. use_reentrant=False is recommended, but if you need to preserve the current "
            "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
            "the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn import Sequential  # deferred: nn imports utils (its hooks), so utils cannot import nn first
    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run(start, end):
        def forward(value):
            for j in range(start, end + 1):
                value = functions[j](value)
            return value
        return forward
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
