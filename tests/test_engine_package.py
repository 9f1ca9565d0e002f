"""reftorch.functions is a package, one file per family of operations; the paths lessons print
(``inspect.getsource(reftorch.functions.x)``) and the rest of reftorch imports still resolve."""
from __future__ import annotations

import inspect

import pytest
import torch

import reftorch
import reftorch.functions as F

# every reftorch.functions name the lessons print or import (grep lessons/ for "functions")
LESSON_NAMES = ("_check_matmul_dtypes", "_slice", "to", "_record", "MulBackward0", "mul",
                "_needs_grad", "CopySlices", "_check_inplace", "clone", "CloneBackward0", "detach",
                "empty", "stack", "zeros", "zeros_like", "tensor", "maximum", "_with_strides")


@pytest.mark.parametrize("name", LESSON_NAMES)
def test_names_lessons_use_resolve_and_print(name):
    value = getattr(F, name)
    assert inspect.getsource(value).lstrip().startswith(("def ", "class ", "@"))


def test_each_family_file_holds_its_forward_and_backward_together():
    # the op and the node its backward is recorded with live in one file
    for op, node in [(F.mul, F.MulBackward0), (F.clone, F.CloneBackward0), (F.as_strided, F.AsStridedBackward0),
                     (F.sum, F.SumBackward1), (F.mm, F.MmBackward0), (F.cat, F.CatBackward0),
                     (F.log_softmax, F.LogSoftmaxBackward0), (F.getitem, F.IndexBackward0)]:
        assert inspect.unwrap(op).__module__ == node.__module__, (op, node)


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
