"""The grading tools are one module (autograder/tools.py) that every notebook imports in its
locked cell (issue 32), and a student cannot put another in its place (issue 31's rule: the
host relies on nothing of the student's process).

A file named like it beside the notebook, a fake first on sys.path with the real one
dropped from sys.modules, or the real one patched so that every check passes: each wins
full marks where the test cells run with the student's code (stock `nbgrader autograde`,
the positive control), and nothing here. The host compares with its own import of the
module, and the student's process only runs probes on data.
"""
from __future__ import annotations

import json
import shutil

import pytest

from attacks import inject, same_judgement

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading_tools_module")]

ASSIGNMENT = "04_autograd_advanced"
ATTACKS = ["shadow_tools_file", "shadow_tools_path", "shadow_tools_patch"]


def _fake() -> str:
    source, _ = inject.attack_source("tools_fake")
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 - our own attack file
    return namespace["FAKE"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from coursebase.model import Course
    from autograder.grade import Grader
    from test_grading_trust import _stock_scores

    root = inject.make_course(tmp_path_factory.mktemp("tools") / "course", ASSIGNMENT)
    partial = inject.honest(root, ASSIGNMENT, keep=0.5)
    inject.submit(root, ASSIGNMENT, "partial", partial)
    inject.submit(root, ASSIGNMENT, "honest", inject.honest(root, ASSIGNMENT))
    fake = _fake().encode()
    inject.submit(root, ASSIGNMENT, "shadow_tools_file", partial,
                  files={"autograder/__init__.py": b"", "autograder/tools.py": fake, "grading_tools.py": fake})
    for name in ("shadow_tools_path", "shadow_tools_patch"):
        source, place = inject.attack_source(name)
        source = f"FAKE_TOOLS = {_fake()!r}\n" + source
        inject.submit(root, ASSIGNMENT, name, inject.insert(partial, source, place))
    stock_root = tmp_path_factory.mktemp("tools_stock") / "course"
    shutil.copytree(root, stock_root)
    rows = {row.student: row for row in Grader(Course.load(root), ASSIGNMENT, workers=2).run()}
    return {"rows": rows, "root": root, "stock": _stock_scores(stock_root, ASSIGNMENT)}


def test_every_notebook_imports_the_one_module():
    for folder in ("solutions", "assignments"):
        for path in sorted((inject.REPO / folder).glob("*/*.ipynb")):
            cells = json.loads(path.read_text())["cells"]
            tools = [c for c in cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "grading_tools"]
            source = "".join(tools[0]["source"])
            assert "from autograder.tools import *" in source and len(source.splitlines()) < 10, path


@pytest.mark.parametrize("name", ATTACKS)
def test_a_fake_grading_tools_module_wins_on_stock_nbgrader(graded, name):
    stock = graded["stock"]
    assert stock[name] > stock["partial"], (name, stock)


@pytest.mark.parametrize("name", ATTACKS)
def test_a_fake_grading_tools_module_wins_nothing_here(graded, name):
    rows = graded["rows"]
    assert rows["honest"].score == rows["honest"].max_score
    assert rows[name].score <= rows["partial"].score, [(t.grade_id, t.message) for t in rows[name].tests if t.passed]


def test_validate_gives_the_graders_verdict(graded):
    assert same_judgement.differences(graded["rows"], graded["root"], ASSIGNMENT) == []
