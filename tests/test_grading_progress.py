"""`course grade`'s progress (tqdm) and summary, on rows as the grader makes them (no grading)."""
from __future__ import annotations

import io

import pytest

from autograder.judge import TestResult as Result
from autograder.progress import ProgressBar
from autograder.results import SubmissionRow
from autograder.summary import print_summary, run_kind


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _row(student, status="ok", score=4.0, messages=("",)):
    tests = [Result(f"t{i}", 0.0, 2.0, not m, m) for i, m in enumerate(messages)]
    return SubmissionRow(student, score, 4.0, status, status, tests)


def test_redirected_output_gets_a_line_per_finished_submission():
    stream = io.StringIO()
    bar = ProgressBar(2, "grading 03_autograd", stream)
    bar.start("ada")
    bar.start("bo")
    bar.advance(_row("bo", score=2.0))
    bar.advance(_row("ada", "timed out at cell 7"))
    lines = stream.getvalue().splitlines()
    assert lines[0] == "grading 03_autograd: 2 submission(s) to grade"
    assert lines[1].startswith("grading 03_autograd: 1/2 bo: 2/4 ok in ")
    assert lines[2].startswith("grading 03_autograd: 2/2 ada: 4/4 timed out in ")
    assert "\r" not in stream.getvalue()


def test_a_terminal_shows_who_is_running():
    stream = Terminal()
    bar = ProgressBar(3, "grading 03_autograd", stream)
    bar.start("ada")
    bar.start("bo")
    assert "running: ada, bo" in stream.getvalue()
    bar.advance(_row("ada"))
    assert stream.getvalue().rsplit("\r", 1)[-1].count("running: bo") == 1
    assert "1/3" in stream.getvalue()
    bar.close()


@pytest.mark.parametrize("status, messages, kind", [
    ("ok", ("",), "ok"),
    ("ok", ("TestFailure: dot([1], [2]): expected 2, got 3",), "ok"),
    ("ok", ("NameError: name 'Value' is not defined",), "ok, errors raised"),
    ("timed out at cell 5 (test_value)", ("",), "timed out"),
    ("CPU time limit at cell 3", ("",), "over a limit"),
    ("memory limit at cell 2", ("",), "over a limit"),
    ("killed at cell 3 (q1): over the memory limit (2048 MiB) or the CPU time limit (60 s)", ("",), "over a limit"),
    ("kernel died at cell 4 (SIGSEGV)", ("",), "crashed"),
    ("notebook exited at cell 9 (exit code 3)", ("",), "crashed"),
    ("sandbox stopped responding", ("",), "crashed"),
    ("unreadable notebook: larger than 64 MiB", ("",), "unreadable"),
    ("grader error: OSError: boom", ("",), "grader error"),
    ("something new", ("",), "crashed"),
])
def test_the_summary_tells_how_each_run_ended(status, messages, kind):
    assert run_kind(_row("ada", status, messages=messages)) == kind


def test_summary_counts_each_kind():
    stream = io.StringIO()
    print_summary([_row("ada"), _row("bo", "timed out at cell 2"), _row("cy", "kernel died at cell 1 (SIGKILL)"),
                   _row("di", "grader error: x")], stream)
    text = stream.getvalue()
    assert "4 submission(s): 1 ok, 1 timed out, 1 crashed, 1 grader error; mean score 4.00/4" in text
    assert "run `course grade` again to retry them" in text
    assert text.splitlines()[1].split()[:3] == ["ada", "4/4", "ok"]
