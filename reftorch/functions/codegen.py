"""What torchgen writes in C++ from the two tables, built here at import time in plain Python.

From native_functions.py and derivatives.py (no file is generated):

- each op's Python function (``torch.add``), Tensor method (``x.add``), in-place variant
  (``x.add_``) and ``out=`` variant; an op with several overloads (``pow.Tensor_Scalar``,
  ``pow.Tensor_Tensor``, ``pow.Scalar``) gets one function that picks the overload from the
  arguments' types, as torch's Python argument parser does;
- each derivative entry's backward node (``AddBackward0``): it saves what the formulas read,
  under torch's ``_saved_*`` names, and its ``backward`` calls the formulas;
- each op's forward-mode rule, from the entry's ``result`` formula;
- the lists other parts read: which ops autocast casts (amp.py), which kernels fusion may
  fuse (fusion.py), the public names (reftorch/__init__.py).

A call goes the way torch's dispatcher sends it: autocast's casts, then autograd (the node
is recorded when an input requires grad), then the implementation; inside a forward-AD
dual level the output's tangent follows. ``ops.<name>`` reaches every op built here:
implementations call each other through it, as ATen's composite kernels call ``at::``.
"""
from __future__ import annotations

import ast
import builtins
import functools
import inspect

import numpy as np

from .. import _modes
from ..tensor import Tensor
from ._support import _NO_RULE, _fitted, _has_tangent, _tangent_of, attach_tangent, call_with_out
from .arguments import (
    _CallOptions, _dispatcher, _getter, _method_int_list, _method_varargs, _numpy_names, _parameter, _self_at,
    argument_error,
)
from .autocast import autocast_arguments
from .nodes import _HIDDEN, _Autograd, _classify, _derived_value, _reads, _result_names, build_node_class, node_name

_grad = _modes.grad_mode
_fw = _modes.forward_ad
_autocast = _modes.autocast


class _Ops:
    """Every op, as built from the tables (``ops.mul(a, b)``)."""

    def __getattr__(self, name):
        raise AttributeError(f"reftorch has no operator '{name}' (is it declared in native_functions.py?)")


ops = _Ops()


# -- forward mode -----------------------------------------------------------------------------
def _build_tangent_rule(declaration, entry, autograd):
    """The output's tangent from a call, by the entry's ``result`` formula."""
    rule = entry.result
    schema, impl = declaration.schema, declaration.impl
    arguments = {a.name: a for a in schema.arguments}
    index = {a.name: i for i, a in enumerate(schema.arguments)}
    results = _result_names(schema)
    single = len(schema.returns) == 1

    def reader(name):
        """A function (args, kwargs, result) -> what a tangent formula's parameter ``name`` is."""
        if name in results:
            i = results[name]
            return lambda args, kwargs, result: result if single else result[i]
        if name.endswith("_t") and name[:-2] in arguments:
            get = _getter(impl, schema, index[name[:-2]], arguments[name[:-2]])
            return lambda args, kwargs, result: _tangent_of(get(args, kwargs))
        kind, base = _classify(name, arguments, results)
        if kind not in ("argument", "derived"):
            raise TypeError(f"{entry.where}: the forward formula of {entry.name} reads '{name}'")
        get = _getter(impl, schema, index[base], arguments[base])
        if kind == "argument":
            return lambda args, kwargs, result: get(args, kwargs)
        return lambda args, kwargs, result: _derived_value(name, get(args, kwargs))

    if rule == "auto_linear":
        def tangent(args, kwargs, result, run):
            # the op itself, on the tangents of its differentiable inputs
            args, kwargs = list(args), dict(kwargs)
            for name in autograd.edges:
                _replace(declaration, name, args, kwargs, _tangent_of)
            return run(*args, **kwargs)
        return tangent
    if rule == "auto_element_wise":  # the backward formula, with the tangent for grad
        (formula,) = [f for f in entry.formulas.values() if f != "non_differentiable"]
        edge = autograd.edges[0]
        edge_get = _getter(impl, schema, index[edge], arguments[edge])
        readers = [(lambda args, kwargs, result: _tangent_of(edge_get(args, kwargs))) if p == "grad" else reader(p)
                   for p in _reads(formula)]
        return lambda args, kwargs, result, run: formula(*[read(args, kwargs, result) for read in readers])
    readers = [reader(p) for p in _reads(rule)]
    return lambda args, kwargs, result, run: rule(*[read(args, kwargs, result) for read in readers])


