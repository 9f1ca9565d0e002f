"""softmax and log_softmax: exponentials normalised over one dim (the losses build on them).

relu, sigmoid and tanh are element-wise, in unary.py.
"""
from __future__ import annotations

from ..autograd.graph import Node
from ..dispatch import kernel
from ..tensor import _wrap_dim
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _grad_state, _in_one_kernel, _needs_grad, _numpy_names, _record, _wrap
from .copies import to
from .unary import exp


class LogSoftmaxBackward0(Node):
    def backward(self, grad):
        (result,) = self.saved_values
        if not _grad_state.grad_enabled:
            return (_in_one_kernel("log_softmax_backward", (grad, result), self._saved_dim),)
        return (grad - exp(result) * grad.sum(self._saved_dim, keepdim=True),)


class SoftmaxBackward0(Node):
    def backward(self, grad):
        (result,) = self.saved_values
        return (result * (grad - (grad * result).sum(self._saved_dim, keepdim=True)),)


def _softmax_input(input, dim, dtype, name):
    """``dtype`` converts first (torch's way to softmax integers); the kernels want floats."""
    if dtype is not None:
        input = to(input, dtype)
    d = _wrap_dim(dim, input.dim())
    if not input.dtype.is_floating_point:
        where = "lastdim_kernel_impl" if d == input.dim() - 1 or input.dim() == 0 else "kernel_impl"
        raise NotImplementedError(f"\"{name}_{where}\" not implemented for '{_scalar_name(input.dtype)}'")
    return input, d


@_numpy_names
def log_softmax(input, dim, dtype=None):
    input, d = _softmax_input(input, dim, dtype, "log_softmax")
    out = _wrap(kernel("log_softmax", input._device)(input._np, d), input._device)
    if _needs_grad(input):
        node = LogSoftmaxBackward0()
        node._saved_dim = d
        node.save(output=out)
        _record(node, (input,), out)
    return out


# forward mode: d log_softmax(x) = dx - sum(softmax(x) dx)
log_softmax.jvp = lambda t, out, input, dim, dtype=None: t(input) - (out.exp() * t(input)).sum(dim, keepdim=True)


@_numpy_names
def softmax(input, dim, dtype=None):
    input, d = _softmax_input(input, dim, dtype, "softmax")
    out = _wrap(kernel("softmax", input._device)(input._np, d), input._device)
    if _needs_grad(input):
        node = SoftmaxBackward0()
        node._saved_dim = d
        node.save(output=out)
        _record(node, (input,), out)
    return out


softmax.jvp = lambda t, out, input, dim, dtype=None: out * (t(input) - (out * t(input)).sum(dim, keepdim=True))
