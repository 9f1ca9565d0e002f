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

from .. import _modes, dtypes
from ..autograd.graph import Node, SavedTensor
from ..tensor import Tensor
from ._support import _NO_RULE, _fitted, _has_tangent, _record, _tangent_of, attach_tangent, call_with_out
from .autocast import autocast_arguments
from .schema import NO_DEFAULT

_grad = _modes.grad_mode
_fw = _modes.forward_ad
_autocast = _modes.autocast
_MISSING = object()


class _Ops:
    """Every op, as built from the tables (``ops.mul(a, b)``)."""

    def __getattr__(self, name):
        raise AttributeError(f"reftorch has no operator '{name}' (is it declared in native_functions.py?)")


ops = _Ops()


# -- reading a call's arguments by the schema's names ------------------------------------
def _getter(impl, schema, index, arg):
    """A function ``(args, kwargs) -> value`` reading schema argument ``arg`` from a call of
    ``impl``: the schema's first argument is the implementation's first parameter, the others
    go by name."""
    parameter = _parameter(impl, schema, index, arg)
    parameters = list(inspect.signature(impl).parameters.values())
    name, default = parameter.name, parameter.default
    default = _MISSING if default is inspect.Parameter.empty else default
    if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
        position = parameters.index(parameter)

        def read_varargs(args, kwargs):
            rest = args[position:]
            if len(rest) == 1 and isinstance(rest[0], (tuple, list)):
                return tuple(rest[0])
            return tuple(rest) if rest else kwargs.get(name, default)
        return read_varargs
    if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
        return lambda args, kwargs: kwargs.get(name, default)
    position = parameters.index(parameter)
    return lambda args, kwargs: args[position] if len(args) > position else kwargs.get(name, default)


def _parameter(impl, schema, index, arg):
    """The implementation's parameter for schema argument ``arg``: the same name (``self`` may
    be called ``input``, as in torch's Python signatures), or the first for the first."""
    parameters = list(inspect.signature(impl).parameters.values())
    names = (arg.name, "input") if arg.name == "self" else (arg.name,)
    for name in names:
        for p in parameters:
            if p.name == name:
                return p
    if index == 0:
        return parameters[0]
    raise TypeError(f"{schema.full_name}: the implementation {impl.__qualname__} has no parameter '{arg.name}'")


_NUMBERS = (builtins.int, builtins.float, builtins.bool, np.generic)


def _accepts(type_: str, value, numbers_as_tensors=False) -> bool:
    """Whether ``value`` fits a schema type, for picking an overload (a number fits a
    Tensor only when no overload took it as a number: torch wraps it then)."""
    if value is None:
        return type_.endswith("?")
    base = type_.split("(")[0].rstrip("?")
    if base == "Tensor":
        return isinstance(value, Tensor) or (numbers_as_tensors and isinstance(value, _NUMBERS))
    if base.startswith("Tensor"):
        return isinstance(value, (list, tuple)) and builtins.all(isinstance(v, Tensor) or v is None for v in value)
    if base == "Scalar":
        return isinstance(value, (builtins.int, builtins.float, builtins.bool, np.generic))
    if base in ("int", "SymInt"):
        return isinstance(value, (builtins.int, np.integer)) and not isinstance(value, builtins.bool)
    if base.startswith(("int[", "SymInt[")):
        return isinstance(value, (builtins.int, np.integer, list, tuple)) and not isinstance(value, builtins.bool)
    if base == "bool":
        return isinstance(value, (builtins.bool, np.bool_))
    if base == "float":
        return isinstance(value, (builtins.int, builtins.float, np.generic)) and not isinstance(value, builtins.bool)
    if base == "str":
        return isinstance(value, str)
    if base == "ScalarType":
        return isinstance(value, dtypes.dtype)
    return True


_PYTHON_TYPE_NAMES = {"Tensor": "Tensor", "Scalar": "Number", "int": "int", "SymInt": "int", "float": "float",
                      "bool": "bool", "str": "str", "ScalarType": "torch.dtype"}


