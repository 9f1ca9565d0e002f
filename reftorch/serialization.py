"""torch.save and torch.load, in torch's own file format: a file written by torch loads here, and
the reverse.

The file is a zip archive whose records all sit under one folder (the file's name without its
extension, or ``archive`` for a buffer):

    archive/data.pkl        the object, pickled (protocol 2); each tensor is a call
                            ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)``
                            and each storage a *persistent id*: ('storage', torch.FloatStorage,
                            '0', 'cpu', numel), not its bytes
    archive/data/0, 1, ...  each storage's bytes, once, however many tensors view it
    archive/byteorder       'little'; version, .format_version, .storage_alignment, an id

So views saved together still share one storage after loading. ``torch.load`` unpickles with
``weights_only=True`` by default (torch 2.6 on): only tensors, containers, numbers and the few
torch names a checkpoint needs may appear; anything else (a whole model's class) is refused with
torch's message unless the caller trusts the file (``weights_only=False``) or allow-lists it.
"""
from __future__ import annotations

import _compat_pickle
import collections
import contextlib
import io
import os
import pickle
import random
import re
import sys
import zipfile

import numpy as np

from . import dtypes
from ._utils import _rebuild_from_type_v2, _rebuild_tensor_v2, tensor_over
from .dispatch import device as _device
from .dispatch import kernel
from .nn.parameter import Parameter, _rebuild_parameter, _rebuild_parameter_with_state
from .storage import Storage
from .tensor import Size, Tensor
from .typed_storage import LEGACY_CLASSES, TypedStorage

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
           "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2
_STORAGE_ALIGNMENT = 64  # torch starts each storage's bytes at a multiple of 64 in the file

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


# -- the torch names a checkpoint uses, and what they are here -------------------------------
def _torch_names():
    """{'torch.FloatStorage': reftorch's class, 'torch.float32': reftorch.float32, ...}."""
    names = {f"torch.{name}": cls for name, cls in LEGACY_CLASSES.items()}
    names.update({f"torch.{d.name}": d for d in dtypes._ALL})
    names.update({
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": _device,
    })
    return names


# what weights_only lets through besides torch's names (torch's own allow-list)
_ALLOWED_BUILTINS = {"collections.OrderedDict": collections.OrderedDict, "collections.Counter": collections.Counter,
                     "builtins.set": set, "builtins.bytearray": bytearray, "builtins.complex": complex}
_user_safe_globals: list = []


def add_safe_globals(safe_globals) -> None:
    """Trust these classes and functions in ``load(weights_only=True)`` from now on."""
    _user_safe_globals.extend(safe_globals)


def clear_safe_globals() -> None:
    _user_safe_globals.clear()


def get_safe_globals() -> list:
    return list(_user_safe_globals)


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Within the block, ``load(weights_only=True)`` also trusts ``safe_globals``."""
    before = list(_user_safe_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_safe_globals[:] = before


def _user_allowed() -> dict:
    found = {}
    for entry in _user_safe_globals:
        obj, name = entry if isinstance(entry, tuple) else (entry, None)
        found[name or f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


# -- saving ---------------------------------------------------------------------------------
class _Pickler(pickle._Pickler):
    """Pickles reftorch's tensors under torch's names, storages as persistent ids.

    The pure-Python pickler, because its ``save_global`` can be told that reftorch's
    ``_rebuild_tensor_v2`` is written ``torch._utils _rebuild_tensor_v2`` in the file."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}  # key -> Storage, in the order first met
        self._keys = {}     # id(Storage) -> key
        self._names = {id(obj): name for name, obj in _torch_names().items()}

    def reducer_override(self, obj):
        if id(obj) in self._names:
            return "torch"  # a global under torch's name: see save_global
        if isinstance(obj, Parameter):
            state = _object_state(obj)
            data = obj.detach()
            if state:
                return _rebuild_parameter_with_state, (data, obj.requires_grad, collections.OrderedDict(), state)
            return _rebuild_parameter, (data, obj.requires_grad, collections.OrderedDict())
        if isinstance(obj, Tensor):
            return _tensor_reduction(obj)
        if isinstance(obj, Size):
            return Size, (tuple(obj),)
        return NotImplemented

    def persistent_id(self, obj):
        if not isinstance(obj, TypedStorage):
            return None
        storage = obj._untyped_storage
        key = self._keys.setdefault(id(storage), str(len(self._keys)))
        self.storages[key] = storage
        return ("storage", LEGACY_CLASSES[obj._pickle_storage_type()], key, _location_tag(storage.device),
                len(storage))

    def save_global(self, obj, name=None):
        torch_name = self._names.get(id(obj))
        if torch_name is None:
            qualname = getattr(obj, "__qualname__", "")
            if name is None and "<locals>" in qualname:
                raise AttributeError(f"Can't pickle local object {qualname!r}")
            try:
                return super().save_global(obj, name)
            except pickle.PicklingError as error:  # in the words of the C pickler torch uses
                found = re.fullmatch(r"(Can't pickle .*): it's not found as (.*)\.([^.]*)", str(error))
                if found is None:
                    raise
                raise pickle.PicklingError(f"{found[1]}: attribute lookup {found[3]} on {found[2]} failed") from None
        module, _, qualname = torch_name.rpartition(".")
        self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode())
        self.memoize(obj)


