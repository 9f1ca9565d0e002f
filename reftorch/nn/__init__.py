"""reftorch.nn: Module, Parameter, containers, layers, batch norm and losses."""
from . import functional, init, utils  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from .buffer import Buffer  # noqa: F401
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .layers import (  # noqa: F401
    BCELoss, BCEWithLogitsLoss, Conv2d, CrossEntropyLoss, Dropout, ELU, Flatten, GELU, Hardtanh, Identity,
    L1Loss, LayerNorm, LeakyReLU, Linear, LogSigmoid, LogSoftmax, MaxPool2d, AvgPool2d, MSELoss, NLLLoss,
    ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softplus, Tanh,
)
from .module import Module  # noqa: F401
from .parameter import Parameter  # noqa: F401
