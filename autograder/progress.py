"""A one-line progress bar: done/total, elapsed and estimated time left."""
from __future__ import annotations

import sys
import time


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class ProgressBar:
    def __init__(self, total: int, label: str, stream=None, width: int = 30):
        self.total, self.label, self.width = total, label, width
        self.stream = stream or sys.stderr
        self.done = 0
        self.started = time.monotonic()
        self.draw()

    def advance(self, count: int = 1) -> None:
        self.done += count
        self.draw()

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        fraction = self.done / self.total if self.total else 1.0
        filled = int(self.width * fraction)
        eta = "--:--" if not self.done else _clock(elapsed / self.done * (self.total - self.done))
        bar = "#" * filled + "." * (self.width - filled)
        return f"{self.label} [{bar}] {self.done}/{self.total} elapsed {_clock(elapsed)} ETA {eta}"

    def draw(self) -> None:
        end = "\n" if self.done >= self.total else ""
        if self.stream.isatty():
            self.stream.write("\r" + self.line() + end)
        elif end or self.done == 0:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
