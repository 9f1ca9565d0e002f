"""The course: where it keeps things, read from nbgrader's own configuration.

A course is a folder (this repository, or a copy of it) with ``course/nbgrader_config.py``.
nbgrader's ``CourseDirectory`` there names each step's folder (source: solutions/, release:
assignments/, submitted, autograded and feedback under course/), the gradebook URL and the
course id; ``Exchange.root`` names the exchange. Every command of both packages reads them
here, through :func:`load_config` (the configuration alone: cheap) or :meth:`Course.load`
(with nbgrader's folders resolved; ``db_url`` may be overridden, e.g. to grade into
PostgreSQL).

Imports go one way: ``autograder/`` builds on ``course/`` (this model, the roster, nbgrader's
markers, the command-line helpers); no module of ``course/`` imports ``autograder/`` at its
top. `course validate` and `course release` reach for the grader only inside the function
that uses it, where the grader may be missing (the student kit), and the front door names
the grading commands' module by string (tests/test_module_map.py holds the rule).

>>> course = Course.load()               # this repository's course
>>> course.source_notebook("01_tensors")  # solutions/01_tensors/01_tensors.ipynb
"""
from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from traitlets.config import Config, PyFileConfigLoader

# The repository: the course's code (course/, autograder/, reftorch/) and its default course.
REPO = Path(__file__).resolve().parent.parent
CONFIG_RELATIVE_PATH = Path("course") / "nbgrader_config.py"
# Every assignment is worth at least this many points (a CI gate, tests/test_assignments_gates.py):
# enough graded tests that partial credit and a late penalty show in the score. `course new`'s
# two sample questions are worth exactly this together.
MIN_POINTS = 10


class CourseError(Exception):
    """A course command cannot go on; the message says why."""


def load_config(root: Path | str | None = None) -> Config:
    """The nbgrader configuration of the course at ``root`` (default: this repository)."""
    path = Path(root or REPO).resolve() / CONFIG_RELATIVE_PATH
    if not path.is_file():
        raise CourseError(f"No nbgrader configuration at {path}")
    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()



# The limits a notebook runs under, when graded and when validated, from the course's
# configuration (one place): nbgrader's own per-cell `Execute.timeout`, and the course's
# `CourseLimits` for a whole run and its memory. name -> (section, setting, default).
GRADING_LIMITS = {
    "cell_seconds": ("Execute", "timeout", 120.0),
    "notebook_seconds": ("CourseLimits", "notebook_timeout", 300.0),
    "memory_mb": ("CourseLimits", "memory_mb", 2048),
}


def grading_limits(config: Config | None) -> dict[str, float]:
    """The course's limits (see GRADING_LIMITS), defaults where the configuration is silent
    or holds something that is not a positive number."""
    found = {}
    for name, (section, setting, default) in GRADING_LIMITS.items():
        value = config[section].get(setting, default) if config is not None and section in config else default
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf")
        found[name] = value if ok else default
    return found


def forbids_torch(notebook) -> bool:
    """An assignment opts out of torch with ``"course": {"forbid_torch": true}`` in its
    notebook's metadata (``notebook``: an nbformat notebook)."""
    return bool(notebook.metadata.get("course", {}).get("forbid_torch", False))


@dataclass
class Course:
    root: Path
    course_id: str
    db_url: str
    source_root: Path
    submitted_root: Path
    autograded_root: Path
    feedback_root: Path
    exchange_root: Path
    config: Config | None = None
    release_root: Path | None = None

    @classmethod
    def load(cls, root: Path | str | None = None, db_url: str | None = None) -> "Course":
        from nbgrader.coursedir import CourseDirectory

        config = load_config(root)
        if db_url:
            config.CourseDirectory.db_url = db_url
        coursedir = CourseDirectory(config=config)

        def step(name: str) -> Path:
            return Path(coursedir.root) / getattr(coursedir, f"{name}_directory")

        exchange = config.Exchange.get("root", str(Path(coursedir.root) / "course" / "exchange"))
        cls.put_scripts_on_path()
        return cls(root=Path(coursedir.root), course_id=coursedir.course_id, db_url=coursedir.db_url,
                   source_root=step("source"), submitted_root=step("submitted"),
                   autograded_root=step("autograded"), feedback_root=step("feedback"),
                   exchange_root=Path(exchange), config=config, release_root=step("release"))

    def source_notebook(self, assignment: str) -> Path:
        return self.source_root / assignment / f"{assignment}.ipynb"

    def release_notebook(self, assignment: str) -> Path:
        return self.release_root / assignment / f"{assignment}.ipynb"

    def assignment_ids(self) -> list[str]:
        """Every assignment with a source notebook ``<source>/<a>/<a>.ipynb``, in course order."""
        if not self.source_root.is_dir():
            return []
        return sorted(entry.name for entry in self.source_root.iterdir()
                      if entry.is_dir() and (entry / f"{entry.name}.ipynb").is_file())

    def reports_root(self) -> Path:
        return self.root / "course" / "reports"

    @functools.cached_property
    def markers(self):
        """nbgrader's region markers as this course configures them (course/markers.py)."""
        from course.markers import course_markers
        return course_markers(self.root)

    @staticmethod
    def put_scripts_on_path() -> None:
        # nbgrader's Gradebook runs the `alembic` executable by name; with `.venv/bin/python -m
        # course` (no activated venv) that folder is not on PATH, so add the interpreter's own.
        scripts = str(Path(sys.executable).parent)
        if scripts not in os.environ.get("PATH", "").split(os.pathsep):
            os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
