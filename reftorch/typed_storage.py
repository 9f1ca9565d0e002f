"""TypedStorage: a storage seen as elements of one dtype (``tensor.storage()``), and the legacy
storage classes (``torch.FloatStorage``, ...) that checkpoints name.

torch deprecates ``tensor.storage()`` in favour of ``untyped_storage()`` but students still use
it to see that two tensors share memory (``a.storage().data_ptr() == b.storage().data_ptr()``),
and every checkpoint refers to a storage by its legacy class: a saved float32 tensor's storage
is a ``torch.FloatStorage`` in the file (see serialization.py).
"""
from __future__ import annotations

import warnings

from . import dtypes
from .tensor import Tensor

_warned = False


def _warn_typed_storage_removal():
    # torch says this once per process
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
            "only storage class. This should only matter to you if you are using storages directly.  To "
            "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
            UserWarning, stacklevel=3)


class TypedStorage:
    """The whole flat buffer under a tensor (not just the part the tensor sees), as ``dtype``."""

    is_sparse = False

    def __init__(self, storage, dtype):
        self._untyped_storage = storage
        self.dtype = dtype

    @property
    def device(self):
        return self._untyped_storage.device

    def untyped(self):
        return self._untyped_storage

    def size(self) -> int:
        return len(self._untyped_storage)

    __len__ = size

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def tolist(self):
        return self._untyped_storage.data.tolist()

    def __getitem__(self, index):
        return self._untyped_storage.data[index].item()

    def __setitem__(self, index, value):
        self._untyped_storage.data[index] = value

    def __iter__(self):
        return iter(self.tolist())

    def _pickle_storage_type(self) -> str:
        return _LEGACY_NAMES[self.dtype.name]

    def __repr__(self) -> str:
        values = "".join(f"\n {value}" for value in self.tolist()) if len(self) else "\n "
        return (f"{values.lstrip(chr(10))}\n[torch.storage.TypedStorage(dtype=torch.{self.dtype.name}, "
                f"device={self.device}) of size {len(self)}]")

    __str__ = __repr__


def storage(tensor) -> TypedStorage:
    """``tensor.storage()``: the tensor's whole storage, typed (with torch's deprecation warning)."""
    _warn_typed_storage_removal()
    return TypedStorage(tensor._storage, tensor.dtype)


# the legacy class of each dtype's storage, as named in checkpoints
_LEGACY_NAMES = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
                 "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
                 "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage"}


class _LegacyStorage(TypedStorage):
    """``torch.FloatStorage`` and the others: a TypedStorage class fixed to one dtype."""

    dtype = None


def _legacy_class(name, dtype_name):
    return type(name, (_LegacyStorage,), {"dtype": getattr(dtypes, dtype_name), "__module__": "torch"})


LEGACY_CLASSES = {name: _legacy_class(name, dtype_name) for dtype_name, name in _LEGACY_NAMES.items()}


def _install():
    # tensor.storage() is a method in torch; installed here, beside the class it returns
    Tensor.storage = storage
