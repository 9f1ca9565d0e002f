"""Throughput of `course grade` (sandboxed, parallel) against stock `nbgrader autograde`.

Both grade the same submissions of a released assignment in the same run, each in its
own copy of a throw-away course (own gradebook), from the command line, start-up
included. `course grade` runs twice: a first batch, which runs the instructor's reference
notebook, and a later one (``--force``, same submissions), which reuses the reference run
kept from the first, as every batch after an assignment's first does. Both batches run
twice: with each student's own hidden cases (the default: the first batch draws them in
extra reference runs, the later one reuses them) and with hidden cases shared by the
class (``c.CourseGrading.per_student_hidden = False``), so their cost shows. Prints wall times,
the throughput ratios, and whether stock and ours agree on scores. Stock nbgrader's own
failures (a cell over its 30 s timeout on a busy machine) are counted, not fatal.

    .venv/bin/python bench/bench_grading.py [--submissions 20] [--assignment 03_autograd] [--workers N]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from coursebase.paths import REPO
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from attacks import inject  # noqa: E402 - the same course builder the tests use


def _scores(root: Path, assignment: str) -> dict[str, float]:
    with sqlite3.connect(root / "var" / "gradebook.db") as connection:
        rows = connection.execute(
            "select s.student_id, sum(coalesce(g.manual_score, g.auto_score, 0)) "
            "from submitted_assignment s join assignment a on a.id = s.assignment_id "
            "join submitted_notebook n on n.assignment_id = s.id join grade g on g.notebook_id = n.id "
            "where a.name = ? group by s.student_id", (assignment,)).fetchall()
    return {student: float(score) for student, score in rows}


def _timed(command: list[str], cwd: Path, may_fail: bool = False) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0 and not may_fail:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    return elapsed, result.stdout + result.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=20)
    parser.add_argument("--assignment", default="03_autograd")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="bench-grading-"))
    try:
        stock = inject.make_course(scratch / "stock", args.assignment)
        honest = inject.honest(stock, args.assignment)
        partial = inject.honest(stock, args.assignment, keep=0.5)
        blank = inject.released(stock, args.assignment)
        for number in range(args.submissions):
            notebook = (honest, partial, blank)[number % 3]
            inject.submit(stock, args.assignment, f"student{number:03d}", notebook)
        ours = scratch / "ours"
        shutil.copytree(stock, ours)
        shared = scratch / "shared"
        shutil.copytree(stock, shared)
        with open(shared / "course" / "nbgrader_config.py", "a") as config:
            config.write("\nc.CourseGrading.per_student_hidden = False\n")

        # nbgrader finds course/nbgrader_config.py on the Jupyter config path.
        nbgrader = [str(Path(sys.executable).parent / "nbgrader"), "autograde", args.assignment]
        os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
        os.environ["JUPYTER_CONFIG_PATH"] = str(stock / "course")
        stock_seconds, stock_log = _timed(nbgrader, stock, may_fail=True)
        stock_errors = stock_log.count("There was an error processing assignment")
        course = [sys.executable, "-m", "course.cli", "grade", args.assignment, "--root", str(ours),
                  "--workers", str(args.workers)]
        first_seconds, _ = _timed(course, REPO)
        later_seconds, _ = _timed(course + ["--force"], REPO)
        course_shared = [*course[:6], str(shared), *course[7:]]
        shared_first, _ = _timed(course_shared, REPO)
        shared_later, _ = _timed(course_shared + ["--force"], REPO)

        stock_scores, our_scores = _scores(stock, args.assignment), _scores(ours, args.assignment)
        agree = sum(1 for s in stock_scores if stock_scores[s] == our_scores.get(s))
        n = args.submissions
        print(f"assignment {args.assignment}, {n} submissions, {os.cpu_count()} cores, "
              f"course grade --workers {args.workers} (bubblewrap sandbox on)")
        print(f"stock nbgrader autograde: {stock_seconds:7.1f} s  ({n / stock_seconds:.2f} notebooks/s)"
              + (f", {stock_errors} submission(s) it failed to grade" if stock_errors else ""))
        print(f"course grade, first batch: {first_seconds:6.1f} s  ({n / first_seconds:.2f} notebooks/s), "
              f"ratio {stock_seconds / first_seconds:.1f}x")
        print(f"course grade, later batch: {later_seconds:6.1f} s  ({n / later_seconds:.2f} notebooks/s), "
              f"ratio {stock_seconds / later_seconds:.1f}x (reference run kept)")
        print(f"hidden cases shared by the class instead: first batch {shared_first:6.1f} s, later batch "
              f"{shared_later:6.1f} s; each student's own cost {first_seconds / shared_first:.2f}x and "
              f"{later_seconds / shared_later:.2f}x of that")
        print(f"same total score for {agree}/{len(stock_scores)} submissions graded by both")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
