"""The gradient of every differentiable reftorch op against torch's, on random shapes,
broadcasting and non-contiguous inputs; and the recorded graph (grad_fn class names and the
next_functions structure down to AccumulateGrad) equal to torch's for the same program."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import reftorch
from engine_support import (
    ENGINE, LIBS, assert_close_values, build, float_names, layouts, make_array, node_chain, seeds,
    shapes,
)


def same_shape(n):
    return lambda data: [data.draw(shapes(0, 3), label="shape")] * n


def broadcast_pair(data):
    shape = data.draw(shapes(1, 3), label="shape")
    ones = data.draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)), label="ones")
    drop = data.draw(st.integers(0, len(shape)), label="drop")
    other = tuple(1 if o else n for o, n in zip(ones, shape))[drop:]
    return [shape, other] if data.draw(st.booleans(), label="swap") else [other, shape]


def at_least(dims):
    return lambda data: [data.draw(shapes(dims, 3), label="shape")]


def matrices(kind):
    def draw(data):
        n, k, m, b = (data.draw(st.integers(1, 4), label=x) for x in "nkmb")
        return {
            "mm": [(n, k), (k, m)], "mv": [(n, k), (k,)], "dot": [(k,), (k,)], "bmm": [(b, n, k), (b, k, m)],
            "addmm": [(m,), (n, k), (k, m)], "addmm_full": [(n, m), (n, k), (k, m)],
            "matmul_batched": [(b, 1, n, k), (b, k, m)], "matmul_vec_batch": [(k,), (b, k, m)],
            "outer": [(n,), (m,)], "matmul_1x2": [(k,), (k, m)], "matmul_3x2": [(b, n, k), (k, m)],
            "matmul_2x3": [(n, k), (b, k, m)], "matmul_3x1": [(b, n, k), (k,)],
            "matmul_1x3_batch": [(1, n, k), (b, k, m)], "matmul_4x1": [(b, 2, n, k), (k,)],
        }[kind]
    return draw


# name -> (shapes, domain, program(lib, *tensors)); domain: any | positive | away (from 0)
OPS = {
    "add": (broadcast_pair, "any", lambda lib, a, b: a + b),
    "add_alpha": (broadcast_pair, "any", lambda lib, a, b: lib.add(a, b, alpha=3)),
    "sub": (broadcast_pair, "any", lambda lib, a, b: a - b),
    "mul": (broadcast_pair, "any", lambda lib, a, b: a * b),
    "div": (broadcast_pair, "away", lambda lib, a, b: a / b),
    "mul_scalar": (same_shape(1), "any", lambda lib, a: 2.5 * a * 3),
    "rsub": (same_shape(1), "any", lambda lib, a: 1 - a),
    "rdiv": (same_shape(1), "away", lambda lib, a: 2 / a),
    "pow_scalar": (same_shape(1), "positive", lambda lib, a: a ** 3 + a ** 0.5),
    "pow_tensor": (broadcast_pair, "positive", lambda lib, a, b: a ** b),
    "rpow": (same_shape(1), "any", lambda lib, a: 2 ** a),
    "square": (same_shape(1), "any", lambda lib, a: lib.square(a)),
    "neg": (same_shape(1), "any", lambda lib, a: -a),
    "exp": (same_shape(1), "any", lambda lib, a: lib.exp(a)),
    "log": (same_shape(1), "positive", lambda lib, a: lib.log(a)),
    "sqrt": (same_shape(1), "positive", lambda lib, a: lib.sqrt(a)),
    "abs": (same_shape(1), "away", lambda lib, a: lib.abs(a)),
    "sin_cos": (same_shape(1), "any", lambda lib, a: lib.sin(a) * lib.cos(a)),
    "tanh": (same_shape(1), "any", lambda lib, a: lib.tanh(a)),
    "sigmoid": (same_shape(1), "any", lambda lib, a: lib.sigmoid(a)),
    "relu": (same_shape(1), "away", lambda lib, a: lib.relu(a)),
    "reciprocal": (same_shape(1), "away", lambda lib, a: lib.reciprocal(a)),
    "clamp": (same_shape(1), "away", lambda lib, a: lib.clamp(a, -1.1, 0.9)),
    "clamp_min": (same_shape(1), "away", lambda lib, a: a.clamp(min=0.1)),
    "maximum": (broadcast_pair, "any", lambda lib, a, b: lib.maximum(a, b)),
    "minimum": (broadcast_pair, "any", lambda lib, a, b: lib.minimum(a, b)),
    "where": (broadcast_pair, "any", lambda lib, a, b: lib.where(a > 0, a, b)),
    "sum": (same_shape(1), "any", lambda lib, a: a.sum()),
    "sum_dim": (at_least(1), "any", lambda lib, a: a.sum(0)),
    "sum_dims_keep": (at_least(2), "any", lambda lib, a: a.sum((0, -1), keepdim=True)),
    "mean": (same_shape(1), "any", lambda lib, a: a.mean()),
    "mean_dim": (at_least(1), "any", lambda lib, a: a.mean(-1, keepdim=True)),
    "prod": (same_shape(1), "away", lambda lib, a: a.prod()),
    "prod_dim": (at_least(1), "away", lambda lib, a: a.prod(0)),
    "max": (same_shape(1), "any", lambda lib, a: a.max()),
    "max_dim": (at_least(1), "any", lambda lib, a: a.max(-1)[0]),
    "min_dim_keep": (at_least(1), "any", lambda lib, a: a.min(0, keepdim=True).values),
    "amax": (at_least(1), "any", lambda lib, a: a.amax(0)),
    "topk": (at_least(1), "any", lambda lib, a: a.topk(1, -1).values),
    "sort": (at_least(1), "any", lambda lib, a: a.sort(-1, descending=True).values),
    "var": (at_least(1), "any", lambda lib, a: a.var() if a.numel() > 1 else a.sum()),
    "std_dim": (at_least(2), "any", lambda lib, a: a.std(-1) if a.shape[-1] > 1 else a.sum(-1)),
    "norm": (same_shape(1), "away", lambda lib, a: a.norm()),
    "softmax": (at_least(1), "any", lambda lib, a: lib.softmax(a, -1)),
    "log_softmax": (at_least(1), "any", lambda lib, a: lib.log_softmax(a, 0)),
    "mm": (matrices("mm"), "any", lambda lib, a, b: a.mm(b)),
    "matmul_op": (matrices("mm"), "any", lambda lib, a, b: a @ b),
    "mv": (matrices("mv"), "any", lambda lib, a, b: lib.mv(a, b)),
    "dot": (matrices("dot"), "any", lambda lib, a, b: lib.dot(a, b)),
    "bmm": (matrices("bmm"), "any", lambda lib, a, b: lib.bmm(a, b)),
    "addmm": (matrices("addmm"), "any", lambda lib, c, a, b: lib.addmm(c, a, b)),
    "addmm_scaled": (matrices("addmm_full"), "any", lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2)),
    "matmul_batched": (matrices("matmul_batched"), "any", lambda lib, a, b: lib.matmul(a, b)),
    "matmul_vec_batch": (matrices("matmul_vec_batch"), "any", lambda lib, a, b: lib.matmul(a, b)),
    "outer": (matrices("outer"), "any", lambda lib, a, b: lib.outer(a, b)),
    **{kind: (matrices(kind), "any", lambda lib, a, b: a @ b) for kind in (
        "matmul_1x2", "matmul_3x2", "matmul_2x3", "matmul_3x1", "matmul_1x3_batch", "matmul_4x1")},
    "t": (matrices("mm"), "any", lambda lib, a, b: a.t() @ a),
    "transpose": (at_least(2), "any", lambda lib, a: a.transpose(0, -1) * 2),
    "permute": (at_least(2), "any", lambda lib, a: a.permute(*reversed(range(a.dim()))) * 2),
    "T": (at_least(2), "any", lambda lib, a: a.T.exp()),
    "view": (same_shape(1), "any", lambda lib, a: a.contiguous().view(-1) * 2),
    "reshape": (at_least(1), "any", lambda lib, a: a.reshape(-1, 1) * 2),
    "flatten": (at_least(1), "any", lambda lib, a: a.flatten() * 2),
    "expand": (same_shape(1), "any", lambda lib, a: a.unsqueeze(0).expand(3, *a.shape) * 2),
    "squeeze_unsqueeze": (same_shape(1), "any", lambda lib, a: a.unsqueeze(-1).squeeze() * 2),
    "index_int": (at_least(1), "any", lambda lib, a: a[0] * 2),
    "index_slice": (at_least(1), "any", lambda lib, a: a[..., ::2] * 2),
    "index_none": (at_least(1), "any", lambda lib, a: a[None, 0:1] * 2),
    "index_tensor": (at_least(1), "any", lambda lib, a: a[lib.tensor([0, 0, -1])] * 2),
    "index_mask": (at_least(1), "any", lambda lib, a: a[a > 0] * 2),
    "masked_fill": (at_least(1), "any", lambda lib, a: a.masked_fill(a > 0, 0.5) * 2),
    "gather": (at_least(1), "any", lambda lib, a: a.gather(-1, lib.zeros(a.shape, dtype=lib.int64)) * 2),
    "cat": (broadcast_pair, "any", lambda lib, a, b: lib.cat([a.reshape(-1), b.reshape(-1)]) * 2),
    "stack": (same_shape(2), "any", lambda lib, a, b: lib.stack([a, b], -1) * 2),
    "repeat": (at_least(1), "any", lambda lib, a: a.repeat(2, *([1] * a.dim())) * 2),
    "tile": (at_least(1), "any", lambda lib, a: lib.tile(a, (2,)) * 2),
    "split": (at_least(1), "any", lambda lib, a: a.split(1, 0)[0] * 2 + a.split(1, 0)[-1]),
    "chunk": (at_least(1), "any", lambda lib, a: sum(c.sum() * (i + 1) for i, c in enumerate(a.chunk(2, -1)))),
    "unbind": (at_least(1), "any", lambda lib, a: a.unbind(0)[0] * 3),
    "clone": (same_shape(1), "any", lambda lib, a: a.clone() * 2),
    "piecewise_constant": (same_shape(1), "away", lambda lib, a: (a * 1.5).floor() + (a * 1.5).ceil() + lib.sign(a) + a),
    "to_double": (same_shape(1), "any", lambda lib, a: a.to(lib.float64) * 2),
    "to_float": (same_shape(1), "any", lambda lib, a: a.float() * 2),
    "narrow": (at_least(1), "any", lambda lib, a: a.narrow(0, 0, 1) * 2),
    "select": (at_least(1), "any", lambda lib, a: a.select(-1, -1) * 2),
}

TIES_MATTER = {"max", "max_dim", "min_dim_keep", "amax", "topk", "sort", "maximum", "minimum",
               "relu", "abs", "clamp", "clamp_min", "index_mask", "masked_fill", "where", "norm"}


def inputs_for(shape_list, seed, name, domain):
    arrays = []
    for i, shape in enumerate(shape_list):
        if domain == "positive":
            arrays.append(make_array(seed + i, shape, name, low=0.5, high=2.0))
        else:
            arrays.append(make_array(seed + i, shape, name, away_from_zero=domain == "away"))
    return arrays


def run_with_grad(lib, program, arrays, layout, grad_seed):
    built = [build(lib, a, layout, requires_grad=True) for a in arrays]
    leaves = [leaf for leaf, _ in built]
    out = program(lib, *(t for _, t in built))
    grad_out = make_array(grad_seed, tuple(out.shape), str(out.dtype).replace("torch.", ""))
    out.backward(lib.tensor(grad_out))
    return out, leaves


PER_OP = ENGINE.__class__(ENGINE, max_examples=max(ENGINE.max_examples * 2 // 5, 4))


@pytest.mark.parametrize("op", sorted(OPS))
@PER_OP
@given(data=st.data(), seed=seeds, name=float_names, layout=layouts)
def test_gradient_and_graph_match_torch(op, data, seed, name, layout):
    draw_shapes, domain, program = OPS[op]
    shape_list = draw_shapes(data)
    if layout == "expanded" and op in TIES_MATTER:
        layout = "permuted"  # repeated values make ties, where either answer is right
    arrays = inputs_for(shape_list, seed, name, domain)
    results = []
    for lib in LIBS:
        out, leaves = run_with_grad(lib, program, arrays, layout, seed + 99)
        results.append((out, leaves, node_chain(out.grad_fn)))
    (t_out, t_leaves, t_graph), (r_out, r_leaves, r_graph) = results
    assert_close_values(r_out, t_out, name=f"{op} forward")
    assert r_graph == t_graph, f"{op}: graph\n reftorch {r_graph}\n torch    {t_graph}"
    for i, (r, t) in enumerate(zip(r_leaves, t_leaves)):
        assert (r.grad is None) == (t.grad is None), f"{op}: grad {i} presence"
        if t.grad is not None:
            assert str(r.grad.dtype) == str(t.grad.dtype) and tuple(r.grad.shape) == tuple(t.grad.shape)
            assert_close_values(r.grad, t.grad, name=f"{op} grad of input {i}")


# a cast to float32 on the way makes finite differences too coarse (torch's gradcheck fails too)
GRADCHECK_OPS = sorted(set(OPS) - {"to_float"})


@pytest.mark.parametrize("op", GRADCHECK_OPS)
@ENGINE.__class__(ENGINE, max_examples=max(ENGINE.max_examples // 8, 2))
@given(data=st.data(), seed=seeds)
def test_gradcheck_passes_on_every_op(op, data, seed):
    """reftorch's own gradients agree with finite differences (float64, small shapes)."""
    draw_shapes, domain, program = OPS[op]
    arrays = inputs_for(draw_shapes(data), seed, "float64", domain)
    inputs = [reftorch.tensor(a, requires_grad=True) for a in arrays]
    assert reftorch.autograd.gradcheck(lambda *xs: program(reftorch, *xs), inputs)


