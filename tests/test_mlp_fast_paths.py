"""The MLP training step's hot paths (bench/bench_engine.py) against torch: the layouts of
the gradients they produce, and the short-cuts taken for speed, which must give torch's
numbers, dtypes, strides and errors exactly as the general path does."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from engine_support import ENGINE, LIBS, assert_same, make_array, seeds


def matrix(lib, array, column_major, requires_grad=True):
    """A matrix with ``array``'s values, stored row by row or column by column (like ``w.t()``)."""
    if column_major:
        leaf = lib.tensor(np.ascontiguousarray(array.T), requires_grad=requires_grad)
        return leaf, leaf.t()
    leaf = lib.tensor(array, requires_grad=requires_grad)
    return leaf, leaf * 1  # a non-leaf, so that autograd.grad returns the raw gradient


@ENGINE
@given(seed=seeds, sizes=st.tuples(*[st.integers(1, 4)] * 3),
       column_major=st.tuples(st.booleans(), st.booleans()), op=st.sampled_from(["mm", "addmm", "linear"]))
def test_matrix_product_gradients_keep_torchs_layout(seed, sizes, column_major, op):
    """torch hands a column-major mat1/mat2 a column-major gradient (mm_mat1_backward,
    mm_mat2_backward); a Linear weight therefore gets a contiguous .grad."""
    n, k, m = sizes
    a, b, bias = (make_array(seed + i, shape, "float32") for i, shape in enumerate([(n, k), (k, m), (m,)]))
    results = []
    for lib in LIBS:
        _, x = matrix(lib, a, column_major[0])
        if op == "linear":  # the weight is (out, in); linear multiplies by weight.t()
            w_leaf = w = lib.tensor(np.ascontiguousarray(b.T), requires_grad=True)
            out = lib.nn.functional.linear(x, w, lib.tensor(bias))
        else:
            w_leaf, w = matrix(lib, b, column_major[1])
            out = x.mm(w) if op == "mm" else lib.addmm(lib.tensor(bias), x, w)
        grads = lib.autograd.grad(out.sum() * 2, (x, w), retain_graph=True)
        out.sum().backward()
        # (a size-1 dim leaves a stride free, and torch's AccumulateGrad then keeps the
        # incoming gradient's strides where reftorch's copy renumbers them: compared only
        # when every side is at least 2)
        leaf_grad = w_leaf.grad if min(sizes) > 1 else None
        results.append((out, grads, leaf_grad))
    assert_same(results[1], results[0], geometry=True, name=op)


def test_linear_stack_parameter_grads_are_contiguous_like_torch():
    grads = []
    for lib in LIBS:
        lib.manual_seed(0)
        nn = lib.nn
        model = nn.Sequential(nn.Linear(7, 5), nn.ReLU(), nn.Linear(5, 3))
        x, y = lib.randn(4, 7), lib.tensor([0, 2, 1, 2])
        nn.CrossEntropyLoss()(model(x), y).backward()
        grads.append([p.grad.stride() for p in model.parameters()])
    assert grads[1] == grads[0] == [(7, 1), (1,), (5, 1), (1,)]


special_floats = st.sampled_from([0.0, -0.0, 1.5, -2.0, float("inf"), float("-inf"), float("nan")])


@ENGINE
@given(values=st.lists(special_floats, min_size=1, max_size=6), data=st.data())
def test_relu_backward_is_torchs_threshold_backward(values, data):
    """Where relu's output is <= 0 the gradient is 0 even for an infinite or nan upstream
    gradient; a nan output passes the gradient on (torch's threshold_backward)."""
    upstream = data.draw(st.lists(special_floats, min_size=len(values), max_size=len(values)), label="grad")
    results = []
    for lib in LIBS:
        x = lib.tensor(values, requires_grad=True)
        x.relu().backward(lib.tensor(upstream))
        results.append(x.grad)
    assert_same(results[1], results[0])


def outcome(fn):
    """What ``fn()`` gives, or the class and message of the error it raises."""
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 (the comparison is the point)
        return type(error).__name__, str(error)


@ENGINE
@given(seed=seeds, shape=st.sampled_from([(3,), (2, 3), (4, 1)]), alpha=st.sampled_from([1, 2, -0.01, 0.9]),
       op=st.sampled_from(["add_", "sub_", "add", "sub"]), transposed=st.booleans(),
       dtypes=st.sampled_from([("float32", "float32"), ("float64", "float64"), ("float32", "int64"),
                               ("float64", "int32"), ("int64", "int64"), ("int32", "int64")]))
def test_add_with_alpha_matches_torch(seed, shape, alpha, op, dtypes, transposed):
    """``p.add_(buf, alpha=-lr)`` (every optimizer step) scales ``other`` without building a
    tensor; in torch's order (promote, then scale) and with torch's error for a float alpha
    on integers."""
    target, other = make_array(seed, shape, dtypes[0]), make_array(seed + 1, shape[-1:], dtypes[1])
    results = []
    for lib in LIBS:
        t = lib.tensor(np.ascontiguousarray(target.T)).t() if transposed else lib.tensor(target)
        with lib.no_grad():
            out = outcome(lambda: getattr(t, op)(lib.tensor(other), alpha=alpha))
        results.append((out, t))
    assert_same(results[1], results[0], geometry=True)


@ENGINE
@given(seed=seeds, rows=st.integers(1, 5), classes=st.integers(1, 6), transposed=st.booleans(),
       reduction=st.sampled_from(["mean", "sum", "none"]), create_graph=st.booleans())
def test_cross_entropy_backward_matches_torch(seed, rows, classes, transposed, reduction, create_graph):
    """log_softmax's and relu's backward run as one kernel unless create_graph asks for a
    differentiable formula; both ways give torch's gradients, layout and second derivative."""
    logits = make_array(seed, (rows, classes), "float32", low=-20, high=20)
    target = np.random.default_rng(seed).integers(0, classes, rows)
    results = []
    for lib in LIBS:
        leaf = lib.tensor(np.ascontiguousarray(logits.T) if transposed else logits, requires_grad=True)
        x = leaf.t() if transposed else leaf
        loss = lib.nn.functional.cross_entropy(x.relu() - 1, lib.tensor(target), reduction=reduction)
        upstream = lib.ones(loss.shape) if reduction == "none" else None
        (grad,) = lib.autograd.grad(loss, leaf, upstream, create_graph=create_graph)
        second = lib.autograd.grad((grad * grad).sum(), leaf)[0] if create_graph else None
        results.append((loss, grad.detach(), second))
    assert_same(results[1], results[0], geometry=True)
