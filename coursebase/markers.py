"""nbgrader's region markers, read with nbgrader's own settings and its own rule.

An instructor's notebook marks solution code (``### BEGIN SOLUTION`` ... ``### END
SOLUTION``) and hidden tests (``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS``).
The words are nbgrader's settings, ``ClearSolutions.begin_solution_delimeter`` and
``end_solution_delimeter``, ``ClearHiddenTests.begin_test_delimeter`` and
``end_test_delimeter`` (nbgrader's spelling), read from the course's configuration. The
rule is the one nbgrader's preprocessors apply when they make a release: a line that
contains a begin delimiter opens the region, a line that contains the end delimiter closes
it, and both marker lines go with the region. The grader (which lines of a test cell are
hidden), the release audit and the student kit's audit (which lines must never reach a
student) all read regions here.

>>> markers = course_markers()            # this repository's course
>>> markers.hidden_line_numbers("x = 1\\n### BEGIN HIDDEN TESTS\\ny = 2\\n### END HIDDEN TESTS")
{2, 3, 4}
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from .model import Course

SOLUTION, HIDDEN = "solution", "hidden tests"


@dataclass(frozen=True)
class MarkedLine:
    number: int          # 1-based
    text: str
    region: str | None   # SOLUTION, HIDDEN or None (outside every region)
    marker: bool         # a begin or end line (it goes with its region)


@dataclass(frozen=True)
class Markers:
    begin_solution: str
    end_solution: str
    begin_hidden: str
    end_hidden: str

    @classmethod
    def of(cls, config=None) -> "Markers":
        """The delimiters nbgrader uses with ``config`` (a traitlets Config; None: its defaults)."""
        from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions
        from traitlets.config import Config

        solutions = ClearSolutions(config=config or Config())
        hidden = ClearHiddenTests(config=config or Config())
        return cls(solutions.begin_solution_delimeter, solutions.end_solution_delimeter,
                   hidden.begin_test_delimeter, hidden.end_test_delimeter)

    def lines(self, source: str) -> list[MarkedLine]:
        """Every line of ``source`` with the region it belongs to (a solution region wins
        over a hidden one that overlaps it)."""
        solution = _regions(source, self.begin_solution, self.end_solution)
        hidden = _regions(source, self.begin_hidden, self.end_hidden)
        marked = []
        for number, (text, in_solution, in_hidden) in enumerate(zip(source.splitlines(), solution, hidden), start=1):
            region, marker = (SOLUTION, in_solution[1]) if in_solution[0] else \
                (HIDDEN, in_hidden[1]) if in_hidden[0] else (None, False)
            marked.append(MarkedLine(number, text, region, marker))
        return marked

    def hidden_line_numbers(self, source: str) -> set[int]:
        """Numbers of the lines in hidden-test regions, marker lines included."""
        return {line.number for line in self.lines(source) if line.region == HIDDEN}

    def inside(self, source: str, region: str) -> list[str]:
        """The lines inside ``region``'s regions (markers left out), as written."""
        return [line.text for line in self.lines(source) if line.region == region and not line.marker]

    def outside(self, source: str, region: str) -> list[str]:
        """The lines that are in no region of that kind: what nbgrader's release keeps of it."""
        return [line.text for line in self.lines(source) if line.region != region]

    def marker_lines(self, text: str) -> list[str]:
        """Lines of ``text`` that nbgrader would read as a marker (in a release: a leak)."""
        delimiters = (self.begin_solution, self.end_solution, self.begin_hidden, self.end_hidden)
        return [line.strip() for line in text.splitlines() if any(d in line for d in delimiters)]


def _regions(source: str, begin: str, end: str) -> list[tuple[bool, bool]]:
    """Per line: (in the region, a marker line), by nbgrader's rule."""
    found, inside = [], False
    for line in source.splitlines():
        if begin in line:
            inside = True
            found.append((True, True))
        elif end in line:   # nbgrader drops a stray end line too
            inside = False
            found.append((True, True))
        else:
            found.append((inside, False))
    return found


@functools.cache
def _markers_at(root: Path | None) -> Markers:
    return Markers.of(Course.load(root).config)


def course_markers(root: Path | str | None = None) -> Markers:
    """The markers of the course at ``root`` (default: this repository), read once."""
    return _markers_at(Path(root).resolve() if root else None)
