"""cuDNN's switches: settable, with torch's defaults; there is no cuDNN here."""
import contextlib
import sys

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = None  # torch only sets it where cuDNN is there
fp32_precision = "none"


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
          fp32_precision="none", depthwise_kernel="auto"):
    """Within the block the switches take these values (``enabled`` too: off unless given); the
    previous ones come back after it."""
    module = sys.modules[__name__]
    names = ("enabled", "benchmark", "deterministic", "allow_tf32", "fp32_precision")
    saved = {name: getattr(module, name) for name in names}
    for name, value in zip(names, (enabled, benchmark, deterministic, allow_tf32, fp32_precision)):
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def is_available() -> bool:
    return False


def version():
    return None


def is_acceptable(tensor) -> bool:
    return False
