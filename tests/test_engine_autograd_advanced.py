"""reftorch's advanced autograd against torch: saved-tensor hooks (what each op saves, in
which order), gradient checkpointing (same gradients, nothing saved inside), anomaly mode
(the NaN error and the forward trace), the function transforms of ``reftorch.func``, and the
hooks on tensors' gradients (register_hook: what each sees and replaces, handles, errors;
post-accumulate-grad hooks)."""
from __future__ import annotations

import gc
import importlib
import inspect
import warnings
import weakref

import numpy as np
import pytest
import torch
import torch.func
from hypothesis import given
from hypothesis import strategies as st

import reftorch
import reftorch.func
from engine_support import (
    ENGINE, LIBS, assert_close_values, assert_same, build, float_names, layouts, make_array, same_error,
    same_program, same_warnings, seeds, shapes,
)


def checkpoint_module(lib):
    return importlib.import_module(f"{lib.__name__}.utils.checkpoint")


def inputs(lib, dtype="float32"):
    """The same named inputs in both libraries (values in [0.5, 2], so logs and roots are fine)."""
    rng = np.random.default_rng(0)
    shapes = dict(a=(3, 1), b=(1, 4), c=(3, 4), m=(4, 2), bias=(2,), v=(4,))
    return {name: lib.tensor(rng.uniform(0.5, 2, shape).astype(dtype), requires_grad=True)
            for name, shape in shapes.items()}


# -- saved-tensor hooks -------------------------------------------------------------------
# one op (or small program) each; the pack hook records what autograd saves for backward
SAVING_OPS = {
    "mul": lambda lib, t: t["a"] * t["b"],
    "mul_by_constant_tensor": lambda lib, t: t["c"] * t["c"].detach(),
    "mul_by_number": lambda lib, t: t["c"] * 2,
    "div": lambda lib, t: t["a"] / t["b"],
    "add": lambda lib, t: t["a"] + t["b"],
    "matmul_mm": lambda lib, t: t["c"] @ t["m"],
    "matmul_mv": lambda lib, t: t["c"] @ t["v"],
    "bmm": lambda lib, t: lib.bmm(t["c"][None], t["m"][None]),
    "addmm": lambda lib, t: lib.addmm(t["bias"], t["c"], t["m"]),
    "linear": lambda lib, t: lib.nn.functional.linear(t["c"], t["m"].t(), t["bias"]),
    "pow_tensor": lambda lib, t: t["a"] ** t["b"],
    "pow_number": lambda lib, t: t["c"] ** 2,
    "maximum": lambda lib, t: lib.maximum(t["a"], t["b"]),
    "where": lambda lib, t: lib.where(t["c"] > 1, t["c"], t["a"]),
    "sum": lambda lib, t: t["c"].sum(1),
    "mean": lambda lib, t: t["c"].mean(),
    "exp": lambda lib, t: t["c"].exp(),
    "tanh": lambda lib, t: t["c"].tanh(),
    "sigmoid": lambda lib, t: t["c"].sigmoid(),
    "relu": lambda lib, t: t["c"].relu(),
    "log": lambda lib, t: t["c"].log(),
    "sqrt": lambda lib, t: t["c"].sqrt(),
    "softmax": lambda lib, t: t["c"].softmax(1),
    "log_softmax": lambda lib, t: t["c"].log_softmax(1),
    "max_all": lambda lib, t: t["c"].max(),
    "max_dim": lambda lib, t: t["c"].max(1),
    "reshape": lambda lib, t: t["c"].reshape(-1),
    "mse_loss": lambda lib, t: lib.nn.functional.mse_loss(t["c"], t["c"].detach() * 0),
    "mlp": lambda lib, t: (lib.nn.functional.linear(t["c"], t["m"].t(), t["bias"]).tanh() * t["bias"]).sum(),
}


