"""The course as nbgrader sees it: configuration, assignment list, and nbgrader's steps.

Everything here goes through nbgrader's own converters (GenerateAssignment, Autograde,
GenerateFeedback) configured by course/nbgrader_config.py; nothing re-implements them.

>>> generate_release(["01_tensors"])  # solutions/01_tensors -> assignments/01_tensors
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from coursebase.model import Course, CourseError


def _course(course: Course | Path | str | None) -> Course:
    return course if isinstance(course, Course) else Course.load(course)


def source_notebook(assignment_id: str, course: Course | Path | str | None = None) -> Path:
    return _course(course).source_notebook(assignment_id)


def release_notebook(assignment_id: str, course: Course | Path | str | None = None) -> Path:
    return _course(course).release_notebook(assignment_id)


def assignment_ids(course: Course | Path | str | None = None) -> list[str]:
    """Every assignment with a source notebook ``solutions/<a>/<a>.ipynb``, in course order."""
    return _course(course).assignment_ids()


def check_assignment_ids(requested: list[str], course: Course | Path | str | None = None) -> list[str]:
    known = assignment_ids(course)
    unknown = [name for name in requested if name not in known]
    if unknown:
        raise CourseError(
            f"No assignment named {', '.join(map(repr, unknown))} in solutions/; "
            f"known assignments: {', '.join(known) or '(none)'}"
        )
    return requested


def quiet_logger() -> logging.Logger:
    # nbgrader logs every copied file at INFO; a course command reports its own summary.
    logger = logging.getLogger("course.nbgrader")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[nbgrader] %(levelname)s %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    return logger


def run_converter(converter_class, course: Course, assignment_id: str, student_id: str = "*",
                  directories: dict | None = None, **traits):
    """One of nbgrader's converters over ``course`` (``directories``: CourseDirectory
    settings for this run, e.g. a scratch release_directory)."""
    course.put_scripts_on_path()
    course.make_state_root()   # the gradebook, and nbgrader's own folders there
    logger = quiet_logger()
    coursedir = course.new_coursedir(log=logger, assignment_id=assignment_id, student_id=student_id,
                                     **(directories or {}))
    converter = converter_class(coursedir=coursedir, config=coursedir.config, log=logger, **traits)
    converter.start()


def generate_release(assignments: list[str], course: Course | Path | str | None = None) -> list[Path]:
    """Regenerate ``assignments/<a>/`` from ``solutions/<a>/`` with nbgrader's GenerateAssignment.

    The old release folder is replaced (force), and the assignment with its grade cells is
    recorded in the course gradebook, which autograding needs.
    """
    from nbgrader.converters import GenerateAssignment

    course = _course(course)
    check_assignment_ids(assignments, course)
    for assignment_id in assignments:
        run_converter(GenerateAssignment, course, assignment_id, force=True)
    return [course.release_notebook(a) for a in assignments]


def publish_to_exchange(assignment_id: str, course: Course | Path | str | None = None) -> Path:
    """Put the release of ``assignment_id`` in nbgrader's exchange (its ReleaseAssignment), so
    students can fetch it from JupyterLab's Assignment List. A re-publish replaces it."""
    from nbgrader.auth import Authenticator
    from nbgrader.exchange.default import ExchangeReleaseAssignment

    logger = quiet_logger()
    course = _course(course)
    course.make_state_root()   # the exchange's default place
    coursedir = course.new_coursedir(log=logger, assignment_id=assignment_id)
    releaser = ExchangeReleaseAssignment(coursedir=coursedir, authenticator=Authenticator(config=coursedir.config),
                                         config=coursedir.config, log=logger)
    releaser.force = True
    releaser.start()
    return Path(releaser.dest_path)


def autograde(assignment_id: str, course: Course | Path | str | None = None, student_id: str = "*") -> None:
    """Run nbgrader's Autograde over ``var/submitted/<student>/<a>/`` (all students by default):
    stock nbgrader, which the tests compare the course's grader with."""
    from nbgrader.converters import Autograde

    run_converter(Autograde, _course(course), assignment_id, student_id, force=True)


def generate_feedback(assignment_id: str, course: Course | Path | str | None = None, student_id: str = "*") -> None:
    from nbgrader.converters import GenerateFeedback

    run_converter(GenerateFeedback, _course(course), assignment_id, student_id, force=True)


def scores(assignment_id: str, course: Course | Path | str | None = None) -> dict[str, dict[str, float]]:
    """Per student, per grade cell: the points the gradebook holds after autograding."""
    result: dict[str, dict[str, float]] = {}
    with _course(course).open_gradebook() as gradebook:
        assignment = gradebook.find_assignment(assignment_id)
        for submission in assignment.submissions:
            result[submission.student_id] = {
                grade.name: grade.score for notebook in submission.notebooks for grade in notebook.grades
            }
    return result


def max_points(assignment_id: str, course: Course | Path | str | None = None) -> dict[str, float]:
    with _course(course).open_gradebook() as gradebook:
        assignment = gradebook.find_assignment(assignment_id)
        return {cell.name: cell.max_score for notebook in assignment.notebooks for cell in notebook.grade_cells}


def relative(path: Path | str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