def _replace(declaration, name, args, kwargs, fn):
    """Replace argument ``name`` of a call by ``fn(value)`` (where the implementation takes it)."""
    impl = declaration.impl
    parameters = list(inspect.signature(impl).parameters.values())
    index = [a.name for a in declaration.schema.arguments].index(name)
    parameter = _parameter(impl, declaration.schema, index, declaration.schema.arguments[index])
    position = parameters.index(parameter)
    if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
        args[position:] = [fn(v) for v in args[position:]]
    elif parameter.kind is not inspect.Parameter.KEYWORD_ONLY and len(args) > position:
        args[position] = fn(args[position])
    elif parameter.name in kwargs:
        kwargs[parameter.name] = fn(kwargs[parameter.name])


def _attach(result, tangent, differentiable=None):
    if isinstance(result, Tensor):
        if tangent is not None and result.dtype.is_floating_point:
            attach_tangent(result, _fitted(tangent, result))
        return result
    tangents = tangent if isinstance(tangent, (tuple, list)) else (tangent,) + (None,) * (len(result) - 1)
    for i, (value, value_tangent) in enumerate(zip(result, tangents)):
        if differentiable is not None and not differentiable[i]:
            continue
        if isinstance(value, Tensor) and value_tangent is not None and value.dtype.is_floating_point:
            attach_tangent(value, _fitted(value_tangent, value))
    return result


def _write_tangent(target, tangent):
    """An in-place op's new tangent: written into the target's own (a view's tangent is a
    view of its base's: a base without one gets zeros first, as in torch), or attached."""
    tangent = _fitted(tangent, target)
    base = target._base
    if target._fw_grad is None and base is not None and (
            base._fw_grad is None or base._fw_grad._stride == base._stride):
        if base._fw_grad is None:
            zeros = Tensor._wrap(np.zeros(len(base._storage), dtype=base._np.dtype), base._device)
            attach_tangent(base, Tensor._view_of(zeros, base._shape, base._stride, base._offset))
            base._fw_grad._base = None
        held = base._fw_grad
        attach_tangent(target, Tensor._view_of(held, target._shape, target._stride,
                                               held._offset + target._offset - base._offset))
    if target._fw_grad is not None:
        np.copyto(target._fw_grad._np, tangent._np, casting="unsafe")
    else:
        attach_tangent(target, tangent)


def _inplace_forward_mode(inplace, functional):
    """``x.op_(...)`` inside a dual level: the functional op's tangent rule, run on a copy of
    x's old values (with x's tangent), gives x's new tangent."""
    def run(self, *args, **kwargs):
        if _fw.level is None or _fw.computing or not (
                _has_tangent((self,) + args) or _has_tangent(kwargs.values())):
            return inplace(self, *args, **kwargs)
        old = Tensor._wrap(self._np.copy(), self._device)
        old._fw_grad = self._fw_grad
        new = functional(old, *args, **kwargs)
        _fw.computing = True  # the write itself carries no tangent: it is the one computed above
        try:
            result = inplace(self, *args, **kwargs)
        finally:
            _fw.computing = False
        if new._fw_grad is not None:
            _write_tangent(self, new._fw_grad)
        return result
    return run


def _floating(out) -> bool:
    if isinstance(out, Tensor):
        return out.dtype.is_floating_point
    return isinstance(out, (tuple, list)) and builtins.any(_floating(v) for v in out)


