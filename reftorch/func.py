"""``reftorch.func``: function transforms, named as in ``torch.func``.

A transform takes a function and returns a new function:

    grad(f)             the gradient of a scalar-valued ``f`` (reverse mode, one backward pass)
    vjp(f, *x)          ``f(*x)`` and a function that maps a cotangent ``v`` to ``v^T J``
    jvp(f, x, t)        ``f(*x)`` and ``J t``, in one forward pass with dual numbers
                        (``reftorch.autograd.forward_ad``)
    jacrev(f), jacfwd(f), hessian(f)   whole Jacobians: a row per output element (reverse) or
                        a column per input element (forward); the Hessian is jacfwd(jacrev(f))
    vmap(f)             ``f`` applied to every slice of a batch, results stacked
    functional_call(m, params, args)   a module run with the parameters and buffers given

They compose: ``vmap(grad(loss), in_dims=(None, 0, 0))(w, xs, ys)`` is one gradient per
sample. One honest difference from torch, for a reader: ``vmap`` here is a Python loop over
the batch dimension followed by ``stack``; torch runs ``f`` once on the whole batch, through
one *batching rule* per operation, which is why torch's vmap is fast and this one is not.

Only flat argument lists are supported (a tensor or ``None``-mapped value per argument, no
nested containers); the outputs may be a tensor or a tuple of tensors.
"""
from __future__ import annotations

import builtins
import contextlib

from . import _modes
from .autograd import forward_ad, grad_mode
from .autograd.engine import grad as _autograd_grad
from .functions import stack, zeros, zeros_like
from .generator import get_rng_state, set_rng_state
from .tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call"]


def _fn_name(func) -> str:
    return getattr(func, "__name__", type(func).__name__)


def _argnums_tuple(argnums, count):
    picked = argnums if isinstance(argnums, tuple) else (argnums,)
    for n in picked:
        if not isinstance(n, builtins.int) or not -count <= n < count:
            raise RuntimeError(f"Got argnum={n}, but only {count} positional inputs")
    return tuple(n % count for n in picked)


def _flatten(value):
    """The tensors of a (nested) dict, tuple or list, and a function that rebuilds it from new
    ones: ``grad`` over a model's parameter dict gives a dict of gradients."""
    if isinstance(value, dict):
        parts = [_flatten(v) for v in value.values()]
        keys = list(value)
    elif isinstance(value, (tuple, list)):
        parts = [_flatten(v) for v in value]
        keys = None
    else:
        return [value], lambda leaves: leaves[0]
    counts = [len(leaves) for leaves, _ in parts]

    def rebuild(leaves):
        out, start = [], 0
        for (_, build), n in zip(parts, counts):
            out.append(build(leaves[start:start + n]))
            start += n
        return dict(zip(keys, out)) if keys is not None else type(value)(out)
    return [leaf for leaves, _ in parts for leaf in leaves], rebuild


def _differentiable_copy(x):
    """A handle on ``x`` this transform differentiates. If ``x`` already requires grad (an
    outer transform, or a parameter), the handle stays attached to x's graph, so an outer
    ``grad`` can differentiate through this one."""
    if x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_()


def _reaches_outside(tensor, inner_leaves) -> bool:
    """Whether ``tensor``'s history leads to a tensor requiring grad other than this
    transform's own inputs (a weight the function closes over, an outer transform's input)."""
    if tensor.grad_fn is None:
        return tensor.requires_grad and not builtins.any(tensor is leaf for leaf in inner_leaves)
    inner = {id(leaf) for leaf in inner_leaves}
    seen, pending = set(), [tensor.grad_fn]
    while pending:
        node = pending.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:  # a leaf's AccumulateGrad
            if id(variable) not in inner:
                return True
            continue
        pending.extend(child for child, _ in node.next_functions)
    return False


def _outer_view(value, inner_leaves):
    """What the caller sees of a result: detached unless it depends on something outside the
    transform (then its graph is kept, so an outer backward reaches that)."""
    if isinstance(value, Tensor):
        return value if value.requires_grad and _reaches_outside(value, inner_leaves) else value.detach()
    if isinstance(value, (tuple, list)):
        return type(value)(_outer_view(v, inner_leaves) for v in value)
    return value


def _gradients(output, inputs, cotangent, create_graph):
    """``cotangent^T J`` for each input; an input ``output`` does not use gets zeros."""
    if not output.requires_grad:
        return tuple(zeros_like(x) for x in inputs)
    grads = _autograd_grad(output, inputs, cotangent, retain_graph=True,
                           create_graph=create_graph, allow_unused=True)
    return tuple(zeros_like(x) if g is None else g for g, x in zip(grads, inputs))