def packed(lib, program, dtype="float32"):
    """(shape, dtype) of every tensor autograd saves while ``program`` runs, in saving order."""
    seen = []

    def pack(tensor):
        seen.append((tuple(tensor.shape), str(tensor.dtype).split(".")[-1]))
        return tensor

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        program(lib, inputs(lib, dtype))
    return seen


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", SAVING_OPS)
def test_ops_save_the_same_tensors_in_the_same_order_as_torch(name, dtype):
    assert packed(reftorch, SAVING_OPS[name], dtype) == packed(torch, SAVING_OPS[name], dtype)


def hook_events(lib):
    """When pack and unpack run, and which of two nested hook pairs is used."""
    events = []

    def hooks(tag):
        return (lambda t: events.append(f"{tag} pack {tuple(t.shape)}") or t,
                lambda t: events.append(f"{tag} unpack {tuple(t.shape)}") or t)

    x = lib.tensor([1., 2., 3.], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(*hooks("outer")):
        with lib.autograd.graph.saved_tensors_hooks(*hooks("inner")):
            y = x.exp()
        z = (y * x).sum()
    events.append("backward starts")
    z.backward()
    return events, x.grad


def test_pack_runs_at_save_unpack_in_backward_and_the_innermost_hooks_win():
    (ref_events, ref_grad), (torch_events, torch_grad) = hook_events(reftorch), hook_events(torch)
    assert ref_events == torch_events
    assert_close_values(ref_grad, torch_grad)


def custom_function_packs(lib):
    """How many tensors a custom Function packs: only when a node is recorded."""
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    counts = []
    packed_so_far = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: packed_so_far.append(t) or t, lambda t: t):
        Double.apply(lib.ones(2))                              # nothing requires grad
        counts.append(len(packed_so_far))
        Double.apply(lib.ones(2, requires_grad=True))          # recorded: x is saved
        counts.append(len(packed_so_far))
        with lib.no_grad():
            Double.apply(lib.ones(2, requires_grad=True))      # not recorded
        counts.append(len(packed_so_far))
    with lib.inference_mode():                                 # no node, so no inference error
        counts.append(Double.apply(lib.ones(2)).tolist())
    return counts


def test_a_custom_function_saves_only_when_it_records_a_node():
    assert custom_function_packs(reftorch) == custom_function_packs(torch) == [0, 1, 1, [2.0, 2.0]]


def replaced_saved_tensors(lib):
    """pack keeps a copy elsewhere (here: a list index), unpack brings it back; then the
    saved output is overwritten in place, which the hooks' copy does not see."""
    store = []

    def pack(tensor):
        store.append(tensor.clone())
        return len(store) - 1

    x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, lambda index: store[index]):
        y = x.exp()
    with lib.no_grad():
        y.mul_(2)  # no version error: with hooks the packed copy is what backward uses
    y.sum().backward()
    return x.grad


def test_what_unpack_returns_is_what_backward_uses():
    assert_close_values(replaced_saved_tensors(reftorch), replaced_saved_tensors(torch))


def test_save_on_cpu_gives_the_same_gradients():
    grads = []
    for lib in LIBS:
        t = inputs(lib)
        with lib.autograd.graph.save_on_cpu():
            loss = SAVING_OPS["mlp"](lib, t)
        loss.backward()
        grads.append((t["c"].grad, t["m"].grad, t["bias"].grad))
    for mine, theirs in zip(*grads):
        assert_close_values(mine, theirs)


# -- checkpoint -----------------------------------------------------------------------------
def deep_block(lib, weights, intermediates):
    def block(h):
        for w in weights:
            h = (h @ w).tanh()
            intermediates.append(weakref.ref(h))
        return h
    return block


