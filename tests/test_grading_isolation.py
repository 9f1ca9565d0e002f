"""Isolation between students, and what the grader writes on the host from student input.

Attacks here need an order (a later student graded in the same sandbox as an earlier one)
or look at the host's files, so they run in their own batch with one worker, where
students are graded in name order. Each ran against the previous design (commit c302172)
as its positive control; the evidence is in the report of the change that added them.
"""
from __future__ import annotations

import json
import queue
import re
import secrets
from html.parser import HTMLParser

import nbformat
import pytest

from attacks import inject, shared_answers

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading_isolation")]

ASSIGNMENT = "03_autograd"
MARK = "XSS_MARK"
PAYLOADS = [
    f'<img src=x onerror="{MARK}()">',
    f"<script>{MARK}()</script>",
    f'<a href="javascript:{MARK}()">link</a>',
    f"[md link](javascript:{MARK}())",
    f'<div onmouseover="{MARK}()">hover</div>',
    f'<svg><animate onbegin="{MARK}()"/></svg>',
    f'<a href="data:text/html,<script>{MARK}()</script>">data link</a>',
    f"[tabbed](java\tscript:{MARK}())",
]


def _markup_notebook(root):
    """Honest answers; markdown, raw cells and metadata that a careless renderer would run."""
    notebook = inject.honest(root, ASSIGNMENT)
    notebook.cells.insert(1, nbformat.v4.new_markdown_cell("\n\n".join(PAYLOADS)))
    raw = nbformat.v4.new_raw_cell(PAYLOADS[0])
    raw.metadata["raw_mimetype"] = "text/html"
    notebook.cells.insert(2, raw)
    answer = next(c for c in notebook.cells if c.cell_type == "code" and "solution" in str(c.metadata))
    copy_of_answer = nbformat.v4.new_code_cell(answer.source)
    copy_of_answer.metadata["nbgrader"] = {"grade_id": f'"><img src=x onerror="{MARK}()">', "solution": True,
                                           "grade": True, "points": 100}
    notebook.cells.append(copy_of_answer)
    return notebook


def _wrong_metadata_notebook(root):
    """Honest answers, and cells whose metadata have the wrong types."""
    notebook = inject.honest(root, ASSIGNMENT)
    strange = nbformat.v4.new_markdown_cell("metadata.nbgrader is a string here")
    strange.metadata["nbgrader"] = "oops"
    notebook.cells.insert(1, strange)
    listed = nbformat.v4.new_code_cell("x = 1")
    listed.metadata["nbgrader"] = ["grade_id", "points"]
    notebook.cells.append(listed)
    return notebook


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    from coursebase.model import Course
    from autograder.grade import Grader
    from autograder.sandbox import Limits

    root = inject.make_course(tmp_path_factory.mktemp("isolation") / "course", ASSIGNMENT)
    token = f"t{secrets.token_hex(6)}"   # fresh each run: the keyring outlives sandboxes
    honest = inject.honest(root, ASSIGNMENT)
    plan = {   # graded in this order, all in one sandbox (or its replacements)
        "a0_markup": _markup_notebook(root),
        "a0_metadata": _wrong_metadata_notebook(root),
        "a1_writer": shared_answers.writer(root, ASSIGNMENT, token),
        **{f"a2_reader_{c}": shared_answers.reader(root, ASSIGNMENT, token, c) for c in shared_answers.CHANNELS},
        "a4_poisoner": inject.insert(honest, *inject.attack_source("poison_output_path")),
        "a5_honest": honest,
        "a6_killer": inject.insert(honest, *inject.attack_source("kill_zygote")),
        "a7_honest": honest,
        "a8_blank": inject.released(root, ASSIGNMENT),
    }
    for student, notebook in plan.items():
        inject.submit(root, ASSIGNMENT, student, notebook)
    course = Course.load(root)
    grader = Grader(course, ASSIGNMENT, workers=1, limits=Limits(wall_seconds=20, cpu_seconds=20, memory_bytes=1024**3))
    rows = {row.student: row for row in grader.run()}
    return {"root": root, "course": course, "rows": rows, "grader": grader,
            "max": sum(p for _, p in inject.test_points(root, ASSIGNMENT))}


def test_one_worker_grades_in_name_order(batch):
    assert list(batch["rows"]) == sorted(batch["rows"])


def test_a_poisoned_sandbox_costs_later_students_nothing(batch):
    rows = batch["rows"]
    for student in ("a4_poisoner", "a5_honest", "a7_honest"):
        row = rows[student]
        assert (row.score, row.status, row.final) == (batch["max"], "ok", True), f"{student}: {row.message}"
        assert row.grader_fault == ""


