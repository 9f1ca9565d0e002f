"""`course validate` against `course grade`: where do they disagree on a batch's notebooks?

The grader's verdict on a test cell rests either on its visible checks (then Validate must
give the same points and message) or on a hidden check (Validate cannot see it: there the
test must pass). The run's status must be the same; an unreadable notebook must be refused
for the same reason.
"""
from __future__ import annotations

from pathlib import Path


def differences(rows: dict, root: Path, assignment: str, validator, students=None) -> list[tuple]:
    from autograder.validate import ValidationError

    found = []
    for student in sorted(students or rows):
        row = rows[student]
        path = root / "course" / "submitted" / student / assignment / f"{assignment}.ipynb"
        try:
            seen = validator.validate(path)
        except ValidationError as error:
            if str(error) != row.status:
                found.append((student, row.status, str(error)))
            continue
        if seen.result.status != row.status:
            found.append((student, row.status, seen.result.status))
        for graded, judged in zip(row.tests, seen.result.tests):
            if graded["hidden"]:
                if not judged.passed:
                    found.append((student, graded["grade_id"], "hidden", judged.message))
            elif (graded["points"], graded["message"]) != (judged.points, judged.message):
                found.append((student, graded["grade_id"], graded["message"], judged.message))
    return found
