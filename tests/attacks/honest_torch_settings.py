# place: after_tools
# honest: changes global torch settings (default dtype, print options, seed, threads).
import torch

torch.set_default_dtype(torch.float64)
torch.set_printoptions(precision=2, sci_mode=False)
torch.manual_seed(1234)
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