# -- one overload: autocast -> autograd -> implementation (-> tangent) -------------------------
def build_overload(declaration, entry, node_class, run_inplace):
    """The call of one overload, the way torch's dispatcher runs it."""
    impl = declaration.impl
    policy = declaration.autocast
    autograd = _Autograd(declaration, entry, node_class) if entry is not None else None
    tangent_rule = None
    if entry is not None and entry.result is not None:
        tangent_rule = _build_tangent_rule(declaration, entry, autograd)
    differentiable = entry.output_differentiability if entry is not None else None
    name = declaration.name
    in_place = name.endswith("_") and "inplace_view" not in declaration.tags
    refused = autograd is not None and bool(autograd.refused)

    def tangent_of_call(args, kwargs, result):
        if tangent_rule is None:
            raise NotImplementedError(_NO_RULE.format(f"aten::{name}"))
        _fw.computing = True
        try:
            return tangent_rule(args, kwargs, result, run)
        finally:
            _fw.computing = False

    options = _CallOptions(declaration)

    def run(*args, **kwargs):
        try:
            if kwargs:  # the spellings torch's Python parser accepts, and out=
                if options.numpy_names and ("axis" in kwargs or "keepdims" in kwargs):
                    kwargs = _numpy_names(kwargs)
                if "out" in kwargs and options.out is not None:
                    out = kwargs.pop("out")
                    if out is not None:
                        return call_with_out(run, options.out, args, kwargs, out)
            if options.packed is not None and len(args) == options.packed + 1 and isinstance(args[-1], (tuple, list)):
                args = args[:-1] + tuple(args[-1])  # x.view((2, 3)) for an implementation taking view(*size)
            if policy is not None and _autocast.cpu.enabled and not _autocast.running:
                args, kwargs = autocast_arguments(policy, args, kwargs)
                _autocast.running = True
                try:
                    return run(*args, **kwargs)
                finally:
                    _autocast.running = False
            if in_place:
                result = run_inplace(impl, autograd, args, kwargs)
                if _fw.level is not None and not _fw.computing and (_has_tangent(args) or _has_tangent(kwargs.values())):
                    _write_tangent(result, tangent_of_call(args, kwargs, result))
                return result
            if autograd is not None and _grad.grad_enabled:
                if refused:
                    autograd.check_refused(args, kwargs)
                values = autograd.edge_values(args, kwargs)
                if values is not None:
                    _grad.grad_enabled = False  # the implementation computes; only its node is recorded
                    try:
                        result = impl(*args, **kwargs)
                    finally:
                        _grad.grad_enabled = True
                    autograd.record(args, kwargs, result, values)
                else:
                    result = impl(*args, **kwargs)
            else:
                result = impl(*args, **kwargs)
            if _fw.level is not None and not _fw.computing and autograd is not None and _floating(result) and (
                    _has_tangent(args) or _has_tangent(kwargs.values())):
                return _attach(result, tangent_of_call(args, kwargs, result), differentiable)
            return result
        except (AttributeError, TypeError) as error:  # an argument of a type the schema does not take?
            refusal = argument_error(declaration.python_name or name, declaration, None, args, kwargs)
            if refusal is None:
                raise
            raise refusal from error

    run.autograd = autograd
    run.options = options
    run.declaration = declaration
    return run


def _public(run, declaration, name):
    """Dress the call as the op's Python function: its name, the schema, the implementation's
    docstring (and source, through ``__wrapped__``)."""
    functools.update_wrapper(run, declaration.impl)
    run.__name__ = run.__qualname__ = name
    doc = inspect.getdoc(declaration.impl)
    run.__doc__ = f"``{declaration.schema}``" + (f"\n\n{doc}" if doc else "")
    run.declaration = declaration
    return run


