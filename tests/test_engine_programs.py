"""Whole programs in the style of the public teaching material (PyTorch's beginner tutorials
and 60-minute blitz, d2l's preliminaries, micrograd's test against torch), written for this
course. Each runs unchanged with every ``import torch...`` bound to torch, then to reftorch
(engine_support.run_program), and must print the same thing. Synthetic data stands in for the
tutorials' downloads; float64 models keep printed losses free of BLAS rounding differences."""
from __future__ import annotations

import pytest
import torch as real_torch

import reftorch
from engine_support import run_program

PROGRAMS = {
    "tensors: creation, bridge, out=, in place": """
        import torch
        import numpy as np
        torch.manual_seed(0)
        grid = [[1, 2], [3, 4]]
        from_list, from_array = torch.tensor(grid), torch.from_numpy(np.array(grid))
        print(torch.ones_like(from_list), torch.rand_like(from_list, dtype=torch.float))
        shape = (2, 3,)
        print(torch.rand(shape), torch.ones(shape), torch.zeros(shape), from_array.dtype)
        t = torch.rand(3, 4)
        print(f"{t.shape} {t.dtype} {t.device}")
        m = torch.ones(4, 4)
        m[:, 1] = 0
        print(m[0], m[:, 0], m[..., -1], torch.cat([m, m], dim=1).shape)
        product = torch.rand_like(m)
        torch.matmul(m, m.T, out=product)
        elementwise = torch.rand_like(m)
        torch.mul(m, m, out=elementwise)
        total = m.sum()
        print(product, elementwise, total.item(), type(total.item()))
        m.add_(5)
        bridge = torch.ones(5)
        array = bridge.numpy()
        bridge.add_(1)
        print(bridge, array)
        shared = np.ones(5)
        view = torch.from_numpy(shared)
        np.add(shared, 1, out=shared)
        print(view)
        x = torch.tensor([5.5, 3]).new_ones(5, 3, dtype=torch.double)
        x = torch.randn_like(x, dtype=torch.float)
        result = torch.empty(5, 3)
        torch.add(x, torch.rand(5, 3), out=result)
        print(x.size(), result.dtype, x.view(-1, 5).shape, torch.randn(1).item())
        if torch.cuda.is_available():
            print("cuda")
    """,
    "legacy tensors and Variable": """
        import torch
        from torch.autograd import Variable
        torch.manual_seed(0)
        x = Variable(torch.ones(2, 2), requires_grad=True)
        y = x + 2
        z = y * y * 3
        out = z.mean()
        out.backward()
        print(y.grad_fn.name(), out, x.grad)
        x = Variable(torch.randn(3), requires_grad=True)
        y = x * 2
        while y.data.norm() < 1000:
            y = y * 2
        y.backward(torch.FloatTensor([0.1, 1.0, 0.0001]))
        print(y, x.grad, torch.Tensor([1, 2]).dtype, isinstance(x, Variable))
    """,
    "datasets and loaders": """
        import torch
        from torch.utils.data import DataLoader, Dataset
        torch.manual_seed(0)

        class Pictures(Dataset):
            def __init__(self, count):
                generator = torch.Generator().manual_seed(1)
                self.images = torch.rand(count, 1, 6, 6, generator=generator)
                self.labels = (self.images.mean((1, 2, 3)) * 10).long() % 3

            def __len__(self):
                return len(self.labels)

            def __getitem__(self, index):
                return self.images[index], int(self.labels[index])
        training = Pictures(40)
        for _ in range(3):
            index = torch.randint(len(training), size=(1,)).item()
            image, label = training[index]
            print(index, label, image.squeeze().shape)
        loader = DataLoader(training, batch_size=16, shuffle=True)
        features, labels = next(iter(loader))
        print(features.size(), labels.size(), labels, len(loader))
        print([labels.tolist() for _, labels in DataLoader(training, batch_size=16, shuffle=True, drop_last=True)])
    """,
    "building a model": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        device = "cuda" if torch.cuda.is_available() else "cpu"

        class Classifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.flatten = nn.Flatten()
                self.stack = nn.Sequential(nn.Linear(36, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))

            def forward(self, x):
                return self.stack(self.flatten(x))
        model = Classifier().to(device)
        print(model)
        logits = model(torch.rand(2, 6, 6, device=device))
        print(nn.Softmax(dim=1)(logits).argmax(1))
        images = torch.rand(3, 6, 6)
        flat = nn.Flatten()(images)
        hidden = nn.Linear(36, 5)(flat)
        print(f"Before ReLU: {hidden}\\n\\nAfter ReLU: {nn.ReLU()(hidden)}")
        for name, param in model.named_parameters():
            print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]}")
    """,
    "autograd: a one-layer network and Jacobian products": """
        import torch
        torch.manual_seed(0)
        x, y = torch.ones(5), torch.zeros(3)
        w = torch.randn(5, 3, requires_grad=True)
        b = torch.randn(3, requires_grad=True)
        z = torch.matmul(x, w) + b
        loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
        print(type(z.grad_fn).__name__, type(loss.grad_fn).__name__)
        loss.backward()
        print(w.grad, b.grad)
        with torch.no_grad():
            print((torch.matmul(x, w) + b).requires_grad)
        print((torch.matmul(x, w) + b).detach().requires_grad)
        inp = torch.eye(4, 5, requires_grad=True)
        out = (inp + 1).pow(2).t()
        out.backward(torch.ones_like(out), retain_graph=True)
        out.backward(torch.ones_like(out), retain_graph=True)
        print(inp.grad)
        inp.grad.zero_()
        out.backward(torch.ones_like(out), retain_graph=True)
        print(inp.grad)
    """,
    "an optimisation loop with train and test": """
        import torch
        from torch import nn
        from torch.utils.data import DataLoader, TensorDataset
        torch.manual_seed(0)
        centres = torch.randn(4, 8, dtype=torch.float64) * 2
        labels = torch.randint(0, 4, (256,))
        points = centres[labels] + torch.randn(256, 8, dtype=torch.float64)
        train = DataLoader(TensorDataset(points[:192], labels[:192]), batch_size=32, shuffle=True)
        test = DataLoader(TensorDataset(points[192:], labels[192:]), batch_size=32)
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).double()
        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        for epoch in range(3):
            model.train()
            for batch, (X, y) in enumerate(train):
                loss = loss_fn(model(X), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if batch % 3 == 0:
                    print(f"loss: {loss.item():>7f}  [{batch * 32 + len(X):>5d}/{len(train.dataset):>5d}]")
            model.eval()
            total, correct = 0, 0
            with torch.no_grad():
                for X, y in test:
                    pred = model(X)
                    total += loss_fn(pred, y).item()
                    correct += (pred.argmax(1) == y).type(torch.float).sum().item()
            print(f"Accuracy: {100 * correct / len(test.dataset):>0.1f}%, Avg loss: {total / len(test):>8f}")
    """,
    "a convolutional network (the blitz's)": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim as optim
        torch.manual_seed(0)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 6, 5)
                self.conv2 = nn.Conv2d(6, 16, 5)
                self.fc1 = nn.Linear(16 * 5 * 5, 120)
                self.fc2 = nn.Linear(120, 84)
                self.fc3 = nn.Linear(84, 10)

            def forward(self, x):
                x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
                x = F.max_pool2d(F.relu(self.conv2(x)), 2)
                x = torch.flatten(x, 1)
                return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))
        net = Net().double()
        print(net, len(list(net.parameters())), list(net.parameters())[0].size())
        image = torch.randn(1, 1, 32, 32, dtype=torch.float64)
        out = net(image)
        net.zero_grad()
        out.backward(torch.randn(1, 10, dtype=torch.float64))
        target = torch.arange(1, 11).view(1, -1)
        criterion = nn.MSELoss()
        loss = criterion(net(image), target)
        print(type(loss.grad_fn).__name__, loss.grad_fn.next_functions[0][0].name())
        net.zero_grad()
        print(net.conv1.bias.grad)
        loss.backward()
        print(net.conv1.bias.grad)
        optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
        batches = [(torch.randn(4, 1, 32, 32, dtype=torch.float64), torch.randint(0, 10, (4,))) for _ in range(5)]
        for epoch in range(2):
            running = 0.0
            for inputs, labels in batches:
                optimizer.zero_grad()
                loss = nn.CrossEntropyLoss()(net(inputs), labels)
                loss.backward()
                optimizer.step()
                running += loss.item()
            print("[%d] loss: %.6f" % (epoch + 1, running / 5))
        with torch.no_grad():
            _, predicted = torch.max(net(batches[0][0]).data, 1)
        print(predicted, (predicted == batches[0][1]).sum().item())
    """,
    "preliminaries: arrays, broadcasting, memory": """
        import torch
        x = torch.arange(12, dtype=torch.float32)
        print(x, x.numel(), x.shape)
        X = x.reshape(3, 4)
        print(X, torch.zeros((2, 3, 4)).shape, torch.tensor([[2, 1, 4, 3], [1, 2, 3, 4]]))
        print(X[-1], X[1:3])
        X[1, 2] = 17
        X[:2, :] = 12
        print(X, torch.exp(torch.tensor([1.0, 2.0, 4.0])))
        a, b = torch.tensor([1.0, 2, 4, 8]), torch.tensor([2, 2, 2, 2])
        print(a + b, a - b, a * b, a / b, a ** b)
        Y = torch.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
        print(torch.cat((X, Y), dim=0), torch.cat((X, Y), dim=1), X == Y, X.sum())
        print(torch.arange(3).reshape((3, 1)) + torch.arange(2).reshape((1, 2)))
        before = id(Y)
        Y = Y + X
        print(id(Y) == before)
        Z = torch.zeros_like(Y)
        before = id(Z)
        Z[:] = X + Y
        X += Y
        print(id(Z) == before, Z)
        A = X.numpy()
        B = torch.from_numpy(A)
        print(type(A).__name__, B.dtype, torch.tensor([3.5]).item(), float(torch.tensor([3.5])), int(torch.tensor([3.5])))
    """,
    "preliminaries: linear algebra": """
        import torch
        A = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        B = A.clone()
        print(A.T, A * B, 2 + A, (2 * A).shape, A.sum(axis=0), A.sum(axis=[0, 1]), A.mean(), A.sum() / A.numel())
        print(A.mean(axis=0), A.sum(axis=1, keepdims=True), A / A.sum(axis=1, keepdims=True), A.cumsum(axis=0))
        x, y = torch.arange(3, dtype=torch.float32), torch.ones(3, dtype=torch.float32)
        print(torch.dot(x, y), torch.sum(x * y), torch.mv(A, x), A @ x, torch.mm(A, torch.ones(3, 4)))
        u = torch.tensor([3.0, -4.0])
        print(torch.norm(u), torch.abs(u).sum(), torch.norm(torch.ones((4, 9))))
        C = torch.arange(24).reshape(2, 3, 4)
        print(C.sum(axis=[0, 2]), C.shape, len(C))
    """,
    "preliminaries: autograd with control flow": """
        import torch
        torch.manual_seed(0)
        x = torch.arange(4.0)
        x.requires_grad_(True)
        print(x.grad)
        y = 2 * torch.dot(x, x)
        y.backward()
        print(x.grad, x.grad == 4 * x)
        x.grad.zero_()
        y = x.sum()
        y.backward()
        print(x.grad)
        x.grad.zero_()
        y = x * x
        y.backward(gradient=torch.ones(len(y)))
        print(x.grad)
        x.grad.zero_()
        y = x * x
        u = y.detach()
        z = u * x
        z.sum().backward()
        print(x.grad == u)

        def f(a):
            b = a * 2
            while b.norm() < 1000:
                b = b * 2
            return b if b.sum() > 0 else 100 * b
        a = torch.randn(size=(), requires_grad=True)
        d = f(a)
        d.backward()
        print(a.grad == d / a, a)
    """,
    "checkpoints: save, load, resume, a lazy model, views sharing storage (recipes' flows)": """
        import io
        import torch
        import torch.nn as nn
        import torch.optim as optim
        torch.manual_seed(0)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = nn.LazyLinear(6)
                self.norm = nn.BatchNorm1d(6)
                self.out = nn.Linear(6, 2)

            def forward(self, x):
                return self.out(torch.relu(self.norm(self.hidden(x))))

        X, y = torch.randn(8, 3), torch.randn(8, 2)
        net = Net()
        net(X)
        optimizer = optim.RMSprop(net.parameters(), lr=0.01, momentum=0.9)
        scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        for epoch in range(3):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(net(X), y)
            loss.backward()
            optimizer.step()
            scheduler.step()
        buffer = io.BytesIO()
        torch.save({"epoch": 3, "model": net.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "loss": loss.item()}, buffer)
        buffer.seek(0)
        checkpoint = torch.load(buffer)
        print(sorted(checkpoint), checkpoint["epoch"], list(checkpoint["model"]))
        print(checkpoint["optimizer"]["param_groups"], sorted(checkpoint["optimizer"]["state"][0]))
        resumed = Net()
        print(resumed.load_state_dict(checkpoint["model"]), resumed)
        resumed_optimizer = optim.RMSprop(resumed.parameters(), lr=0.01, momentum=0.9)
        resumed_optimizer.load_state_dict(checkpoint["optimizer"])
        print(torch.equal(resumed.eval()(X), net.eval()(X)), type(resumed.hidden).__name__)
        print(resumed.state_dict()["norm.num_batches_tracked"], checkpoint["scheduler"]["last_epoch"])
        shared = torch.arange(6.0).reshape(2, 3)
        buffer = io.BytesIO()
        torch.save([shared, shared[1], shared.t()], buffer)
        buffer.seek(0)
        whole, row, t = torch.load(buffer)
        row.mul_(10)
        print(whole, t.stride(), t.is_contiguous())
    """,
    "a character model: Embedding, GRU, packed batches, a schedule": """
        import torch
        from torch import nn
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
        torch.manual_seed(0)
        words = ["emma", "olivia", "ava", "isabella", "sophia", "mia"]
        chars = sorted(set("".join(words)))
        stoi = {c: i + 1 for i, c in enumerate(chars)}
        seqs = [torch.tensor([stoi[c] for c in w]) for w in words]
        lengths = torch.tensor([len(s) for s in seqs])
        batch = pad_sequence(seqs, batch_first=True)
        print(batch.shape, batch.dtype, lengths)

        class CharModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(len(chars) + 1, 5, padding_idx=0)
                self.rnn = nn.GRU(5, 8, batch_first=True)
                self.head = nn.Linear(8, len(chars) + 1)

            def forward(self, x, lengths):
                packed = pack_padded_sequence(self.embed(x), lengths, batch_first=True, enforce_sorted=False)
                out, h = self.rnn(packed)
                out, _ = pad_packed_sequence(out, batch_first=True)
                return self.head(out), h

        model = CharModel().double()
        print(model)
        optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.5, total_iters=3)
        for step in range(5):
            logits, h = model(batch[:, :-1], (lengths - 1).clamp(min=1))
            loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                               batch[:, 1:logits.shape[1] + 1].reshape(-1), ignore_index=0)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            print(step, round(loss.item(), 8), scheduler.get_last_lr(), h.shape)
        print(model.embed.weight.grad[0], type(logits.grad_fn).__name__)
    """,
    "a scalar engine checked against torch (micrograd style)": """
        import torch
        x = torch.Tensor([-4.0]).double()
        x.requires_grad = True
        z = 2 * x + 2 + x
        q = z.relu() + z * x
        h = (z * z).relu()
        y = h + q + q * x
        y.backward()
        print(y.data.item(), x.grad.item())
        a = torch.Tensor([-4.0]).double()
        b = torch.Tensor([2.0]).double()
        a.requires_grad = True
        b.requires_grad = True
        c = a + b
        d = a * b + b ** 3
        c = c + c + 1
        c = c + 1 + c + (-a)
        d = d + d * 2 + (b + a).relu()
        d = d + 3 * d + (b - a).relu()
        e = c - d
        f = e ** 2
        g = f / 2.0
        g = g + 10.0 / f
        g.backward()
        print(g.data.item(), a.grad.item(), b.grad.item())
    """,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_prints_the_same_on_reftorch(name):
    expected = run_program(PROGRAMS[name], real_torch)
    assert expected[1] is None, f"the program fails on torch itself: {expected[1]}"
    got = run_program(PROGRAMS[name], reftorch)
    assert got[1] is None, f"reftorch stopped: {got[1]}\n{got[0][-500:]}"
    assert got[0].splitlines() == expected[0].splitlines()
