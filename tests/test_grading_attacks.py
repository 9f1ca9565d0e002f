"""The attack corpus (tests/attacks/) against a real released assignment, graded in one batch.

Every attack is injected into a submission; it must score no more than the same
submission without it. Honest variants (unused imports of torch and numpy in an exercise
graded without them, a syntax slip fixed in a later cell, prints, warnings, helpers, another
class design, magics, extra random draws, float64, changed torch settings, stderr, a scratch
cell) keep full marks. `course validate` gives every notebook of the batch the same verdict,
message for message, as grading gives its visible checks. Nothing of a hidden case reaches
a feedback page; student data the host cannot use is a final, explained status; the host's
cost per submission is bounded. The gradebook, the other students' files, the host's
network and file system come out untouched, and no process outlives the batch.
"""
from __future__ import annotations

import copy
import hashlib
import html
import json
import pickle
import resource
import socket
import sqlite3
import threading
from pathlib import Path

import nbformat
import pytest

from attacks import inject, same_judgement

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading_attacks")]

ASSIGNMENT = "03_autograd"
CODE_ATTACKS = [
    "patch_comparisons", "patch_builtins", "patch_check_helpers_late", "tensor_subclass_liar", "shadow_modules",
    "object_liar", "leak_hidden_tests", "ipython_hooks", "displayhook_tricks", "read_solutions", "write_gradebook", "network",
    "frame_expected", "shadow_helpers", "seed_in_feedback", "leak_hidden_arguments", "unconvertible_results",
]
CRASH_ATTACKS = [
    "exit_os", "exit_sys", "segfault",  # the kernel ends mid-notebook, and the batch goes on
    "loop_ignoring_sigint", "memory_bomb", "fork_bomb",  # past the time, memory and process limits
    "output_flood", "disk_fill",  # past the output and disk limits
    "detached_child",  # a process that escapes its parent and kills what it sees: none outlives the batch
    "malicious_pickle",  # the student's own pickle, unpickled in the sandbox: only the sandbox is hit
    "observation_flood",  # host memory: JSON small as text, huge once parsed (across students: test_grading_isolation)
    "memfd_outside_limit",  # memory the address-space limit never sees (memfd, System V): seccomp refuses it
]
HONEST_VARIANTS = ["honest_stderr", "honest_torch_settings", "honest_float64", "honest_unused_imports",
                   "honest_syntax_slip", "honest_prints", "honest_warnings", "honest_random_draws", "honest_helpers",
                   "honest_class_hierarchy", "honest_magics", "honest_scratch"]
STRUCTURAL = ["duplicated_tests", "deleted_tests", "edited_tests", "stripped_metadata_tests"]


