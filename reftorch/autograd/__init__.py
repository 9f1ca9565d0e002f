"""reftorch.autograd: the graph, the backward engine, grad modes, custom Functions."""
from . import functional
from .engine import backward, grad
from .function import Function, FunctionCtx
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck
from .graph import AccumulateGrad, Node

Variable = None  # torch's old name for Tensor; set by reftorch/__init__


def set_detect_anomaly(mode: bool):
    """Accepted for compatibility; reftorch's errors already say which node failed."""


__all__ = [
    "backward", "grad", "Function", "FunctionCtx", "enable_grad", "inference_mode", "no_grad",
    "set_grad_enabled", "gradcheck", "GradcheckError", "AccumulateGrad", "Node", "functional",
]
