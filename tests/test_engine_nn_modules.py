"""nn modules students reach for next, against torch: Embedding and EmbeddingBag (values,
gradients, grad_fn, padding_idx, max_norm), lazy layers (shapes inferred on the first call, the
same initial numbers, the class they become), channel-wise and alpha dropout, adaptive pooling;
Module hooks (forward, forward-pre, full backward) and nn.Buffer."""
from __future__ import annotations

import numpy as np
import pytest

from engine_support import LIBS, MLP_INPUT, assert_same, same_error, same_program, same_warnings, seeded_mlp


@pytest.mark.parametrize("options", [{}, {"padding_idx": 1}, {"padding_idx": -2, "scale_grad_by_freq": True},
                                     {"max_norm": 1.0}, {"max_norm": 0.5, "norm_type": 1.0}])
def test_embedding_matches_torch(options):
    def program(lib):
        lib.manual_seed(0)
        table = lib.nn.Embedding(6, 3, **options)
        ids = lib.tensor([[1, 4, 1], [5, 0, 1]])
        out = table(ids)
        (out * lib.arange(18.0).reshape(2, 3, 3)).sum().backward()
        return out, table.weight.grad, type(out.grad_fn).__name__, repr(table), table.weight.detach(), out.stride()
    same_program(program)


def test_embedding_from_pretrained_and_functional_form():
    def program(lib):
        weights = lib.arange(12.0).reshape(4, 3)
        frozen = lib.nn.Embedding.from_pretrained(weights)
        trainable = lib.nn.Embedding.from_pretrained(weights, freeze=False, padding_idx=0)
        ids = lib.tensor([3, 0, 2], dtype=lib.int32)
        functional = lib.nn.functional.embedding(ids, weights.requires_grad_())
        return frozen(ids), frozen.weight.requires_grad, trainable(ids), trainable.weight.requires_grad, functional
    same_program(program)


@pytest.mark.parametrize("case", ["float ids", "out of range", "negative id", "padding range", "weight 1-D"])
def test_embedding_errors_are_torchs(case):
    def program(lib):
        weight = lib.ones(4, 2)
        if case == "float ids":
            lib.nn.functional.embedding(lib.tensor([1.0]), weight)
        elif case == "out of range":
            lib.nn.functional.embedding(lib.tensor([4]), weight)
        elif case == "negative id":
            lib.nn.functional.embedding(lib.tensor([-1]), weight)
        elif case == "padding range":
            lib.nn.Embedding(4, 2, padding_idx=4)
        else:
            lib.nn.functional.embedding(lib.tensor([1]), lib.ones(4))
    same_error(program)


# per_sample_weights is for mode='sum' only (its error has its own test)
@pytest.mark.parametrize("mode,layout", [(m, layout) for m in ("sum", "mean", "max")
                                         for layout in ("2-D", "offsets", "last offset", "weights", "padding")
                                         if layout != "weights" or m == "sum"])
def test_embedding_bag_matches_torch(mode, layout):
    def program(lib):
        lib.manual_seed(1)
        padding = 2 if layout == "padding" else None
        bag = lib.nn.EmbeddingBag(7, 3, mode=mode, padding_idx=padding)
        flat = lib.tensor([1, 2, 4, 5, 4, 3, 2, 6])
        weights = None
        if layout == "2-D":
            out = bag(flat.reshape(2, 4))
        elif layout == "offsets":
            out = bag(flat, lib.tensor([0, 2, 2, 5]))
        elif layout == "last offset":
            bag.include_last_offset = True
            out = bag(flat, lib.tensor([0, 3, 8]))
        elif layout == "weights":
            weights = lib.linspace(0.5, 2.0, 8, requires_grad=True)
            out = bag(flat, lib.tensor([0, 3]), per_sample_weights=weights)
        else:
            out = bag(flat, lib.tensor([0, 1, 4]))
        (out * lib.arange(float(out.numel())).reshape(out.shape)).sum().backward()
        return out, bag.weight.grad, None if weights is None else weights.grad, type(out.grad_fn).__name__, repr(bag)
    same_program(program)


def test_embedding_bag_refuses_weights_outside_sum_mode():
    same_error(lambda lib: lib.nn.EmbeddingBag(5, 2)(lib.tensor([1, 2]), lib.tensor([0]),
                                                     per_sample_weights=lib.ones(2)))