def _python_type_name(type_: str) -> str:
    """How torch's Python parser names a schema type in its messages."""
    base = type_.split("(")[0].rstrip("?")
    if base.startswith(("int[", "SymInt[")):
        return "tuple of ints"
    if base.startswith("Tensor["):
        return "tuple of Tensors"
    return _PYTHON_TYPE_NAMES.get(base, base)


def argument_error(name, declaration, getters, args, kwargs):
    """torch's message for the first argument of a call whose type the schema does not take
    (``exp(): argument 'input' (position 1) must be Tensor, not list``), or None."""
    if getters is None:
        getters = [(a.type, _getter(declaration.impl, declaration.schema, i, a))
                   for i, a in enumerate(declaration.schema.arguments)]
    for position, (argument, (type_, get)) in enumerate(zip(declaration.schema.arguments, getters)):
        value = get(args, kwargs)
        if value is _MISSING or value is None or _accepts(type_, value, numbers_as_tensors=True):
            continue  # (None: maybe the implementation's own default for an argument not given)
        if isinstance(value, (tuple, list)) and type_.startswith("Tensor["):
            return None  # (a list of tensors with a wrong element: the implementation says which)
        python = "input" if argument.name == "self" else argument.name
        where = f" (position {position + 1})" if not argument.kwarg_only and position < len(args) else ""
        return TypeError(f"{name}(): argument '{python}'{where} must be {_python_type_name(type_)}, "
                         f"not {type(value).__name__}")
    return None


def _numpy_names(kwargs):
    """torch also accepts NumPy's ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``."""
    if "axis" in kwargs:
        kwargs["dim"] = kwargs.pop("axis")
    if "keepdims" in kwargs:
        kwargs["keepdim"] = kwargs.pop("keepdims")
    return kwargs


# -- backward nodes --------------------------------------------------------------------------
class GeneratedNode(Node):
    """A backward node built from a derivatives.py entry.

    ``_formulas``: (the inputs a formula gives gradients for, the formula, the names it reads).
    ``_save_names``: the tensors it keeps, in the order torch packs them (inputs by name,
    then outputs); the other values it reads are kept in ``_values`` and read as
    ``_saved_<name>`` too."""

    _formulas: tuple = ()
    _save_names: tuple = ()
    _value_names: tuple = ()
    _frees_values = False  # a value is a list of tensors, freed with the saved tensors
    _cpp_name = None   # torch's name when its node is written by hand in C++ (CopyBackwards)
    entry = None       # the Derivative
    declaration = None  # the NativeFunction

    def name(self) -> str:
        return self._cpp_name or type(self).__name__

    def __getattr__(self, name):
        if name.startswith("_saved_") and name[7:] in type(self)._value_names and not name.endswith(_HIDDEN):
            return self._values[name[7:]]
        return Node.__getattr__(self, name)

    def release(self):
        """Free what backward saved: tensors (and a list of them, such as ``index``'s indices)."""
        if self._frees_values:
            self._freed = True
            self._saved = None
        else:
            super().release()

    def __dir__(self):
        return sorted(set(super().__dir__()) | {"_saved_" + n for n in self._save_names + self._value_names
                                                if not n.endswith(_HIDDEN)})

    def backward(self, *grads):
        # where each formula's parameters come from: saved tensors, kept values, the gradients
        sources = (self.saved_values, self._values, grads[0], grads, self._mask)
        spans, is_list, mask = self._spans, self._is_list, self._mask
        results = [None] * self._edge_count
        for targets, formula, reads in self._compiled:
            if not (mask[targets[0]] or (len(targets) > 1 and builtins.any([mask[t] for t in targets]))):
                continue
            value = formula(*[sources[kind] if key is None else sources[kind][key] for kind, key in reads])
            outputs = (value,) if len(targets) == 1 else value
            for target, grad in zip(targets, outputs):
                start, stop = spans[target]
                if not is_list[target]:
                    results[start] = grad
                elif grad is not None:
                    results[start:stop] = grad
        return tuple(results)


