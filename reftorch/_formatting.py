"""``repr`` of a tensor, laid out the way torch prints it.

One formatter decides, from all the values shown, between integer style (``1.``), fixed
(``1.5000``) and scientific (``1.0000e-05``) notation, and pads every element to one
width; rows wrap at 80 columns and tensors over 1000 elements are summarised with ``...``.
"""
from __future__ import annotations

import math

import numpy as np

from . import dtypes

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3
SCI_MODE = None  # None: chosen from the values; True or False: always or never scientific

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, float("inf"), 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """How tensors print: digits after the point, how many elements before ``...``
    summarising, how many kept at each edge, the line width; ``profile`` sets all four
    ('default', 'short', 'full'). ``sci_mode`` is set every call (None: automatic)."""
    global PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH, SCI_MODE
    if profile is not None:
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = _PROFILES[profile]
    if precision is not None:
        PRECISION = precision
    if threshold is not None:
        THRESHOLD = threshold
    if edgeitems is not None:
        EDGEITEMS = edgeitems
    if linewidth is not None:
        LINEWIDTH = linewidth
    SCI_MODE = sci_mode


def get_printoptions() -> dict:
    return {"precision": PRECISION, "threshold": THRESHOLD, "edgeitems": EDGEITEMS,
            "linewidth": LINEWIDTH, "sci_mode": SCI_MODE}


class _Formatter:
    """Chooses the notation and the column width from the nonzero finite values only (as
    torch does): zeros, nan and inf are printed in that notation but never widen a column."""

    def __init__(self, values: np.ndarray):
        self.kind = values.dtype.kind
        self.sci = False
        self.int_mode = True
        self.width = 1
        flat = values.reshape(-1)
        if self.kind != "f":
            self.width = max((len(self.format(v)) for v in flat), default=1)
            return
        shown = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if not shown.size:
            return
        big, small = np.abs(shown).max(), np.abs(shown).min()
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        self.sci = big / small > 1000.0 or big > 1.0e8 or small < 1.0e-4 if SCI_MODE is None else SCI_MODE
        self.width = max(len(self.format(v)) for v in shown)

    def format(self, value) -> str:
        if self.kind == "b":
            return str(bool(value))
        if self.kind in "iu":
            return str(int(value))
        value = float(value)
        if self.sci:
            return f"{value:.{PRECISION}e}"
        if self.int_mode:
            return f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        return f"{value:.{PRECISION}f}"


def _summarized(a: np.ndarray) -> np.ndarray:
    """Only the values that will be shown (edges of every dim)."""
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * EDGEITEMS:
        a = np.concatenate([a[:EDGEITEMS], a[-EDGEITEMS:]])
    return np.stack([_summarized(x) for x in a]) if a.ndim > 1 else a


def _rows(a, formatter, indent, summarize):
    if a.ndim == 1:
        items = [formatter.format(v).rjust(formatter.width) for v in a]
        if summarize and a.shape[0] > 2 * EDGEITEMS:
            items = items[:EDGEITEMS] + [" ..."] + items[-EDGEITEMS:]  # torch's spacing
        per_line = max(1, (LINEWIDTH - indent) // (formatter.width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    parts = [_rows(x, formatter, indent + 1, summarize) for x in a]
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        parts = parts[:EDGEITEMS] + ["..."] + parts[-EDGEITEMS:]
    separator = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def tensor_body(array: np.ndarray, indent: int) -> str:
    if array.dtype.kind == "V":  # bfloat16 (ml_dtypes): print its float32 value, as torch does
        array = array.astype(np.float32)
    summarize = array.size > THRESHOLD
    if array.size == 0:
        return "[]"
    shown = _summarized(array) if summarize else array
    formatter = _Formatter(shown)
    if array.ndim == 0:
        return formatter.format(array.item()).rjust(formatter.width)
    return _rows(array, formatter, indent, summarize)


def tensor_repr(t) -> str:
    prefix = "tensor("
    meta = t._device.type == "meta"  # no values to show: "...", the size, and the dtype unless default
    body = "..." if meta else tensor_body(t._np, len(prefix))
    suffixes = []
    if meta:
        suffixes += [f"device='{t._device}'", f"size={tuple(t._shape)}"]
    elif t.numel() == 0 and t._shape != (0,):
        suffixes.append(f"size={tuple(t._shape)}")
    if t._device.type != "cpu" and not meta:
        suffixes.append(f"device='{t._device}'")
    # an empty tensor has no values that would show its dtype, so any non-default one is named
    implied = (dtypes.get_default_dtype(),) if t.numel() == 0 or meta else \
        (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool)
    if t.dtype not in implied:
        suffixes.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        name = type(t.grad_fn).__name__
        suffixes.append(f"grad_fn=<{name}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    if t._fw_grad is not None:  # a dual number (autograd/forward_ad.py)
        suffixes.append(f"tangent={tensor_repr(t._fw_grad)}")
    text = prefix + body
    # torch counts two more columns than the last line has; matching it wraps at the same place
    last_line = len(text.rsplit("\n", 1)[-1]) + 2
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            text += ",\n" + " " * len(prefix) + suffix
            last_line = len(prefix) + len(suffix)
        else:
            text += ", " + suffix
            last_line += len(suffix) + 2
    return text + ")"
