"""reftorch.functions is a package: two tables (native_functions.py, derivatives.py), the code
that builds the ops from them (codegen.py), and one file per family of implementations; the
paths lessons print (``inspect.getsource(reftorch.functions.x)``) and the rest of reftorch
imports still resolve."""
from __future__ import annotations

import inspect

import pytest
import torch

import reftorch
import reftorch.functions as F

# every reftorch.functions name the lessons print or import (grep lessons/ for "functions")
LESSON_NAMES = ("_check_matmul_dtypes", "_slice", "to", "_record", "GeneratedNode", "mul", "explain",
                "_needs_grad", "CopySlices", "_check_inplace", "clone", "detach",
                "empty", "stack", "zeros", "zeros_like", "tensor", "maximum", "_with_strides")


@pytest.mark.parametrize("name", LESSON_NAMES)
def test_names_lessons_use_resolve_and_print(name):
    value = getattr(F, name)
    assert inspect.getsource(value).lstrip().startswith(("def ", "class ", "@"))


def test_each_op_is_found_from_its_name():
    # the entry of each table, the implementation in its family's file, and the node it records
    families = {family.__name__ for family in F.FAMILIES}
    for name, node in [("mul.Tensor", "MulBackward0"), ("clone", "CloneBackward0"),
                       ("as_strided", "AsStridedBackward0"), ("sum.dim_IntList", "SumBackward1"),
                       ("mm", "MmBackward0"), ("cat", "CatBackward0"), ("_log_softmax", "LogSoftmaxBackward0"),
                       ("index.Tensor", "IndexBackward0")]:
        text = F.explain(name)
        table = "native_functions_nn.py" if name == "_log_softmax" else "native_functions.py"   # (an nn op)
        assert text.startswith(f"{table}:\n") and "\nderivatives.py:\n" in text, name
        assert f"node      {node}:" in text, (name, text)
        run = F.GENERATED.overloads[name]
        assert inspect.unwrap(run.declaration.impl).__module__ in families, name
        assert getattr(F, node) is run.node_class


def test_a_family_name_does_not_hide_an_op():
    # a submodule named like an op would replace it as an attribute of the package
    for family in F.FAMILIES:
        short = family.__name__.rsplit(".", 1)[1]
        assert not callable(getattr(reftorch, short, None)) or short in ("functions",), short
        assert getattr(F, short) is family


def test_non_leaf_parameter_error_names_the_parameter_like_torch():
    messages = []
    for lib in (torch, reftorch):
        # a Parameter that an in-place op gave a history: no longer a leaf
        weight = lib.nn.Parameter(lib.ones(2), requires_grad=False)
        weight.mul_(lib.ones(2, requires_grad=True))
        with pytest.raises(ValueError) as info:
            lib.nn.Module().register_parameter("w", weight)
        messages.append(str(info.value))
    assert messages[1] == messages[0]
    assert "{name}" not in messages[1]