def _object_state(tensor) -> dict:
    """A tensor's Python attributes (``t.note = 1``), which torch keeps in the file (and a deep copy)
    too; reftorch's own bookkeeping kept there (hook tables, with a class default) is not one."""
    return {key: value for key, value in tensor.__dict__.items() if not hasattr(Tensor, key)}


def _tensor_reduction(t):
    args = (TypedStorage(t._storage, t.dtype), t._offset, tuple(t._shape), tuple(t._stride), t.requires_grad,
            collections.OrderedDict())
    state = _object_state(t)
    if type(t) is Tensor and not state:
        return _rebuild_tensor_v2, args
    return _rebuild_from_type_v2, (_rebuild_tensor_v2, type(t), args, state)


def _location_tag(d) -> str:
    return "cpu" if d.type == "cpu" else f"{d.type}:{d.index or 0}"


def _archive_name(f) -> str:
    if isinstance(f, (str, os.PathLike)):
        return os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    return "archive"


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:
    """Write ``obj`` (a state_dict, a tensor, a whole model, any picklable structure) to ``f``, a
    path or a binary file, in torch's zip format."""
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("reftorch writes torch's zip format only (the legacy format is not supported)")
    data = io.BytesIO()
    pickler = _Pickler(data, pickle_protocol)
    pickler.dump(obj)
    prefix = _archive_name(f) + "/"
    records = [("data.pkl", data.getvalue()), (".format_version", b"1"),
               (".storage_alignment", str(_STORAGE_ALIGNMENT).encode())]
    if not _disable_byteorder_record:
        records.append(("byteorder", sys.byteorder.encode()))
    for key in sorted(pickler.storages):
        records.append((f"data/{key}", _storage_bytes(pickler.storages[key])))
    records += [("version", b"3\n"), (".data/serialization_id", _serialization_id())]
    with _opened(f, "wb") as handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED) as archive:
        for name, payload in records:
            _write_aligned(archive, handle, prefix + name, payload)


def _storage_bytes(storage) -> bytes:
    # every device's storage keeps its numbers in a NumPy buffer (sim's memory is host memory)
    return np.ascontiguousarray(storage.data).astype(storage.data.dtype.newbyteorder("<")).tobytes()


def _serialization_id() -> bytes:
    return "".join(str(random.SystemRandom().randrange(10)) for _ in range(40)).encode()


