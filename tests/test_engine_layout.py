"""Memory layout against torch 2.13: the strides a copy gets (clone, the *_like factories,
dtype conversions, contiguous) from transposed, permuted, sliced and expanded inputs, whether
``.view(-1)`` of it works, and the layout of the gradients backward leaves in ``.grad``."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import reftorch
from engine_support import ENGINE, LIBS, assert_close_values, assert_same, make_array, raised, seeds, shapes


# -- copies, like-factories and conversions keep torch's strides (preserve_format) ---------------
def _strided_input(lib, array, kind):
    """Layouts a student meets: transposed, permuted, sliced, expanded, and mixes of those."""
    t = lib.tensor(array)
    if kind == "transposed":
        return t.transpose(0, -1)
    if kind == "permuted":
        return t.permute(*reversed(range(t.dim())))
    if kind == "sliced":
        return t[::2]
    if kind == "sliced_last":
        return t[..., ::2]
    if kind == "permuted_sliced":
        return t.permute(*reversed(range(t.dim())))[::2]
    if kind == "expanded":
        return t[:1].expand(*t.shape)
    if kind == "expanded_transposed":
        return t[:1].expand(*t.shape).transpose(0, -1)
    if kind == "unsqueezed_transposed":
        return t.transpose(0, -1).unsqueeze(1)
    return t


STRIDED_KINDS = ("contiguous", "transposed", "permuted", "sliced", "sliced_last", "permuted_sliced",
                 "expanded", "expanded_transposed", "unsqueezed_transposed")


LIKE_PROGRAMS = {
    "clone": lambda lib, x: x.clone(),
    "clone_contiguous_format": lambda lib, x: x.clone(memory_format=lib.contiguous_format),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "ones_like": lambda lib, x: lib.ones_like(x),
    "empty_like": lambda lib, x: lib.empty_like(x).fill_(3),
    "full_like": lambda lib, x: lib.full_like(x, 7),
    "zeros_like_int": lambda lib, x: lib.zeros_like(x, dtype=lib.int64),
    "zeros_like_contiguous_format": lambda lib, x: lib.zeros_like(x, memory_format=lib.contiguous_format),
    "to_float64": lambda lib, x: x.to(lib.float64),
    "double": lambda lib, x: x.double(),
    "contiguous": lambda lib, x: x.contiguous(),
}


@ENGINE
@given(shape=shapes(1, 4, min_side=1, max_side=4), seed=seeds, kind=st.sampled_from(STRIDED_KINDS),
       program=st.sampled_from(sorted(LIKE_PROGRAMS)))
def test_copies_keep_torchs_strides_and_view_behaves_the_same(shape, seed, kind, program):
    """The copy's strides, and whether ``.view(-1)`` of it works (and what it gives)."""
    array = make_array(seed, shape, "float32")

    def run(lib):
        copy = LIKE_PROGRAMS[program](lib, _strided_input(lib, array, kind))
        return copy

    theirs, mine = (run(lib) for lib in LIBS)
    assert_same(mine, theirs, name=f"{program}[{kind}]")
    assert mine.stride() == theirs.stride(), f"{program}[{kind}]: {mine.stride()} != torch {theirs.stride()}"
    assert mine.is_contiguous() == theirs.is_contiguous()
    theirs_flat, mine_flat = raised(lambda lib: (theirs if lib is torch else mine).view(-1), torch), \
        raised(lambda lib: mine.view(-1), reftorch)
    assert (theirs_flat is None) == (mine_flat is None), f"view(-1): torch {theirs_flat!r}, reftorch {mine_flat!r}"
    if theirs_flat is None:
        assert_close_values(mine.view(-1), theirs.view(-1))
    else:
        assert str(mine_flat) == str(theirs_flat)


@pytest.mark.parametrize("program", sorted(LIKE_PROGRAMS))
def test_copies_of_an_empty_transposed_tensor_keep_its_strides(program):
    theirs, mine = (LIKE_PROGRAMS[program](lib, lib.ones(0, 3).t()) for lib in LIBS)
    assert mine.stride() == theirs.stride()


# -- gradients are laid out as torch lays them out -----------------------------------------
def _layout(t):
    return tuple(s for n, s in zip(t.shape, t.stride()) if n != 1)


@ENGINE
@given(shape=shapes(1, 3, min_side=1, max_side=4), seed=seeds, kind=st.sampled_from(STRIDED_KINDS),
       through=st.sampled_from(["transpose", "mul", "permute_sum"]))
def test_grad_of_a_leaf_is_laid_out_like_the_leaf(shape, seed, kind, through):
    """torch's gradient layout contract: a leaf's .grad has the leaf's strides when those
    are dense, else row-major; a retained non-leaf gradient is row-major."""
    array = make_array(seed, shape, "float32")

    def run(lib):
        leaf = _strided_input(lib, array, kind).requires_grad_()
        middle = leaf * 2
        middle.retain_grad()
        if through == "transpose":
            out = middle.transpose(0, -1) * 3
        elif through == "mul":
            out = middle * lib.arange(float(middle.numel())).view(middle.shape)
        else:
            out = middle.permute(*reversed(range(middle.dim()))).exp()
        out.sum().backward()
        return leaf.grad, middle.grad
    theirs, mine = (run(lib) for lib in LIBS)
    assert_same(mine, theirs, name=f"grad[{kind}, {through}]")
    # (the stride of a dim of size 1 is left out: torch keeps whatever the incoming gradient
    # had there, and reftorch's element-wise results differ from torch's in that stride only)
    for name, m, t in (("leaf grad", mine[0], theirs[0]), ("retained grad", mine[1], theirs[1])):
        assert _layout(m) == _layout(t), f"{name}: {m.stride()} != torch {t.stride()}"


def test_clone_of_an_expanded_tensor_is_row_major_and_views_flat():
    def program(lib):
        x = lib.arange(3.0).view(3, 1).expand(3, 4)
        copy = x.clone()
        return copy.stride(), copy.view(-1), x.t().clone().stride()
    theirs, mine = (program(lib) for lib in LIBS)
    assert_same(mine, theirs)
