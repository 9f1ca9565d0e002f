"""How an operator is declared: its schema, and the two kinds of table entry.

A schema is written the way ``native_functions.yaml`` writes it::

    add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
    ^name ^overload  ^ arguments (``*``: keyword-only after it)   ^ returns

``func(...)`` is one entry of native_functions.py (the schema, its Python variants, the
implementation that computes it) and ``derivative(...)`` one entry of derivatives.py (a
formula per differentiable input, the forward-mode formula). Nothing here runs an op:
codegen.py turns the entries into functions, methods and backward nodes.
"""
from __future__ import annotations

import ast
import inspect
import sys
from dataclasses import dataclass, field

# The Python forms an entry has (its ``variants``): what most pointwise ops have, and the usual pair
ALL = "function method inplace out"
F_M = "function method"

NO_DEFAULT = inspect.Parameter.empty


@dataclass(frozen=True)
class Argument:
    type: str           # Tensor, Tensor?, Tensor[], Scalar, int, int[], bool, str?, ...
    name: str
    default: object = NO_DEFAULT
    kwarg_only: bool = False

    @property
    def is_tensor(self) -> bool:
        """A tensor, maybe None (``Tensor?``): what autograd can differentiate."""
        return self.type.split("(")[0].rstrip("?") == "Tensor"

    @property
    def is_tensor_list(self) -> bool:
        return self.type.split("(")[0].startswith("Tensor") and "[]" in self.type

    @property
    def is_int_list(self) -> bool:
        return self.type.startswith(("int[", "SymInt["))


@dataclass(frozen=True)
class Return:
    type: str
    name: str | None


@dataclass(frozen=True)
class FunctionSchema:
    name: str                   # add
    overload: str               # Tensor ("" for the default overload)
    arguments: tuple
    returns: tuple
    text: str

    @property
    def full_name(self) -> str:  # add.Tensor
        return f"{self.name}.{self.overload}" if self.overload else self.name

    def argument(self, name: str) -> Argument:
        for a in self.arguments:
            if a.name == name:
                return a
        raise KeyError(f"{self.full_name} has no argument {name!r}")

    def __str__(self) -> str:
        return self.text


