"""Progress of a grading batch, drawn by tqdm.

In a terminal: one bar, with the students whose notebooks are running now. Anywhere else
(output redirected to a file, CI logs): one line per finished submission, so a log shows
who was graded when, and a stuck batch shows who it is stuck after.
"""
from __future__ import annotations

import sys
import threading
import time

from tqdm import tqdm


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class ProgressBar:
    def __init__(self, total: int, label: str, stream=None):
        self.total, self.label = total, label
        self.stream = stream or sys.stderr
        self.interactive = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = 0
        self.started = time.monotonic()
        self.running: dict[str, float] = {}
        self._lock = threading.Lock()
        self._bar = tqdm(total=total, desc=label, file=self.stream, unit="submission",
                         dynamic_ncols=True, disable=not self.interactive)
        if not self.interactive:
            self._line(f"{label}: {total} submission(s) to grade")

    def start(self, student: str) -> None:
        """A worker began this student's notebook (shown in a terminal)."""
        with self._lock:
            self.running[student] = time.monotonic()
            self._show_running()

    def advance(self, row=None) -> None:
        """One submission finished (``row``: its SubmissionRow, when known)."""
        with self._lock:
            self.done += 1
            student = getattr(row, "student", None)
            began = self.running.pop(student, None) if student else None
            if self.interactive:
                self._bar.update(1)
                self._show_running()
            else:
                took = f" in {time.monotonic() - began:.1f}s" if began is not None else ""
                what = ""
                if row is not None:
                    from .summary import run_kind
                    what = f" {row.student}: {row.score:g}/{row.max_score:g} {run_kind(row)}{took}"
                self._line(f"{self.label}: {self.done}/{self.total}{what} "
                           f"(elapsed {_clock(time.monotonic() - self.started)})")
            if self.done >= self.total:
                self._bar.close()

    def close(self) -> None:
        self._bar.close()

    def _show_running(self) -> None:
        if self.interactive:
            names = sorted(self.running)
            shown = ", ".join(names[:4]) + (f" +{len(names) - 4}" if len(names) > 4 else "")
            self._bar.set_postfix_str(f"running: {shown}" if names else "", refresh=True)

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()
