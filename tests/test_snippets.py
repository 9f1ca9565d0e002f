"""Lesson-style snippets run unchanged with `import reftorch as torch`.

Each snippet runs twice, once with ``torch`` bound to PyTorch and once to reftorch (every
``import torch.<sub>`` in it too, see engine_support.run_program); what it prints must be
identical, and a snippet that raises must raise the same exception class with the same
message start.
"""
from __future__ import annotations

import inspect
import textwrap

import pytest
import torch as real_torch

import reftorch
from engine_support import run_program, torch_bound_to

SNIPPETS = {
    "creation and dtypes": """
        print(torch.zeros(2, 3), torch.ones(2, dtype=torch.int32), torch.full((2,), 7.5))
        print(torch.arange(5), torch.arange(0, 1, 0.25), torch.tensor([[1, 2], [3, 4]]).dtype)
        print(torch.tensor([True, False]).dtype, torch.tensor(3.0).dim(), torch.empty(2, 3).shape)
        print(torch.zeros_like(torch.ones(2, 2, dtype=torch.float64)))
    """,
    "promotion": """
        a = torch.ones(2)
        print((a + torch.ones(2, dtype=torch.float64)).dtype, (torch.arange(3) + 1.5).dtype)
        print((torch.arange(3) / 2), (torch.arange(3) + torch.tensor(1.0, dtype=torch.float64)).dtype)
        print((a + torch.tensor(2.0, dtype=torch.float64)).dtype, (torch.tensor([True]) + 1).dtype)
    """,
    "matmul of mismatched dtypes": """
        torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)
    """,
    "numpy sharing": """
        import numpy as np
        a = np.arange(4.0)
        t = torch.from_numpy(a)
        a[0] = 100
        print(t)
        t[1] = -1
        print(a)
        c = torch.tensor(a)
        a[2] = 55
        print(c)
        print(t.numpy() is not None, torch.ones(2).numpy().dtype)
    """,
    "strides and views": """
        x = torch.arange(12).view(3, 4)
        print(x.stride(), x.t().stride(), x.t().is_contiguous(), x[1].storage_offset())
        print(x[:, 1].stride(), x[1:, ::2], x.permute(1, 0).shape, x.unsqueeze(0).stride())
        v = x.t()
        v[0, 0] = 99
        print(x[0, 0], v._is_view(), v._base is x, x.expand(2, 3, 4).stride())
        print(x.reshape(12).data_ptr() == x.data_ptr(), x.t().reshape(12).data_ptr() == x.data_ptr())
        print(x.flatten().shape, x.chunk(2, 1)[1], x.split([1, 2])[1].shape)
    """,
    "view of a non-contiguous tensor": """
        torch.arange(6).view(2, 3).t().view(6)
    """,
    "everyday functions": """
        x = torch.tensor([[3., 1., 2.], [0., 5., 4.]])
        print(torch.cat([x, x]).shape, torch.stack([x, x], 1).shape, x.max(), x.max(dim=1))
        print(torch.maximum(x, torch.full((3,), 2.0)), x.ravel(), x.topk(2), x.sum(0), x.mean(1, keepdim=True))
        print(x.repeat(2, 1).shape, x.tile((2,)).shape, x.argmax(), x.prod(1), x.min(0).indices)
        print(torch.allclose(x, x + 1e-9), torch.equal(x, x.clone()), x.squeeze().shape, x[None].squeeze(0).shape)
    """,
    "advanced indexing and masked assignment": """
        x = torch.arange(10.)
        print(x[x > 6], x[[1, 3]], x[torch.tensor([0, 9])])
        x[x > 6] = 0
        print(x, x._version)
        y = torch.arange(12).view(3, 4)
        print(y[[0, 2], 1:], y[:, torch.tensor([True, False, True, False])])
    """,
    "in-place and versions": """
        A = torch.ones(3, 2)
        A[1] += A[2]
        print(A, A._version)
        v = A[0]
        v.zero_()
        print(A._version, v._version, A.exp_()[0], A._version)
    """,
    "devices": """
        x = torch.ones(2)
        print(x.device, x.to('cpu') is x, x.to(torch.float32) is x, x.to(torch.float64) is x)
        print(torch.device('cpu'), torch.device('cuda:0'), torch.device('cpu') == torch.device('cpu'))
    """,
    "autograd basics": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        y = (x * x).sum()
        print(y, y.grad_fn.name(), x.is_leaf, y.is_leaf)
        y.backward()
        print(x.grad)
        z = (x ** 3).sum()
        z.backward()
        print(x.grad)
        x.grad = None
        (2 * x).sum().backward()
        print(x.grad)
    """,
    "non-leaf grad warning and retain_grad": """
        import warnings
        x = torch.tensor([1., 2.], requires_grad=True)
        h = x * 3
        h.retain_grad()
        g = h.exp()
        g.sum().backward()
        print(h.grad is not None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            print(g.grad)
        print(len(caught), str(caught[0].message)[:60])
    """,
    "backward twice": """
        x = torch.tensor([1., 2.], requires_grad=True)
        y = (x.exp() * 2).sum()
        y.backward()
        y.backward()
    """,
    "retain_graph and non-scalar backward": """
        x = torch.tensor([1., 2.], requires_grad=True)
        y = x * x
        y.backward(gradient=torch.tensor([1., 0.1]), retain_graph=True)
        y.backward(gradient=torch.tensor([1., 0.1]))
        print(x.grad)
    """,
    "implicit grad for a vector": """
        x = torch.tensor([1., 2.], requires_grad=True)
        (x * 2).backward()
    """,
    "autograd.grad and higher order": """
        x = torch.tensor(3., requires_grad=True)
        y = x ** 3
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        (h,) = torch.autograd.grad(g, x)
        print(g, h)
        w = torch.tensor([1., 2.], requires_grad=True)
        out = w * torch.tensor([3., 4.])
        print(torch.autograd.grad(out, w, grad_outputs=torch.tensor([1., 1.])))
        print(torch.autograd.functional.hessian(lambda v: (v ** 3).sum(), torch.tensor([1., 2.])))
    """,
    "backward inputs=": """
        a = torch.tensor([1., 2.], requires_grad=True)
        b = torch.tensor([3., 4.], requires_grad=True)
        (a * b).sum().backward(inputs=[a])
        print(a.grad, b.grad)
    """,
    "grad modes": """
        x = torch.tensor([1.], requires_grad=True)
        with torch.no_grad():
            y = x * 2
            with torch.enable_grad():
                z = x * 2
        print(y.requires_grad, z.requires_grad, torch.is_grad_enabled())
        @torch.no_grad()
        def f(t):
            return t * 2
        print(f(x).requires_grad)
        with torch.inference_mode():
            i = x * 2
        print(i.requires_grad, i.is_inference())
    """,
    "inference tensor in autograd": """
        with torch.inference_mode():
            t = torch.ones(2)
        w = torch.ones(2, requires_grad=True)
        (w * t).sum().backward()
        t.add_(1)
    """,
    "modified by an inplace operation": """
        a = torch.tensor([1., 2.], requires_grad=True)
        b = a.exp()
        b.add_(1)
        b.sum().backward()
    """,
    "in-place on a leaf": """
        x = torch.rand(3, requires_grad=True)
        x[x > 0.5] = 0
    """,
    "where instead of masked assignment": """
        x = torch.tensor([0.2, 0.7, 0.9], requires_grad=True)
        y = torch.where(x > 0.5, torch.zeros_like(x), x)
        y.sum().backward()
        print(y, x.grad)
    """,
    "setitem on a non-leaf": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        y = x * 2
        y[0] = 10
        y.sum().backward()
        print(type(y.grad_fn).__name__, x.grad)
    """,
    "clone and detach": """
        x = torch.tensor([1., 2.], requires_grad=True)
        c = x.clone()
        d = x.detach()
        print(c.grad_fn.name(), d.requires_grad, d.data_ptr() == x.data_ptr(), c.data_ptr() == x.data_ptr())
        d.zero_()
        print(x, x._version, c._version)
        (c * 3).sum().backward()
        print(x.grad)
    """,
    "there is no copy()": """
        torch.ones(2).copy()
    """,
    "item": """
        losses = []
        w = torch.tensor([2.], requires_grad=True)
        for step in range(3):
            loss = (w * step).sum()
            losses.append(loss.item())
        print(losses, type(losses[0]).__name__)
    """,
    "custom Function": """
        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x
            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * grad
        x = torch.tensor([1., 2., 3.], dtype=torch.float64, requires_grad=True)
        y = Square.apply(x)
        y.sum().backward()
        print(x.grad, type(y.grad_fn).__name__, torch.autograd.gradcheck(Square.apply, (x,)))
    """,
    "module registration": """
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(3, 2)
                self.scale = torch.nn.Parameter(torch.ones(1))
                self.plain = torch.ones(1)
                self.register_buffer('count', torch.zeros(1))
            def forward(self, x):
                return self.fc(x) * self.scale
        net = Net()
        print(net)
        print([n for n, _ in net.named_parameters()], list(net.state_dict()), [n for n, _ in net.named_buffers()])
        print(sum(p.numel() for p in net.parameters()), net(torch.ones(4, 3)).shape)
    """,
    "a small SGD fit": """
        X = torch.linspace(-1, 1, 21).view(-1, 1)
        Y = 3 * X + 0.5
        w = torch.zeros(1, 1, requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([w, b], lr=0.5)
        for _ in range(60):
            opt.zero_grad()
            loss = ((X @ w + b - Y) ** 2).mean()
            loss.backward()
            opt.step()
        print(round(w.item(), 3), round(b.item(), 3), round(loss.item(), 6))
    """,
    "tensor hooks": """
        x = torch.tensor([1., -2., 3.], requires_grad=True)
        h = x * x
        h.register_hook(lambda grad: print('into h:', grad))
        halve = x.register_hook(lambda grad: grad / 2)
        out = (h.relu() * torch.tensor([1., 2., 3.])).sum() + h.sum()
        out.register_hook(lambda grad: print(f'root gradient {grad}'))
        out.backward()
        print(x.grad)
        halve.remove()
        x.grad = None
        (x * x).sum().backward()
        print(x.grad, type(halve).__name__)
    """,
    "hook on a tensor without grad": """
        torch.ones(2).register_hook(lambda grad: grad)
    """,
    "forward hooks capture activations": """
        net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
        with torch.no_grad():
            for p in net.parameters():
                p.copy_(torch.arange(p.numel(), dtype=torch.float32).view(p.shape) - 2)
        seen = {}
        handles = [m.register_forward_hook(lambda m, args, out, name=name: seen.update({name: out}))
                   for name, m in net.named_children()]
        net[0].register_forward_pre_hook(lambda m, args: args[0] * 2)
        print(net(torch.tensor([[1., -1.], [0.5, 2.]])))
        print(seen['1'], seen['2'].grad_fn.name())
        for handle in handles:
            handle.remove()
        seen.clear()
        net(torch.ones(1, 2))
        print(seen)
    """,
    "nn.Buffer": """
        class Stats(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.mean = torch.nn.Buffer(torch.zeros(2))
                self.cache = torch.nn.Buffer(torch.ones(1), persistent=False)
        stats = Stats()
        print(list(stats.state_dict()), [n for n, _ in stats.named_buffers()], type(stats.mean).__name__)
        print(isinstance(stats.mean, torch.nn.Buffer), stats.to(torch.float64).mean.dtype)
    """,
    "unfold, movedim, flip, masked_fill_": """
        x = torch.arange(6.)
        w = x.unfold(0, 3, 2)
        print(w, w.stride(), w.data_ptr() == x.data_ptr())
        m = torch.arange(24).view(2, 3, 4)
        print(m.movedim(0, -1).shape, torch.movedim(m, (0, 1), (2, 0)).stride(), torch.flip(m, (0, 2))[0, 0])
        y = torch.zeros(2, 3)
        print(y.masked_fill_(torch.tensor([True, False, True]), 5.), y._version)
        print(torch.broadcast_shapes((2, 1), (3,)), x.nbytes, x.itemsize, x.get_device())
    """,
    "optimizer state_dict": """
        w = torch.nn.Parameter(torch.tensor([1., 2.]))
        opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
        (w * w).sum().backward()
        opt.step()
        state = opt.state_dict()
        print(state)
        fresh = torch.optim.SGD([w], lr=0.5)
        fresh.load_state_dict(state)
        print(fresh.param_groups[0]['lr'], fresh.state[w])
    """,
}


def run(source: str, lib) -> tuple[str, tuple | None]:
    """What the snippet prints and how it fails, with every ``import torch...`` bound to lib."""
    return run_program("import torch\n" + textwrap.dedent(source), lib)


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippet_matches_torch(name):
    real_torch.manual_seed(0)
    reftorch.manual_seed(0)
    expected = run(SNIPPETS[name], real_torch)
    got = run(SNIPPETS[name], reftorch)
    assert got == expected


def test_comparison_notices_a_difference():
    # the harness must be able to fail: a snippet whose output depends on the library
    assert run("print(torch.__name__)", real_torch) != run("print(torch.__name__)", reftorch)


CHECKPOINTED = """
    from torch.utils.checkpoint import checkpoint
    x = torch.tensor([1., 2.], requires_grad=True)
    checkpoint(lambda h: (h * h).exp(), x, use_reentrant=False).sum().backward()
"""


def test_binding_only_the_name_torch_lets_real_torch_do_the_work():
    # the trap this harness avoids: with only the name bound, the import finds real torch's
    # checkpoint, which runs on reftorch's tensors and gives the right gradient
    scope = {"torch": reftorch}
    exec(textwrap.dedent(CHECKPOINTED), scope)
    assert inspect.getmodule(scope["checkpoint"]).__name__ == "torch.utils.checkpoint"
    assert scope["x"].grad is not None
    # bound by the hook, the same import is reftorch's, and real torch is back afterwards
    scope = {}
    with torch_bound_to(reftorch):
        exec("import torch\n" + textwrap.dedent(CHECKPOINTED), scope)
    assert scope["checkpoint"] is reftorch.utils.checkpoint.checkpoint
    assert isinstance(scope["x"].grad, reftorch.Tensor)
    import torch.utils.checkpoint
    assert torch.utils.checkpoint.checkpoint.__module__ == "torch.utils.checkpoint"


def test_a_torch_module_reftorch_lacks_fails_loudly():
    printed, error = run_program("import torch.distributed", reftorch)
    assert error[0] == "ModuleNotFoundError"
    assert error[1].startswith("No module named 'reftorch.distributed': the program imports torch")
    assert run_program("import torch.distributed", real_torch) == ("", None)
