"""``Multinomial``: how many of ``total_count`` categorical draws fell in each category.

A sample is ``total_count`` draws of the ``Categorical`` counted per category (the draws
are torch's, so the counts are too); ``log_prob`` is the multinomial formula with
``lgamma`` for the factorials.
"""
from __future__ import annotations

import math

from . import constraints
from .categorical import Categorical
from .distribution import Distribution, _size
from .utils import broadcast_all
from ..functions import lgamma, ones_like
from ..storage import contiguous_format

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = _size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        sample_shape = _size(sample_shape)
        draws = self._categorical.sample(_size((self.total_count,)) + sample_shape)
        # the draws' dim first -> last, then each draw adds one to its category's count
        order = list(range(draws.dim()))
        draws = draws.permute(*order[1:], order[0])
        counts = draws.new(self._extended_shape(sample_shape)).zero_()
        counts.scatter_add_(-1, draws, ones_like(draws))
        return counts.type_as(self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone(memory_format=contiguous_format)  # expanded: one value per element first
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        logits[(value == 0) & (logits == -math.inf)] = 0  # 0 * log 0 counts as 0
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