def grad_and_value(func, argnums=0, has_aux=False):
    """Like ``grad``, but the new function returns ``(gradient, value)``."""
    def wrapper(*args, **kwargs):
        positions = _argnums_tuple(argnums, len(args))
        args = list(args)
        # with grad mode on outside, the gradient keeps a graph where it may depend on tensors
        # outside (a weight f closes over, an outer grad's input): an outer backward goes through
        outer_grad_mode = grad_mode.state.grad_enabled
        with grad_mode.enable_grad():
            structures = []
            for i in positions:  # each differentiated argument may be a dict, tuple or list of tensors
                leaves, rebuild = _flatten(args[i])
                leaves = [_differentiable_copy(leaf) for leaf in leaves]
                structures.append((leaves, rebuild))
                args[i] = rebuild(leaves)
            inner = [leaf for leaves, _ in structures for leaf in leaves]
            result = func(*args, **kwargs)
            if has_aux and not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            output, aux = result if has_aux else (result, None)
            if not isinstance(output, Tensor) or output.dim() != 0:
                got = (f"tensor with {output.dim()} dims" if isinstance(output, Tensor)
                       else type(output).__name__)
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got {got}. Maybe you wanted to use the vjp or jacrev APIs instead?")
            # a graph for the gradient only where it can lead outside (else an outer backward
            # has nothing to reach, and formulas without a double backward still work)
            grads = _gradients(output, inner, None,
                               create_graph=outer_grad_mode and _reaches_outside(output, _leaves_of(inner)))
        grads = list(_outer_view(grads, _leaves_of(inner)))
        output, aux = _outer_view(output, _leaves_of(inner)), _outer_view(aux, _leaves_of(inner))
        per_argument = []
        for leaves, rebuild in structures:  # back into each argument's structure
            per_argument.append(rebuild(grads[:len(leaves)]))
            grads = grads[len(leaves):]
        gradient = tuple(per_argument) if isinstance(argnums, tuple) else per_argument[0]
        return (gradient, (output, aux)) if has_aux else (gradient, output)
    return wrapper


def _leaves_of(inner):
    """The leaves this transform made (a view of an outer tensor leads outside on purpose)."""
    return [x for x in inner if x.grad_fn is None]


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


def _structure(value) -> str:
    """A pytree's shape as torch prints it: ``*`` a leaf, ``(*, *)`` a tuple of two."""
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_structure(v) for v in value) + ")"
    return "*"


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(v)`` gives ``v^T J`` for every primal (a tuple).
    ``v`` has the structure of the output: a tensor, or a tuple for a tuple of outputs."""
    with grad_mode.enable_grad():
        inputs = [_differentiable_copy(p) for p in primals]
        result = func(*inputs)
    output, aux = result if has_aux else (result, None)
    outputs = output if isinstance(output, tuple) else (output,)

    def vjp_fn(cotangents):
        if _structure(cotangents) != _structure(output):
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {_structure(cotangents)}, primal output: "
                f"{_structure(output)}")
        cotangents = cotangents if isinstance(cotangents, tuple) else (cotangents,)
        outer_grad_mode = grad_mode.state.grad_enabled  # (see grad_and_value)
        with grad_mode.enable_grad():
            used = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
            if not used:
                return tuple(zeros_like(x) for x in inputs)
            keep = outer_grad_mode and builtins.any(_reaches_outside(o, _leaves_of(inputs)) for o, _ in used)
            grads = _autograd_grad([o for o, _ in used], inputs, [c for _, c in used],
                                   retain_graph=True, create_graph=keep, allow_unused=True)
        grads = tuple(zeros_like(x) if g is None else g for g, x in zip(grads, inputs))
        return _outer_view(grads, _leaves_of(inputs))

    detached = tuple(o.detach() for o in outputs) if isinstance(output, tuple) else output.detach()
    return (detached, vjp_fn, aux) if has_aux else (detached, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)``: how the output moves when the inputs move along
    ``tangents``, in one forward pass: each primal becomes a dual number (value, tangent) and
    every operation carries the tangent along by its forward-derivative rule.
    """
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. "
                           "E.g. it should be valid to call f(*primals).")
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           "the same python structure.")
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(primals, tangents)]
        result = func(*duals)
        output, aux = result if has_aux else (result, None)
        outputs = output if isinstance(output, tuple) else (output,)
        unpacked = [forward_ad.unpack_dual(o) for o in outputs]
        values = tuple(u.primal.detach() for u in unpacked)
        derivatives = tuple((u.tangent if u.tangent is not None else zeros_like(u.primal)).detach()
                            for u in unpacked)
    if not isinstance(output, tuple):
        values, derivatives = values[0], derivatives[0]
    return (values, derivatives, aux) if has_aux else (values, derivatives)


def _unit_vectors(x):
    """Each basis direction of ``x``'s elements, one at a time, shaped like ``x``."""
    for i in range(x.numel()):
        unit = zeros(x.numel(), dtype=x.dtype, device=x.device)
        unit[i] = 1
        yield unit.reshape(x.shape)