def node_name(entry, overload_number) -> str:
    """torch's name for the node of ``name.overload``: the name in title case (``log1p`` ->
    ``Log1P``, ``_softmax`` -> ``Softmax``, ``nll_loss_forward`` -> ``NllLoss``),
    ``Backward``, and the count of that name's entries above it in derivatives.yaml
    (``entry.number`` where reftorch lacks some of them)."""
    if entry.node:
        return entry.node
    base = entry.name.split(".")[0]
    title = ("".join(part.title() for part in base.split("_")) + "Backward").replace("ForwardBackward", "Backward")
    number = entry.number if entry.number is not None else overload_number
    return f"{title}{number}"


_DERIVED = ("_sym_sizes_opt", "_sym_sizes", "_sym_strides", "_sym_numel", "_dim", "_geometry", "_args_sizes")
_HIDDEN = ("_geometry", "_args_sizes")  # torch keeps these too, but its Python nodes do not show them


def _derived_value(name, value):
    """``self_sym_sizes`` and friends: what a formula reads about an argument, not the argument."""
    if name.endswith("_sym_sizes_opt"):  # of an optional tensor (convolution's bias)
        return None if value is None else value._shape
    if name.endswith("_sym_sizes"):
        return value._shape
    if name.endswith("_sym_strides"):
        return value._stride
    if name.endswith("_sym_numel"):
        return value.numel()
    if name.endswith("_dim"):
        return value.dim()
    if name.endswith("_geometry"):  # torch's TensorGeometry: what as_strided's backward needs
        return value._shape, value._stride, value._offset, len(value._storage)
    return [t._shape for t in value]  # _args_sizes, of a tensor list


def _result_names(schema):
    """What formulas call the outputs: ``result`` (one output), ``result0``, ``result1``...,
    and the returns' own names (``values``, ``indices``)."""
    names = {}
    for i, ret in enumerate(schema.returns):
        names[f"result{i}"] = i
        if ret.name:
            names[ret.name] = i
    if len(schema.returns) == 1:
        names["result"] = 0
    return names


def _reads(fn):
    return tuple(inspect.signature(fn).parameters)


def _classify(name, arguments, results):
    """What a formula's parameter ``name`` is: an output, an argument, a derived value of an
    argument, or (None) one of grad / grads / grad_input_mask."""
    if name in ("grad", "grads", "grad_input_mask"):
        return None, None
    if name in results:
        return "output", name
    if name in arguments:
        return "argument", name
    for suffix in _DERIVED:
        if name.endswith(suffix) and name[:-len(suffix)] in arguments:
            return "derived", name[:-len(suffix)]
    return "unknown", name


