# place: before_each_test
# honest: Linear draws its initial values in float64 (more random numbers than float32) and
# casts them; the module also draws a few random numbers it does not use.
import math

import torch


def _init_in_float64(self, in_features, out_features):
    Module.__init__(self)  # noqa: F821
    bound = 1 / math.sqrt(in_features)
    torch.rand(7)  # an unused draw
    self.weight = torch.nn.Parameter(
        torch.empty(out_features, in_features, dtype=torch.float64).uniform_(-bound, bound).float())
    self.bias = torch.nn.Parameter(torch.empty(out_features, dtype=torch.float64).uniform_(-bound, bound).float())


Linear.__init__ = _init_in_float64  # noqa: F821