# -- the whole table ---------------------------------------------------------------------------
class Generated:
    """What ``generate`` built: the functions by Python name, the methods, the nodes."""

    def __init__(self):
        self.functions = {}      # Python name -> function (torch.<name>)
        self.methods = {}        # method name -> function (Tensor.<name>)
        self.nodes = {}          # node name -> class
        self.declarations = []   # every NativeFunction
        self.overloads = {}      # "name.overload" -> the overload's call
        self.public = []         # names for reftorch's namespace

    def explain(self, name: str) -> str:
        """What the tables say about op ``name`` (``"mul.Tensor"``, or ``"mul"`` for its first
        overload) and what ``generate`` built from them: the two entries as written, then the
        Python names, and the node with its ``_saved_*`` names."""
        full = name if name in self.overloads else next(
            (n for n in self.overloads if n.split(".")[0] == name), None)
        if full is None:
            raise KeyError(f"native_functions.py declares no op {name!r}")
        run = self.overloads[full]
        declaration, node = run.declaration, run.node_class
        parts = [_entry_text(declaration.where)]
        if node is not None:
            parts.append(_entry_text(node.entry.where))
        python = declaration.python_name or declaration.name
        names = (python,) + declaration.aliases
        made = []
        if "function" in declaration.variants:
            made.append("function  " + ", ".join(f"reftorch.{n}" for n in names))
        if "method" in declaration.variants:
            made.append("method    " + ", ".join(f"Tensor.{n}" for n in (declaration.method_name or python,)
                                                 + declaration.aliases))
        if "inplace" in declaration.variants:
            made.append("in place  " + ", ".join(f"Tensor.{n}_" for n in names))
        if "out" in declaration.variants:
            made.append(f"out=      reftorch.{python}(..., out=t)")
        if not made:
            made.append(f"internal  functions.ops.{python}")
        if node is not None:
            inputs = ", ".join(n.strip() for key, f in node.entry.formulas.items() if f != "non_differentiable"
                               for n in key.split(","))
            saved = sorted("_saved_" + n for n in node._save_names + node._value_names if not n.endswith(_HIDDEN))
            made.append(f"node      {node().name()}: gradients for {inputs}; saves {', '.join(saved) or 'nothing'}")
        return "\n".join(parts) + "\ngenerates:\n" + "\n".join("    " + m for m in made)


def _entry_text(where: str) -> str:
    """The table entry written at ``where`` (file:line), as it stands in the file."""
    path, line = where.rsplit(":", 1)
    source = open(path, encoding="utf-8").read()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and node.lineno == int(line) and getattr(node.func, "id", None) in (
                "func", "derivative"):
            lines = source.splitlines()[node.lineno - 1:node.end_lineno]
            return f"{path.rsplit('/', 1)[-1]}:\n" + "\n".join(lines)  # (no line number: it moves)
    return where


def _numbered(derivatives):
    """Each entry with the count of its name's entries above it (the N of ``...BackwardN``)."""
    entries, counts = {}, {}
    for entry in derivatives:
        if entry.name in entries:
            raise ValueError(f"{entry.where}: a second derivative entry for {entry.name}")
        base = entry.name.split(".")[0].rstrip("_")
        entries[entry.name] = (entry, counts.get(base, 0))
        counts[base] = counts.get(base, 0) + 1
    return entries


def _inplace_entry_name(declaration):
    """``fill_.Scalar`` for ``fill.Scalar``: an in-place variant's own derivatives.yaml entry."""
    schema = declaration.schema
    return f"{schema.name}_.{schema.overload}" if schema.overload else f"{schema.name}_"