def build_node_class(declaration, entry, name):
    """The backward node class for ``declaration`` from its derivative ``entry``."""
    schema = declaration.schema
    formulas_by_input = {k: v for k, v in entry.formulas.items() if v != "non_differentiable"}
    inputs = [n.strip() for key in formulas_by_input for n in key.split(",")]
    edges = [a.name for a in schema.arguments if a.name in inputs]
    unknown = set(inputs) - set(edges)
    if unknown:
        raise TypeError(f"{entry.where}: {entry.name} has no tensor argument {sorted(unknown)}")
    results = _result_names(schema)
    arguments = {a.name: a for a in schema.arguments}
    formulas, tensor_inputs, tensor_outputs, values = [], set(), set(), set()
    for key, formula in formulas_by_input.items():
        reads = _reads(formula)
        for r in reads:
            kind, _ = _classify(r, arguments, results)
            if kind == "output":
                tensor_outputs.add(r)
            elif kind == "argument" and arguments[r].is_tensor:
                tensor_inputs.add(r)
            elif kind in ("argument", "derived"):
                values.add(r)
            elif kind == "unknown":
                raise TypeError(f"{entry.where}: a formula of {entry.name} reads '{r}', which is not an "
                                "argument, an output, or a property of an argument")
        formulas.append((tuple(edges.index(n.strip()) for n in key.split(",")), formula, reads))
    saved_names = tuple(sorted(tensor_inputs)) + tuple(sorted(tensor_outputs))
    special = {"grad": 2, "grads": 3, "grad_input_mask": 4}
    compiled = tuple((targets, formula, tuple(
        (special[r], None) if r in special else (0, saved_names.index(r)) if r in saved_names else (1, r)
        for r in reads)) for targets, formula, reads in formulas)
    cpp_name = name if name.startswith("torch::") else None
    return type(name.rsplit("::", 1)[-1], (GeneratedNode,), {
        "_formulas": tuple(formulas), "_compiled": compiled, "_save_names": saved_names,
        "_value_names": tuple(sorted(values)), "_cpp_name": cpp_name, "entry": entry, "declaration": declaration,
        "_frees_values": builtins.any(v in arguments and arguments[v].is_tensor_list for v in values),
        "__module__": "reftorch.functions.derivatives",
        "__doc__": f"Backward of ``{schema}`` (derivatives.py: {entry.where.rsplit('/', 1)[-1]})."})


_NO_VALUES: dict = {}  # (shared by the nodes that keep no values: never written to)


