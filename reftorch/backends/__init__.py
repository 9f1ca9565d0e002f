"""torch.backends: switches for the libraries torch can run on (cuDNN, MPS, oneDNN, ...).

reftorch runs every kernel on NumPy, so none of those libraries is present: the switches exist
(``torch.backends.cudnn.benchmark = True`` in a training script works) and change nothing, and
each ``is_available()`` answers honestly.
"""
from . import cpu, cuda, cudnn, mkldnn, mps, openmp  # noqa: F401
