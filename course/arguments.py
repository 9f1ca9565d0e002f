"""The `course` command's argument parsing: one line for a wrong command line, and the
number types its options take (shared by every command module)."""
from __future__ import annotations

import argparse


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a wrong command line gets one line (what is wrong, where to read more)
    instead of a usage block followed by the error."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {value}")
    return value


def positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number greater than 0, got {text!r}") from None
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number greater than 0, got {text}")
    return value