def _write_aligned(archive, handle, name, payload):
    """One stored (uncompressed) record whose bytes start at a multiple of 64 in the file, as
    torch writes them: the local header's extra field pads up to there."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    header_end = handle.tell() + 30 + len(name.encode()) + 4
    padding = -header_end % _STORAGE_ALIGNMENT
    info.extra = b"FB" + padding.to_bytes(2, "little") + b"Z" * padding
    archive.writestr(info, payload)


@contextlib.contextmanager
def _opened(f, mode):
    if isinstance(f, (str, os.PathLike)) and "w" in mode:
        parent = os.path.dirname(os.fspath(f))
        if parent and not os.path.isdir(parent):  # torch's writer checks this before opening
            raise RuntimeError(f"Parent directory {parent} does not exist.")
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as handle:
            yield handle
    else:
        yield f


# -- copy.deepcopy ------------------------------------------------------------------------------
_NOT_A_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  "
    "If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, "
    "see https://github.com/pytorch/pytorch/pull/103001")


def _deepcopy_tensor(self, memo):
    """``copy.deepcopy(t)``: new memory, but tensors that shared a storage share the copy's (the
    memo keeps one copy per storage), with requires_grad, .grad and Python attributes copied."""
    if not self.is_leaf:
        raise RuntimeError(_NOT_A_LEAF)
    if id(self) in memo:
        return memo[id(self)]
    storage = memo.get(id(self._storage))
    if storage is None:
        storage = memo[id(self._storage)] = Storage(self._storage.data.copy(), self._storage.device)
        memo.setdefault(id(memo), []).append(self._storage)  # keep the key's object alive, as deepcopy does
    copy = tensor_over(storage, self.dtype, self._offset, self._shape, self._stride)
    if type(self) is not Tensor:
        copy = copy._alias_as(type(self))
    if self.requires_grad:
        copy.requires_grad_(True)
    if self._grad is not None:
        copy._grad = _deepcopy_tensor(self._grad, memo)
    state = _object_state(self)
    if state:
        import copy as copy_module
        copy.__dict__.update(copy_module.deepcopy(state, memo))
    memo[id(self)] = copy
    return copy


# installed here, beside the format it belongs to (tensor.py keeps metadata only)
Tensor.__deepcopy__ = _deepcopy_tensor


# -- loading --------------------------------------------------------------------------------
class _Unpickler(pickle.Unpickler):
    """Reads data.pkl: torch's names resolve to reftorch's, persistent ids to storages read
    from the archive, and with ``weights_only`` only allow-listed globals pass."""

    def __init__(self, file, archive, prefix, map_location, weights_only, **kwargs):
        super().__init__(file, **kwargs)
        self._archive, self._prefix = archive, prefix
        self._map_location, self._weights_only = map_location, weights_only
        self._loaded = {}  # key -> TypedStorage: tensors that shared a storage share it again
        self._byteorder = _read_optional(archive, prefix + "byteorder") or b"little"

    def find_class(self, module, name):
        # a protocol-2 file names builtins as Python 2 did (__builtin__.print)
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        full = f"{module}.{name}"
        known = _torch_names().get(full) or _ALLOWED_BUILTINS.get(full) or _user_allowed().get(full)
        if known is not None:
            return known
        if self._weights_only:
            shown = full
            if full.startswith("builtins"):  # torch prints a builtin without its module
                shown = full[len("builtins"):]
                shown = shown[1:] if shown.startswith(".") else "builtins" + shown
            raise pickle.UnpicklingError(
                f"Unsupported global: GLOBAL {shown} was not an allowed global by default. "
                f"Please use `torch.serialization.add_safe_globals([{shown}])` or the "
                f"`torch.serialization.safe_globals([{shown}])` context manager to allowlist this global "
                "if you trust this class/function.")
        if module == "torch" or module.startswith("torch."):
            module = "reftorch" + module[len("torch"):]
        return super().find_class(module, name)

    def persistent_load(self, saved_id):
        kind, storage_type, key, location, numel = saved_id
        if kind != "storage":
            raise pickle.UnpicklingError(f"Unknown saved id type: {kind}")
        if key not in self._loaded:
            dtype = storage_type.dtype
            raw = self._archive.read(f"{self._prefix}data/{key}")
            array = np.frombuffer(raw, dtype=dtype.numpy.newbyteorder(
                "<" if self._byteorder == b"little" else ">"), count=numel).astype(dtype.numpy)
            self._loaded[key] = TypedStorage(_restore(array, location, self._map_location), dtype)
        return self._loaded[key]


def _read_optional(archive, name):
    try:
        return archive.read(name)
    except KeyError:
        return None


def _restore(array, location, map_location) -> Storage:
    """A storage of ``array`` on the device ``map_location`` asks for (default: where it was)."""
    target = location
    if callable(map_location):
        moved = map_location(Storage(array, _device("cpu")), location)
        if moved is not None:
            return moved._untyped_storage if isinstance(moved, TypedStorage) else moved
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif map_location is not None:
        target = map_location
    d = _device(target)
    if d.type == "cuda":
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you "
            "are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
            "to map your storages to the CPU.")
    if d.type == "cpu":
        return Storage(array, _device("cpu"))
    return Storage(kernel("copy", d)(array), d)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read what ``save`` (reftorch's or torch's) wrote. ``weights_only`` defaults to True, as in
    torch 2.6 on: pass ``weights_only=False`` only for a file you trust (it can run code)."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    pickle_load_args.setdefault("encoding", "utf-8")
    with _opened(f, "rb") as handle:
        if not zipfile.is_zipfile(handle):
            raise RuntimeError("reftorch reads torch's zip format only (this file is in the legacy format, or "
                               "not a torch file)")
        handle.seek(0)
        with zipfile.ZipFile(handle) as archive:
            prefix = archive.namelist()[0].split("/")[0] + "/"
            data = io.BytesIO(archive.read(prefix + "data.pkl"))
            unpickler = _Unpickler(data, archive, prefix, map_location, weights_only, **pickle_load_args)
            if not weights_only:
                return unpickler.load()
            try:
                return unpickler.load()
            except pickle.UnpicklingError as error:
                raise pickle.UnpicklingError(_weights_only_message(str(error))) from None


def _weights_only_message(message: str) -> str:
    """torch's wording around an error of its weights-only unpickler."""
    if "was not an allowed global by default." in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
                "the recommended steps in the following error message.\n\tWeightsUnpickler error: "
                + message + _DOCS_MESSAGE)
    return (f"Weights only load failed. {UNSAFE_MESSAGE}\nPlease file an issue with the following so that we "
            "can make `weights_only=True` compatible with your use case: WeightsUnpickler error: \n\n"
            + message + _DOCS_MESSAGE)

