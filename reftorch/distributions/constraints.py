"""Constraints: the set a parameter or a sample must lie in, and ``check`` that says, per
event, whether a value does (``Distribution`` checks its parameters against them).

A constraint prints as its class name without the leading underscore (``Simplex()``,
``GreaterThan(lower_bound=0.0)``), the words torch's validation errors show.
"""
from __future__ import annotations
from ..functions import all as all_

__all__ = [
    "Constraint", "boolean", "dependent", "dependent_property", "greater_than", "greater_than_eq", "independent",
    "integer_interval", "interval", "is_dependent", "less_than", "multinomial", "nonnegative",
    "nonnegative_integer", "positive", "positive_integer", "real", "real_vector", "simplex", "unit_interval",
]


class Constraint:
    """A region values may lie in. ``event_dim``: how many rightmost dims make one event
    (``check`` answers once per event); ``is_discrete``: integers only."""
    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A bool tensor of the value's shape less its event dims: which events satisfy it."""
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a region that depends on other parameters: it cannot be checked."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """``dependent(is_discrete=True, event_dim=1)``: a copy with those known statically."""
        return _Dependent(is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """``@dependent_property``: a property on an instance (``Categorical(...).support``), a
    dependent constraint on the class (``Categorical.support``), which validation skips."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base`` on every entry of the rightmost ``reinterpreted_batch_ndims`` dims at once."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        kept = result.shape[:result.dim() - self.reinterpreted_batch_ndims]
        return result.reshape(tuple(kept) + (-1,)).all(-1)

    def __repr__(self):
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    """0 or 1 (a Bernoulli sample)."""
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _Real(Constraint):
    """The extended real line: anything but NaN."""

    def check(self, value):
        return value == value


class _Bounded(Constraint):
    """A constraint with named bounds, printed as ``Name(lower_bound=0.0)``."""
    _bound_names: tuple = ()

    def __repr__(self):
        bounds = ", ".join(f"{name}={getattr(self, name)}" for name in self._bound_names)
        return f"{type(self).__name__[1:]}({bounds})"


class _LowerBounded(_Bounded):
    _bound_names = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound


class _GreaterThan(_LowerBounded):
    def check(self, value):
        return self.lower_bound < value


class _GreaterThanEq(_LowerBounded):
    def check(self, value):
        return self.lower_bound <= value


class _LessThan(_Bounded):
    _bound_names = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound


class _Interval(_Bounded):
    _bound_names = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerInterval(_Bounded):
    is_discrete = True
    _bound_names = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerGreaterThan(_LowerBounded):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Simplex(Constraint):
    """Nonnegative entries summing to 1 (within 1e-6) along the last dim."""
    event_dim = 1

    def check(self, value):
        return all_(value >= 0, dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Counts: nonnegative, summing to at most ``upper_bound`` (torch checks no more either)."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


dependent = _Dependent()
boolean = _Boolean()
dependent_property = _DependentProperty
independent = _IndependentConstraint
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
interval = _Interval
unit_interval = _Interval(0.0, 1.0)
integer_interval = _IntegerInterval
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
simplex = _Simplex()
multinomial = _Multinomial
