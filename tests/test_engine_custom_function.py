"""Custom autograd.Function as torch runs it: mark_dirty, save_for_backward's checks, the
setup_context style; autograd.grad's materialize_grads rule; grad-mode decorators written bare,
with parentheses, and on generators."""
from __future__ import annotations

import pytest

from engine_support import LIBS, same_error, same_program


def _doubling_in_place(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2
    return Double


def test_mark_dirty_returns_the_input_itself_and_bumps_its_version_twice():
    def program(lib):
        leaf = lib.ones(2, requires_grad=True)
        b = leaf.clone()
        before = b._version
        c = _doubling_in_place(lib).apply(b)
        same_object, bumps, node = c is b, b._version - before, type(b.grad_fn).__name__
        c.sum().backward()
        plain = lib.ones(2)
        version = plain._version
        d = _doubling_in_place(lib).apply(plain)
        return same_object, bumps, node, leaf.grad, d is plain, plain._version - version, d.grad_fn is None, plain
    same_program(program)


def test_mark_dirty_on_a_leaf_that_requires_grad_raises_torchs_error():
    same_error(lambda lib: _doubling_in_place(lib).apply(lib.ones(2, requires_grad=True)))


def test_save_for_backward_refuses_a_list_with_torchs_error():
    def program(lib):
        class Saves(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward([x])
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad
        Saves.apply(lib.ones(2, requires_grad=True))
    same_error(program)


def test_setup_context_style_forward_without_ctx():
    def program(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(x, k):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, k = inputs
                ctx.k = k
                ctx.save_for_backward(x)

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * ctx.k + x * 0, None

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = Scale.apply(x, 3.0)
        y.sum().backward()
        return y, type(y.grad_fn).__name__, x.grad
    same_program(program)


@pytest.mark.parametrize("style", ["ctx in forward", "setup_context", "not materialized", "vjp"])
def test_a_non_differentiable_output_still_gets_its_gradient_slot(style):
    """backward takes one gradient per output: a non-differentiable output's is zeros (None without
    materialized grads); ``vjp`` may stand for backward."""
    def program(lib):
        class Split(lib.autograd.Function):
            if style == "ctx in forward":
                @staticmethod
                def forward(ctx, x):
                    big, small = x * 2, x * 3
                    ctx.mark_non_differentiable(small)
                    return big, small
            else:
                @staticmethod
                def forward(x):
                    return x * 2, x * 3

                @staticmethod
                def setup_context(ctx, inputs, output):
                    ctx.mark_non_differentiable(output[1])
                    ctx.set_materialize_grads(style != "not materialized")

            def gradients(ctx, big_grad, small_grad):
                return big_grad * 2 + (0 if small_grad is None else small_grad.sum())
            if style == "vjp":
                vjp = staticmethod(gradients)
            else:
                backward = staticmethod(gradients)

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        big, small = Split.apply(x)
        big.sum().backward()
        return x.grad, small.requires_grad, small.grad_fn is None
    same_program(program)

def test_setup_context_sees_forwards_arguments_with_defaults_filled_in():
    def program(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(x, k=2.0):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                _, ctx.k = inputs  # k was not passed: its default is there

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.k, None

        x = lib.ones(2, requires_grad=True)
        y = Scale.apply(x)
        y.sum().backward()
        by_name = Scale.apply(x, k=3.0)
        return y, x.grad, by_name
    same_program(program)


@pytest.mark.parametrize("case", ["ctx in forward too", "too many arguments"])
def test_setup_context_style_checks_the_arguments_as_torch(case):
    def program(lib):
        class Doubling(lib.autograd.Function):
            if case == "ctx in forward too":
                @staticmethod
                def forward(ctx, x):
                    return x * 2
            else:
                @staticmethod
                def forward(x):
                    return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, grad):
                return grad * 2
        Doubling.apply(*[lib.ones(1, requires_grad=True), 3][:1 if case == "ctx in forward too" else 2])
    same_error(program)

def test_materialize_grads_with_allow_unused_false_is_refused():
    def program(lib):
        x, y = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        lib.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True, allow_unused=False)
    same_error(program)


def test_materialize_grads_gives_zeros_for_an_unused_input():
    def program(lib):
        x, y = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        return lib.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
    same_program(program)


@pytest.mark.parametrize("form", ["bare", "called"])
@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode"])
def test_grad_mode_decorators_bare_or_called_on_functions_and_generators(mode, form):
    def program(lib):
        decorator = getattr(lib, mode) if form == "bare" else getattr(lib, mode)()
        x = lib.ones(2, requires_grad=True)

        @decorator
        def step(t):
            """Documented."""
            return (t * 2).requires_grad, lib.is_grad_enabled(), lib.is_inference_mode_enabled()

        @decorator
        def steps(t):
            yield (t * 2).requires_grad, lib.is_grad_enabled()
            received = yield lib.is_grad_enabled()
            yield received

        outside = lib.no_grad() if mode == "enable_grad" else lib.enable_grad()
        with outside:
            called = step(x)
            gen = steps(x)
            first = next(gen)
            between = lib.is_grad_enabled()
            second = next(gen)
            third = gen.send("sent")
        return called, first, between, second, third, step.__name__, step.__doc__, lib.is_grad_enabled()
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs
