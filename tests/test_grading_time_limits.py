"""Time limits per cell, from the course's configuration (issue 27, items 10 and 14).

nbgrader's own `c.Execute.timeout` in course/nbgrader_config.py is the time limit of one
cell, for `course grade` and `course validate` alike. A test whose probe loops (or an answer
that crashes the notebook's process when called) is stopped there and reported as such, and
the notebook runs again without that cell, so the independent tests after it keep their
points. Before, one loop timed the whole notebook out and every later test said "not run".
"""
from __future__ import annotations

import copy
import time

import pytest

from attacks import inject

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading_time_limits")]

ASSIGNMENT = "03_autograd"
CELL_SECONDS = 4
LOOP = "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass\n"


def _answer(notebook, grade_id):
    return next(c for c in notebook.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


def _backward_that(notebook, body: str):
    """The honest notebook whose Value.backward does ``body`` when called (defined after the
    class, so the class itself still works)."""
    notebook = copy.deepcopy(notebook)
    cell = _answer(notebook, "value_backward")
    indented = "".join(f"    {line}\n" for line in body.splitlines())
    cell.source += f"\n\ndef _stuck(self, retain_graph=False):\n{indented}\nValue.backward = _stuck\n"
    return notebook


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from coursebase.model import Course
    from autograder.grade import Grader

    root = inject.make_course(tmp_path_factory.mktemp("limits") / "course", ASSIGNMENT)
    config = root / "course" / "nbgrader_config.py"
    text = config.read_text()
    assert "c.Execute.timeout = 120" in text
    config.write_text(text.replace("c.Execute.timeout = 120", f"c.Execute.timeout = {CELL_SECONDS}")
                      .replace("c.CourseLimits.notebook_timeout = 300", "c.CourseLimits.notebook_timeout = 60"))
    honest = inject.honest(root, ASSIGNMENT)
    inject.submit(root, ASSIGNMENT, "honest", honest)
    inject.submit(root, ASSIGNMENT, "loop_in_probe", _backward_that(honest, LOOP))
    inject.submit(root, ASSIGNMENT, "exit_in_probe", _backward_that(honest, "import os\nos._exit(3)"))
    inject.submit(root, ASSIGNMENT, "loop_in_scratch_cell", inject.insert(honest, LOOP, "middle"))
    grader = Grader(Course.load(root), ASSIGNMENT, workers=2)
    started = time.monotonic()
    rows = {row.student: row for row in grader.run()}
    return {"rows": rows, "grader": grader, "root": root, "seconds": time.monotonic() - started}


def _tests(row):
    return {t.grade_id: t for t in row.tests}


def test_limits_come_from_the_course_configuration(graded):
    limits = graded["grader"].limits
    assert (limits.per_cell, limits.wall_seconds) == (CELL_SECONDS, 60)


def test_a_probe_that_loops_costs_its_own_tests_only(graded):
    rows = graded["rows"]
    assert rows["honest"].score == rows["honest"].max_score
    tests = _tests(rows["loop_in_probe"])
    for name in ("test_backward_values", "test_backward_freeing"):
        assert not tests[name].passed
        assert tests[name].message.startswith(f"this test timed out after {CELL_SECONDS} s"), tests[name].message
    # Independent tests after the loop: the kinks' probe runs the closures itself, the rest is torch.
    later = ("test_value_kinks", "test_sum_to_shape", "test_logsumexp_forward", "test_logsumexp_backward")
    assert all(tests[name].passed for name in later), [(n, tests[n].message) for n in later]
    assert rows["loop_in_probe"].status.startswith("timed out at cell"), rows["loop_in_probe"].status
    assert "the notebook ran again without it" in rows["loop_in_probe"].status


def test_a_probe_that_ends_the_process_costs_its_own_tests_only(graded):
    tests = _tests(graded["rows"]["exit_in_probe"])
    assert "ended the notebook's process (exit code 3)" in tests["test_backward_values"].message
    assert tests["test_value_kinks"].passed and tests["test_logsumexp_backward"].passed


def test_a_scratch_cell_that_loops_costs_nothing(graded):
    row = graded["rows"]["loop_in_scratch_cell"]
    assert row.score == row.max_score, [(t.grade_id, t.message) for t in row.tests if not t.passed]
    assert "your code cell" in row.status or "timed out at cell" in row.status, row.status


def test_validate_uses_the_same_limits_and_says_what_it_is_doing(graded, tmp_path):
    """Validate reads the same configuration, gives the same verdict, and prints where it is
    while a cell runs long instead of waiting silently."""
    import io

    import nbformat

    from autograder.validate import NotebookValidator

    path = tmp_path / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    path.parent.mkdir()
    source = graded["root"] / "var" / "submitted" / "loop_in_probe" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nbformat.write(nbformat.read(str(source), as_version=4), str(path))
    said = io.StringIO()
    with NotebookValidator(root=graded["root"]) as validator:
        assert validator.limits.per_cell == CELL_SECONDS
        validator.progress = lambda line: said.write(line + "\n")
        validator.progress_every = 1.0
        result = validator.validate(path).result
    tests = _tests(result)
    assert tests["test_backward_values"].message.startswith(f"this test timed out after {CELL_SECONDS} s")
    assert tests["test_value_kinks"].passed
    assert "still running test_backward_values" in said.getvalue(), said.getvalue()


def test_limits_are_read_from_the_configuration_and_shipped_to_the_kit():
    """One place: the course's nbgrader_config.py; the student kit's configuration repeats it,
    so the kit's Validate stops a cell where grading does."""
    from traitlets.config import Config

    from autograder.sandbox import Limits
    from coursebase.model import grading_limits
    from course.student_kit import limits_settings

    config = Config()
    config.Execute.timeout = 7
    config.CourseLimits.notebook_timeout = 40
    config.CourseLimits.memory_mb = "lots"   # not a number: the default
    assert grading_limits(config) == {"cell_seconds": 7, "notebook_seconds": 40, "memory_mb": 2048}
    limits = Limits.of_course(config)
    assert (limits.per_cell, limits.wall_seconds, limits.memory_bytes) == (7, 40, 2048 * 1024**2)
    assert Limits.of_course(config, cell_seconds=3).per_cell == 3   # the command line wins
    kit = Config()
    exec(compile(limits_settings(config), "<kit config>", "exec"), {"c": kit})  # noqa: S102 - our own lines
    assert grading_limits(kit) == grading_limits(config)
