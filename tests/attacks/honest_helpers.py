# place: after:value_backward
# honest: helper functions of the student's own, used by the answers.
def _lift(x):
    return x if isinstance(x, Value) else Value(x)  # noqa: F821


def _reflected_difference(self, other):
    return _lift(other) - self


Value.__rsub__ = _reflected_difference  # noqa: F821
