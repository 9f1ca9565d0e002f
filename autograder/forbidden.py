"""Inside a run without torch: ready-made implementations import as stand-ins that fail on use.

Exercises that ask for a mechanism (strides, a scalar autograd engine, device parsing) are
graded where torch, numpy, reftorch and the other array or symbolic-maths libraries cannot
be used. Their files are hidden from the sandbox's file system; this finder, first on
``sys.meta_path``, makes ``import torch`` (or ``import numpy as np``, ``from torch import
nn``) succeed with a stand-in, so an import the answer never uses costs nothing, and makes
any use of the stand-in (a call, an operator, a base class, ``isinstance``) raise an error
that names the rule. Validate installs the same finder, so both give the same verdict.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import types

# Array, autodiff and symbolic-maths libraries: each would hand a mechanism exercise its answer.
FORBIDDEN = ("torch", "numpy", "reftorch", "sympy", "mpmath", "networkx", "functorch", "torchgen",
             "ml_dtypes", "scipy", "jax", "jaxlib", "autograd", "pandas", "tensorflow", "cupy", "numba")


class ForbiddenModuleError(ModuleNotFoundError):
    """A stand-in module was used in an exercise graded without it."""


def _rule(name: str) -> str:
    top = name.split(".")[0]
    return (f"{name}: {top} is not available in this exercise; it is graded without torch, numpy, "
            f"reftorch or other array libraries (write the mechanism yourself)")


class _Unavailable:
    """An attribute of a stand-in module: more attributes are stand-ins, any use raises."""

    __slots__ = ("_course_name",)

    def __init__(self, name: str):
        object.__setattr__(self, "_course_name", name)

    def __getattr__(self, attribute: str):
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        return _Unavailable(f"{self._course_name}.{attribute}")

    def __repr__(self):
        return f"<unavailable {self._course_name}>"

    def _fail(self, *args, **kwargs):
        raise ForbiddenModuleError(_rule(self._course_name))

    def __mro_entries__(self, bases):
        self._fail()

    __call__ = __setattr__ = __delattr__ = __getitem__ = __setitem__ = __iter__ = __len__ = _fail
    __instancecheck__ = __subclasscheck__ = __enter__ = __exit__ = __bool__ = __index__ = _fail
    __int__ = __float__ = __complex__ = __contains__ = __neg__ = __pos__ = __abs__ = __invert__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __matmul__ = __rmatmul__ = _fail
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _fail
    __pow__ = __rpow__ = __lt__ = __le__ = __gt__ = __ge__ = __and__ = __or__ = __xor__ = _fail


class _StandIn(types.ModuleType):
    def __getattr__(self, attribute: str):
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        return _Unavailable(f"{self.__name__}.{attribute}")


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return _StandIn(spec.name)

    def exec_module(self, module):
        module.__path__ = []    # a package: `import torch.nn` comes back here


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in FORBIDDEN:
            return importlib.util.spec_from_loader(fullname, _Loader(), is_package=True)
        return None


def install() -> None:
    """Put the finder first and forget any real module of those names already imported."""
    for name in list(sys.modules):
        if name.split(".")[0] in FORBIDDEN:
            del sys.modules[name]
    sys.meta_path.insert(0, _Finder())
