"""BatchNorm1d and BatchNorm2d: a layer whose output depends on train() / eval(), and whose state is buffers.

In training it normalises each channel with the batch's own statistics and nudges its
running statistics towards them; in eval it normalises with the running statistics, so one
sample's output no longer depends on the rest of the batch. The running statistics are
buffers (saved in ``state_dict()``, moved by ``to()``, never given to an optimizer);
``weight`` and ``bias`` are the learned per-channel scale and shift.
"""
from __future__ import annotations

from .. import dtypes
from ..functions import empty, ones, tensor, zeros
from . import functional, init
from .module import Module
from .parameter import Parameter


class BatchNorm1d(Module):
    """``BatchNorm1d(C)`` on inputs of shape (N, C) or (N, C, L): statistics per channel C.

    ``momentum=None`` makes the running statistics a plain average over every batch seen
    (``num_batches_tracked`` counts them); ``track_running_stats=False`` keeps none, so eval
    uses the batch's statistics too.
    """

    _version = 2  # torch's: num_batches_tracked joined the state_dict in version 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None, dtype=None,
                 *, bias: bool = True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=dtypes.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative average: batch k gets weight 1/k
                factor = 1.0 / float(self.num_batches_tracked)
        # batch statistics in training, and in eval too when there are no running ones
        use_batch_stats = self.training or self.running_mean is None
        # running statistics are passed only where they are read or updated
        track = not self.training or self.track_running_stats
        return functional.batch_norm(
            input, self.running_mean if track else None, self.running_var if track else None,
            self.weight, self.bias, use_batch_stats, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm2d(BatchNorm1d):
    """Batch normalisation of images (N, C, H, W): statistics per channel over N, H and W."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")
