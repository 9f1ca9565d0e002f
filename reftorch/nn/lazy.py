"""Lazy modules: layers whose input size is read off the first input (``LazyLinear(10)`` learns
``in_features`` from ``x.shape[-1]`` on its first call).

Until then their parameters are ``UninitializedParameter``s, holding no numbers. The first
forward gives each its shape, initialises it as the ordinary layer would, and turns the module
into that layer (``type(m)`` becomes ``Linear``). The parameter objects stay the same, so an
optimizer made before the first forward still holds them.
"""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..functions import empty
from ..tensor import Tensor
from .batchnorm import BatchNorm1d, BatchNorm2d
from .layers import Conv2d, Linear, _pair
from .module import Module
from .parameter import Parameter


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet: ``materialize(shape)`` gives it memory."""

    cls_to_become = Parameter
    _uninitialized = True

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return super().__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def materialize(self, shape, device=None, dtype=None):
        self.data = empty(shape, device=device or self.device, dtype=dtype or self.dtype)
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return "<UninitializedParameter>"

    __str__ = __repr__


class UninitializedBuffer(Tensor):
    """The buffer counterpart (a lazy BatchNorm's running statistics)."""

    _uninitialized = True

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        return empty(0, device=device, dtype=dtype)._alias_as(cls)

    def materialize(self, shape, device=None, dtype=None):
        self.data = empty(shape, device=device or self.device, dtype=dtype or self.dtype)
        self.__class__ = Tensor

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"


class LazyModuleMixin:
    """The first forward: ``initialize_parameters(*args)``, then become ``cls_to_become``."""

    cls_to_become = None

    def _start_lazy(self):
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)

    def has_uninitialized_params(self) -> bool:
        return any(isinstance(t, (UninitializedParameter, UninitializedBuffer))
                   for t in list(self._parameters.values()) + list(self._buffers.values()))

    @staticmethod
    def _infer_parameters(module, args):
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def reset_parameters(self):
        if not self.has_uninitialized_params():
            super().reset_parameters()


class LazyLinear(LazyModuleMixin, Linear):
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features, self.out_features = 0, out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self._start_lazy()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # loaded from a state_dict before the first call: check, then record
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class LazyConv2d(LazyModuleMixin, Conv2d):
    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        self._configure(out_channels, kernel_size, stride, padding, dilation, groups, padding_mode)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self._start_lazy()

    def _configure(self, out_channels, kernel_size, stride, padding, dilation, groups, padding_mode):
        Module.__init__(self)
        self.in_channels, self.out_channels = 0, out_channels
        self.kernel_size, self.stride, self.dilation = _pair(kernel_size), _pair(stride), _pair(dilation)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.groups, self.padding_mode = groups, padding_mode
        self.transposed, self.output_padding = False, (0, 0)

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_channels = input.shape[0 if input.dim() == 3 else 1]
                if self.in_channels % self.groups != 0:
                    raise ValueError("in_channels must be divisible by groups")
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        self.cls_to_become.__init__(self, 0, eps, momentum, affine, track_running_stats, device=device, dtype=dtype)
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
        self._start_lazy()

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                for name in ("weight", "bias"):
                    if self.affine:
                        getattr(self, name).materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    cls_to_become = BatchNorm2d
