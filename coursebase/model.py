"""The course: where it keeps things, read from nbgrader's own configuration.

A course is a folder (this repository, or a copy of it) with ``course/nbgrader_config.py``.
:meth:`Course.load` reads it (the one reader of a course's configuration: cheap), and
nbgrader's ``CourseDirectory`` is built from it here alone (:meth:`Course.new_coursedir`,
when first needed: importing nbgrader takes seconds): each step's folder (source:
solutions/, release: assignments/, submitted, autograded and feedback under var/), the
gradebook URL (``db_url`` may be overridden, e.g. to grade into PostgreSQL) and the course
id; ``Exchange.root`` names the exchange. The course's own state paths (the roster, LMS
downloads, reports) are under var/ too (coursebase/paths.py), and the gradebook is opened
here alone (:meth:`Course.open_gradebook`).

>>> course = Course.load()               # this repository's course
>>> course.source_notebook("01_tensors")  # solutions/01_tensors/01_tensors.ipynb
"""
from __future__ import annotations

import copy
import functools
import os
import sys
from pathlib import Path

from traitlets.config import Config, PyFileConfigLoader

from .paths import CONFIG_RELATIVE_PATH, REPO, old_state_message, state_root

# Every assignment is worth at least this many points (a CI gate, tests/test_assignments_gates.py):
# enough graded tests that partial credit and a late penalty show in the score. `course new`'s
# two sample questions are worth exactly this together.
MIN_POINTS = 10


class CourseError(Exception):
    """A course command cannot go on; the message says why."""


class NoCourse(CourseError):
    """No course configuration where one was looked for."""


def read_config(path: Path | str) -> Config:
    """The traitlets configuration in the file at ``path`` (the course's, or a student kit's
    when it is audited): the one place a configuration file is read."""
    path = Path(path)
    if not path.is_file():
        raise NoCourse(f"No nbgrader configuration at {path}")
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


class Course:
    """A course folder and its configuration. Refused (CourseError) while the folder still
    keeps runtime state in course/, from before var/ (coursebase/paths.py)."""

    def __init__(self, root: Path | str, config: Config, db_url: str | None = None):
        self.config = config
        # the configuration names its own root (nbgrader_config.py: the folder above it)
        self.root = Path(config.CourseDirectory.get("root", root))
        self._db_url = db_url

    @classmethod
    def load(cls, root: Path | str | None = None, db_url: str | None = None) -> "Course":
        root = Path(root or REPO).resolve()
        config = read_config(root / CONFIG_RELATIVE_PATH)
        refused = old_state_message(root)
        if refused:
            raise CourseError(refused)
        return cls(root, config, db_url)

    # -- nbgrader's view: its CourseDirectory, built here alone ---------------------------------

    def new_coursedir(self, log=None, **traits):
        """nbgrader's CourseDirectory of this course, on its own copy of the configuration (a
        converter's ``config=coursedir.config``), with ``traits`` set (assignment_id, ...)."""
        from nbgrader.coursedir import CourseDirectory

        config = copy.deepcopy(self.config)
        if self._db_url:
            config.CourseDirectory.db_url = self._db_url
        for name, value in traits.items():   # in the configuration too: a converter reads it there
            config.CourseDirectory[name] = value
        return CourseDirectory(config=config, **({"log": log} if log is not None else {}))

    @functools.cached_property
    def coursedir(self):
        return self.new_coursedir()

    @property
    def course_id(self) -> str:
        return self.coursedir.course_id

    @property
    def db_url(self) -> str:
        return self.coursedir.db_url

    def _step(self, name: str) -> Path:
        return Path(self.coursedir.root) / getattr(self.coursedir, f"{name}_directory")

    @property
    def source_root(self) -> Path:
        return self._step("source")

    @property
    def release_root(self) -> Path:
        return self._step("release")

    @property
    def submitted_root(self) -> Path:
        return self._step("submitted")

    @property
    def autograded_root(self) -> Path:
        return self._step("autograded")

    @property
    def feedback_root(self) -> Path:
        return self._step("feedback")

    # -- the course's own state (var/) -----------------------------------------------------

    @property
    def state_root(self) -> Path:
        return state_root(self.root)

    def make_state_root(self) -> Path:
        """var/, created when something is first written there (never by a command that only
        reads), and owned by whoever owns course/ (root may write it for the instructor)."""
        folder = self.state_root
        if not folder.is_dir():
            folder.mkdir(exist_ok=True)
            if os.geteuid() == 0:
                owner = (self.root / "course").stat()
                os.chown(folder, owner.st_uid, owner.st_gid)
        return folder

    @property
    def exchange_root(self) -> Path:
        return Path(self.config.Exchange.get("root", str(self.state_root / "exchange")))

    @property
    def collected_root(self) -> Path:
        """Every LMS download as `course collect` kept it, and its records (autograder/collect.py)."""
        return self.state_root / "collected"

    @property
    def reports_root(self) -> Path:
        """Exports, reports and feedback bundles, per assignment."""
        return self.state_root / "reports"

    @property
    def roster_path(self) -> Path:
        """The imported roster (coursebase/roster.py)."""
        return self.state_root / "roster.csv"

    # -- assignments -----------------------------------------------------------------------

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

    # -- the gradebook -----------------------------------------------------------------------

    def open_gradebook(self):
        """nbgrader's Gradebook of this course, opened here alone (a context manager). The
        grades in it are written by autograder/results.py alone; names (the roster) and the
        assignment's cells (`course release`) are written by their commands."""
        from nbgrader.api import Gradebook

        self.put_scripts_on_path()
        if self.db_url.startswith("sqlite:///") and self.state_root in Path(self.db_url[len("sqlite:///"):]).parents:
            self.make_state_root()
        return Gradebook(self.db_url, self.course_id)

    def has_gradebook(self) -> bool:
        """False for a SQLite gradebook not created yet (opening it would create it)."""
        prefix = "sqlite:///"
        return not self.db_url.startswith(prefix) or Path(self.db_url[len(prefix):]).exists()

    @staticmethod
    def put_scripts_on_path() -> None:
        # nbgrader's Gradebook runs the `alembic` executable by name; with `.venv/bin/python -m
        # course` (no activated venv) that folder is not on PATH, so add the interpreter's own.
        scripts = str(Path(sys.executable).parent)
        if scripts not in os.environ.get("PATH", "").split(os.pathsep):
            os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
