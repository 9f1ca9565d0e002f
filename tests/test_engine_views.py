"""Views and indexing against torch: the same geometry (shape, strides, storage offset,
contiguity, view-ness) and the same storage sharing (a write through the view reaches the
base), on contiguous and non-contiguous inputs; advanced indexing and masked assignment; the
indexing ops (scatter, gather, index_select, index_add) and their errors; as_strided's gradients;
what prints (repr, print options, parameters, graph nodes); unfold and movedim (views) and flip
(a copy), with their gradients and errors."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from hypothesis import assume, example, given
from hypothesis import strategies as st

import reftorch
from engine_support import (
    ENGINE, LIBS, assert_same, backward_twice, both_or_same_error, build, dtype_names, float_names,
    grads_and_chain, layouts, make_array, node_chain, same_error, same_outcome, same_program,
    same_warnings, same_write_through, seeds, shapes,
)


def index_items(shape):
    """A basic index for ``shape``: ints, slices (with steps), None and at most one Ellipsis."""
    def item_for(n):
        return st.one_of(
            st.integers(-n, n - 1),
            st.builds(slice, st.none() | st.integers(-n - 1, n + 1), st.none() | st.integers(-n - 1, n + 1),
                      st.none() | st.integers(1, 3)),
            st.none(),
        )
    per_dim = [item_for(n) for n in shape]
    return st.tuples(*per_dim).flatmap(lambda items: st.tuples(
        st.just(items), st.integers(0, len(items)), st.integers(0, len(items)), st.booleans()
    )).map(lambda t: _assemble(*t))


def _assemble(items, cut, ellipsis_at, use_ellipsis):
    items = list(items[:cut])
    if use_ellipsis:
        items.insert(min(ellipsis_at, len(items)), Ellipsis)
    return tuple(items)


@ENGINE
@given(data=st.data(), shape=shapes(1, 3, 1, 5), seed=seeds, name=dtype_names, layout=layouts)
def test_basic_indexing_is_a_view_with_torch_geometry(data, shape, seed, name, layout):
    key = data.draw(index_items(shape), label="key")
    array = make_array(seed, shape, name)

    def program(lib):
        base, t = build(lib, array, layout)
        return t[key]

    results = same_program(program, geometry=True)
    if results is not None and layout != "expanded":
        same_write_through(lambda lib: build(lib, array, layout), lambda t: t[key])


VIEW_OPS = {
    "view_flat": lambda t: t.view(-1),
    "view_split": lambda t: t.view(*(t.shape[:-1] + (1, t.shape[-1]))),
    "reshape_flat": lambda t: t.reshape(-1),
    "reshape_swap": lambda t: t.reshape(tuple(reversed(t.shape))),
    "t": lambda t: t.t() if t.dim() <= 2 else t.transpose(0, 1),
    "T": lambda t: t.T,
    "transpose": lambda t: t.transpose(0, -1),
    "permute": lambda t: t.permute(*reversed(range(t.dim()))),
    "unsqueeze0": lambda t: t.unsqueeze(0),
    "unsqueeze_last": lambda t: t.unsqueeze(-1),
    "squeeze": lambda t: t.squeeze(),
    "squeeze0": lambda t: t.squeeze(0),
    "flatten": lambda t: t.flatten(),
    "flatten_tail": lambda t: t.flatten(1) if t.dim() > 1 else t.flatten(),
    "expand": lambda t: t.unsqueeze(0).expand(3, *t.shape),
    "expand_minus1": lambda t: t.unsqueeze(0).expand(2, *([-1] * t.dim())),
    "chunk": lambda t: t.chunk(2, -1),
    "chunk3": lambda t: t.chunk(3, 0),
    "split": lambda t: t.split(2, 0),
    "split_sizes": lambda t: t.split([1, t.shape[-1] - 1], -1),
    "narrow": lambda t: t.narrow(0, 0, 1),
    "select": lambda t: t.select(-1, 0),
    "unbind": lambda t: t.unbind(0),
    "contiguous": lambda t: t.contiguous(),
    "detach": lambda t: t.detach(),
    "diagonal_via_as_strided": lambda t: t.contiguous().as_strided((1,), (1,)),
}


@ENGINE
@given(op=st.sampled_from(sorted(VIEW_OPS)), shape=shapes(1, 3, 1, 4), seed=seeds, name=dtype_names,
       layout=layouts)
def test_view_ops_share_storage_with_torch_geometry(op, shape, seed, name, layout):
    array = make_array(seed, shape, name)

    def program(lib):
        _, t = build(lib, array, layout)
        return VIEW_OPS[op](t)

    results = same_program(program, geometry=True)
    if results is not None and layout != "expanded" and op not in ("chunk", "chunk3", "split", "split_sizes", "unbind", "diagonal_via_as_strided"):
        same_write_through(lambda lib: build(lib, array, layout), VIEW_OPS[op])


@ENGINE
@given(shape=shapes(2, 3, 1, 4), seed=seeds, layout=layouts)
def test_view_of_non_contiguous_raises_like_torch_and_reshape_copies(shape, seed, layout):
    array = make_array(seed, shape, "float32")
    same_outcome(lambda lib: build(lib, array, layout)[1].view(-1))
    same_program(lambda lib: build(lib, array, layout)[1].reshape(-1), geometry=True)
    same_outcome(lambda lib: build(lib, array, layout)[1].view(shape[0], -1))
    # a reshape that had to copy no longer shares memory with its input (same in both)
    sharing = []
    for lib in LIBS:
        leaf, t = build(lib, array, layout)
        r = t.reshape(-1)
        r.zero_()
        sharing.append(bool((leaf == 0).all()) if array.size else True)
    assert sharing[0] == sharing[1]


# -- advanced indexing and masked assignment ---------------------------------------------
@ENGINE
@given(shape=shapes(1, 3, 1, 5), seed=seeds, name=dtype_names, layout=layouts,
       index_seed=seeds, count=st.integers(0, 4), as_int32=st.booleans())
def test_advanced_indexing_copies_like_torch(shape, seed, name, layout, index_seed, count, as_int32):
    array = make_array(seed, shape, name)
    rng = np.random.default_rng(index_seed)
    rows = rng.integers(-shape[0], shape[0], size=count)
    mask = rng.random(shape) < 0.5
    row_mask = rng.random(shape[0]) < 0.5
    index_dtype = "int32" if as_int32 else "int64"

    def keys(lib):
        idx = lib.tensor(rows, dtype=getattr(lib, index_dtype))
        return {
            "int_tensor": idx, "bool_mask": lib.tensor(mask), "row_mask": lib.tensor(row_mask),
            "list": rows.tolist(), "int_then_slice": (idx, slice(None, None, 2)) if len(shape) > 1 else idx,
            "ellipsis_int": (Ellipsis, lib.tensor([0, -1])),
            "scalar_index_tensor": lib.tensor(0),
        }

    for label in keys(torch):
        results = same_program(lambda lib: build(lib, array, layout)[1][keys(lib)[label]], geometry=False)
        if results is not None:
            theirs, mine = results
            assert mine._is_view() == theirs._is_view(), label


@ENGINE
@given(shape=shapes(1, 3, 1, 5), seed=seeds, name=st.sampled_from(["int64", "float32", "float64", "bool"]),
       index_seed=seeds, value=st.sampled_from([0, 1, 2.5, "tensor", "row"]))
def test_masked_and_indexed_assignment_like_torch(shape, seed, name, index_seed, value):
    array = make_array(seed, shape, name)
    rng = np.random.default_rng(index_seed)
    mask = rng.random(shape) < 0.5
    rows = rng.integers(0, shape[0], size=2)

    def fill(lib, target_shape):
        if value == "tensor":
            return lib.tensor(3, dtype=getattr(lib, name))
        if value == "row":
            return lib.ones(target_shape[1:], dtype=getattr(lib, name)) if len(target_shape) > 1 else 5
        return value

    def masked(lib):
        t = lib.tensor(array)
        v = fill(lib, (int(mask.sum()),)) if value != "row" else 7
        version = t._version
        t[lib.tensor(mask)] = v
        return t, t._version - version

    def by_rows(lib):
        t = lib.tensor(array)
        t[lib.tensor(rows)] = fill(lib, shape)
        return t

    def by_slice(lib):
        t = lib.tensor(array)
        t[..., ::2] = fill(lib, shape) if value != "row" else 4
        return t

    def via_view(lib):
        t = lib.tensor(array)
        view = t[0]
        view[...] = 9
        return t

    for program in (masked, by_rows, by_slice, via_view):
        same_program(program)



def mixed_key(shape, rng):
    """An index mixing ints, step slices, None, index lists/tensors (1-d or 2-d) and masks: the
    order torch applies them in (basic items first, then the indices) decides the result's
    shape and layout."""
    key = []
    for n in shape:
        kind = rng.integers(0, 7)
        if kind == 0:
            key.append(("slice", None))
        elif kind == 1:
            key.append(("slice", 2))
        elif kind == 2:
            key.append(("int", int(rng.integers(0, n))))
        elif kind == 3:
            key.append(("none", None))
            key.append(("slice", None))
        elif kind == 4:
            key.append(("mask", (rng.random(n) < 0.6).tolist()))
        else:
            rows = rng.integers(0, n, size=int(rng.integers(1, 4))).tolist()
            key.append(("list" if kind == 5 else "tensor", [rows] if rng.random() < 0.3 else rows))
    return key


def _key_for(lib, key):
    items = {"slice": lambda v: slice(None, None, v), "int": lambda v: v, "none": lambda v: None,
             "mask": lambda v: lib.tensor(v), "list": lambda v: v, "tensor": lambda v: lib.tensor(v)}
    return tuple(items[kind](value) for kind, value in key)


@ENGINE
@given(shape=shapes(1, 4, 1, 4), seed=seeds, layout=layouts, index_seed=seeds)
def test_mixed_advanced_indexing_has_torchs_shape_layout_graph_and_assignment(shape, seed, layout, index_seed):
    key = mixed_key(shape, np.random.default_rng(index_seed))
    assume(any(kind in ("mask", "list", "tensor") for kind, _ in key))
    array = make_array(seed, shape, "float64")

    def read(lib):
        return build(lib, array, layout)[1][_key_for(lib, key)]

    # (reftorch says NumPy's "indexing arrays ... shapes (0,) (2,)" where torch says "indexing tensors ... [0], [2]")
    results = same_program(read, may_raise=IndexError)
    if results is None:  # torch refused the key (e.g. indices that do not broadcast): so did reftorch
        return
    theirs, mine = results
    if theirs.numel():  # an empty result's strides are left out (torch's are arbitrary there)
        assert mine.stride() == theirs.stride(), f"{key}: stride {mine.stride()} != torch {theirs.stride()}"

    def graph_and_grad(lib):
        leaf, tensor = build(lib, array, layout, requires_grad=True)
        out = tensor[_key_for(lib, key)]
        (out * out).sum().backward()
        return node_chain(out.grad_fn), leaf.grad

    same_program(graph_and_grad)

    def write(lib):
        t = lib.tensor(array)
        target_shape = tuple(t[_key_for(lib, key)].shape)
        t[_key_for(lib, key)] = lib.arange(float(np.prod(target_shape)), dtype=lib.float64).reshape(target_shape)
        return t

    same_program(write)

# -- devices -------------------------------------------------------------------------
@ENGINE
@given(shape=shapes(0, 3), seed=seeds, name=dtype_names)
def test_devices_to_returns_self_and_sim_copies(shape, seed, name):
    array = make_array(seed, shape, name)
    for lib in LIBS:
        t = lib.tensor(array)
        assert t.to("cpu") is t and t.to(t.dtype) is t and t.cpu() is t and t.to(t) is t
        assert t.to(lib.device("cpu")) is t
        assert str(t.device) == "cpu" and t.device == lib.device("cpu")
        assert t.to(lib.float64).dtype == lib.float64
    t = reftorch.tensor(array)
    on_sim = t.to("sim")
    assert on_sim is not t and str(on_sim.device) == "sim:0" and on_sim.device.type == "sim"
    assert on_sim.to("sim") is on_sim
    assert on_sim.untyped_storage() is not t.untyped_storage()
    back = on_sim.cpu()
    assert reftorch.equal(back, t) and back.untyped_storage() is not t.untyped_storage()
    if t.numel():
        on_sim.reshape(-1)[0] = 0 if name != "bool" else False
        assert reftorch.equal(t, reftorch.tensor(array))  # the copy on the device is its own memory
    assert (on_sim + on_sim).device == on_sim.device
    assert "device='sim:0'" in repr(on_sim)


@ENGINE
@given(shape=shapes(1, 3), seed=seeds, op=st.sampled_from(["add", "mul", "matmul", "cat", "where", "copy_"]))
def test_mixing_devices_raises_torchs_error(shape, seed, op):
    array = make_array(seed, shape, "float32")
    a, b = reftorch.tensor(array), reftorch.tensor(array).to("sim")
    programs = {
        "add": lambda: a + b, "mul": lambda: b * a, "matmul": lambda: a.reshape(-1) @ b.reshape(-1),
        "cat": lambda: reftorch.cat([a, b]), "where": lambda: reftorch.where(a > 0, a, b),
        "copy_": None,
    }
    if op == "copy_":  # copy_ across devices is allowed, as in torch
        a.copy_(b)
        return
    try:
        programs[op]()
    except RuntimeError as error:
        assert str(error).startswith("Expected all tensors to be on the same device"), str(error)
    else:
        raise AssertionError(f"{op} mixing cpu and sim did not raise")
    # a zero-dim CPU tensor may join an accelerator op, as in torch
    assert (b + reftorch.tensor(2.0)).device == b.device


# -- repr ---------------------------------------------------------------------------
REPR_VALUES = st.sampled_from([
    "small", "ints_as_float", "wide", "tiny", "huge", "mixed", "nan_inf", "zero", "negative", "rand",
])


def repr_array(kind, seed, shape, name):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(shape)
    values = {
        "small": base, "ints_as_float": np.round(base * 3), "wide": base * 1e5, "tiny": base * 1e-6,
        "huge": base * 1e9, "mixed": base * np.array(10.0) ** rng.integers(-3, 4, size=shape),
        "nan_inf": np.where(rng.random(shape) < 0.3, np.inf, base), "zero": np.zeros(shape),
        "negative": -np.abs(base), "rand": rng.random(shape),
    }[kind]
    if name == "bool":
        return np.asarray(values > 0)
    if name.startswith("int"):
        return np.asarray(np.nan_to_num(np.round(values * 10), posinf=7)).clip(-1e9, 1e9).astype(name)
    return np.asarray(values).astype(name)


@ENGINE
@given(kind=REPR_VALUES, seed=seeds, shape=shapes(0, 3, 0, 6), name=dtype_names,
       grad=st.sampled_from(["none", "leaf", "non_leaf"]))
def test_repr_text_equals_torch(kind, seed, shape, name, grad):
    array = repr_array(kind, seed, shape, name)
    texts = []
    for lib in LIBS:
        t = lib.tensor(array)
        if grad != "none" and name.startswith("float"):
            t.requires_grad_(True)
            if grad == "non_leaf":
                t = t * 1
        texts.append(repr(t))
    assert texts[1] == texts[0]


@ENGINE
@given(seed=seeds, shape=st.sampled_from([(1001,), (40, 30), (3, 400), (11, 11, 11), (2000,)]),
       name=dtype_names, kind=REPR_VALUES)
def test_repr_of_large_tensors_is_summarised_like_torch(seed, shape, name, kind):
    array = repr_array(kind, seed, shape, name)
    assert repr(reftorch.tensor(array)) == repr(torch.tensor(array))


def test_repr_of_dtypes_devices_and_sizes_matches_torch():
    for lib_name in ("float32", "float64", "int32", "int64", "bool"):
        assert repr(getattr(reftorch, lib_name)) == repr(getattr(torch, lib_name))
    assert repr(reftorch.zeros(2, 3).shape) == repr(torch.zeros(2, 3).shape)
    assert repr(reftorch.device("cpu")) == repr(torch.device("cpu"))
    assert repr(reftorch.zeros(0, 3)) == repr(torch.zeros(0, 3))
    assert repr(reftorch.tensor(3.5)) == repr(torch.tensor(3.5))
    assert repr(reftorch.tensor([], dtype=reftorch.int32)) == repr(torch.tensor([], dtype=torch.int32))


SIM_PROGRAMS = {
    "arith": lambda lib, x, y: (x * y + 2) / (y * y + 1) - x.exp(),
    "reduce": lambda lib, x, y: (x.sum(0), x.max(-1).values, x.mean()),
    "matmul": lambda lib, x, y: x @ y.t(),
    "views": lambda lib, x, y: (x.t().contiguous(), x[:, ::2], x.reshape(-1)[1:]),
    "index": lambda lib, x, y: (x[x > 0], x[lib.tensor([0, 0])]),
    "grad": lambda lib, x, y: _sim_grad(lib, x, y),
}


def _sim_grad(lib, x, y):
    x = x.detach().requires_grad_()
    (lib.tanh(x @ y.t()) * 2).sum().backward()
    return x.grad


@ENGINE
@given(program=st.sampled_from(sorted(SIM_PROGRAMS)), n=st.integers(1, 4), m=st.integers(2, 4), seed=seeds)
def test_sim_device_computes_what_torch_computes_on_cpu(program, n, m, seed):
    x, y = make_array(seed, (n, m), "float32"), make_array(seed + 1, (n, m), "float32")
    theirs = SIM_PROGRAMS[program](torch, torch.tensor(x), torch.tensor(y))
    before = reftorch.sim.kernel_launches()
    mine = SIM_PROGRAMS[program](reftorch, reftorch.tensor(x, device="sim"), reftorch.tensor(y, device="sim"))
    assert reftorch.sim.kernel_launches() > before  # the work ran on the device's kernels
    for r in (mine if isinstance(mine, tuple) else (mine,)):
        assert r.device.type == "sim"
    assert_same(tuple(t.cpu() for t in mine) if isinstance(mine, tuple) else mine.cpu(), theirs)
    assert reftorch.sim.memory_allocated() > 0


# -- indexing ops: scatter, gather, index_select, index_add, masked_select -----------------
def _index(seed, shape, dim, size):
    return np.random.default_rng(seed).integers(0, size, size=shape)


@ENGINE
@given(seed=seeds, name=float_names, dim=st.integers(0, 1), op=st.sampled_from(
    ["scatter_src", "scatter_value", "scatter_add", "sum", "prod", "mean", "amax", "amin"]),
    include_self=st.booleans())
def test_scatter_family_values_and_gradients(seed, name, dim, op, include_self):
    x = make_array(seed, (3, 4), name)
    src = make_array(seed + 1, (2, 3), name, 0.5, 2.0)
    index = _index(seed, (2, 3), dim, x.shape[dim])

    def program(lib, x, src):
        i = lib.tensor(index)
        if op == "scatter_src":
            return x.scatter(dim, i, src)
        if op == "scatter_value":
            return x.scatter(dim, i, 2.5) * src.sum()
        if op == "scatter_add":
            return lib.scatter_add(x, dim, i, src)
        return x.scatter_reduce(dim, i, src, op, include_self=include_self)
    grads_and_chain(program, x, src)


def test_scatter_in_place_forms_and_reduce_argument():
    def program(lib):
        x = lib.zeros(3, 4)
        x.scatter_(1, lib.tensor([[0, 1], [2, 3]]), lib.ones(2, 2) * 2)
        x.scatter_add_(0, lib.tensor([[0, 0, 0, 0]]), lib.ones(1, 4))
        y = lib.zeros(3, 4).scatter(1, lib.tensor([[0, 0], [2, 3]]), lib.ones(2, 2), reduce="add")
        z = lib.zeros(3).scatter_reduce(0, lib.tensor([0, 0, 2]), lib.tensor([1.0, 5.0, 2.0]), reduce="amax")
        return x, y, z
    same_program(program)
    same_warnings(lambda lib: lib.zeros(3, 4).scatter(1, lib.tensor([[0]]), lib.ones(1, 1), reduce="add"))
    for bad in (lambda lib: lib.zeros(3).scatter(0, lib.tensor([5]), 1.0),
                lambda lib: lib.zeros(3).scatter(0, lib.tensor([0]), lib.tensor([1])),
                lambda lib: lib.zeros(3).scatter(0, lib.tensor([[0]]), 1.0),
                lambda lib: lib.zeros(2, 3).scatter(1, lib.tensor([[0, 1]]), lib.ones(1, 1)),
                lambda lib: lib.zeros(3).scatter(0, lib.tensor([0]), lib.ones(1), reduce="foo"),
                lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1), "foo")):
        same_error(bad)


@ENGINE
@given(seed=seeds, name=float_names, layout=layouts, dim=st.integers(0, 1), count=st.integers(1, 5))
def test_index_select_index_add_masked_select(seed, name, layout, dim, count):
    x = make_array(seed, (3, 4), name)
    index = np.random.default_rng(seed).integers(0, x.shape[dim], size=count)
    grads_and_chain(lambda lib, x: x.index_select(dim, lib.tensor(index)), x, layout=layout)
    grads_and_chain(lambda lib, x: x.masked_select(x > 0), x, layout=layout)
    source_shape = (count, 4) if dim == 0 else (3, count)
    source = make_array(seed + 2, source_shape, name)
    grads_and_chain(lambda lib, x, s: x.index_add(dim, lib.tensor(index), s, alpha=2), x, source)


def test_index_add_in_place_index_fill_and_their_errors():
    def program(lib):
        x = lib.zeros(3, 4)
        x.index_add_(0, lib.tensor([0, 0]), lib.ones(2, 4))
        return x, x.index_fill(1, lib.tensor([0, 2]), -1.0), lib.arange(12.0).view(3, 4).index_select(1, lib.tensor([3, 0]))
    same_program(program)
    for bad in (lambda lib: lib.zeros(3, 4).index_add_(0, lib.tensor([5]), lib.ones(1, 4)),
                lambda lib: lib.zeros(3, 4).index_add_(0, lib.tensor([0]), lib.ones(2, 4)),
                lambda lib: lib.zeros(3, 4).index_add_(0, lib.tensor([0]), lib.ones(1, 4, dtype=lib.float64)),
                lambda lib: lib.zeros(3, 4).index_add_(0, lib.tensor([0, 0]), lib.ones(2, 3)),
                lambda lib: lib.arange(12.0).view(3, 4).index_select(1, lib.tensor([[0]])),
                lambda lib: lib.arange(12.0).view(3, 4).index_select(1, lib.tensor([7])),
                lambda lib: lib.arange(12.0).view(3, 4).index_select(0, lib.tensor([7])),
                lambda lib: lib.arange(12.0).view(3, 4).masked_select(lib.arange(4))):
        same_error(bad)


def test_gather_reads_only_the_corner_its_index_covers():
    same_program(lambda lib: lib.arange(6).view(2, 3).gather(1, lib.tensor([[0, 1, 2, 0]])))


# -- indexing and indexed assignment: torch's errors ---------------------------------------
@pytest.mark.parametrize("values,target", [("int64", "float32"), ("float64", "float32"), ("float32", "int64"),
                                           ("float32", "float64"), ("int32", "int64")])
def test_index_put_refuses_a_source_of_another_dtype(values, target):
    same_error(lambda lib: lib.zeros(3, dtype=getattr(lib, target)).index_put_(
        (lib.tensor([0]),), lib.ones(1, dtype=getattr(lib, values))))
    same_error(lambda lib: lib.zeros(3, dtype=getattr(lib, target)).__setitem__(
        lib.tensor([0, 2]), lib.ones(2, dtype=getattr(lib, values))))


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


# -- as_strided records AsStridedBackward0 -------------------------------------------------
@ENGINE
@given(data=st.data(), seed=seeds, base_layout=st.sampled_from(["plain", "view", "transposed", "expanded"]))
def test_as_strided_gradients_match(data, seed, base_layout):
    """Any in-bounds geometry, overlapping or not, over a leaf, a view or an expanded view."""
    storage_size = 12
    ndim = data.draw(st.integers(1, 3), label="ndim")
    size = tuple(data.draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim), label="size"))
    stride = tuple(data.draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim), label="stride"))
    span = sum((n - 1) * s for n, s in zip(size, stride))
    assume(span < storage_size)
    offset = data.draw(st.integers(0, storage_size - 1 - span), label="offset")
    weights = make_array(seed, size, "float64")

    def program(lib):
        leaf = lib.tensor(make_array(seed + 1, (storage_size,), "float64"), requires_grad=True)
        base = {"plain": lambda: leaf,
                "view": lambda: (leaf * 1)[2:],
                "transposed": lambda: (leaf * 1).view(3, 4).t(),
                "expanded": lambda: (leaf * 1)[:4].view(4, 1).expand(4, 3)}[base_layout]()
        out = base.as_strided(size, stride, offset)
        (out * lib.tensor(weights)).sum().backward()
        return out, out.grad_fn.name(), out._is_view(), leaf.grad
    results = both_or_same_error(program)
    if results:
        assert_same(results[1], results[0], geometry=True, name="as_strided")


@pytest.mark.parametrize("size, stride, offset, transposed", [
    ((2,), (2,), 1, False), ((3, 3), (1, 1), 0, False), ((2, 2), (4, 1), 0, True)])
def test_as_strided_gradients_of_gradients_match(size, stride, offset, transposed):
    def program(lib):
        a = lib.arange(8.0, requires_grad=True)
        base = (a * 1).view(2, 4).t() if transposed else a
        y = base.as_strided(size, stride, offset)
        (g,) = lib.autograd.grad((y ** 3).sum(), a, create_graph=True)
        (g * lib.arange(8.0)).sum().backward()
        return g, a.grad
    theirs, mine = (program(lib) for lib in LIBS)
    assert_same(mine, theirs)
    assert mine[0].grad_fn.name() == theirs[0].grad_fn.name()


def test_as_strided_graph_is_freed_after_backward():
    same_error(backward_twice(lambda lib, x: (x.as_strided((2,), (1,), 1) ** 2).sum()))


# -- printing: print options, parameters, graph nodes --------------------------------------
@pytest.mark.parametrize("options", [dict(precision=2), dict(sci_mode=False), dict(sci_mode=True),
                                     dict(threshold=5, edgeitems=1), dict(linewidth=30), dict(profile="short"),
                                     dict(profile="full"), dict(precision=6, sci_mode=False)])
def test_set_printoptions(options):
    def program(lib):
        lib.set_printoptions(**options)
        try:
            return [repr(t) for t in (lib.tensor([1.123456789, 2000.5, 3e-5]), lib.arange(20.0),
                                      lib.arange(12).view(3, 4), lib.tensor([0.5, 1.5]))]
        finally:
            lib.set_printoptions(profile="default")
    same_program(program)


PRINTED = {
    "str_parameter": lambda lib: str(lib.nn.Parameter(lib.ones(2))),
    "repr_parameter": lambda lib: repr(lib.nn.Parameter(lib.arange(6.0).view(2, 3))),
    "print_parameter_0d": lambda lib: str(lib.nn.Parameter(lib.tensor(1.5))),
    "print_parameter_float64": lambda lib: str(lib.nn.Parameter(lib.tensor([1.5], dtype=lib.float64))),
    "print_parameter_frozen": lambda lib: str(lib.nn.Parameter(lib.ones(2), requires_grad=False)),
    "format_parameter": lambda lib: f"{lib.nn.Parameter(lib.ones(2))}",
    "print_list_of_parameters": lambda lib: str([lib.nn.Parameter(lib.ones(1))]),
    "accumulate_grad_name": lambda lib: (lib.ones(2, requires_grad=True) * 2).grad_fn.next_functions[0][0].name(),
    "accumulate_grad_class": lambda lib: type((lib.ones(2, requires_grad=True) * 2).grad_fn.next_functions[0][0]).__name__,
    "accumulate_grad_repr": lambda lib: repr((lib.ones(2, requires_grad=True) * 2).grad_fn.next_functions[0][0]).split(" object")[0],
    "copy_slices_name": lambda lib: _copy_slices(lib).name(),
    "copy_slices_repr": lambda lib: repr(_copy_slices(lib)).split(" object")[0],
    "empty_tensor": lambda lib: repr(lib.tensor([])),
}


def _copy_slices(lib):
    y = lib.ones(2, requires_grad=True) * 1
    y[0].mul_(2)
    return y.grad_fn


@pytest.mark.parametrize("case", sorted(PRINTED))
def test_printed_text_matches(case):
    theirs, mine = (PRINTED[case](lib) for lib in LIBS)
    assert mine == theirs


# ======================================================================================
# unfold: a strided view of overlapping windows
# ======================================================================================
@ENGINE
@given(shape=shapes(0, 3, 1, 5), seed=seeds, name=dtype_names, layout=layouts,
       dim=st.integers(-3, 2), size=st.integers(-1, 5), step=st.integers(0, 3))
@example(shape=(2, 5), seed=0, name="float32", layout="contiguous", dim=1, size=3, step=1)  # windows overlap
def test_unfold_is_a_view_with_torch_geometry(shape, seed, name, layout, dim, size, step):
    array = make_array(seed, shape, name)
    results = same_outcome(lambda lib: build(lib, array, layout)[1].unfold(dim, size, step), geometry=True)
    if results is not None and layout != "expanded":  # a write through the windows lands in the base
        same_write_through(lambda lib: build(lib, array, layout), lambda t: t.unfold(dim, size, step))


@ENGINE
@given(shape=shapes(1, 3, 1, 5), seed=seeds, layout=layouts, data=st.data())
def test_unfold_gradient_adds_overlapping_windows_like_torch(shape, seed, layout, data):
    dim = data.draw(st.integers(0, len(shape) - 1), label="dim")
    size = data.draw(st.integers(0, shape[dim]), label="size")
    step = data.draw(st.integers(1, 3), label="step")
    grads_and_chain(lambda lib, t: t.unfold(dim, size, step) * 2, make_array(seed, shape, "float32"), layout=layout)
    # windows that overlap every time (the draws above need not give any)
    grads_and_chain(lambda lib, t: t.unfold(0, 3, 1) * 2, make_array(seed, (5,), "float32"), layout=layout)


def test_unfold_double_backward_matches_torch():
    def program(lib):
        x = lib.arange(6.0, dtype=lib.float64).reshape(2, 3).requires_grad_()
        u = x.unfold(1, 2, 1)
        (g,) = lib.autograd.grad((u ** 3).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return g, gg, type(g.grad_fn).__name__
    same_program(program)


def test_unfold_of_a_zero_dim_tensor_matches_torch():
    same_outcome(lambda lib: lib.tensor(3.0).unfold(0, 1, 1), geometry=True)
    same_outcome(lambda lib: lib.tensor(3.0).unfold(-1, 0, 2), geometry=True)
    same_error(lambda lib: lib.tensor(3.0).unfold(0, 2, 1))
    grads_and_chain(lambda lib, t: t.unfold(0, 1, 1), np.array(2.0, dtype="float32"))


# ======================================================================================
# movedim / moveaxis
# ======================================================================================
@ENGINE
@given(shape=shapes(0, 4, 1, 4), seed=seeds, layout=layouts, data=st.data(), as_int=st.booleans())
def test_movedim_is_a_permuted_view_like_torch(shape, seed, layout, data, as_int):
    n = max(len(shape), 1)
    count = 1 if as_int else data.draw(st.integers(0, n), label="count")
    dims = st.integers(-n - 1, n)  # now and then out of range
    source = data.draw(st.lists(dims, min_size=count, max_size=count), label="source")
    destination = data.draw(st.lists(dims, min_size=count, max_size=count + data.draw(
        st.integers(0, 1), label="extra")), label="destination")
    if as_int and len(destination) == 1:
        source, destination = source[0], destination[0]
    array = make_array(seed, shape, "float32")
    results = same_outcome(lambda lib: build(lib, array, layout)[1].movedim(source, destination), geometry=True)
    if results is not None:
        same_outcome(lambda lib: lib.moveaxis(build(lib, array, layout)[1], source, destination), geometry=True)
        grads_and_chain(lambda lib, t: lib.movedim(t, source, destination) * 3, array, layout=layout)


@pytest.mark.parametrize("args", [((0, 1), (0,)), ((0, 0), (0, 1)), ((0, 1), (1, 1)), (0, 2)])
def test_movedim_errors_match_torch(args):
    same_error(lambda lib: lib.movedim(lib.zeros(2, 3), *args))


# ======================================================================================
# flip: a copy (torch has no negative strides)
# ======================================================================================
@ENGINE
@given(shape=shapes(0, 3, 1, 4), seed=seeds, name=dtype_names, layout=layouts, data=st.data())
def test_flip_copies_with_torch_layout_and_gradient(shape, seed, name, layout, data):
    n = max(len(shape), 1)
    dims = data.draw(st.lists(st.integers(-n - 1, n), max_size=3), label="dims")
    array = make_array(seed, shape, name)
    results = same_outcome(lambda lib: lib.flip(build(lib, array, layout)[1], dims), geometry=True)
    if results is None:
        return
    # the method takes varargs (none: an error)
    same_outcome(lambda lib: build(lib, array, layout)[1].flip(*dims), geometry=True)
    if name in ("float32", "float64"):
        grads_and_chain(lambda lib, t: lib.flip(t, dims) * lib.arange(1.0, t.numel() + 1, dtype=t.dtype).reshape(
            t.shape), array, layout=layout)


@pytest.mark.parametrize("args", [((0, 0),), ((2,),), (0,), ((0, -2),)])
def test_flip_errors_match_torch(args):
    same_error(lambda lib: lib.flip(lib.zeros(2, 3), *args))


# -- meshgrid (issue 29: d2l's programs build their grids with it) -----------------------------
MESHGRIDS = {
    "ij": lambda lib: lib.meshgrid(lib.arange(3), lib.arange(2), indexing="ij"),
    "xy": lambda lib: lib.meshgrid(lib.arange(3), lib.arange(2), indexing="xy"),
    "xy_three": lambda lib: lib.meshgrid(lib.arange(3.0), lib.arange(2.0), lib.arange(4.0), indexing="xy"),
    "a_list": lambda lib: lib.meshgrid([lib.arange(3), lib.tensor(7)], indexing="xy"),
    "one_tensor_xy": lambda lib: lib.meshgrid(lib.arange(3.0), indexing="xy"),
    "mixed_dtypes": lambda lib: lib.meshgrid(lib.arange(3), lib.arange(2.0), indexing="ij"),
    "a_matrix": lambda lib: lib.meshgrid(lib.arange(2.0), lib.ones(2, 3) * 1.5, indexing="xy"),
    "bad_indexing": lambda lib: lib.meshgrid(lib.arange(3), indexing="yx"),
    "nothing": lambda lib: lib.meshgrid(indexing="ij"),
    "not_a_tensor": lambda lib: lib.meshgrid(lib.arange(3), 5, indexing="ij"),
}


@pytest.mark.parametrize("case", sorted(MESHGRIDS))
def test_meshgrid_as_torch(case):
    same_outcome(MESHGRIDS[case], geometry=True)


def test_meshgrid_gradients_flow_back_through_expand_and_view():
    def program(lib):
        x, y = lib.arange(3.0, requires_grad=True), lib.arange(2.0, requires_grad=True)
        gx, gy = lib.meshgrid(x, y, indexing="xy")
        (gx * gy * gy).sum().backward()
        return x.grad, y.grad, node_chain(gx.grad_fn)
    same_program(program)


def test_meshgrid_without_indexing_warns_once_per_process_as_torch():
    script = textwrap.dedent("""
        import warnings
        import {lib} as torch
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grids = torch.meshgrid(torch.arange(3), torch.arange(2))
            torch.meshgrid(torch.arange(3), torch.arange(2))
        print([(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in caught], grids[1].tolist())
    """)
    said = [subprocess.run([sys.executable, "-c", script.format(lib=lib.__name__)], capture_output=True, text=True,
                           check=True).stdout for lib in LIBS]
    assert said[1] == said[0] and said[0].count("it will be required to pass the indexing argument") == 1


# -- view(dtype) and indexing with a range (issue 29) -----------------------------------------
VIEWS_AS_DTYPE = {
    "float_as_int": lambda lib: lib.arange(4, dtype=lib.float32).view(lib.int32),
    "float_as_bytes": lambda lib: lib.arange(4, dtype=lib.float32).view(lib.uint8),
    "bytes_as_float": lambda lib: lib.arange(8, dtype=lib.uint8).view(lib.float32),
    "rows_of_bytes_as_short": lambda lib: lib.arange(8, dtype=lib.uint8).view(2, 4).view(lib.int16),
    "a_slice_as_short": lambda lib: lib.arange(8, dtype=lib.uint8).view(2, 4)[1:].view(lib.int16),
    "float_as_half_keyword": lambda lib: lib.tensor([1.5, -2.0]).view(dtype=lib.float16),
    "float_as_bfloat16": lambda lib: lib.tensor([1.5, -2.0]).view(lib.bfloat16),
    "double_as_long": lambda lib: lib.tensor([1.5, -2.0], dtype=lib.float64).view(lib.int64),
    "a_number_same_size": lambda lib: lib.tensor(1.5).view(lib.int32),
    "empty": lambda lib: lib.zeros(0).view(lib.int64),
    "transposed_same_size": lambda lib: lib.arange(8, dtype=lib.uint8).view(2, 4).t().view(lib.int8),
    "size_not_divisible": lambda lib: lib.arange(6, dtype=lib.uint8).view(lib.int32),
    "transposed_other_size": lambda lib: lib.arange(8, dtype=lib.uint8).view(2, 4).t().view(lib.int16),
    "offset_not_divisible": lambda lib: lib.arange(8, dtype=lib.uint8).view(2, 4)[:, 1:3].view(lib.int16),
    "stride_not_divisible": lambda lib: lib.zeros(3, 0).view(lib.int64),
    "a_number_other_size": lambda lib: lib.tensor(1.5).view(lib.int16),
}


@pytest.mark.parametrize("case", sorted(VIEWS_AS_DTYPE))
def test_view_as_another_dtype_as_torch(case):
    same_outcome(VIEWS_AS_DTYPE[case], geometry=True)


def test_view_as_another_dtype_shares_memory_and_version_but_not_autograd():
    def program(lib):
        a = lib.tensor([1.5, -2.0], requires_grad=True)
        same_size = a.view(lib.float32)
        b = lib.tensor([1.5, -2.0])
        bits = b.view(lib.int32)
        bits[0] = 0
        b.add_(1)
        return (same_size.requires_grad, same_size.grad_fn is None, same_size._base is None, bits._is_view(),
                b, bits, b._version, bits._version,
                bits.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())
    same_program(program)


RANGE_KEYS = {
    "range": lambda lib: lib.arange(10)[range(3)],
    "range_with_step": lambda lib: lib.arange(10)[range(1, 8, 2)],
    "range_of_rows": lambda lib: lib.arange(12).view(3, 4)[range(2)],
    "range_of_columns": lambda lib: lib.arange(12).view(3, 4)[:, range(1, 3)],
    "two_ranges": lambda lib: lib.arange(12).view(3, 4)[range(2), range(2)],
    "empty_range": lambda lib: lib.arange(10)[range(0)],
    "range_out_of_bounds": lambda lib: lib.arange(3)[range(5)],
    "range_assigned": lambda lib: _assign_through_range(lib),
}


def _assign_through_range(lib):
    t = lib.zeros(2, 5)
    t[:, range(1, 4, 2)] = 7
    return t


@pytest.mark.parametrize("case", sorted(RANGE_KEYS))
def test_indexing_with_a_range_as_torch(case):
    same_outcome(RANGE_KEYS[case], geometry=True)


def test_indexing_with_a_range_is_differentiable():
    def program(lib):
        x = lib.arange(6.0, requires_grad=True)
        y = x[range(1, 5, 2)]
        (y * 3).sum().backward()
        return y, x.grad, node_chain(y.grad_fn)
    same_program(program)
