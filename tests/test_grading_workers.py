"""`course grade` with any number of waiting submissions and any number of workers.

Week 2 of a term: a batch is graded, then one late submission arrives (or a re-upload is
placed with `collect --replace-graded`) and is graded with the default workers. The batch
starts one sandbox per submitted student (up to --workers), then closes those it does not
need once it knows how few wait; closing them while they were still starting used to fail
the whole command with `sandbox did not start: no message` (issue 27, item 1).
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from attacks import inject

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading_workers")]

ASSIGNMENT = "04_autograd_advanced"   # one kind of run (torch): the cheapest full batch
REPO = inject.REPO


def _grade(root, *extra):
    command = [sys.executable, "-m", "course.cli", "grade", ASSIGNMENT, "--root", str(root), *extra]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


def _scores(output: str) -> dict[str, str]:
    """student -> score column of the summary table."""
    rows = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith("s") and "/" in parts[1]:
            rows[parts[0]] = parts[1]
    return rows


@pytest.fixture(scope="module")
def course_root(tmp_path_factory):
    return inject.make_course(tmp_path_factory.mktemp("workers") / "course", ASSIGNMENT)


def test_any_number_waiting_with_any_number_of_workers(course_root):
    maximum = sum(points for _, points in inject.test_points(course_root, ASSIGNMENT))
    full = f"{maximum:g}/{maximum:g}"
    honest = inject.honest(course_root, ASSIGNMENT)

    # 0 waiting, nothing submitted: refused, naming what to run.
    nothing = _grade(course_root, "--workers", "3")
    assert nothing.returncode == 1 and "no submissions" in nothing.stderr, nothing.stderr

    # The first batch: two students, two workers.
    for student in ("s0", "s1"):
        inject.submit(course_root, ASSIGNMENT, student, honest)
    first = _grade(course_root, "--workers", "2")
    assert first.returncode == 0, first.stderr
    assert _scores(first.stdout) == {"s0": full, "s1": full}

    # 0 waiting after a batch, 8 workers: nothing graded again, exit 0.
    again = _grade(course_root, "--workers", "8")
    assert again.returncode == 0, again.stderr
    assert "to grade" not in again.stderr and _scores(again.stdout) == {"s0": full, "s1": full}

    # One late submission, 8 workers (3 sandboxes started, 2 closed while starting).
    inject.submit(course_root, ASSIGNMENT, "s2", honest)
    late = _grade(course_root, "--workers", "8")
    assert late.returncode == 0, late.stderr
    assert "1 submission(s) to grade" in late.stderr
    assert _scores(late.stdout) == {"s0": full, "s1": full, "s2": full}

    # A re-upload (what `collect --replace-graded` places), default workers (the cores).
    inject.submit(course_root, ASSIGNMENT, "s0", inject.honest(course_root, ASSIGNMENT, keep=0.5))
    reupload = _grade(course_root)
    assert reupload.returncode == 0, reupload.stderr
    assert "1 submission(s) to grade" in reupload.stderr
    scores = _scores(reupload.stdout)
    assert scores["s1"] == scores["s2"] == full and scores["s0"] != full

    # Two waiting, one worker; then two waiting, three workers.
    for student in ("s3", "s4"):
        inject.submit(course_root, ASSIGNMENT, student, honest)
    one = _grade(course_root, "--workers", "1")
    assert one.returncode == 0, one.stderr
    assert "2 submission(s) to grade" in one.stderr
    for student in ("s5", "s6"):
        inject.submit(course_root, ASSIGNMENT, student, honest)
    three = _grade(course_root, "--workers", "3")
    assert three.returncode == 0, three.stderr
    assert "2 submission(s) to grade" in three.stderr
    assert sorted(_scores(three.stdout)) == [f"s{n}" for n in range(7)]
