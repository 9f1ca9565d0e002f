"""reftorch.nn: Module, Parameter, containers, layers, batch norm, losses, embeddings (sparse.py),
recurrent layers (rnn.py), lazy layers (lazy.py), adaptive pooling (pooling.py)."""
from . import functional, init, utils  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from .buffer import Buffer  # noqa: F401
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .layers import (  # noqa: F401
    BCELoss, BCEWithLogitsLoss, Conv2d, CrossEntropyLoss, Dropout, ELU, Flatten, GELU, Hardtanh, Identity,
    L1Loss, LayerNorm, LeakyReLU, Linear, LogSigmoid, LogSoftmax, MaxPool2d, AvgPool2d, MSELoss, NLLLoss,
    ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softplus, Tanh,
)
from .layers import AvgPool1d, MaxPool1d  # noqa: F401
from .layers import CELU, SELU, Hardshrink, Hardsigmoid, Hardswish, Mish, Softmin, Softshrink, Softsign, Tanhshrink  # noqa: F401
from .layers import GLU, PReLU, Threshold  # noqa: F401
from .layers import (  # noqa: F401  (round 4)
    AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout,
)
from .lazy import (  # noqa: F401
    LazyBatchNorm1d, LazyBatchNorm2d, LazyConv2d, LazyLinear, UninitializedBuffer, UninitializedParameter,
)
from .module import Module  # noqa: F401
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d  # noqa: F401
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .parameter import Parameter  # noqa: F401
