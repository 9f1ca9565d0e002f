"""Whole Jacobians and Hessians, built from vector-Jacobian products one row at a time.

Backward computes ``v^T J`` for one vector ``v``. A full Jacobian of an output with m
elements therefore costs m backward passes, one per unit vector: that is why training
uses a scalar loss, and why torch never builds Jacobians unless asked.
"""
from __future__ import annotations

from ..functions import stack, zeros, zeros_like
from .engine import grad


def _as_tuple(x):
    return (tuple(x), True) if isinstance(x, (tuple, list)) else ((x,), False)


def _prepare(inputs):
    return tuple(t.detach().requires_grad_(True) for t in inputs)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    inputs, inputs_is_tuple = _as_tuple(inputs)
    inputs = _prepare(inputs)
    outputs, outputs_is_tuple = _as_tuple(func(*inputs))
    rows_per_output = []
    for out in outputs:
        flat = out.reshape(-1)
        per_input = [[] for _ in inputs]
        for i in range(flat.numel()):
            unit = zeros(flat.numel(), dtype=flat.dtype)
            unit[i] = 1.0
            grads = grad(flat, inputs, unit, retain_graph=True, create_graph=create_graph,
                         allow_unused=True)
            for k, (g, x) in enumerate(zip(grads, inputs)):
                per_input[k].append(g if g is not None else zeros_like(x))
        blocks = []
        for k, x in enumerate(inputs):
            rows = per_input[k]
            block = stack(rows).reshape(out.shape + x.shape) if rows else zeros(out.shape + x.shape)
            blocks.append(block)
        rows_per_output.append(tuple(blocks))
    if not outputs_is_tuple and not inputs_is_tuple:
        return rows_per_output[0][0]
    if not outputs_is_tuple:
        return rows_per_output[0]
    if not inputs_is_tuple:
        return tuple(r[0] for r in rows_per_output)
    return tuple(rows_per_output)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Jacobian of the gradient: differentiate twice, the inner pass with create_graph."""
    inputs_tuple, inputs_is_tuple = _as_tuple(inputs)

    def gradient(*xs):
        out = func(*xs)
        if out.numel() != 1:
            raise RuntimeError(
                "The function given to hessian should return a single element Tensor"
            )
        grads = grad(out, xs, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else zeros_like(x) for g, x in zip(grads, xs))

    result = jacobian(gradient, inputs_tuple, create_graph=create_graph)
    if not inputs_is_tuple:
        return result[0][0]
    return result


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    inputs_tuple, is_tuple = _as_tuple(inputs)
    inputs_tuple = _prepare(inputs_tuple)
    out = func(*inputs_tuple)
    grads = grad(out, inputs_tuple, v, create_graph=create_graph, allow_unused=True)
    return out.detach(), grads if is_tuple else grads[0]
