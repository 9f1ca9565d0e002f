"""API the lessons and students reach for, against torch 2.13: tensor hooks, masked_fill_,
broadcast_shapes, unfold, movedim, flip, get_device / nbytes / itemsize, Module forward
hooks, nn.Buffer, ModuleDict.pop, and Optimizer.state_dict / load_state_dict.

Each test runs one program on both libraries and compares what a student could see: values,
dtype, strides, storage sharing, grad_fn names, gradients, and the class and wording of errors.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

import reftorch
from engine_support import (
    ENGINE, LIBS, assert_close_values, assert_same, build, dtype_names, float_names, layouts, make_array,
    node_chain, same_error, same_program, same_warnings, seeds, shapes,
)


def same_outcome(program):
    """Both succeed with the same results (geometry included), or both fail alike."""
    errors = []
    for lib in LIBS:
        try:
            program(lib)
            errors.append(None)
        except Exception as error:  # noqa: BLE001  (compared below)
            errors.append(error)
    if errors[0] is not None or errors[1] is not None:
        same_error(program)
        return None
    return same_program(program, geometry=True)


def grads_of(program, array, layout, name="float32"):
    """Run ``program(lib, t)`` on a leaf built with ``layout``, backward with fixed upstream
    gradients, and compare the leaf's gradient and the grad_fn chain with torch's."""
    chains, grads = [], []
    for lib in LIBS:
        leaf, t = build(lib, array, layout, requires_grad=True)
        out = program(lib, t)
        chains.append(node_chain(out.grad_fn))
        upstream = np.random.default_rng(7).uniform(-1, 1, size=tuple(out.shape)).astype(name)
        out.backward(lib.tensor(upstream))
        grads.append(leaf.grad)
    assert chains[1] == chains[0]
    assert_close_values(grads[1], grads[0], "grad")


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

    same_outcome(in_place)
    same_outcome(out_of_place)


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


# ======================================================================================
# broadcast_shapes
# ======================================================================================
@ENGINE
@given(data=st.data(), count=st.integers(0, 4))
def test_broadcast_shapes_matches_torch_result_and_error(data, count):
    arguments = []
    for i in range(count):
        shape = data.draw(shapes(0, 3, 0, 3), label=f"shape{i}")
        kind = data.draw(st.sampled_from(["tuple", "list", "int", "size"]), label=f"kind{i}")
        if kind == "int" and len(shape) == 1:
            arguments.append(shape[0])
        else:
            arguments.append(list(shape) if kind == "list" else shape)

    def program(lib):
        args = [lib.Size(a) if isinstance(a, tuple) and len(a) == 2 else a for a in arguments]
        return lib.broadcast_shapes(*args)
    results = same_outcome(program)
    if results is not None:
        theirs, mine = results
        assert type(mine).__name__ == "Size" and list(mine) == list(theirs)


@pytest.mark.parametrize("args", [((2, -1), (3,)), ((2, 3), 2.5), ((2, 3), (3, 2)), (2, (3,))])
def test_broadcast_shapes_errors_match_torch(args):
    same_error(lambda lib: lib.broadcast_shapes(*args))


# ======================================================================================
# unfold: a strided view of overlapping windows
# ======================================================================================
@ENGINE
@given(shape=shapes(0, 3, 1, 5), seed=seeds, name=dtype_names, layout=layouts,
       dim=st.integers(-3, 2), size=st.integers(-1, 5), step=st.integers(0, 3))
def test_unfold_is_a_view_with_torch_geometry(shape, seed, name, layout, dim, size, step):
    array = make_array(seed, shape, name)
    results = same_outcome(lambda lib: build(lib, array, layout)[1].unfold(dim, size, step))
    if results is None or layout == "expanded" or results[1].numel() == 0:
        return
    written = []
    for lib in LIBS:  # a write through the windows lands in the base, at the same places
        leaf, t = build(lib, array, layout)
        before = leaf.clone()
        t.unfold(dim, size, step).fill_(True if name == "bool" else 9)
        written.append(leaf.ne(before).reshape(-1).tolist())
    assert written[1] == written[0]


@ENGINE
@given(shape=shapes(1, 3, 1, 5), seed=seeds, layout=layouts, data=st.data())
def test_unfold_gradient_adds_overlapping_windows_like_torch(shape, seed, layout, data):
    dim = data.draw(st.integers(0, len(shape) - 1), label="dim")
    size = data.draw(st.integers(0, shape[dim]), label="size")
    step = data.draw(st.integers(1, 3), label="step")
    grads_of(lambda lib, t: t.unfold(dim, size, step) * 2, make_array(seed, shape, "float32"), layout)


def test_unfold_double_backward_matches_torch():
    def program(lib):
        x = lib.arange(6.0, dtype=lib.float64).reshape(2, 3).requires_grad_()
        u = x.unfold(1, 2, 1)
        (g,) = lib.autograd.grad((u ** 3).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return g, gg, type(g.grad_fn).__name__
    same_program(program)


def test_unfold_of_a_zero_dim_tensor_matches_torch():
    same_outcome(lambda lib: lib.tensor(3.0).unfold(0, 1, 1))
    same_outcome(lambda lib: lib.tensor(3.0).unfold(-1, 0, 2))
    same_error(lambda lib: lib.tensor(3.0).unfold(0, 2, 1))
    grads_of(lambda lib, t: t.unfold(0, 1, 1), np.array(2.0, dtype="float32"), "contiguous")


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
    results = same_outcome(lambda lib: build(lib, array, layout)[1].movedim(source, destination))
    if results is not None:
        same_outcome(lambda lib: lib.moveaxis(build(lib, array, layout)[1], source, destination))
        grads_of(lambda lib, t: lib.movedim(t, source, destination) * 3, array, layout)


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
    results = same_outcome(lambda lib: lib.flip(build(lib, array, layout)[1], dims))
    if results is None:
        return
    same_outcome(lambda lib: build(lib, array, layout)[1].flip(*dims))  # the method takes varargs (none: an error)
    if name in ("float32", "float64"):
        grads_of(lambda lib, t: lib.flip(t, dims) * lib.arange(1.0, t.numel() + 1, dtype=t.dtype).reshape(t.shape),
                 array, layout, name)


@pytest.mark.parametrize("args", [((0, 0),), ((2,),), (0,), ((0, -2),)])
def test_flip_errors_match_torch(args):
    same_error(lambda lib: lib.flip(lib.zeros(2, 3), *args))


# ======================================================================================
# get_device, nbytes, itemsize
# ======================================================================================
@pytest.mark.parametrize("name", ["bool", "int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "stepped", "expanded"])
def test_nbytes_itemsize_and_get_device_match_torch(name, layout):
    array = make_array(0, (2, 3), name)
    same_program(lambda lib: (lambda t: (t.nbytes, t.itemsize, t.get_device(), t.element_size()))(
        build(lib, array, layout)[1]))


def test_get_device_on_the_sim_device_is_its_index():
    t = reftorch.ones(2).to("sim")
    assert t.get_device() == 0 and reftorch.ones(2).get_device() == -1


# ======================================================================================
# Module forward hooks
# ======================================================================================
def _model(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    with lib.no_grad():  # the same weights in both libraries
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(make_array(i, tuple(p.shape), "float32", -1, 1)))
    return model


X = make_array(99, (5, 3), "float32")


def test_forward_hook_captures_activations_like_torch():
    def program(lib):
        model = _model(lib)
        activations = {}

        def keep(name):
            def hook(module, args, output):
                activations[name] = (type(module).__name__, type(args).__name__, len(args), output.detach())
            return hook
        handles = [m.register_forward_hook(keep(name)) for name, m in model.named_children()]
        out = model(lib.tensor(X))
        for h in handles:
            h.remove()
        model(lib.tensor(X) * 100)  # removed: nothing recorded
        return out, [activations[k] for k in sorted(activations)]
    same_program(program)


def test_forward_hook_and_pre_hook_replacements_like_torch():
    def program(lib):
        model = _model(lib)
        log = []
        model[0].register_forward_pre_hook(lambda m, args: args[0] * 2)  # a non-tuple is wrapped
        model[0].register_forward_pre_hook(lambda m, args: log.append(("pre", type(args).__name__)))
        model[2].register_forward_hook(lambda m, args, out: out.sum(1))
        model[2].register_forward_hook(lambda m, args, out: log.append(("after", tuple(out.shape))), prepend=True)
        out = model(lib.tensor(X))
        out.sum().backward()
        return out, log, model[0].weight.grad
    same_program(program)


def test_forward_hooks_with_kwargs_and_always_call_like_torch():
    def program(lib):
        class Scale(lib.nn.Module):
            def forward(self, x, scale=1.0):
                if scale < 0:
                    raise ValueError("negative scale")
                return x * scale
        m = Scale()
        log = []
        m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": kwargs.get("scale", 1.0) * 3}),
                                    with_kwargs=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: out + kwargs["scale"], with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
        result = m(lib.ones(2), scale=2.0)
        try:
            m(lib.ones(2), scale=-1.0)
        except ValueError as error:
            log.append(str(error))
        return result, log
    same_program(program)


def test_forward_pre_hook_with_kwargs_bad_return_raises_like_torch():
    def program(lib):
        m = lib.nn.ReLU()
        m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
        m(lib.ones(2))
    same_error(program)


# ======================================================================================
# nn.Buffer and ModuleDict.pop
# ======================================================================================
def test_buffer_registers_when_assigned_like_torch():
    def program(lib):
        class Stats(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.running_mean = lib.nn.Buffer(lib.zeros(2))
                self.scratch = lib.nn.Buffer(lib.ones(1), persistent=False)
                self.plain = lib.ones(3)  # a plain tensor is not registered
        m = Stats()
        names = [n for n, _ in m.named_buffers()]
        keys = list(m.state_dict())
        m.running_mean = lib.ones(2)  # still a buffer
        m.scratch = lib.nn.Buffer(lib.ones(1), persistent=True)  # the new Buffer's flag wins
        x = lib.ones(2, requires_grad=True)
        b = lib.nn.Buffer(x * 2)
        return (names, keys, list(m.state_dict()), type(m.running_mean).__name__,
                isinstance(m.running_mean, lib.nn.Buffer), isinstance(lib.ones(1), lib.nn.Buffer),
                b.requires_grad, b.is_leaf, lib.nn.Buffer().shape, str(m.to(lib.float64).running_mean.dtype))
    same_program(program)


def test_buffer_shares_memory_with_its_data():
    for lib in LIBS:
        data = lib.zeros(3)
        b = lib.nn.Buffer(data)
        b[0] = 5.0
        assert data[0].item() == 5.0, lib.__name__


@pytest.mark.parametrize("case", ["not_a_tensor", "attribute_exists"])
def test_buffer_errors_match_torch(case):
    def program(lib):
        m = lib.nn.Module()
        m.stats = lib.nn.Buffer(lib.zeros(2))
        m.other = 3
        if case == "not_a_tensor":
            m.stats = 3
        else:
            m.other = lib.nn.Buffer(lib.zeros(1))
    same_error(program)


def test_module_dict_pop_like_torch():
    def program(lib):
        d = lib.nn.ModuleDict({"act": lib.nn.ReLU(), "out": lib.nn.Linear(2, 1)})
        popped = d.pop("act")
        return repr(popped), list(d.keys()), len(list(d.parameters()))
    same_program(program)
    same_error(lambda lib: lib.nn.ModuleDict({"a": lib.nn.ReLU()}).pop("b"))


# ======================================================================================
# Optimizer.state_dict / load_state_dict
# ======================================================================================
OPTIMIZERS = {
    "sgd": lambda lib, ps: lib.optim.SGD(ps, lr=0.1),
    "sgd_momentum": lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "sgd_two_groups": lambda lib, ps: lib.optim.SGD([{"params": ps[:2], "lr": 0.05}, {"params": ps[2:]}],
                                                    lr=0.1, momentum=0.5),
    "adam": lambda lib, ps: lib.optim.Adam(ps, lr=0.01, weight_decay=0.1),
    "adamw_amsgrad": lambda lib, ps: lib.optim.Adam(ps, lr=0.01, weight_decay=0.1, amsgrad=True,
                                                    decoupled_weight_decay=True),
}


def _train(lib, model, optimizer, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        (model(lib.tensor(X)) ** 2).mean().backward()
        optimizer.step()


def _structure(state_dict):
    """The state dict with tensors replaced by (dtype, shape, values) for comparing."""
    def describe(v):
        if isinstance(v, (torch.Tensor, reftorch.Tensor)):
            return str(v.dtype), tuple(v.shape)
        return v
    return ({k: {n: describe(v) for n, v in s.items()} for k, s in state_dict["state"].items()},
            state_dict["param_groups"])


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_optimizer_state_dict_round_trip_continues_like_torch(kind):
    results = []
    for lib in LIBS:
        model = _model(lib)
        optimizer = OPTIMIZERS[kind](lib, list(model.parameters()))
        _train(lib, model, optimizer, 3)
        saved = copy.deepcopy(optimizer.state_dict())  # what torch.save / torch.load would give
        structure = _structure(optimizer.state_dict())
        _train(lib, model, optimizer, 2)  # the uninterrupted run
        # a second model reaches the same weights (3 steps), then a fresh optimizer takes over
        again = _model(lib)
        _train(lib, again, OPTIMIZERS[kind](lib, list(again.parameters())), 3)
        fresh = OPTIMIZERS[kind](lib, list(again.parameters()))
        fresh.load_state_dict(saved)
        _train(lib, again, fresh, 2)
        for a, b in zip(model.parameters(), again.parameters()):  # continued identically
            assert a.tolist() == b.tolist(), f"{lib.__name__}: {kind} did not continue identically"
        results.append((structure, _structure(fresh.state_dict()), [p.detach() for p in again.parameters()]))
    (t_structure, t_loaded, t_params), (r_structure, r_loaded, r_params) = results
    assert r_structure == t_structure
    assert r_loaded == t_loaded
    for mine, theirs in zip(r_params, t_params):
        assert_close_values(mine, theirs, kind)


def test_optimizer_state_dict_keeps_the_optimizers_own_tensors_like_torch():
    def program(lib):
        model = _model(lib)
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        _train(lib, model, optimizer, 1)
        state = optimizer.state_dict()
        weight = model[0].weight
        return (state["state"][0] is optimizer.state[weight],
                state["state"][0]["momentum_buffer"] is optimizer.state[weight]["momentum_buffer"],
                sorted(state["state"]), state["param_groups"])
    same_program(program)


@pytest.mark.parametrize("bad", [{"state": {}, "param_groups": []},
                                 {"state": {}, "param_groups": [{"params": [0]}]},
                                 {"state": {}}])
def test_optimizer_load_state_dict_errors_match_torch(bad):
    same_error(lambda lib: lib.optim.SGD(_model(lib).parameters(), lr=0.1).load_state_dict(bad))


# ======================================================================================
# f-strings of tensors (hooks print gradients with them; a root gradient is 0-dim)
# ======================================================================================
@pytest.mark.parametrize("case", ["0d_float", "0d_int", "0d_spec", "0d_requires_grad", "1d", "1d_spec"])
def test_tensor_format_matches_torch(case):
    def program(lib):
        t = {"0d_float": lib.tensor(1.0), "0d_int": lib.tensor(2), "0d_spec": lib.tensor(1.25),
             "0d_requires_grad": lib.tensor(1.5, requires_grad=True), "1d": lib.tensor([1.0, 2.0]),
             "1d_spec": lib.tensor([1.0, 2.0])}[case]
        return f"{t:.1f}" if case.endswith("spec") else f"{t}"
    same_outcome(program)


# -- gradient hooks: post-accumulate-grad and full backward hooks --------------------------
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


def test_full_backward_hooks_see_and_replace_gradients():
    def program(lib):
        lib.manual_seed(0)
        layer = lib.nn.Linear(3, 2)
        calls = []
        layer.register_full_backward_pre_hook(lambda m, go: calls.append(("pre", go)))
        # the second call's input needs no gradient: its grad_input is (None,), kept as it is
        layer.register_full_backward_hook(
            lambda m, gi, go: calls.append(("full", gi, go)) or (gi[0] * 10 if gi[0] is not None else None,))
        x = lib.ones(4, 3, requires_grad=True)
        y = layer(x)
        y.sum().backward()
        z = layer(lib.ones(4, 3))
        z.sum().backward()
        return calls, x.grad, type(y.grad_fn).__name__, layer.weight.grad
    same_program(program)
    same_warnings(lambda lib: _backward_without_input_grads(lib))


def _backward_without_input_grads(lib):
    layer = lib.nn.Linear(2, 2)
    layer.register_full_backward_hook(lambda m, gi, go: None)
    layer(lib.ones(1, 2)).sum().backward()
