# place: into:value_backward
# honest: imports torch and numpy at the top of a no-torch answer cell and never uses them
# (the first report: Validate said 17/17, grading gave 8/17).
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
