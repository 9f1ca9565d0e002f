"""Each student's own hidden cases: a seed per student and assignment, from a course secret.

The reference run draws every test cell's hidden checks once more for each student, from
that student's seed (autograder/harness.py, ``_draw_for_students``), with torch as the oracle
there as for the shared ones; the student's run then gets those cases. A hidden case one
student learns is worth nothing to another. The seed is an HMAC of the assignment and the
student id under a secret kept on the host, beside the autograded notebooks (never in a
sandbox, never in the student kit), so a re-grade draws the same cases. Turned off with
``c.CourseGrading.per_student_hidden = False`` (every student then meets the same hidden
cases, drawn from fixed seeds).
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from coursebase.model import Course

SECRET_FILE = ".hidden-cases-secret"
# Students drawn in one reference run (each run also repeats the notebook's visible part).
PER_RUN = 20


def per_student_hidden(course: Course) -> bool:
    config = course.config
    section = config["CourseGrading"] if config is not None and "CourseGrading" in config else {}
    return section.get("per_student_hidden", True) is not False


def course_secret(course: Course) -> bytes:
    """The course's secret (created, mode 0600, the first time it is needed)."""
    path = Path(course.autograded_root) / SECRET_FILE
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:   # another grader made it meanwhile
        return bytes.fromhex(path.read_text().strip())
    with os.fdopen(descriptor, "w") as handle:
        handle.write(secrets.token_hex(32) + "\n")
    return bytes.fromhex(path.read_text().strip())


def student_seed(secret: bytes, assignment: str, student: str) -> int:
    digest = hmac.new(secret, f"{assignment}\0{student}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "little")


def revealed_tests(course: Course, assignment: str, test_ids: list[str], now=None) -> frozenset:
    """The test cells whose failing hidden check feedback may show now: per the course's
    ``c.CourseGrading.reveal_hidden`` ({assignment: {test id or "*": "never" | "after_due_date"}}),
    once the assignment's due date (c.CourseDeadlines.due) has passed. Never without a due
    date, and never where hidden cases are shared between students."""
    from datetime import datetime, timezone

    config = course.config
    section = config["CourseGrading"] if config is not None and "CourseGrading" in config else {}
    policy = section.get("reveal_hidden", {})
    policy = policy.get(assignment, {}) if isinstance(policy, dict) else {}
    if not isinstance(policy, dict) or not per_student_hidden(course):
        return frozenset()
    from .late import configured_due
    due = configured_due(course, assignment)
    if due is None or (now or datetime.now(timezone.utc)) < due:
        return frozenset()
    return frozenset(t for t in test_ids if policy.get(t, policy.get("*", "never")) == "after_due_date")