@ENGINE
@given(shape=shapes(1, 2), seed=seeds, dtype_pair=st.sampled_from([("float32", "float64"), ("float64", "float32")]))
def test_gradients_keep_each_inputs_dtype(shape, seed, dtype_pair):
    a, b = (make_array(seed + i, shape, d) for i, d in enumerate(dtype_pair))
    grads = []
    for lib in LIBS:
        x, y = (lib.tensor(v, requires_grad=True) for v in (a, b))
        (x * y).sum().backward()
        grads.append((x.grad, y.grad))
    for r, t in zip(grads[1], grads[0]):
        assert str(r.dtype) == str(t.dtype)
        assert_close_values(r, t)


# -- node names of common ops --------------------------------------------------------------
def test_node_names_of_common_ops_match():
    def names(lib):
        x = lib.ones(2, 2, requires_grad=True)
        outs = [x * 2, x + 1, x.sum(), x.mean(), x.t(), x.view(4), x.exp(), x.relu(), x @ x, x[0],
                x.clone(), x.to(lib.float64), x.sigmoid(), x.tanh(), lib.softmax(x, 1), x.max(),
                x.unsqueeze(0), x.expand(3, 2, 2), x / 2, x - 1, -x, x ** 2, x.abs(), x.sqrt(),
                lib.cat([x, x]), lib.stack([x, x]), x.var(), x.norm(), x.clamp(0, 1), x % 2,
                x.as_strided((2,), (1,)), lib.div(x, 2, rounding_mode="floor"), x[lib.tensor([0])]]
        return [o.grad_fn.name() for o in outs]
    assert names(reftorch) == names(torch)
