"""Convolution, pooling and padding, built on strided views (im2col without the copy).

A 2-D convolution slides a (kH, kW) kernel over an image. Every window it looks at is
already in memory: ``as_strided`` lays them out as a view of shape (N, C, H_out, W_out, kH,
kW) whose strides step ``stride`` pixels between windows and ``dilation`` pixels inside one.
No pixel is copied (the "im2col" matrix is a view); one tensor contraction with the weight
(O, C, kH, kW) over (C, kH, kW) gives every output at once. Max and average pooling are a
reduction over the last two dims of the same view. Backward goes the other way ("col2im"):
each window's gradient is added back onto the pixels it read, overlapping windows adding up.

torch records one node per op here (ConvolutionBackward0, MaxPool2DWithIndicesBackward0, ...),
so each op computes on NumPy arrays and its node carries the backward formula.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from ..tensor import _scalar_type_name as _scalar_name
from ._support import _warn_once, _wrap, check_not_double
from .codegen import ops


def _pair(value):
    if isinstance(value, (tuple, list)):
        return tuple(builtins.int(v) for v in value) if len(value) == 2 else (builtins.int(value[0]),) * 2
    return (builtins.int(value), builtins.int(value))


def windows(array, kernel, stride=(1, 1), dilation=(1, 1)):
    """Every (kH, kW) window of an (N, C, H, W) array, as a view (N, C, H_out, W_out, kH, kW).

    Window (i, j) starts at pixel (i * stride, j * stride); its element (a, b) is pixel
    (i * stride + a * dilation, j * stride + b * dilation). Nothing is copied."""
    n, c, h, w = array.shape
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    out_h, out_w = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    s_n, s_c, s_h, s_w = array.strides
    return np.lib.stride_tricks.as_strided(
        array, (n, c, out_h, out_w, kh, kw), (s_n, s_c, s_h * sh, s_w * sw, s_h * dh, s_w * dw),
        writeable=False)


def _add_windows_back(grad_windows, shape, stride, dilation):
    """col2im: the sum, for each pixel, of the gradients of every window element that read it."""
    out = np.zeros(shape, dtype=grad_windows.dtype)
    _, _, out_h, out_w, kh, kw = grad_windows.shape
    (sh, sw), (dh, dw) = stride, dilation
    for a in range(kh):  # one strided slice per kernel position: windows that overlap add up
        for b in range(kw):
            out[:, :, a * dh: a * dh + sh * (out_h - 1) + 1: sh,
                b * dw: b * dw + sw * (out_w - 1) + 1: sw] += grad_windows[:, :, :, :, a, b]
    return out


def _padded(array, padding, value=0.0):
    ph, pw = padding
    if not ph and not pw:
        return array
    return np.pad(array, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=value)


# -- convolution ------------------------------------------------------------------------
def _check_conv(input, weight, bias, groups):
    if input.dim() != 4:
        raise RuntimeError(
            f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: {list(input.shape)}")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input.dtype)} but found {_scalar_name(weight.dtype)}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_type_name(input)}) and bias type ({_type_name(bias)}) should be the same")
    if input.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(input.shape)} "
            f"to have {weight.shape[1] * groups} channels, but got {input.shape[1]} channels instead")


def _type_name(t):
    return {"float32": "float", "float64": "double"}.get(t.dtype.name, t.dtype.name)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation of an (N, C, H, W) input with an (O, C / groups, kH, kW) weight
    (a 3-D input is one unbatched image; ``padding`` may be ``'valid'`` or ``'same'``)."""
    unbatched = input.dim() == 3
    if unbatched:
        input = ops.unsqueeze(input, 0)
    stride, dilation = _pair(stride), _pair(dilation)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if stride != (1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            input, padding = _same_padding(input, weight, dilation)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    out = ops.convolution(input, weight, bias, stride, _pair(padding), dilation, False, (0, 0), groups)
    return ops.squeeze(out, 0) if unbatched else out


def _same_padding(input, weight, dilation):
    """padding='same': d * (k - 1) in all, half on each side; an odd total puts the extra
    pixel on the right, which the convolution's symmetric padding cannot: torch pads the
    input by it first (constant_pad_nd)."""
    totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    left = tuple(t // 2 for t in totals)
    extra = [t - 2 * (t // 2) for t in totals]
    if not builtins.any(extra):
        return input, left
    _warn_once("conv same", "Using padding='same' with even kernel lengths and odd dilation may require a "
                            "zero-padded copy of the input be created")
    return ops.constant_pad_nd(input, (0, extra[1], 0, extra[0]), 0), left


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """The convolution itself: windows of the padded input (im2col) times the kernel."""
    if transposed:
        raise NotImplementedError("reftorch: transposed convolution is not implemented")
    _check_conv(input, weight, bias, groups)
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    xp = _padded(input._np, padding)
    o, c_per_group = weight.shape[0], weight.shape[1]
    kernel = tuple(weight.shape[2:])
    reach = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel))  # the dilated kernel's extent
    if xp.shape[2] < reach[0] or xp.shape[3] < reach[1]:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({xp.shape[2]} x {xp.shape[3]}). Kernel size: "
            f"({reach[0]} x {reach[1]}). Kernel size can't be greater than actual input size")
    pieces = []
    o_per_group = o // groups
    for k in range(groups):
        cols = windows(xp[:, k * c_per_group:(k + 1) * c_per_group], kernel, stride, dilation)
        # (N, C, H', W', kH, kW) . (O, C, kH, kW) over C, kH, kW -> (N, H', W', O)
        pieces.append(np.tensordot(cols, weight._np[k * o_per_group:(k + 1) * o_per_group],
                                   axes=([1, 4, 5], [1, 2, 3])))
    values = np.concatenate(pieces, axis=3) if groups > 1 else pieces[0]
    if bias is not None:
        values = values + bias._np
    return _wrap(np.ascontiguousarray(values.transpose(0, 3, 1, 2)), input._device)


def convolution_backward(grad, input, weight, bias_sizes, stride, padding, dilation, groups, grad_input_mask):
    """grad_input: each output's gradient times the kernel, added back over the windows
    (col2im); grad_weight: each kernel weight times the pixels it met, summed over windows;
    grad_bias (``bias_sizes`` is None without a bias): the gradient summed over batch and
    positions."""
    check_not_double(grad, "ConvolutionBackward0", reads_inputs=True)
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    g = grad._np
    xp = _padded(input._np, padding)
    o, c_per_group = weight._np.shape[:2]
    o_per_group = o // groups
    grad_input = np.zeros(xp.shape, dtype=g.dtype)
    grad_weight = np.zeros(weight._np.shape, dtype=g.dtype)
    for k in range(groups):
        chans, outs = slice(k * c_per_group, (k + 1) * c_per_group), slice(k * o_per_group, (k + 1) * o_per_group)
        cols = windows(xp[:, chans], weight._np.shape[2:], stride, dilation)
        g_k = g[:, outs]
        grad_weight[outs] = np.tensordot(g_k, cols, axes=([0, 2, 3], [0, 2, 3]))
        grad_cols = np.tensordot(g_k, weight._np[outs], axes=([1], [0])).transpose(0, 3, 1, 2, 4, 5)
        grad_input[:, chans] = _add_windows_back(grad_cols, (xp.shape[0], c_per_group) + xp.shape[2:],
                                                 stride, dilation)
    ph, pw = padding
    grad_input = grad_input[:, :, ph: grad_input.shape[2] - ph, pw: grad_input.shape[3] - pw]
    return (_wrap(np.ascontiguousarray(grad_input), grad._device), _wrap(grad_weight, grad._device),
            _wrap(g.sum(axis=(0, 2, 3)), grad._device) if grad_input_mask[2] and bias_sizes is not None else None)


def convolution_jvp(input_t, weight_t, bias_t, input, weight, stride, padding, dilation, groups):
    # bilinear in (input, weight): d conv(x, w) = conv(dx, w) + conv(x, dw) (+ db)
    tangent = ops.convolution(input_t, weight, None, stride, padding, dilation, False, (0, 0), groups) + \
        ops.convolution(input, weight_t, None, stride, padding, dilation, False, (0, 0), groups)
    return tangent + bias_t.reshape(-1, 1, 1) if isinstance(bias_t, type(input)) else tangent


# -- pooling --------------------------------------------------------------------------------
def _pool_out_size(size, kernel, stride, padding, dilation, ceil_mode):
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + padding:  # the last window must start inside
        out -= 1
    return out


def _pool_geometry(input, kernel_size, stride, padding, dilation, ceil_mode):
    kernel = _pair(kernel_size)
    stride = kernel if stride is None or stride == [] or stride == () else _pair(stride)
    padding, dilation = _pair(padding), _pair(dilation)
    for p, k, d in zip(padding, kernel, dilation):  # the first dim that fails (height, then width)
        if p * 2 > k:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    out = tuple(_pool_out_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
                zip(input.shape[-2:], kernel, stride, padding, dilation))
    if builtins.any(n <= 0 for n in out):
        raise RuntimeError(
            f"Given input size: ({'x'.join(str(n) for n in input.shape[-3:])}). Calculated output size: "
            f"({input.shape[-3]}x{out[0]}x{out[1]}). Output size is too small")
    return kernel, stride, padding, dilation, out


def _padded_for_pooling(array, padding, out, kernel, stride, dilation, value):
    """Padded on every side by ``padding``, and further on the bottom/right when ceil_mode's
    last window reaches past the input."""
    need = [(o - 1) * s + d * (k - 1) + 1 for o, k, s, d in zip(out, kernel, stride, dilation)]
    extra = [builtins.max(0, n - (size + 2 * p)) for n, size, p in zip(need, array.shape[-2:], padding)]
    return np.pad(array, ((0, 0),) * (array.ndim - 2) + tuple((p, p + e) for p, e in zip(padding, extra)),
                  constant_values=value)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The maximum of every window (padding counts as -inf); with ``return_indices``, where
    in the (H, W) plane each maximum was, as a flat index."""
    values, indices = ops.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (values, indices) if return_indices else values


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """The maximum of every window, and where in the (H, W) plane it was, as a flat index."""
    if input.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    kernel, stride, padding, dilation, out = _pool_geometry(input, kernel_size, stride, padding,
                                                            dilation, ceil_mode)
    batched = input._np if input.dim() == 4 else input._np[None]
    xp = _padded_for_pooling(batched, padding, out, kernel, stride, dilation, -np.inf)
    view = windows(xp, kernel, stride, dilation)[:, :, :out[0], :out[1]]
    flat = view.reshape(view.shape[:4] + (-1,))
    where = flat.argmax(axis=-1)  # the first of equal maxima, as torch's CPU kernel
    values = np.take_along_axis(flat, where[..., None], axis=-1)[..., 0]
    # the flat index in the unpadded input of the pixel each maximum came from
    a, b = np.divmod(where, kernel[1])
    rows = np.arange(out[0])[:, None] * stride[0] + a * dilation[0] - padding[0]
    cols = np.arange(out[1])[None, :] * stride[1] + b * dilation[1] - padding[1]
    index = rows * input.shape[-1] + cols
    if input.dim() == 3:
        values, index = values[0], index[0]
    out_t = _wrap(np.ascontiguousarray(values.astype(input._np.dtype)), input._device)
    return out_t, _wrap(np.ascontiguousarray(index.astype(np.int64)), input._device)


def max_pool2d_with_indices_backward(grad, self, indices):
    """Each window's gradient goes to the pixel that was its maximum (the saved index)."""
    check_not_double(grad, "MaxPool2DWithIndicesBackward0")
    out = np.zeros(self._np.shape, dtype=grad._np.dtype)
    flat = out.reshape(out.shape[:-2] + (-1,))
    g = grad._np.reshape(grad._np.shape[:-2] + (-1,))
    i = indices._np.reshape(indices._np.shape[:-2] + (-1,))
    lead = np.indices(i.shape, sparse=True)[:-1]
    np.add.at(flat, (*lead, i), g)
    return _wrap(out, grad._device)


def max_pool2d_jvp(self_t, indices):
    flat = self_t.reshape(self_t.shape[:-2] + (-1,))
    return flat.gather(-1, indices.reshape(indices.shape[:-2] + (-1,))).reshape(indices.shape)


# -- 1-d pooling: torch runs it as the 2-d op on an (N, C, 1, L) view, so the graph shows
# UnsqueezeBackward0 -> MaxPool2DWithIndicesBackward0 / AvgPool2DBackward0 -> SqueezeBackward1
def _single(value, name, op, parser=True):
    """One int from an int or a one-int list; ``[]`` (stride's default) is None. A longer list:
    Python's argument parser refuses it, or for max_pool1d torch's own ``check1d``."""
    if isinstance(value, (tuple, list)):
        if len(value) == 0 and name == "stride":
            return None
        if len(value) != 1:
            raise RuntimeError(f"{op}() argument '{name}' should contain one int (got {len(value)})" if parser else
                               f"{op}() {name} must be an int, list of ints or tuple of ints of size 1 "
                               f"but got size {len(value)}")
        value = value[0]
    return builtins.int(value)


def _pool1d_arguments(op, kernel_size, stride, padding, dilation=1, parser=True):
    kernel = _single(kernel_size, "kernel_size", op, parser)
    step = None if stride is None else _single(stride, "stride", op, parser)
    return (kernel, kernel if step is None else step, _single(padding, "padding", op, parser),
            _single(dilation, "dilation", op, parser))


def _check_pool1d_dims(input, op):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {op})")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    _check_pool1d_dims(input, "max_pool1d")
    kernel, stride, padding, dilation = _pool1d_arguments("max_pool1d", kernel_size, stride, padding, dilation)
    values, indices = ops.max_pool2d_with_indices(ops.unsqueeze(input, -2), [1, kernel], [1, stride],
                                                  [0, padding], [1, dilation], ceil_mode)
    return ops.squeeze(values, -2), ops.squeeze(indices, -2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """torch checks the arguments itself here (then, for autograd, takes max_pool1d_with_indices)."""
    # (a 3-D input may have an empty batch, nothing else may be empty)
    if input.dim() not in (2, 3) or builtins.any(n == 0 for n in input.shape[-2:]):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{list(input.shape)}")
    kernel, step, pad, dil = _pool1d_arguments("max_pool1d", kernel_size, stride, padding, dilation, parser=False)
    for name, value in (("kernel_size", kernel), ("stride", step), ("dilation", dil)):
        if value <= 0:
            raise RuntimeError(f"max_pool1d() {name} must be greater than zero, but got {value}")
    if pad < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {pad}")
    if pad > kernel // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={pad} and kernel_size={kernel}")
    out = _pool_out_size(input.shape[-1], kernel, step, pad, dil, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    return ops.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    _check_pool1d_dims(input, "avg_pool1d")
    kernel, stride, padding, _ = _pool1d_arguments("avg_pool1d", kernel_size, stride, padding)
    out = ops.avg_pool2d(ops.unsqueeze(input, -2), [1, kernel], [1, stride], [0, padding], ceil_mode,
                         count_include_pad)
    return ops.squeeze(out, -2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean of every window; padding counts in the mean unless ``count_include_pad=False``."""
    if input.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    kernel, stride, padding, _, out = _pool_geometry(input, kernel_size, stride, padding, 1, ceil_mode)
    batched = input._np if input.dim() == 4 else input._np[None]
    xp = _padded_for_pooling(batched, padding, out, kernel, stride, (1, 1), 0)
    view = windows(xp, kernel, stride)[:, :, :out[0], :out[1]]
    total = view.sum(axis=(-2, -1), dtype=np.float64 if batched.dtype == np.float64 else np.float32)
    divisor = _pool_divisor(input.shape[-2:], kernel, stride, padding, out, count_include_pad, divisor_override)
    values = (total / divisor).astype(input._np.dtype)
    return _wrap(np.ascontiguousarray(values if input.dim() == 4 else values[0]), input._device)


def avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Each window's gradient, divided by what the window averaged over, added back onto the
    pixels it covered."""
    check_not_double(grad, "AvgPool2DBackward0")
    kernel, stride, padding, _, out = _pool_geometry(self, kernel_size, stride, padding, 1, ceil_mode)
    shape = tuple(self.shape)
    batched = self._np if self.dim() == 4 else self._np[None]
    padded_shape = _padded_for_pooling(batched[:1, :1], padding, out, kernel, stride, (1, 1), 0).shape[2:]
    divisor = _pool_divisor(shape[-2:], kernel, stride, padding, out, count_include_pad, divisor_override)
    g = grad._np if len(shape) == 4 else grad._np[None]
    per_element = (g / divisor)[..., None, None] * np.ones(kernel, dtype=g.dtype)
    full = _add_windows_back(per_element, (g.shape[0], g.shape[1]) + padded_shape, stride, (1, 1))
    ph, pw = padding
    grad_input = full[:, :, ph: ph + shape[-2], pw: pw + shape[-1]]
    return _wrap(np.ascontiguousarray(grad_input.reshape(shape)), grad._device)


def _pool_divisor(size, kernel, stride, padding, out, count_include_pad, divisor_override):
    """What each window's sum is divided by: the kernel's area, or the part of it over the
    (padded, or unpadded) input, window by window."""
    if divisor_override:
        return divisor_override
    counts = []
    for n, k, s, p, o in zip(size, kernel, stride, padding, out):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        counts.append(end - start)
    return (counts[0][:, None] * counts[1][None, :]).astype(np.float64)


# -- padding --------------------------------------------------------------------------------
def _pad_pairs(pad, ndim):
    """torch's ``pad`` runs from the last dim backwards: (left, right, top, bottom, ...)."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension "
                           f"but got padding length {len(pad)} and input of dimension {ndim}")
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (builtins.int(pad[2 * i]), builtins.int(pad[2 * i + 1]))
    return pairs


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims: ``pad=(1, 1)`` adds one column on each side of the
    last dim. ``mode``: 'constant' (``value``, default 0), 'reflect', 'replicate', 'circular'."""
    pairs = _pad_pairs(pad, input.dim())
    if mode == "constant":
        return ops.constant_pad_nd(input, pad, 0 if value is None else value)
    if value:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    dims = len(pad) // 2
    if input.dim() not in (dims + 1, dims + 2):  # a batch dim and a channel dim, or only channels
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "circular":
        return _pad_circular(input, pairs)
    name = {"reflect": "reflection", "replicate": "replication"}[mode]
    return getattr(ops, f"{name}_pad{dims}d")(input, tuple(pad))


def constant_pad_nd(input, pad, value=0):
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    pairs = _pad_pairs(pad, input.dim())
    grown = [(builtins.max(b, 0), builtins.max(a, 0)) for b, a in pairs]
    cropped = tuple(slice(-b if b < 0 else None, a if a < 0 else None) for b, a in pairs)
    return _wrap(np.pad(input._np[cropped], grown, constant_values=value), input._device)


def _copy_index(input, padding, mode):
    """Which input pixel each output pixel copies, found by padding the pixels' own indices."""
    pairs = _pad_pairs(padding, input.dim())
    dims = len(padding) // 2
    lead = tuple(input.shape[:input.dim() - dims])
    plane = tuple(input.shape[input.dim() - dims:])
    positions = np.arange(math.prod(plane)).reshape(plane)
    return np.pad(positions, pairs[input.dim() - dims:], mode=mode), lead


def folded_pad(mode, dims):
    """reflect / replicate of the last ``dims`` dims: every output pixel a copy of an input pixel."""
    def pad_nd(input, padding):
        if len(padding) != 2 * dims:
            raise RuntimeError(f"padding size is expected to be {2 * dims}, but got: {len(padding)}")
        if mode == "reflect":  # a reflection must stay inside the input
            for i in range(dims):
                d, left, right = input.dim() - 1 - i, padding[2 * i], padding[2 * i + 1]
                if left >= input.shape[d] or right >= input.shape[d]:
                    raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                                       f"input dimension, but got: padding ({left}, {right}) at dimension {d} of "
                                       f"input {list(input.shape)}")
        index, lead = _copy_index(input, padding, mode)
        values = input._np.reshape(lead + (-1,))[..., index.reshape(-1)].reshape(lead + index.shape)
        return _wrap(np.ascontiguousarray(values), input._device)
    pad_nd.__name__ = pad_nd.__qualname__ = {"reflect": "reflection_pad", "edge": "replication_pad"}[mode] + f"{dims}d"
    return pad_nd


def folded_pad_backward(mode):
    """The padded pixels are copies, so their gradients add onto the pixels they copied."""
    def backward(grad, self, padding):
        check_not_double(grad, "the backward of a reflect or replicate pad")
        index, lead = _copy_index(self, padding, mode)
        out = np.zeros(tuple(self.shape), dtype=grad._np.dtype)
        flat = out.reshape(lead + (-1,))
        np.add.at(flat, (..., index.reshape(-1)), grad._np.reshape(lead + (-1,)))
        return _wrap(out, grad._device)
    return backward


def constant_pad_backward(grad, pad):
    """The gradient of the input's part of the output; where the padding was negative (a
    crop), the cropped part gets zeros."""
    pairs = _pad_pairs(pad, grad.dim())
    for d, (before, after) in enumerate(pairs):
        if before > 0 or after > 0:
            start = builtins.max(before, 0)
            grad = grad.narrow(d, start, grad.shape[d] - start - builtins.max(after, 0))
    for d, (before, after) in enumerate(pairs):
        parts = []
        if before < 0:
            parts.append(ops.zeros(grad.shape[:d] + (-before,) + grad.shape[d + 1:], dtype=grad.dtype, device=grad.device))
        parts.append(grad)
        if after < 0:
            parts.append(ops.zeros(grad.shape[:d] + (-after,) + grad.shape[d + 1:], dtype=grad.dtype, device=grad.device))
        grad = ops.cat(parts, d) if len(parts) > 1 else grad
    return grad


def _pad_circular(input, pairs):
    """Circular padding as torch builds it: an empty output, the input copied into its middle,
    then each padded border copied from the opposite side (in place: CopySlices)."""
    if builtins.any(b < 0 or a < 0 for b, a in pairs):
        raise NotImplementedError("reftorch: circular padding with negative sizes is not implemented")
    shape = tuple(n + b + a for n, (b, a) in zip(input.shape, pairs))
    out = ops.empty(shape, dtype=input.dtype, device=input.device)
    middle = out
    for d, (b, a) in enumerate(pairs):
        middle = middle.narrow(d, b, input.shape[d])
    middle.copy_(input)
    for d in range(input.dim() - 1, -1, -1):
        b, a = pairs[d]
        size = input.shape[d]
        if b:
            out.narrow(d, 0, b).copy_(out.narrow(d, size, b))
        if a:
            out.narrow(d, b + size, a).copy_(out.narrow(d, b, a))
    return out