class _Autograd:
    """What an op needs to record its node: which arguments are its graph's inputs, and how
    to read everything its formulas read from a call."""

    def __init__(self, declaration, entry, node_class):
        schema, impl = declaration.schema, declaration.impl
        self.node_class = node_class
        self.name = schema.name
        arguments = {a.name: a for a in schema.arguments}
        results = _result_names(schema)
        index = {a.name: i for i, a in enumerate(schema.arguments)}
        needed = set()
        for _, _, reads in node_class._formulas:
            for r in reads:
                kind, base = _classify(r, arguments, results)
                if kind in ("argument", "derived"):
                    needed.add(base)
        formula_inputs = [n.strip() for key, f in entry.formulas.items() if f != "non_differentiable"
                          for n in key.split(",")]
        non_differentiable = [n.strip() for key, f in entry.formulas.items() if f == "non_differentiable"
                              for n in key.split(",")]
        self.edges = [a.name for a in schema.arguments if a.name in formula_inputs]
        # a floating tensor that has no formula: torch refuses it requiring grad
        self.refused = [a.name for a in schema.arguments if a.is_tensor and a.name not in formula_inputs
                        and a.name not in non_differentiable and not a.type.endswith("!)")]
        getters = {n: _getter(impl, schema, index[n], arguments[n])
                   for n in set(self.edges) | needed | set(self.refused)}
        self.edge_is_list = tuple(arguments[n].is_tensor_list for n in self.edges)
        self.any_list = builtins.any(self.edge_is_list)
        self.edge_getters = tuple(getters[n] for n in self.edges)
        self.refused_getters = [(n, getters[n]) for n in self.refused]
        self.differentiable = entry.output_differentiability
        self.fallback = node_class.__name__ == "NotImplemented"
        # for each saved tensor: which edges' formulas read it, and where it comes from
        readers = {}
        for targets, _, reads in node_class._formulas:
            for r in reads:
                readers.setdefault(r, set()).update(targets)
        # (the first edge whose formula reads it, when only one does; else all of them)
        self.saved = tuple((sorted(readers[n])[0] if len(readers[n]) == 1 else tuple(sorted(readers[n])),
                            results.get(n), getters.get(n)) for n in node_class._save_names)
        self.values = tuple((n, kind == "derived", getters[base]) for n in node_class._value_names
                            for kind, base in [_classify(n, arguments, results)])
        self.spans = [(i, i + 1) for i in range(len(self.edges))]

    def edge_values(self, args, kwargs):
        """The values of the graph's inputs in this call, or None when none requires grad."""
        values, needs = [], False
        for get in self.edge_getters:
            value = get(args, kwargs)
            values.append(value)
            if not needs:
                if isinstance(value, Tensor):
                    needs = value._requires_grad
                elif isinstance(value, (list, tuple)):
                    needs = builtins.any(isinstance(v, Tensor) and v._requires_grad for v in value)
        return values if needs else None

    def check_refused(self, args, kwargs):
        for name, get in self.refused_getters:
            value = get(args, kwargs)
            if isinstance(value, Tensor) and value._requires_grad:
                raise RuntimeError(f"The function '{self.name}' is not differentiable with respect to argument "
                                   f"'{name}'. This input cannot have requires_grad True.")

    def record(self, args, kwargs, result, values):
        if isinstance(result, Tensor):
            outputs = (result,)
            differentiable = outputs if result.dtype.is_floating_point and self.differentiable is None else \
                [o for o, d in zip(outputs, self.differentiable or (False,)) if d]
        else:
            outputs = result
            if self.differentiable is not None:
                differentiable = [o for o, d in zip(outputs, self.differentiable) if d]
            else:
                differentiable = [o for o in outputs if isinstance(o, Tensor) and o.dtype.is_floating_point]
        if not differentiable:
            return None
        cls = self.node_class
        node = cls()
        if self.any_list:
            edge_values, spans, mask = [], [], []
            for value, is_list in zip(values, self.edge_is_list):
                start = len(edge_values)
                if is_list:
                    edge_values.extend(value)
                    mask.append(builtins.any(isinstance(v, Tensor) and v._requires_grad for v in value))
                else:
                    edge_values.append(value)
                    mask.append(isinstance(value, Tensor) and value._requires_grad)
                spans.append((start, len(edge_values)))
        else:
            edge_values = values
            mask = [isinstance(v, Tensor) and v._requires_grad for v in values]
            spans = self.spans
        if self.fallback:  # torch's autograd fallback: edges only to the inputs that require grad
            edge_values = [v for v in edge_values if isinstance(v, Tensor) and v._requires_grad]
        node._mask, node._spans, node._edge_count, node._is_list = mask, spans, len(edge_values), self.edge_is_list
        saved = []
        name = cls.__name__
        for edges, output, get in self.saved:
            if not (mask[edges] if edges.__class__ is int else builtins.any([mask[e] for e in edges])):
                saved.append(None)  # only a formula no input needs reads it
            elif output is not None:
                saved.append(SavedTensor(outputs[output], is_output=True, node_name=name))
            else:
                value = get(args, kwargs)
                saved.append(SavedTensor(value, node_name=name) if isinstance(value, Tensor) else value)
        node._saved = tuple(saved)
        node._values = {n: _derived_value(n, get(args, kwargs)) if derived else get(args, kwargs)
                        for n, derived, get in self.values} if self.values else _NO_VALUES
        node.num_outputs = len(differentiable)
        _record(node, edge_values, *differentiable)
        return node


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


class _CallOptions:
    """The parts of torch's Python argument parser a call needs: NumPy's names for ``dim``
    (``axis=``), an implementation's ``*size`` given as one tuple, and ``out=`` (set once the
    Python function's variants are known)."""

    def __init__(self, declaration):
        self.numpy_names = builtins.any(a.name == "dim" for a in declaration.schema.arguments)
        self.packed = _packed_position(declaration)
        self.out = None   # (name, out_dtype, factory) for an op with the out variant


