"""The Tensor: metadata (shape, strides, offset, dtype, device) over a Storage.

Nothing in this class computes. Every op is declared in functions/native_functions.py, and
codegen puts its method on this class (``x.add``, ``x + y``); what is here is the tensor's
own state: sizes and strides, the version counter, the autograd fields.
"""
from __future__ import annotations

import builtins
import warnings
import weakref
from collections import OrderedDict

import numpy as np

from . import _modes, dtypes
from ._formatting import tensor_repr
from .dispatch import cpu
from .dtypes import _cpp_type_name, _scalar_type_name  # noqa: F401  (the names torch's messages use)
from .storage import Storage, contiguous_strides, dense_layout
from .storage import is_contiguous as _is_contiguous

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)

_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "int32": "IntTensor",
               "int64": "LongTensor", "bool": "BoolTensor", "int16": "ShortTensor", "int8": "CharTensor",
               "uint8": "ByteTensor", "float16": "HalfTensor", "bfloat16": "BFloat16Tensor"}


_warned_float_of_requires_grad = False


class Tensor:
    __slots__ = (
        "_storage", "_np", "_shape", "_stride", "_offset", "dtype", "_device",
        "_requires_grad", "_grad", "grad_fn", "_output_nr", "_version_counter", "_base",
        "_accumulator", "_retains_grad", "_inference", "_fw_grad", "__weakref__", "__dict__",
    )

    def __new__(cls, *args, device=None):
        """``torch.Tensor(data)`` or ``torch.Tensor(*sizes)``: the legacy constructor, always the
        default float dtype (``torch.tensor`` infers the dtype and is the one to use)."""
        from .functions.creation import legacy_new  # deferred: the factories are two layers up
        return legacy_new(cls, None, args, device)

    # np.float64(2) * t and the like come to the tensor's operator, not to NumPy's (which would
    # turn the tensor into an array), as for torch
    __array_priority__ = 1000

    # -- construction (internal: users call reftorch.tensor / zeros / ...) -------------
    @staticmethod
    def _wrap(array: np.ndarray, device=cpu) -> "Tensor":
        """A new tensor that owns ``array`` (a fresh result, never someone else's memory)."""
        if type(array) is not np.ndarray:
            array = np.asarray(array)
        if array.flags.c_contiguous:  # (nearly every fresh result)
            flat, strides = array.reshape(-1), contiguous_strides(array.shape)
        else:
            layout = dense_layout(array)
            if layout is None:
                array = np.ascontiguousarray(array)
                layout = dense_layout(array)
            flat, strides = layout
        t = object.__new__(Tensor)
        t._storage = Storage(flat, device)
        t._np = array
        t._shape = array.shape
        t._stride = strides
        t._offset = 0
        t.dtype = dtypes._FROM_NUMPY[array.dtype]
        t._device = device
        t._init_autograd_state()
        return t

    @staticmethod
    def _view_of(base: "Tensor", shape, stride, offset, array=None, storage=None) -> "Tensor":
        """A tensor sharing ``base``'s storage (and version counter) with new geometry.
        ``array``: the same view as NumPy made it (``base._np.T``), when the caller has it;
        ``storage``: base's memory read as another dtype (``view(dtype)``)."""
        storage = base._storage if storage is None else storage
        t = object.__new__(Tensor)
        t._storage = storage
        if array is None:
            # an empty view may start at the very end of the storage (torch allows it); NumPy
            # checks the offset against the buffer, so an empty array starts at 0 instead
            np_offset = 0 if 0 in shape else offset * storage.data.itemsize
            array = np.ndarray(shape, dtype=storage.data.dtype, buffer=storage.data, offset=np_offset,
                               strides=tuple(s * storage.data.itemsize for s in stride))
        t._np = array
        t._shape = tuple(shape)
        t._stride = tuple(stride)
        t._offset = offset
        t.dtype = base.dtype if storage is base._storage else dtypes.from_numpy_dtype(storage.data.dtype)
        t._device = base._device
        t._init_autograd_state()
        t._version_counter = base._version_counter
        t._base = base if base._base is None else base._base
        t._inference = base._inference
        return t

    def _alias_as(self, cls) -> "Tensor":
        """A new object of class ``cls`` over the same storage, with a fresh autograd state
        (how a Parameter wraps the tensor it is given)."""
        t = object.__new__(cls)
        t._storage, t._np, t._shape, t._stride, t._offset = (
            self._storage, self._np, self._shape, self._stride, self._offset)
        t.dtype, t._device = self.dtype, self._device
        t._init_autograd_state()
        return t

    def _init_autograd_state(self):
        self._requires_grad = False
        self._grad = None
        self.grad_fn = None
        self._output_nr = 0
        self._version_counter = [0]  # a list so that views can share one counter
        self._base = None
        self._accumulator = None
        self._retains_grad = False
        self._inference = _modes.grad_mode.inference
        self._fw_grad = None  # the tangent, inside a forward-AD dual level (autograd/forward_ad.py)

    # -- metadata --------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._shape)
        return self._shape[_wrap_dim(dim, len(self._shape))]

    def stride(self, dim=None):
        if dim is None:
            return self._stride
        return self._stride[_wrap_dim(dim, len(self._shape))]

    def storage_offset(self) -> int:
        return self._offset

    def untyped_storage(self) -> Storage:
        return self._storage

    def is_set_to(self, tensor) -> bool:
        """Whether both tensors view the same memory in the same way (storage, offset, size, stride)."""
        return (self._storage is tensor._storage and self._offset == tensor._offset
                and self._shape == tensor._shape and self._stride == tensor._stride)

    def data_ptr(self) -> int:
        return self._storage.data_ptr() + self._offset * self.dtype.itemsize

    def dim(self) -> int:
        return len(self._shape)

    ndim = property(dim)

    def numel(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes the elements would take (numel * itemsize): an expanded tensor counts every
        element, though its storage holds fewer."""
        return self.numel() * self.dtype.itemsize

    def get_device(self) -> int:
        """The device index; -1 for a CPU tensor."""
        if self._device.type == "cpu":
            return -1
        return self._device.index or 0

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_contiguous(self) -> bool:
        return _is_contiguous(self._shape, self._stride)

    def _is_view(self) -> bool:
        return self._base is not None

    @property
    def _version(self) -> int:
        return self._version_counter[0]

    def _bump_version(self):
        """Every write into the tensor's memory (in-place ops, ``out=``) moves the counter on,
        for its views too: a saved tensor then knows it changed (autograd/graph.py)."""
        self._version_counter[0] += 1

    def is_inference(self) -> bool:
        return self._inference

    def type(self, dtype=None):
        if dtype is None:
            return f"torch.{_TYPE_NAMES[self.dtype.name]}"
        return self.to(dtype)

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __hash__(self) -> int:  # identity, as in torch: tensors can be dict keys and set members
        return id(self)

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._shape[0]))

    def __repr__(self) -> str:
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        # torch formats a plain 0-dim tensor as its number, even with no spec: f"{t}" == "1.0"
        if self.dim() == 0 and type(self) is Tensor:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return str(self)

    def _check_not_meta(self):
        if self._device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")

    def __bool__(self) -> bool:
        self._check_not_meta()
        if self.numel() != 1:
            raise RuntimeError(
                "Boolean value of Tensor with no values is ambiguous" if self.numel() == 0 else
                "Boolean value of Tensor with more than one value is ambiguous"
            )
        return builtins.bool(self._np.reshape(-1)[0])

    def _check_one_element(self):
        # float(t) and int(t) are Python's number protocol: ValueError, unlike t.item()
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")

    def __float__(self):
        self._check_not_meta()
        self._check_one_element()
        global _warned_float_of_requires_grad
        if self._requires_grad and not _warned_float_of_requires_grad:
            _warned_float_of_requires_grad = True  # torch says it once per process (TORCH_WARN_ONCE)
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first.",
                          UserWarning, stacklevel=2)
        return builtins.float(self.item())

    def __int__(self):
        self._check_one_element()
        return builtins.int(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self.item())

    # -- leaving reftorch: numbers and NumPy ----------------------------------------------
    def item(self):
        if _modes.vmap.randomness is not None:  # a number per slice cannot come out of vmap
            raise RuntimeError(
                "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                "calling .item() on a Tensor, please try to rewrite what you're doing with other "
                "operations. If error is occurring somewhere inside PyTorch internals, please file a "
                "bug report.")
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
            )
        self._check_not_meta()
        return self._np.reshape(-1)[0].item()

    def tolist(self):
        if self._device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self._np.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """Shares memory: a write on either side shows on the other."""
        if self.dtype is dtypes.bfloat16:  # NumPy has no bfloat16 of its own
            raise TypeError("Got unsupported ScalarType BFloat16")
        if self._device.type != "cpu":
            if force:
                return self.cpu().numpy()
            where = "meta" if self._device.type == "meta" else f"{self._device.type}:{self._device.index or 0}"
            raise TypeError(
                f"can't convert {where} device type tensor "
                "to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
            )
        if self.requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        return self._np

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    # -- autograd state ------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True):
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self._inference and not _modes.grad_mode.inference:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
            )
        if self.grad_fn is None:
            self._requires_grad = builtins.bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        # torch's checks, in torch's order: type, self, dtype, device, size
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_cpp_type_name(value.dtype)}' to a "
                    f"tensor with grad_dtype '{_scalar_type_name(self.dtype)}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                    "tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. "
                    "Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient "
                    "may break downstream systems that assume they match."
                )
            if value._device.type != self._device.type:
                raise RuntimeError(
                    f"attempting to assign a gradient with device type '{value._device.type}' to a "
                    f"tensor with device type '{self._device.type}'. Please ensure that the gradient "
                    "and the tensor are on the same device"
                )
            if tuple(value._shape) != self._shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._shape)}' to a tensor of "
                    f"size '{list(self._shape)}'. Please ensure that the gradient and the tensor are "
                    "the same size"
                )
        self._grad = value

    def retain_grad(self):
        if self.grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return  # a leaf keeps its grad anyway
        self._retains_grad = True
        node = self.grad_fn
        if node._retained is None:
            node._retained = {}
        node._retained[self._output_nr] = self

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Run the backward pass from this tensor (autograd/engine.py), adding into ``.grad``."""
        global _engine_backward
        if _engine_backward is None:
            from .autograd.engine import backward as _engine_backward  # deferred: the engine is three layers up
        _engine_backward(self, gradient, retain_graph, create_graph, inputs)

    _backward_hooks = None  # an OrderedDict once a hook is registered

    def register_hook(self, hook):
        """Call ``hook(grad)`` each time this tensor's gradient is computed; if the hook returns a
        tensor, that replaces the gradient. Returns a handle: ``handle.remove()`` takes it off.

        >>> h = y.register_hook(lambda g: print(g))   # watch the gradient flowing into y
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._backward_hooks is None:
            self._backward_hooks = OrderedDict()
            if self.grad_fn is not None:  # a leaf's hooks are found through AccumulateGrad
                self.grad_fn._register_hook_dict(self)
        handle = _removable_handle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    _post_accumulate_grad_hooks = None  # an OrderedDict once a hook is registered

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` after backward has added into this leaf's ``.grad`` (an
        optimizer can step a parameter there, before the rest of backward is done)."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = OrderedDict()
        handle = _removable_handle(self._post_accumulate_grad_hooks)
        self._post_accumulate_grad_hooks[handle.id] = hook
        return handle

    @property
    def data(self) -> "Tensor":
        """The same numbers, outside the graph (an alias; prefer ``detach()``)."""
        out = Tensor._view_of(self, self._shape, self._stride, self._offset)
        out._version_counter = [0]  # .data does not share the version counter
        out._base = None
        return out

    @data.setter
    def data(self, other: "Tensor"):
        self._storage = other._storage
        self._np = other._np
        self._shape, self._stride, self._offset = other._shape, other._stride, other._offset
        self.dtype = other.dtype
        self._device = other._device

    def resize_(self, *sizes, memory_format=None):
        """Give the tensor a new shape in place (row-major); new memory when it needs more than
        its storage holds, the old values kept at the front."""
        shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)
        if any(n < 0 for n in shape):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        needed = self._offset + int(np.prod(shape, dtype=np.int64))
        if needed > len(self._storage):
            data = np.zeros(needed, dtype=self._storage.data.dtype)
            data[:len(self._storage)] = self._storage.data
            self._storage = Storage(data, self._device)
        stride = contiguous_strides(shape)
        itemsize = self._storage.data.itemsize
        self._np = np.ndarray(shape, dtype=self._storage.data.dtype, buffer=self._storage.data,
                              offset=self._offset * itemsize if int(np.prod(shape)) else 0,
                              strides=tuple(s * itemsize for s in stride))
        self._shape, self._stride = shape, stride
        return self

    # -- devices -------------------------------------------------------------------------
    @property
    def is_meta(self) -> bool:
        return self._device.type == "meta"

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)


class Size(tuple):
    """torch.Size: a tuple that prints as ``torch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


def _wrap_dim(dim: int, ndim: int) -> int:
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-size}, {size - 1}], but got {dim})"
        )
    return dim + size if dim < 0 else dim


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


_engine_backward = None  # autograd.engine.backward, found on the first call


def _removable_handle(hooks):
    """The handle ``register_hook`` returns (torch.utils.hooks.RemovableHandle)."""
    from .utils.hooks import RemovableHandle  # deferred: utils is the top layer, and the class is its
    return RemovableHandle(hooks)
