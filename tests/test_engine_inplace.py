"""In-place safety against torch: saved-tensor versions, leaf and view-of-leaf errors,
gradients through writes into views (CopySlices) and masked/indexed assignment
(IndexPutBackward0), clone versus detach, in-place ops on overlapping or expanded views, and
masked_fill_ (values, gradients and graph, the warning on an expanded tensor, errors)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

import reftorch
from engine_support import (
    ENGINE, LIBS, assert_close_values, assert_same, build, dtype_names, float_names, layouts, make_array,
    node_chain, raised, run_both, same_error, same_outcome, seeds, shapes,
)

def _saved_input_program(kind):
    def program(lib, array):
        x = lib.tensor(array, requires_grad=True)
        h = x * 2  # a non-leaf we may modify
        if kind == "mul_input":
            y = h * h
        elif kind == "pow_input":
            y = h ** 3
        elif kind == "exp_output":
            y = h.exp()
            h = y
        elif kind == "sigmoid_output":
            y = lib.sigmoid(h)
            h = y
        else:
            y = lib.tanh(h)
            h = y
        h.add_(1)  # moves the version the node saved
        y.sum().backward()
    return program


@ENGINE
@given(kind=st.sampled_from(["mul_input", "pow_input", "exp_output", "sigmoid_output", "tanh_output"]),
       shape=shapes(0, 2), seed=seeds, name=float_names)
def test_modified_saved_tensor_raises_torchs_error(kind, shape, seed, name):
    array = make_array(seed, shape, name)
    errors = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as caught:
            _saved_input_program(kind)(lib, array)
        errors.append(str(caught.value))
    assert errors[0].startswith(
        "one of the variables needed for gradient computation has been modified by an inplace operation")
    assert errors[1] == errors[0]


@ENGINE
@given(op=st.sampled_from(["add_", "mul_", "zero_", "fill_", "setitem", "mask", "copy_", "iadd", "exp_"]),
       shape=shapes(1, 2), seed=seeds, through=st.sampled_from(["leaf", "view", "no_grad"]))
def test_in_place_on_leaves_raises_like_torch(op, shape, seed, through):
    array = make_array(seed, shape, "float32")

    def program(lib):
        x = lib.tensor(array, requires_grad=True)
        target = x if through != "view" else x[0]
        steps = {
            "add_": lambda t: t.add_(1), "mul_": lambda t: t.mul_(2), "zero_": lambda t: t.zero_(),
            "fill_": lambda t: t.fill_(3), "setitem": lambda t: t.__setitem__(..., 0.5),
            "mask": lambda t: t.__setitem__(t > 0, 0.0), "copy_": lambda t: t.copy_(lib.ones(t.shape)),
            "iadd": lambda t: t.__iadd__(1), "exp_": lambda t: t.exp_(),
        }
        if through == "no_grad":  # allowed: how optimizers update parameters
            with lib.no_grad():
                steps[op](target)
            return x.detach(), x._version, x.requires_grad, x.is_leaf
        steps[op](target)
        return x

    results = run_both(program, may_raise=RuntimeError)
    if through == "no_grad":
        (tx, tv, tr, tl), (rx, rv, rr, rl) = results
        assert_close_values(rx, tx)
        assert (rv, rr, rl) == (tv, tr, tl)
        return
    assert results is None  # both raised the same class
    errors = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as caught:
            program(lib)
        errors.append(str(caught.value))
    assert errors[1] == errors[0]


# writes into a non-leaf: the result's graph (CopySlices, IndexPutBackward0) and gradients
WRITES = {
    "slice_copy": lambda lib, y, v: y.__setitem__((slice(None), slice(0, 1)) if y.dim() > 1 else slice(0, 1), v.reshape(-1)[0]),
    "row_mul_": lambda lib, y, v: y[0].mul_(v.reshape(-1)[0]),
    "view_add_": lambda lib, y, v: y.view(-1).add_(v.reshape(-1)),
    "transpose_add_": lambda lib, y, v: y.t().add_(v.t()) if y.dim() == 2 else y.add_(v),
    "mask_scalar": lambda lib, y, v: y.__setitem__(v > 0, 0.0),
    "mask_tensor": lambda lib, y, v: y.__setitem__(v > 0, v[v > 0] * 3),
    "index_rows": lambda lib, y, v: y.__setitem__(lib.tensor([0]), v[0:1] * 2),
    "whole_exp_": lambda lib, y, v: y.exp_(),
    "chained": lambda lib, y, v: (y.mul_(v), y.add_(1), y.sigmoid_()),
    "clamp_": lambda lib, y, v: y.clamp_(-0.5, 0.5),
    "fill_tensor": lambda lib, y, v: y[0].fill_(v.sum()),
}


@ENGINE
@given(write=st.sampled_from(sorted(WRITES)), shape=shapes(1, 2, 2, 4), seed=seeds, name=float_names)
def test_writes_into_non_leaves_have_torchs_graph_and_gradients(write, shape, seed, name):
    arrays = [make_array(seed, shape, name, away_from_zero=True), make_array(seed + 1, shape, name, away_from_zero=True)]
    found = []
    for lib in LIBS:
        x, v = (lib.tensor(a, requires_grad=True) for a in arrays)
        y = x * 1.5
        version = y._version
        WRITES[write](lib, y, v)
        out = (y * y).sum()
        out.backward()
        found.append((y, node_chain(y.grad_fn), y._version - version, x.grad, v.grad))
    (ty, t_graph, t_bumps, tgx, tgv), (ry, r_graph, r_bumps, rgx, rgv) = found
    assert_close_values(ry, ty)
    assert r_graph == t_graph
    assert r_bumps == t_bumps
    for r, t in ((rgx, tgx), (rgv, tgv)):
        assert (r is None) == (t is None)
        if t is not None:
            assert_close_values(r, t)


@ENGINE
@given(shape=shapes(0, 3), seed=seeds, name=float_names)
def test_clone_copies_and_detach_shares(shape, seed, name):
    array = make_array(seed, shape, name)
    facts = []
    for lib in LIBS:
        x = lib.tensor(array, requires_grad=True)
        h = x * 2
        c, d = h.clone(), h.detach()
        cloned_chain = node_chain(c.grad_fn)
        same_memory = (c.data_ptr() == h.data_ptr(), d.data_ptr() == h.data_ptr())
        before = (h._version, c._version, d._version)
        d.add_(1)  # through detach: h sees it, and h's version moves
        after = (h._version, c._version, d._version)
        seen_in_h = bool((h.detach() == lib.tensor(array) * 2 + 1).all())
        seen_in_c = bool((c.detach() == lib.tensor(array) * 2 + 1).all()) if h.numel() else False
        facts.append((cloned_chain, same_memory, before, after, seen_in_h, seen_in_c,
                      d.requires_grad, d.is_leaf, c.requires_grad, d._is_view()))
    assert facts[1] == facts[0]
    assert facts[0][1] == (False, True) and facts[0][3][0] == facts[0][3][2] == 1


def test_detached_then_modified_saved_tensor_is_caught():
    errors = []
    for lib in LIBS:
        x = lib.ones(3, requires_grad=True)
        y = x.exp()
        y.detach().zero_()  # shares the version counter, so the saved output is stale
        with pytest.raises(RuntimeError) as caught:
            y.sum().backward()
        errors.append(str(caught.value))
    assert errors[1] == errors[0]


# -- in-place ops on overlapping and expanded views ----------------------------------------
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


@ENGINE
@given(shape=shapes(1, 3, max_side=3), expand_dim=st.integers(0, 2), seed=seeds,
       op=st.sampled_from(["add_", "mul_", "sub_", "div_", "copy_", "exp_", "neg_", "fill_", "zero_",
                           "clamp_", "pow_"]))
def test_in_place_ops_on_expanded_tensors_raise_where_torch_does(shape, expand_dim, seed, op):
    """Any in-place op, any tensor with a dim expanded from 1: the same refusal or result."""
    assume(expand_dim < len(shape))
    array = make_array(seed, shape, "float32", away_from_zero=True)
    small = list(shape)
    small[expand_dim] = 1

    def program(lib):
        x = lib.tensor(array).clone()[tuple(slice(0, n) for n in small)].expand(*shape)
        args = {"copy_": (lib.ones(shape),), "fill_": (2.0,), "clamp_": (0.0, 1.0), "pow_": (2,),
                "exp_": (), "neg_": (), "zero_": ()}.get(op, (3.0,))
        getattr(x, op)(*args)
        return x
    theirs_error, mine_error = raised(program, torch), raised(program, reftorch)
    assert (theirs_error is None) == (mine_error is None), f"torch: {theirs_error!r}, reftorch: {mine_error!r}"
    if theirs_error is not None:
        assert str(mine_error) == str(theirs_error)
    else:
        assert_same(program(reftorch), program(torch), name=op)


# ======================================================================================
# masked_fill_ and masked_fill
# ======================================================================================
@st.composite
def mask_shapes(draw):
    """A shape and a mask shape that broadcasts to it (dims dropped in front, some set to 1),
    now and then one that does not."""
    shape = draw(shapes(0, 3), label="shape")
    drop = draw(st.integers(0, len(shape)), label="drop")
    ones = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)), label="ones")
    mask = tuple(1 if o else n for o, n in zip(ones, shape))[drop:]
    if draw(st.integers(0, 5), label="misfit") == 0:
        mask = (2,) + mask  # a mask larger than the tensor
    return shape, mask


@ENGINE
@given(shapes_=mask_shapes(), seed=seeds, name=dtype_names, layout=layouts,
       value=st.sampled_from(["int", "float", "tensor"]))
def test_masked_fill_in_place_and_out_of_place_match_torch(shapes_, seed, name, layout, value):
    shape, mask_shape = shapes_
    array = make_array(seed, shape, name)
    mask = np.random.default_rng(seed + 1).random(mask_shape) < 0.5
    assume(layout != "expanded")  # covered by the warning test below

    def fill_value(lib):
        return {"int": 2, "float": -1.5, "tensor": lib.tensor(7.0)}[value]

    def in_place(lib):
        leaf, t = build(lib, array, layout)
        out = t.masked_fill_(lib.tensor(mask), fill_value(lib))
        return out is t, out, leaf, t._version

    def out_of_place(lib):
        _, t = build(lib, array, layout)
        return lib.masked_fill(t, lib.tensor(mask), fill_value(lib)), t

    same_outcome(in_place, geometry=True)
    same_outcome(out_of_place, geometry=True)


@ENGINE
@given(shape=shapes(1, 3), seed=seeds, layout=st.sampled_from(["contiguous", "permuted", "stepped"]),
       tensor_value=st.booleans(), through_view=st.booleans())
def test_masked_fill_in_place_gradients_and_graph_match_torch(shape, seed, layout, tensor_value, through_view):
    array = make_array(seed, shape, "float64")
    mask = np.random.default_rng(seed).random(shape[-1:]) < 0.5
    results = []
    for lib in LIBS:
        leaf, t = build(lib, array, layout, requires_grad=True)
        value = lib.tensor(3.0, dtype=lib.float64, requires_grad=True) if tensor_value else 3.0
        y = t * 1.5
        target = y[0] if through_view and y.dim() > 1 else y
        target.masked_fill_(lib.tensor(mask if target.dim() else mask[:1].reshape(())), value)
        chain = node_chain(y.grad_fn)
        (y * y).sum().backward()
        results.append((chain, leaf.grad, value.grad if tensor_value else None))
    (t_chain, t_grad, t_vgrad), (r_chain, r_grad, r_vgrad) = results
    assert r_chain == t_chain
    assert_close_values(r_grad, t_grad, "leaf.grad")
    if tensor_value:
        assert_close_values(r_vgrad, t_vgrad, "value.grad")


def test_masked_fill_on_an_expanded_tensor_warns_like_torch():
    seen = []
    for lib in LIBS:
        t = lib.zeros(1, 3).expand(2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t.masked_fill_(lib.tensor([True, False, True]), 1.0)
        seen.append(([str(w.message).split(" (Triggered internally")[0] for w in caught], t.tolist()))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("case", ["int_mask", "vector_value", "mask_too_big", "mask_mismatch", "leaf"])
def test_masked_fill_errors_match_torch(case):
    programs = {
        "int_mask": lambda lib: lib.zeros(2, 3).masked_fill_(lib.tensor([1, 0, 1]), 1.0),
        "vector_value": lambda lib: lib.zeros(2, 3).masked_fill_(lib.tensor([True, False, True]),
                                                                 lib.tensor([1.0, 2.0])),
        "mask_too_big": lambda lib: lib.zeros(2, 3).masked_fill_(lib.ones(2, 2, 3, dtype=lib.bool), 1.0),
        "mask_mismatch": lambda lib: lib.zeros(2, 3).masked_fill_(lib.tensor([True, False]), 1.0),
        "leaf": lambda lib: lib.zeros(2, requires_grad=True).masked_fill_(lib.tensor([True, False]), 1.0),
    }
    same_error(programs[case])
