"""reftorch.nn: Module, Parameter, containers, layers, batch norm and losses."""
from . import functional, init  # noqa: F401
from .batchnorm import BatchNorm1d  # noqa: F401
from .buffer import Buffer  # noqa: F401
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .layers import (  # noqa: F401
    CrossEntropyLoss, Dropout, Flatten, Identity, Linear, LogSoftmax, MSELoss, NLLLoss, ReLU,
    Sigmoid, Softmax, Tanh,
)
from .module import Module  # noqa: F401
from .parameter import Parameter  # noqa: F401
