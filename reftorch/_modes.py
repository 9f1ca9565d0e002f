"""The switches every operation reads on its way to a kernel.

torch keeps them as thread-local state in c10, its lowest layer, beside the dispatch keys:
grad mode and inference mode (``c10::GradMode``, ``c10::InferenceMode``), the forward-AD
level, vmap's randomness (functorch's dynamic layer) and autocast's settings. They live here,
below the tensor, so that every layer can read them; the user-facing switches are above
(``autograd.grad_mode``, ``autograd.forward_ad``, ``func.vmap``, ``amp.autocast``).
"""
from __future__ import annotations

from . import dtypes


class GradMode:
    grad_enabled = True   # operations record the graph (no_grad turns it off)
    inference = False     # tensors made now are inference tensors (inference_mode)


class ForwardAD:
    level = None          # the open dual level (one at a time, as in torch)
    computing = False     # True while a tangent formula runs: its own ops carry no tangents
    duals: list = []      # weak references to the tensors given a tangent in this level


class Vmap:
    randomness = None     # inside vmap: how random operations behave ("error", "different", "same")


class AutocastDevice:
    def __init__(self, dtype):
        self.enabled = False
        self.dtype = dtype
        self.cache_enabled = True


class Autocast:
    cpu = AutocastDevice(dtypes.bfloat16)  # torch's CPU default: bfloat16
    devices = {"cpu": cpu}
    nesting = 0           # open autocast regions: the cast cache is dropped when the last closes
    cache: dict = {}      # id(leaf) -> (leaf, its cast copy)
    running = False       # an op's own inner calls are not cast again (autocast is off inside)


grad_mode = GradMode()
forward_ad = ForwardAD()
vmap = Vmap()
autocast = Autocast()
