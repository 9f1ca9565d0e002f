"""torch.accelerator: which accelerator a program should use, if any.

reftorch has none that a program would pick on its own: ``sim`` (sim.py) is there to be asked for
by name (``device='sim'``), so that tutorial code written as ``torch.accelerator.current_accelerator()
if torch.accelerator.is_available() else 'cpu'`` runs on the CPU here, as it does on a laptop."""


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False):
    return None


def device_count() -> int:
    return 0


def _none():
    raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index() -> int:
    _none()


def set_device_index(device) -> None:
    _none()


def synchronize(device=None) -> None:
    _none()
