"""`course validate` against `course grade`: where do they disagree on a batch's notebooks?

The grader's verdict on a test cell rests either on its visible checks (then Validate must
give the same points and message) or on a hidden check (Validate cannot see it: there the
test must pass). The run's status must be the same; an unreadable notebook must be refused
for the same reason. The notebooks are validated by ``workers`` validators in parallel, each
with its own sandboxes, as the batch was graded.
"""
from __future__ import annotations

import threading
from pathlib import Path


def differences(rows: dict, root: Path, assignment: str, limits=None, workers: int = 2) -> list[tuple]:
    students = sorted(rows)
    found: list[tuple] = []
    threads = [threading.Thread(target=_compare_or_report, args=(rows, root, assignment, limits, students[k::workers], found))
               for k in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(found, key=str)


def _compare_or_report(rows, root, assignment, limits, students, found) -> None:
    """A comparison that breaks is a difference, not an exception lost in its thread."""
    try:
        _compare(rows, root, assignment, limits, students, found)
    except Exception as error:  # noqa: BLE001
        found.append(("(the comparison itself)", "raised", repr(error)))


def _compare(rows, root, assignment, limits, students, found) -> None:
    from autograder.validate import NotebookValidator, ValidationError

    with NotebookValidator(limits, root=root) as validator:
        for student in students:
            row = rows[student]
            path = root / "var" / "submitted" / student / assignment / f"{assignment}.ipynb"
            try:
                seen = validator.validate(path)
            except ValidationError as error:
                if str(error) != row.status:
                    found.append((student, row.status, str(error)))
                continue
            except Exception as error:  # noqa: BLE001 - reported as a difference, not lost in a thread
                found.append((student, "validate raised", repr(error)))
                continue
            if seen.result.status != row.status:
                found.append((student, row.status, seen.result.status))
            if len(row.tests) != len(seen.result.tests):
                found.append((student, f"{len(row.tests)} tests graded", f"{len(seen.result.tests)} validated"))
            for graded, judged in zip(row.tests, seen.result.tests):
                if graded.hidden:
                    if not judged.passed:
                        found.append((student, graded.grade_id, "hidden", judged.message))
                elif (graded.points, graded.message) != (judged.points, judged.message):
                    found.append((student, graded.grade_id, graded.message, judged.message))
