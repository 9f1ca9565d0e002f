"""oneDNN (MKL-DNN): not used by reftorch."""
enabled = True


def is_available() -> bool:
    return False
