"""lessons/README.md's weekend reading path: each file it names exists, and the size it gives
is within a fifth of the file's (update the table when a file grows or shrinks more)."""
from __future__ import annotations

import re

from coursebase.paths import REPO

ROW = re.compile(r"^\| \d+ \| `(?P<path>reftorch/[\w/]+\.py)` \| (?P<lines>\d+) \|", re.M)


def reading_path() -> list[tuple[str, int]]:
    text = (REPO / "lessons" / "README.md").read_text(encoding="utf-8")
    return [(m["path"], int(m["lines"])) for m in ROW.finditer(text)]


def test_the_reading_path_names_real_files_with_their_sizes():
    rows = reading_path()
    assert len(rows) >= 10
    wrong = []
    for path, stated in rows:
        actual = len((REPO / path).read_text(encoding="utf-8").splitlines())
        if not 0.8 * actual <= stated <= 1.25 * actual:
            wrong.append(f"{path}: README says {stated} lines, the file has {actual}")
    assert wrong == []


def test_the_reading_path_files_stay_readable():
    # small enough to read in a sitting
    assert [path for path, _ in reading_path()
            if len((REPO / path).read_text(encoding="utf-8").splitlines()) > 600] == []
