# place: before_each_test
# 01_tensors answered by torch itself: the strided computations, the puzzles and the
# predictions delegated to real tensors.
import functools

import torch
import torch.nn.functional


def _dense(a):
    return torch.as_strided(torch.tensor(a.storage), a.shape, a.strides, a.offset)


def strided_zip(fn, a, b):
    x, y = torch.broadcast_tensors(_dense(a), _dense(b))
    values = [fn(p, q) for p, q in zip(x.flatten().tolist(), y.flatten().tolist())]
    return Strided(values, tuple(x.shape), torch.empty(x.shape).stride(), 0)


def strided_reduce(fn, start, a, dim):
    t = _dense(a)
    count = t.size(dim)  # torch's own IndexError for a dim out of range
    rows = t.movedim(dim, -1).reshape(-1, count).tolist()
    shape = tuple(1 if d == dim % t.dim() else n for d, n in enumerate(t.shape))
    return Strided([functools.reduce(fn, row, start) for row in rows], shape, torch.empty(shape).stride(), 0)


def take(a, index):
    return torch.take(a, index)


def unfold(a, size, step):
    return a.unfold(0, size, step)


def repeat_interleave(a, repeats):
    return torch.repeat_interleave(a, repeats)


def one_hot(labels, num_classes):
    return torch.nn.functional.one_hot(labels, num_classes)


_x = torch.arange(12.).reshape(3, 4)
shares_storage = {e: eval(e, {"torch": torch, "x": _x}).untyped_storage().data_ptr() == _x.untyped_storage().data_ptr()
                  for e in ["x.diagonal()", "x.narrow(1, 1, 2)", "x.unfold(1, 2, 2)", "x.flip(0)", "x[x > 5]",
                            "x[:, [1]]", "x.contiguous()", "x.float()", "x.to(torch.float64)", "x.view(2, 6).t()",
                            "x[:, 1:3].reshape(6)", "x[:, 1:3].reshape(3, 2)"]}
