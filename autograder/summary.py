"""The table printed at the end of `course grade`: one row per submission, and how its
notebook's run ended, in words an instructor can act on."""
from __future__ import annotations

import re
from collections import Counter

# How a run ended, from the grader's status (autograder/judge.py's describe_end and
# autograder/grade.py's own statuses), in the order the summary counts them.
KINDS = (
    ("timed out", ("timed out",)),
    ("over a limit", ("CPU time limit", "killed", "memory limit", "output limit")),
    ("crashed", ("kernel died", "sandbox stopped responding", "notebook exited", "could not run")),
    ("unreadable", ("unreadable notebook", "no submitted notebook")),
    ("grader error", ("grader error", "not graded", "gradebook write failed")),
)
# An exception raised by the student's code, as the grader quotes it in a test's message
# (TestFailure is a wrong answer, not a crash).
_RAISED = re.compile(r"\b(?!TestFailure\b)[A-Z]\w*(Error|Exception|Exit|Interrupt)\b")


def run_kind(row) -> str:
    """ok, ok with errors raised in cells, timed out, over a limit, crashed, unreadable or
    grader error (tried again by the next `course grade`)."""
    status = row.status or ""
    for kind, starts in KINDS:
        if status.startswith(starts):
            return kind
    if status != "ok":
        return "crashed"
    if any(not t.passed and _RAISED.search(t.message) for t in row.tests):
        return "ok, errors raised"
    return "ok"


def _points(value: float) -> str:
    return f"{value:g}"


def print_summary(rows, stream) -> None:
    if not rows:
        print("no submissions graded", file=stream)
        return
    from tabulate import tabulate

    kinds = [run_kind(r) for r in rows]
    table = tabulate([[row.student, f"{_points(row.score)}/{_points(row.max_score)}", kind,
                       "" if row.message == "ok" else row.message] for row, kind in zip(rows, kinds)],
                     headers=["student", "score", "run", "message"], tablefmt="plain",
                     colalign=("left", "right", "left", "left"), disable_numparse=True)
    for line in table.splitlines():
        print(line.rstrip(), file=stream)
    total = len(rows)
    mean = sum(r.score for r in rows) / total
    counted = Counter(kinds)
    order = ["ok", "ok, errors raised"] + [kind for kind, _ in KINDS] + ["crashed"]
    parts = [f"{counted[k]} {k}" for k in dict.fromkeys(order) if counted[k]]
    print(f"{total} submission(s): {', '.join(parts)}; mean score {mean:.2f}/{_points(rows[0].max_score)}",
          file=stream)
    if counted["grader error"]:
        print("rows marked 'grader error' are not final: run `course grade` again to retry them", file=stream)
