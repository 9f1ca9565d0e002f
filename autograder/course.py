"""Where the course keeps things, read from nbgrader's own configuration.

Paths come from ``course/nbgrader_config.py`` of the course root (the repository by
default, or a copy of it), through nbgrader's ``CourseDirectory``; the database URL can
be overridden (``--db-url``) to grade into PostgreSQL.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from traitlets.config import PyFileConfigLoader

REPO = Path(__file__).resolve().parent.parent


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
    config: object = None

    @classmethod
    def load(cls, root: Path | str | None = None, db_url: str | None = None) -> "Course":
        from nbgrader.coursedir import CourseDirectory

        root = Path(root or REPO).resolve()
        config_path = root / "course" / "nbgrader_config.py"
        if not config_path.is_file():
            raise FileNotFoundError(f"No nbgrader configuration at {config_path}")
        config = PyFileConfigLoader(config_path.name, path=str(config_path.parent)).load_config()
        if db_url:
            config.CourseDirectory.db_url = db_url
        coursedir = CourseDirectory(config=config)
        _put_venv_on_path()

        def step(name: str) -> Path:
            return Path(coursedir.root) / getattr(coursedir, f"{name}_directory")

        exchange = config.Exchange.get("root", str(root / "course" / "exchange"))
        return cls(root=Path(coursedir.root), course_id=coursedir.course_id, db_url=coursedir.db_url,
                   source_root=step("source"), submitted_root=step("submitted"),
                   autograded_root=step("autograded"), feedback_root=step("feedback"),
                   exchange_root=Path(exchange), config=config)

    def source_notebook(self, assignment: str) -> Path:
        return self.source_root / assignment / f"{assignment}.ipynb"

    def forbids_torch(self, assignment: str) -> bool:
        """An assignment opts out of torch with ``"course": {"forbid_torch": true}`` in its metadata."""
        import nbformat
        try:
            notebook = nbformat.read(str(self.source_notebook(assignment)), as_version=4)
        except (OSError, ValueError):
            return False
        return bool(notebook.metadata.get("course", {}).get("forbid_torch", False))

    def reports_root(self) -> Path:
        return self.root / "course" / "reports"


def _put_venv_on_path() -> None:
    # nbgrader's Gradebook runs `alembic` by name; make the interpreter's scripts findable.
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
