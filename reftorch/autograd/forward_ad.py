"""Forward-mode AD: dual numbers. A tensor carries, beside its value x, a tangent dx (how
it moves along one chosen direction), and every operation maps (x, dx) to (f(x), f'(x) dx)
in the same pass: one forward run gives a Jacobian-vector product J @ v.

    with dual_level():
        x = make_dual(primal, tangent)      # x = primal + tangent * eps, with eps**2 = 0
        y = f(x)
        value, jvp = unpack_dual(y)         # f(primal), J @ tangent

Each operation's tangent rule (its forward derivative) is the ``jvp`` attribute of the op,
written beside its backward formula in reftorch/functions/ (as derivatives.yaml's ``result:``
lines are). ``functions._support.forward_mode`` wraps every public op: with no dual level
open it only checks one flag; inside one, it computes the output's tangent from the inputs'
with that rule, and refuses an op that has none (torch does the same).
"""
from __future__ import annotations

import weakref
from collections import namedtuple

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]


class _State:
    level = None      # the open dual level (only one at a time, as in torch)
    computing = False  # True while a tangent rule runs: its own ops carry no tangents
    duals: list = []   # weak references to the tensors given a tangent in this level


state = _State()


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


def _attach(tensor, tangent):
    tensor._fw_grad = tangent
    state.duals.append(weakref.ref(tensor))
    return tensor


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
    from ..functions import _make_view, AliasBackward0
    dual = _make_view(tensor, tensor._shape, tensor._stride, tensor._offset, AliasBackward0)
    return _attach(dual, tangent)


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)``: the primal is a view of ``tensor`` without the tangent."""
    from ..functions import _make_view, AliasBackward0
    primal = _make_view(tensor, tensor._shape, tensor._stride, tensor._offset, AliasBackward0)
    return UnpackedDualTensor(primal, tensor._fw_grad if state.level is not None else None)
