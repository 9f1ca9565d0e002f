"""Where a course keeps things: the repository, its configuration, and ``var/``, the one
git-ignored folder that holds everything the course's commands write during a term.

    var/gradebook.db     nbgrader's gradebook (SQLite; c.CourseDirectory.db_url)
    var/roster.csv       the imported roster (`course roster import`)
    var/submitted/       nbgrader's steps: each student's submission, ...
    var/autograded/      ... what `course grade` graded (and its state files), ...
    var/feedback/        ... the feedback pages
    var/exchange/        nbgrader's exchange, unless c.Exchange.root puts it elsewhere (the hub)
    var/collected/       every LMS download as collected, and collect's records of them
    var/reports/         exports, reports, feedback bundled for an LMS

course/nbgrader_config.py names nbgrader's folders (it is run by path, by Jupyter as by the
CLI, so it spells ``var`` itself; tests/test_student_data_ignored.py checks that the two agree).
A course that kept its state in course/ (before var/) is refused by every command until
`course migrate-state` has moved it (:func:`old_state`, :func:`migrate_state`).

This module is the foot of the layers: coursebase/ (the course model, nbgrader's markers,
the roster, these paths), then autograder/ (grading, on the base), then course/ (the
applications: the `course` command, validate, the student kit, the hub, the site).
tests/test_module_map.py holds the rule, and that the repository's root is defined here alone.
"""
from __future__ import annotations

import os
from pathlib import Path

# The repository: the course's code (coursebase/, autograder/, course/, reftorch/) and its default course.
REPO = Path(__file__).resolve().parent.parent
CONFIG_RELATIVE_PATH = Path("course") / "nbgrader_config.py"
STATE = "var"

# What a course kept in course/ before var/, moved by `course migrate-state` to var/<the same name>.
OLD_STATE_FOLDER = "course"
OLD_STATE = ("gradebook.db", "gradebook.db-journal", "gradebook.db-wal", "gradebook.db-shm", "roster.csv",
             "submitted", "autograded", "feedback", "exchange", "collected", "reports", "refused",
             "solution", "source_with_tests")


class StateError(Exception):
    """The course's runtime state cannot be used or moved as it is; the message says why."""


def state_root(root: Path | str) -> Path:
    return Path(root) / STATE


def old_state(root: Path | str) -> list[str]:
    """The names in ``root``/course/ that are runtime state from before var/ (empty: none)."""
    folder = Path(root) / OLD_STATE_FOLDER
    return [name for name in OLD_STATE if os.path.lexists(folder / name)]


def old_state_message(root: Path | str) -> str:
    """Why a command refuses a course with state in course/, and what to run ("" when it has none)."""
    found = old_state(root)
    if not found:
        return ""
    where = "" if Path(root).resolve() == REPO else f" --root {root}"
    return (f"{Path(root) / OLD_STATE_FOLDER} holds the course's runtime state from before it moved to "
            f"{STATE}/ ({', '.join(found)}); run `course migrate-state{where}` once (with the hub and "
            f"JupyterLab stopped: it moves them into {STATE}/, deletes nothing), then this command again")


def migrate_state(root: Path | str) -> list[tuple[Path, Path]]:
    """Move every old state path of ``root`` into var/; nothing moves when any target exists
    already (StateError names them). Returns (from, to) for each move."""
    root = Path(root)
    moves = [(root / OLD_STATE_FOLDER / name, state_root(root) / name) for name in old_state(root)]
    taken = [str(target) for _, target in moves if os.path.lexists(target)]
    if taken:
        raise StateError(f"nothing was moved: {', '.join(taken)} exist(s) already; compare them with the old "
                         f"one(s) in {root / OLD_STATE_FOLDER} and remove the copy you do not want")
    if moves:
        state_root(root).mkdir(exist_ok=True)
        # var/ belongs to whoever owns course/ (root may run this for the instructor)
        owner = (root / OLD_STATE_FOLDER).stat()
        if os.geteuid() == 0:
            os.chown(state_root(root), owner.st_uid, owner.st_gid)
    for source, target in moves:
        os.rename(source, target)   # the same file system: nothing is copied, nothing half-moved
    return moves
