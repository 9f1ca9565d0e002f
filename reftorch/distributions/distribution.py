"""``Distribution``: the base class. It holds the batch and event shapes, validates the
parameters against ``arg_constraints`` when built, and turns ``sample_shape`` into a
result's shape: ``sample_shape + batch_shape + event_shape``.

Validation is on unless Python runs with ``-O`` (it follows ``__debug__``, as ``assert``
does); ``Distribution.set_default_validate_args(False)`` turns it off for every instance.
"""
from __future__ import annotations

import warnings

from . import constraints
from .utils import lazy_property
from ..autograd import no_grad
from ..functions import exp
from ..tensor import Size, Tensor

__all__ = ["Distribution"]


def _size(shape=()):
    return shape if isinstance(shape, Size) else Size(shape)


class Distribution:
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                          "or initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=3)
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # nothing to check it against
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue  # derived from the other parameter, which was checked
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                 f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                 f"{constraint!r}, but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample, with no graph to the parameters."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterised sample: gradients flow from it back to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(_size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        """``sample_shape + batch_shape + event_shape``."""
        return _size(tuple(_size(sample_shape)) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        """``value``'s rightmost dims are the event shape, the rest broadcast with the batch
        shape, and it lies in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.dim() - len(self._event_shape)
        if value.size()[event_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual, expected = value.size(), self._extended_shape()
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=2)
            return
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        shown = [name for name in self.arg_constraints if name in self.__dict__]
        args = ", ".join(f"{name}: {self.__dict__[name] if self.__dict__[name].numel() == 1 else self.__dict__[name].size()}"
                         for name in shown)
        return f"{type(self).__name__}({args})"