def _split_top_level(text: str) -> list[str]:
    """Split on the commas that are not inside brackets (``int[2]``, ``Tensor(a!)``)."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def _default(text: str):
    """A default as Python sees it: ``1``, ``None``, ``False``, ``[]``, ``"mean"``; a name torch
    spells in C++ (``Mean``, ``contiguous_format``) stays a string."""
    replaced = {"True": True, "False": False, "None": None}
    if text in replaced:
        return replaced[text]
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return tuple(value) if isinstance(value, list) else value


def parse_schema(text: str) -> FunctionSchema:
    """``parse_schema("exp(Tensor self) -> Tensor")``: the name, arguments and returns."""
    head, _, returns = text.rpartition("->")  # (an alias annotation, "Tensor(a -> *)", has one too)
    name_part, _, args = head.strip().partition("(")
    args = args.rstrip()[:-1]  # the closing parenthesis
    name, _, overload = name_part.partition(".")
    arguments, kwarg_only = [], False
    for part in _split_top_level(args):
        if part == "*":
            kwarg_only = True
            continue
        declared, _, default = part.partition("=")
        type_, _, arg_name = declared.strip().rpartition(" ")
        arguments.append(Argument(type_.strip(), arg_name.strip(),
                                  _default(default.strip()) if default else NO_DEFAULT, kwarg_only))
    returns = returns.strip()
    if returns.startswith("(") and returns.endswith(")"):
        returns = returns[1:-1]
    outs = []
    for part in _split_top_level(returns):
        type_, _, ret_name = part.rpartition(" ") if " " in part else (part, "", "")
        outs.append(Return(type_.strip(), ret_name.strip() or None))
    return FunctionSchema(name, overload, tuple(arguments), tuple(outs), text)


# -- the two kinds of entry ---------------------------------------------------------------

@dataclass
class NativeFunction:
    """One entry of native_functions.py. See ``func``."""
    schema: FunctionSchema
    impl: object
    variants: frozenset
    kernel: str | None = None
    tags: frozenset = frozenset()
    autocast: str | None = None
    out_dtype: str = "castable"
    aliases: tuple = ()
    python_name: str | None = None
    method_name: str | None = None
    inplace_check: object = None
    where: str = ""               # file:line of the entry, for error messages and the lessons

    @property
    def name(self) -> str:
        return self.schema.name


def func(schema: str, impl, *, variants: str = "", kernel: str | None = None, tags: str = "",
         autocast: str | None = None, out_dtype: str = "castable", aliases: str = "",
         python_name: str | None = None, method_name: str | None = None, inplace_check=None) -> NativeFunction:
    """Declare an operator (one ``- func:`` entry of native_functions.yaml).

    ``impl``      the Python function that computes it (what torch's ``dispatch:`` names). It
                  takes the schema's arguments (``self`` is its first parameter, whatever its
                  name) and never records autograd: derivatives.py says what backward does.
    ``variants``  any of ``function`` (``torch.add``), ``method`` (``x.add``), ``inplace``
                  (``x.add_``), ``out`` (``torch.add(..., out=t)``): torch's three entries
                  add / add_ / add.out folded into one. None: the op is reached through
                  ``ops.<name>`` (and ``nn.functional`` for the nn ops), as torch's
                  ``torch._C._nn`` ops are.
    ``kernel``    the device kernel it runs (dispatch.py's table), for a ``pointwise`` op: the
                  in-place variant and fusion call it directly.
    ``tags``      ``pointwise`` (each output element from the inputs' elements at the same
                  position), ``factory`` (makes a tensor from sizes), ``nondeterministic_seeded``,
                  ``nn`` (an activation whose in-place variant is no Tensor method: torch
                  offers ``elu_`` in ``torch._C._nn`` and ``celu_``, ``threshold_`` as
                  functions; reftorch reaches it through ``ops`` and ``nn.functional``).
    ``autocast``  ``lower_precision``, ``float32`` or ``promote``: the cast autocast puts in
                  front of the op (torch's lists in autocast_mode.cpp).
    ``out_dtype`` how an ``out=`` tensor's dtype may differ: ``castable`` (the result's kind
                  casts to it), ``same``, or ``any``.
    ``aliases``   other Python names of the same op (``clip`` for ``clamp``).
    ``inplace_check``  checks the in-place variant makes before the functional op's own
                  (``masked_fill_``: the mask must broadcast to ``self``), with torch's words.
    """
    caller = sys._getframe(1)
    return NativeFunction(
        schema=parse_schema(schema), impl=impl, variants=frozenset(variants.replace(",", " ").split()),
        kernel=kernel, tags=frozenset(tags.replace(",", " ").split()), autocast=autocast, out_dtype=out_dtype,
        aliases=tuple(aliases.replace(",", " ").split()), python_name=python_name, method_name=method_name,
        inplace_check=inplace_check, where=f"{caller.f_code.co_filename}:{caller.f_lineno}")


@dataclass
class Derivative:
    """One entry of derivatives.py. See ``derivative``."""
    name: str                       # the op's name.overload, as in native_functions.py
    formulas: dict                  # "self" (or "self, other") -> a function of saved values
    result: object = None           # the forward-mode formula, or "auto_element_wise"/"auto_linear"
    output_differentiability: tuple | None = None
    node: str | None = None         # the node's name, when not the usual one (see codegen)
    number: int | None = None
    where: str = ""


def derivative(name: str, *, result=None, output_differentiability=None, node: str | None = None,
               number: int | None = None, **formulas) -> Derivative:
    """Declare how an op differentiates (one entry of derivatives.yaml).

    Each keyword names a differentiable input and gives its formula: a function whose
    parameter names say what it reads, exactly as torch's codegen reads a formula's names:
    ``grad`` (the output's gradient; ``grads`` for several outputs), an argument of the
    schema (``self``, ``other``, ``alpha``, ``dim``...), ``result`` (the output; ``result0``,
    ``result1``... or the return's name when there are several), ``<arg>_sym_sizes`` and
    ``<arg>_sym_strides`` (an argument's sizes and strides), ``grad_input_mask`` (which inputs
    need a gradient). Whatever a formula reads is saved on the node, as ``_saved_<name>``.

    ``result`` is the forward-mode formula: the output's tangent from the inputs' tangents
    ``<arg>_t`` (and any name above), or ``"auto_element_wise"`` (the backward formula
    applied to the tangent) or ``"auto_linear"`` (the op itself applied to the tangents).
    ``number`` is the N of ``...BackwardN`` when torch's is not the count of the op's
    overloads above it in this table (torch counts entries reftorch does not have).
    """
    caller = sys._getframe(1)
    return Derivative(name=name, formulas=formulas, result=result,
                      output_differentiability=tuple(output_differentiability) if output_differentiability else None,
                      node=node, number=number, where=f"{caller.f_code.co_filename}:{caller.f_lineno}")
