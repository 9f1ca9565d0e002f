"""Forward-mode AD: dual numbers. A tensor carries, beside its value x, a tangent dx (how
it moves along one chosen direction), and every operation maps (x, dx) to (f(x), f'(x) dx)
in the same pass: one forward run gives a Jacobian-vector product J @ v.

    with dual_level():
        x = make_dual(primal, tangent)      # x = primal + tangent * eps, with eps**2 = 0
        y = f(x)
        value, jvp = unpack_dual(y)         # f(primal), J @ tangent

Each operation's tangent rule (its forward derivative) is the ``result=`` formula of its
entry in functions/derivatives.py (as in derivatives.yaml). codegen runs every op with it:
with no dual level open it only checks one flag; inside one, it computes the output's
tangent from the inputs' with that rule, and refuses an op that has none (torch does the
same). An op without an entry is composite: the ops it calls carry the tangents.
"""
from __future__ import annotations

from collections import namedtuple

from .. import _modes
from ..functions import ops
from ..functions._support import attach_tangent

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]


state = _modes.forward_ad  # the open level, which every op reads, lives in _modes.py


class UnpackedDualTensor(namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """``(primal, tangent)``: the value and its forward gradient (None if it has none)."""

    __slots__ = ()


def enter_dual_level():
    if state.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    state.level = 0
    state.duals = []
    return state.level


def exit_dual_level(*, level=None):
    """Close the level: every tangent made in it is dropped."""
    for ref in state.duals:
        tensor = ref()
        if tensor is not None:
            tensor._fw_grad = None
    state.duals = []
    state.level = None


class dual_level:
    """``with dual_level():`` opens the level in which dual tensors live."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient."""
    if state.level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make "
                           "sure to enter_dual_level() first.")
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
            f"forward gradient is of size {list(tangent.shape)}.")
    return attach_tangent(ops.alias(tensor), tangent)


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)``: the primal is a view of ``tensor`` without the tangent."""
    state.computing = True  # the primal is the plain value: its alias carries no tangent
    try:
        primal = ops.alias(tensor)
    finally:
        state.computing = False
    return UnpackedDualTensor(primal, tensor._fw_grad if state.level is not None else None)
