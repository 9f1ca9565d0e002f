"""`course feedback <a>`: one HTML page per submission: points, message and hint per test.

Built from the results (autograder/results.py: the gradebook's scores, so a manual grade
from Formgrader shows, with the grader's messages), never from the notebook: hidden test
source cannot appear, not even in a traceback, because no test source or traceback is ever
copied in. The page is a Jinja2 template (templates/feedback.html.j2) with autoescape on.
The pages go where nbgrader keeps feedback (``feedback/<student>/<a>/<nb>.html``) and,
when the submission came through the exchange, are released there with nbgrader's own
``ExchangeReleaseFeedback`` so students can fetch them from JupyterLab.
"""
from __future__ import annotations

import functools
import shutil
from pathlib import Path

from course.model import Course

from .results import GradedSubmission, read_results


@functools.cache
def _template():
    import jinja2

    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                     autoescape=True, undefined=jinja2.StrictUndefined)
    environment.filters["points"] = lambda value: f"{value:g}"
    return environment.get_template("feedback.html.j2")


def render(result: GradedSubmission, assignment: str, lateness=None) -> str:
    """One student's page; everything from the submission is escaped (autoescape)."""
    return _template().render(result=result, assignment=assignment, lateness=lateness)


def write_feedback(course: Course, assignment: str, release: bool = True) -> list[Path]:
    from .late import apply_late_penalties
    written = []
    notebook = assignment
    lateness = apply_late_penalties(course, assignment)
    for result in read_results(course, assignment):
        if not result.graded:
            continue
        folder = course.feedback_root / result.student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{notebook}.html"
        path.write_text(render(result, assignment, lateness.get(result.student)), encoding="utf-8")
        submitted = course.submitted_root / result.student / assignment
        for name in ("timestamp.txt", "submission_secret.txt"):
            if (submitted / name).is_file():
                shutil.copy(submitted / name, folder / name)
        written.append(path)
    if release and written:
        release_to_exchange(course, assignment)
    return written


def release_to_exchange(course: Course, assignment: str) -> int:
    """Hand the pages to nbgrader's exchange; only submissions it collected can be matched."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import ExchangeReleaseFeedback

    ready = [p for p in course.feedback_root.glob(f"*/{assignment}")
             if (p / "submission_secret.txt").is_file() and (p / "timestamp.txt").is_file()]
    if not ready or not course.exchange_root.is_dir():
        return 0
    coursedir = CourseDirectory(config=course.config)
    coursedir.assignment_id = assignment
    released = 0
    for folder in ready:
        coursedir.student_id = folder.parent.name
        releaser = ExchangeReleaseFeedback(coursedir=coursedir, authenticator=Authenticator(config=course.config),
                                           config=course.config)
        releaser.start()
        released += 1
    return released
