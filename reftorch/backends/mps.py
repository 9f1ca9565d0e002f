"""Apple's Metal backend: not built into reftorch."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