@pytest.mark.parametrize("kind", ["LazyLinear", "LazyConv2d", "LazyBatchNorm1d", "LazyBatchNorm2d"])
def test_lazy_modules_infer_their_shapes_and_become_the_plain_layer(kind):
    def program(lib):
        lib.manual_seed(4)
        nn = lib.nn
        module, x = {
            "LazyLinear": (lambda: nn.LazyLinear(3), lambda: lib.randn(2, 5)),
            "LazyConv2d": (lambda: nn.LazyConv2d(4, 3, padding=1), lambda: lib.randn(1, 2, 5, 5)),
            "LazyBatchNorm1d": (lambda: nn.LazyBatchNorm1d(), lambda: lib.randn(4, 3)),
            "LazyBatchNorm2d": (lambda: nn.LazyBatchNorm2d(momentum=0.5), lambda: lib.randn(2, 3, 2, 2)),
        }[kind]
        module = module()
        before = (repr(module), type(module).__name__, module.has_uninitialized_params(),
                  [type(p).__name__ for p in module.parameters()])
        params = list(module.parameters())
        optimizer = lib.optim.SGD(params, lr=0.1)
        out = module(x())
        out.sum().backward()
        optimizer.step()
        after = (repr(module), type(module).__name__, [type(p).__name__ for p in module.parameters()],
                 all(a is b for a, b in zip(params, module.parameters())), dict(module.state_dict()))
        return before, after, out
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine[0] == theirs[0]
    assert mine[1][:4] == theirs[1][:4]
    assert_same(list(mine[1][4].values()), list(theirs[1][4].values()))
    assert_same(mine[2], theirs[2])


@pytest.mark.parametrize("kind,shape", [("Dropout1d", (4, 6, 5)), ("Dropout1d", (6, 5)), ("Dropout2d", (4, 6, 3, 3)),
                                        ("Dropout3d", (2, 6, 2, 2, 2)), ("FeatureAlphaDropout", (4, 6, 3, 3))])
def test_channel_dropout_zeroes_whole_channels(kind, shape):
    results = []
    for lib in LIBS:
        lib.manual_seed(0)
        layer = getattr(lib.nn, kind)(0.5)
        x = lib.ones(*shape) * 3
        y = layer(x)
        channels = y.reshape(*shape[:len(shape) - (1 if len(shape) == 2 else len(shape) - 2)], -1)
        per_channel = np.asarray(channels.tolist())
        constant = bool((per_channel == per_channel[..., :1]).all())  # one value per channel
        values = set(np.round(per_channel.ravel(), 4).tolist())
        results.append((constant, len(values) == 2, repr(layer), tuple(y.shape), layer.eval()(x) is x))
    assert results[1] == results[0]


def test_alpha_dropout_keeps_mean_and_variance_of_a_selu_signal():
    for lib in LIBS:
        lib.manual_seed(0)
        x = lib.randn(200000, dtype=lib.float64)
        y = lib.nn.AlphaDropout(0.2)(x)
        assert abs(y.mean().item()) < 0.01 and abs(y.std().item() - 1) < 0.01
        assert lib.nn.functional.alpha_dropout(x, 0.2) is x  # training defaults to False


def test_dropout2d_warnings_and_errors_are_torchs():
    same_warnings(lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 3, 4), 0.5))
    same_warnings(lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 3), 0.5, training=False))
    same_error(lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 3, 4, 5)))
    same_error(lambda lib: lib.nn.Dropout2d(1.5))


@pytest.mark.parametrize("kind,size,shape", [("AdaptiveAvgPool2d", 1, (2, 3, 5, 7)), ("AdaptiveAvgPool2d", (2, 3), (2, 3, 6, 9)),
                                             ("AdaptiveAvgPool2d", (3, None), (3, 5, 7)), ("AdaptiveAvgPool2d", (3, 4), (1, 2, 5, 7)),
                                             ("AdaptiveMaxPool2d", (2, 2), (1, 2, 5, 7)), ("AdaptiveMaxPool2d", 3, (2, 1, 6, 6)),
                                             ("AdaptiveAvgPool1d", 3, (2, 4, 7)), ("AdaptiveMaxPool1d", 2, (2, 4, 8))])
def test_adaptive_pooling_values_and_gradients(kind, size, shape):
    def program(lib):
        lib.manual_seed(5)
        x = lib.randn(*shape, requires_grad=True)
        pool = getattr(lib.nn, kind)(size)
        y = pool(x)
        (y * lib.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        return y, x.grad, repr(pool)
    same_program(program)


def test_a_lazy_model_loads_a_state_dict_before_its_first_call():
    def program(lib):
        lib.manual_seed(6)
        nn = lib.nn

        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = nn.LazyLinear(8)
                self.output = nn.LazyLinear(3)

            def forward(self, x):
                return self.output(nn.functional.relu(self.hidden(x)))
        net, x = MLP(), lib.randn(2, 5)
        y = net(x)
        clone = MLP()
        keys = repr(clone.load_state_dict(net.state_dict()))
        before = (repr(clone), type(clone.hidden.weight).__name__, clone.hidden.in_features)
        same = bool((clone(x) == y).all())
        return keys, before, same, type(clone.hidden).__name__, clone.hidden.in_features
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs


# -- dtype conversion of a whole module ----------------------------------------------------
@pytest.mark.parametrize("conversion", ["half", "bfloat16", "double", "float"])
def test_module_half_and_bfloat16_convert_floating_tensors_only(conversion):
    def program(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
        model[0].weight.grad = lib.ones(2, 3)
        getattr(model, conversion)()
        return ([str(p.dtype) for p in model.parameters()], [str(b.dtype) for b in model.buffers()],
                str(model[0].weight.grad.dtype))
    same_program(program)


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "uint8"])
def test_module_to_an_integer_dtype_is_refused(dtype):
    same_error(lambda lib: lib.nn.Linear(2, 2).to(getattr(lib, dtype)))
    same_error(lambda lib: lib.nn.Linear(2, 2).to("cpu", getattr(lib, dtype)))


