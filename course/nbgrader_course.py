"""The course as nbgrader sees it: configuration, assignment list, and nbgrader's steps.

Everything here goes through nbgrader's own converters (GenerateAssignment, Autograde,
GenerateFeedback) configured by course/nbgrader_config.py; nothing re-implements them.

>>> generate_release(["01_tensors"])  # solutions/01_tensors -> assignments/01_tensors
"""
from __future__ import annotations

import copy
import logging
import os
from pathlib import Path

from course.model import Course, CourseError, load_config


def source_notebook(assignment_id: str, root: Path | str | None = None) -> Path:
    return Course.load(root).source_notebook(assignment_id)


def release_notebook(assignment_id: str, root: Path | str | None = None) -> Path:
    return Course.load(root).release_notebook(assignment_id)


def assignment_ids(root: Path | str | None = None) -> list[str]:
    """Every assignment with a source notebook ``solutions/<a>/<a>.ipynb``, in course order."""
    return Course.load(root).assignment_ids()


def check_assignment_ids(requested: list[str], root: Path | str | None = None) -> list[str]:
    known = assignment_ids(root)
    unknown = [name for name in requested if name not in known]
    if unknown:
        raise CourseError(
            f"No assignment named {', '.join(map(repr, unknown))} in solutions/; "
            f"known assignments: {', '.join(known) or '(none)'}"
        )
    return requested


def _quiet_logger() -> logging.Logger:
    # nbgrader logs every copied file at INFO; a course command reports its own summary.
    logger = logging.getLogger("course.nbgrader")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[nbgrader] %(levelname)s %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    return logger


def _run_converter(converter_class, root, assignment_id: str, student_id: str = "*", **traits):
    from nbgrader.coursedir import CourseDirectory

    Course.put_scripts_on_path()
    config = copy.deepcopy(load_config(root))
    logger = _quiet_logger()
    coursedir = CourseDirectory(config=config, log=logger)
    coursedir.assignment_id = assignment_id
    coursedir.student_id = student_id
    converter = converter_class(coursedir=coursedir, config=config, log=logger, **traits)
    converter.start()


def generate_release(assignments: list[str], root: Path | str | None = None) -> list[Path]:
    """Regenerate ``assignments/<a>/`` from ``solutions/<a>/`` with nbgrader's GenerateAssignment.

    The old release folder is replaced (force), and the assignment with its grade cells is
    recorded in the course gradebook, which autograding needs.
    """
    from nbgrader.converters import GenerateAssignment

    check_assignment_ids(assignments, root)
    for assignment_id in assignments:
        _run_converter(GenerateAssignment, root, assignment_id, force=True)
    return [release_notebook(a, root) for a in assignments]


def publish_to_exchange(assignment_id: str, root: Path | str | None = None) -> Path:
    """Put the release of ``assignment_id`` in nbgrader's exchange (its ReleaseAssignment), so
    students can fetch it from JupyterLab's Assignment List. A re-publish replaces it."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import ExchangeReleaseAssignment

    config = copy.deepcopy(load_config(root))
    logger = _quiet_logger()
    coursedir = CourseDirectory(config=config, log=logger)
    coursedir.assignment_id = assignment_id
    releaser = ExchangeReleaseAssignment(coursedir=coursedir, authenticator=Authenticator(config=config),
                                         config=config, log=logger)
    releaser.force = True
    releaser.start()
    return Path(releaser.dest_path)


def autograde(assignment_id: str, root: Path | str | None = None, student_id: str = "*") -> None:
    """Run nbgrader's Autograde over ``course/submitted/<student>/<a>/`` (all students by default)."""
    from nbgrader.converters import Autograde

    _run_converter(Autograde, root, assignment_id, student_id, force=True)


def generate_feedback(assignment_id: str, root: Path | str | None = None, student_id: str = "*") -> None:
    from nbgrader.converters import GenerateFeedback

    _run_converter(GenerateFeedback, root, assignment_id, student_id, force=True)


def scores(assignment_id: str, root: Path | str | None = None) -> dict[str, dict[str, float]]:
    """Per student, per grade cell: the points the gradebook holds after autograding."""
    from nbgrader.api import Gradebook

    course = Course.load(root)
    result: dict[str, dict[str, float]] = {}
    with Gradebook(course.db_url, course.course_id) as gradebook:
        assignment = gradebook.find_assignment(assignment_id)
        for submission in assignment.submissions:
            result[submission.student_id] = {
                grade.name: grade.score for notebook in submission.notebooks for grade in notebook.grades
            }
    return result


def max_points(assignment_id: str, root: Path | str | None = None) -> dict[str, float]:
    from nbgrader.api import Gradebook

    course = Course.load(root)
    with Gradebook(course.db_url, course.course_id) as gradebook:
        assignment = gradebook.find_assignment(assignment_id)
        return {cell.name: cell.max_score for notebook in assignment.notebooks for cell in notebook.grade_cells}


def relative(path: Path | str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