@pytest.mark.parametrize("channel", shared_answers.CHANNELS)
def test_answers_do_not_pass_between_students(batch, channel):
    rows = batch["rows"]
    assert rows["a1_writer"].score == batch["max"], "the writer ran its answers"
    assert rows[f"a2_reader_{channel}"].score <= rows["a8_blank"].score == 0


def test_a_notebook_cannot_kill_its_sandbox(batch):
    """The zygote is PID 1 of the sandbox: a notebook's SIGKILL does not reach it."""
    rows = batch["rows"]
    for student in ("a6_killer", "a7_honest"):
        assert (rows[student].score, rows[student].final, rows[student].grader_fault) == (batch["max"], True, "")


def test_a_sandbox_that_fails_is_retried_and_never_final(batch):
    from autograder.judge import Reference
    from autograder.plan import build_plan
    from autograder.sandbox import Limits, RunOutcome, Sandbox

    grader = batch["grader"]
    reference = Reference.of(build_plan(grader.spec, None), RunOutcome())
    broken = Sandbox(Limits(cpu_seconds="never"), with_torch=False)   # every child fails its setup
    free = queue.SimpleQueue()
    free.put({kind: broken for kind in grader.kinds})
    try:
        row = grader._grade_on_free_sandboxes(free, 1, reference, "a5_honest")   # one task of a batch
    finally:
        broken.close()
    assert row.grader_fault == "the sandbox could not prepare a fresh state for the notebook"
    assert row.status == f"not graded: {row.grader_fault}"