class _Listener:
    """A loopback TCP server that counts who connects (nobody should)."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            connection.close()


class _Parcel:
    """Unpickling this runs a shell command: on the host it would create the marker file."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        import os
        return (os.system, (self.command,))


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    from coursebase.model import Course
    from autograder.grade import Grader
    from autograder.sandbox import Limits, processes_in

    root = inject.make_course(tmp_path_factory.mktemp("attacks") / "course", ASSIGNMENT)
    listener = _Listener()
    marker = tmp_path_factory.mktemp("host") / "pwned"
    honest = inject.honest(root, ASSIGNMENT)
    partial = inject.honest(root, ASSIGNMENT, keep=0.5)
    wrong = inject.wrong(root, ASSIGNMENT)
    expected = {"honest": ("max", None), "partial": ("baseline", None), "blank": ("baseline", None),
                "wrong": ("baseline", None)}
    inject.submit(root, ASSIGNMENT, "honest", honest)
    inject.submit(root, ASSIGNMENT, "partial", partial)
    inject.submit(root, ASSIGNMENT, "wrong", wrong)
    inject.submit(root, ASSIGNMENT, "blank", inject.released(root, ASSIGNMENT))
    for name in CODE_ATTACKS:
        source, place = inject.attack_source(name)
        source = source.replace("PORT", str(listener.port))
        inject.submit(root, ASSIGNMENT, name, inject.insert(partial, source, place))
        expected[name] = ("<=", "partial")
        # The same attack on answers that return wrong values (no exception to hide behind).
        inject.submit(root, ASSIGNMENT, f"{name}__wrong", inject.insert(wrong, source, place))
        expected[f"{name}__wrong"] = ("<=", "wrong")
    for name in CRASH_ATTACKS:
        source, place = inject.attack_source(name)
        notebook = inject.insert(honest, source, place)
        files = {"evil.pkl": pickle.dumps(_Parcel(f"touch {marker}"))} if name == "malicious_pickle" else None
        inject.submit(root, ASSIGNMENT, name, notebook, files=files)
        expected[name] = ("<=", "honest")
    for name in HONEST_VARIANTS:
        source, place = inject.attack_source(name)
        inject.submit(root, ASSIGNMENT, name, inject.insert(honest, source, place))
        expected[name] = ("max", None)
    for name in STRUCTURAL:
        inject.submit(root, ASSIGNMENT, name, getattr(inject, name)(partial))
        expected[name] = ("==", "partial")
    linked = inject.submit(root, ASSIGNMENT, "symlink_to_solution", raw=b"")
    linked.unlink()
    linked.symlink_to(root / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    expected["symlink_to_solution"] = ("==", "blank")
    # The slip: a syntax error in the backward answer, never fixed.
    slip = copy.deepcopy(honest)
    cell = next(c for c in slip.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "value_backward")
    cell.source = cell.source.replace("def value_backward(self, retain_graph=False):",
                                      "def value_backward(self, retain_graph=False)", 1)
    inject.submit(root, ASSIGNMENT, "syntax_error", slip)
    expected["syntax_error"] = ("<=", "honest")
    source, _ = inject.attack_source("markdown_table")
    builder: dict = {}
    exec(source, builder)  # noqa: S102 - our own attack file
    table = copy.deepcopy(honest)
    table.cells.append(nbformat.v4.new_markdown_cell(builder["markdown_table_cell"]()))
    inject.submit(root, ASSIGNMENT, "markdown_table", table)
    expected["markdown_table"] = ("max", None)
    inject.submit(root, ASSIGNMENT, "invalid_json", raw=b'{"cells": [')
    inject.submit(root, ASSIGNMENT, "empty_file", raw=b"")
    expected["invalid_json"] = expected["empty_file"] = ("==", "blank")

    course = Course.load(root)
    before = _digests(root / "var" / "submitted")
    grader = Grader(course, ASSIGNMENT, workers=2,
                    limits=Limits(wall_seconds=10, cpu_seconds=10, memory_bytes=1024**3))
    rows = {row.student: row for row in grader.run()}
    # read now: once the batch's PID namespaces are gone the kernel may give their numbers to
    # sandboxes that later tests (or another pytest worker) start
    left_running = processes_in(grader.pid_namespaces)
    return {
        "left_running": left_running, "root": root, "rows": rows, "expected": expected, "listener": listener, "marker": marker,
        "before": before, "after": _digests(root / "var" / "submitted"), "grader": grader,
        "points": dict(inject.test_points(root, ASSIGNMENT)), "honest_notebook": honest,
    }


def test_every_submission_has_a_row_with_a_status(batch):
    assert set(batch["rows"]) == set(batch["expected"])
    for row in batch["rows"].values():
        assert row.status and row.message
        assert len(row.tests) == len(batch["points"])


def test_baselines(batch):
    rows = batch["rows"]
    assert rows["honest"].score == rows["honest"].max_score == sum(batch["points"].values())
    assert rows["blank"].score == 0
    assert 0 < rows["partial"].score < rows["partial"].max_score
    assert rows["wrong"].score == rows["partial"].score


@pytest.mark.parametrize("name", CODE_ATTACKS + [f"{n}__wrong" for n in CODE_ATTACKS] + CRASH_ATTACKS
                         + STRUCTURAL + ["invalid_json", "empty_file", "symlink_to_solution"])
def test_attack_scores_no_more_than_without_it(batch, name):
    rows = batch["rows"]
    relation, baseline = batch["expected"][name]
    got, base = rows[name].score, rows[baseline].score
    assert got <= base, f"{name}: {got} > {baseline} {base}: {rows[name].tests}"
    if relation == "==":
        assert got == base, f"{name}: {got} != {baseline} {base}: {rows[name].message}"


@pytest.mark.parametrize("name", HONEST_VARIANTS + ["markdown_table"])
def test_honest_variants_keep_full_marks(batch, name):
    row = batch["rows"][name]
    assert row.score == row.max_score, [t for t in row.tests if not t.passed]


def test_validate_and_grading_are_one_judgement(batch):
    """Same status and, test by test, the same points and message, except where grading's
    verdict rests on hidden checks (Validate cannot see them: there it passes)."""
    differ = same_judgement.differences(batch["rows"], batch["root"], ASSIGNMENT, batch["grader"].limits)
    assert not differ, differ   # so the honest variants' full marks hold in Validate too


@pytest.mark.parametrize("name", ["exit_os", "segfault", "loop_ignoring_sigint", "memory_bomb", "fork_bomb",
                                  "disk_fill", "output_flood"])
def test_points_before_a_crash_are_kept(batch, name):
    source, _ = inject.attack_source(name)
    marker = source.splitlines()[1]
    notebook = inject.insert(batch["honest_notebook"], source, "middle")
    before = inject.tests_before(notebook, marker)
    row = batch["rows"][name]
    earned = {t.grade_id for t in row.tests if t.passed}
    assert set(before) <= earned, f"{name} lost points earned before it: {row.message}"


@pytest.mark.parametrize("name, reason", [
    ("loop_ignoring_sigint", "timed out at cell"),
    ("segfault", "kernel died at cell"),
    ("exit_os", "exited at cell"),
    ("memory_bomb", "memory limit at cell"),
    ("invalid_json", "unreadable notebook"),
    ("empty_file", "unreadable notebook: the file is empty"),
    ("symlink_to_solution", "symbolic link"),
    ("duplicated_tests", "duplicated"),
    ("deleted_tests", "deleted: restored"),
    ("edited_tests", "edited: restored"),
])
def test_status_says_why(batch, name, reason):
    assert reason in batch["rows"][name].message


def test_gradebook_holds_one_row_per_student_with_its_score(batch):
    database = batch["root"] / "var" / "gradebook.db"
    with sqlite3.connect(database) as connection:
        counts = connection.execute(
            "select student_id, count(*) from submitted_assignment group by student_id").fetchall()
    assert sorted(s for s, _ in counts) == sorted(batch["rows"])
    assert all(n == 1 for _, n in counts)
    from nbgrader.api import Gradebook
    from coursebase.model import Course
    course = Course.load(batch["root"])
    with Gradebook(course.db_url, course.course_id) as gradebook:
        for student, row in batch["rows"].items():
            assert gradebook.find_submission(ASSIGNMENT, student).score == pytest.approx(row.score)


def test_submissions_and_host_are_untouched(batch):
    assert batch["after"] == batch["before"]
    assert not batch["marker"].exists()
    assert batch["listener"].connections == 0


def test_nothing_outlives_the_batch(batch):
    assert batch["grader"].pid_namespaces
    assert batch["left_running"] == []


def test_no_secret_reaches_the_student(batch):
    """The attack looks for a seed in the grader's frames and reports what it found."""
    messages = " ".join(t.message for t in batch["rows"]["seed_in_feedback"].tests)
    assert "seed=none" in messages, messages
    assert not list((batch["root"] / "var" / "autograded").glob(".seed-*"))


def test_feedback_never_shows_hidden_test_source(batch):
    from coursebase.model import Course
    from autograder.feedback import write_feedback
    from autograder.plan import load_spec

    spec = load_spec(ASSIGNMENT, ASSIGNMENT, batch["root"] / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    hidden = [line for cell in spec.tests for line in cell.hidden_lines if len(line) > 20]
    assert hidden
    pages = write_feedback(Course.load(batch["root"]), ASSIGNMENT, release=False)
    assert len(pages) == len(batch["rows"])
    leak = batch["rows"]["leak_hidden_tests"]
    messages = " ".join(t.message for t in leak.tests)
    assert "ValueError" in messages, "the leak attempt did run"
    assert "nothing found" not in messages, "the attack found the probe source it tries to leak"
    for page in pages:
        text = html.unescape(page.read_text())
        shown = [line for line in hidden if line in " ".join(text.split())]
        assert not shown, f"{page.parent.parent.name}: {shown[:2]}"


def test_hidden_arguments_never_reach_feedback(batch):
    """The leak attack raises every probe argument it finds in memory: the visible cases'
    arguments show up in its messages, no hidden case's does (not even in other messages)."""
    from coursebase.model import Course
    from autograder.feedback import write_feedback
    view = batch["grader"].reference(None).view
    calls = [call for cells in view.calls.values() for call in cells]
    visible = {json.dumps(call["args"]) for call in calls if not call["hidden"]}
    hidden = {json.dumps(call["args"]) for call in calls if call["hidden"]} - visible
    hidden = {text for text in hidden if len(text) >= 12 and not any(text in seen for seen in visible)}
    assert len(hidden) > 50
    leak = " ".join(t.message for t in batch["rows"]["leak_hidden_arguments"].tests)
    assert "LEAK [" in leak and any(text[:20] in leak for text in visible), "the leak ran on visible cases"
    pages = write_feedback(Course.load(batch["root"]), ASSIGNMENT, release=False)
    for page in pages:
        text = html.unescape(page.read_text())
        shown = [args for args in hidden if args in text]
        assert not shown, f"{page.parent.parent.name}: {shown[:2]}"


def test_student_data_the_host_cannot_use_is_a_final_explained_status(batch):
    row = batch["rows"]["unconvertible_results"]
    assert not row.grader_fault and row.final, row.message
    messages = [t.message for t in row.tests]
    assert all("returned an unusable value" in m for m in messages), messages
    # A void scalar of 1.5 GB used to be built on the host: the grading process stays far below.
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 1536 * 1024


def test_large_student_markdown_is_shown_as_text(batch):
    row = batch["rows"]["markdown_table"]
    assert "markdown or raw cell(s) shown as plain text" in row.message
    notebook = nbformat.read(str(batch["root"] / "var" / "autograded" / "markdown_table" / ASSIGNMENT
                                 / f"{ASSIGNMENT}.ipynb"), as_version=4)
    last = notebook.cells[-1].source
    assert last.startswith('<div class="student-markdown"><pre>') and "<table>" not in last


def test_feedback_names_the_first_real_cause_and_the_limits(batch):
    syntax = {t.grade_id: t for t in batch["rows"]["syntax_error"].tests}
    message = syntax["test_backward_values"].message
    assert "AttributeError: 'Value' object has no attribute 'backward'" in message, message
    assert "answer cell value_backward raised SyntaxError: expected ':' (line 1)" in message, message
    assert "answer cell value_backward raised SyntaxError" in batch["rows"]["syntax_error"].message
    assert syntax["test_value_kinks"].passed, "the kinks do not need backward()"
    assert syntax["test_sum_to_shape"].passed, "the torch part does not need Value"
    loop = batch["rows"]["loop_ignoring_sigint"]
    assert "ran longer than its 10 s time limit" in loop.message, loop.message
    never = [t for t in loop.tests if t.message.startswith("not run")]
    assert never and all("Compare your result" not in t.hint for t in never), never


def test_a_blank_answer_says_it_is_not_answered_yet(batch):
    """Issue 27 item 13: 03's backward probes catch RuntimeError, NotImplementedError's base;
    a blank answer's test says it is not answered yet, not "got [['RuntimeError', '']]"."""
    tests = {t.grade_id: t.message for t in batch["rows"]["blank"].tests}
    assert "not answered yet (your code raised NotImplementedError)" in tests["test_backward_values"], tests
    assert "RuntimeError" not in tests["test_backward_values"]