def generate(native_functions, derivatives, inplace_variant, run_inplace):
    """Build every op of the tables (see the module's docstring). inplace.py knows how to
    run an in-place op: ``inplace_variant(op, declaration)`` builds ``x.op_`` from the
    functional op, ``run_inplace`` runs an op that exists only in place."""
    out = Generated()
    entries = _numbered(derivatives)
    declared = {d.schema.full_name for d in native_functions}
    inplace_entries = {_inplace_entry_name(d) for d in native_functions if "inplace" in d.variants}
    for name, (entry, _) in entries.items():
        if name not in declared and name not in inplace_entries:
            raise ValueError(f"{entry.where}: derivative for {name}, which native_functions.py does not declare")

    def build(declaration, key):
        entry, number = entries.get(key, (None, 0))
        node_class = None
        if entry is not None:
            node_class = build_node_class(declaration, entry, node_name(entry, number))
            out.nodes.setdefault(node_class.__name__, node_class)
        run = build_overload(declaration, entry, node_class, run_inplace)
        run.node_class = node_class
        return run

    by_python_name = {}
    for declaration in native_functions:
        run = build(declaration, declaration.schema.full_name)
        out.overloads[declaration.schema.full_name] = run
        out.declarations.append(declaration)
        by_python_name.setdefault(declaration.python_name or declaration.name, []).append((declaration, run))
    for python_name, overloads in by_python_name.items():
        declaration = overloads[0][0]
        call = _python_call(python_name, overloads)
        variants = set().union(*(d.variants for d, _ in overloads))
        if "out" in variants:
            out_declaration = next(d for d, _ in overloads if "out" in d.variants)
            for _, run in overloads:
                run.options.out = (python_name, out_declaration.out_dtype, "factory" in out_declaration.tags)
        call = _public(call, declaration, python_name)
        names = (python_name,) + declaration.aliases
        for n in names:
            setattr(ops, n, call)
        if "function" in variants:
            out.functions.update({n: call for n in names})
            out.public.extend(n for n in names if not n.startswith("_"))
        if "method" in variants:
            method = declaration.method_name or python_name
            int_list = _method_int_list(declaration) if len(overloads) == 1 else None
            method_call = call if int_list is None else \
                _public(_method_varargs(call, method, int_list), declaration, method)
            position = [a.name for a in declaration.schema.arguments].index("self")
            if position:  # x.where(c, y) is where(c, x, y): the method's tensor is the schema's self
                method_call = _public(_self_at(method_call, position), declaration, method)
            out.methods.update({n: method_call for n in (method,) + declaration.aliases})
        if "inplace" in variants:
            # the functional op, with the in-place entry's node where derivatives.py has one
            functional = _python_call(python_name, [
                (d, build(d, _inplace_entry_name(d)) if _inplace_entry_name(d) in entries else run)
                for d, run in overloads])
            inplace = _inplace_forward_mode(inplace_variant(functional, declaration), functional)
            inplace = _public(inplace, declaration, python_name + "_")
            inplace.__doc__ = f"In place: ``{python_name}`` written into ``self``.\n\n" + inplace.__doc__
            for n in names:
                setattr(ops, n + "_", inplace)
                if "nn" not in declaration.tags:  # elu_, celu_, threshold_... are no Tensor methods
                    out.methods[n + "_"] = inplace
                if "function" in variants and "pointwise" in declaration.tags:
                    out.functions[n + "_"] = inplace  # torch.exp_ (and friends) exist too
    return out


def _python_call(python_name, overloads):
    """The Python function of one name: its only overload, or a choice between several;
    with the argument spellings torch's parser accepts (``axis=``, ints one at a time)."""
    if len(overloads) > 1:
        numpy_names = builtins.any(run.options.numpy_names for _, run in overloads)
        for _, run in overloads:
            run.options.numpy_names = numpy_names
        return _dispatcher(python_name, overloads)
    return overloads[0][1]


def pointwise_kernels(declarations) -> frozenset:
    """The kernels of the ops tagged ``pointwise`` (what fusion may fuse)."""
    return frozenset(d.kernel for d in declarations if "pointwise" in d.tags and d.kernel)


def autocast_lists(declarations) -> dict:
    """{policy: the names of the ops autocast casts that way} (amp.py prints them)."""
    lists = {"lower_precision": [], "float32": [], "promote": []}
    for d in declarations:
        if d.autocast:
            for n in ((d.python_name or d.name),) + d.aliases:
                if n not in lists[d.autocast]:
                    lists[d.autocast].append(n)
    return {k: tuple(v) for k, v in lists.items()}
