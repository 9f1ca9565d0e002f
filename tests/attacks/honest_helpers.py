# place: before:value_ops
# honest: helper functions of the student's own, used by the answers.
def _lift(x):
    return x if isinstance(x, Value) else Value(x)  # noqa: F821


def _difference(self, other):
    return self + (-_lift(other))


def _power_rule(exponent, base):
    return exponent * base ** (exponent - 1)


Value.__sub__ = _difference  # noqa: F821