def checkpointed_run(lib, use_reentrant, *, checkpointed=True):
    """Grads of a 4-layer tanh stack, checkpointed in the middle; bytes the graph saves as
    seen by an outer pack hook; how often the checkpointed function ran; how many of its
    intermediates were still alive between forward and backward."""
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.normal(size=(5, 6)).astype("float32"), requires_grad=True)
    weights = [lib.tensor(rng.normal(size=(6, 6)).astype("float32") / 2, requires_grad=True)
               for _ in range(4)]
    calls, intermediates = [], []
    middle = deep_block(lib, weights[1:3], intermediates)

    def counted(h):
        calls.append(1)
        return middle(h)

    saved_bytes = []

    def pack(tensor):
        saved_bytes.append(tensor.numel() * tensor.element_size())
        return tensor

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        h = (x @ weights[0]).tanh()
        if checkpointed:
            h = checkpoint_module(lib).checkpoint(counted, h, use_reentrant=use_reentrant)
        else:
            h = counted(h)
        loss = ((h @ weights[3]).tanh() ** 2).sum()
    gc.collect()
    alive = sum(ref() is not None for ref in intermediates[:-1])  # the last is fn's output
    loss.backward()
    return [x.grad, *(w.grad for w in weights)], sum(saved_bytes), len(calls), alive


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_matches_torch_and_the_plain_run(use_reentrant):
    ref_grads, ref_bytes, ref_calls, ref_alive = checkpointed_run(reftorch, use_reentrant)
    torch_grads, torch_bytes, torch_calls, torch_alive = checkpointed_run(torch, use_reentrant)
    plain_grads, plain_bytes, plain_calls, plain_alive = checkpointed_run(reftorch, use_reentrant,
                                                                         checkpointed=False)
    assert (ref_alive, torch_alive, plain_alive) == (0, 0, 1)  # fn's intermediate is not kept
    for mine, theirs, plain in zip(ref_grads, torch_grads, plain_grads):
        assert_close_values(mine, theirs)
        assert_close_values(mine, plain)
    assert (ref_calls, torch_calls, plain_calls) == (2, 2, 1)  # the forward of fn ran again
    assert ref_bytes == torch_bytes
    # inside the checkpoint nothing is saved but its input (5x6 floats); without it the two
    # layers save 2 matmul inputs and 2 tanh outputs of 5x6 floats and 2 weights of 6x6
    assert plain_bytes - ref_bytes == (4 * 30 * 4 + 2 * 36 * 4) - 30 * 4


