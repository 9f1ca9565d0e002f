"""reftorch.autograd: the graph, the backward engine, grad modes, custom Functions."""
from . import forward_ad, functional, graph
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