def test_wrong_metadata_types_are_graded_and_described(batch):
    from nbgrader.api import Gradebook

    row = batch["rows"]["a0_metadata"]
    assert row.score == batch["max"] and row.final, row.message
    assert "metadata.nbgrader is a str, not a mapping: ignored" in row.message
    assert "metadata.nbgrader is a list, not a mapping: ignored" in row.message
    with Gradebook(batch["course"].db_url, batch["course"].course_id) as gradebook:
        assert gradebook.find_submission(ASSIGNMENT, "a0_metadata").score == pytest.approx(batch["max"])
    autograded = batch["course"].autograded_root / "a0_metadata" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nbformat.validate(nbformat.read(str(autograded), as_version=4))


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.attributes: list[tuple[str, str, str]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self._in_script = tag == "script"
        self.attributes += [(tag, name, value or "") for name, value in attrs]

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def _formgrader_page(path) -> str:
    """The page formgrader serves for this autograded notebook: its own exporter setup."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": ASSIGNMENT, "notebook_id": ASSIGNMENT, "submission_id": "x", "index": 0,
                 "total": 1, "base_url": "", "student": "s", "last_name": "", "first_name": "",
                 "notebook_path": "x"}
    page, _ = HTMLExporter(config=config).from_filename(str(path), resources=resources)
    return page


def _active_payloads(page: str) -> list:
    elements = _Elements()
    elements.feed(page)
    active = [(tag, name) for tag, name, value in elements.attributes
              if MARK in value and (name.startswith("on") or name == "id"
                                    or re.sub(r"[\x00-\x20]", "", value).lower().startswith(("javascript:", "data:")))]
    return active + [s for s in elements.scripts if MARK in s]


def test_formgrader_page_runs_nothing_the_student_wrote(batch, tmp_path):
    autograded = batch["course"].autograded_root / "a0_markup" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    page = _formgrader_page(autograded)
    assert MARK in page, "the student's markdown is shown (as text)"
    assert _active_payloads(page) == []
    # Positive control: the submission as written, through the same renderer, is live.
    submitted = batch["course"].submitted_root / "a0_markup" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert _active_payloads(_formgrader_page(submitted))


def test_feedback_escapes_what_the_student_wrote(batch):
    from autograder.feedback import render

    row = batch["rows"]["a0_markup"]
    row.tests[0].message = PAYLOADS[0]
    row.message = PAYLOADS[4]
    assert _active_payloads(render(row, ASSIGNMENT)) == []


# -- the sandbox alone: what one job leaves, the next must not see ------------------------

def _job(*sources):
    return {"seed": 1, "files": [],
            "cells": [{"index": i, "kind": "code", "source": s, "grade_id": None} for i, s in enumerate(sources)]}


LEAVE = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs("/tmp/left/inner"); open("/tmp/left/inner/a.txt", "w").write("42")
os.chmod("/tmp/left/inner", 0o500); os.chmod("/tmp/left", 0o500)
open("/dev/shm/left", "w").write("42")
queue = libc.mq_open(b"/left", os.O_CREAT | os.O_RDWR, 0o600, None)
assert queue >= 0 and libc.mq_send(queue, b"42", 2, 0) == 0
os.unlink("/tmp/output.txt"); os.makedirs("/tmp/output.txt/locked")
open("/tmp/output.txt/locked/keep", "w").write("x"); os.chmod("/tmp/output.txt/locked", 0)
# positive control: everything left above is there for this job
buffer = ctypes.create_string_buffer(8192)
assert libc.mq_receive(libc.mq_open(b"/left", os.O_RDWR, 0, None), buffer, 8192, None) == 2
libc.mq_send(queue, b"42", 2, 0)
assert open("/tmp/left/inner/a.txt").read() == open("/dev/shm/left").read() == "42"
'''
LOOK = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
seen = [p for p in ("/tmp/left", "/dev/shm/left", "/tmp/output.txt/locked") if os.path.exists(p)]
if libc.mq_open(b"/left", os.O_RDONLY, 0, None) >= 0:
    seen.append("message queue")
assert not seen, seen
'''
KEYRING = r'''
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
assert libc.syscall(248, b"user", b"left", b"42", 2, ctypes.c_int(-4)) == -1
assert ctypes.get_errno() == errno.EPERM
'''
PID_ONE = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
assert libc.ptrace(0x4206, 1, None, None) == -1, "PTRACE_SEIZE of PID 1 (the zygote) worked"
try:
    os.listdir("/proc/1/root/tmp")
except (PermissionError, FileNotFoundError):   # a notebook's /proc shows no other process
    pass
else:
    raise AssertionError("the zygote's /tmp is reachable through /proc/1/root")
'''
CAPABILITIES = r'''
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
held = {name: status[name].strip() for name in ("CapEff", "CapPrm", "CapInh", "CapAmb")}
assert set(held.values()) == {"0000000000000000"}, held
'''


@pytest.fixture(scope="module")
def bare_sandbox():
    from autograder.sandbox import Limits, Sandbox
    with Sandbox(Limits(wall_seconds=20, cpu_seconds=20), with_torch=False) as box:
        yield box


def _cells_ok(outcome):
    return [(m.get("ok"), m.get("error", "")) for m in outcome.messages if m.get("t") == "end"]


def test_the_next_job_starts_from_a_fresh_state(bare_sandbox):
    left = bare_sandbox.run(_job(LEAVE))
    assert _cells_ok(left) == [(True, "")], "the attack's own positive control"
    after = bare_sandbox.run(_job(LOOK, KEYRING, PID_ONE, CAPABILITIES))
    assert _cells_ok(after) == [(True, "")] * 4
    assert after.end["setup"] is True and not after.grader_fault and not after.end["restart"]


def test_a_child_that_cannot_be_prepared_is_the_graders_fault(bare_sandbox):
    from autograder.sandbox import Limits, Sandbox
    with Sandbox(Limits(cpu_seconds="never"), with_torch=False) as box:   # the child's setrlimit fails
        outcome = box.run(_job("x = 1"))
    assert outcome.end["setup"] is False and outcome.messages == []
    assert outcome.grader_fault == "the sandbox could not prepare a fresh state for the notebook"


def test_parse_cost_bounds_what_parsing_takes():
    import sys

    from autograder.sandbox import parse_cost

    def size(value):
        inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
        return sys.getsizeof(value) + sum(size(v) for v in inner)

    shapes = [b"[" + b"[]," * 9999 + b"[]]", b"[" + b"{}," * 9999 + b"{}]", b"[" + b'{"a":[]},' * 999 + b"{}]",
              b"[" + b'"ab",' * 9999 + b'"a"]', b"[" + b"1.5," * 9999 + b"2.5]", b'{"t": "obs", "x": 1}']
    for line in shapes:
        assert parse_cost(line) >= size(json.loads(line)), line[:20]


def test_an_observation_flood_keeps_the_host_within_its_budget(bare_sandbox):
    source, _ = inject.attack_source("observation_flood")
    outcome = bare_sandbox.run(_job(source))
    assert outcome.overflow
    from autograder.sandbox import parse_cost
    kept = sum(parse_cost(json.dumps(m).encode()) for m in outcome.messages)
    assert kept <= bare_sandbox.limits.parsed_bytes

