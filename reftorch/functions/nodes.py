"""The backward nodes codegen.py builds from derivatives.py, and how a call records one.

A node class per derivative entry (``MulBackward0``): it saves what the formulas read, under
torch's ``_saved_*`` names, and its ``backward`` calls the formulas. ``_Autograd`` reads a
call's arguments for the node: the graph's inputs, the tensors and values to save.
"""
from __future__ import annotations

import builtins
import inspect

from ..autograd.graph import Node, SavedTensor
from ..tensor import Tensor
from ._support import _record
from .arguments import _getter


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


_DERIVED = ("_sym_sizes_opt", "_sym_sizes", "_sym_strides", "_sym_numel", "_sym_argsize_0",
            "_sym_argsize_minus_1", "_dim", "_geometry", "_args_sizes")
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
    if name.endswith("_sym_argsize_0"):  # weight.sym_size(0)
        return value._shape[0]
    if name.endswith("_sym_argsize_minus_1"):  # S.sym_size(-1)
        return value._shape[-1]
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
        if name.endswith(suffix) and name[:-len(suffix)] in results:  # of an output (svd's S.sym_size(-1))
            return "derived_output", name[:-len(suffix)]
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
            elif kind in ("argument", "derived", "derived_output"):
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
        self.values = tuple((n, kind == "derived", getters[base]) if kind != "derived_output" else
                            (n, "output", results[base]) for n in node_class._value_names
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
                kept = outputs[output]
                output_nr = next((i for i, o in enumerate(differentiable) if o is kept), None)
                saved.append(SavedTensor(kept, is_output=True, node_name=name, output_nr=output_nr))
            else:
                value = get(args, kwargs)
                saved.append(SavedTensor(value, node_name=name) if isinstance(value, Tensor) else value)
        node._saved = tuple(saved)
        node._values = {n: _derived_value(n, outputs[get]) if derived == "output" else
                        _derived_value(n, get(args, kwargs)) if derived else get(args, kwargs)
                        for n, derived, get in self.values} if self.values else _NO_VALUES
        node.num_outputs = len(differentiable)
        _record(node, edge_values, *differentiable)
        return node
