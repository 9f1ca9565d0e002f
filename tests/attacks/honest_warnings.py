# place: after:value_backward
# honest: an answer that warns on every call (a warning is not an error).
import warnings

_plain_add = Value.__add__  # noqa: F821


def _warning_add(self, other):
    warnings.warn("adding two Values", UserWarning)
    return _plain_add(self, other)


Value.__add__ = _warning_add  # noqa: F821
warnings.simplefilter("always")