# ======================================================================================
# Module forward hooks
# ======================================================================================
def test_forward_hook_captures_activations_like_torch():
    def program(lib):
        model = seeded_mlp(lib)
        activations = {}

        def keep(name):
            def hook(module, args, output):
                activations[name] = (type(module).__name__, type(args).__name__, len(args), output.detach())
            return hook
        handles = [m.register_forward_hook(keep(name)) for name, m in model.named_children()]
        out = model(lib.tensor(MLP_INPUT))
        for h in handles:
            h.remove()
        model(lib.tensor(MLP_INPUT) * 100)  # removed: nothing recorded
        return out, [activations[k] for k in sorted(activations)]
    same_program(program)


def test_forward_hook_and_pre_hook_replacements_like_torch():
    def program(lib):
        model = seeded_mlp(lib)
        log = []
        model[0].register_forward_pre_hook(lambda m, args: args[0] * 2)  # a non-tuple is wrapped
        model[0].register_forward_pre_hook(lambda m, args: log.append(("pre", type(args).__name__)))
        model[2].register_forward_hook(lambda m, args, out: out.sum(1))
        model[2].register_forward_hook(lambda m, args, out: log.append(("after", tuple(out.shape))), prepend=True)
        out = model(lib.tensor(MLP_INPUT))
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


# -- full backward hooks: Module hooks on the gradients --------------------------------------
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


# ======================================================================================
# nn.Buffer
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


# -- the activations of issue 29: values, gradients, nodes, in-place forms, modules -----------------
@pytest.mark.parametrize("kind, args, inplace", [
    ("SELU", (), False), ("SELU", (), True), ("CELU", (), False), ("CELU", (2.0,), True),
    ("Hardswish", (), False), ("Hardswish", (), True), ("Hardsigmoid", (), False), ("Hardsigmoid", (), True),
    ("Mish", (), False), ("Mish", (), True), ("Softsign", (), None), ("ELU", (0.5,), True)])
def test_activation_modules_values_gradients_and_nodes(kind, args, inplace):
    def program(lib):
        # -3 and 3 included: hardswish's and hardsigmoid's gradients have torch's ends there
        x = lib.tensor([-4.0, -3.0, -0.5, 0.0, 1.0, 3.0, 3.5], requires_grad=True)
        layer = getattr(lib.nn, kind)(*args) if inplace is None else getattr(lib.nn, kind)(*args, inplace=inplace)
        y = layer(x * 1)
        (grad,) = lib.autograd.grad((y * lib.arange(7.0)).sum(), x, create_graph=True)
        saved = sorted(a for a in dir(y.grad_fn) if a.startswith("_saved_"))
        return y, grad, y.grad_fn.name(), saved, repr(layer)
    same_program(program)


def test_selu_and_celu_are_torch_functions_and_nn_in_place_ops_are_no_methods():
    def program(lib):
        x = lib.tensor([-2.0, 0.5])
        F = lib.nn.functional
        out = [lib.selu(x), lib.celu(x, 2.0), lib.selu_(x.clone()), lib.celu_(x.clone(), 0.5),
               F.selu(x), F.celu(x, 0.5), F.hardswish(x), F.mish(x), F.softsign(x), F.hardsigmoid(x)]
        return out, [hasattr(x, n) for n in ("elu_", "celu_", "selu_", "hardswish_", "mish_", "hardsigmoid_")]
    same_program(program)


# -- 1-d pooling: torch runs it as the 2-d op on an (N, C, 1, L) view ------------------------------
def _chain(node):
    names = []
    while node is not None:
        names.append((node.name(), sorted(a for a in dir(node) if a.startswith("_saved_"))))
        node = node.next_functions[0][0] if node.next_functions else None
    return names