def jacrev(func, argnums=0, *, has_aux=False):
    """The Jacobian by reverse mode: one vector-Jacobian product per output element (a row)."""

    def wrapper(*args):
        positions = _argnums_tuple(argnums, len(args))

        def picked_func(*picked):
            full = list(args)
            for i, value in zip(positions, picked):
                full[i] = value
            return func(*full)
        output, vjp_fn = vjp(picked_func, *[args[i] for i in positions])[:2]
        rows = [vjp_fn(unit) for unit in _unit_vectors(output)]
        blocks = tuple(stack([r[k] for r in rows]).reshape(output.shape + args[i].shape)
                       for k, i in enumerate(positions))
        return blocks if isinstance(argnums, tuple) else blocks[0]
    return wrapper


def jacfwd(func, argnums=0, *, has_aux=False, randomness="error"):
    """The Jacobian by forward mode: one Jacobian-vector product per input element (a column)."""

    def wrapper(*args):
        positions = _argnums_tuple(argnums, len(args))
        blocks = []
        for i in positions:
            columns, out_shape = [], None
            for unit in _unit_vectors(args[i]):
                tangents = tuple(unit if k == i else args[k] * 0 for k in range(len(args)))
                output, column = jvp(func, tuple(args), tangents)
                out_shape = output.shape
                columns.append(column)
            blocks.append(stack(columns, dim=-1).reshape(out_shape + args[i].shape))
        return tuple(blocks) if isinstance(argnums, tuple) else blocks[0]
    return wrapper


def hessian(func, argnums=0):
    """The matrix of second derivatives: the Jacobian of the gradient. (torch composes
    ``jacfwd(jacrev(f))``; here both passes are reverse mode, as reftorch's backward formulas
    are recorded ops but its forward mode does not look inside a backward pass.)"""
    return jacrev(jacrev(func, argnums), argnums)


# -- vmap ------------------------------------------------------------------------------
_RANDOMNESS = ("error", "different", "same")


vmap_state = _modes.vmap  # inside vmap, how random operations behave (read by every layer below)


@contextlib.contextmanager
def _randomness(mode):
    previous = vmap_state.randomness
    vmap_state.randomness = mode
    try:
        yield
    finally:
        vmap_state.randomness = previous


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` applied to each slice along ``in_dims`` (``None``: the same value for every
    slice), the results stacked along ``out_dims``. Keyword arguments are passed to every call
    unmapped.

    A loop, for reading: slice ``i`` of every mapped argument goes into one call of ``func``.
    ``randomness``: random operations inside ``func`` raise (``'error'``), draw afresh for
    each slice (``'different'``), or give every slice the same numbers (``'same'``).
    """
    name = _fn_name(func)
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")

    def wrapper(*args, **kwargs):
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
        results = _run_slices(func, args, dims, sizes[0], kwargs, randomness)
        return _stack_results(results, out_dims)
    return wrapper


def _run_slices(func, args, dims, count, kwargs, randomness):
    results, start_state, end_state = [], None, None
    with _randomness(randomness):
        for i in range(count):
            if randomness == "same":  # every slice starts from the same generator state
                start_state = get_rng_state() if start_state is None else (set_rng_state(start_state) or start_state)
            results.append(func(*[a if d is None else a.select(d, i) for a, d in zip(args, dims)], **kwargs))
            if randomness == "same" and end_state is None:
                end_state = get_rng_state()
    if end_state is not None:  # and the generator ends where one draw leaves it
        set_rng_state(end_state)
    return results


def _stack_results(results, out_dims):
    if isinstance(results[0], tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(results[0])
        return tuple(stack([r[k] for r in results], dim=d) for k, d in enumerate(dims))
    return stack(results, dim=out_dims)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """Run ``module(*args, **kwargs)`` with the named parameters and buffers replaced by the
    tensors given (dotted names, as ``named_parameters`` gives them); the module is unchanged
    afterwards. What jacrev/grad over a model's weights need."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (tuple, list)):
        merged = {}
        for d in dicts:
            overlap = set(merged) & set(d)
            if overlap:
                raise ValueError(f"{sorted(overlap)} appeared in multiple dictionaries; behavior of "
                                 "functional call is ambiguous")
            merged.update(d)
        dicts = merged
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    kwargs = {} if kwargs is None else kwargs
    saved = []
    try:
        for name, value in dicts.items():
            owner_name, _, leaf = name.rpartition(".")
            owner = module.get_submodule(owner_name)
            store = next((s for s in ("_parameters", "_buffers") if leaf in owner.__dict__[s]), None)
            if store is None:
                if strict:
                    raise RuntimeError(f"Unexpected key(s): '{name}'.")
                saved.append((owner, None, leaf, owner.__dict__.get(leaf)))
                object.__setattr__(owner, leaf, value)
                continue
            saved.append((owner, store, leaf, owner.__dict__[store][leaf]))
            owner.__dict__[store][leaf] = value  # in place of the Parameter, without registering
        return module(*args, **kwargs)
    finally:
        for owner, store, leaf, old in reversed(saved):
            if store is None:
                owner.__dict__.pop(leaf, None) if old is None else object.__setattr__(owner, leaf, old)
            else:
                owner.__dict__[store][leaf] = old
