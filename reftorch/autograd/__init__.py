"""reftorch.autograd: the graph, the backward engine, grad modes, custom Functions.

The package spans two layers. Its first half (grad and anomaly modes, graph.py) is what
every operation records into, below the ops; importing the second half (the engine,
forward-mode AD, custom Functions) imports the ops it runs. reftorch/__init__.py enters
this package once the tensor exists, so the ops' import of graph.py finds it ready.
"""
from . import anomaly_mode, grad_mode, graph  # noqa: I001  (the graph's half first)
from . import engine, forward_ad, function, functional, gradcheck, variable  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .engine import backward, grad
from .function import Function, FunctionCtx
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck
from .graph import AccumulateGrad, Node

from .variable import Variable  # noqa: F401


__all__ = [
    "backward", "grad", "Function", "FunctionCtx", "enable_grad", "inference_mode", "no_grad",
    "set_grad_enabled", "gradcheck", "GradcheckError", "AccumulateGrad", "Node", "functional", "forward_ad",
    "graph", "detect_anomaly", "set_detect_anomaly",
]
