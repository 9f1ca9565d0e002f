"""Error parity: a program that torch refuses, reftorch refuses with the same exception class
and the same message (a student who searches the message finds torch's answers)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import reftorch
from engine_support import ENGINE, LIBS, seeds, shapes

# name -> program(lib); each must raise in torch
ERRORS = {
    "broadcast_mismatch": lambda lib: lib.ones(2, 3) + lib.ones(4),
    "view_non_contiguous": lambda lib: lib.ones(2, 3).t().view(-1),
    "view_bad_size": lambda lib: lib.ones(2, 3).view(4),
    "reshape_two_minus_ones": lambda lib: lib.ones(2, 3).reshape(-1, -1),
    "mm_shapes": lambda lib: lib.ones(2, 3) @ lib.ones(2, 3),
    "mm_dtypes": lambda lib: lib.ones(2, 2) @ lib.ones(2, 2, dtype=lib.float64),
    "bmm_not_3d": lambda lib: lib.bmm(lib.ones(2, 2), lib.ones(2, 2)),
    "dot_dtypes": lambda lib: lib.dot(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    "dot_sizes": lambda lib: lib.dot(lib.ones(2), lib.ones(3)),
    "matmul_0d": lambda lib: lib.matmul(lib.tensor(1.0), lib.ones(2)),
    "index_out_of_range": lambda lib: lib.ones(3)[3],
    "too_many_indices": lambda lib: lib.ones(3)[0, 0],
    "dim_out_of_range": lambda lib: lib.ones(2, 3).sum(2),
    "transpose_dim": lambda lib: lib.ones(2, 3).transpose(0, 5),
    "float_index": lambda lib: lib.ones(3)[lib.tensor([0.0])],
    "int_requires_grad": lambda lib: lib.ones(2, dtype=lib.int64).requires_grad_(),
    "int_tensor_requires_grad": lambda lib: lib.tensor([1, 2], requires_grad=True),
    "backward_non_scalar": lambda lib: (lib.ones(2, requires_grad=True) * 2).backward(),
    "backward_no_grad": lambda lib: lib.ones(2).sum().backward(),
    "numpy_requires_grad": lambda lib: lib.ones(2, requires_grad=True).numpy(),
    "item_many": lambda lib: lib.ones(2).item(),
    "bool_many": lambda lib: bool(lib.ones(2)),
    "len_0d": lambda lib: len(lib.tensor(1.0)),
    "iter_0d": lambda lib: iter(lib.tensor(1.0)),
    "cat_dims": lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2, 4)]),
    "cat_ndim": lambda lib: lib.cat([lib.ones(2, 3), lib.ones(3)]),
    "cat_empty_list": lambda lib: lib.cat([]),
    "stack_sizes": lambda lib: lib.stack([lib.ones(2), lib.ones(3)]),
    "expand_bad": lambda lib: lib.ones(2, 3).expand(4, 3),
    "expand_fewer_dims": lambda lib: lib.ones(2, 3).expand(3),
    "permute_dims": lambda lib: lib.ones(2, 3).permute(0),
    "permute_repeat": lambda lib: lib.ones(2, 3).permute(0, 0),
    "repeat_fewer": lambda lib: lib.ones(2, 3).repeat(2),
    "t_3d": lambda lib: lib.ones(2, 2, 2).t(),
    "sub_bools": lambda lib: lib.tensor([True]) - lib.tensor([False]),
    "inplace_cast": lambda lib: lib.ones(2, dtype=lib.int64).add_(1.5),
    "inplace_broadcast": lambda lib: lib.ones(2).add_(lib.ones(2, 2)),
    "mean_int": lambda lib: lib.ones(2, dtype=lib.int64).mean(),
    "ones_no_size": lambda lib: lib.ones(),
    "rand_no_size": lambda lib: lib.rand(),
    "ragged": lambda lib: lib.tensor([[1, 2], [3]]),
    "ragged_depth": lambda lib: lib.tensor([[1], [[2]]]),
    "from_numpy_negative": lambda lib: lib.from_numpy(np.arange(4.0)[::-1]),
    "from_numpy_object": lambda lib: lib.from_numpy(np.array([None, 1])),
    "leaf_inplace": lambda lib: lib.ones(2, requires_grad=True).add_(1),
    "view_of_leaf_inplace": lambda lib: lib.ones(2, requires_grad=True)[0].mul_(2),
    "leaf_masked_assign": lambda lib: lib.ones(2, requires_grad=True).__setitem__(lib.tensor([True, False]), 0.0),
    "non_leaf_requires_grad_false": lambda lib: (lib.ones(2, requires_grad=True) * 2).requires_grad_(False),
    "retain_grad_no_grad": lambda lib: lib.ones(2).retain_grad(),
    "argmax_bool": lambda lib: lib.tensor([True]).argmax(),
    "topk_k": lambda lib: lib.ones(3).topk(4),
    "clamp_none": lambda lib: lib.clamp(lib.ones(2)),
    "max_empty": lambda lib: lib.ones(0).max(),
    "split_sizes": lambda lib: lib.ones(4).split([1, 2]),
    "grad_unused": lambda lib: lib.autograd.grad((lib.ones(1, requires_grad=True) * 2).sum(),
                                                 [lib.ones(1, requires_grad=True)]),
    "grad_no_requires_grad": lambda lib: lib.autograd.grad(lib.ones(1, requires_grad=True).sum(), [lib.ones(1)]),
    "grad_shape_mismatch": lambda lib: (lib.ones(2, requires_grad=True) * 2).backward(lib.ones(3)),
    "backward_inputs_empty": lambda lib: (lib.ones(1, requires_grad=True) * 2).sum().backward(inputs=[]),
    "backward_twice": lambda lib: _twice(lib),
    "saved_modified": lambda lib: _modified(lib),
    "inference_requires_grad": lambda lib: _inference_requires_grad(lib),
    "sim_numpy": lambda lib: lib.ones(2, device=_accelerator(lib)).numpy(),
    "bad_device_string": lambda lib: lib.device("nonsense"),
    "custom_function_wrong_count": lambda lib: _wrong_count(lib),
}


def _accelerator(lib):
    # torch on a CPU-only machine has no accelerator; its 'meta' device refuses .numpy() too.
    # Mixing devices is checked in test_engine_views (torch's cuda wording, which meta lacks).
    return "sim" if lib is reftorch else "meta"


def _twice(lib):
    y = (lib.ones(2, requires_grad=True).exp()).sum()
    y.backward()
    y.backward()


def _modified(lib):
    x = lib.ones(2, requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def _inference_requires_grad(lib):
    with lib.inference_mode():
        t = lib.ones(2)
    t.requires_grad_()


def _wrong_count(lib):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * 2 + y

        @staticmethod
        def backward(ctx, grad):
            return grad * 2  # one gradient for two inputs

    a = lib.ones(2, requires_grad=True)
    Twice.apply(a, a).sum().backward()


# the same class and text in both, except where the cause cannot match exactly (listed here:
# the class must match and the text must start the same way up to the given length)
MESSAGE_START_ONLY = {
    "rand_no_size": 48,  # torch then lists every overload it tried
    "sim_numpy": 14,  # "can't convert sim:0 ..." is torch's wording for cuda:0; here torch has only meta
    "bad_device_string": 20,  # torch lists all its device types
    "from_numpy_object": 38,  # then each lists the dtypes it supports
    "float_index": 0,  # torch 2.13 words this per indexing path; class only
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case):
    caught = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            ERRORS[case](lib)
        caught.append(info.value)
    theirs, mine = caught
    assert isinstance(mine, type(theirs)) or type(mine).__name__ == type(theirs).__name__, (
        f"{case}: reftorch raised {type(mine).__name__}: {mine}; torch {type(theirs).__name__}: {theirs}")
    if case in MESSAGE_START_ONLY:
        n = MESSAGE_START_ONLY[case]
        assert str(mine)[:n] == str(theirs)[:n], f"{case}:\n reftorch: {mine}\n torch:    {theirs}"
    else:
        assert str(mine) == str(theirs), f"{case}:\n reftorch: {mine}\n torch:    {theirs}"


@ENGINE
@given(a=shapes(1, 3), b=shapes(1, 3), seed=seeds)
def test_broadcast_errors_match_for_any_shapes(a, b, seed):
    messages = []
    for lib in LIBS:
        try:
            lib.ones(a) * lib.ones(b)
            messages.append(None)
        except RuntimeError as error:
            messages.append(str(error))
    assert messages[1] == messages[0]


# -- warnings: the same UserWarnings (text up to torch's "(Triggered internally ...)" note),
# and none where torch is silent (overflow to inf, 0/0 to nan) ------------------------------
WARNINGS = {
    "T_1d": lambda lib: lib.ones(3).T,
    "T_3d": lambda lib: lib.ones(2, 3, 4).T,
    "T_0d": lambda lib: lib.tensor(1.0).T,
    "T_2d_silent": lambda lib: lib.ones(2, 3).T,
    "var_one_element": lambda lib: lib.ones(1).var(),
    "std_one_row": lambda lib: lib.ones(2, 1).std(1),
    "non_leaf_grad": lambda lib: (lib.ones(2, requires_grad=True) * 2).grad,
    "overflow_silent": lambda lib: lib.exp(lib.tensor([1000.0])) * lib.tensor([1e38]),
    "zero_by_zero_silent": lambda lib: lib.zeros(2) / lib.zeros(2),
    "log_zero_silent": lambda lib: lib.log(lib.zeros(2)),
}


def _user_warnings(program, lib):
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program(lib)
    return [(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in caught]


@pytest.mark.parametrize("case", sorted(WARNINGS))
def test_warnings_match_torch(case):
    theirs, mine = (_user_warnings(WARNINGS[case], lib) for lib in LIBS)
    assert mine == theirs


# an int list with something that is no int in it: torch's parser names the position (issue 29:
# since x.view(torch.int32) is view.dtype, an int list must hold ints, not just be a list)
INT_LIST_ELEMENTS = {
    "sum_over_a_float_dim": lambda lib: lib.ones(2, 3).sum((0, 1.0)),
    "amax_over_a_str_dim": lambda lib: lib.ones(2, 3).amax((0, "a")),
}


@pytest.mark.parametrize("case", sorted(INT_LIST_ELEMENTS))
def test_int_lists_holding_no_int_raise_torchs_words(case):
    said = []
    for lib in LIBS:
        with pytest.raises(TypeError) as caught:
            INT_LIST_ELEMENTS[case](lib)
        said.append(str(caught.value))
    assert said[1] == said[0]
