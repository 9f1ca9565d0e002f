"""Views and indexing against torch: the same geometry (shape, strides, storage offset,
contiguity, view-ness) and the same storage sharing (a write through the view reaches the
base), on contiguous and non-contiguous inputs; advanced indexing and masked assignment."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

import reftorch
from engine_support import (
    ENGINE, LIBS, assert_same, build, dtype_names, layouts, make_array, node_chain, run_both,
    same_outcome, same_program, seeds, shapes,
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
        _check_write_through(lambda lib: build(lib, array, layout), lambda t: t[key])


def _check_write_through(make, make_view):
    """A write through the view shows in the base, in both libraries, at the same places."""
    seen = []
    for lib in LIBS:
        leaf, t = make(lib)
        v = make_view(t)
        if v.numel() == 0 or v.stride() and 0 in v.stride() or not v._is_view():
            return  # nothing to write, a broadcast, or a copy (views were compared already)
        before = leaf.clone()
        v.fill_(1 if v.dtype == lib.bool else 42)
        assert v._version == leaf._version and leaf._version >= 1, lib.__name__
        seen.append(leaf.ne(before).reshape(-1).tolist())
    assert seen[0] == seen[1]


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
        _check_write_through(lambda lib: build(lib, array, layout), VIEW_OPS[op])


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
