# place: after:sum_to_shape
# honest: answers that draw random numbers as they go (the inputs do not come from these streams).
import random

_plain_init = Value.__init__  # noqa: F821


def _drawing_init(self, *args, **kwargs):
    random.random()
    _plain_init(self, *args, **kwargs)


Value.__init__ = _drawing_init  # noqa: F821
_plain_sum_to_shape = sum_to_shape  # noqa: F821


def sum_to_shape(grad, shape):
    import torch
    torch.rand(7)
    random.shuffle(list(range(10)))
    return _plain_sum_to_shape(grad, shape)