@pytest.mark.parametrize("kind, args, kwargs, shape", [
    ("MaxPool1d", (3,), {}, (2, 3, 9)), ("MaxPool1d", (3, 2, 1, 2), {"ceil_mode": True}, (3, 10)),
    ("MaxPool1d", (2,), {"return_indices": True}, (2, 2, 7)), ("MaxPool1d", ((3,), (2,), (1,)), {}, (1, 2, 8)),
    ("AvgPool1d", (3,), {}, (2, 3, 9)), ("AvgPool1d", (3, 2, 1, True, False), {}, (3, 10)),
    ("AvgPool1d", (4,), {"stride": 1, "padding": 2}, (1, 2, 6))])
def test_pool1d_modules_values_indices_gradients_and_graph(kind, args, kwargs, shape):
    def program(lib):
        lib.manual_seed(3)
        x = lib.randn(*shape, requires_grad=True)
        pool = getattr(lib.nn, kind)(*args, **kwargs)
        out = pool(x)
        y = out[0] if isinstance(out, tuple) else out
        (y * lib.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        with lib.no_grad():
            plain = pool(x)
        return out, x.grad, plain, _chain(y.grad_fn), repr(pool), vars(pool).get("kernel_size")
    same_program(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(9), 3),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 2, 9), (3, 3)),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 2, 9), 3, padding=2),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 2, 2, requires_grad=True), 3),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 2, 9), 3, stride=0),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 0, 9), 3),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(1, 2, 3, 9), 3),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(1, 2, 9), (3, 3)),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(1, 2, 9), 3, padding=2),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(1, 2, 2), 3),
    lambda lib: lib.max_pool1d_with_indices(lib.ones(9), 3)])
def test_pool1d_errors_are_torchs(call):
    same_error(call)


@pytest.mark.parametrize("kind, args", [("Hardshrink", ()), ("Softshrink", (0.3,)), ("Tanhshrink", ()), ("Softmin", (1,))])
def test_shrink_and_softmin_modules_match_torch(kind, args):
    def program(lib):
        x = lib.tensor([[-2.0, -0.5, -0.25, 0.0], [0.3, 0.5, 1.0, 3.0]], requires_grad=True)
        layer = getattr(lib.nn, kind)(*args)
        y = layer(x)
        (grad,) = lib.autograd.grad((y * lib.arange(8.0).reshape(2, 4)).sum(), x)
        return y, grad, _chain(y.grad_fn), repr(layer)
    same_program(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.softshrink(lib.ones(3), -1.0),
    lambda lib: lib.nn.functional.softshrink(lib.ones(3, dtype=lib.float64), -2.5),
    lambda lib: lib.nn.functional.softshrink(lib.tensor([1, 2]), 0.5),
    lambda lib: lib.nn.functional.hardshrink(lib.tensor([1, 2]))])
def test_shrink_errors_are_torchs(call):
    same_error(call)


def test_softmin_without_dim_warns_as_torch():
    same_warnings(lambda lib: lib.nn.functional.softmin(lib.ones(2, 3)))


@pytest.mark.parametrize("inplace", [False, True])
def test_threshold_module_and_functions_match_torch(inplace):
    def program(lib):
        x = lib.tensor([-2.0, -0.5, 0.0, 0.5, 1.0, 3.0], requires_grad=True)
        layer = lib.nn.Threshold(0.5, -1.0, inplace)
        y = layer(x * 1)
        (grad,) = lib.autograd.grad((y * lib.arange(6.0)).sum(), x)
        saved = sorted(a for a in dir(y.grad_fn) if a.startswith("_saved_"))
        plain = lib.tensor([1, 5, 9])
        return (y, grad, y.grad_fn.name(), saved, y.grad_fn._saved_threshold, repr(layer),
                lib.threshold(plain, 4, 0), lib.threshold_(plain.clone(), 5, -1), hasattr(plain, "threshold_"))
    same_program(program)


@pytest.mark.parametrize("dim", [-1, 0])
def test_glu_module_matches_torch(dim):
    def program(lib):
        lib.manual_seed(2)
        x = lib.randn(4, 6, requires_grad=True)
        layer = lib.nn.GLU(dim)
        y = layer(x)
        (grad,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (again,) = lib.autograd.grad(grad.sum(), x)
        return y, grad, again, _chain(y.grad_fn), repr(layer)
    same_program(program)


@pytest.mark.parametrize("args, shape", [((), (2, 3, 4)), ((3, 0.1), (2, 3, 5)), ((), (6,))])
def test_prelu_module_matches_torch(args, shape):
    def program(lib):
        lib.manual_seed(4)
        x = lib.randn(*shape, requires_grad=True)
        layer = lib.nn.PReLU(*args)
        y = layer(x)
        (y * lib.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        return y, x.grad, layer.weight.grad, _chain(y.grad_fn), y.grad_fn.next_functions[1][0].name(), repr(layer)
    same_program(program)
