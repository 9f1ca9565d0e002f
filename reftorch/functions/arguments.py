"""torch's Python argument parser, for the functions codegen.py builds: a call's arguments read
by the schema's names, the types an overload takes, torch's message for an argument of the
wrong type, one function over several overloads (``torch.pow`` picks ``pow.Tensor_Scalar`` or
``pow.Tensor_Tensor`` from the arguments), and the spellings the parser accepts (``axis=``,
``x.flip(0, 1)``, ``x.view((2, 3))``).
"""
from __future__ import annotations

import builtins
import inspect

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from ._support import call_with_out
from .schema import NO_DEFAULT

_MISSING = object()


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
        if isinstance(value, (list, tuple)):  # (of things with __index__: x.view(torch.int32) is view.dtype)
            return builtins.all(hasattr(type(v), "__index__") for v in value)
        return isinstance(value, (builtins.int, np.integer)) and not isinstance(value, builtins.bool)
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
        if isinstance(value, (tuple, list)) and argument.is_int_list:  # an element that is no int
            bad = next(i for i, v in enumerate(value) if not hasattr(type(v), "__index__"))
            kind = type(value[bad]).__name__
            if type_.startswith("int[]"):  # (torch's parser words the two kinds of int list differently)
                return TypeError(f"{name}(): argument '{python}'{where} must be tuple of ints, but found element "
                                 f"of type {kind} at pos {bad}")
            return TypeError(f"{name}(): argument '{python}' failed to unpack the object at pos {bad + 1} with error "
                             f"\"type must be tuple of ints,but got {kind}\"")
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
        key = (tuple(map(_kind, args)), tuple(kwargs), tuple(map(_kind, kwargs.values())))
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


def _kind(value):
    """What the overload memo keys a value by: its type, and for a tuple or list its elements'
    types too (``sum((0, 1))`` and ``sum((0, 1.0))`` take different paths: the second is refused)."""
    kind = type(value)
    return (kind, *map(type, value)) if kind is tuple or kind is list else kind


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
