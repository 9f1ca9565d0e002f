"""``reftorch.func``: function transforms, named as in ``torch.func``.

A transform takes a function and returns a new function:

    grad(f)        the gradient of a scalar-valued ``f`` (reverse mode, one backward pass)
    vjp(f, *x)     ``f(*x)`` and a function that maps a cotangent ``v`` to ``v^T J``
    jvp(f, x, t)   ``f(*x)`` and the Jacobian-vector product ``J t`` (forward mode's result)
    vmap(f)        ``f`` applied to every slice of a batch, results stacked

They compose: ``vmap(grad(loss), in_dims=(None, 0, 0))(w, xs, ys)`` is one gradient per
sample. Two honest differences from torch, for a reader:

* ``vmap`` here is a Python loop over the batch dimension followed by ``stack``. torch
  instead runs ``f`` once on the whole batch: every op has a *batching rule* that turns it
  into one batched kernel, which is why torch's vmap is fast and this one is not.
* ``jvp`` here uses two reverse passes (the "double-vjp trick", below). torch computes it in
  one forward pass with dual numbers (``torch.autograd.forward_ad``).

Only flat argument lists are supported (a tensor or ``None``-mapped value per argument,
no nested containers); the outputs may be a tensor or a tuple of tensors.
"""
from __future__ import annotations

import builtins

from .autograd import grad_mode
from .autograd.engine import grad as _autograd_grad
from .tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "vmap"]


def _fn_name(func) -> str:
    return getattr(func, "__name__", type(func).__name__)


def _argnums_tuple(argnums, count):
    picked = argnums if isinstance(argnums, tuple) else (argnums,)
    for n in picked:
        if not isinstance(n, builtins.int) or not -count <= n < count:
            raise RuntimeError(f"Got argnum={n}, but only {count} positional inputs")
    return tuple(n % count for n in picked)


def _differentiable_copy(x):
    """A handle on ``x`` this transform differentiates. If ``x`` already requires grad (an
    outer transform, or a parameter), the handle stays attached to x's graph, so an outer
    ``grad`` can differentiate through this one."""
    if x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_()


def _gradients(output, inputs, cotangent, create_graph):
    """``cotangent^T J`` for each input; an input ``output`` does not use gets zeros."""
    from .functions import zeros_like
    if not output.requires_grad:
        return tuple(zeros_like(x) for x in inputs)
    grads = _autograd_grad(output, inputs, cotangent, retain_graph=True,
                           create_graph=create_graph, allow_unused=True)
    return tuple(zeros_like(x) if g is None else g for g, x in zip(grads, inputs))


def grad_and_value(func, argnums=0, has_aux=False):
    """Like ``grad``, but the new function returns ``(gradient, value)``."""
    def wrapper(*args, **kwargs):
        positions = _argnums_tuple(argnums, len(args))
        outer_needs_graph = grad_mode.state.grad_enabled and builtins.any(
            isinstance(args[i], Tensor) and args[i].requires_grad for i in positions)
        args = list(args)
        with grad_mode.enable_grad():
            for i in positions:
                args[i] = _differentiable_copy(args[i])
            result = func(*args, **kwargs)
            output, aux = result if has_aux else (result, None)
            if not isinstance(output, Tensor) or output.dim() != 0:
                got = (f"tensor with {output.dim()} dims" if isinstance(output, Tensor)
                       else type(output).__name__)
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got {got}. Maybe you wanted to use the vjp or jacrev APIs instead?")
            grads = _gradients(output, [args[i] for i in positions], None, outer_needs_graph)
        if not outer_needs_graph:
            output = output.detach()
        gradient = grads if isinstance(argnums, tuple) else grads[0]
        return (gradient, (output, aux)) if has_aux else (gradient, output)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of ``func`` (which must return a 0-dim tensor) w.r.t. argument ``argnums``.

        >>> grad(lambda x: (x ** 3).sum())(reftorch.tensor([2.]))     # 3 x^2
        tensor([12.])
    """
    value_too = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        gradient, value = value_too(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient
    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(v)`` gives ``v^T J`` for every primal (a tuple)."""
    with grad_mode.enable_grad():
        inputs = [_differentiable_copy(p) for p in primals]
        result = func(*inputs)
    output, aux = result if has_aux else (result, None)

    def vjp_fn(cotangent):
        with grad_mode.enable_grad():
            return _gradients(output, inputs, cotangent, create_graph=False)

    return (output.detach(), vjp_fn, aux) if has_aux else (output.detach(), vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)``: how the output moves when the inputs move along
    ``tangents``.

    How, with reverse mode only: ``g(u) = u^T J`` is *linear* in ``u``, so its own
    vector-Jacobian product with ``t`` is ``t^T J^T = (J t)^T``. The first backward runs on a
    placeholder ``u`` with ``create_graph=True``; the second differentiates that w.r.t. ``u``.
    torch's forward-mode AD gets ``J t`` in a single forward pass instead.
    """
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. "
                           "E.g. it should be valid to call f(*primals).")
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           "the same python structure.")
    from .functions import zeros_like
    with grad_mode.enable_grad():
        inputs = [p.detach().requires_grad_() for p in primals]
        result = func(*inputs)
        output, aux = result if has_aux else (result, None)
        if not output.requires_grad:  # the output does not depend on the inputs
            return (output, zeros_like(output)) + ((aux,) if has_aux else ())
        placeholder = zeros_like(output).requires_grad_()
        transposed = _autograd_grad(output, inputs, placeholder, create_graph=True, allow_unused=True)
        used = [(g, t) for g, t in zip(transposed, tangents) if g is not None]
        if not used:
            forward = zeros_like(output)
        else:
            pieces = _autograd_grad([g for g, _ in used], placeholder, [t for _, t in used],
                                    allow_unused=True)[0]
            forward = zeros_like(output) if pieces is None else pieces
    out = (output.detach(), forward.detach())
    return out + (aux,) if has_aux else out


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` applied to each slice along ``in_dims`` (``None``: the same value for every
    slice), the results stacked along ``out_dims``.

    A loop, for reading: slice ``i`` of every mapped argument goes into one call of ``func``.
    torch runs ``func`` once on whole batches, through one batching rule per operation.
    """
    name = _fn_name(func)

    def wrapper(*args):
        if not isinstance(in_dims, (tuple, builtins.int)):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                f"structure of `inputs`: {len(dims)} in_dims for {len(args)} inputs.")
        sizes = []
        for arg, dim in zip(args, dims):
            if dim is None:
                continue
            if not isinstance(arg, Tensor):
                raise ValueError(
                    f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input but "
                    f"the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, "
                    "please use None as the respective in_dim")
            if not -arg.dim() <= dim < builtins.max(arg.dim(), 1) or arg.dim() == 0:
                raise ValueError(
                    f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for some input, "
                    f"but that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to "
                    f"satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
            sizes.append(arg.shape[dim])
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if len(set(sizes)) != 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        results = [func(*[a if d is None else a.select(d, i) for a, d in zip(args, dims)])
                   for i in range(sizes[0])]
        return _stack_results(results, out_dims)
    return wrapper


def _stack_results(results, out_dims):
    from .functions import stack
    if isinstance(results[0], tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(results[0])
        return tuple(stack([r[k] for r in results], dim=d) for k, d in enumerate(dims))
    return stack(results, dim=out_dims)
