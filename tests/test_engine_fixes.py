"""What students' code showed reftorch getting silently wrong, or refusing with the wrong error
(issue 20), each against torch 2.13: values, dtypes, object identity, errors and their words."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import reftorch
from engine_support import (
    ENGINE, make_array, same_error, same_outcome, same_program, same_warnings, seeds, shapes,
)


# -- silently wrong ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "uint8"])
def test_module_to_an_integer_dtype_is_refused(dtype):
    same_error(lambda lib: lib.nn.Linear(2, 2).to(getattr(lib, dtype)))
    same_error(lambda lib: lib.nn.Linear(2, 2).to("cpu", getattr(lib, dtype)))


NUMPY_SCALARS = [np.float64(1.5), np.float32(-2.25), np.float16(0.5), np.int64(3), np.int32(-2), np.bool_(True)]


@ENGINE
@given(shape=shapes(0, 2), seed=seeds, dtype=st.sampled_from(["float32", "float64", "int64", "int32", "bool"]),
       scalar=st.sampled_from(NUMPY_SCALARS), op=st.sampled_from(["add", "mul", "sub", "truediv", "gt", "pow"]),
       first=st.booleans())
def test_a_numpy_scalar_operand_counts_as_a_python_number(shape, seed, dtype, scalar, op, first):
    # torch.ones(2) + np.float64(1.0) is float32: the NumPy scalar takes no part in the dtype
    # (torch reads an np.bool_ as a float), and np.pi * t is a tensor, not a NumPy array
    import operator
    array = make_array(seed, shape, dtype, 1, 3)

    def program(lib):
        t = lib.tensor(array)
        fn = getattr(operator, op)
        return (fn(t, scalar), getattr(lib, op if op != "truediv" else "div")(t, scalar)) if first \
            else fn(scalar, t)
    same_program(program, may_raise=RuntimeError)   # bool - bool: reftorch's words differ from torch's


def test_maximum_takes_tensors_only():
    same_error(lambda lib: lib.maximum(lib.ones(2), np.float64(1.0)))
    same_error(lambda lib: lib.minimum(lib.ones(2), 2))


@pytest.mark.parametrize("values,target", [("int64", "float32"), ("float64", "float32"), ("float32", "int64"),
                                           ("float32", "float64"), ("int32", "int64")])
def test_index_put_refuses_a_source_of_another_dtype(values, target):
    same_error(lambda lib: lib.zeros(3, dtype=getattr(lib, target)).index_put_(
        (lib.tensor([0]),), lib.ones(1, dtype=getattr(lib, values))))
    same_error(lambda lib: lib.zeros(3, dtype=getattr(lib, target)).__setitem__(
        lib.tensor([0, 2]), lib.ones(2, dtype=getattr(lib, values))))


def test_func_grad_keeps_the_graph_of_a_tensor_the_function_closes_over():
    def program(lib):
        w = lib.tensor(2.0, requires_grad=True)
        x = lib.tensor([1.0, 2.0])
        g = lib.func.grad(lambda x: (w * x ** 3).sum())(x)
        outer = (g * g).sum()
        outer.backward()
        return g, g.grad_fn is not None, w.grad
    same_program(program)


def test_func_grad_returns_aux_and_value_detached_from_its_own_inputs():
    def program(lib):
        x = lib.tensor([1.0, -2.0])
        grad, aux = lib.func.grad(lambda x: ((x ** 2).sum(), x * 3), has_aux=True)(x)
        x_grad = x.clone().requires_grad_()
        grad2, aux2 = lib.func.grad(lambda x: ((x ** 2).sum(), x * 3), has_aux=True)(x_grad)
        grad3, value = lib.func.grad_and_value(lambda x: (x.exp()).sum())(x)
        return (grad, aux, aux.requires_grad, grad2.requires_grad, aux2.requires_grad, value,
                value.requires_grad)
    same_program(program)


def test_vmap_random_operations_follow_the_randomness_mode():
    def program(lib):
        lib.manual_seed(0)
        same = lib.func.vmap(lambda x: x + lib.rand(2), randomness="same")(lib.zeros(3, 2))
        after_same = lib.rand(1)
        lib.manual_seed(0)
        different = lib.func.vmap(lambda x: x + lib.rand(2), randomness="different")(lib.zeros(3, 2))
        return same, after_same, different
    same_program(program)
    same_error(lambda lib: lib.func.vmap(lambda x: x + lib.rand(2))(lib.zeros(3, 2)))
    same_error(lambda lib: lib.func.vmap(lambda x: lib.nn.functional.dropout(x))(lib.ones(3, 2)))
    same_error(lambda lib: lib.func.vmap(lambda x: x, randomness="sometimes")(lib.ones(3, 2)))


def test_vmap_passes_keyword_arguments_unmapped_and_refuses_item():
    same_program(lambda lib: lib.func.vmap(lambda x, scale=1.0: x * scale)(lib.ones(3, 2), scale=2.5))
    same_error(lambda lib: lib.func.vmap(lambda x: x.sum().item())(lib.ones(3, 2)))


def test_saved_tensor_hooks_receive_the_tensors_themselves():
    # the pack hook sees x for x * y's saved input, y itself for exp's saved output
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
            y = x.exp()
            z = x * y
            w = x.pow(2)
            r = y.relu()
        (z.sum() + w.sum() + r.sum()).backward()
        return [s is x for s in seen], [s is y for s in seen], [s is r for s in seen], x.grad
    same_program(program)


def test_deleting_from_sequential_numbers_the_rest_again():
    def program(lib):
        nn = lib.nn
        seq = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity())
        del seq[0]
        first = [name for name, _ in seq.named_children()]
        del seq[-1]
        del seq[0:1]
        return first, [name for name, _ in seq.named_children()], type(seq[0]).__name__, repr(seq)
    same_program(program)


GEOMETRIES = [((3, 2), (1, 1), 0), ((4, 4), (2, 1), 0), ((5, 3), (1, 2), 1), ((3, 3), (0, 1), 0),
              ((2, 3, 2), (2, 1, 1), 0)]


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("op", ["add_", "mul_", "sub_", "div_", "copy_", "exp_", "neg_", "iadd", "clamp_"])
def test_in_place_op_on_overlapping_windows_writes_element_after_element(geometry, op):
    size, stride, offset = geometry

    def program(lib):
        x = lib.arange(1.0, 15.0) / 7
        view = x.as_strided(size, stride, offset)
        other = lib.arange(float(np.prod(size))).reshape(size) / 3
        if op == "copy_":
            view.copy_(other)
        elif op == "iadd":
            view += 0.5
        elif op in ("exp_", "neg_"):
            getattr(view, op)()
        elif op == "clamp_":
            view.clamp_(0.2, 0.9)
        else:
            getattr(view, op)(other + 1)
        return x
    same_outcome(program)


# -- wrong or spurious errors ------------------------------------------------------------------
def test_optimizer_step_runs_its_closure_with_grad_mode_on():
    def program(lib):
        w = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        results = []
        for optimizer in (lib.optim.SGD([w], lr=0.1, momentum=0.9), lib.optim.Adam([w], lr=0.1),
                          lib.optim.AdamW([w], lr=0.1)):
            def closure():
                optimizer.zero_grad()
                loss = (w ** 2).sum()
                loss.backward()
                return loss
            results.append((optimizer.step(closure), w.detach().clone()))
        return results
    same_program(program)


def test_add_param_group_refuses_a_parameter_already_in_a_group():
    def program(lib):
        w = lib.nn.Parameter(lib.ones(2))
        lib.optim.SGD([w], lr=0.1).add_param_group({"params": [w]})
    same_error(program)
    same_warnings(lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.ones(1))] * 2, lr=0.1))


@pytest.mark.parametrize("case", [
    lambda lib: lib.arange(3).gather(0, lib.tensor([5])),
    lambda lib: lib.arange(3).gather(0, lib.tensor([-1])),
    lambda lib: lib.arange(6).view(2, 3).gather(1, lib.tensor([[0], [3]])),
    lambda lib: lib.arange(6).view(2, 3).gather(1, lib.tensor([[0], [1], [2]])),
    lambda lib: lib.arange(6).view(2, 3).gather(1, lib.tensor([0])),
    lambda lib: lib.arange(6.0).view(2, 3).gather(1, lib.tensor([[0.0]])),
    lambda lib: lib.zeros(3).__setitem__(lib.tensor([True, False, True]), lib.tensor([1.0, 2.0, 3.0])),
    lambda lib: lib.zeros(3).__setitem__(lib.zeros(3) == 0, lib.tensor([1.0, 2.0])),
    lambda lib: lib.zeros(3).__setitem__(lib.tensor([5]), 1.0),
    lambda lib: lib.zeros(2, 2).__setitem__((0, 0), "a"),
    lambda lib: lib.zeros(2, 2).__setitem__(0, "a"),
    lambda lib: lib.zeros(2, 2).__setitem__((0, 0), None),
    lambda lib: lib.zeros(2, 2).__setitem__(0, [1, 2]),
], ids=["gather_high", "gather_negative", "gather_2d", "gather_too_big", "gather_dims", "gather_float",
        "mask_count", "mask_count_2", "index_high", "assign_str", "assign_str_row", "assign_none", "assign_list"])
def test_indexing_errors_are_torchs_not_numpys(case):
    same_error(case)


def test_gather_reads_only_the_corner_its_index_covers():
    same_program(lambda lib: lib.arange(6).view(2, 3).gather(1, lib.tensor([[0, 1, 2, 0]])))


def test_cross_entropy_ignores_target_minus_100():
    def program(lib):
        x = lib.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3], [2.0, -1.0, 0.0]], requires_grad=True)
        t = lib.tensor([1, -100, 2])
        losses = [lib.nn.functional.cross_entropy(x, t, reduction=r) for r in ("mean", "sum", "none")]
        sum(loss.sum() for loss in losses).backward()
        return losses, x.grad, type(losses[0].grad_fn).__name__
    same_program(program)
    same_error(lambda lib: lib.nn.functional.nll_loss(lib.zeros(2, 3), lib.tensor([1, -100]), ignore_index=3))


def test_softmax_without_dim_warns_and_picks_torchs_dim():
    for shape in ((3,), (2, 3), (2, 3, 4), (2, 2, 2, 2)):
        same_warnings(lambda lib: lib.nn.functional.softmax(lib.ones(shape)))
        same_program(lambda lib: (lib.nn.functional.softmax(lib.arange(float(np.prod(shape))).reshape(shape)),
                                  lib.nn.functional.log_softmax(lib.arange(float(np.prod(shape))).reshape(shape)),
                                  lib.nn.Softmax()(lib.arange(float(np.prod(shape))).reshape(shape))))


def test_vjp_of_a_function_with_tuple_outputs():
    def program(lib):
        x = lib.tensor([1.0, 2.0])
        out, vjp_fn = lib.func.vjp(lambda x: (x * 2, x.sin().sum()), x)
        return out, vjp_fn((lib.ones(2), lib.tensor(1.0)))
    same_program(program)
    same_error(lambda lib: lib.func.vjp(lambda x: (x * 2, x.sum()), lib.ones(2))[1](lib.ones(2)))


def test_a_saved_tensor_read_after_backward_raises_torchs_error():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.sum().backward()
        return y.grad_fn._saved_self
    same_error(program)


@pytest.mark.parametrize("np_dtype", ["uint16", "uint32", "uint64"])
def test_from_numpy_takes_the_wide_unsigned_types(np_dtype):
    def program(lib):
        t = lib.from_numpy(np.arange(4, dtype=np_dtype))
        return t, str(t.dtype), repr(t), t.to(lib.float32), t * 2, t.sum(), t.view(2, 2), t.tolist()
    same_program(program)
    same_error(lambda lib: lib.from_numpy(np.arange(4, dtype=np_dtype)) + 1)
    same_error(lambda lib: lib.promote_types(getattr(lib, np_dtype), lib.int32))
