"""`course feedback <a>`: one HTML page per submission: points, message and hint per test.

Built from the grader's results, never from the notebook: hidden test source cannot
appear, not even in a traceback, because no test source or traceback is ever copied in.
The pages go where nbgrader keeps feedback (``feedback/<student>/<a>/<nb>.html``) and,
when the submission came through the exchange, are released there with nbgrader's own
``ExchangeReleaseFeedback`` so students can fetch them from JupyterLab.
"""
from __future__ import annotations

import html
import shutil
from pathlib import Path

from .course import Course
from .grade import STATE_FILE, SubmissionRow, load_row

_STYLE = """
body { font-family: sans-serif; max-width: 60em; margin: 2em auto; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #ccc; padding: .4em; text-align: left; vertical-align: top; }
.pass { color: #176317; } .fail { color: #a11; }
"""


def _points(value: float) -> str:
    return f"{value:g}"


def render(row: SubmissionRow, assignment: str, lateness=None) -> str:
    escape = html.escape
    lines = [
        "<!DOCTYPE html>", "<html><head><meta charset='utf-8'>",
        f"<title>Feedback: {escape(assignment)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(assignment)}: {_points(row.score)} / {_points(row.max_score)} points</h1>",
        f"<p>Run: {escape(row.message)}</p>",
        *([f"<p>{escape(lateness.sentence(row.max_score))}</p>"] if lateness is not None and lateness.due else []),
        "<table><tr><th>Test</th><th>Points</th><th>Result</th><th>Hint</th></tr>",
    ]
    for test in row.tests:
        css = "pass" if test["passed"] else "fail"
        lines.append(
            f"<tr><td>{escape(test['grade_id'])}</td>"
            f"<td>{_points(test['points'])} / {_points(test['max_points'])}</td>"
            f"<td class='{css}'>{escape(test['message'])}</td><td>{escape(test.get('hint', ''))}</td></tr>")
    lines += ["</table>", "</body></html>"]
    return "\n".join(lines)


def write_feedback(course: Course, assignment: str, release: bool = True) -> list[Path]:
    from .late import apply_late_penalties
    written = []
    notebook = assignment
    lateness = apply_late_penalties(course, assignment)
    for state in sorted(course.autograded_root.glob(f"*/{assignment}/{STATE_FILE}")):
        student = state.parent.parent.name
        row = load_row(course, assignment, student)
        folder = course.feedback_root / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{notebook}.html"
        path.write_text(render(row, assignment, lateness.get(student)), encoding="utf-8")
        submitted = course.submitted_root / student / assignment
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
