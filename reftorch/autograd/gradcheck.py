"""Check a backward formula against finite differences.

For each input element, nudge it by ``eps`` both ways: ``(f(x+eps) - f(x-eps)) / 2eps``
is a column of the numerical Jacobian. The analytical Jacobian comes from backward, one
row per output element. They must agree within ``atol + rtol * |numerical|``. Use float64:
in float32 the rounding error of the difference quotient swamps the check.
"""
from __future__ import annotations

import numpy as np

from ..functions import zeros
from ..tensor import Tensor
from .engine import grad
from .grad_mode import no_grad


class GradcheckError(RuntimeError):
    pass


def _numerical(func, inputs, k, eps):
    x = inputs[k]
    flat = x._np.reshape(-1)  # writes go into x's own storage (x is contiguous here)
    columns = []
    for i in range(flat.size):
        original = flat[i]
        flat[i] = original + eps
        plus = _flat_output(func(*inputs))
        flat[i] = original - eps
        minus = _flat_output(func(*inputs))
        flat[i] = original
        columns.append((plus - minus) / (2 * eps))
    return np.stack(columns, axis=1) if columns else np.zeros((0, 0))


def _flat_output(out):
    return np.array(out.detach()._np, dtype=np.float64).reshape(-1)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **ignored):
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    tensors = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    for t in tensors:
        if t.dtype.name != "float64":
            import warnings
            warnings.warn(
                f"Input #{inputs.index(t)} requires gradient and is not a double precision "
                "floating point. This check will likely fail if all the inputs are not of "
                "double precision floating point. ", UserWarning, stacklevel=2)
    inputs = tuple(t.detach().clone(memory_format="contiguous").requires_grad_(True) if isinstance(t, Tensor) and t.requires_grad else t
                   for t in inputs)
    out = func(*inputs)
    flat_out = out.reshape(-1)
    diff_positions = [k for k, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    for k in diff_positions:
        analytical = np.zeros((flat_out.numel(), inputs[k].numel()))
        for row in range(flat_out.numel()):
            unit = zeros(flat_out.numel(), dtype=flat_out.dtype)
            unit._np[row] = 1
            (g,) = grad(flat_out, (inputs[k],), unit, retain_graph=True, allow_unused=True)
            if g is not None:
                analytical[row] = np.asarray(g._np, dtype=np.float64).reshape(-1)
        with no_grad():
            numerical = _numerical(func, inputs, k, eps)
        if not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
            message = (
                f"Jacobian mismatch for output 0 with respect to input {k},\n"
                f"numerical:{numerical}\nanalytical:{analytical}\n"
            )
            if raise_exception:
                raise GradcheckError(message)
            return False
    return True
