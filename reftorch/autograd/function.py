"""Custom operations: ``class MyOp(autograd.Function)`` with static forward and backward.

``MyOp.apply(*args)`` runs ``forward`` with grad mode off (its inner ops are not
recorded), then records one node, ``MyOpBackward``, whose backward calls yours.
"""
from __future__ import annotations

import builtins
import inspect

from ..functions import _needs_grad, _record, zeros
from ..tensor import Tensor
from . import grad_mode
from .graph import Node


class FunctionCtx:
    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = {id(t) for t in tensors}

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value: bool):
        self._materialize = value


class BackwardCFunction(Node, FunctionCtx):
    """The node a custom Function records; it is also the ``ctx`` passed to your methods."""

    _forward_cls = None

    def name(self):
        return type(self).__name__

    @property
    def saved_tensors(self):
        return self.saved_values

    def backward(self, *grads):
        # one gradient per forward output: a non-differentiable output's is None (zeros, materialized)
        per_output = [None] * len(self._output_meta)
        for position, g in zip(self._differentiable_positions, grads):
            per_output[position] = g
        if getattr(self, "_materialize", True):
            per_output = [g if g is not None or meta is None else zeros(meta[0], dtype=meta[1], device=meta[2])
                          for g, meta in zip(per_output, self._output_meta)]
        cls = self._forward_cls
        if cls.backward is not Function.backward and cls.vjp is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                               "You should only implement one of them.")
        user_fn = cls.vjp if cls.vjp is not Function.vjp else cls.backward
        result = user_fn(self, *per_output)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self.needs_input_grad)  # one per forward argument, tensor or not
        extra_are_none = builtins.all(g is None for g in result[expected:])  # torch allows these
        if len(result) < expected or not extra_are_none:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {expected}, got {len(result)})"
            )
        # only tensor arguments have edges in the graph
        return tuple(result[i] for i in self._tensor_positions)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        # each Function gets its own node class, named like torch's: <Name>Backward
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})


class Function(metaclass=_FunctionMeta):
    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        """The other style: ``forward(*args)`` without ctx, and this saves what backward needs."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    @staticmethod
    def vjp(ctx, *grad_outputs):
        """Another name for backward: a Function defines one of the two."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        separate_setup = cls.setup_context is not Function.setup_context
        if separate_setup:
            # setup_context sees every argument forward takes, defaults filled in (as torch binds them)
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        ctx = cls._backward_cls()
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        ctx._tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with grad_mode.no_grad():
            if separate_setup:  # forward(*args), then setup_context(ctx, inputs, output)
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        dirty = getattr(ctx, "_dirty", ())
        for t in dirty:
            # torch counts marking dirty as a write of its own, on top of the write forward made
            t._bump_version()
        needs_grad = _needs_grad(*tensor_args)
        if needs_grad and any(t.is_leaf and t.requires_grad for t in dirty):
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        if needs_grad:
            non_diff = getattr(ctx, "_non_differentiable", set())
            diff_outs = [o for o in outs if isinstance(o, Tensor) and id(o) not in non_diff]
            # an input returned as is becomes a new tensor object, unless it was written in place
            # (marked dirty): then it is the same object, its history now ending at this node
            diff_outs = [o if not any(o is a for a in args) or any(o is d for d in dirty) else o.view_as(o)
                         for o in diff_outs]
            ctx.num_outputs = len(diff_outs)
            ctx._output_meta = [(o._shape, o.dtype, o._device) if isinstance(o, Tensor) else None for o in outs]
            ctx._differentiable_positions = [i for i, o in enumerate(outs)
                                             if isinstance(o, Tensor) and id(o) not in non_diff]
            _record(ctx, tensor_args, *diff_outs)
            ctx.save(*getattr(ctx, "_to_save", ()))
            it = iter(diff_outs)
            outs = tuple(next(it) if isinstance(o, Tensor) and id(o) not in non_diff else o for o in outs)
        # with nothing to differentiate no node is recorded, so nothing is saved (or packed)
        return outs if is_tuple else outs[0]


class BackwardHookFunction(Function):
    """Passes its tensors through unchanged; in backward, ``on_grads(grads)`` sees (and may
    replace) their gradients. What module backward hooks are built on (utils/hooks.py)."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        return tensors if len(tensors) > 1 else tensors[0]

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grads(grads))
