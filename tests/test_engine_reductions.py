"""Reductions beyond sum and mean, against torch 2.13: cumsum, cumprod and logsumexp (values,
grad_fn chains and gradients on every layout), and vector norms of any order, 0 included."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine_support import ENGINE, float_names, grads_and_chain, layouts, make_array, same_program, seeds, shapes


# -- cumulative sums and products, logsumexp -----------------------------------------------
@ENGINE
@given(shape=shapes(1, 3), seed=seeds, name=float_names, layout=layouts, dim=st.integers(-3, 2),
       keepdim=st.booleans(), op=st.sampled_from(["cumsum", "cumprod", "logsumexp"]))
def test_cumsum_cumprod_logsumexp_match_torch(shape, seed, name, layout, dim, keepdim, op):
    dim = dim % len(shape)
    array = make_array(seed, shape, name, 0.5, 1.5)
    if op == "logsumexp":
        grads_and_chain(lambda lib, x: x.logsumexp(dim, keepdim=keepdim), array, layout=layout)
    else:
        grads_and_chain(lambda lib, x: getattr(x, op)(dim), array, layout=layout)


def test_cumsum_of_integers_and_logsumexp_of_infinities():
    same_program(lambda lib: (lib.arange(5).cumsum(0), lib.tensor([True, True]).cumsum(0),
                              lib.arange(4, dtype=lib.int32).cumsum(0, dtype=lib.float64),
                              lib.tensor([float("-inf"), float("-inf")]).logsumexp(0),
                              lib.tensor([1.0, float("inf")]).logsumexp(0), lib.arange(4).logsumexp(0)))


# -- norms ---------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [1, 2, 3, 0.5, float("inf")])
def test_vector_norms_of_any_order(p):
    array = np.array([[3.0, -4.0, 1.0], [0.5, 2.0, -0.25]])
    grads_and_chain(lambda lib, x: x.norm(p), array)
    grads_and_chain(lambda lib, x: x.norm(p, dim=1, keepdim=True), array)


def test_the_zero_norm_counts_and_passes_no_gradient():
    def program(lib):
        x = lib.tensor([[3.0, 0.0, 1.0], [0.0, 0.0, -0.25]], requires_grad=True)
        y = x.norm(0)
        y.backward()
        return y, type(y.grad_fn).__name__, x.grad
    same_program(program)