def test_checkpoint_without_use_reentrant_warns_like_torch():
    messages = []
    for lib in LIBS:
        x = lib.tensor([1., 2.], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = checkpoint_module(lib).checkpoint(lambda h: h.exp(), x)
        messages.append([str(w.message) for w in caught])
        assert y.grad_fn.name() == "CheckpointFunctionBackward"  # torch then takes use_reentrant=True
    assert messages[0] == messages[1] and len(messages[0]) == 1


def test_checkpoint_replays_the_random_state():
    for lib in LIBS:
        lib.manual_seed(0)
        x = lib.ones(200, requires_grad=True)
        y = checkpoint_module(lib).checkpoint(lambda h: lib.nn.functional.dropout(h * 3, 0.5), x,
                                              use_reentrant=False)
        y.sum().backward()
        # the recomputed mask is the forward's mask: the gradient is 6 exactly where y kept x
        assert lib.equal(x.grad, (y != 0).float() * 6), lib.__name__


# -- anomaly mode ---------------------------------------------------------------------------
def nan_programs(lib):
    class MakesNan(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad * float("nan")

    return {
        "div": lambda x: (x / x).sum(),                     # 0/0 in the other input's gradient
        "sqrt_times_zero": lambda x: (x.sqrt() * 0).sum(),  # 0 * inf
        "log_of_relu": lambda x: x.relu().log().sum() * 0,  # 0 * -inf far back in the chain
        "custom_function": lambda x: MakesNan.apply(x).sum(),
    }


def anomaly_error(lib, name, check_nan=True):
    """(error text, first line of the forward trace that was warned, line of the op)."""
    x = lib.tensor([0., 1., 4.], requires_grad=True)
    program = nan_programs(lib)[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly(check_nan=check_nan):
            loss = program(x)
            try:
                loss.backward()
                error = None
            except RuntimeError as e:
                error = str(e)
    traces = [str(w.message) for w in caught if "Traceback of forward call" in str(w.message)]
    return error, traces, lib.is_anomaly_enabled()


@pytest.mark.parametrize("name", ["div", "sqrt_times_zero", "log_of_relu", "custom_function"])
def test_anomaly_mode_raises_torchs_error_for_the_first_node_that_returns_nan(name):
    ref_error, ref_traces, ref_still_on = anomaly_error(reftorch, name)
    torch_error, torch_traces, torch_still_on = anomaly_error(torch, name)
    assert ref_error == torch_error and "returned nan values" in torch_error
    assert ref_still_on is torch_still_on is False  # the previous mode is back after the block
    # the warning names the node and points at the line of nan_programs that made it
    assert [t.splitlines()[0] for t in ref_traces] == [t.splitlines()[0] for t in torch_traces]
    program_line = inspect.getsourcelines(nan_programs)[1]
    for trace in ref_traces:
        lines = [int(part.split(",")[0]) for part in trace.split(", line ")[1:]]
        assert any(program_line <= n < program_line + 20 for n in lines), trace


def inplace_error_under_anomaly_mode(lib):
    """The in-place error of lesson 05, raised with anomaly mode on: its hint changes, and the
    warning points at the exp that saved the overwritten output."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            x = lib.tensor([1., 2.], requires_grad=True)
            y = x.exp()
            with lib.no_grad():
                y.mul_(2)
            with pytest.raises(RuntimeError) as info:
                y.sum().backward()
    traces = [str(w.message).splitlines()[0] for w in caught if "Traceback of forward" in str(w.message)]
    return str(info.value), traces


def test_the_inplace_error_under_anomaly_mode_reads_like_torch():
    assert inplace_error_under_anomaly_mode(reftorch) == inplace_error_under_anomaly_mode(torch)


def test_anomaly_mode_without_check_nan_lets_the_nan_through():
    for lib in LIBS:
        error, traces, _ = anomaly_error(lib, "div", check_nan=False)
        assert error is None and traces == []


def test_set_detect_anomaly_sets_and_restores():
    for lib in LIBS:
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            state = (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())
        assert state == (True, False)
        assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (False, True)


# -- reftorch.func --------------------------------------------------------------------------
SCALAR_FUNCTIONS = {
    "cube_sum": lambda lib, x, y: (x ** 3).sum(),
    "softmax_dot": lambda lib, x, y: (x.softmax(-1) * y).sum(),
    "tanh_norm": lambda lib, x, y: (x.tanh() * y.exp()).sum() / (1 + (x * x).sum()),
    "log_sum_exp": lambda lib, x, y: (x - y).exp().sum().log(),
}


def pair_of(seed, shape=(4,), dtype="float64"):
    arrays = [make_array(seed + k, shape, dtype) for k in range(2)]
    return [tuple(lib.tensor(a) for a in arrays) for lib in (reftorch, torch)]


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
@pytest.mark.parametrize("name", SCALAR_FUNCTIONS)
def test_grad_matches_torch_func(name, argnums):
    (xr, yr), (xt, yt) = pair_of(3)
    f = SCALAR_FUNCTIONS[name]
    mine = reftorch.func.grad(lambda x, y: f(reftorch, x, y), argnums=argnums)(xr, yr)
    theirs = torch.func.grad(lambda x, y: f(torch, x, y), argnums=argnums)(xt, yt)
    for m, t in zip(*(r if isinstance(argnums, tuple) else (r,) for r in (mine, theirs))):
        assert_close_values(m, t)
        assert not m.requires_grad


def test_grad_of_grad_and_grad_with_aux():
    for lib in LIBS:
        second = lib.func.grad(lib.func.grad(lambda x: x ** 3 + x.sin()))(lib.tensor(2., dtype=lib.float64))
        assert abs(second.item() - (12 - np.sin(2.0))) < 1e-12, lib.__name__
        g, aux = lib.func.grad(lambda x: ((x ** 2).sum(), x.detach() * 10), has_aux=True)(lib.tensor([1., 2.]))
        assert g.tolist() == [2., 4.] and aux.tolist() == [10., 20.]


@pytest.mark.parametrize("name", SCALAR_FUNCTIONS)
def test_vjp_and_jvp_match_torch_func(name):
    (xr, yr), (xt, yt) = pair_of(7)
    (vr, _), (vt, _) = pair_of(11)
    f = SCALAR_FUNCTIONS[name]
    elementwise = {lib: (lambda x, y, lib=lib: (f(lib, x, y) * x).tanh()) for lib in LIBS}
    mine_out, mine_fn = reftorch.func.vjp(elementwise[reftorch], xr, yr)
    their_out, their_fn = torch.func.vjp(elementwise[torch], xt, yt)
    assert_close_values(mine_out, their_out)
    for m, t in zip(mine_fn(vr), their_fn(vt)):
        assert_close_values(m, t)
    mine = reftorch.func.jvp(elementwise[reftorch], (xr, yr), (vr, yr))
    theirs = torch.func.jvp(elementwise[torch], (xt, yt), (vt, yt))
    for m, t in zip(mine, theirs):
        assert_close_values(m, t)


def test_jvp_of_a_wide_function_and_of_a_constant():
    for f in (lambda lib, x: lib.stack([x.sum(), (x * x).sum(), x.max()]),   # R^5 -> R^3
              lambda lib, x: lib.ones(2) * 3):                               # ignores x
        (x_r, v_r), (x_t, v_t) = pair_of(5, shape=(5,), dtype="float32")
        mine = reftorch.func.jvp(lambda x: f(reftorch, x), (x_r,), (v_r,))
        theirs = torch.func.jvp(lambda x: f(torch, x), (x_t,), (v_t,))
        for m, t in zip(mine, theirs):
            assert_close_values(m, t)


def test_vmap_of_a_one_output_function_stacks_along_out_dims():
    (xr, yr), (xt, yt) = pair_of(4, shape=(3, 4))
    for in_dims, out_dims in [(0, 0), (1, 1), ((None, 0), 1), (0, -1)]:
        mine = reftorch.func.vmap(lambda x, y: x.exp() * y.sum() + y, in_dims, out_dims)(xr, yr)
        theirs = torch.func.vmap(lambda x, y: x.exp() * y.sum() + y, in_dims, out_dims)(xt, yt)
        assert_close_values(mine, theirs)


@pytest.mark.parametrize("in_dims,out_dims", [(0, 0), (1, 0), ((0, None), 1), ((None, 1), 0), (-1, -1)])
def test_vmap_matches_torch_func(in_dims, out_dims):
    (xr, yr), (xt, yt) = pair_of(2, shape=(3, 4))

    def f(lib):
        return lambda x, y: ((x.tanh() * y.sum()).softmax(-1), x.sum() * y.exp())
    mine = reftorch.func.vmap(f(reftorch), in_dims, out_dims)(xr, yr)
    theirs = torch.func.vmap(f(torch), in_dims, out_dims)(xt, yt)
    for m, t in zip(mine, theirs):
        assert_close_values(m, t)


@given(seed=seeds, batch=st.integers(1, 6), features=st.integers(1, 5))
@ENGINE
def test_per_sample_gradients_with_vmap_of_grad_match_torch(seed, batch, features):
    w, b = make_array(seed, (features,), "float64"), make_array(seed + 1, (), "float64")
    xs, ys = make_array(seed + 2, (batch, features), "float64"), make_array(seed + 3, (batch,), "float64")

    def per_sample(lib):
        def loss(w, b, x, y):
            return ((x @ w + b).tanh() - y) ** 2
        transform = lib.func.vmap(lib.func.grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))
        return transform(*(lib.tensor(a) for a in (w, b, xs, ys)))

    mine, theirs = per_sample(reftorch), per_sample(torch)
    for m, t in zip(mine, theirs):
        assert_close_values(m, t)
    # the per-sample gradients sum to the batch gradient
    w_t = torch.tensor(w, requires_grad=True)
    ((torch.tensor(xs) @ w_t + torch.tensor(b)).tanh() - torch.tensor(ys)).pow(2).sum().backward()
    assert_close_values(mine[0].sum(0), w_t.grad)


@pytest.mark.parametrize("call", [
    lambda lib: lib.func.vmap(lambda a, b: a * b)(lib.ones(2), lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a, b: a * b, in_dims=(None, None))(lib.ones(2), lib.ones(2)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=1)(lib.ones(2)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=None)(lib.ones(2)),
    lambda lib: lib.func.vmap(lambda a: a.sum())(3.0),
    lambda lib: lib.func.grad(lambda a: a * 2)(lib.ones(2)),
    lambda lib: lib.func.jvp(lambda a: a, lib.ones(2), (lib.ones(2),)),
], ids=["sizes", "nothing_mapped", "dim_out_of_range", "in_dims_none", "number_mapped",
        "grad_of_non_scalar", "jvp_primals_not_tuple"])
def test_transform_errors_read_like_torch(call):
    errors = []
    for lib in LIBS:
        with pytest.raises((ValueError, RuntimeError)) as info:
            call(lib)
        errors.append((info.type, str(info.value).replace("reftorch", "torch")))
    assert errors[0] == errors[1]


# -- saved-tensor hooks see the tensors themselves -----------------------------------------
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


# -- checkpoint_sequential -----------------------------------------------------------------
@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_sequential_gives_the_plain_gradients(use_reentrant):
    def program(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(*[lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Tanh()) for _ in range(4)])
        x = lib.randn(3, 4, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=use_reentrant)
        out.sum().backward()
        plain_grad = x.grad.clone()
        x.grad = None
        model(x).sum().backward()
        return out, plain_grad, x.grad, model[0][0].weight.grad
    same_program(program)
    same_warnings(lambda lib: lib.utils.checkpoint.checkpoint_sequential(
        [lib.nn.Tanh(), lib.nn.Tanh()], 2, lib.ones(2, requires_grad=True)))
    same_error(lambda lib: lib.utils.checkpoint.checkpoint_sequential([lib.nn.Tanh()], 1, lib.ones(1), True, foo=1))


# -- func.grad, vmap's randomness and keywords, vjp with tuple outputs ---------------------
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


def test_vjp_of_a_function_with_tuple_outputs():
    def program(lib):
        x = lib.tensor([1.0, 2.0])
        out, vjp_fn = lib.func.vjp(lambda x: (x * 2, x.sin().sum()), x)
        return out, vjp_fn((lib.ones(2), lib.tensor(1.0)))
    same_program(program)
    same_error(lambda lib: lib.func.vjp(lambda x: (x * 2, x.sum()), lib.ones(2))[1](lib.ones(2)))


# ======================================================================================
# Tensor.register_hook
# ======================================================================================
def _hooked_program(lib, array, layout, replace, retain):
    """Hooks on a leaf and on a non-leaf that is used twice; returns what a student sees."""
    leaf, t = build(lib, array, layout, requires_grad=True)
    seen = []
    leaf.register_hook(lambda g: seen.append(("leaf", g.clone())))
    y = t.exp() * 2
    if retain:
        y.retain_grad()
    y.register_hook(lambda g: seen.append(("y", g.clone())))
    if replace:
        y.register_hook(lambda g: g * 3)  # later hooks and the graph see the replacement
        y.register_hook(lambda g: seen.append(("y after", g.clone())))
    (y * y + y).sum().backward()
    return seen, leaf.grad, (y.grad if retain else None)


@ENGINE
@given(shape=shapes(0, 3), seed=seeds, name=float_names, layout=layouts, replace=st.booleans(),
       retain=st.booleans())
def test_tensor_hooks_see_and_replace_gradients_like_torch(shape, seed, name, layout, replace, retain):
    array = make_array(seed, shape, name, -1, 1)
    (t_seen, t_grad, t_ygrad), (r_seen, r_grad, r_ygrad) = (
        _hooked_program(lib, array, layout, replace, retain) for lib in LIBS)
    assert [label for label, _ in r_seen] == [label for label, _ in t_seen]  # order and count
    for (label, mine), (_, theirs) in zip(r_seen, t_seen):
        assert_same(mine, theirs, name=label)
    assert_same(r_grad, t_grad, name="leaf.grad")
    if retain:  # retain_grad keeps the gradient after the hooks ran, as torch does
        assert_same(r_ygrad, t_ygrad, name="y.grad")


def test_tensor_hooks_run_once_with_the_summed_gradient_and_in_autograd_grad():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        calls = []
        x.register_hook(lambda g: calls.append(g.tolist()) or g * 2)
        (x * 2 + x * 3).sum().backward()
        y = x * 3
        y.register_hook(lambda g: g + 1)
        (gx,) = lib.autograd.grad((y * y).sum(), x)  # hooks apply to captured grads too
        (gy,) = lib.autograd.grad(y.sum(), y)
        return calls, x.grad, gx, gy
    same_program(program)


def test_tensor_hooks_on_outputs_of_one_node_see_none_where_no_gradient_came():
    def program(lib):
        x = lib.arange(6.0, requires_grad=True)
        a, b, c = (x * 1).split(2)
        seen = []
        b.register_hook(lambda g: seen.append(("b", g)) or g * 10)
        c.register_hook(lambda g: seen.append(("c", g)))  # c is unused: its hook gets None
        (a.sum() + (b * b).sum()).backward()
        return seen, x.grad
    same_program(program)

    def replace_none(lib):
        x = lib.arange(6.0, requires_grad=True)
        a, b, c = (x * 1).split(2)
        c.register_hook(lambda g: lib.ones(2))
        a.sum().backward()
    same_error(replace_none)


def test_tensor_hook_handles_remove_and_work_as_context_managers():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        handle = x.register_hook(lambda g: g * 100)
        handle.remove()
        handle.remove()  # twice is fine
        with x.register_hook(lambda g: g * 10):
            (x * 2).sum().backward()
        first = x.grad.clone()
        (x * 2).sum().backward()  # the with-block removed the hook
        return first, x.grad, len(x._backward_hooks), type(handle).__name__, type(handle).__module__.split(".", 1)[1]
    same_program(program)


def test_tensor_hook_on_an_intermediate_prints_the_gradient_flowing_in():
    outputs = []
    for lib in LIBS:
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        h = x * x
        lines = []
        h.register_hook(lambda g: lines.append(f"grad into h: {g}"))
        h.relu().sum().backward()
        lines.append(f"x.grad: {x.grad}")
        outputs.append(lines)
    assert outputs[1] == outputs[0]


def _bad_return(value_for):
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: value_for(lib, g))
        y.sum().backward()
    return program


@pytest.mark.parametrize("case", ["not_a_tensor", "wrong_size", "wrong_dtype", "leaf_wrong_size", "named_hook"])
def test_tensor_hook_errors_match_torch(case):
    if case == "leaf_wrong_size":
        def program(lib):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            x.register_hook(lambda g: lib.ones(3))
            (x * 2).sum().backward()
    elif case == "named_hook":
        def program(lib):
            def double_it(g):
                return g.double()
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            x.register_hook(double_it)
            (x * 2).sum().backward()
    else:
        program = _bad_return({"not_a_tensor": lambda lib, g: 3, "wrong_size": lambda lib, g: lib.ones(3),
                               "wrong_dtype": lambda lib, g: g.double()}[case])
    same_error(program)


def test_register_hook_on_a_tensor_without_grad_raises_like_torch():
    same_error(lambda lib: lib.ones(2).register_hook(lambda g: g))


# -- post-accumulate-grad hooks ---------------------------------------------------------------
def test_post_accumulate_grad_hooks_run_after_the_grad_is_stored():
    def program(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        seen = []
        handle = p.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
        (p * 3).sum().backward()
        (p * p).sum().backward()
        lib.autograd.grad((p * 2).sum(), p)  # no .grad stored: no call
        handle.remove()
        (p * 1).sum().backward()
        return seen, p.grad
    same_program(program)
    same_error(lambda lib: (lib.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(print))
    same_error(lambda lib: lib.ones(2).register_post_accumulate_grad_hook(print))
