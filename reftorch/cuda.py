"""reftorch has no CUDA backend; this module answers the usual questions honestly."""


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def synchronize(device=None):
    raise AssertionError("Torch not compiled with CUDA enabled")


def manual_seed(seed: int):
    pass


def manual_seed_all(seed: int):
    pass