def _dispatcher(name, overloads):
    """One Python function over several overloads: the first whose schema fits the
    arguments' types runs (torch's Python argument parser tries its signatures in turn)."""
    checks = []
    for declaration, run in overloads:
        schema, impl = declaration.schema, declaration.impl
        getters = [(a.type, _getter(impl, schema, i, a)) for i, a in enumerate(schema.arguments)]
        parameters = inspect.signature(impl).parameters
        names = set(parameters)
        positional = builtins.sum(1 for p in parameters.values() if p.kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD))
        varargs = builtins.any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters.values())
        checks.append((getters, names, positional, varargs, run, schema))

    def match(args, kwargs):
        for numbers_as_tensors in (False, True):
            for getters, names, positional, varargs, run, _ in checks:
                if len(args) > positional and not varargs:
                    continue
                if kwargs and not names.issuperset(kwargs):
                    continue
                for type_, get in getters:
                    value = get(args, kwargs)
                    if value is _MISSING or not _accepts(type_, value, numbers_as_tensors):
                        break
                else:
                    return run
        return None

    chosen = {}  # the overload picked for a pattern of argument types, kept: the next call is a look-up

    options = overloads[0][1].options

    def pick(*args, **kwargs):
        if kwargs:
            if options.numpy_names and ("axis" in kwargs or "keepdims" in kwargs):
                kwargs = _numpy_names(kwargs)
            if "out" in kwargs and options.out is not None:
                out = kwargs.pop("out")
                if out is not None:
                    return call_with_out(pick, options.out, args, kwargs, out)
        key = (tuple(map(type, args)), tuple(kwargs), tuple(map(type, kwargs.values())))
        run = chosen.get(key)
        if run is None:
            run = match(args, kwargs)
            if run is None:
                plausible = [c for c in checks if _plausible(c, args, kwargs)]
                if len(plausible) == 1:  # torch names the argument when one signature takes this many
                    getters, _, _, _, run, _ = plausible[0]
                    refusal = argument_error(name, run.declaration, getters, args, kwargs)
                    if refusal is not None:
                        raise refusal
                got = ", ".join(type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in args)
                expected = "\n".join(f" * {c[5]}" for c in checks)
                raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but "
                                f"expected one of:\n{expected}")
            if len(chosen) < 256:
                chosen[key] = run
        return run(*args, **kwargs)
    return pick


def _plausible(check, args, kwargs) -> bool:
    """Whether a signature takes this many positional arguments and these keywords (torch's
    parser tells which argument is wrong when only one signature does)."""
    getters, names, positional, varargs, run, schema = check
    required = builtins.sum(1 for a in schema.arguments if not a.kwarg_only and a.default is NO_DEFAULT)
    return (required <= len(args) and (varargs or len(args) <= positional)) and names.issuperset(kwargs)


def _method_varargs(run, name, argument):
    """``x.flip(0, 1)`` for ``x.flip((0, 1))``: torch's parser takes a method's int list one
    int at a time when it is the method's only argument (and names it when it is missing)."""
    def call(self, *args, **kwargs):
        if not args and argument.name not in kwargs and argument.default is NO_DEFAULT:
            raise TypeError(f'{name}() missing 1 required positional arguments: "{argument.name}"')
        if args and not isinstance(args[0], (tuple, list)):
            args = (args,)
        return run(self, *args, **kwargs)
    return call


def _packed_position(declaration):
    """Where an implementation taking its sizes one at a time (``view(input, *size)``) may be
    given them as one tuple (``x.view((2, 3))``), or None."""
    schema, impl = declaration.schema, declaration.impl
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if not positional or not positional[-1].is_int_list:
        return None
    try:
        parameter = _parameter(impl, schema, len(positional) - 1, positional[-1])
    except TypeError:
        return None
    if parameter.kind is not inspect.Parameter.VAR_POSITIONAL:
        return None
    return list(inspect.signature(impl).parameters.values()).index(parameter)


def _self_at(call, position):
    def method(self, *args, **kwargs):
        return call(*args[:position], self, *args[position:], **kwargs)
    return method


def _method_int_list(declaration):
    """The int-list argument a method may take one int at a time (``dims`` of ``x.flip``), if any."""
    schema, impl = declaration.schema, declaration.impl
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(positional) != 2 or not positional[1].is_int_list:
        return None
    try:
        parameter = _parameter(impl, schema, 1, positional[1])
    except TypeError:  # the implementation reads its sizes its own way
        return None
    return None if parameter.kind is inspect.Parameter.VAR_POSITIONAL else positional[1]


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
