# place: replace:module
# The baseline of module_from_torch_source: torch's Module itself, which the class chain shows.
Module = torch.nn.Module
